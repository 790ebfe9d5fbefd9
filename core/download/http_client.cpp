// libcurl easy interface, one handle per request (downloads are one at a time; no shared state).
#include "download/http_client.h"

#include <curl/curl.h>

#include <strings.h>

#include <cstring>
#include <memory>
#include <mutex>

#include "kiln/types.h"

namespace kiln {
namespace {

constexpr size_t kMaxErrorBody = 64 * 1024;

void global_init_once() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct Transfer {
  const HttpRequest* request = nullptr;
  const HttpSink* sink = nullptr;   // nullptr: collect into result.body
  size_t max_bytes = 0;
  CURL* curl = nullptr;
  HttpResult result;
  long seen_status = -1;            // status whose body is arriving
  uint64_t received = 0;
  bool too_large = false;
};

bool is_success(long status) { return status >= 200 && status < 300; }

// "Name: value\r\n" -> value when the name matches, case-insensitive.
bool header_value(const std::string& line, const char* name, std::string& out) {
  const size_t n = std::strlen(name);
  if (line.size() <= n || line[n] != ':' || strncasecmp(line.c_str(), name, n) != 0) return false;
  size_t b = n + 1, e = line.size();
  while (b < e && (line[b] == ' ' || line[b] == '\t')) ++b;
  while (e > b && (line[e - 1] == '\r' || line[e - 1] == '\n' || line[e - 1] == ' ')) --e;
  out = line.substr(b, e - b);
  return true;
}

// Failures of the network rather than of the request: another attempt may well succeed.
bool transient_code(CURLcode code) {
  switch (code) {
    case CURLE_COULDNT_RESOLVE_HOST: case CURLE_COULDNT_CONNECT: case CURLE_OPERATION_TIMEDOUT:
    case CURLE_PARTIAL_FILE: case CURLE_RECV_ERROR: case CURLE_SEND_ERROR: case CURLE_GOT_NOTHING:
    case CURLE_HTTP2: case CURLE_HTTP2_STREAM: case CURLE_SSL_CONNECT_ERROR:
      return true;
    default:
      return false;
  }
}

size_t on_header(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const std::string line(data, size * count);
  if (line.rfind("HTTP/", 0) == 0) {
    // A new response (after a redirect) starts: only the final one's headers count.
    t->result.next_link.clear();
    t->result.error_code.clear();
    t->result.error_message.clear();
    t->result.retry_after.clear();
    t->result.rate_limit.clear();
  } else if (header_value(line, "X-Error-Code", t->result.error_code) ||
             header_value(line, "X-Error-Message", t->result.error_message) ||
             header_value(line, "Retry-After", t->result.retry_after) ||
             header_value(line, "RateLimit", t->result.rate_limit)) {
  } else if (line.size() > 5 && (line[0] == 'L' || line[0] == 'l') && line.compare(1, 4, "ink:") == 0) {
    // Link: <url>; rel="next"
    const size_t open = line.find('<'), close = line.find('>');
    if (open != std::string::npos && close != std::string::npos && close > open &&
        line.find("rel=\"next\"", close) != std::string::npos)
      t->result.next_link = line.substr(open + 1, close - open - 1);
  }
  return size * count;
}

size_t on_body(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t n = size * count;
  long status = 0;
  curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &status);
  if (status >= 300 && status < 400) return n;  // body of a redirect being followed
  if (status != t->seen_status) {
    t->seen_status = status;
    t->received = 0;
    if (t->sink && t->sink->on_status) t->sink->on_status(status);
  }
  if (t->request->cancel.stop_requested()) return 0;  // aborts with CURLE_WRITE_ERROR
  t->received += n;
  if (t->sink && is_success(status)) {
    if (!t->sink->write(data, n)) return 0;
    if (t->sink->on_progress) t->sink->on_progress(t->received);
    return n;
  }
  const size_t limit = t->sink ? kMaxErrorBody : t->max_bytes;
  if (t->result.body.size() + n > limit) {
    t->too_large = true;
    return 0;
  }
  t->result.body.append(data, n);
  return n;
}

int on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* t = static_cast<Transfer*>(user);
  return t->request->cancel.stop_requested() ? 1 : 0;  // non-zero aborts the transfer
}

HttpResult perform(const HttpRequest& request, const HttpSink* sink, size_t max_bytes) {
  global_init_once();
  std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> curl(curl_easy_init(), curl_easy_cleanup);
  if (!curl) throw Error("cannot start an HTTP transfer (curl_easy_init failed)");
  Transfer t;
  t.request = &request;
  t.sink = sink;
  t.max_bytes = max_bytes;
  t.curl = curl.get();
  char error[CURL_ERROR_SIZE] = {0};

  curl_slist* headers = nullptr;
  if (!request.token.empty()) headers = curl_slist_append(headers, ("Authorization: Bearer " + request.token).c_str());
  headers = curl_slist_append(headers, "User-Agent: kiln/" KILN_DOWNLOAD_VERSION);
  if (request.post) headers = curl_slist_append(headers, ("Content-Type: " + request.content_type).c_str());
  if (!request.accept.empty()) headers = curl_slist_append(headers, ("Accept: " + request.accept).c_str());
  std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)> header_list(headers, curl_slist_free_all);
  const std::string range = std::to_string(request.range_start) + "-" +
                            (request.range_end > 0 ? std::to_string(request.range_end) : std::string());

  CURL* c = curl.get();
  curl_easy_setopt(c, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(c, CURLOPT_MAXREDIRS, 10L);
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, request.connect_seconds);
  // A stalled transfer (under 1 byte/s for stall_seconds) fails instead of hanging forever.
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, request.stall_seconds);
  if (request.post) {
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, request.body.data());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
  }
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &t);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
  curl_easy_setopt(c, CURLOPT_XFERINFODATA, &t);
  curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  if (request.range_start > 0 || request.range_end > 0) curl_easy_setopt(c, CURLOPT_RANGE, range.c_str());

  const CURLcode code = curl_easy_perform(c);
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &t.result.status);
  t.result.curl_code = code;
  t.result.cancelled = request.cancel.stop_requested();
  if (code != CURLE_OK) {
    t.result.curl_error = error[0] ? error : curl_easy_strerror(code);
    t.result.transient = !t.result.cancelled && !t.too_large && transient_code(code);
    if (t.too_large) t.result.curl_error = "response larger than " + std::to_string(t.sink ? kMaxErrorBody : max_bytes) + " bytes";
  }
  return t.result;
}

}  // namespace

HttpResult http_get_text(const HttpRequest& request, size_t max_bytes) { return perform(request, nullptr, max_bytes); }

HttpResult http_get_stream(const HttpRequest& request, const HttpSink& sink) { return perform(request, &sink, 0); }

}  // namespace kiln
