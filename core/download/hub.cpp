// The hub's API as Kiln uses it: the recursive tree listing and /resolve/ downloads.
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
#include <vector>
#include <nlohmann/json.hpp>

#include "download/http_client.h"
#include "download/sha256.h"
#include "kiln/engine.h"
#include "kiln/types.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxListingBytes = 32u << 20;  // a listing page is kilobytes; refuse junk
constexpr int kMaxListingPages = 100;
constexpr const char* kHubWebsite = "https://huggingface.co";

bool valid_name(const std::string& s) {
  if (s.empty() || s.size() > 96 || s[0] == '.') return false;
  return std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isalnum(c) || c == '.' || c == '_' || c == '-'; });
}

// A relative path that stays inside the destination folder.
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

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
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

[[noreturn]] void throw_http_error(const HubOptions& options, const std::string& repo, const std::string& what,
                                   const HttpResult& r) {
  if (r.status == 401 || r.status == 403) {
    const std::string page = std::string(kHubWebsite) + "/" + repo;
    if (options.token.empty())
      throw Error(repo + " is gated or private: accept its licence at " + page +
                  ", then set HF_TOKEN (or --token) to a token of that account");
    throw Error(repo + ": the token has no access; accept the licence at " + page +
                " with the account the token belongs to (HTTP " + std::to_string(r.status) + ")");
  }
  if (r.status == 404) throw Error(what + " not found on " + options.endpoint + " (HTTP 404)");
  throw Error(what + ": HTTP " + std::to_string(r.status) + " from " + options.endpoint);
}

[[noreturn]] void throw_transfer_error(const HubOptions& options, const std::string& what, const HttpResult& r) {
  if (r.cancelled) throw Error(what + ": cancelled");
  throw Error(what + ": cannot reach " + options.endpoint + " (" + r.curl_error + ")");
}

void check_repo(const std::string& repo) {
  const size_t slash = repo.find('/');
  if (slash == std::string::npos || !valid_name(repo.substr(0, slash)) || !valid_name(repo.substr(slash + 1)))
    throw Error("'" + repo + "' is not a repository name (OWNER/REPO)");
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
    }
    files.push_back(std::move(f));
  }
  return files;
}

bool is_gguf(const HubFile& f) { return ends_with(lower(f.path), ".gguf"); }
// Vision projectors ship beside Gemma 3 GGUFs; Kiln runs the text model only.
bool is_projector(const HubFile& f) { return lower(f.path).find("mmproj") != std::string::npos; }

}  // namespace

HubOptions hub_options_from_env() {
  HubOptions o;
  if (const char* e = std::getenv("KILN_HF_ENDPOINT"); e && *e) o.endpoint = e;
  while (!o.endpoint.empty() && o.endpoint.back() == '/') o.endpoint.pop_back();
  if (const char* t = std::getenv("HF_TOKEN"); t && *t) o.token = t;
  return o;
}

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

