// The OpenAI-compatible server over loopback with libcurl: every endpoint, streaming against
// non-streaming, the answers against the engine itself, and every error status a client can meet.
#include <curl/curl.h>

#include <QFile>
#include <QJsonDocument>
#include <QTemporaryDir>
#include <QtTest>
#include <map>
#include <set>
#include <sstream>

#include "server_fixture.h"

using namespace kiln;
using namespace kiln::test;

namespace {

constexpr int kContext = 256;  // small, so a prompt longer than the context is cheap to build

struct Reference {
  std::string text;
  GenerationStats stats;
};

}  // namespace

class ServerApiTest : public QObject {
  Q_OBJECT

  std::unique_ptr<RunningServer> s_;
  std::unique_ptr<Engine> reference_;  // loaded like the server's: what the server must reproduce

  const HttpClient& client() const { return *s_->client; }

  Reference reference_chat(const std::string& prompt, const SamplingParams& sampling, int max_tokens,
                           std::vector<std::string> stop = {}) {
    GenerateOptions o;
    o.sampling = SamplingChoice::exactly(sampling);
    o.max_tokens = max_tokens;
    o.stop = std::move(stop);
    Reference r;
    r.stats = reference_->chat({{Role::User, prompt}}, o, [&](std::string_view t) { r.text += t; return true; });
    return r;
  }
  Reference reference_completion(const std::string& prompt, const SamplingParams& sampling, int max_tokens) {
    GenerateOptions o;
    o.sampling = SamplingChoice::exactly(sampling);
    o.max_tokens = max_tokens;
    Reference r;
    r.stats = reference_->generate(prompt, o, [&](std::string_view t) { r.text += t; return true; });
    return r;
  }
  static SamplingParams greedy() {
    SamplingParams p;
    p.temperature = 0;
    return p;
  }
  // What the server uses for fields a request leaves out: the engine's defaults.
  static SamplingParams seeded(float temperature, uint64_t seed) {
    SamplingParams p;
    p.temperature = temperature;
    p.seed = seed;
    return p;
  }
  static void check_error(const HttpResponse& r, long status, const QString& type, const QString& code = {},
                          const QString& param = {}) {
    QCOMPARE(r.status, status);
    QVERIFY2(r.header("content-type").find("application/json") == 0, r.header("content-type").c_str());
    const QJsonObject error = json_object(r.body)["error"].toObject();
    QVERIFY2(!error["message"].toString().isEmpty(), r.body.c_str());
    QCOMPARE(error["type"].toString(), type);
    // OpenAI's shape: all four keys are present, param and code null when they do not apply.
    QVERIFY(error.contains("param") && error.contains("code"));
    if (code.isEmpty()) QVERIFY(error["code"].isNull()); else QCOMPARE(error["code"].toString(), code);
    if (param.isEmpty()) QVERIFY(error["param"].isNull()); else QCOMPARE(error["param"].toString(), param);
  }

 private slots:
  void initTestCase() {
    curl_global_init(CURL_GLOBAL_DEFAULT);
    s_ = start_tiny_server({}, kContext);
    reference_ = Engine::load(tiny_load_options(kContext));
  }
  void cleanupTestCase() {
    s_.reset();
    curl_global_cleanup();
  }

  void health_needs_no_key_and_names_the_model() {
    const HttpResponse r = client().get("/health");
    QCOMPARE(r.status, 200L);
    const QJsonObject health = json_object(r.body);
    QCOMPARE(health["status"].toString(), QString("ok"));
    QCOMPARE(health["model"].toString(), QString("tiny-gemma3-a"));
    QCOMPARE(health["running"].toInt(), 0);
  }

  void models_lists_the_loaded_model() {
    const HttpResponse list = client().get("/v1/models");
    QCOMPARE(list.status, 200L);
    const QJsonObject body = json_object(list.body);
    QCOMPARE(body["object"].toString(), QString("list"));
    const QJsonArray data = body["data"].toArray();
    QCOMPARE(data.size(), 1);
    QCOMPARE(data[0].toObject()["id"].toString(), QString("tiny-gemma3-a"));
    QCOMPARE(data[0].toObject()["object"].toString(), QString("model"));

    const HttpResponse one = client().get("/v1/models/tiny-gemma3-a");
    QCOMPARE(one.status, 200L);
    QCOMPARE(json_object(one.body)["id"].toString(), QString("tiny-gemma3-a"));
    check_error(client().get("/v1/models/gpt-4o"), 404, "invalid_request_error", "model_not_found", "model");
  }

