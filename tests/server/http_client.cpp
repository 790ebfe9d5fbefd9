#include "http_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <memory>

namespace kiln::test {

namespace {

struct Transfer {
  HttpResponse response;
  const std::function<bool(std::string_view)>* on_data = nullptr;
  std::string upload;
  size_t upload_offset = 0;
};

size_t on_body(char* data, size_t, size_t size, void* user) {
  auto* t = static_cast<Transfer*>(user);
  std::string_view piece(data, size);
  t->response.body.append(piece);
  if (t->on_data && !(*t->on_data)(piece)) return 0;  // curl then aborts the transfer and closes the socket
  return size;
}

size_t on_header(char* data, size_t, size_t size, void* user) {
  auto* t = static_cast<Transfer*>(user);
  std::string line(data, size);
  if (auto colon = line.find(':'); colon != std::string::npos) {
    std::string name = line.substr(0, colon);
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    std::string value = line.substr(colon + 1);
    while (!value.empty() && std::isspace(static_cast<unsigned char>(value.front()))) value.erase(0, 1);
    while (!value.empty() && std::isspace(static_cast<unsigned char>(value.back()))) value.pop_back();
    t->response.headers[name] = value;
  }
  return size;
}

size_t on_upload(char* buffer, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t n = std::min(size * count, t->upload.size() - t->upload_offset);
  std::copy_n(t->upload.data() + t->upload_offset, n, buffer);
  t->upload_offset += n;
  return n;
}

HttpResponse perform(const std::string& url, const std::string& method, const std::string* body, bool chunked,
                     const std::vector<std::string>& headers, const std::function<bool(std::string_view)>* on_data,
                     long timeout_ms = 120000) {
  Transfer t;
  t.on_data = on_data;
  std::unique_ptr<CURL, void (*)(CURL*)> curl(curl_easy_init(), curl_easy_cleanup);
  curl_slist* list = nullptr;
  for (const auto& h : headers) list = curl_slist_append(list, h.c_str());
  curl_easy_setopt(curl.get(), CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl.get(), CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl.get(), CURLOPT_TIMEOUT_MS, timeout_ms);
  curl_easy_setopt(curl.get(), CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(curl.get(), CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(curl.get(), CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(curl.get(), CURLOPT_HEADERDATA, &t);
  if (body) {
    if (chunked) {
      t.upload = *body;
      list = curl_slist_append(list, "Transfer-Encoding: chunked");
      curl_easy_setopt(curl.get(), CURLOPT_POST, 1L);
      curl_easy_setopt(curl.get(), CURLOPT_READFUNCTION, on_upload);
      curl_easy_setopt(curl.get(), CURLOPT_READDATA, &t);
    } else {
      curl_easy_setopt(curl.get(), CURLOPT_POSTFIELDS, body->data());
      curl_easy_setopt(curl.get(), CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body->size()));
    }
    list = curl_slist_append(list, "Content-Type: application/json");
    list = curl_slist_append(list, "Expect:");  // no 100-continue round trip
  }
  if (method != "GET" && method != "POST") curl_easy_setopt(curl.get(), CURLOPT_CUSTOMREQUEST, method.c_str());
  curl_easy_setopt(curl.get(), CURLOPT_HTTPHEADER, list);
  const CURLcode code = curl_easy_perform(curl.get());
  curl_slist_free_all(list);
  if (code != CURLE_OK) t.response.curl_error = curl_easy_strerror(code);
  curl_easy_getinfo(curl.get(), CURLINFO_RESPONSE_CODE, &t.response.status);
  return std::move(t.response);
}

}  // namespace

std::string HttpResponse::header(const std::string& name) const {
  auto it = headers.find(name);
  return it == headers.end() ? std::string() : it->second;
}

HttpClient::HttpClient(std::string origin) : origin_(std::move(origin)) {}

HttpResponse HttpClient::get(const std::string& path, const std::vector<std::string>& headers) const {
  return perform(origin_ + path, "GET", nullptr, false, headers, nullptr);
}

HttpResponse HttpClient::post(const std::string& path, const std::string& body,
                              const std::vector<std::string>& headers) const {
  return perform(origin_ + path, "POST", &body, false, headers, nullptr);
}

HttpResponse HttpClient::post_chunked(const std::string& path, const std::string& body) const {
  return perform(origin_ + path, "POST", &body, true, {}, nullptr);
}

HttpResponse HttpClient::post_streaming(const std::string& path, const std::string& body,
                                        const std::function<bool(std::string_view)>& on_data,
                                        const std::vector<std::string>& headers) const {
  return perform(origin_ + path, "POST", &body, false, headers, &on_data);
}

HttpResponse HttpClient::post_with_timeout(const std::string& path, const std::string& body, long timeout_ms) const {
  return perform(origin_ + path, "POST", &body, false, {}, nullptr, timeout_ms);
}

HttpResponse HttpClient::request(const std::string& method, const std::string& path,
                                 const std::vector<std::string>& headers) const {
  return perform(origin_ + path, method, nullptr, false, headers, nullptr);
}

std::vector<std::string> sse_payloads(const std::string& stream) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < stream.size()) {
    size_t end = stream.find("\n\n", pos);
    if (end == std::string::npos) break;  // an unfinished event is not an event
    std::string event = stream.substr(pos, end - pos);
    if (event.rfind("data: ", 0) == 0) out.push_back(event.substr(6));
    pos = end + 2;
  }
  return out;
}

long resident_kib() {
  std::ifstream status("/proc/self/status");
  std::string key;
  while (status >> key) {
    if (key == "VmRSS:") {
      long kib = 0;
      status >> kib;
      return kib;
    }
    status.ignore(1 << 20, '\n');
  }
  return -1;
}

}  // namespace kiln::test
