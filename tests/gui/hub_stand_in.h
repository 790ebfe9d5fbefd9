// A loopback server that answers the two hub requests the Downloads page makes: the recursive
// tree listing and /resolve/ downloads (with HTTP ranges, so resumes are real), refusing as the
// real hub does: unknown tokens get 401 everywhere, a missing repository 401 + RepoNotFound
// without a token, a gated repository is listable by anyone but its files need a token with
// access (else X-Error-Code GatedRepo). It can also answer the next downloads with 503.
// cpp-httplib in the test process; nothing leaves 127.0.0.1.
#pragma once

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "download/sha256.h"

namespace kiln::gui::test {

struct HubStandInFile {
  std::string path;
  std::string content;
  bool lfs = true;  // listed with its SHA-256, as the hub lists LFS files
  double listedSize = -1;  // -1 = the real size; else what the listing claims
};

class HubStandIn {
 public:
  std::map<std::string, std::vector<HubStandInFile>> repos;  // "owner/name" -> files
  std::string gatedRepo = "google/gemma-gated";
  std::string goodToken = "hf_right_token";
  std::string pendingToken = "hf_pending_token";  // its access request awaits review
  std::atomic<int> delayPerChunkMs{0};  // slows transfers so a test can cancel midway
  std::atomic<int> failNextDownloads{0};  // these many /resolve/ requests get 503 + Retry-After: 0

  HubStandIn() {
    server_.Get(R"(/api/models/([^/]+)/([^/]+)/tree/main)", [this](const httplib::Request& req, httplib::Response& res) {
      const std::string repo = req.matches[1].str() + "/" + req.matches[2].str();
      if (!allowed(req, repo, res, false)) return;
      const auto it = repos.find(repo);
      nlohmann::json list = nlohmann::json::array();
      for (const HubStandInFile& f : it->second) {
        const uint64_t size = f.listedSize >= 0 ? uint64_t(f.listedSize) : f.content.size();
        nlohmann::json e = {{"type", "file"}, {"path", f.path}, {"size", size}, {"oid", "1234"}};
        if (f.lfs) {
          Sha256 h;
          h.update(f.content.data(), f.content.size());
          e["lfs"] = {{"oid", h.hex_digest()}, {"size", size}, {"pointerSize", 130}};
        }
        list.push_back(e);
      }
      res.set_content(list.dump(), "application/json");
    });
    server_.Get(R"(/([^/]+)/([^/]+)/resolve/main/(.+))", [this](const httplib::Request& req, httplib::Response& res) {
      const std::string repo = req.matches[1].str() + "/" + req.matches[2].str();
      if (!allowed(req, repo, res, true)) return;
      if (failNextDownloads.fetch_sub(1) > 0) {
        res.status = 503;
        res.set_header("Retry-After", "0");
        return;
      }
      const HubStandInFile* f = find(repo, req.matches[3].str());
      if (!f) {
        refuse(res, 404, "EntryNotFound", "Entry not found");
        return;
      }
      {
        std::lock_guard<std::mutex> lock(mutex_);
        ranges_.push_back(req.get_header_value("Range"));
      }
      // httplib answers "Range: bytes=N-" with 206 and starts the provider at N.
      const std::string* content = &f->content;
      res.set_content_provider(content->size(), "application/octet-stream",
                               [this, content](size_t offset, size_t, httplib::DataSink& sink) {
                                 if (delayPerChunkMs > 0) std::this_thread::sleep_for(std::chrono::milliseconds(delayPerChunkMs));
                                 sink.write(content->data() + offset, std::min<size_t>(32768, content->size() - offset));
                                 return true;
                               });
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~HubStandIn() {
    server_.stop();
    thread_.join();
  }

  std::string base() const { return "http://127.0.0.1:" + std::to_string(port_); }
  // The Range header of every download request so far ("" when it had none).
  std::vector<std::string> ranges() {
    std::lock_guard<std::mutex> lock(mutex_);
    return ranges_;
  }

 private:
  bool allowed(const httplib::Request& req, const std::string& repo, httplib::Response& res, bool file) const {
    const std::string auth = req.get_header_value("Authorization");
    const std::string token = auth.rfind("Bearer ", 0) == 0 ? auth.substr(7) : "";
    if (!token.empty() && token != goodToken && token != pendingToken)
      return refuse(res, 401, "", "Invalid credentials in Authorization header");
    if (repos.find(repo) == repos.end()) return refuse(res, token.empty() ? 401 : 404, "RepoNotFound", "Repository not found");
    if (repo != gatedRepo || !file || token == goodToken) return true;  // gated listings are public
    if (token == pendingToken)
      return refuse(res, 403, "GatedRepo", "Your request to access model " + repo + " is awaiting a review from the repo authors.");
    return refuse(res, 401, "GatedRepo", "Access to model " + repo + " is restricted. You must have access to it and be "
                                         "authenticated to access it. Please log in.");
  }
  static bool refuse(httplib::Response& res, int status, const std::string& code, const std::string& message) {
    res.status = status;
    if (!code.empty()) res.set_header("X-Error-Code", code);
    res.set_header("X-Error-Message", message);
    res.set_content(nlohmann::json{{"error", message}}.dump(), "application/json");
    return false;
  }
  const HubStandInFile* find(const std::string& repo, const std::string& path) const {
    const auto it = repos.find(repo);
    if (it == repos.end()) return nullptr;
    for (const HubStandInFile& f : it->second)
      if (f.path == path) return &f;
    return nullptr;
  }

  httplib::Server server_;
  std::thread thread_;
  std::mutex mutex_;
  std::vector<std::string> ranges_;
  int port_ = 0;
};

}  // namespace kiln::gui::test
