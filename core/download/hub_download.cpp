// One file from the hub: resume, retries with backoff, SHA-256 before trusting anything, and
// the data on disk (synced) before the finished name appears.
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
#include "download/sha256.h"
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

// An existing file of the listed size counts only once its SHA-256 matches (remembered after).
bool trusted_as_is(const fs::path& dest, const HubFile& file) {
  std::error_code ec;
  if (!fs::is_regular_file(dest, ec) || fs::file_size(dest, ec) != file.size || ec) return false;
  if (file.sha256.empty() || verified_before(dest.string(), file.sha256)) return true;
  if (sha256_of_file(dest.string()) == file.sha256) {
    remember_verified(dest.string(), file.sha256);
    return true;
  }
  return false;  // right size, wrong bytes: downloaded again and replaced by the rename
}

DownloadResult download_into(const HubOptions& options, const std::string& repo, const HubFile& file,
                             const fs::path& dest, const fs::path& part, const DownloadCallback& progress,
                             std::stop_token cancel) {
  if (trusted_as_is(dest, file)) return DownloadResult::AlreadyPresent;

  // Resume: the bytes already in the .part file are hashed first, then the rest is appended.
  std::error_code ec;
  uint64_t offset = size_or_zero(part);
  if (offset > file.size) {
    fs::remove(part, ec);
    offset = 0;
  }
  throw_if_no_space(file.size - offset, dest.parent_path().string());
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
  const std::string url = options.endpoint + "/" + repo + "/resolve/" + detail::url_path(options.revision) + "/" +
                          detail::url_path(file.path);
  for (; on_disk < file.size; ++attempt) {
    const HttpResult r = http_get_stream({url, options.token, on_disk, cancel}, sink);
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
    --attempt;  // the loop's ++ moves to it once the wait is over
    if (!detail::wait_unless_cancelled(wait, cancel))
      throw Error(what + ": download cancelled; " + std::to_string(on_disk) + " of " + std::to_string(file.size) +
                  " bytes kept, run again to resume");
  }
  // Synced before the rename: after a power loss the finished name never points at missing data.
  sync_file(out.get(), part.string());
  out.reset();
  if (!file.sha256.empty()) {
    const std::string got = hash.hex_digest();
    if (got != file.sha256) {
      fs::remove(part, ec);
      throw Error(what + ": SHA-256 mismatch (expected " + file.sha256 + ", got " + got +
                  "); the damaged download was removed");
    }
  }
  sync_folder(dest.parent_path().string());
  fs::rename(part, dest, ec);
  if (ec) throw Error(dest.string() + ": cannot move the finished download into place (" + ec.message() + ")");
  sync_folder(dest.parent_path().string());
  if (!file.sha256.empty()) remember_verified(dest.string(), file.sha256);
  report(true);
  return resumed ? DownloadResult::Resumed : DownloadResult::Downloaded;
}

}  // namespace

uint64_t check_free_space(const std::vector<HubFile>& files, const std::string& dest_dir) {
  uint64_t need = 0;
  for (const HubFile& f : files) {
    if (!detail::safe_relative_path(f.path)) continue;
    const fs::path dest = fs::path(dest_dir) / f.path;
    if (size_or_zero(dest) == f.size && fs::exists(dest)) continue;  // checked (and kept) when it is its turn
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
  const fs::path part = dest.string() + ".part";
  std::error_code ec;
  fs::create_directories(dest.parent_path(), ec);
  if (ec) throw Error(dest.parent_path().string() + ": cannot create the folder (" + ec.message() + ")");
  try {
    return download_into(options, repo, file, dest, part, progress, cancel);
  } catch (...) {
    remove_if_empty(part);
    throw;
  }
}

}  // namespace kiln
