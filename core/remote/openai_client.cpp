// Requests go through kiln_download's libcurl client; answers are read with nlohmann::json.
// Nothing is thrown inside curl's callbacks: a problem found there is noted, the transfer is
// aborted by returning false, and the error is thrown once curl has returned.
#include "remote/openai_client.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <climits>
#include <nlohmann/json.hpp>

#include "common/base64.h"
#include "download/http_client.h"
#include "remote/sse_reader.h"

namespace kiln::remote {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;
using Kind = RemoteError::Kind;

constexpr size_t kMaxModelList = 4 << 20;
constexpr size_t kKeptRawBytes = 64 << 10;  // of an answer that is not an event stream, for its error

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// At most `limit` bytes of `text` on one line, cut on a UTF-8 character boundary: a peer's words
// inside our one-line messages.
std::string shortened(std::string_view text, size_t limit = 200) {
  std::string out;
  for (char c : text) out += (c == '\n' || c == '\r' || c == '\t') ? ' ' : c;
  while (!out.empty() && out.back() == ' ') out.pop_back();
  if (out.size() <= limit) return out;
  size_t cut = limit;
  while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;
  return out.substr(0, cut) + "…";
}

// The server's own words in an error body. OpenAI and Kiln: {"error": {"message": …}}; Ollama and
// llama.cpp variants: {"error": "…"}; vLLM: {"message": …}; FastAPI: {"detail": …}.
std::string server_message(const std::string& body) {
  const json doc = json::parse(body, nullptr, false);
  if (!doc.is_discarded() && doc.is_object()) {
    if (auto e = doc.find("error"); e != doc.end()) {
      if (e->is_string()) return shortened(e->get<std::string>());
      if (e->is_object())
        if (auto m = e->find("message"); m != e->end() && m->is_string()) return shortened(m->get<std::string>());
    }
    for (const char* key : {"message", "detail"})
      if (auto m = doc.find(key); m != doc.end() && m->is_string()) return shortened(m->get<std::string>());
  }
  return shortened(body);
}

std::string with_detail(std::string sentence, const std::string& detail) {
  return detail.empty() ? sentence : sentence + ": " + detail;
}

[[noreturn]] void throw_unreachable(const HttpResult& r, const std::string& url) {
  throw RemoteError(Kind::Unreachable, with_detail("cannot reach " + url, r.curl_error), 0, r.curl_error);
}

// A refusal (any status outside 2xx), by kind.
[[noreturn]] void throw_refusal(const HttpResult& r, const std::string& url, bool sent_key) {
  const std::string detail = server_message(r.body);
  const std::string status = "HTTP " + std::to_string(r.status);
  if (r.status == 401 || r.status == 403) {
    const std::string what = sent_key ? "the endpoint refused the API key (" + status + ")"
                                      : "the endpoint needs an API key (" + status + ")";
    throw RemoteError(Kind::Unauthorized, with_detail(what, detail), r.status, detail);
  }
  if (r.status == 404)
    throw RemoteError(Kind::NotFound, with_detail(url + " was not found (" + status + ")", detail), r.status, detail);
  throw RemoteError(Kind::ServerError, with_detail("the endpoint answered " + status, detail), r.status, detail);
}

const char* role_name(Role role) {
  switch (role) {
    case Role::System: return "system";
    case Role::Assistant: return "assistant";
    case Role::User: break;
  }
  return "user";
}

StopReason stop_reason_of(const std::string& finish_reason) {
  return finish_reason == "length" ? StopReason::MaxTokens : StopReason::EndOfTurn;
}

// What the stream said so far.
struct StreamState {
  Clock::time_point start = Clock::now();
  bool done = false;                 // "[DONE]" arrived
  std::string finish_reason;         // of choice 0
  int pieces = 0;                    // chunks that carried text
  int prompt_tokens = -1, completion_tokens = -1;  // from a usage chunk
  std::vector<double> piece_times_ms;
  bool stopped = false;              // on_text asked to stop
  std::string bad_event;             // an event that is not JSON
  std::string error_event;           // an error the server sent inside the stream
};

double millis_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// One chunk of chat.completion.chunk. Returns false to stop reading.
bool take_chunk(StreamState& st, const json& chunk, const TokenCallback& on_text) {
  if (!chunk.is_object()) {
    st.bad_event = chunk.dump();
    return false;
  }
  if (auto e = chunk.find("error"); e != chunk.end() && !e->is_null()) {
    st.error_event = server_message(chunk.dump());
    return false;
  }
  if (auto u = chunk.find("usage"); u != chunk.end() && u->is_object()) {
    if (auto p = u->find("prompt_tokens"); p != u->end() && p->is_number_integer()) st.prompt_tokens = p->get<int>();
    if (auto c = u->find("completion_tokens"); c != u->end() && c->is_number_integer())
      st.completion_tokens = c->get<int>();
  }
  auto choices = chunk.find("choices");
  if (choices == chunk.end() || !choices->is_array()) return true;  // a usage-only chunk has []
  for (const json& choice : *choices) {
    if (!choice.is_object() || choice.value("index", 0) != 0) continue;
    if (auto d = choice.find("delta"); d != choice.end() && d->is_object()) {
      if (auto c = d->find("content"); c != d->end() && c->is_string() && !c->get_ref<const std::string&>().empty()) {
        st.piece_times_ms.push_back(millis_since(st.start));
        ++st.pieces;
        if (!on_text(c->get_ref<const std::string&>())) {
          st.stopped = true;
          return false;
        }
      }
    }
    if (auto f = choice.find("finish_reason"); f != choice.end() && f->is_string()) st.finish_reason = f->get<std::string>();
  }
  return true;
}

GenerationStats stats_of(const StreamState& st, StopReason reason) {
  GenerationStats stats;
  stats.total_ms = millis_since(st.start);
  stats.prompt_tokens = std::max(st.prompt_tokens, 0);
  // The usage chunk counts tokens; without one, a chunk is about a token on every server we know.
  stats.generated_tokens = st.completion_tokens >= 0 ? st.completion_tokens : st.pieces;
  stats.token_times_ms = st.piece_times_ms;
  if (!st.piece_times_ms.empty()) {
    stats.time_to_first_token_ms = st.piece_times_ms.front();
    const double decode_ms = st.piece_times_ms.back() - st.piece_times_ms.front();
    if (stats.generated_tokens > 1 && decode_ms > 0) stats.decode_tokens_per_s = (stats.generated_tokens - 1) * 1000.0 / decode_ms;
  }
  stats.stop_reason = reason;
  return stats;
}

// A server that ignored "stream": true and answered one chat.completion: its text, if that is what it is.
bool take_whole_answer(StreamState& st, const std::string& raw, const TokenCallback& on_text) {
  const json doc = json::parse(raw, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return false;
  auto choices = doc.find("choices");
  if (choices == doc.end() || !choices->is_array() || choices->empty()) return false;
  const json& first = choices->front();
  if (!first.is_object()) return false;
  auto message = first.find("message");
  if (message == first.end() || !message->is_object()) return false;
  const json content = message->value("content", json());
  if (!content.is_string()) return false;
  if (!content.get_ref<const std::string&>().empty()) {
    st.piece_times_ms.push_back(millis_since(st.start));
    ++st.pieces;
    st.stopped = !on_text(content.get_ref<const std::string&>());
  }
  st.finish_reason = first.value("finish_reason", std::string("stop"));
  st.done = true;
  return true;
}

}  // namespace

std::string api_root(const std::string& base_url) {
  std::string url;
  for (char c : base_url)
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') url += c;
  if (url.empty()) throw RemoteError(Kind::BadUrl, "no endpoint URL given");
  const size_t scheme_end = url.find("://");
  if (scheme_end == std::string::npos) {
    url = "http://" + url;
  } else {
    std::string scheme = url.substr(0, scheme_end);
    for (char& c : scheme) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (scheme != "http" && scheme != "https")
      throw RemoteError(Kind::BadUrl, "'" + shortened(base_url) + "' is not an http:// or https:// URL");
    url = scheme + url.substr(scheme_end);
  }
  while (!url.empty() && url.back() == '/') url.pop_back();
  for (std::string_view pasted : {"/chat/completions", "/models"})
    if (ends_with(url, pasted)) url.resize(url.size() - pasted.size());
  while (!url.empty() && url.back() == '/') url.pop_back();
  const size_t host_start = url.find("://") + 3;
  if (host_start >= url.size() || url[host_start] == '/')
    throw RemoteError(Kind::BadUrl, "'" + shortened(base_url) + "' names no host");
  if (url.find('/', host_start) == std::string::npos) url += "/v1";
  return url;
}

std::vector<RemoteModel> list_models(const Endpoint& endpoint, std::stop_token cancel) {
  HttpRequest request;
  request.url = api_root(endpoint.base_url) + "/models";
  request.token = endpoint.api_key;
  request.cancel = cancel;
  request.accept = "application/json";
  const HttpResult r = http_get_text(request, kMaxModelList);
  if (r.cancelled) return {};
  if (r.status == 0) throw_unreachable(r, request.url);
  if (r.status < 200 || r.status >= 300) throw_refusal(r, request.url, !endpoint.api_key.empty());
  if (r.curl_code != 0)
    throw RemoteError(Kind::EndedEarly, with_detail("the model list from " + request.url + " stopped early", r.curl_error),
                      r.status, r.curl_error);
  const json doc = json::parse(r.body, nullptr, false);
  auto data = doc.is_object() ? doc.find("data") : doc.end();
  if (doc.is_discarded() || !doc.is_object() || data == doc.end() || !data->is_array())
    throw RemoteError(Kind::BadResponse,
                      "the answer from " + request.url + " is not a model list ({\"data\": [...]}): " + shortened(r.body, 80),
                      r.status, shortened(r.body, 80));
  std::vector<RemoteModel> models;
  for (const json& m : *data) {
    if (!m.is_object() || !m.contains("id") || !m["id"].is_string()) continue;
    const auto owner = m.find("owned_by");
    models.push_back({m["id"].get<std::string>(), owner != m.end() && owner->is_string() ? owner->get<std::string>() : ""});
  }
  return models;
}

std::string chat_request_body(const std::string& model, const std::vector<ChatMessage>& messages,
                              const GenerateOptions& options) {
  json body = {{"model", model}, {"stream", true}, {"stream_options", {{"include_usage", true}}}};
  json list = json::array();
  for (const ChatMessage& m : messages) {
    if (m.images.empty()) {
      list.push_back({{"role", role_name(m.role)}, {"content", m.content}});
      continue;
    }
    // Images go as OpenAI's content parts, each a data: URL, before the text (as Gemma sees them).
    json parts = json::array();
    for (const Image& image : m.images) {
      const std::string mime = image_mime_type(image.bytes);
      if (mime.empty()) throw Error(image.name + ": not a PNG, JPEG or WebP image");
      parts.push_back({{"type", "image_url"},
                       {"image_url", {{"url", "data:" + mime + ";base64," + encode_base64(image.bytes)}}}});
    }
    if (!m.content.empty()) parts.push_back({{"type", "text"}, {"text", m.content}});
    list.push_back({{"role", role_name(m.role)}, {"content", std::move(parts)}});
  }
  body["messages"] = std::move(list);
  if (options.max_tokens > 0 && options.max_tokens < INT_MAX) body["max_tokens"] = options.max_tokens;
  if (!options.stop.empty()) body["stop"] = options.stop;
  const SamplingChoice& s = options.sampling;
  if (s.temperature) body["temperature"] = *s.temperature;
  if (s.top_p) body["top_p"] = *s.top_p;
  if (s.seed && *s.seed != 0) body["seed"] = *s.seed;  // 0 is Kiln's "random": the server's default
  if (s.top_k) body["top_k"] = *s.top_k;
  if (s.min_p) body["min_p"] = *s.min_p;
  if (s.repeat_penalty) body["repeat_penalty"] = *s.repeat_penalty;
  return body.dump();
}

GenerationStats chat(const Endpoint& endpoint, const std::string& model, const std::vector<ChatMessage>& messages,
                     const GenerateOptions& options, const TokenCallback& on_text) {
  HttpRequest request;
  request.url = api_root(endpoint.base_url) + "/chat/completions";
  request.token = endpoint.api_key;
  request.cancel = options.cancel;
  request.post = true;
  request.body = chat_request_body(model, messages, options);
  request.accept = "text/event-stream";
  request.stall_seconds = 600;  // a big model reading a long prompt says nothing for a while

  StreamState st;
  std::string raw;  // the start of the answer, in case it is not an event stream
  SseReader reader([&](const std::string& data) {
    if (data == "[DONE]") {
      st.done = true;
      return true;
    }
    const json chunk = json::parse(data, nullptr, false);
    if (chunk.is_discarded()) {
      st.bad_event = data;
      return false;
    }
    return take_chunk(st, chunk, on_text);
  });
  HttpSink sink;
  sink.write = [&](const char* data, size_t bytes) {
    if (reader.events() == 0 && raw.size() < kKeptRawBytes) raw.append(data, std::min(bytes, kKeptRawBytes - raw.size()));
    return reader.feed(std::string_view(data, bytes));
  };
  const HttpResult r = http_get_stream(request, sink);
  // Cancelled only when the stop cut the transfer: one asked for after the last byte came is too late.
  if ((r.cancelled && r.curl_code != 0) || st.stopped) return stats_of(st, StopReason::Cancelled);
  if (r.status == 0) throw_unreachable(r, request.url);
  if (r.status < 200 || r.status >= 300) throw_refusal(r, request.url, !endpoint.api_key.empty());
  if (r.curl_code == 0 && st.bad_event.empty() && st.error_event.empty()) reader.finish();
  if (st.stopped) return stats_of(st, StopReason::Cancelled);
  if (!st.bad_event.empty())
    throw RemoteError(Kind::BadResponse, "the endpoint sent a stream event that is not a JSON object: " + shortened(st.bad_event, 80),
                      r.status, shortened(st.bad_event, 80));
  if (!st.error_event.empty())
    throw RemoteError(Kind::ServerError, "the endpoint stopped the answer with an error: " + st.error_event, r.status,
                      st.error_event);
  if (r.curl_code != 0)
    throw RemoteError(Kind::EndedEarly,
                      with_detail("the answer stopped after " + std::to_string(st.pieces) + " pieces", r.curl_error),
                      r.status, r.curl_error);
  if (reader.events() == 0 && !take_whole_answer(st, raw, on_text))
    throw RemoteError(Kind::BadResponse, "the endpoint did not answer with an event stream: " + shortened(raw, 80), r.status,
                      shortened(raw, 80));
  if (st.stopped) return stats_of(st, StopReason::Cancelled);
  if (!st.done && st.finish_reason.empty())
    throw RemoteError(Kind::EndedEarly,
                      "the stream ended after " + std::to_string(st.pieces) + " pieces, before the answer did (no finish_reason, no [DONE])",
                      r.status);
  return stats_of(st, stop_reason_of(st.finish_reason));
}

}  // namespace kiln::remote
