// The Profiler page's numbers and its Chrome trace export, on hand-made timings (where every
// figure is known) and on a real profiled answer from the fixture.
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QPointF>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "chrome_trace.h"
#include "gui_test_support.h"
#include "profile_report.h"

using namespace kiln::gui;

namespace {

// Three tokens at 40, 50 and 70 ms; two layers of matmul and attention plus the LM head.
kiln::GenerationStats handMade() {
  kiln::GenerationStats s;
  s.prompt_tokens = 5;
  s.generated_tokens = 3;
  s.total_ms = 70;
  s.stop_reason = kiln::StopReason::MaxTokens;
  s.token_times_ms = {40, 50, 70};
  s.profile = {{"matmul", 0, 3000, 9, "cpu"}, {"attention", 0, 1000, 3, "cpu"},
               {"matmul", 1, 5000, 9, "cpu"}, {"attention", 1, 1000, 3, "cpu"},
               {"lm_head", -1, 10000, 3, "cpu"}};
  return s;
}

QJsonArray eventsOf(const QJsonObject& trace, const QString& phase) {
  QJsonArray out;
  for (const QJsonValue& e : trace.value("traceEvents").toArray())
    if (e.toObject().value("ph").toString() == phase) out.append(e);
  return out;
}

}  // namespace

class TestProfileReport : public QObject {
  Q_OBJECT

 private slots:
  void totalsPerOpAndPerLayer() {
    ProfileReport report;
    report.setGeneration(handMade());
    QVERIFY(report.hasProfile());
    // By op, largest first: lm_head 10 ms, matmul 8 ms, attention 2 ms of 20 ms.
    QCOMPARE(report.opNames(), (QStringList{"lm_head", "matmul", "attention"}));
    const QVariantMap matmul = report.opTotals().at(1).toMap();
    QCOMPARE(matmul.value("ms").toDouble(), 8.0);
    QCOMPARE(matmul.value("share").toDouble(), 0.4);
    QCOMPARE(matmul.value("calls").toInt(), 18);
    // By layer: "other" (-1) first, then 0 and 1, each split by op in the legend's order.
    QCOMPARE(report.layers().size(), 3);
    const QVariantMap layer1 = report.layers().at(2).toMap();
    QCOMPARE(layer1.value("layer").toInt(), 1);
    QCOMPARE(layer1.value("ms").toDouble(), 6.0);
    const QVariantList segments = layer1.value("segments").toList();
    QCOMPARE(segments.size(), 2);
    QCOMPARE(segments[0].toMap().value("op").toString(), QStringLiteral("matmul"));
    // Tokens/s along the answer: token 2 came 10 ms after token 1, token 3 20 ms after token 2.
    const QVariantList rates = report.tokenRates();
    QCOMPARE(rates.size(), 2);
    QCOMPARE(rates[0].toPointF(), QPointF(2, 100));
    QCOMPARE(rates[1].toPointF(), QPointF(3, 50));
  }

  void chromeTraceHasTheTokensAndTheOps() {
    const QJsonObject trace = chromeTrace(handMade(), "tiny");
    QCOMPARE(trace.value("displayTimeUnit").toString(), QStringLiteral("ms"));
    const QJsonArray slices = eventsOf(trace, "X");
    double tokenMicros = 0, opMicros = 0;
    int tokenSlices = 0;
    for (const QJsonValue& v : slices) {
      const QJsonObject e = v.toObject();
      QVERIFY(e.value("ts").isDouble() && e.value("dur").isDouble() && e.value("pid").isDouble());
      if (e.value("cat").toString() == "token") {
        tokenMicros += e.value("dur").toDouble();
        ++tokenSlices;
      } else if (e.value("cat").toString() == "cpu") {
        opMicros += e.value("dur").toDouble();
      }
    }
    QCOMPARE(tokenSlices, 3);
    QCOMPARE(tokenMicros, 70000.0);  // the token slices tile the answer's 70 ms
    QCOMPARE(opMicros, 20000.0);     // every op's total appears once
    QCOMPARE(eventsOf(trace, "C").size(), 2);  // tokens/s counter after the first token
    QVERIFY(eventsOf(trace, "M").size() >= 3);  // process and thread names
  }

  void exportWritesAFileThatParses() {
    ProfileReport report;
    QTemporaryDir dir;
    QVERIFY(!report.exportChromeTrace(dir.filePath("none.json")).isEmpty());  // nothing yet: says so
    report.setGeneration(handMade());
    const QString url = QUrl::fromLocalFile(dir.filePath("trace.json")).toString();
    QCOMPARE(report.exportChromeTrace(url), QString());
    QFile file(dir.filePath("trace.json"));
    QVERIFY(file.open(QIODevice::ReadOnly));
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(file.readAll(), &error);
    QCOMPARE(error.error, QJsonParseError::NoError);
    QVERIFY(doc.object().value("traceEvents").toArray().size() > 5);
    QVERIFY(!report.exportChromeTrace(dir.filePath("no/such/folder/trace.json")).isEmpty());
    // A name typed without the extension gets ".json" (the viewers open nothing else).
    QCOMPARE(report.exportChromeTrace(dir.filePath("typed")), QString());
    QVERIFY(QFile::exists(dir.filePath("typed.json")));
    // The dialog starts at a free, dated name with the extension.
    const QUrl suggested = report.suggestedTraceFile();
    QVERIFY(suggested.isLocalFile() && suggested.fileName().startsWith("kiln-trace-") &&
            suggested.fileName().endsWith(".json"));
  }

  void aRealProfiledAnswer() {
    EngineController engine;
    engine.setProfiling(true);
    ProfileReport report;
    report.setEngine(&engine);
    QVERIFY(test::loadFixture(engine));
    QSignalSpy changed(&report, &ProfileReport::reportChanged);
    kiln::GenerateOptions options;
    options.sampling.temperature = 0;
    options.max_tokens = 12;
    QVERIFY(engine.startChat({{kiln::Role::User, "Hello"}}, options) != 0);
    QVERIFY(changed.wait(30000));
    QVERIFY(report.hasProfile());
    double shares = 0;
    for (const QVariant& op : report.opTotals()) shares += op.toMap().value("share").toDouble();
    QVERIFY(qAbs(shares - 1.0) < 1e-9);
    // Every one of the fixture's 6 layers shows up.
    int layers = 0;
    for (const QVariant& layer : report.layers()) layers += layer.toMap().value("layer").toInt() >= 0;
    QCOMPARE(layers, 6);
    QCOMPARE(report.tokenRates().size(), report.stats().value("generatedTokens").toInt() - 1);
  }
};

QTEST_GUILESS_MAIN(TestProfileReport)
#include "test_profile_report.moc"
