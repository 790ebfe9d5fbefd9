// kiln-desktop itself, offscreen: it opens the fixture model, sends a message, shows the answer
// and saves a screenshot. The answer is checked three ways: the app reports it finished, the
// saved conversation holds it, and the text on screen includes it.
#include <QDir>
#include <QFile>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>

#include "kiln/engine.h"

namespace {

struct Run {
  int exitCode = -1;
  QStringList lines;  // stdout: "kiln-desktop: <what> <detail>"
  QString errors;     // stderr, for failure messages
};

// Short answers keep the test quick; everything else as a first start, unless `more` says.
void writeSettings(const QTemporaryDir& home, const QByteArray& more) {
  QDir().mkpath(home.filePath("config/kiln"));
  QFile conf(home.filePath("config/kiln/kiln-desktop.conf"));
  if (conf.open(QIODevice::WriteOnly)) conf.write("[sampling]\nmax_tokens=64\n" + more);
}

Run runApp(const QTemporaryDir& home, const QStringList& arguments, const QByteArray& settings = {}) {
  writeSettings(home, settings);
  QProcess app;
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.insert("QT_QPA_PLATFORM", "offscreen");
  env.insert("XDG_DATA_HOME", home.filePath("data"));      // conversations go here
  env.insert("XDG_CONFIG_HOME", home.filePath("config"));  // and settings here
  env.insert("KILN_HF_ENDPOINT", "http://127.0.0.1:9");    // the hub: never the network in a test
  app.setProcessEnvironment(env);
  app.start(QStringLiteral(KILN_DESKTOP_BINARY), arguments);
  Run run;
  if (!app.waitForFinished(150000)) {
    app.kill();
    app.waitForFinished();
  }
  run.exitCode = app.exitStatus() == QProcess::NormalExit ? app.exitCode() : -1;
  run.lines = QString::fromUtf8(app.readAllStandardOutput()).split('\n', Qt::SkipEmptyParts);
  run.errors = QString::fromUtf8(app.readAllStandardError());
  return run;
}

QStringList reported(const Run& run, const QString& what) {
  QStringList details;
  const QString prefix = "kiln-desktop: " + what + " ";
  for (const QString& line : run.lines)
    if (line.startsWith(prefix)) details << line.mid(prefix.size()).replace("\\n", "\n");
  return details;
}

int distinctColours(const QImage& image) {
  QSet<QRgb> colours;
  for (int y = 0; y < image.height(); y += 4)
    for (int x = 0; x < image.width(); x += 4) colours.insert(image.pixel(x, y));
  return colours.size();
}

}  // namespace

class TestDesktopApp : public QObject {
  Q_OBJECT

 private slots:
  void answersAMessageAndShowsIt() {
    QTemporaryDir home;
    const QString shot = QStringLiteral(KILN_BINARY_DIR "/gui-test-chat.png");
    QFile::remove(shot);
    const Run run = runApp(home, {"--model", KILN_TEST_DATA "/fixtures/tiny-gemma3-a", "--prompt",
                                  "Hello from the test", "--screenshot", shot, "--quit"});
    QVERIFY2(run.exitCode == 0, qPrintable(run.lines.join('\n') + run.errors));
    QCOMPARE(reported(run, "loaded").size(), 1);
    QCOMPARE(reported(run, "answer").size(), 1);

    // The saved conversation: the question and the answer (the fixture's random weights write
    // mostly blank lines, so "non-empty" is all that can be said of its text).
    const QDir conversations(home.filePath("data/kiln/kiln-desktop/conversations"));
    const QStringList files = conversations.entryList({"*.json"}, QDir::Files);
    QCOMPARE(files.size(), 1);
    QFile file(conversations.filePath(files.first()));
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QJsonArray messages = QJsonDocument::fromJson(file.readAll()).object().value("messages").toArray();
    QCOMPARE(messages.size(), 2);
    QCOMPARE(messages[0].toObject().value("text").toString(), QStringLiteral("Hello from the test"));
    const QJsonObject answer = messages[1].toObject();
    QVERIFY(!answer.value("text").toString().isEmpty());
    QVERIFY(answer.value("stats").toObject().value("generated_tokens").toInt() > 0);

    // On screen: the question, and under the answer its numbers.
    const QStringList visible = reported(run, "visible-text");
    QVERIFY2(visible.contains("Hello from the test"), qPrintable(visible.join(" | ")));
    const int tokens = answer.value("stats").toObject().value("generated_tokens").toInt();
    QVERIFY2(!visible.filter(QRegularExpression(QStringLiteral("^%1 tokens? .*tokens/s").arg(tokens))).isEmpty(),
             qPrintable(visible.join(" | ")));

    // The screenshot: the whole window, and a real picture rather than a blank.
    QCOMPARE(reported(run, "screenshot"), QStringList{shot});
    const QImage image(shot);
    QVERIFY(!image.isNull());
    QVERIFY(image.width() >= 900 && image.height() >= 580);
    QVERIFY2(distinctColours(image) > 20, "the screenshot has content");
  }

