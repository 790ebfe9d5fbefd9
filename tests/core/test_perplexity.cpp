// `kiln perplexity` on the bundled demo model and its held-out text, run as users run it (the CLI):
// the model is really trained, Kiln's F32 figure is the one transformers computes
// (tests/data/demo-reference.json), and Q8_0 / Q4_0 cost what the issue allows.
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <filesystem>

namespace {

const QString kModel = QStringLiteral(KILN_TEST_DATA "/../../resources/models/kiln-demo");
const QString kHeldout = QStringLiteral(KILN_TEST_DATA "/demo-heldout.txt");
const QString kKiln = QStringLiteral(KILN_BINARY_DIR "/core/cli/kiln");

struct Result {
  int exit_code = -1;
  QByteArray out, err;
};

Result run_kiln(const QStringList& args) {
  QProcess p;
  p.start(kKiln, args);
  Result r;
  if (!p.waitForFinished(240'000)) {
    p.kill();
    p.waitForFinished();
    r.err = "kiln did not finish in 240 s";
    return r;
  }
  r.exit_code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
  r.out = p.readAllStandardOutput();
  r.err = p.readAllStandardError();
  return r;
}

QJsonObject perplexity_json(const QStringList& extra) {
  const Result r =
      run_kiln(QStringList{"perplexity", "--model", kModel, "--backend", "cpu", "--threads", "2", "--json"} + extra);
  if (r.exit_code != 0) qWarning("kiln failed (%d): %s", r.exit_code, r.err.constData());
  return QJsonDocument::fromJson(r.out).object();
}

// transformers' figure for windows of `ctx` tokens, from the reference file.
QJsonObject transformers_perplexity(int ctx) {
  QFile f(QStringLiteral(KILN_TEST_DATA "/demo-reference.json"));
  if (!f.open(QIODevice::ReadOnly)) qFatal("cannot open demo-reference.json");
  const QJsonObject root = QJsonDocument::fromJson(f.readAll()).object();
  for (const QJsonValue& v : root["heldout"].toObject()["perplexity"].toArray())
    if (v.toObject()["ctx"].toInt() == ctx) return v.toObject();
  return {};
}

// A failure is one line on stderr that says what is wrong, and a non-zero exit.
void expect_error(const QStringList& args, const QString& must_mention) {
  const Result r = run_kiln(QStringList{"perplexity", "--model", kModel, "--backend", "cpu"} + args);
  const QString err = QString::fromUtf8(r.err).trimmed();
  QVERIFY2(r.exit_code == 1, qPrintable(QString("exit %1: %2").arg(r.exit_code).arg(err)));
  QVERIFY2(err.contains(must_mention), qPrintable(err));
  QVERIFY2(!err.contains('\n'), qPrintable(err));
  QVERIFY(r.out.isEmpty());
}

}  // namespace

class Perplexity : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  double f32_excerpt_ = 0;
  QString excerpt_;  // the held-out text's first 8 KB: enough to compare precisions, in a fifth of the time

 private slots:
  void initTestCase() {
    QVERIFY2(std::filesystem::exists(kKiln.toStdString()),
             "the kiln CLI is not built: build the `kiln` target before this test");
    QFile in(kHeldout);
    QVERIFY(in.open(QIODevice::ReadOnly));
    const QByteArray text = in.readAll();
    const qsizetype cut = text.indexOf('\n', 8000) + 1;  // whole verses, about 2000 tokens
    excerpt_ = dir_.filePath("excerpt.txt");
    QFile out(excerpt_);
    QVERIFY(out.open(QIODevice::WriteOnly));
    out.write(text.left(cut));
  }

  // The whole held-out text at the default window: the model is really trained, and Kiln's F32
  // figure is transformers' figure for the same windows.
  void f32_matches_transformers() {
    const QJsonObject r = perplexity_json({"--file", kHeldout, "--precision", "f32"});
    QVERIFY2(!r.isEmpty(), "no JSON on stdout");
    const QJsonObject reference = transformers_perplexity(512);
    QVERIFY(!reference.isEmpty());
    QCOMPARE(r["ctx"].toInt(), 512);  // the default window
    QCOMPARE(r["tokens"].toInt(), reference["scored_tokens"].toInt());
    const double ours = r["perplexity"].toDouble(), transformers = reference["perplexity"].toDouble();
    qInfo("held-out perplexity: transformers %.4f, kiln f32 %.4f (%.1f s)", transformers, ours,
          r["seconds"].toDouble());
    QVERIFY(ours < 60);  // far below the 4096-piece vocabulary
    // Same windows, same weights, float32 both: equal to rounding.
    QVERIFY2(std::abs(ours / transformers - 1) < 1e-4, qPrintable(QString::number(ours)));
  }

  void q8_0_is_within_2_percent_of_f32() {
    const QJsonObject r = perplexity_json({"--file", excerpt_, "--precision", "q8_0", "--kl-reference", "f32"});
    const double f32 = r["reference_perplexity"].toDouble(), q8 = r["perplexity"].toDouble();
    const double kl = r["kl_divergence"].toDouble(), top1 = r["top1_agreement"].toDouble();
    qInfo("excerpt of %d tokens: f32 %.4f, q8_0 %.4f, KL %.6f, top-1 %.4f", r["tokens"].toInt(), f32, q8, kl, top1);
    QCOMPARE(r["precision"].toString(), QString("q8_0"));
    QVERIFY(f32 > 1 && r["tokens"].toInt() > 1500);
    QVERIFY2(std::abs(q8 / f32 - 1) < 0.02, qPrintable(QString::number(q8)));
    QVERIFY(kl >= 0 && kl < 0.05);
    QVERIFY(top1 > 0.9 && top1 <= 1.0);
    f32_excerpt_ = f32;
  }

  void q4_0_is_within_15_percent_of_f32() {
    QVERIFY(f32_excerpt_ > 0);
    const QJsonObject r = perplexity_json({"--file", excerpt_, "--precision", "q4_0"});
    const double q4 = r["perplexity"].toDouble();
    qInfo("excerpt: q4_0 %.4f against f32 %.4f", q4, f32_excerpt_);
    QCOMPARE(r["precision"].toString(), QString("q4_0"));
    QVERIFY2(std::abs(q4 / f32_excerpt_ - 1) < 0.15, qPrintable(QString::number(q4)));
    QVERIFY(!r.contains("kl_divergence"));  // only with --kl-reference
  }

  void bad_input_is_a_one_line_error() {
    QTemporaryDir dir;
    const QString short_text = dir.filePath("short.txt");
    QFile f(short_text);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("In the beginning God created the heaven and the earth.\n");
    f.close();
    expect_error({"--file", "/nonexistent/heldout.txt"}, "/nonexistent/heldout.txt");
    expect_error({"--file", short_text}, "short.txt");
    expect_error({"--file", kHeldout, "--ctx", "4096"}, "--ctx");
    expect_error({"--file", kHeldout, "--kl-reference", "q3_k"}, "q3_k");
    expect_error({"--file", kHeldout, "--precision", "f8"}, "f8");
  }
};

QTEST_GUILESS_MAIN(Perplexity)
#include "test_perplexity.moc"
