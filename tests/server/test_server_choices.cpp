// n > 1 over loopback: every choice has its index, choice i is what the engine samples with seed + i
// (so a seeded request is reproducible), and the stream carries the same choices.
#include <curl/curl.h>

#include <QJsonDocument>
#include <QtTest>
#include <map>
#include <set>

#include "server_fixture.h"

using namespace kiln;
using namespace kiln::test;

namespace {

constexpr int kContext = 256;
constexpr int kSeed = 11;

}  // namespace

class ServerChoicesTest : public QObject {
  Q_OBJECT

  std::unique_ptr<RunningServer> s_;
  std::unique_ptr<Engine> reference_;
  const HttpClient& client() const { return *s_->client; }

  std::string reference_chat(const std::string& prompt, int seed, int max_tokens, int* generated = nullptr) {
    GenerateOptions o;
    o.sampling = SamplingChoice::exactly(varied_sampling_params(seed));
    o.max_tokens = max_tokens;
    std::string text;
    const GenerationStats stats = reference_->chat({{Role::User, prompt}}, o, [&](std::string_view t) { text += t; return true; });
    if (generated) *generated = stats.generated_tokens;
    return text;
  }
  static QJsonObject choices_request(int n, bool stream = false) {
    QJsonObject extra = varied_sampling(kSeed);
    extra.insert("n", n);
    extra.insert("max_tokens", 10);
    if (stream) extra.insert("stream", true);
    return extra;
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

  void each_choice_is_the_engines_answer_with_seed_plus_index() {
    const std::string prompt = "Three ways to fire a pot";
    const HttpResponse r = client().post("/v1/chat/completions", chat_body(prompt, choices_request(3)));
    QCOMPARE(r.status, 200L);
    const QJsonObject body = json_object(r.body);
    const QJsonArray choices = body["choices"].toArray();
    QCOMPARE(choices.size(), 3);
    int generated_total = 0;
    std::set<std::string> distinct;
    for (int i = 0; i < 3; ++i) {
      const QJsonObject choice = choices[i].toObject();
      QCOMPARE(choice["index"].toInt(), i);
      int generated = 0;
      const std::string expected = reference_chat(prompt, kSeed + i, 10, &generated);
      QCOMPARE(choice["message"].toObject()["content"].toString().toStdString(), expected);
      generated_total += generated;
      distinct.insert(expected);
    }
    QVERIFY(distinct.size() > 1);  // the seeds differ, so do the answers
    const QJsonObject usage = body["usage"].toObject();
    QCOMPARE(usage["completion_tokens"].toInt(), generated_total);
    QCOMPARE(usage["prompt_tokens"].toInt(), int(reference_->chat_tokens({{Role::User, prompt}}).size()));
    // Reproducible: the same request again gives the same choices.
    QCOMPARE(json_object(client().post("/v1/chat/completions", chat_body(prompt, choices_request(3))).body)["choices"],
             body["choices"]);
  }

  void the_stream_carries_the_same_choices() {
    const std::string prompt = "Glazes";
    const QJsonArray whole =
        json_object(client().post("/v1/chat/completions", chat_body(prompt, choices_request(3))).body)["choices"].toArray();
    const HttpResponse r = client().post("/v1/chat/completions", chat_body(prompt, choices_request(3, true)));
    QCOMPARE(r.status, 200L);
    std::map<int, std::string> text;
    std::map<int, int> roles, finishes;
    int last_index = 0;
    for (const std::string& payload : sse_payloads(r.body)) {
      if (payload == "[DONE]") continue;
      const QJsonObject choice = json_object(payload)["choices"].toArray()[0].toObject();
      const int index = choice["index"].toInt();
      QVERIFY(index >= last_index);  // choices come one after another
      last_index = index;
      const QJsonObject delta = choice["delta"].toObject();
      if (delta["role"].toString() == "assistant") ++roles[index];
      text[index] += delta["content"].toString().toStdString();
      if (choice["finish_reason"].isString()) {
        ++finishes[index];
        QCOMPARE(choice["finish_reason"].toString(), whole[index].toObject()["finish_reason"].toString());
      }
    }
    for (int i = 0; i < 3; ++i) {
      QCOMPARE(roles[i], 1);
      QCOMPARE(finishes[i], 1);
      QCOMPARE(text[i], whole[i].toObject()["message"].toObject()["content"].toString().toStdString());
    }
  }

  void completions_take_n_too() {
    QJsonObject extra = varied_sampling(kSeed);
    extra.insert("n", 2);
    extra.insert("max_tokens", 6);
    const HttpResponse r = client().post("/v1/completions", completion_body("The kiln", extra));
    QCOMPARE(r.status, 200L);
    const QJsonArray choices = json_object(r.body)["choices"].toArray();
    QCOMPARE(choices.size(), 2);
    for (int i = 0; i < 2; ++i) {
      QCOMPARE(choices[i].toObject()["index"].toInt(), i);
      GenerateOptions o;
      o.sampling = SamplingChoice::exactly(varied_sampling_params(kSeed + i));
      o.max_tokens = 6;
      std::string expected;
      reference_->generate("The kiln", o, [&](std::string_view t) { expected += t; return true; });
      QCOMPARE(choices[i].toObject()["text"].toString().toStdString(), expected);
    }
  }
};

QTEST_GUILESS_MAIN(ServerChoicesTest)
#include "test_server_choices.moc"