  void theBundledModelOpensByItselfAndItsAnswerIsReadable() {
    if (kiln::default_model_path().empty()) QSKIP("this build has no bundled model");
    QTemporaryDir home;
    const QString shot = QStringLiteral(KILN_BINARY_DIR "/gui-test-bundled.png");
    const Run run = runApp(home, {"--prompt", "And God said", "--screenshot", shot, "--quit"});
    QVERIFY2(run.exitCode == 0, qPrintable(run.lines.join('\n') + run.errors));
    QCOMPARE(reported(run, "loaded").size(), 1);  // no --model: the bundled one

    const QDir conversations(home.filePath("data/kiln/kiln-desktop/conversations"));
    QFile file(conversations.filePath(conversations.entryList({"*.json"}, QDir::Files).value(0)));
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QString answer =
        QJsonDocument::fromJson(file.readAll()).object().value("messages").toArray()[1].toObject().value("text").toString();
    // The demo model writes words; the start of its answer is rendered as text on screen.
    const QString start = answer.simplified().left(40);
    QVERIFY2(start.size() >= 10, qPrintable(answer));
    bool rendered = false;
    for (const QString& text : reported(run, "visible-text")) rendered |= text.simplified().startsWith(start);
    QVERIFY2(rendered, qPrintable("answer: " + start + "\nvisible: " + reported(run, "visible-text").join(" | ")));
  }

  // Sampling the user never set shows the loaded model's value, labelled as its default (the
  // fixture has no generation_config.json: Kiln's defaults), and the Models page offers where
  // each setting came from.
  void settingsShowTheModelsDefaultsAndTheirOrigins() {
    QTemporaryDir home;
    const QString fixture = QStringLiteral(KILN_TEST_DATA "/fixtures/tiny-gemma3-a");
    const Run settings = runApp(home, {"--model", fixture, "--page", "settings", "--screenshot",
                                       home.filePath("settings.png"), "--quit"});
    QVERIFY2(settings.exitCode == 0, qPrintable(settings.lines.join('\n') + settings.errors));
    const QStringList onSettings = reported(settings, "visible-text");
    for (const char* shown : {"0.80 (model default)", "0.95 (model default)", "0.05 (model default)"})
      QVERIFY2(onSettings.contains(shown), qPrintable(QString(shown) + " not in: " + onSettings.join(" | ")));

    // A tall window: the section is under the model's facts.
    const Run models = runApp(home, {"--model", fixture, "--page", "models", "--screenshot",
                                     home.filePath("models.png"), "--quit"}, "[window]\nheight=1400\n");
    QVERIFY2(models.exitCode == 0, qPrintable(models.lines.join('\n') + models.errors));
    const QStringList onModels = reported(models, "visible-text");
    QVERIFY2(!onModels.filter(QRegularExpression("^Where these settings come from \\(\\d+\\)$")).isEmpty(),
             qPrintable(onModels.join(" | ")));
  }

