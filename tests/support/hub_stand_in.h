// The one stand-in for the Hugging Face hub that the download tests (core and app) run against:
// cpp-httplib on 127.0.0.1 in the test process, answering as huggingface.co documents and does:
//  - /api/models/O/R/revision/REV names the commit a branch points at; the tree listing and
//    /resolve/ work at a branch or a commit, and push() moves main to a new commit (old ones stay);
//  - the listing is paginated with a Link: rel="next" header (absolute, relative, or on another
//    host to test refusal); small files carry their git blob SHA-1, LFS files lfs.oid (SHA-256);
//  - LFS files redirect to a CDN on another port (so curl drops the token); the CDN can refuse a
//    request for more than max_request_bytes, as the real one refuses single GETs above ~50 GB;
//  - refusals with X-Error-Code / X-Error-Message: 401 + RepoNotFound for a missing repository
//    without a token (404 with one), 401 for an unknown token even on public repositories, gated
//    repositories listable by anyone but their files refused (licence not accepted, request
//    pending, fine-grained token without gated access: 403);
//  - scripted failures (429 with Retry-After or RateLimit, 503...), transfers cut midway, slow
//    transfers, and a cancel pressed for the client after some bytes.
#pragma once

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "common/sha1.h"
#include "common/sha256.h"

namespace kiln::test {

struct StandInFile {
  std::string path;
  std::string content;
  bool lfs = true;
  double listed_size = -1;     // -1 = the real size; else what the listing claims
  std::string listed_sha256;   // "" = the real hash of content (LFS files)
  std::string listed_oid;      // "" = the real git blob SHA-1 (small files)
  std::string redirect;        // "" = the usual CDN redirect of LFS files; else this Location
};

// What a gated repository's authors decided for a token's account.
enum class GatedAccess { Granted, NotRequested, Pending, FineGrainedWithoutGated };

// A scripted failure for the next request(s) of a kind: status plus optional headers.
struct StandInFailure {
  int status = 503;
  std::string retry_after;  // "" = no Retry-After header
  std::string rate_limit;   // "" = no RateLimit header
};

enum class NextLink { Absolute, Relative, OtherHost };

inline std::string hex_sha256(const std::string& s) {
  Sha256 h;
  h.update(s.data(), s.size());
  return h.hex_digest();
}
inline std::string git_blob_oid(const std::string& s) {
  Sha1 h = git_blob_hasher(s.size());
  h.update(s.data(), s.size());
  return h.hex_digest();
}

class HubStandIn {
 public:
  using Files = std::vector<StandInFile>;
  std::map<std::string, Files> repos;  // "owner/name" -> the files on main
  std::string gated_repo = "google/gemma-gated";
  std::string good_token = "hf_good_token";
  std::string pending_token = "hf_pending";
  // Every token the hub knows, with its access to gated_repo; any other token is invalid (401).
  std::map<std::string, GatedAccess> tokens = {{"hf_good_token", GatedAccess::Granted},
                                               {"hf_no_licence", GatedAccess::NotRequested},
                                               {"hf_pending", GatedAccess::Pending},
                                               {"hf_fine_grained", GatedAccess::FineGrainedWithoutGated}};
  size_t page_size = 2;                     // files per listing page
  NextLink next_link = NextLink::Absolute;
  std::atomic<uint64_t> max_request_bytes{0};  // > 0: the CDN refuses requests for more bytes
  std::atomic<int> cut_next_transfers{0};   // these many transfers drop after half of what was asked
  std::atomic<size_t> stop_after_bytes{0};  // > 0: request stop on `cancel` after serving this many
  std::stop_source cancel;
  std::atomic<int> chunk_delay_ms{0};

  std::mutex log_mutex;
  std::vector<std::string> range_log;  // Range header of every transfer ("" when none)
  std::vector<std::string> auths;      // Authorization header of every request to the hub
  std::vector<std::string> cdn_auths;  // ... and to the CDN, which must never see the token
  std::vector<std::string> paths;      // every path asked of the hub
  std::deque<StandInFailure> fail_next;  // answers to the next /resolve/ requests, in order
  std::deque<StandInFailure> fail_next_listings;