  void chat_answers_what_the_engine_answers() {
    // Greedy and seeded sampling: the server adds nothing to, and loses nothing of, the engine's text.
    const std::string prompt = "Tell me about licenses.";
    for (const auto& [extra, sampling] : {std::pair{QJsonObject{{"temperature", 0}}, greedy()},
                                          std::pair{varied_sampling(11), varied_sampling_params(11)}}) {
      QJsonObject body = extra;
      body["max_tokens"] = 24;
      const HttpResponse r = client().post("/v1/chat/completions", chat_body(prompt, body));
      QCOMPARE(r.status, 200L);
      const QJsonObject response = json_object(r.body);
      QCOMPARE(response["object"].toString(), QString("chat.completion"));
      QVERIFY(response["id"].toString().startsWith("chatcmpl-"));
      QCOMPARE(response["model"].toString(), QString("tiny-gemma3-a"));  // an unknown name serves the loaded model
      const QJsonObject choice = response["choices"].toArray()[0].toObject();
      QCOMPARE(choice["message"].toObject()["role"].toString(), QString("assistant"));

      const Reference expected = reference_chat(prompt, sampling, 24);
      QCOMPARE(response_text(response), expected.text);
      const QJsonObject usage = response["usage"].toObject();
      QCOMPARE(usage["prompt_tokens"].toInt(), int(reference_->chat_tokens({{Role::User, prompt}}).size()));
      QCOMPARE(usage["completion_tokens"].toInt(), expected.stats.generated_tokens);
      QCOMPARE(usage["total_tokens"].toInt(), usage["prompt_tokens"].toInt() + usage["completion_tokens"].toInt());
      QCOMPARE(choice["finish_reason"].toString(),
               QString(expected.stats.stop_reason == StopReason::MaxTokens ? "length" : "stop"));
    }
  }

  void chat_stream_gives_the_same_text_as_non_stream() {
    const std::string prompt = "Write a short poem about freedom.";
    for (const QJsonObject& sampling : {QJsonObject{{"temperature", 0}}, varied_sampling(5)}) {
      QJsonObject body = sampling;
      body["max_completion_tokens"] = 40;
      const HttpResponse whole = client().post("/v1/chat/completions", chat_body(prompt, body));
      QCOMPARE(whole.status, 200L);
      const QJsonObject response = json_object(whole.body);

      body["stream"] = true;
      body["stream_options"] = QJsonObject{{"include_usage", true}};
      const HttpResponse streamed = client().post("/v1/chat/completions", chat_body(prompt, body));
      QCOMPARE(streamed.status, 200L);
      QVERIFY(streamed.header("content-type").find("text/event-stream") == 0);
      const StreamResult s = read_stream(streamed.body);
      QVERIFY(s.role_first);
      QVERIFY(s.done_last);
      QVERIFY(s.events > 3);
      QCOMPARE(s.finish_chunks, 1);
      QCOMPARE(s.text, response_text(response));
      QVERIFY(!s.text.empty());
      QCOMPARE(QString::fromStdString(s.finish_reason),
               response["choices"].toArray()[0].toObject()["finish_reason"].toString());
      // The usage chunk matches the non-streamed usage (the prompt may come from the cache this time).
      QCOMPARE(s.usage["prompt_tokens"].toInt(), response["usage"].toObject()["prompt_tokens"].toInt());
      QCOMPARE(s.usage["completion_tokens"].toInt(), response["usage"].toObject()["completion_tokens"].toInt());
    }
    // Without include_usage there is no usage chunk.
    const HttpResponse plain =
        client().post("/v1/chat/completions", chat_body(prompt, {{"stream", true}, {"max_tokens", 5}}));
    QVERIFY(read_stream(plain.body).usage.isEmpty());
    QVERIFY(plain.body.find("\"usage\"") == std::string::npos);
  }

