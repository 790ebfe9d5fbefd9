// generation_config.json as transformers writes it: end ids, and sampling defaults that follow
// transformers' own meaning of do_sample.
#include <QtTest>

#include "kiln/types.h"
#include "model/generation_config.h"

using kiln::GenerationConfig;

namespace {

GenerationConfig parse(const char* text) { return kiln::parse_generation_config(text, "generation_config.json"); }

}  // namespace

class GenerationConfigTest : public QObject {
  Q_OBJECT
 private slots:
  // Gemma 3's released file.
  void releasedGemma3() {
    const GenerationConfig g = parse(R"({"bos_token_id": 2, "cache_implementation": "hybrid", "do_sample": true,
      "eos_token_id": [1, 106], "pad_token_id": 0, "top_k": 64, "top_p": 0.95, "transformers_version": "4.50.0.dev0"})");
    QCOMPARE(g.eos_token_ids, (std::vector<int>{1, 106}));
    const kiln::SamplingParams p = g.sampling.over(kiln::SamplingParams{});
    QCOMPARE(p.temperature, 1.0f);  // transformers' default once do_sample is on
    QCOMPARE(p.top_k, 64);
    QCOMPARE(p.top_p, 0.95f);
    QCOMPARE(p.min_p, 0.0f);
    QCOMPARE(p.repeat_penalty, 1.0f);
    QVERIFY(!g.sampling.seed && !g.sampling.repeat_last_n);  // not the file's to set
  }

  void greedyAndPartialFiles() {
    const GenerationConfig greedy = parse(R"({"do_sample": false, "temperature": 0.7, "eos_token_id": 1})");
    QCOMPARE(greedy.sampling.temperature.value(), 0.0f);
    QCOMPARE(greedy.eos_token_ids, (std::vector<int>{1}));
    // Without do_sample only what is given is taken; the rest stays the caller's or Kiln's.
    const GenerationConfig partial = parse(R"({"temperature": 0.6})");
    QCOMPARE(partial.sampling.temperature.value(), 0.6f);
    QVERIFY(!partial.sampling.top_k && !partial.sampling.top_p && !partial.sampling.min_p);
    QCOMPARE(partial.sampling.over(kiln::SamplingParams{}).top_k, kiln::SamplingParams{}.top_k);
    QVERIFY(parse("{}").eos_token_ids.empty());
  }

  void badInput_data() {
    QTest::addColumn<QByteArray>("json");
    QTest::addColumn<QString>("mentions");
    QTest::newRow("not json") << QByteArray("{") << "not valid JSON";
    QTest::newRow("number past double") << QByteArray(R"({"temperature": 1e999})") << "not valid JSON";
    QTest::newRow("not an object") << QByteArray("[]") << "not a JSON object";
    QTest::newRow("eos text") << QByteArray(R"({"eos_token_id": "<eos>"})") << "eos_token_id must be a token id";
    QTest::newRow("eos negative") << QByteArray(R"({"eos_token_id": [1, -3]})") << "eos_token_id must be a token id";
    QTest::newRow("temperature text") << QByteArray(R"({"temperature": "hot"})") << "temperature must be a number";
    QTest::newRow("top_p above 1") << QByteArray(R"({"top_p": 1.5})") << "top_p must be a number from 0 to 1";
    QTest::newRow("do_sample text") << QByteArray(R"({"do_sample": "yes"})") << "do_sample must be true or false";
  }
  void badInput() {
    QFETCH(QByteArray, json);
    QFETCH(QString, mentions);
    try {
      parse(json.constData());
      QFAIL("no error");
    } catch (const kiln::Error& e) {
      const QString message = e.what();
      QVERIFY2(message.startsWith("generation_config.json: ") && message.contains(mentions), qPrintable(message));
    }
  }
};

QTEST_APPLESS_MAIN(GenerationConfigTest)
#include "test_generation_config.moc"