  // The Hardware page says in plain words what runs the model, the window is named after the
  // conversation and the model, and no command-line flag shows anywhere.
  void theHardwarePageSaysWhatRunsTheModel() {
    QTemporaryDir home;
    const QString fixture = QStringLiteral(KILN_TEST_DATA "/fixtures/tiny-gemma3-a");
    const Run run = runApp(home, {"--model", fixture, "--prompt", "Which device?", "--page", "hardware", "--screenshot",
                                  home.filePath("hardware.png"), "--quit"});
    QVERIFY2(run.exitCode == 0, qPrintable(run.lines.join('\n') + run.errors));
    const QStringList visible = reported(run, "visible-text");
    QVERIFY2(!visible.filter(QRegularExpression("^tiny-gemma3-a runs on: CPU, \\d+ threads?$")).isEmpty(),
             qPrintable(visible.join(" | ")));
    QVERIFY2(visible.filter("--").isEmpty(), qPrintable(visible.filter("--").join(" | ")));
    const QStringList title = reported(run, "window-title");
    QCOMPARE(title.size(), 1);
    QVERIFY2(title.first().endsWith(" — tiny-gemma3-a — Kiln"), qPrintable(title.first()));

    // Vulkan chosen by hand where the only Vulkan device is the CPU (lavapipe): it runs, named so.
    if (!visible.contains("software Vulkan (slow, for testing)")) return;  // a real GPU here
    const Run chosen = runApp(home, {"--model", fixture, "--page", "hardware", "--screenshot", home.filePath("vk.png"), "--quit"},
                              "[load]\nbackend=vulkan\n");
    QVERIFY2(chosen.exitCode == 0, qPrintable(chosen.lines.join('\n') + chosen.errors));
    const QStringList onVulkan = reported(chosen, "visible-text");
    QVERIFY2(!onVulkan.filter(QRegularExpression("^tiny-gemma3-a runs on: software Vulkan \\(slow, for testing\\): .+")).isEmpty(),
             qPrintable(onVulkan.join(" | ")));
    QVERIFY(onVulkan.contains("runs the model"));
  }

  // In German, no page shows English sentences or English-style numbers ("1,024" beside "0,95").
  void germanPagesShowNoEnglish() {
    QTemporaryDir home;
    const QString fixture = QStringLiteral(KILN_TEST_DATA "/fixtures/tiny-gemma3-a");
    static const QRegularExpression englishWords(QString::fromUtf8("\\b(the|is|and|of|to|on|not|no|used|loaded|runs|with)\\b"));
    static const QRegularExpression englishThousands(QString::fromUtf8("\\b\\d{1,3},\\d{3}\\b"));
    QStringList english;
    for (const char* page : {"hardware", "settings", "models", "profiler", "catalogue"}) {
      // The profiler shows its numbers after an answer.
      const QStringList answer = QString(page) == "profiler" ? QStringList{"--prompt", "Hallo"} : QStringList{};
      const Run en = runApp(home, QStringList{"--model", fixture, "--page", page, "--screenshot", home.filePath("en.png"),
                                              "--quit"} + answer, "[window]\nheight=1400\n");
      const Run de = runApp(home, QStringList{"--model", fixture, "--page", page, "--language", "de", "--screenshot",
                                              home.filePath("de.png"), "--quit"} + answer, "[window]\nheight=1400\n");
      QVERIFY2(de.exitCode == 0 && en.exitCode == 0, qPrintable(de.lines.join('\n') + de.errors));
      const QStringList inEnglish = reported(en, "visible-text");
      for (const QString& text : reported(de, "visible-text")) {
        // The same sentence in both languages, or an English number: not translated.
        if ((inEnglish.contains(text) && text.contains(englishWords)) || text.contains(englishThousands) ||
            text.contains(QLatin1String(" --")))
          english << QStringLiteral("%1: %2").arg(page, text);
      }
    }
    QVERIFY2(english.isEmpty(), qPrintable(english.join('\n')));
  }

  void aMissingModelOpensTheModelsPageWithTheReason() {
    QTemporaryDir home;
    const QString missing = home.filePath("no-such-model");
    QDir().mkpath(missing);
    QFile config(missing + "/config.json");  // looks like a model folder, but is not one
    QVERIFY(config.open(QIODevice::WriteOnly));
    config.write("{}");
    config.close();
    const Run run = runApp(home, {"--model", missing, "--page", "models", "--screenshot",
                                  home.filePath("models.png"), "--quit"});
    QCOMPARE(reported(run, "load-failed").size(), 1);
    QVERIFY(reported(run, "load-failed").first().contains(missing));
    QVERIFY2(run.exitCode == 2, qPrintable(run.lines.join('\n') + run.errors));
    // The reason is on screen, not only in a log.
    const QStringList visible = reported(run, "visible-text");
    QVERIFY2(!visible.filter(missing).isEmpty(), qPrintable(visible.join(" | ")));
  }
};

QTEST_GUILESS_MAIN(TestDesktopApp)
#include "test_desktop_app.moc"
