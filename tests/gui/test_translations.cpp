// English and German are complete and switchable: every string of the interface has a German
// translation, and the Translator installs the compiled one embedded in the app.
#include <QCoreApplication>
#include <QFile>
#include <QTest>
#include <QXmlStreamReader>

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
