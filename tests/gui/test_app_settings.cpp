// AppSettings' sampling settings: "model default" (unset) until the user sets one, kept across
// restarts, what QML reads and writes, and the one-time migration of the old fixed defaults.
// (That unset settings reach the engine as the model's defaults: test_chat_controller.)
#include <QQmlComponent>
#include <QQmlEngine>
#include <QSettings>
#include <QTemporaryDir>
#include <QTest>

#include "app_settings.h"
#include "gui_test_support.h"

using kiln::gui::AppSettings;

namespace {

const char* const kSamplingNames[] = {"temperature", "topK", "topP", "minP", "repeatPenalty"};

}  // namespace

class TestAppSettings : public QObject {
  Q_OBJECT

  QTemporaryDir home_;

 private slots:
  void initTestCase() {
    QVERIFY(home_.isValid());
    kiln::gui::test::useScratchHome(home_);
  }

  void init() { QSettings().clear(); }  // every test a first start

  void aFirstStartUsesTheModelsDefaults() {
    AppSettings fresh;
    for (const char* name : kSamplingNames) QVERIFY2(!fresh.property(name).isValid(), name);
    const kiln::SamplingChoice choice = fresh.samplingChoice();
    QVERIFY(!choice.temperature && !choice.top_k && !choice.top_p && !choice.min_p && !choice.repeat_penalty);
    QVERIFY(!choice.repeat_last_n && !choice.seed);
    QCOMPARE(fresh.precision(), QStringLiteral("auto"));  // a GGUF as its file stores it
    fresh.setPrecision(QStringLiteral("int4"));
    QCOMPARE(AppSettings().precision(), QStringLiteral("int4"));
    fresh.setPrecision(QStringLiteral("q3_k"));  // not a choice: ignored
    QCOMPARE(AppSettings().precision(), QStringLiteral("int4"));
  }

  void aSetValueIsKeptWithinBoundsAndAcrossRestarts() {
    {
      AppSettings settings;
      settings.setTemperature(3.0);
      settings.setTopK(-5);
      settings.setMinP(0.1);
    }
    AppSettings restarted;
    QCOMPARE(restarted.temperature(), QVariant(2.0));
    QCOMPARE(restarted.topK(), QVariant(0));
    QCOMPARE(restarted.minP(), QVariant(0.1));
    QVERIFY(!restarted.topP().isValid());
    const kiln::SamplingChoice choice = restarted.samplingChoice();
    QVERIFY(choice.temperature && *choice.temperature == 2.0f);
    QVERIFY(choice.top_k && *choice.top_k == 0);
    QVERIFY(choice.min_p && *choice.min_p == 0.1f);
    QVERIFY(!choice.top_p && !choice.repeat_penalty);

    restarted.resetTemperature();
    QVERIFY(!AppSettings().temperature().isValid());  // back to the model's, and saved so
    QVERIFY(!QSettings().contains("sampling/temperature"));
    restarted.useModelDefaults();
    for (const char* name : kSamplingNames) QVERIFY2(!AppSettings().property(name).isValid(), name);
  }

  // The Settings page's side: unset reads as undefined, a value as a number, and assigning
  // undefined goes back to the model's default.
  void qmlReadsUndefinedAndResetsWithIt() {
    AppSettings settings;
    QQmlEngine engine;
    QQmlComponent component(&engine);
    component.setData(R"(import QtQml
QtObject {
    property var settings
    function shown() {
        const t = settings.temperature
        return t === undefined ? "model default" : typeof t + " " + t
    }
    function set(v) { settings.temperature = v }
    function reset() { settings.temperature = undefined }
})", QUrl());
    const QVariantMap properties{{"settings", QVariant::fromValue(&settings)}};
    std::unique_ptr<QObject> page(component.createWithInitialProperties(properties));
    QVERIFY2(page, qPrintable(component.errorString()));
    const auto shown = [&] {
      QVariant result;
      QMetaObject::invokeMethod(page.get(), "shown", Q_RETURN_ARG(QVariant, result));
      return result.toString();
    };
    QCOMPARE(shown(), QStringLiteral("model default"));
    QMetaObject::invokeMethod(page.get(), "set", Q_ARG(QVariant, 0.5));
    QCOMPARE(shown(), QStringLiteral("number 0.5"));
    QCOMPARE(settings.temperature(), QVariant(0.5));
    QMetaObject::invokeMethod(page.get(), "reset");
    QCOMPARE(shown(), QStringLiteral("model default"));
    QVERIFY(!settings.temperature().isValid());
  }

  // Settings saved by the version before "model default" hold the old fixed defaults: those mean
  // "not chosen" and give way to the model's; values the user chose stay. Only once: a value set
  // afterwards is kept even where it equals an old default.
  void oldDefaultsBecomeModelDefaults() {
    {
      QSettings old;
      old.setValue("sampling/temperature", "0.8");  // as the old version's INI file held it: text
      old.setValue("sampling/top_k", 40);
      old.setValue("sampling/top_p", 0.95);
      old.setValue("sampling/min_p", 0.05);
      old.setValue("sampling/repeat_penalty", 1.1);
      old.setValue("sampling/max_tokens", 300);
    }
    AppSettings migrated;
    for (const char* name : kSamplingNames) QVERIFY2(!migrated.property(name).isValid(), name);
    QCOMPARE(migrated.maxTokens(), 300);  // not a sampling choice: untouched

    QSettings().clear();
    {
      QSettings old;
      old.setValue("sampling/temperature", "0.3");
      old.setValue("sampling/top_k", 20);
      old.setValue("sampling/min_p", 0.05);
      old.setValue("sampling/repeat_penalty", 1.0);  // "off": what every Gemma 3 release has anyway
    }
    AppSettings chosen;
    QCOMPARE(chosen.temperature(), QVariant(0.3));  // a number for QML, not the text "0.3"
    QCOMPARE(chosen.topK(), QVariant(20));
    QVERIFY(!chosen.minP().isValid());
    QVERIFY(!chosen.repeatPenalty().isValid());

    chosen.setTemperature(0.8);  // now the user's choice, though it equals the old default
    chosen.setTopK(40);
    AppSettings restarted;
    QCOMPARE(restarted.temperature().toDouble(), 0.8);
    QCOMPARE(restarted.topK().toInt(), 40);
  }
};

QTEST_GUILESS_MAIN(TestAppSettings)
#include "test_app_settings.moc"