  void completions_continue_the_prompt() {
    const std::string prompt = "Permission is hereby granted";
    const HttpResponse r = client().post("/v1/completions", completion_body(prompt, varied_sampling(3)));
    QCOMPARE(r.status, 200L);
    const QJsonObject response = json_object(r.body);
    QCOMPARE(response["object"].toString(), QString("text_completion"));
    QVERIFY(response["id"].toString().startsWith("cmpl-"));
    const Reference expected = reference_completion(prompt, varied_sampling_params(3), 16);  // OpenAI's default max_tokens
    QVERIFY2(expected.text.size() > 8, expected.text.c_str());
    QCOMPARE(response_text(response), expected.text);
    QCOMPARE(response["usage"].toObject()["prompt_tokens"].toInt(), int(reference_->tokenize(prompt, true).size()));
    QCOMPARE(response["usage"].toObject()["completion_tokens"].toInt(), expected.stats.generated_tokens);
    QVERIFY(expected.stats.generated_tokens <= 16);

    QJsonObject streaming = varied_sampling(3);
    streaming["stream"] = true;
    const HttpResponse streamed = client().post("/v1/completions", completion_body(prompt, streaming));
    const StreamResult s = read_stream(streamed.body);
    QVERIFY(s.done_last);
    QCOMPARE(s.text, expected.text);
    QCOMPARE(s.finish_chunks, 1);
    // Prompts also come as an array of one string.
    QJsonObject as_array = varied_sampling(3);
    as_array["prompt"] = QJsonArray{QString::fromStdString(prompt)};
    const HttpResponse arr =
        client().post("/v1/completions", QJsonDocument(as_array).toJson(QJsonDocument::Compact).toStdString());
    QCOMPARE(response_text(json_object(arr.body)), expected.text);
  }

  void max_tokens_ends_with_length() {
    // Seeded sampling at a high temperature rarely meets an end token within 6 tokens; check whichever happened.
    const HttpResponse r = client().post("/v1/chat/completions",
                                         chat_body("Count with me", {{"max_tokens", 6}, {"temperature", 1.5}, {"seed", 21}}));
    QCOMPARE(r.status, 200L);
    const QJsonObject response = json_object(r.body);
    const int tokens = response["usage"].toObject()["completion_tokens"].toInt();
    const QString reason = response["choices"].toArray()[0].toObject()["finish_reason"].toString();
    const Reference expected = reference_chat("Count with me", seeded(1.5f, 21), 6);
    QCOMPARE(tokens, expected.stats.generated_tokens);
    QCOMPARE(reason, QString(expected.stats.stop_reason == StopReason::MaxTokens ? "length" : "stop"));
    QVERIFY(tokens <= 6);
  }

  void stop_strings_cut_the_text() {
    // Take a sampled answer, pick a piece from its middle as the stop string: the answer must end
    // right before that piece's first occurrence, with finish_reason "stop", streamed or not.
    QJsonObject sampling = varied_sampling(3);
    sampling["max_tokens"] = 60;
    const std::string prompt = "Say something long.";
    const std::string full = response_text(json_object(client().post("/v1/chat/completions", chat_body(prompt, sampling)).body));
    QVERIFY2(full.size() >= 12, full.c_str());
    // Two ASCII letters from the second half (never half of a multi-byte character), first seen after the start.
    std::string stop;
    for (size_t i = full.size() / 2; i + 1 < full.size() && stop.empty(); ++i)
      if (std::isalpha(static_cast<unsigned char>(full[i])) && std::isalpha(static_cast<unsigned char>(full[i + 1])) &&
          full.find(full.substr(i, 2)) > 0)
        stop = full.substr(i, 2);
    QVERIFY2(!stop.empty(), full.c_str());
    const std::string expected = full.substr(0, full.find(stop));

    QJsonObject with_stop = sampling;
    with_stop["stop"] = QJsonArray{QString::fromStdString(stop), "never-appears-here"};
    const QJsonObject response = json_object(client().post("/v1/chat/completions", chat_body(prompt, with_stop)).body);
    QCOMPARE(response_text(response), expected);
    QCOMPARE(response["choices"].toArray()[0].toObject()["finish_reason"].toString(), QString("stop"));

    with_stop["stop"] = QString::fromStdString(stop);  // a single string works as well
    with_stop["stream"] = true;
    const StreamResult s = read_stream(client().post("/v1/chat/completions", chat_body(prompt, with_stop)).body);
    QCOMPARE(s.text, expected);
    QCOMPARE(s.finish_reason, std::string("stop"));
  }

