// tools / tool_choice over loopback: forced calls (a named function, "required") come back as
// OpenAI tool_calls whose arguments validate against the function's parameters, streamed and not;
// earlier calls and tool results are rendered into the prompt as Gemma 3's documented convention.
#include <curl/curl.h>

#include <QJsonDocument>
#include <QtTest>

#include "server/tool_calls.h"
#include "server_fixture.h"

using namespace kiln;
using namespace kiln::test;

namespace {

constexpr int kContext = 2048;

QJsonObject weather_tool() {
  const QJsonObject parameters = QJsonDocument::fromJson(
      R"({"type":"object","properties":{"city":{"type":"string","minLength":1,"maxLength":10},"days":{"type":"integer","minimum":1,"maximum":7}},"required":["city","days"],"additionalProperties":false})").object();
  return {{"type", "function"},
          {"function", QJsonObject{{"name", "get_weather"}, {"description", "Weather forecast"}, {"parameters", parameters}}}};
}
QJsonObject time_tool() {
  const QJsonObject parameters = QJsonDocument::fromJson(R"({"type":"object","properties":{"zone":{"enum":["UTC","CET"]}},"required":["zone"]})").object();
  return {{"type", "function"}, {"function", QJsonObject{{"name", "get_time"}, {"parameters", parameters}}}};
}

// get_weather's arguments, checked by hand: "" when valid.
QString weather_violation(const QString& arguments) {
  QJsonParseError error;
  const QJsonDocument doc = QJsonDocument::fromJson(arguments.toUtf8(), &error);
  if (error.error != QJsonParseError::NoError || !doc.isObject()) return "arguments do not parse: " + arguments;
  const QJsonObject o = doc.object();
  if (o.keys() != QStringList({"city", "days"})) return "keys: " + o.keys().join(",");
  const int length = int(o["city"].toString().toUcs4().size());
  if (!o["city"].isString() || length < 1 || length > 10) return "bad city";
  const double days = o["days"].toDouble(-1);
  if (days != std::floor(days) || days < 1 || days > 7) return "bad days";
  return {};
}

}  // namespace

class ServerToolsTest : public QObject {
  Q_OBJECT

  std::unique_ptr<RunningServer> s_;
  std::unique_ptr<Engine> reference_;
  const HttpClient& client() const { return *s_->client; }

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

  void a_named_tool_choice_is_answered_as_tool_calls() {
    for (int seed = 1; seed <= 10; ++seed) {
      const HttpResponse r = client().post(
          "/v1/chat/completions",
          chat_body("Weather in Oslo?", {{"temperature", 1.0}, {"seed", seed}, {"max_tokens", 500},
                                         {"tools", QJsonArray{weather_tool(), time_tool()}},
                                         {"tool_choice", QJsonObject{{"type", "function"},
                                                                     {"function", QJsonObject{{"name", "get_weather"}}}}}}));
      QCOMPARE(r.status, 200L);
      const QJsonObject choice = json_object(r.body)["choices"].toArray()[0].toObject();
      QVERIFY2(choice["finish_reason"].toString() == "tool_calls", r.body.c_str());
      const QJsonObject message = choice["message"].toObject();
      QVERIFY(message["content"].isNull());
      const QJsonArray calls = message["tool_calls"].toArray();
      QCOMPARE(calls.size(), 1);
      const QJsonObject call = calls[0].toObject();
      QVERIFY(call["id"].toString().startsWith("call_"));
      QCOMPARE(call["type"].toString(), QString("function"));
      QCOMPARE(call["function"].toObject()["name"].toString(), QString("get_weather"));
      const QString why = weather_violation(call["function"].toObject()["arguments"].toString());
      QVERIFY2(why.isEmpty(), qPrintable(why));
    }
  }

