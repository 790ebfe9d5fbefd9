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

}  // namespace detail
}  // namespace kiln