std::vector<HubFile> list_repo_files(const HubOptions& options, const std::string& repo, std::stop_token cancel) {
  check_repo(repo);
  std::string url = options.endpoint + "/api/models/" + repo + "/tree/" + url_path(options.revision) + "?recursive=true";
  std::vector<HubFile> files;
  for (int page = 0; !url.empty(); ++page) {
    if (page == kMaxListingPages) throw Error(repo + ": the file listing does not end");
    const HttpResult r = http_get_text({url, options.token, 0, cancel}, kMaxListingBytes);
    if (r.curl_code != 0) throw_transfer_error(options, repo, r);
    if (r.status != 200) throw_http_error(options, repo, "repository " + repo, r);
    std::vector<HubFile> more = parse_listing(r.body, repo);
    files.insert(files.end(), more.begin(), more.end());
    // Follow the next page only on the same server: the token must not travel elsewhere.
    url = r.next_link.rfind(options.endpoint + "/", 0) == 0 ? r.next_link : "";
  }
  std::sort(files.begin(), files.end(), [](const HubFile& a, const HubFile& b) { return a.path < b.path; });
  return files;
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

DownloadResult download_file(const HubOptions& options, const std::string& repo, const HubFile& file,
                             const std::string& dest_dir, const DownloadCallback& progress, std::stop_token cancel) {
  check_repo(repo);
  if (!safe_relative_path(file.path)) throw Error("'" + file.path + "' is not a file path inside a repository");
  const fs::path dest = fs::path(dest_dir) / file.path;
  const fs::path part = dest.string() + ".part";
  std::error_code ec;
  fs::create_directories(dest.parent_path(), ec);
  if (ec) throw Error(dest.parent_path().string() + ": cannot create the folder (" + ec.message() + ")");
  if (fs::is_regular_file(dest, ec) && fs::file_size(dest, ec) == file.size) return DownloadResult::AlreadyPresent;

  // Resume: the bytes already in the .part file are hashed first, then the rest is appended.
  uint64_t offset = fs::is_regular_file(part, ec) ? fs::file_size(part, ec) : 0;
  if (ec || offset > file.size) {
    fs::remove(part, ec);
    offset = 0;
  }
  Sha256 hash;
  if (offset > 0 && !file.sha256.empty()) {
    std::FILE* in = std::fopen(part.c_str(), "rb");
    if (!in) throw Error(part.string() + ": cannot read the partial download");
    std::vector<char> chunk(1 << 20);
    for (size_t n; (n = std::fread(chunk.data(), 1, chunk.size(), in)) > 0;) hash.update(chunk.data(), n);
    std::fclose(in);
  }
  const bool resumed = offset > 0;
  std::unique_ptr<std::FILE, decltype(&std::fclose)> out(std::fopen(part.c_str(), offset > 0 ? "ab" : "wb"), std::fclose);
  if (!out) throw Error(part.string() + ": cannot write (" + std::strerror(errno) + ")");

  uint64_t on_disk = offset;
  const auto start = std::chrono::steady_clock::now();
  auto last_report = start - std::chrono::seconds(1);
  const uint64_t start_bytes = offset;
  auto report = [&](bool always) {
    const auto now = std::chrono::steady_clock::now();
    if (!progress || (!always && now - last_report < std::chrono::milliseconds(100))) return;
    last_report = now;
    const double s = std::chrono::duration<double>(now - start).count();
    progress({file.path, on_disk, file.size, s > 0 && on_disk >= start_bytes ? double(on_disk - start_bytes) / s : 0});
  };
  bool too_many_bytes = false, disk_error = false;
  HttpSink sink;
  sink.on_status = [&](long status) {
    // 200 to a Range request: the server starts over, so must we.
    if (status == 200 && on_disk > 0) {
      out.reset(std::fopen(part.c_str(), "wb"));
      hash = Sha256();
      on_disk = 0;
    }
  };
  sink.write = [&](const char* data, size_t n) {
    if (on_disk + n > file.size) {
      too_many_bytes = true;
      return false;
    }
    if (!out || std::fwrite(data, 1, n, out.get()) != n) {
      disk_error = true;
      return false;
    }
    if (!file.sha256.empty()) hash.update(data, n);
    on_disk += n;
    return true;
  };
  sink.on_progress = [&](uint64_t) { report(false); };
  report(true);

  const std::string what = repo + ":" + file.path;
  if (on_disk < file.size) {
    const std::string url = options.endpoint + "/" + repo + "/resolve/" + url_path(options.revision) + "/" + url_path(file.path);
    const HttpResult r = http_get_stream({url, options.token, offset, cancel}, sink);
    if (out && std::fflush(out.get()) != 0) disk_error = true;
    if (too_many_bytes) {
      out.reset();
      fs::remove(part, ec);
      throw Error(what + ": the server sent more than the listed " + std::to_string(file.size) +
                  " bytes; the download was removed");
    }
    if (disk_error) throw Error(part.string() + ": cannot write the download (" + std::strerror(errno) + ")");
    if (r.curl_code != 0) {
      if (r.cancelled)
        throw Error(what + ": download cancelled; " + std::to_string(on_disk) + " of " + std::to_string(file.size) +
                    " bytes kept, run again to resume");
      throw Error(what + ": transfer interrupted after " + std::to_string(on_disk) + " of " + std::to_string(file.size) +
                  " bytes (" + r.curl_error + "); run again to resume");
    }
    if (r.status == 416) {  // the part does not fit the file the server has now: start over next time
      out.reset();
      fs::remove(part, ec);
      throw Error(what + ": the server refused to resume; the partial download was removed, run again");
    }
    if (r.status != 200 && r.status != 206) throw_http_error(options, repo, "file " + what, r);
  }
  out.reset();
  if (on_disk != file.size)
    throw Error(what + ": the server sent " + std::to_string(on_disk) + " of " + std::to_string(file.size) +
                " bytes; run again to resume");
  if (!file.sha256.empty()) {
    const std::string got = hash.hex_digest();
    if (got != file.sha256) {
      fs::remove(part, ec);
      throw Error(what + ": SHA-256 mismatch (expected " + file.sha256 + ", got " + got +
                  "); the damaged download was removed");
    }
  }
  fs::rename(part, dest, ec);
  if (ec) throw Error(dest.string() + ": cannot move the finished download into place (" + ec.message() + ")");
  report(true);
  return resumed ? DownloadResult::Resumed : DownloadResult::Downloaded;
}

}  // namespace kiln