  void streamed_calls_equal_the_whole_response() {
    QJsonObject extra{{"temperature", 1.0}, {"seed", 42}, {"max_tokens", 500}, {"tools", QJsonArray{weather_tool()}},
                      {"tool_choice", "required"}};
    const QJsonObject whole = json_object(client().post("/v1/chat/completions", chat_body("Rain?", extra)).body);
    const QJsonObject expected =
        whole["choices"].toArray()[0].toObject()["message"].toObject()["tool_calls"].toArray()[0].toObject()["function"].toObject();
    extra.insert("stream", true);
    const HttpResponse r = client().post("/v1/chat/completions", chat_body("Rain?", extra));
    QCOMPARE(r.status, 200L);
    QString name, arguments, finish;
    for (const std::string& payload : sse_payloads(r.body)) {
      if (payload == "[DONE]") continue;
      const QJsonObject choice = json_object(payload)["choices"].toArray()[0].toObject();
      for (const auto& c : choice["delta"].toObject()["tool_calls"].toArray()) {
        QCOMPARE(c.toObject()["index"].toInt(), 0);
        name += c.toObject()["function"].toObject()["name"].toString();
        arguments += c.toObject()["function"].toObject()["arguments"].toString();
      }
      if (choice["finish_reason"].isString()) finish = choice["finish_reason"].toString();
    }
    QCOMPARE(finish, QString("tool_calls"));
    QCOMPARE(name, expected["name"].toString());
    QCOMPARE(arguments, expected["arguments"].toString());
    QVERIFY2(weather_violation(arguments).isEmpty(), qPrintable(arguments));
  }

  void required_picks_one_of_the_declared_functions() {
    const HttpResponse r = client().post(
        "/v1/chat/completions", chat_body("What time is it?", {{"temperature", 1.0}, {"seed", 3}, {"max_tokens", 500},
                                                                {"tools", QJsonArray{weather_tool(), time_tool()}},
                                                                {"tool_choice", "required"}}));
    QCOMPARE(r.status, 200L);
    const QJsonObject call = json_object(r.body)["choices"].toArray()[0].toObject()["message"].toObject()["tool_calls"]
                                 .toArray()[0].toObject()["function"].toObject();
    QVERIFY(QStringList({"get_weather", "get_time"}).contains(call["name"].toString()));
    QVERIFY(QJsonDocument::fromJson(call["arguments"].toString().toUtf8()).isObject());
  }

  // The conversation with an earlier call and its result reaches the model as Gemma turns: the
  // answer equals the reference engine's on those turns, written out here.
  void tool_results_are_rendered_into_the_prompt() {
    const QJsonObject call{{"id", "call_1"}, {"type", "function"},
                           {"function", QJsonObject{{"name", "get_weather"}, {"arguments", R"({"city":"Oslo","days":2})"}}}};
    const QJsonArray messages{
        QJsonObject{{"role", "user"}, {"content", "Weather in Oslo?"}},
        QJsonObject{{"role", "assistant"}, {"content", QJsonValue()}, {"tool_calls", QJsonArray{call}}},
        QJsonObject{{"role", "tool"}, {"tool_call_id", "call_1"}, {"content", "rain, 12 C"}}};
    const QJsonObject body{{"model", "tiny"}, {"messages", messages}, {"temperature", 0}, {"max_tokens", 12},
                           {"tools", QJsonArray{weather_tool()}}};
    const HttpResponse r =
        client().post("/v1/chat/completions", QJsonDocument(body).toJson(QJsonDocument::Compact).toStdString());
    QCOMPARE(r.status, 200L);

    server::ToolSpec spec{"get_weather", "Weather forecast",
                          QJsonDocument(weather_tool()["function"].toObject()["parameters"].toObject())
                              .toJson(QJsonDocument::Compact).toStdString()};
    const std::vector<ChatMessage> turns = {
        {Role::User, server::tools_prompt({spec}) + "Weather in Oslo?"},
        {Role::Assistant, R"({"name":"get_weather","parameters":{"city":"Oslo","days":2}})"},
        {Role::User, "```tool_output\nrain, 12 C\n```"}};
    GenerateOptions o;
    o.sampling.temperature = 0;
    o.max_tokens = 12;
    std::string expected;
    const GenerationStats stats = reference_->chat(turns, o, [&](std::string_view t) { expected += t; return true; });
    QCOMPARE(json_object(r.body)["usage"].toObject()["prompt_tokens"].toInt(), stats.prompt_tokens);
    QCOMPARE(response_text(json_object(r.body)), expected);
  }

