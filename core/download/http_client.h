// A small blocking HTTP client over libcurl (GET, and POST for remote chat endpoints): redirects
// followed, bearer token sent to the first host only (curl drops custom Authorization headers on a
// redirect to another host), cancellable.
#pragma once

#include <cstdint>
#include <functional>
#include <stop_token>
#include <string>

namespace kiln {

struct HttpRequest {
  std::string url;
  std::string token;                 // "" = no Authorization header
  uint64_t range_start = 0;          // > 0: "Range: bytes=N-"
  uint64_t range_end = 0;            // > 0: "Range: bytes=N-M", M inclusive (a chunk of a huge file)
  std::stop_token cancel;
  // POST `body` with this Content-Type when `post` is set (an OpenAI-style chat request).
  bool post = false;
  std::string body{};
  std::string content_type = "application/json";
  std::string accept{};              // "" = curl's default (*/*)
  long connect_seconds = 30;
  // A transfer under 1 byte/s for this long fails instead of hanging forever. A remote model may
  // be silent for minutes while it reads a long prompt, so chat allows more than downloads.
  long stall_seconds = 60;
};

struct HttpResult {
  long status = 0;                   // final HTTP status (after redirects)
  std::string body;                  // text bodies and error bodies (bounded)
  std::string next_link;             // Link: <...>; rel="next" (paginated listings)
  // The hub says which refusal it is in these (GatedRepo, RepoNotFound, ...); "" when absent.
  std::string error_code;            // X-Error-Code
  std::string error_message;         // X-Error-Message
  std::string retry_after;           // Retry-After (seconds or an HTTP date), raw
  std::string rate_limit;            // RateLimit ("api";r=0;t=58), raw
  int curl_code = 0;                 // CURLcode; 0 = the transfer completed
  std::string curl_error;            // curl's message when curl_code != 0
  bool cancelled = false;
  bool transient = false;            // a network failure worth retrying (reset, timeout, refused...)
};

// Body bytes of a successful (2xx) response go to `sink` (which returns false to abort); the
// bodies of other statuses are kept in HttpResult::body. on_status sees the status before the
// first body byte. on_progress(received) reports bytes received so far in this response.
struct HttpSink {
  std::function<void(long status)> on_status;
  std::function<bool(const char* data, size_t bytes)> write;
  std::function<void(uint64_t received)> on_progress;
};

// GET into memory, up to max_bytes (more is an error reported as curl_code != 0).
HttpResult http_get_text(const HttpRequest& request, size_t max_bytes);
// GET (or POST when request.post) streaming into `sink`.
HttpResult http_get_stream(const HttpRequest& request, const HttpSink& sink);

}  // namespace kiln
