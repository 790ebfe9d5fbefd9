// One file from the hub: resume, retries with backoff, SHA-256 before trusting anything, and
// the data on disk (synced) before the finished name appears.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <vector>

#include "download/file_trust.h"
#include "download/http_client.h"
#include "download/hub.h"
#include "download/hub_errors.h"
#include "download/hub_internal.h"
#include "download/hf_cache.h"
#include "common/sha1.h"
#include "common/sha256.h"
#include "kiln/types.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

std::string human_bytes(uint64_t bytes) {
  const char* units[] = {"B", "KB", "MB", "GB", "TB", "PB"};
  double v = double(bytes);
  int u = 0;
  while (v >= 1000 && u < 5) {
    v /= 1000;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
  return buf;
}

uint64_t size_or_zero(const fs::path& p) {
  std::error_code ec;
  const uint64_t n = fs::is_regular_file(p, ec) ? fs::file_size(p, ec) : 0;
  return ec ? 0 : n;
}

// A refused redirect or an error before the first byte leaves an empty part: nothing to resume.
void remove_if_empty(const fs::path& part) {
  std::error_code ec;
  if (fs::is_regular_file(part, ec) && fs::file_size(part, ec) == 0 && !ec) fs::remove(part, ec);
}

void throw_if_no_space(uint64_t need, const std::string& folder) {
  const uint64_t free = free_space_at(folder);
  if (need <= free) return;
  HubError e(HubErrorKind::NotEnoughSpace, "not enough free space in " + folder + ": the download needs " +
                                               human_bytes(need) + ", " + human_bytes(free) + " are free");
  e.needed = need;
  e.available = free;
  e.folder = folder;
  throw e;
}

// The listing's hash of a file, computed as it streams: SHA-256 for LFS files, git's blob SHA-1
// for small ones, nothing when the listing gave neither (then only the size is checked).
class ContentHash {
 public:
  explicit ContentHash(const HubFile& f) : file_(&f), sha1_(git_blob_hasher(f.size)) {}
  bool active() const { return !file_->sha256.empty() || !file_->git_oid.empty(); }
  void update(const char* data, size_t n) {
    if (!file_->sha256.empty()) sha256_.update(data, n);
    else if (!file_->git_oid.empty()) sha1_.update(data, n);
  }
  std::string hex() { return !file_->sha256.empty() ? sha256_.hex_digest() : file_->git_oid.empty() ? "" : sha1_.hex_digest(); }
  const char* name() const { return !file_->sha256.empty() ? "SHA-256" : "git SHA-1"; }

 private:
  const HubFile* file_;
  Sha256 sha256_;
  Sha1 sha1_;
};

// Feeds the first `bytes` of `path` to `hash`; false when it cannot be read.
bool hash_prefix(const std::string& path, uint64_t bytes, ContentHash& hash, const HashProgress& hashed = {}) {
  std::unique_ptr<std::FILE, decltype(&std::fclose)> in(std::fopen(path.c_str(), "rb"), std::fclose);
  if (!in) return false;
  std::vector<char> chunk(1 << 20);
  uint64_t done = 0;
  while (bytes > 0) {
    const size_t n = std::fread(chunk.data(), 1, size_t(std::min<uint64_t>(bytes, chunk.size())), in.get());
    if (n == 0) return false;
    hash.update(chunk.data(), n);
    bytes -= n;
    done += n;
    if (hashed) hashed(done);
  }
  return true;
}

}  // namespace

namespace detail {

std::string expected_digest(const HubFile& file) { return !file.sha256.empty() ? file.sha256 : file.git_oid; }

std::string digest_of_file(const std::string& path, const HubFile& file, const HashProgress& hashed) {
  ContentHash hash(file);
  return hash_prefix(path, file.size, hash, hashed) ? hash.hex() : "";
}

HashProgress verify_reporter(const HubFile& file, const DownloadCallback& progress) {
  if (!progress) return {};
  auto last = std::make_shared<std::chrono::steady_clock::time_point>();
  return [&file, &progress, last](uint64_t done) {
    const auto now = std::chrono::steady_clock::now();
    if (done < file.size && now - *last < std::chrono::milliseconds(100)) return;
    *last = now;
    DownloadProgress p;
    p.file = file.path;
    p.done = done;
    p.total = file.size;
    p.verifying = true;
    progress(p);
  };
}

bool verified_copy(const std::string& path, const HubFile& file, bool remember, const HashProgress& hashed) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec) || fs::file_size(path, ec) != file.size || ec) return false;
  const std::string want = expected_digest(file);
  if (want.empty()) return true;  // nothing published to check against: the size is all there is
  if (verified_before(path, want)) return true;
  if (digest_of_file(path, file, hashed) != want) return false;
  if (remember) remember_verified(path, want);
  return true;
}