  void plain_answers_stay_content() {
    const HttpResponse r = client().post(
        "/v1/chat/completions",
        chat_body("Hello", {{"temperature", 0}, {"max_tokens", 8}, {"tools", QJsonArray{weather_tool()}}}));
    QCOMPARE(r.status, 200L);
    const QJsonObject choice = json_object(r.body)["choices"].toArray()[0].toObject();
    QVERIFY(choice["message"].toObject()["content"].isString());
    QVERIFY(!choice["message"].toObject().contains("tool_calls"));
    QVERIFY(choice["finish_reason"].toString() != "tool_calls");
  }

  void streamed_plain_answers_with_tools_are_content() {
    QJsonObject extra{{"temperature", 0}, {"max_tokens", 8}, {"tools", QJsonArray{weather_tool()}}};
    const std::string whole = response_text(json_object(client().post("/v1/chat/completions", chat_body("Hi", extra)).body));
    extra.insert("stream", true);
    const StreamResult stream = read_stream(client().post("/v1/chat/completions", chat_body("Hi", extra)).body);
    QVERIFY(!whole.empty());
    QCOMPARE(stream.text, whole);
    QVERIFY(stream.role_first);
    QCOMPARE(stream.finish_chunks, 1);
    QVERIFY(stream.finish_reason != "tool_calls");
    QVERIFY(stream.done_last);
  }

  void parse_tool_calls_reads_the_documented_answer() {
    const std::vector<server::ToolSpec> tools = {{"f", "", "{}"}};
    auto calls = server::parse_tool_calls("```json\n{\"name\": \"f\", \"parameters\": {\"a\": 1}}\n```", tools);
    QVERIFY(calls && calls->size() == 1);
    QCOMPARE(calls->at(0).arguments, std::string(R"({"a":1})"));
    QVERIFY(server::parse_tool_calls(R"([{"name":"f","parameters":{}},{"name":"f","parameters":{}}])", tools)->size() == 2);
    QVERIFY(!server::parse_tool_calls(R"({"name":"g","parameters":{}})", tools));  // not declared
    QVERIFY(!server::parse_tool_calls("The answer is {\"name\": \"f\"}", tools));  // text around it
  }

  void bad_tool_requests_are_400() {
    auto param_of = [&](const QJsonObject& extra) {
      const HttpResponse r = client().post("/v1/chat/completions", chat_body("x", extra));
      return std::make_pair(r.status, json_object(r.body)["error"].toObject()["param"].toString());
    };
    using P = std::pair<long, QString>;
    QCOMPARE(param_of({{"tools", QJsonArray{weather_tool()}},
                       {"tool_choice", QJsonObject{{"type", "function"}, {"function", QJsonObject{{"name", "nope"}}}}}}),
             P(400L, "tool_choice"));
    QCOMPARE(param_of({{"tool_choice", "required"}}), P(400L, "tool_choice"));
    QCOMPARE(param_of({{"tools", QJsonArray{QJsonObject{{"type", "function"}, {"function", QJsonObject{}}}}}}),
             P(400L, "tools[0].function.name"));
    QJsonObject patterned = weather_tool();
    QJsonObject function = patterned["function"].toObject();
    function["parameters"] = QJsonObject{{"type", "object"}, {"properties", QJsonObject{{"a", QJsonObject{{"type", "string"}, {"pattern", "x"}}}}}};
    patterned["function"] = function;
    const HttpResponse r = client().post("/v1/chat/completions",
                                         chat_body("x", {{"tools", QJsonArray{patterned}}, {"tool_choice", "required"}}));
    QCOMPARE(r.status, 400L);
    QVERIFY2(json_object(r.body)["error"].toObject()["message"].toString().contains("'pattern'"), r.body.c_str());
  }
};

QTEST_GUILESS_MAIN(ServerToolsTest)
#include "test_server_tools.moc"
