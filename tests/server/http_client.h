// A small libcurl client for the server tests: a real HTTP client over loopback, nothing mocked.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::test {

struct HttpResponse {
  long status = 0;                             // 0: no response (connection refused, aborted)
  std::string body;
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string curl_error;                      // empty when the transfer completed
  std::string header(const std::string& name) const;
};

class HttpClient {
 public:
  explicit HttpClient(std::string origin);  // "http://127.0.0.1:PORT"

  HttpResponse get(const std::string& path, const std::vector<std::string>& headers = {}) const;
  HttpResponse post(const std::string& path, const std::string& body,
                    const std::vector<std::string>& headers = {}) const;
  // Sends the body with chunked transfer encoding (no Content-Length), as a streaming uploader would.
  HttpResponse post_chunked(const std::string& path, const std::string& body) const;
  // POST and feed the response body to on_data as it arrives; returning false hangs up at once.
  HttpResponse post_streaming(const std::string& path, const std::string& body,
                              const std::function<bool(std::string_view)>& on_data,
                              const std::vector<std::string>& headers = {}) const;
  // POST that gives up after `timeout_ms` (closing the connection), as an impatient client does.
  HttpResponse post_with_timeout(const std::string& path, const std::string& body, long timeout_ms) const;
  HttpResponse request(const std::string& method, const std::string& path, const std::vector<std::string>& headers = {}) const;

 private:
  std::string origin_;
};

// The "data: …" payloads of a server-sent event stream, in order (the "[DONE]" marker included).
std::vector<std::string> sse_payloads(const std::string& stream);

// Resident memory of this process in KiB (VmRSS).
long resident_kib();

}  // namespace kiln::test
