// A loopback server that answers the two hub requests the Downloads page makes: the recursive
// tree listing and /resolve/ downloads (with HTTP ranges, so resumes are real), plus a gated
// repository that wants a token. cpp-httplib in the test process; nothing leaves 127.0.0.1.
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
};

class HubStandIn {
 public:
  std::map<std::string, std::vector<HubStandInFile>> repos;  // "owner/name" -> files
  std::string gatedRepo = "google/gemma-gated";
  std::string goodToken = "hf_right_token";
  std::atomic<int> delayPerChunkMs{0};  // slows transfers so a test can cancel midway

  HubStandIn() {
    server_.Get(R"(/api/models/([^/]+)/([^/]+)/tree/main)", [this](const httplib::Request& req, httplib::Response& res) {
      const std::string repo = req.matches[1].str() + "/" + req.matches[2].str();
      if (!allowed(req, repo, res)) return;
      const auto it = repos.find(repo);
      if (it == repos.end()) return notFound(res);
      nlohmann::json list = nlohmann::json::array();
      for (const HubStandInFile& f : it->second) {
        nlohmann::json e = {{"type", "file"}, {"path", f.path}, {"size", f.content.size()}, {"oid", "1234"}};
        if (f.lfs) {
          Sha256 h;
          h.update(f.content.data(), f.content.size());
          e["lfs"] = {{"oid", h.hex_digest()}, {"size", f.content.size()}, {"pointerSize", 130}};
        }
        list.push_back(e);
      }
      res.set_content(list.dump(), "application/json");
    });
    server_.Get(R"(/([^/]+)/([^/]+)/resolve/main/(.+))", [this](const httplib::Request& req, httplib::Response& res) {
      const std::string repo = req.matches[1].str() + "/" + req.matches[2].str();
      if (!allowed(req, repo, res)) return;
      const HubStandInFile* f = find(repo, req.matches[3].str());
      if (!f) return notFound(res);
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
  bool allowed(const httplib::Request& req, const std::string& repo, httplib::Response& res) const {
    if (repo != gatedRepo || req.get_header_value("Authorization") == "Bearer " + goodToken) return true;
    res.status = 401;
    res.set_content(R"({"error":"Access to model )" + repo + R"( is restricted."})", "application/json");
    return false;
  }
  static void notFound(httplib::Response& res) {
    res.status = 404;
    res.set_content(R"({"error":"Repository not found"})", "application/json");
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
