// Images on the command line: `kiln run --image FILE` and `kiln chat`'s /image command, on the tiny
// vision model (the answer is the engine's own for the same turn) and every way a user gets it
// wrong (a missing file, a text-only model, --raw), each a one-line error naming the file; the chat
// keeps going after a bad image.
#include <QProcess>
#include <QtTest>

#include "kiln/engine.h"

namespace {

struct Run {
  int code;
  QString out, err;
};

Run kiln_cli(const QStringList& args, const QByteArray& input = {}) {
  QProcess p;
  p.start(QString(KILN_BINARY_DIR) + "/core/cli/kiln", args);
  if (!input.isEmpty()) p.write(input);
  p.closeWriteChannel();
  if (!p.waitForFinished(120000)) qFatal("kiln did not finish");
  return {p.exitCode(), QString::fromUtf8(p.readAllStandardOutput()), QString::fromUtf8(p.readAllStandardError())};
}

QString vision_model() { return QString(KILN_TEST_DATA) + "/vision"; }
QString exact_png() { return vision_model() + "/exact.png"; }
QString text_model() { return QString(KILN_TEST_DATA) + "/fixtures/tiny-gemma3-a"; }

QStringList model_args(const QString& command, const QString& model) {
  return {command, "--model", model, "--backend", "cpu", "--precision", "f32", "--threads", "1", "--ctx", "256"};
}

// The tiny models' random weights make greedy text all newlines; these make it varied enough that
// a different or missing answer shows.
const QStringList kVaried{"--temperature", "1.5", "--top-k", "0", "--top-p", "1", "--min-p", "0",
                          "--repeat-penalty", "1.5", "--seed", "11"};

}  // namespace

class CliImages : public QObject {
  Q_OBJECT
 private slots:
  void run_refuses_bad_images_in_one_line() {
    struct Case {
      QStringList args;
      QString says;
    };
    const Case cases[] = {
        {model_args("run", text_model()) + QStringList{"--image", "/no/such/cat.png", "--prompt", "hi"}, "/no/such/cat.png"},
        {model_args("run", text_model()) + QStringList{"--image", QString(KILN_TEST_DATA), "--prompt", "hi"}, KILN_TEST_DATA},
        {model_args("run", text_model()) + QStringList{"--image", exact_png(), "--prompt", "hi"}, "cannot see images"},
        {model_args("run", vision_model()) + QStringList{"--raw", "--image", exact_png(), "--prompt", "hi"}, "--raw"},
    };
    for (const Case& c : cases) {
      const Run r = kiln_cli(c.args);
      QVERIFY2(r.code != 0, qPrintable(c.args.join(' ')));
      const QString err = r.err.section('\n', -2).trimmed();  // the last line; notes may come before
      QVERIFY2(err.contains(c.says), qPrintable(r.err + " lacks " + c.says));
    }
  }

  void chat_keeps_going_after_a_bad_image() {
    // A missing file is refused at /image; an image the model cannot see fails that turn only.
    const Run r = kiln_cli(model_args("chat", text_model()) + kVaried + QStringList{"-n", "8"},
                           "/image /no/such/cat.png\n/image " + exact_png().toUtf8() + "\nWhat is this?\nhello\n\n");
    QCOMPARE(r.code, 0);
    QVERIFY2(r.err.contains("/no/such/cat.png: cannot open"), qPrintable(r.err));
    QVERIFY2(r.err.contains("attached " + exact_png()), qPrintable(r.err));
    QVERIFY2(r.err.contains("cannot see images"), qPrintable(r.err));
    // The turn after the failed one is answered, with the image gone.
    QVERIFY2(!r.out.trimmed().isEmpty(), qPrintable(r.err));
  }

  // ---- the tiny vision model (needs the engine's vision path) ----

  void run_with_an_image_answers_as_the_engine_does() {
    const Run r = kiln_cli(model_args("run", vision_model()) + kVaried +
                           QStringList{"-n", "8", "--image", exact_png(), "--prompt", "What is this?"});
    QVERIFY2(r.code == 0, qPrintable(r.err));

    kiln::LoadOptions load;
    load.path = vision_model().toStdString();
    load.precision = kiln::Precision::F32;
    load.backend = kiln::BackendKind::Cpu;
    load.context_length = 256;
    load.threads = 1;
    auto engine = kiln::Engine::load(load);
    QFile png(exact_png());
    QVERIFY(png.open(QIODevice::ReadOnly));
    kiln::GenerateOptions o;
    o.sampling.temperature = 1.5f;  // kVaried
    o.sampling.top_k = 0;
    o.sampling.top_p = 1.0f;
    o.sampling.min_p = 0.0f;
    o.sampling.repeat_penalty = 1.5f;
    o.sampling.seed = 11;
    o.max_tokens = 8;
    std::string expected;
    engine->chat({{kiln::Role::User, "What is this?", {{"exact.png", png.readAll().toStdString()}}}}, o,
                 [&](std::string_view t) { expected += t; return true; });
    QVERIFY(!QString::fromStdString(expected).trimmed().isEmpty());
    QCOMPARE(r.out, QString::fromStdString(expected) + "\n");
  }

  void chat_attaches_an_image_to_the_next_message() {
    const Run with = kiln_cli(model_args("chat", vision_model()) + kVaried + QStringList{"-n", "8"},
                              "/image " + exact_png().toUtf8() + "\nWhat is this?\n\n");
    QVERIFY2(with.code == 0 && !with.err.contains("error"), qPrintable(with.err));
    QVERIFY2(with.err.contains("attached"), qPrintable(with.err));
    const Run run = kiln_cli(model_args("run", vision_model()) + kVaried +
                             QStringList{"-n", "8", "--image", exact_png(), "--prompt", "What is this?"});
    QVERIFY2(run.code == 0, qPrintable(run.err));
    QVERIFY(!run.out.trimmed().isEmpty());
    QCOMPARE(with.out, run.out);  // the same turn as `kiln run --image`
    // Without the image the same turn answers otherwise: the image reached the model.
    const Run plain = kiln_cli(model_args("run", vision_model()) + kVaried + QStringList{"-n", "8", "--prompt", "What is this?"});
    QVERIFY(plain.out != run.out);
  }
};

QTEST_GUILESS_MAIN(CliImages)
#include "test_cli_images.moc"
