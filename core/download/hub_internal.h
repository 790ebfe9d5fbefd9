// Helpers the listing (hub.cpp) and the download (hub_download.cpp) share; not for other users.
#pragma once

#include <stop_token>
#include <string>

#include "download/hub.h"

namespace kiln {
struct HttpResult;
namespace detail {

void check_repo(const std::string& repo);            // throws unless OWNER/REPO
bool safe_relative_path(const std::string& p);       // stays inside the destination folder
std::string url_path(const std::string& p);          // percent-encoded, '/' kept

// Seconds to wait before request `next_attempt` (2..max) after `failed`: the server's
// Retry-After / RateLimit when it gives one (at most 5 minutes), else exponential backoff.
double retry_delay(const HubOptions& options, int next_attempt, const HttpResult& failed);
// Sleeps `seconds` unless `cancel` is requested first; false when cancelled.
bool wait_unless_cancelled(double seconds, std::stop_token cancel);
// "HTTP 503" or curl's message: why an attempt failed, for progress and the final error.
std::string failure_reason(const HttpResult& r);

// The hash the listing gives for `file` (SHA-256 of LFS files, git blob SHA-1 of small ones; "" =
// none) and that hash computed over a file on disk ("" when it cannot be read).
std::string expected_digest(const HubFile& file);
std::string digest_of_file(const std::string& path, const HubFile& file, const HashProgress& hashed = {});
// `path` exists at the listed size and its hash matches (remembered beside it when `remember`).
bool verified_copy(const std::string& path, const HubFile& file, bool remember, const HashProgress& hashed = {});
// Reports hashing an existing copy as DownloadProgress{verifying}, at most every 100 ms.
HashProgress verify_reporter(const HubFile& file, const DownloadCallback& progress);
// Puts `dest` in place as a hard link to `source` (no bytes copied), else a symlink to it.
void link_into_place(const std::string& source, const std::string& dest);
// One file downloaded to `dest` through `part`, checks included (hub_download.cpp).
DownloadResult transfer(const HubOptions& options, const std::string& repo, const HubFile& file,
                        const std::string& dest, const std::string& part, const DownloadCallback& progress,
                        std::stop_token cancel);

}  // namespace detail
}  // namespace kiln
