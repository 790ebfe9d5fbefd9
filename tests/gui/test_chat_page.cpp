// Qt Quick Test runner for the Chat page with the real controllers (tst_*.qml in qml_app/):
// keyboard shortcuts, the export dialog, and the Settings rows this part of the app reads
// (the longest answer, a context past the model's training). Conversations and settings go to a scratch folder.
#include <QDir>
#include <QQmlContext>
#include <QQmlEngine>
#include <QQuickStyle>
#include <QtQml/QQmlExtensionPlugin>
#include <QtQuickTest>

Q_IMPORT_QML_PLUGIN(KilnPlugin)
Q_IMPORT_QML_PLUGIN(Kiln_UiPlugin)

class Setup : public QObject {
  Q_OBJECT

 public slots:
  void applicationAvailable() {
    QQuickStyle::setStyle(QStringLiteral("Basic"));  // as the app
    scratch_ = QDir::tempPath() + QStringLiteral("/kiln-test-chat-page-%1").arg(QCoreApplication::applicationPid());
    QDir(scratch_).removeRecursively();
    qputenv("XDG_DATA_HOME", (scratch_ + "/data").toUtf8());
    qputenv("XDG_CONFIG_HOME", (scratch_ + "/config").toUtf8());
  }
  void cleanupTestCase() { QDir(scratch_).removeRecursively(); }
  void qmlEngineAvailable(QQmlEngine* engine) {
    engine->addImportPath(QStringLiteral("qrc:/"));
    engine->rootContext()->setContextProperty(QStringLiteral("fixtureModel"), QStringLiteral(KILN_TEST_DATA "/fixtures/tiny-gemma3-a"));
  }

 private:
  QString scratch_;
};

QUICK_TEST_MAIN_WITH_SETUP(kiln_gui_chat_page, Setup)
#include "test_chat_page.moc"