  void invalid_requests_get_400_naming_the_field_data() {
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("body");
    QTest::addColumn<QString>("param");  // "" = null
    const QString chat = "/v1/chat/completions";
    const QString msgs = R"("messages":[{"role":"user","content":"hi"}])";
    QTest::newRow("not json") << chat << "{\"messages\": [" << "";
    QTest::newRow("not an object") << chat << "[1, 2]" << "";
    QTest::newRow("empty body") << chat << "" << "";
    QTest::newRow("too deep") << chat << QString("{\"a\":") + QString("[").repeated(100) + QString("]").repeated(100) + "}" << "";
    QTest::newRow("no messages") << chat << R"({"model":"m"})" << "messages";
    QTest::newRow("empty messages") << chat << R"({"messages":[]})" << "messages";
    QTest::newRow("bad role") << chat << R"({"messages":[{"role":"wizard","content":"hi"}]})" << "messages[0].role";
    QTest::newRow("function role") << chat << R"({"messages":[{"role":"function","content":"hi"}]})" << "messages[0].role";
    QTest::newRow("image url not data or http") << chat << R"({"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}}]}]})"
                                                << "messages[0].content[0]";
    QTest::newRow("unknown part type") << chat << R"({"messages":[{"role":"user","content":[{"type":"input_audio"}]}]})"
                                       << "messages[0].content[0].type";
    QTest::newRow("content number") << chat << R"({"messages":[{"role":"user","content":5}]})" << "messages[0].content";
    QTest::newRow("temperature high") << chat << "{" + msgs + R"(,"temperature":3})" << "temperature";
    QTest::newRow("temperature text") << chat << "{" + msgs + R"(,"temperature":"hot"})" << "temperature";
    QTest::newRow("number past double") << chat << "{" + msgs + R"(,"temperature":1e999})" << "";
    QTest::newRow("top_p") << chat << "{" + msgs + R"(,"top_p":1.5})" << "top_p";
    QTest::newRow("max_tokens zero") << chat << "{" + msgs + R"(,"max_tokens":0})" << "max_tokens";
    QTest::newRow("max_tokens fraction") << chat << "{" + msgs + R"(,"max_tokens":2.5})" << "max_tokens";
    QTest::newRow("max_completion_tokens") << chat << "{" + msgs + R"(,"max_completion_tokens":-4})" << "max_completion_tokens";
    QTest::newRow("n zero") << chat << "{" + msgs + R"(,"n":0})" << "n";
    QTest::newRow("n too many") << chat << "{" + msgs + R"(,"n":17})" << "n";
    QTest::newRow("stream text") << chat << "{" + msgs + R"(,"stream":"yes"})" << "stream";
    QTest::newRow("stop number") << chat << "{" + msgs + R"(,"stop":7})" << "stop";
    QTest::newRow("five stops") << chat << "{" + msgs + R"(,"stop":["a","b","c","d","e"]})" << "stop";
    QTest::newRow("seed text") << chat << "{" + msgs + R"(,"seed":"x"})" << "seed";
    QTest::newRow("model number") << chat << "{" + msgs + R"(,"model":5})" << "model";
    QTest::newRow("logprobs text") << chat << "{" + msgs + R"(,"logprobs":"yes"})" << "logprobs";
    QTest::newRow("no prompt") << "/v1/completions" << R"({"model":"m"})" << "prompt";
    QTest::newRow("token prompt") << "/v1/completions" << R"({"prompt":[1,2,3]})" << "prompt";
    QTest::newRow("two prompts") << "/v1/completions" << R"({"prompt":["a","b"]})" << "prompt";
    QTest::newRow("invalid utf-8") << chat << QString::fromLatin1("{\"messages\":[{\"role\":\"user\",\"content\":\"\xff\"}]}") << "";
  }
  void invalid_requests_get_400_naming_the_field() {
    QFETCH(QString, path);
    QFETCH(QString, body);
    QFETCH(QString, param);
    std::string raw = body.toStdString();
    if (QByteArray(QTest::currentDataTag()) == "invalid utf-8") raw = body.toLatin1().toStdString();
    check_error(client().post(path.toStdString(), raw), 400, "invalid_request_error", {}, param);
  }

  // A model's generation_config.json sets the sampling a request leaves out; the request's own
  // fields still win. The file here holds the varied settings, so a request with only a seed must
  // answer what the engine answers with those settings, and not what Kiln's defaults give.
  void model_defaults_come_from_generation_config() {
    QTemporaryDir dir;
    for (const char* file : {"config.json", "model.safetensors", "tokenizer.model"})
      QVERIFY(QFile::copy(QString::fromStdString(tiny_model_path() + "/" + file), dir.filePath(file)));
    QFile generation(dir.filePath("generation_config.json"));
    QVERIFY(generation.open(QIODevice::WriteOnly));
    generation.write(R"({"do_sample": true, "temperature": 1.5, "top_p": 1.0, "top_k": 0, "min_p": 0.0,
                         "repetition_penalty": 1.5})");
    generation.close();
    LoadOptions load = tiny_load_options(kContext);
    load.path = dir.path().toStdString();
    auto running = start_server(load, {});

    const std::string prompt = "Name three licenses.";
    const QJsonObject seed_only{{"seed", 7}, {"max_tokens", 24}};
    const std::string text = response_text(json_object(running->client->post("/v1/chat/completions", chat_body(prompt, seed_only)).body));
    QCOMPARE(text, reference_chat(prompt, varied_sampling_params(7), 24).text);
    QVERIFY(text != reference_chat(prompt, seeded(SamplingParams{}.temperature, 7), 24).text);  // Kiln's defaults
    // A request's own temperature wins over the model's.
    const QJsonObject greedy_request{{"temperature", 0}, {"max_tokens", 24}};
    const std::string greedy_text =
        response_text(json_object(running->client->post("/v1/chat/completions", chat_body(prompt, greedy_request)).body));
    SamplingParams model_greedy = varied_sampling_params(0);
    model_greedy.temperature = 0;
    QCOMPARE(greedy_text, reference_chat(prompt, model_greedy, 24).text);
  }

  // /v1/completions parses special-token text in the prompt, as llama.cpp's server does.
  void completions_parse_special_tokens() {
    const std::string prompt = "<start_of_turn>user\nHi<end_of_turn>\n<start_of_turn>model\n";
    const HttpResponse r = client().post("/v1/completions", completion_body(prompt, {{"temperature", 0}, {"max_tokens", 8}}));
    QCOMPARE(r.status, 200L);
    const QJsonObject body = json_object(r.body);
    QCOMPARE(body["usage"].toObject()["prompt_tokens"].toInt(), int(reference_->tokenize(prompt, true).size()));
    QVERIFY(reference_->tokenize(prompt, true).size() < reference_->tokenize(prompt, true, false).size());
    QCOMPARE(response_text(body), reference_completion(prompt, greedy(), 8).text);
  }

  void unknown_fields_are_ignored() {
    const HttpResponse r = client().post(
        "/v1/chat/completions",
        chat_body("hi", {{"max_tokens", 2}, {"frequency_penalty", 0.5}, {"tools", QJsonArray{}}, {"x_custom", "y"},
                         {"temperature", QJsonValue::Null}, {"model", "gpt-4o-mini"}}));
    QCOMPARE(r.status, 200L);
  }

  void prompt_longer_than_the_context_gets_400_with_the_numbers() {
    std::string prompt;
    while (reference_->chat_tokens({{Role::User, prompt}}).size() <= size_t(kContext) + 20) prompt += "license terms ";
    const int tokens = int(reference_->chat_tokens({{Role::User, prompt}}).size());
    const HttpResponse r = client().post("/v1/chat/completions", chat_body(prompt));
    check_error(r, 400, "invalid_request_error", "context_length_exceeded", "messages");
    const QString message = json_object(r.body)["error"].toObject()["message"].toString();
    QVERIFY2(message.contains(QString::number(kContext)), qPrintable(message));
    QVERIFY2(message.contains(QString::number(tokens)), qPrintable(message));

    const HttpResponse streamed = client().post("/v1/completions", completion_body(prompt, {{"stream", true}}));
    check_error(streamed, 400, "invalid_request_error", "context_length_exceeded", "prompt");
  }

  void prompt_at_the_context_boundary() {
    // context - 1 prompt tokens leave room for exactly one token; context tokens leave none.
    std::string prompt = "a";
    while (reference_->tokenize(prompt + " a", true).size() < size_t(kContext)) prompt += " a";
    QCOMPARE(int(reference_->tokenize(prompt, true).size()), kContext - 1);
    const HttpResponse fits = client().post("/v1/completions", completion_body(prompt, {{"max_tokens", 50}, {"temperature", 0}}));
    QCOMPARE(fits.status, 200L);
    const QJsonObject response = json_object(fits.body);
    QVERIFY(response["usage"].toObject()["completion_tokens"].toInt() <= 1);
    const HttpResponse full = client().post("/v1/completions", completion_body(prompt + " a"));
    check_error(full, 400, "invalid_request_error", "context_length_exceeded", "prompt");
  }

  void unknown_url_404_and_wrong_method_405() {
    check_error(client().get("/v1/engines"), 404, "invalid_request_error", "unknown_url");
    check_error(client().post("/v1/embeddings", "{}"), 404, "invalid_request_error", "unknown_url");
    const HttpResponse wrong = client().get("/v1/chat/completions");
    check_error(wrong, 405, "invalid_request_error", "method_not_allowed");
    QCOMPARE(wrong.header("allow"), std::string("POST"));
    // Without --cors there is no preflight answer and no CORS header anywhere.
    const HttpResponse preflight = client().request("OPTIONS", "/v1/chat/completions", {"Origin: http://evil.example"});
    QVERIFY(preflight.status >= 400);
    QVERIFY(preflight.header("access-control-allow-origin").empty());
    QVERIFY(client().get("/v1/models", {"Origin: http://evil.example"}).header("access-control-allow-origin").empty());
  }

  void api_key_is_required_when_set() {
    server::ServerOptions options;
    options.api_key = "sk-test-123";
    auto keyed = start_tiny_server(options);
    const HttpClient& c = *keyed->client;
    check_error(c.get("/v1/models"), 401, "invalid_request_error", "invalid_api_key");
    QCOMPARE(c.get("/v1/models").header("www-authenticate"), std::string("Bearer"));
    check_error(c.get("/v1/models", {"Authorization: Bearer sk-wrong"}), 401, "invalid_request_error", "invalid_api_key");
    check_error(c.get("/v1/models", {"Authorization: Bearer sk-test-1234"}), 401, "invalid_request_error", "invalid_api_key");
    check_error(c.post("/v1/chat/completions", chat_body("hi")), 401, "invalid_request_error", "invalid_api_key");
    QCOMPARE(c.get("/v1/models", {"Authorization: Bearer sk-test-123"}).status, 200L);
    QCOMPARE(c.post("/v1/chat/completions", chat_body("hi", {{"max_tokens", 2}}), {"Authorization: Bearer sk-test-123"}).status,
             200L);
    QCOMPARE(c.get("/health").status, 200L);  // health checks need no key
  }

  // Prometheus text: every sample "name{labels} value" after its "# TYPE"; the counters match what the
  // responses reported. A fresh server, so the other tests' traffic is not in its counts.
  void metrics_count_requests_and_tokens() {
    auto fresh = start_tiny_server({}, kContext);
    const HttpClient& c = *fresh->client;
    const HttpResponse chat = c.post("/v1/chat/completions", chat_body("Hello", {{"max_tokens", 5}, {"temperature", 0}}));
    const HttpResponse completion = c.post("/v1/completions", completion_body("Once upon", {{"max_tokens", 4}}));
    QCOMPARE(chat.status, 200L);
    QCOMPARE(completion.status, 200L);
    check_error(c.post("/v1/chat/completions", "{"), 400, "invalid_request_error");
    int prompt = 0, generated = 0;
    for (const HttpResponse* r : {&chat, &completion}) {
      const QJsonObject usage = json_object(r->body)["usage"].toObject();
      prompt += usage["prompt_tokens"].toInt();
      generated += usage["completion_tokens"].toInt();
    }
    QVERIFY(generated > 0);

    const HttpResponse m = c.get("/metrics");
    QCOMPARE(m.status, 200L);
    QVERIFY2(m.header("content-type").find("text/plain; version=0.0.4") == 0, m.header("content-type").c_str());
    std::map<std::string, double> samples;
    std::set<std::string> typed;
    std::istringstream lines(m.body);
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("# HELP ", 0) == 0) continue;
      if (line.rfind("# TYPE ", 0) == 0) {
        std::istringstream words(line.substr(7));
        std::string name, type;
        words >> name >> type;
        QVERIFY2(type == "counter" || type == "gauge", line.c_str());
        typed.insert(name);
        continue;
      }
      const size_t space = line.rfind(' ');
      QVERIFY2(space != std::string::npos && line.rfind("kiln_", 0) == 0, line.c_str());
      const std::string key = line.substr(0, space);
      QVERIFY2(typed.count(key.substr(0, key.find('{'))), line.c_str());
      size_t used = 0;
      samples[key] = std::stod(line.substr(space + 1), &used);
      QCOMPARE(used, line.size() - space - 1);
    }
    auto requests = [&](const char* endpoint, const char* outcome) {
      const std::string key = std::string("kiln_requests_total{endpoint=\"") + endpoint + "\",outcome=\"" + outcome + "\"}";
      return samples.count(key) ? samples[key] : -1.0;
    };
    QCOMPARE(requests("chat", "ok"), 1.0);
    QCOMPARE(requests("completions", "ok"), 1.0);
    QCOMPARE(requests("chat", "error"), 1.0);
    QCOMPARE(requests("completions", "error"), 0.0);
    QCOMPARE(requests("chat", "cancelled"), 0.0);
    QCOMPARE(samples["kiln_generated_tokens_total"], double(generated));
    QCOMPARE(samples["kiln_prompt_tokens_total"], double(prompt));
    QCOMPARE(samples.count("kiln_requests_waiting"), size_t(1));
    QCOMPARE(samples["kiln_requests_waiting"], 0.0);
    QCOMPARE(samples["kiln_requests_running"], 0.0);
    QVERIFY(samples.count("kiln_decode_tokens_per_second") && samples["kiln_decode_tokens_per_second"] >= 0);
    // The Host policy applies here as on every route.
    QCOMPARE(c.get("/metrics", {"Host: attacker.test"}).status, 403L);
  }

  void metrics_need_the_key_when_set() {
    server::ServerOptions options;
    options.api_key = "sk-test-123";
    auto keyed = start_tiny_server(options);
    check_error(keyed->client->get("/metrics"), 401, "invalid_request_error", "invalid_api_key");
    const HttpResponse m = keyed->client->get("/metrics", {"Authorization: Bearer sk-test-123"});
    QCOMPARE(m.status, 200L);
    QVERIFY(m.body.find("# TYPE kiln_requests_total counter") != std::string::npos);
  }

  void body_over_the_limit_gets_413() {
    server::ServerOptions options;
    options.max_body_bytes = 16 * 1024;
    auto limited = start_tiny_server(options);
    const HttpClient& c = *limited->client;
    const std::string padding(20 * 1024, 'x');
    const std::string big = chat_body("hi", {{"padding", QString::fromStdString(padding)}});
    check_error(c.post("/v1/chat/completions", big), 413, "invalid_request_error", "request_too_large");
    check_error(c.post_chunked("/v1/chat/completions", big), 413, "invalid_request_error", "request_too_large");
    // Just under the limit is served; the server is unharmed by what came before.
    const std::string fits = chat_body("hi", {{"max_tokens", 2}, {"padding", QString::fromStdString(std::string(15 * 1024, 'x'))}});
    QVERIFY(fits.size() < options.max_body_bytes);
    QCOMPARE(c.post("/v1/chat/completions", fits).status, 200L);
    QCOMPARE(c.post_chunked("/v1/chat/completions", fits).status, 200L);
  }

  void cors_headers_only_with_an_origin() {
    server::ServerOptions options;
    options.cors_origin = "http://localhost:3000";
    auto open = start_tiny_server(options);
    const HttpClient& c = *open->client;
    const HttpResponse preflight = c.request("OPTIONS", "/v1/chat/completions",
                                             {"Origin: http://localhost:3000", "Access-Control-Request-Method: POST"});
    QCOMPARE(preflight.status, 204L);
    QCOMPARE(preflight.header("access-control-allow-origin"), std::string("http://localhost:3000"));
    QVERIFY(preflight.header("access-control-allow-headers").find("Authorization") != std::string::npos);
    QCOMPARE(c.get("/v1/models").header("access-control-allow-origin"), std::string("http://localhost:3000"));
    // Errors carry it too, or a browser could not read them.
    QCOMPARE(c.post("/v1/chat/completions", "{").header("access-control-allow-origin"), std::string("http://localhost:3000"));
  }
};

QTEST_GUILESS_MAIN(ServerApiTest)
#include "test_server_api.moc"
