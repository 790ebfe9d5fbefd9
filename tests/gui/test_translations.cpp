// English and German are complete and switchable: every string of the interface has a German
// translation, every visible text in QML goes through qsTr, the engine's reasons and notes are
// said in the interface's language without command-line flags, and the Translator installs the
// compiled translation embedded in the app.
#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QRegularExpression>
#include <QTest>
#include <QXmlStreamReader>

#include "engine_facts.h"
#include "engine_wording.h"
#include "translator.h"

class TestTranslations : public QObject {
  Q_OBJECT

  // Source texts of `ts` whose translation is missing or marked unfinished.
  static QStringList untranslated(const QString& ts) {
    QFile file(ts);
    if (!file.open(QIODevice::ReadOnly)) return {"cannot open " + ts};
    QStringList missing;
    QXmlStreamReader xml(&file);
    QString source;
    while (!xml.atEnd()) {
      if (!xml.readNextStartElement()) continue;
      if (xml.name() == QLatin1String("source")) source = xml.readElementText();
      else if (xml.name() == QLatin1String("translation")) {
        const bool unfinished = xml.attributes().value("type") == QLatin1String("unfinished");
        const QString text = xml.readElementText(QXmlStreamReader::IncludeChildElements);
        if (unfinished || text.trimmed().isEmpty()) missing << source;
      }
    }
    return missing;
  }

 private slots:
  void germanIsComplete() {
    const QStringList missing = untranslated(KILN_TEST_DATA "/../../translations/kiln_de.ts");
    QVERIFY2(missing.isEmpty(), qPrintable(missing.join('\n')));
  }

  // A text property given a string literal outside qsTr() is never translated: lupdate cannot see it.
  // (Values, icon names and object names are not shown; a repository name as a placeholder is an example.)
  void everyVisibleQmlTextIsMarkedForTranslation() {
    static const QRegularExpression literal(QString::fromUtf8(
        "\\b(text|title|subtitle|label|description|placeholderText|tip|note|actionText|emptyText|unit|xLabel|defaultText|resetTip)\\s*:\\s*\"((?:[^\"\\\\]|\\\\.)*)\""));
    // On a line that sets a shown text, any multi-word literal (a ternary's branch) outside qsTr.
    static const QRegularExpression shownLine(QString::fromUtf8(
        "(^\\s*|\\{\\s*)(text|title|subtitle|label|description|placeholderText|tip|note|actionText|emptyText|value)\\s*:"));
    static const QRegularExpression anyLiteral(QString::fromUtf8("\"((?:[^\"\\\\]|\\\\.)*)\""));
    static const QRegularExpression inQsTr(QString::fromUtf8("qsTr\\(\\s*\"(?:[^\"\\\\]|\\\\.)*\""));
    static const QRegularExpression word(QString::fromUtf8("\\b[a-z]{2,}\\b"));
    static const QRegularExpression example(QString::fromUtf8("^[\\w.-]+/[\\w.-]+$"));
    QStringList bare;
    int files = 0;
    for (const char* folder : {"app", "ui"}) {
      const QDir dir(QStringLiteral(KILN_TEST_DATA "/../../gui/") + folder);
      for (const QString& name : dir.entryList({"*.qml"}, QDir::Files)) {
        QFile file(dir.filePath(name));
        QVERIFY(file.open(QIODevice::ReadOnly));
        ++files;
        int number = 0;
        for (const QString& line : QString::fromUtf8(file.readAll()).split('\n')) {
          ++number;
          if (line.trimmed().startsWith(QLatin1String("//"))) continue;
          const QString where = QStringLiteral("%1:%2: ").arg(name).arg(number);
          for (auto m = literal.globalMatch(line); m.hasNext();) {
            const QString text = m.next().captured(2);
            if (text.contains(word) && !text.contains(example)) bare << where + text;
          }
          if (!shownLine.match(line).hasMatch()) continue;
          const QString outside = QString(line).remove(inQsTr);
          for (auto m = anyLiteral.globalMatch(outside); m.hasNext();) {
            const QString text = m.next().captured(1);
            if (text.contains(' ') && text.contains(word) && !bare.contains(where + text)) bare << where + text;
          }
        }
      }
    }
    QVERIFY2(files > 20, "the QML sources were found");
    QVERIFY2(bare.isEmpty(), qPrintable("not in qsTr():\n" + bare.join('\n')));
  }

