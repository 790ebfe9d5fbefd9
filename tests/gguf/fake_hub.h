// A local stand-in for the Hugging Face hub on 127.0.0.1 (cpp-httplib, in the test process), with
// the real hub's answers: the tree listing API (paginated), /resolve/ downloads with HTTP ranges,
// LFS files redirected to a CDN on another port (so curl drops the token), and the refusals as
// huggingface.co gives them: 401 + RepoNotFound for a missing repository without a token, 401 for
// an unknown token even on public repositories, gated repositories listable by anyone but their
// files refused with X-Error-Code GatedRepo (licence not accepted, request pending, fine-grained
// token without gated access). It can also fail requests (429 with Retry-After, 503), cut
// transfers midway, slow them down, or press cancel for the client.
#pragma once

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <deque>
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
  std::string redirect;        // "" = the usual CDN redirect of LFS files; else this Location
};

// What a gated repository's authors decided for a token's account.
enum class GatedAccess { Granted, NotRequested, Pending, FineGrainedWithoutGated };

// A scripted failure for the next download request(s): status plus optional headers.
struct FakeFailure {
  int status = 503;
  std::string retry_after;  // "" = no Retry-After header
  std::string rate_limit;   // "" = no RateLimit header
};

class FakeHub {
 public:
  std::map<std::string, std::vector<FakeFile>> repos;  // "owner/name" -> files
  std::string gated_repo = "google/gemma-gated";
  std::string good_token = "hf_good_token";
  // Every token the hub knows, with its access to gated_repo; any other token is invalid (401).
  std::map<std::string, GatedAccess> tokens = {{"hf_good_token", GatedAccess::Granted},
                                               {"hf_no_licence", GatedAccess::NotRequested},
                                               {"hf_pending", GatedAccess::Pending},
                                               {"hf_fine_grained", GatedAccess::FineGrainedWithoutGated}};
  std::atomic<int> cut_next_transfers{0};   // these many downloads stop after half the bytes
  std::atomic<size_t> stop_after_bytes{0};  // > 0: request stop on `cancel` after serving this many
  std::stop_source cancel;
  std::atomic<int> chunk_delay_ms{0};

  std::mutex log_mutex;
  std::vector<std::string> ranges;     // Range header of every download request ("" when none)
  std::vector<std::string> auths;      // Authorization header of every request to the hub
  std::vector<std::string> cdn_auths;  // ... and to the CDN, which must never see the token
  std::deque<FakeFailure> fail_next;   // answers to the next /resolve/ requests, in order
  std::deque<FakeFailure> fail_next_listings;

  FakeHub() {
    server_.Get(R"(/api/models/([^/]+)/([^/]+)/tree/main)", [this](const httplib::Request& req, httplib::Response& res) {
      const std::string repo = req.matches[1].str() + "/" + req.matches[2].str();
      if (scripted_failure(fail_next_listings, res) || !authorized(req, repo, res, false)) return;
      auto it = repos.find(repo);
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
      if (!authorized(req, repo, res, true) || scripted_failure(fail_next, res)) return;
      const FakeFile* f = find(repo, req.matches[3].str());
      if (!f) {
        refuse(res, 404, "EntryNotFound", "Entry not found");
        return;
      }
      if (!f->redirect.empty()) {
        res.set_redirect(f->redirect, 302);
        return;
      }
      if (f->lfs) {  // the hub sends LFS files from its CDN, another host
        res.set_redirect(cdn_base() + "/cdn/" + repo + "/" + f->path, 302);
        return;
      }
      serve(req, res, *f);
    });
    cdn_.Get(R"(/cdn/([^/]+)/([^/]+)/(.+))", [this](const httplib::Request& req, httplib::Response& res) {
      {
        std::lock_guard<std::mutex> lock(log_mutex);
        cdn_auths.push_back(req.get_header_value("Authorization"));
      }
      const FakeFile* f = find(req.matches[1].str() + "/" + req.matches[2].str(), req.matches[3].str());
      if (!f) {
        refuse(res, 404, "", "Not found");
        return;
      }
      serve(req, res, *f);
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    cdn_port_ = cdn_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    cdn_thread_ = std::thread([this] { cdn_.listen_after_bind(); });
    while (!server_.is_running() || !cdn_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~FakeHub() {
    server_.stop();
    cdn_.stop();
    thread_.join();
    cdn_thread_.join();
  }

  std::string base() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::string cdn_base() const { return "http://127.0.0.1:" + std::to_string(cdn_port_); }

 private:
  // The hub's order: an unknown token is refused first, then the repository must exist (its
  // absence is a 401 without a token, a 404 with one), then gated files need granted access.
  bool authorized(const httplib::Request& req, const std::string& repo, httplib::Response& res, bool file) {
    const std::string auth = req.get_header_value("Authorization");
    {
      std::lock_guard<std::mutex> lock(log_mutex);
      auths.push_back(auth);
    }
    const std::string token = auth.rfind("Bearer ", 0) == 0 ? auth.substr(7) : "";
    const auto known = tokens.find(token);
    if (!token.empty() && known == tokens.end())
      return refuse(res, 401, "", "Invalid credentials in Authorization header");
    if (repos.find(repo) == repos.end())
      return refuse(res, token.empty() ? 401 : 404, "RepoNotFound", "Repository not found");
    if (repo != gated_repo || !file) return true;  // gated listings are public
    if (token.empty())
      return refuse(res, 401, "GatedRepo", "Access to model " + repo + " is restricted. You must have access to it "
                                               "and be authenticated to access it. Please log in.");
    switch (known->second) {
      case GatedAccess::Granted:
        return true;
      case GatedAccess::NotRequested:
        return refuse(res, 403, "GatedRepo", "Access to model " + repo + " is restricted and you are not in the "
                                                 "authorized list. Visit https://huggingface.co/" + repo + " to ask for access.");
      case GatedAccess::Pending:
        return refuse(res, 403, "GatedRepo", "Your request to access model " + repo +
                                                 " is awaiting a review from the repo authors.");
      case GatedAccess::FineGrainedWithoutGated:
        return refuse(res, 403, "GatedRepo", "Access to model " + repo + " is restricted. Please enable access to "
                                                 "public gated repositories in your fine-grained token settings to view this repository.");
    }
    return true;
  }
  static bool refuse(httplib::Response& res, int status, const std::string& code, const std::string& message) {
    res.status = status;
    if (!code.empty()) res.set_header("X-Error-Code", code);
    res.set_header("X-Error-Message", message);
    res.set_content(nlohmann::json{{"error", message}}.dump(), "application/json");
    return false;
  }
  bool scripted_failure(std::deque<FakeFailure>& queue, httplib::Response& res) {
    std::lock_guard<std::mutex> lock(log_mutex);
    if (queue.empty()) return false;
    const FakeFailure f = queue.front();
    queue.pop_front();
    res.status = f.status;
    if (!f.retry_after.empty()) res.set_header("Retry-After", f.retry_after);
    if (!f.rate_limit.empty()) res.set_header("RateLimit", f.rate_limit);
    res.set_content(R"({"error":"try again later"})", "application/json");
    return true;
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

  httplib::Server server_, cdn_;
  std::thread thread_, cdn_thread_;
  int port_ = 0, cdn_port_ = 0;
};

}  // namespace kiln::test
