#include "server_fixture.h"

#include <QJsonDocument>
#include <thread>

namespace kiln::test {

std::string tiny_model_path() { return std::string(KILN_TEST_DATA) + "/fixtures/tiny-gemma3-a"; }

LoadOptions tiny_load_options(int context_length) {
  LoadOptions o;
  o.path = tiny_model_path();
  o.precision = Precision::F32;
  o.backend = BackendKind::Cpu;
  o.context_length = context_length;
  o.threads = 1;  // the suite shares two cores; a tiny model gains nothing from more
  return o;
}

std::unique_ptr<RunningServer> start_tiny_server(server::ServerOptions options, int context_length) {
  return start_server(tiny_load_options(context_length), std::move(options));
}

std::unique_ptr<RunningServer> start_server(const LoadOptions& load, server::ServerOptions options) {
  auto running = std::make_unique<RunningServer>();
  running->engine_thread = std::make_shared<server::EngineThread>(Engine::load(load));
  options.host = "127.0.0.1";
  options.port = 0;
  running->server = std::make_unique<server::Server>(options, running->engine_thread->model_info(),
                                                     running->engine_thread);
  running->server->start();
  running->client = std::make_unique<HttpClient>("http://127.0.0.1:" + std::to_string(running->server->port()));
  return running;
}

QJsonObject varied_sampling(int seed) {
  return {{"temperature", 1.5}, {"top_p", 1}, {"top_k", 0}, {"min_p", 0}, {"repeat_penalty", 1.5}, {"seed", seed}};
}

SamplingParams varied_sampling_params(int seed) {
  SamplingParams p;
  p.temperature = 1.5f;
  p.top_p = 1;
  p.top_k = 0;
  p.min_p = 0;
  p.repeat_penalty = 1.5f;
  p.seed = uint64_t(seed);
  return p;
}

namespace {
std::string with_extra(QJsonObject body, const QJsonObject& extra) {
  for (auto it = extra.begin(); it != extra.end(); ++it) body.insert(it.key(), it.value());
  return QJsonDocument(body).toJson(QJsonDocument::Compact).toStdString();
}
}  // namespace

std::string chat_body(const std::string& prompt, const QJsonObject& extra) {
  QJsonObject message{{"role", "user"}, {"content", QString::fromStdString(prompt)}};
  return with_extra({{"model", "tiny"}, {"messages", QJsonArray{message}}}, extra);
}

std::string completion_body(const std::string& prompt, const QJsonObject& extra) {
  return with_extra({{"model", "tiny"}, {"prompt", QString::fromStdString(prompt)}}, extra);
}

QJsonObject json_object(const std::string& body) {
  return QJsonDocument::fromJson(QByteArray::fromStdString(body)).object();
}

std::string response_text(const QJsonObject& response) {
  const QJsonObject choice = response["choices"].toArray().at(0).toObject();
  if (choice.contains("message")) return choice["message"].toObject()["content"].toString().toStdString();
  return choice["text"].toString().toStdString();
}

StreamResult read_stream(const std::string& stream) {
  StreamResult r;
  const auto payloads = sse_payloads(stream);
  r.events = int(payloads.size());
  for (size_t i = 0; i < payloads.size(); ++i) {
    if (payloads[i] == "[DONE]") {
      r.done_last = i + 1 == payloads.size();
      continue;
    }
    const QJsonObject chunk = json_object(payloads[i]);
    if (chunk.contains("error")) r.error = chunk["error"].toObject();
    if (chunk["usage"].isObject()) r.usage = chunk["usage"].toObject();
    const QJsonArray choices = chunk["choices"].toArray();
    if (choices.isEmpty()) continue;
    const QJsonObject choice = choices.at(0).toObject();
    if (choice.contains("delta")) {
      const QJsonObject delta = choice["delta"].toObject();
      if (i == 0) r.role_first = delta["role"].toString() == "assistant";
      r.text += delta["content"].toString().toStdString();
    } else {
      r.text += choice["text"].toString().toStdString();
    }
    if (choice["finish_reason"].isString()) {
      r.finish_reason = choice["finish_reason"].toString().toStdString();
      ++r.finish_chunks;
    }
  }
  return r;
}

QJsonObject health(const HttpClient& c) { return json_object(c.get("/health").body); }

bool wait_for_health(const HttpClient& c, const std::function<bool(const QJsonObject&)>& done,
                     std::chrono::milliseconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    if (done(health(c))) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

}  // namespace kiln::test
