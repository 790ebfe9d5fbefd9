// The hub's API as Kiln uses it: the commit a revision names, the recursive tree listing of that
// commit (paginated), and choosing files; /resolve/ downloads are in hub_download.cpp.
#include "download/hub.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <thread>
#include <vector>
#include <nlohmann/json.hpp>

#include "download/http_client.h"
#include "download/hub_errors.h"
#include "download/hub_internal.h"
#include "common/sha256.h"
#include "kiln/engine.h"
#include "kiln/types.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxListingBytes = 32u << 20;  // a listing page is kilobytes; refuse junk
constexpr int kMaxListingPages = 100;

constexpr double kMaxServerWait = 300;  // a Retry-After beyond this is not worth blocking a pull for

bool valid_name(const std::string& s) {
  if (s.empty() || s.size() > 96 || s[0] == '.') return false;
  return std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isalnum(c) || c == '.' || c == '_' || c == '-'; });
}

}  // namespace

namespace detail {

bool safe_relative_path(const std::string& p) {
  if (p.empty() || p.size() > 1024 || p.front() == '/' || p.find('\\') != std::string::npos || p.find('\0') != std::string::npos)
    return false;
  size_t start = 0;
  while (start <= p.size()) {
    size_t end = p.find('/', start);
    if (end == std::string::npos) end = p.size();
    const std::string part = p.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") return false;
    start = end + 1;
  }
  return true;
}

// Percent-encodes a path for a URL, keeping '/' between its parts.
std::string url_path(const std::string& p) {
  std::string out;
  char buf[4];
  for (unsigned char c : p) {
    if (std::isalnum(c) || c == '/' || c == '-' || c == '_' || c == '.' || c == '~') {
      out += char(c);
    } else {
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    }
  }
  return out;
}

void check_repo(const std::string& repo) {
  const size_t slash = repo.find('/');
  if (slash == std::string::npos || !valid_name(repo.substr(0, slash)) || !valid_name(repo.substr(slash + 1)))
    throw Error("'" + repo + "' is not a repository name (OWNER/REPO)");
}

double retry_delay(const HubOptions& options, int next_attempt, const HttpResult& failed) {
  if (const double server = server_retry_delay(failed); server >= 0) return std::min(server, kMaxServerWait);
  const double backoff = options.backoff_base_s * double(1u << std::min(next_attempt - 2, 20));
  return std::min(backoff, options.backoff_max_s);
}

bool wait_unless_cancelled(double seconds, std::stop_token cancel) {
  using clock = std::chrono::steady_clock;
  const auto until = clock::now() + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(seconds));
  for (auto now = clock::now(); now < until; now = clock::now()) {
    if (cancel.stop_requested()) return false;
    std::this_thread::sleep_for(std::min<clock::duration>(std::chrono::milliseconds(50), until - now));
  }
  return !cancel.stop_requested();
}

std::string failure_reason(const HttpResult& r) {
  return r.curl_code != 0 ? r.curl_error : "HTTP " + std::to_string(r.status);
}

}  // namespace detail

namespace {
using detail::check_repo;
using detail::safe_relative_path;
using detail::url_path;

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

[[noreturn]] void throw_transfer_error(const HubOptions& options, const std::string& what, const HttpResult& r) {
  if (r.cancelled) throw Error(what + ": cancelled");
  throw Error(what + ": cannot reach " + options.endpoint + " (" + r.curl_error + ")");
}

bool is_hex(const std::string& s, size_t n) {
  return s.size() == n && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isxdigit(c); });
}

// "scheme://host[:port]" of an absolute URL, "" otherwise.
std::string origin_of(const std::string& url) {
  const size_t scheme = url.find("://");
  if (scheme == std::string::npos) return "";
  return url.substr(0, url.find('/', scheme + 3));
}

// The next page's URL: relative links resolved against `current`; one on another host is refused,
// since the token must not travel there and a listing that silently ends would pull half a model.
std::string next_page_url(const std::string& link, const std::string& current, const std::string& repo) {
  if (link.empty()) return "";
  const std::string here = origin_of(current);
  if (link.find("://") != std::string::npos) {
    if (origin_of(link) != here)
      throw Error(repo + ": the hub's listing continues on another host (" + origin_of(link) +
                  "); refusing to follow it, the listing would be incomplete");
    return link;
  }
  if (link.rfind("//", 0) == 0)
    throw Error(repo + ": the hub's listing continues on another host (" + link + "); refusing to follow it");
  if (link[0] == '/') return here + link;
  const std::string base = current.substr(0, current.find('?'));
  if (link[0] == '?') return base + link;
  return base.substr(0, base.rfind('/') + 1) + link;
}

