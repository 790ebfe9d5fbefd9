// Shared set-up for the server tests: the tiny fixture model, a server on a free loopback port,
// request bodies and response parsing (with Qt's JSON, independent of the server's own JSON code).
#pragma once

#include <QJsonArray>
#include <QJsonObject>
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "http_client.h"
#include "kiln/engine.h"
#include "server/server.h"

namespace kiln::test {

std::string tiny_model_path();  // the copy under tests/data/fixtures
// CPU, F32: the same load for the server and for the tests' own reference engine.
LoadOptions tiny_load_options(int context_length = 0);

struct RunningServer {
  std::shared_ptr<server::EngineThread> engine_thread;
  std::unique_ptr<server::Server> server;
  std::unique_ptr<HttpClient> client;
};
// Starts `kiln serve`'s own arrangement (EngineThread + Server) on 127.0.0.1 and a free port.
std::unique_ptr<RunningServer> start_tiny_server(server::ServerOptions options, int context_length = 0);
// The same over any model load.
std::unique_ptr<RunningServer> start_server(const LoadOptions& load, server::ServerOptions options);

// The tiny model's random weights favour a few tokens (greedy chat is all newlines). These settings,
// sent as OpenAI fields plus Kiln's top_k/min_p/repeat_penalty, make its text varied enough that
// mixed-up or truncated answers show.
QJsonObject varied_sampling(int seed);
SamplingParams varied_sampling_params(int seed);

// {"model": "tiny", "messages": [{"role": "user", "content": prompt}], ...extra}
std::string chat_body(const std::string& prompt, const QJsonObject& extra = {});
// {"model": "tiny", "prompt": prompt, ...extra}
std::string completion_body(const std::string& prompt, const QJsonObject& extra = {});

// The body parsed as a JSON object; an empty object when it is not one.
QJsonObject json_object(const std::string& body);
// The text a chat or completions response carries (message.content or text).
std::string response_text(const QJsonObject& response);

// A stream's text, finish reason and usage put back together from its events.
struct StreamResult {
  std::string text;
  std::string finish_reason;     // the one chunk that carries it
  int finish_chunks = 0;         // how many chunks carried a finish_reason
  bool role_first = false;       // chat: the first chunk's delta has role "assistant"
  bool done_last = false;        // "[DONE]" is the last event
  QJsonObject usage;             // from the usage chunk, when asked for
  QJsonObject error;             // an error event, if any
  int events = 0;
};
StreamResult read_stream(const std::string& stream);

// GET /health as JSON.
QJsonObject health(const HttpClient& c);
// Polls /health until `done` holds for it, or the time is up.
bool wait_for_health(const HttpClient& c, const std::function<bool(const QJsonObject&)>& done,
                     std::chrono::milliseconds limit = std::chrono::seconds(10));

}  // namespace kiln::test