  // What the engine says about the NPU, GPUs and a load, as core/ writes it, reaches the app in
  // German, and nowhere with a command-line flag.
  void engineReasonsAreTranslatedAndFlagFree() {
    kiln::gui::Translator translator;
    translator.setLanguage("de");
    const std::vector<std::string> said = {
        "no /dev/accel device: no NPU driver is loaded (Ryzen AI NPUs need the amdxdna driver, Linux 6.14 or later)",
        "the attention kernel is built for the Phoenix NPU (npu1), not XDNA2 (Strix)",
        "cannot open /dev/accel/accel0 (add your user to the group that owns it, usually 'render')",
        "Kiln was built without XRT (the NPU needs the XRT built with AMD's xdna-driver)",
        "Kiln was built without NPU support",
        "Vulkan works but found no device (no GPU driver installed?)",
        "Vulkan not used: Vulkan: no usable device (0 llvmpipe (LLVM 19.1.7, 256 bits): a CPU implementation of Vulkan: "
        "slower than Kiln's own CPU path, used only when asked for (--device 0)); running on the CPU",
        "the Vulkan backend keeps attention on the GPU; --attention npu applies to the CPU backend (--backend cpu)",
        "NPU attention was asked for, but no NPU was found; attention runs on the cpu",
        "embedding (also the output projection) held in Q8_0",
        "the context is 24576 tokens, not the 131072 the model was trained for: what fits in RAM beside the weights",
    };
    for (const std::string& english : said) {
      const QString shown = kiln::gui::EngineWording::text(english);
      QVERIFY2(shown != QString::fromStdString(english), english.c_str());
      QVERIFY2(!shown.contains("--"), qPrintable(shown));
    }
    // A phrase the table does not know keeps its words but loses its flags.
    QCOMPARE(kiln::gui::EngineWording::text("a context of 9 tokens is too much (--ctx-force allows it)"),
             QStringLiteral("a context of 9 tokens is too much"));

    // The device a model runs on, and a software Vulkan device's reason: plain words, in German.
    QCOMPARE(kiln::gui::EngineWording::device("cpu (2 threads)"), QStringLiteral("CPU, 2 Threads"));
    const QString software = kiln::gui::EngineWording::device(std::string("vulkan (llvmpipe (LLVM 19.1.7, 256 bits), ") +
                                                              kiln::kSoftwareVulkan + ")");
    QVERIFY2(software.endsWith(": llvmpipe (LLVM 19.1.7, 256 bits)") && software.contains("Software-Vulkan"), qPrintable(software));
    kiln::HardwareInfo hw;
    kiln::GpuDevice lavapipe;
    lavapipe.name = "llvmpipe";
    lavapipe.type = "cpu";
    lavapipe.refusal = "a CPU implementation of Vulkan: slower than Kiln's own CPU path, used only when asked for (--device 0)";
    hw.gpus.push_back(lavapipe);
    hw.npu.reason = "Kiln was built without NPU support";
    const QVariantMap map = kiln::gui::hardwareInfoToMap(hw);
    const QString refusal = map["gpus"].toList().first().toMap()["refusal"].toString();
    QVERIFY2(refusal.contains("Software-Vulkan") && !refusal.contains("--"), qPrintable(refusal));
    QCOMPARE(map["npu"].toMap()["reason"].toString(),
             QCoreApplication::translate("EngineWording", "Kiln was built without NPU support"));
    QVERIFY(map["npu"].toMap()["reason"].toString() != QStringLiteral("Kiln was built without NPU support"));
    translator.setLanguage("en");
  }

  void switchingLanguageTranslatesAtOnce() {
    kiln::gui::Translator translator;
    translator.setLanguage("de");
    QCOMPARE(QCoreApplication::translate("ChatPane", "New chat"), QStringLiteral("Neuer Chat"));
    QCOMPARE(QCoreApplication::translate("Main", "Settings"), QStringLiteral("Einstellungen"));
    QCOMPARE(QCoreApplication::translate("StatsLine", "%n token(s)", nullptr, 1), QStringLiteral("1 Token"));
    QCOMPARE(QCoreApplication::translate("StatsLine", "%n token(s)", nullptr, 34), QStringLiteral("34 Tokens"));
    QCOMPARE(QLocale().toString(0.5, 'f', 2), QStringLiteral("0,50"));  // numbers follow the language

    translator.setLanguage("en");
    QCOMPARE(QCoreApplication::translate("ChatPane", "New chat"), QStringLiteral("New chat"));
    QCOMPARE(QCoreApplication::translate("StatsLine", "%n token(s)", nullptr, 1), QStringLiteral("1 token"));
    QCOMPARE(QCoreApplication::translate("StatsLine", "%n token(s)", nullptr, 34), QStringLiteral("34 tokens"));
  }
};

QTEST_GUILESS_MAIN(TestTranslations)
#include "test_translations.moc"