std::vector<HubFile> parse_listing(const std::string& body, const std::string& repo) {
  nlohmann::json page;
  try {
    page = nlohmann::json::parse(body);
  } catch (const nlohmann::json::exception& e) {
    throw Error(repo + ": the hub's file listing is not JSON");
  }
  if (!page.is_array()) throw Error(repo + ": the hub's file listing is not a list");
  std::vector<HubFile> files;
  for (const auto& entry : page) {
    if (!entry.is_object() || entry.value("type", "") != "file") continue;
    HubFile f;
    const auto path = entry.find("path");
    const auto size = entry.find("size");
    if (path == entry.end() || !path->is_string() || size == entry.end() || !size->is_number_unsigned())
      throw Error(repo + ": the hub's file listing has an entry without a path or size");
    f.path = path->get<std::string>();
    f.size = size->get<uint64_t>();
    if (!safe_relative_path(f.path)) throw Error(repo + ": the hub lists an unsafe file path '" + f.path + "'");
    if (const auto lfs = entry.find("lfs"); lfs != entry.end() && lfs->is_object()) {
      std::string oid = lfs->value("oid", "");
      if (oid.rfind("sha256:", 0) == 0) oid = oid.substr(7);
      if (oid.size() != 64 || !std::all_of(oid.begin(), oid.end(), [](unsigned char c) { return std::isxdigit(c); }))
        throw Error(repo + ": the hub lists '" + f.path + "' with a malformed SHA-256");
      f.sha256 = lower(oid);
      if (const auto lsize = lfs->find("size"); lsize != lfs->end() && lsize->is_number_unsigned()) f.size = lsize->get<uint64_t>();
    } else if (std::string oid = entry.value("oid", ""); is_hex(oid, 40)) {
      f.git_oid = lower(oid);  // a plain git file: its blob id checks the content
    }
    files.push_back(std::move(f));
  }
  return files;
}

bool is_gguf(const HubFile& f) { return ends_with(lower(f.path), ".gguf"); }
// Vision projectors ship beside Gemma 3 GGUFs; Kiln runs the text model only.
bool is_projector(const HubFile& f) { return lower(f.path).find("mmproj") != std::string::npos; }

}  // namespace

HubReference parse_hub_reference(const std::string& text) {
  std::string s = text;
  for (const char* prefix : {"https://huggingface.co/", "http://huggingface.co/", "hf.co/", "huggingface.co/"})
    if (s.rfind(prefix, 0) == 0) s = s.substr(std::string(prefix).size());
  HubReference ref;
  const size_t colon = s.find(':');
  ref.repo = s.substr(0, colon);
  if (colon != std::string::npos) {
    ref.file = s.substr(colon + 1);
    if (!safe_relative_path(ref.file)) throw Error("'" + ref.file + "' is not a file path inside a repository");
  }
  check_repo(ref.repo);
  return ref;
}

std::string local_repo_dir(const std::string& repo) {
  check_repo(repo);
  return (fs::path(user_models_dir()) / repo).string();
}

namespace {

// GET a small JSON answer, retrying transient failures like downloads; refusals become HubError.
HttpResult get_api(const HubOptions& options, const std::string& url, const std::string& repo, std::stop_token cancel) {
  HttpResult r;
  for (int attempt = 1;; ++attempt) {
    r = http_get_text({url, options.token, 0, 0, cancel}, kMaxListingBytes);
    const bool again = r.curl_code != 0 ? r.transient : retryable_status(r.status);
    if (!again || attempt >= options.max_attempts) break;
    if (!detail::wait_unless_cancelled(detail::retry_delay(options, attempt + 1, r), cancel)) {
      r.cancelled = true;
      break;
    }
  }
  if (r.curl_code != 0 || r.cancelled) throw_transfer_error(options, repo, r);
  if (r.status != 200) throw hub_http_error(r, repo, "repository " + repo, options.endpoint, options.token_source, !options.token.empty());
  return r;
}

}  // namespace