  HubStandIn() {
    server_.Get(R"(/api/models/([^/]+)/([^/]+)/revision/([^/]+))", [this](const httplib::Request& req, httplib::Response& res) {
      const std::string repo = req.matches[1].str() + "/" + req.matches[2].str();
      if (scripted_failure(fail_next_listings, res) || !authorized(req, repo, res, false)) return;
      const std::string commit = commit_of(repo, req.matches[3].str());
      if (commit.empty()) return void(refuse(res, 404, "RevisionNotFound", "Invalid rev id: " + req.matches[3].str()));
      res.set_content(nlohmann::json{{"id", repo}, {"sha", commit}, {"private", false}}.dump(), "application/json");
    });
    server_.Get(R"(/api/models/([^/]+)/([^/]+)/tree/([^/]+))", [this](const httplib::Request& req, httplib::Response& res) {
      const std::string repo = req.matches[1].str() + "/" + req.matches[2].str(), rev = req.matches[3].str();
      if (scripted_failure(fail_next_listings, res) || !authorized(req, repo, res, false)) return;
      const Files* files = files_at(repo, commit_of(repo, rev));
      if (!files) return void(refuse(res, 404, "RevisionNotFound", "Invalid rev id: " + rev));
      const size_t from = req.has_param("cursor") ? std::stoul(req.get_param_value("cursor")) : 0;
      const size_t to = std::min(files->size(), from + page_size);
      nlohmann::json list = nlohmann::json::array();
      if (from == 0) list.push_back({{"type", "directory"}, {"path", "sub"}, {"oid", std::string(40, '0')}, {"size", 0}});
      for (size_t i = from; i < to; ++i) list.push_back(entry((*files)[i]));
      if (to < files->size()) {
        const std::string rest = "/api/models/" + repo + "/tree/" + rev + "?recursive=true&cursor=" + std::to_string(to);
        const std::string link = next_link == NextLink::Relative ? rest
                                 : next_link == NextLink::OtherHost ? cdn_base() + rest
                                                                    : base() + rest;
        res.set_header("Link", "<" + link + ">; rel=\"next\"");
      }
      res.set_content(list.dump(), "application/json");
    });
    server_.Get(R"(/([^/]+)/([^/]+)/resolve/([^/]+)/(.+))", [this](const httplib::Request& req, httplib::Response& res) {
      const std::string repo = req.matches[1].str() + "/" + req.matches[2].str();
      if (!authorized(req, repo, res, true) || scripted_failure(fail_next, res)) return;
      const std::string commit = commit_of(repo, req.matches[3].str());
      const StandInFile* f = find(repo, commit, req.matches[4].str());
      if (!f) return void(refuse(res, 404, "EntryNotFound", "Entry not found"));
      res.set_header("X-Repo-Commit", commit);
      if (!f->redirect.empty()) return res.set_redirect(f->redirect, 302);
      if (f->lfs)  // the hub sends LFS files from its CDN, another host
        return res.set_redirect(cdn_base() + "/cdn/" + repo + "/" + commit + "/" + f->path, 302);
      serve(req, res, *f);
    });
    cdn_.Get(R"(/cdn/([^/]+)/([^/]+)/([^/]+)/(.+))", [this](const httplib::Request& req, httplib::Response& res) {
      {
        std::lock_guard<std::mutex> lock(log_mutex);
        cdn_auths.push_back(req.get_header_value("Authorization"));
      }
      const StandInFile* f = find(req.matches[1].str() + "/" + req.matches[2].str(), req.matches[3].str(), req.matches[4].str());
      if (!f) return void(refuse(res, 404, "", "Not found"));
      serve(req, res, *f);
    });
    server_.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response&) {
      std::lock_guard<std::mutex> lock(log_mutex);
      paths.push_back(req.path);  // before the answer, so a client that has it finds it logged
      return httplib::Server::HandlerResponse::Unhandled;
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    cdn_port_ = cdn_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    cdn_thread_ = std::thread([this] { cdn_.listen_after_bind(); });
    while (!server_.is_running() || !cdn_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~HubStandIn() {
    server_.stop();
    cdn_.stop();
    thread_.join();
    cdn_thread_.join();
  }

  std::string base() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::string cdn_base() const { return "http://127.0.0.1:" + std::to_string(cdn_port_); }

  // The commit main points at now (derived from the repository's name and push count).
  std::string head(const std::string& repo) {
    std::lock_guard<std::mutex> lock(log_mutex);
    return head_locked(repo);
  }
  // A new commit on main with these files; the old commit keeps its files.
  void push(const std::string& repo, Files files) {
    std::lock_guard<std::mutex> lock(log_mutex);
    history_[head_locked(repo)] = repos[repo];
    ++pushes_[repo];
    repos[repo] = std::move(files);
  }
  std::vector<std::string> ranges() {
    std::lock_guard<std::mutex> lock(log_mutex);
    return range_log;
  }

 private:
  std::string head_locked(const std::string& repo) { return git_blob_oid(repo + "@" + std::to_string(pushes_[repo])); }

  // "main" or a commit this repository has had -> the commit; "" when unknown.
  std::string commit_of(const std::string& repo, const std::string& rev) {
    std::lock_guard<std::mutex> lock(log_mutex);
    const std::string now = head_locked(repo);
    if (rev == "main" || rev == now) return now;
    return history_.count(rev) ? rev : "";
  }
  const Files* files_at(const std::string& repo, const std::string& commit) {
    if (commit.empty()) return nullptr;
    std::lock_guard<std::mutex> lock(log_mutex);
    if (commit == head_locked(repo)) return &repos[repo];
    const auto it = history_.find(commit);
    return it == history_.end() ? nullptr : &it->second;
  }
  const StandInFile* find(const std::string& repo, const std::string& commit, const std::string& path) {
    const Files* files = files_at(repo, commit);
    if (!files) return nullptr;
    for (const StandInFile& f : *files)
      if (f.path == path) return &f;
    return nullptr;
  }

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
  bool scripted_failure(std::deque<StandInFailure>& queue, httplib::Response& res) {
    std::lock_guard<std::mutex> lock(log_mutex);
    if (queue.empty()) return false;
    const StandInFailure f = queue.front();
    queue.pop_front();
    res.status = f.status;
    if (!f.retry_after.empty()) res.set_header("Retry-After", f.retry_after);
    if (!f.rate_limit.empty()) res.set_header("RateLimit", f.rate_limit);
    res.set_content(R"({"error":"try again later"})", "application/json");
    return true;
  }
  static nlohmann::json entry(const StandInFile& f) {
    const uint64_t size = f.listed_size >= 0 ? uint64_t(f.listed_size) : f.content.size();
    if (!f.lfs)
      return {{"type", "file"}, {"path", f.path}, {"size", size},
              {"oid", f.listed_oid.empty() ? git_blob_oid(f.content) : f.listed_oid}};
    const std::string sha = f.listed_sha256.empty() ? hex_sha256(f.content) : f.listed_sha256;
    // An LFS file's own oid is the git id of its pointer file, not of the content.
    const std::string pointer = "version https://git-lfs.github.com/spec/v1\noid sha256:" + sha + "\nsize " +
                                std::to_string(size) + "\n";
    return {{"type", "file"}, {"path", f.path}, {"size", size}, {"oid", git_blob_oid(pointer)},
            {"lfs", {{"oid", sha}, {"size", size}, {"pointerSize", pointer.size()}}}};
  }
  // "bytes=A-B" -> B - A + 1 bytes asked; the rest of the file for "bytes=A-" or no range.
  static uint64_t bytes_asked(const std::string& range, uint64_t size) {
    if (range.rfind("bytes=", 0) != 0) return size;
    const size_t dash = range.find('-');
    const uint64_t a = std::stoull(range.substr(6, dash - 6));
    if (dash + 1 >= range.size()) return size > a ? size - a : 0;
    return std::stoull(range.substr(dash + 1)) - a + 1;
  }
  // The body in 64 KiB chunks (optionally slow, cut midway or cancelling the client). httplib
  // answers "Range: bytes=A-" and "bytes=A-B" itself with 206 and calls the provider from A.
  void serve(const httplib::Request& req, httplib::Response& res, const StandInFile& f) {
    const std::string range = req.get_header_value("Range");
    {
      std::lock_guard<std::mutex> lock(log_mutex);
      range_log.push_back(range);
    }
    if (max_request_bytes > 0 && bytes_asked(range, f.content.size()) > max_request_bytes)
      return void(refuse(res, 400, "", "Request too large: use ranges of at most " + std::to_string(max_request_bytes) + " bytes"));
    const bool cut = cut_next_transfers.fetch_sub(1) > 0;
    auto start = std::make_shared<size_t>(SIZE_MAX);  // the first offset this response serves
    const std::string* content = &f.content;
    res.set_content_provider(content->size(), "application/octet-stream",
                             [this, content, cut, start](size_t offset, size_t length, httplib::DataSink& sink) {
                               if (*start == SIZE_MAX) *start = offset;
                               const size_t asked_end = offset + length;
                               if (cut && offset >= *start + (asked_end - *start) / 2) return false;  // drop
                               const size_t n = std::min<size_t>(65536, length);
                               if (chunk_delay_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(chunk_delay_ms));
                               sink.write(content->data() + offset, n);
                               if (stop_after_bytes > 0 && offset + n >= stop_after_bytes) cancel.request_stop();
                               return true;
                             });
  }

  httplib::Server server_, cdn_;
  std::thread thread_, cdn_thread_;
  int port_ = 0, cdn_port_ = 0;
  std::map<std::string, int> pushes_;
  std::map<std::string, Files> history_;  // commit -> files, for commits main has left
};

}  // namespace kiln::test
