// logprobs / top_logprobs over loopback: OpenAI's chat shape and the legacy completions shape,
// streamed and not, checked against the log-softmax of the reference engine's own logits.
#include <curl/curl.h>

#include <QJsonDocument>
#include <QtTest>
#include <algorithm>
#include <cmath>

#include "server_fixture.h"

using namespace kiln;
using namespace kiln::test;

namespace {

constexpr int kContext = 256;

// log-softmax of one row of logits, computed here in double (independent of the server's code).
std::vector<double> log_softmax(const std::vector<float>& logits) {
  const double best = *std::max_element(logits.begin(), logits.end());
  double total = 0;
  for (float x : logits) total += std::exp(double(x) - best);
  std::vector<double> out(logits.size());
  for (size_t i = 0; i < logits.size(); ++i) out[i] = double(logits[i]) - best - std::log(total);
  return out;
}

std::string bytes_of(const QJsonArray& values) {
  std::string s;
  for (const auto& v : values) s.push_back(char(v.toInt()));
  return s;
}

}  // namespace

class ServerLogprobsTest : public QObject {
  Q_OBJECT

  std::unique_ptr<RunningServer> s_;
  std::unique_ptr<Engine> reference_;
  const HttpClient& client() const { return *s_->client; }

  // The reference's log-probabilities for the first generated token of a one-message chat, best first.
  std::vector<double> first_step_sorted(const std::string& prompt) {
    const std::vector<int32_t> ids = reference_->chat_tokens({{Role::User, prompt}});
    const auto rows = reference_->logits(ids, 0, int(ids.size()) - 1);
    std::vector<double> lp = log_softmax(rows.back());
    std::sort(lp.begin(), lp.end(), std::greater<>());
    return lp;
  }