std::string resolve_commit(const HubOptions& options, const std::string& repo, std::stop_token cancel) {
  check_repo(repo);
  if (is_hex(options.revision, 40)) return lower(options.revision);  // already a commit
  // One path segment, so a branch like refs/pr/1 is sent as refs%2Fpr%2F1, as the hub expects.
  std::string revision = url_path(options.revision);
  for (size_t at; (at = revision.find('/')) != std::string::npos;) revision.replace(at, 1, "%2F");
  const HttpResult r = get_api(options, options.endpoint + "/api/models/" + repo + "/revision/" + revision, repo, cancel);
  std::string sha;
  try {
    const nlohmann::json info = nlohmann::json::parse(r.body);
    if (info.is_object()) sha = info.value("sha", "");
  } catch (const nlohmann::json::exception&) {
  }
  if (!is_hex(sha, 40))
    throw Error(repo + ": the hub did not name the commit of revision '" + options.revision + "'");
  return lower(sha);
}

RepoListing list_repo(const HubOptions& options, const std::string& repo, std::stop_token cancel) {
  RepoListing listing;
  listing.commit = resolve_commit(options, repo, cancel);
  std::string url = options.endpoint + "/api/models/" + repo + "/tree/" + listing.commit + "?recursive=true";
  for (int page = 0; !url.empty(); ++page) {
    if (page == kMaxListingPages) throw Error(repo + ": the file listing does not end");
    const HttpResult r = get_api(options, url, repo, cancel);
    std::vector<HubFile> more = parse_listing(r.body, repo);
    listing.files.insert(listing.files.end(), more.begin(), more.end());
    url = next_page_url(r.next_link, url, repo);
  }
  std::sort(listing.files.begin(), listing.files.end(), [](const HubFile& a, const HubFile& b) { return a.path < b.path; });
  return listing;
}

std::vector<HubFile> list_repo_files(const HubOptions& options, const std::string& repo, std::stop_token cancel) {
  return list_repo(options, repo, cancel).files;
}

std::vector<HubFile> files_to_pull(const std::vector<HubFile>& listing, const std::string& repo) {
  auto at_root = [](const HubFile& f) { return f.path.find('/') == std::string::npos; };
  const bool has_config = std::any_of(listing.begin(), listing.end(), [](const HubFile& f) { return f.path == "config.json"; });
  const bool has_safetensors = std::any_of(listing.begin(), listing.end(), [&](const HubFile& f) {
    return at_root(f) && ends_with(f.path, ".safetensors");
  });
  std::vector<HubFile> out;
  if (has_config && has_safetensors) {
    // A Hugging Face model folder: its JSON files, weights and tokenizer; not original/ or README.
    for (const HubFile& f : listing)
      if (at_root(f) && (ends_with(f.path, ".json") || ends_with(f.path, ".safetensors") || f.path == "tokenizer.model"))
        out.push_back(f);
    return out;
  }
  std::vector<HubFile> ggufs;
  for (const HubFile& f : listing)
    if (is_gguf(f) && !is_projector(f)) ggufs.push_back(f);
  if (ggufs.size() == 1) return ggufs;
  if (ggufs.empty()) throw Error(repo + " holds neither a Hugging Face model folder nor a GGUF file");
  std::string names;
  for (const HubFile& f : ggufs) names += (names.empty() ? "" : ", ") + f.path;
  throw Error(repo + " holds " + std::to_string(ggufs.size()) + " GGUF files; name one as " + repo + ":FILE (" + names + ")");
}

HubFile select_file(const std::vector<HubFile>& listing, const std::string& repo, const std::string& name) {
  for (const HubFile& f : listing)
    if (f.path == name) return f;
  std::vector<const HubFile*> matches;
  std::string ggufs;
  for (const HubFile& f : listing) {
    if (!is_gguf(f)) continue;
    ggufs += (ggufs.empty() ? "" : ", ") + f.path;
    if (lower(f.path).find(lower(name)) != std::string::npos) matches.push_back(&f);
  }
  if (matches.size() == 1) return *matches[0];
  if (matches.empty())
    throw Error(repo + " has no file '" + name + "'" + (ggufs.empty() ? "" : " (its GGUF files: " + ggufs + ")"));
  std::string names;
  for (const HubFile* f : matches) names += (names.empty() ? "" : ", ") + f->path;
  throw Error("'" + name + "' matches " + std::to_string(matches.size()) + " files in " + repo + ": " + names);
}

}  // namespace kiln