void link_into_place(const std::string& source, const std::string& dest) {
  std::error_code ec;
  const fs::path target = fs::canonical(source, ec);
  if (ec) throw Error(source + ": cannot read (" + ec.message() + ")");
  fs::remove(dest, ec);
  fs::create_hard_link(target, dest, ec);
  if (!ec) return;
  ec.clear();
  fs::create_symlink(target, dest, ec);  // another file system: refer to it instead
  if (ec) throw Error(dest + ": cannot link " + target.string() + " into place (" + ec.message() + ")");
}

}  // namespace detail

namespace {

DownloadResult download_into(const HubOptions& options, const std::string& repo, const HubFile& file,
                             const fs::path& dest, const fs::path& part, const DownloadCallback& progress,
                             std::stop_token cancel) {
  // Resume: the bytes already in the .part file are hashed first, then the rest is appended.
  std::error_code ec;
  uint64_t offset = size_or_zero(part);
  if (offset > file.size) {
    fs::remove(part, ec);
    offset = 0;
  }
  throw_if_no_space(file.size - offset, dest.parent_path().string());
  ContentHash hash(file);
  if (offset > 0 && hash.active() && !hash_prefix(part.string(), offset, hash))
    throw Error(part.string() + ": cannot read the partial download");
  const bool resumed = offset > 0;
  std::unique_ptr<std::FILE, decltype(&std::fclose)> out(std::fopen(part.c_str(), offset > 0 ? "ab" : "wb"), std::fclose);
  if (!out) throw Error(part.string() + ": cannot write (" + std::strerror(errno) + ")");

  uint64_t on_disk = offset;
  const int max_attempts = std::max(1, options.max_attempts);
  int attempt = 1;
  std::string reason;
  const auto start = std::chrono::steady_clock::now();
  auto last_report = start - std::chrono::seconds(1);
  const uint64_t start_bytes = offset;
  auto report = [&](bool always, bool retrying = false, double retry_in = 0) {
    const auto now = std::chrono::steady_clock::now();
    if (!progress || (!always && now - last_report < std::chrono::milliseconds(100))) return;
    last_report = now;
    const double s = std::chrono::duration<double>(now - start).count();
    progress({file.path, on_disk, file.size, s > 0 && on_disk >= start_bytes ? double(on_disk - start_bytes) / s : 0,
              attempt, max_attempts, retrying, retry_in, reason});
  };
  bool too_many_bytes = false, disk_error = false;
  HttpSink sink;
  sink.on_status = [&](long status) {
    // 200 to a Range request: the server starts over, so must we.
    if (status == 200 && on_disk > 0) {
      out.reset(std::fopen(part.c_str(), "wb"));
      hash = ContentHash(file);
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
    hash.update(data, n);
    on_disk += n;
    return true;
  };
  sink.on_progress = [&](uint64_t) { report(false); };
  report(true);

  const std::string what = repo + ":" + file.path;
  const std::string url = options.endpoint + "/" + repo + "/resolve/" + detail::url_path(options.revision) + "/" +
                          detail::url_path(file.path);
  // Above max_request_bytes the CDN wants ranges: each request asks for one chunk at most.
  const uint64_t chunk = std::max<uint64_t>(1, options.max_request_bytes);
  while (on_disk < file.size) {
    const uint64_t end = file.size > chunk ? std::min(file.size, on_disk + chunk) : 0;  // exclusive; 0 = to the end
    const HttpResult r = http_get_stream({url, options.token, on_disk, end > 0 ? end - 1 : 0, cancel}, sink);
    if (out && std::fflush(out.get()) != 0) disk_error = true;
    if (too_many_bytes) {
      out.reset();
      fs::remove(part, ec);
      throw Error(what + ": the server sent more than the listed " + std::to_string(file.size) +
                  " bytes; the download was removed");
    }
    if (disk_error) throw Error(part.string() + ": cannot write the download (" + std::strerror(errno) + ")");
    if (r.cancelled)
      throw Error(what + ": download cancelled; " + std::to_string(on_disk) + " of " + std::to_string(file.size) +
                  " bytes kept, run again to resume");
    if (r.curl_code == 0 && r.status == 416) {  // the part does not fit the file the server has now
      out.reset();
      fs::remove(part, ec);
      throw Error(what + ": the server refused to resume; the partial download was removed, run again");
    }
    const bool ok = r.curl_code == 0 && (r.status == 200 || r.status == 206);
    if (ok && on_disk == file.size) break;
    if (ok && end > 0 && on_disk == end) {  // a whole chunk: the next one starts afresh
      attempt = 1;
      reason.clear();
      continue;
    }
    // A dropped connection, a short body, 408, 429, 5xx: try again from where the part ends.
    const bool again = r.curl_code != 0 ? r.transient : ok || retryable_status(r.status);
    if (!again) {
      if (r.curl_code != 0)
        throw Error(what + ": transfer failed after " + std::to_string(on_disk) + " of " + std::to_string(file.size) +
                    " bytes (" + r.curl_error + ")");
      throw hub_http_error(r, repo, "file " + what, options.endpoint, options.token_source, !options.token.empty());
    }
    reason = ok ? "the server sent " + std::to_string(on_disk) + " of " + std::to_string(file.size) + " bytes"
                : detail::failure_reason(r);
    if (attempt >= max_attempts)
      throw Error(what + ": transfer interrupted after " + std::to_string(on_disk) + " of " + std::to_string(file.size) +
                  " bytes (" + reason + ", " + std::to_string(attempt) + " attempts); run again to resume");
    const double wait = detail::retry_delay(options, attempt + 1, r);
    ++attempt;
    report(true, true, wait);
    if (!detail::wait_unless_cancelled(wait, cancel))
      throw Error(what + ": download cancelled; " + std::to_string(on_disk) + " of " + std::to_string(file.size) +
                  " bytes kept, run again to resume");
  }
  // Synced before the rename: after a power loss the finished name never points at missing data.
  sync_file(out.get(), part.string());
  out.reset();
  if (hash.active()) {
    const std::string want = detail::expected_digest(file), got = hash.hex();
    if (got != want) {
      fs::remove(part, ec);
      throw Error(what + ": " + hash.name() + " mismatch (expected " + want + ", got " + got +
                  "); the damaged download was removed");
    }
  }
  sync_folder(dest.parent_path().string());
  fs::rename(part, dest, ec);
  if (ec) throw Error(dest.string() + ": cannot move the finished download into place (" + ec.message() + ")");
  sync_folder(dest.parent_path().string());
  if (hash.active()) remember_verified(dest.string(), detail::expected_digest(file));
  report(true);
  return resumed ? DownloadResult::Resumed : DownloadResult::Downloaded;
}

}  // namespace

namespace detail {

DownloadResult transfer(const HubOptions& options, const std::string& repo, const HubFile& file, const std::string& dest,
                        const std::string& part, const DownloadCallback& progress, std::stop_token cancel) {
  try {
    return download_into(options, repo, file, dest, part, progress, cancel);
  } catch (...) {
    remove_if_empty(part);
    throw;
  }
}

}  // namespace detail

uint64_t check_free_space(const std::vector<HubFile>& files, const std::string& dest_dir, const std::string& repo) {
  uint64_t need = 0;
  const std::vector<std::string> caches = repo.empty() ? std::vector<std::string>{} : hf_hub_cache_dirs();
  for (const HubFile& f : files) {
    if (!detail::safe_relative_path(f.path)) continue;
    const fs::path dest = fs::path(dest_dir) / f.path;
    if (size_or_zero(dest) == f.size && fs::exists(dest)) continue;  // checked (and kept) when it is its turn
    const std::string etag = detail::expected_digest(f);
    if (!etag.empty() && std::any_of(caches.begin(), caches.end(), [&](const std::string& c) {
          return size_or_zero(fs::path(hf_repo_cache_folder(c, repo)) / "blobs" / etag) == f.size;
        }))
      continue;  // linked, not fetched (if its hash holds; else the per-file check catches it)
    need += f.size - std::min(f.size, size_or_zero(dest.string() + ".part"));
  }
  throw_if_no_space(need, dest_dir);
  return need;
}

DownloadResult download_file(const HubOptions& options, const std::string& repo, const HubFile& file,
                             const std::string& dest_dir, const DownloadCallback& progress, std::stop_token cancel) {
  detail::check_repo(repo);
  if (!detail::safe_relative_path(file.path)) throw Error("'" + file.path + "' is not a file path inside a repository");
  const fs::path dest = fs::path(dest_dir) / file.path;
  std::error_code ec;
  fs::create_directories(dest.parent_path(), ec);
  if (ec) throw Error(dest.parent_path().string() + ": cannot create the folder (" + ec.message() + ")");
  // An existing file counts only once its hash matches (remembered after); right size and wrong
  // bytes is downloaded again and replaced by the rename.
  const HashProgress hashed = detail::verify_reporter(file, progress);
  if (detail::verified_copy(dest.string(), file, true, hashed)) return DownloadResult::AlreadyPresent;
  if (options.use_hf_cache && !detail::expected_digest(file).empty())
    if (const std::string cached = find_in_hf_cache(repo, options.revision, file, hashed); !cached.empty()) {
      detail::link_into_place(cached, dest.string());
      remember_verified(dest.string(), detail::expected_digest(file));
      return DownloadResult::FromHfCache;
    }
  return detail::transfer(options, repo, file, dest.string(), dest.string() + ".part", progress, cancel);
}

}  // namespace kiln