  // Every chat content entry has the OpenAI shape; returns the tokens' text joined.
  static std::string check_chat_entries(const QJsonArray& content, int top) {
    std::string joined;
    for (const auto& e : content) {
      const QJsonObject entry = e.toObject();
      const double lp = entry["logprob"].toDouble();
      if (!(lp <= 0.0)) qFatal("a logprob above 0: %f", lp);
      const QJsonArray alternatives = entry["top_logprobs"].toArray();
      if (alternatives.size() != top) qFatal("top_logprobs has %d entries, not %d", int(alternatives.size()), top);
      for (int i = 1; i < alternatives.size(); ++i)
        if (alternatives[i].toObject()["logprob"].toDouble() > alternatives[i - 1].toObject()["logprob"].toDouble())
          qFatal("top_logprobs are not best first");
      if (top > 0 && lp > alternatives[0].toObject()["logprob"].toDouble() + 1e-6)
        qFatal("the chosen token is likelier than the best alternative");
      joined += bytes_of(entry["bytes"].toArray());
    }
    return joined;
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

  void chat_greedy_logprobs_are_the_models_log_softmax() {
    const std::string prompt = "Tell me about kilns.";
    const HttpResponse r = client().post(
        "/v1/chat/completions",
        chat_body(prompt, {{"temperature", 0}, {"max_tokens", 12}, {"logprobs", true}, {"top_logprobs", 3}}));
    QCOMPARE(r.status, 200L);
    const QJsonObject body = json_object(r.body);
    const QJsonObject choice = body["choices"].toArray()[0].toObject();
    const QJsonArray content = choice["logprobs"].toObject()["content"].toArray();
    QCOMPARE(content.size(), body["usage"].toObject()["completion_tokens"].toInt());
    QVERIFY(content.size() > 0);
    // The tokens' bytes make up the text; greedy picks the best alternative every time.
    QCOMPARE(check_chat_entries(content, 3), response_text(body));
    for (const auto& e : content) {
      const QJsonObject best = e.toObject()["top_logprobs"].toArray()[0].toObject();
      QCOMPARE(e.toObject()["token"].toString(), best["token"].toString());
      QCOMPARE(e.toObject()["logprob"].toDouble(), best["logprob"].toDouble());
    }
    const std::vector<double> expected = first_step_sorted(prompt);
    const QJsonArray first_top = content[0].toObject()["top_logprobs"].toArray();
    for (int i = 0; i < 3; ++i) QVERIFY(std::fabs(first_top[i].toObject()["logprob"].toDouble() - expected[i]) < 1e-4);
  }

  void sampled_logprobs_ignore_the_samplers_settings() {
    // Temperature, top-k and the repetition penalty change what is drawn, never what is reported.
    const std::string prompt = "Why fire clay?";
    QJsonObject extra = varied_sampling(7);
    extra.insert("logprobs", true);
    extra.insert("top_logprobs", 5);
    extra.insert("max_tokens", 6);
    const HttpResponse r = client().post("/v1/chat/completions", chat_body(prompt, extra));
    QCOMPARE(r.status, 200L);
    const QJsonArray content =
        json_object(r.body)["choices"].toArray()[0].toObject()["logprobs"].toObject()["content"].toArray();
    QVERIFY(!content.isEmpty());
    const std::vector<double> expected = first_step_sorted(prompt);
    const QJsonArray first_top = content[0].toObject()["top_logprobs"].toArray();
    for (int i = 0; i < 5; ++i) QVERIFY(std::fabs(first_top[i].toObject()["logprob"].toDouble() - expected[i]) < 1e-4);
  }

  void streamed_chat_logprobs_equal_the_whole_response() {
    const std::string body =
        chat_body("A glaze recipe", {{"temperature", 0}, {"max_tokens", 10}, {"logprobs", true}, {"top_logprobs", 2}});
    const QJsonArray whole = json_object(client().post("/v1/chat/completions", body).body)["choices"]
                                 .toArray()[0].toObject()["logprobs"].toObject()["content"].toArray();
    QJsonObject streamed_body = json_object(body);
    streamed_body.insert("stream", true);
    const HttpResponse r = client().post("/v1/chat/completions",
                                         QJsonDocument(streamed_body).toJson(QJsonDocument::Compact).toStdString());
    QCOMPARE(r.status, 200L);
    QJsonArray joined;
    for (const std::string& payload : sse_payloads(r.body)) {
      if (payload == "[DONE]") continue;
      const QJsonObject choice = json_object(payload)["choices"].toArray()[0].toObject();
      for (const auto& e : choice["logprobs"].toObject()["content"].toArray()) joined.append(e);
    }
    QCOMPARE(joined, whole);
    QCOMPARE(read_stream(r.body).text, check_chat_entries(joined, 2));
  }

  void without_logprobs_the_field_is_null() {
    const HttpResponse r = client().post("/v1/chat/completions", chat_body("hi", {{"max_tokens", 3}}));
    QVERIFY(json_object(r.body)["choices"].toArray()[0].toObject()["logprobs"].isNull());
  }

  void completions_use_the_legacy_shape() {
    const HttpResponse r = client().post(
        "/v1/completions", completion_body("The kiln", {{"temperature", 0}, {"max_tokens", 8}, {"logprobs", 2}}));
    QCOMPARE(r.status, 200L);
    const QJsonObject body = json_object(r.body);
    const QJsonObject lp = body["choices"].toArray()[0].toObject()["logprobs"].toObject();
    const QJsonArray tokens = lp["tokens"].toArray(), values = lp["token_logprobs"].toArray(),
                     tops = lp["top_logprobs"].toArray(), offsets = lp["text_offset"].toArray();
    const int n = body["usage"].toObject()["completion_tokens"].toInt();
    QVERIFY(n > 0);
    QCOMPARE(tokens.size(), n);
    QCOMPARE(values.size(), n);
    QCOMPARE(tops.size(), n);
    QCOMPARE(offsets.size(), n);
    std::string text;
    for (int i = 0; i < n; ++i) {
      QCOMPARE(offsets[i].toInt(), int(text.size()));
      text += tokens[i].toString().toStdString();
      const QJsonObject top = tops[i].toObject();
      QVERIFY(top.size() >= 1 && top.size() <= 2);
      // Greedy: the chosen token is among the alternatives with the same value.
      QVERIFY(top.contains(tokens[i].toString()));
      QCOMPARE(top[tokens[i].toString()].toDouble(), values[i].toDouble());
    }
    QCOMPARE(text, response_text(body));
  }

  void bad_values_are_400_naming_the_field() {
    auto param_of = [&](const std::string& path, const std::string& body) {
      const HttpResponse r = client().post(path, body);
      return std::make_pair(r.status, json_object(r.body)["error"].toObject()["param"].toString());
    };
    using P = std::pair<long, QString>;
    QCOMPARE(param_of("/v1/chat/completions", chat_body("x", {{"logprobs", true}, {"top_logprobs", 21}})),
             P(400L, "top_logprobs"));
    QCOMPARE(param_of("/v1/chat/completions", chat_body("x", {{"top_logprobs", 2}})), P(400L, "top_logprobs"));
    QCOMPARE(param_of("/v1/completions", completion_body("x", {{"logprobs", 6}})), P(400L, "logprobs"));
    QCOMPARE(param_of("/v1/completions", completion_body("x", {{"logprobs", true}})), P(400L, "logprobs"));
  }
};

QTEST_GUILESS_MAIN(ServerLogprobsTest)
#include "test_server_logprobs.moc"
