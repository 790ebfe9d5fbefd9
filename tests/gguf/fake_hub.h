// A local stand-in for the Hugging Face hub on 127.0.0.1 (cpp-httplib, in the test process):
// the tree listing API (with pagination), /resolve/ downloads with HTTP ranges, the LFS redirect
// to a CDN path, gated repositories, and transfers it cuts short or slows down on request.
#pragma once

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "download/sha256.h"

namespace kiln::test {

struct FakeFile {
  std::string path;
  std::string content;
  bool lfs = true;
  std::string listed_sha256;   // "" = the real hash of content
  int64_t listed_size = -1;    // -1 = the real size
};

class FakeHub {
 public:
  std::map<std::string, std::vector<FakeFile>> repos;  // "owner/name" -> files
  std::string gated_repo = "google/gemma-gated";
  std::string good_token = "hf_good_token";
  std::atomic<int> cut_next_transfers{0};   // these many downloads stop after half the bytes
  std::atomic<size_t> stop_after_bytes{0};  // > 0: request stop on `cancel` after serving this many
  std::stop_source cancel;
  std::atomic<int> chunk_delay_ms{0};

  std::mutex log_mutex;
  std::vector<std::string> ranges;   // Range header of every download request ("" when none)
  std::vector<std::string> auths;    // Authorization header of every request

  FakeHub() {
    server_.Get(R"(/api/models/([^/]+)/([^/]+)/tree/main)", [this](const httplib::Request& req, httplib::Response& res) {
      const std::string repo = req.matches[1].str() + "/" + req.matches[2].str();
      if (!allowed(req, repo, res)) return;
      auto it = repos.find(repo);
      if (it == repos.end()) return not_found(res);
      // Two pages when the repository has more than two files, as the hub paginates big trees.
      const bool second = req.has_param("cursor");
      const size_t split = it->second.size() > 2 ? 2 : it->second.size();
      nlohmann::json list = nlohmann::json::array();
      if (!second) list.push_back({{"type", "directory"}, {"path", "sub"}, {"oid", "0123"}, {"size", 0}});
      for (size_t i = second ? split : 0; i < (second ? it->second.size() : split); ++i) list.push_back(entry(it->second[i]));
      if (!second && split < it->second.size())
        res.set_header("Link", "<" + base() + "/api/models/" + repo + "/tree/main?recursive=true&cursor=abc>; rel=\"next\"");
      res.set_content(list.dump(), "application/json");
    });
    server_.Get(R"(/([^/]+)/([^/]+)/resolve/main/(.+))", [this](const httplib::Request& req, httplib::Response& res) {
      const std::string repo = req.matches[1].str() + "/" + req.matches[2].str();
      if (!allowed(req, repo, res)) return;
      const FakeFile* f = find(repo, req.matches[3].str());
      if (!f) return not_found(res);
      if (f->lfs) {  // the hub sends LFS files from its CDN
        res.set_redirect("/cdn/" + repo + "/" + f->path, 302);
        return;
      }
      serve(req, res, *f);
    });
    server_.Get(R"(/cdn/([^/]+)/([^/]+)/(.+))", [this](const httplib::Request& req, httplib::Response& res) {
      const FakeFile* f = find(req.matches[1].str() + "/" + req.matches[2].str(), req.matches[3].str());
      if (!f) return not_found(res);
      serve(req, res, *f);
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~FakeHub() {
    server_.stop();
    thread_.join();
  }

  std::string base() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  bool allowed(const httplib::Request& req, const std::string& repo, httplib::Response& res) {
    const std::string auth = req.get_header_value("Authorization");
    {
      std::lock_guard<std::mutex> lock(log_mutex);
      auths.push_back(auth);
    }
    if (repo != gated_repo || auth == "Bearer " + good_token) return true;
    res.status = 401;
    res.set_content(R"({"error":"Access to model )" + repo + R"( is restricted."})", "application/json");
    return false;
  }
  static void not_found(httplib::Response& res) {
    res.status = 404;
    res.set_content(R"({"error":"Repository not found"})", "application/json");
  }
  const FakeFile* find(const std::string& repo, const std::string& path) const {
    auto it = repos.find(repo);
    if (it == repos.end()) return nullptr;
    for (const FakeFile& f : it->second)
      if (f.path == path) return &f;
    return nullptr;
  }
  static nlohmann::json entry(const FakeFile& f) {
    const uint64_t size = f.listed_size >= 0 ? uint64_t(f.listed_size) : f.content.size();
    nlohmann::json e = {{"type", "file"}, {"path", f.path}, {"size", size}, {"oid", "9f2e"}};
    if (f.lfs) {
      Sha256 h;
      h.update(f.content.data(), f.content.size());
      e["lfs"] = {{"oid", f.listed_sha256.empty() ? h.hex_digest() : f.listed_sha256}, {"size", size}, {"pointerSize", 134}};
    }
    return e;
  }
  // The body in 64 KiB chunks (optionally slow, cut midway or cancelling the client). httplib
  // answers "Range: bytes=N-" itself with 206 and calls the provider from offset N.
  void serve(const httplib::Request& req, httplib::Response& res, const FakeFile& f) {
    {
      std::lock_guard<std::mutex> lock(log_mutex);
      ranges.push_back(req.get_header_value("Range"));
    }
    const bool cut = cut_next_transfers.fetch_sub(1) > 0;
    const std::string* content = &f.content;
    res.set_content_provider(content->size(), "application/octet-stream",
                             [this, content, cut](size_t offset, size_t, httplib::DataSink& sink) {
                               if (cut && offset >= content->size() / 2) return false;  // drop the connection
                               const size_t n = std::min<size_t>(65536, content->size() - offset);
                               if (chunk_delay_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(chunk_delay_ms));
                               sink.write(content->data() + offset, n);
                               if (stop_after_bytes > 0 && offset + n >= stop_after_bytes) cancel.request_stop();
                               return true;
                             });
  }

  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
};

}  // namespace kiln::test
