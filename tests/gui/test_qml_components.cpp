// Qt Quick Test runner for the Kiln.Ui components (tst_*.qml in qml/).
#include <QQmlEngine>
#include <QQuickStyle>
#include <QtQml/QQmlExtensionPlugin>
#include <QtQuickTest>

Q_IMPORT_QML_PLUGIN(Kiln_UiPlugin)

class Setup : public QObject {
  Q_OBJECT

 public slots:
  void applicationAvailable() { QQuickStyle::setStyle(QStringLiteral("Basic")); }  // as the app
  void qmlEngineAvailable(QQmlEngine* engine) { engine->addImportPath(QStringLiteral("qrc:/")); }
};

QUICK_TEST_MAIN_WITH_SETUP(kiln_gui_qml, Setup)
#include "test_qml_components.moc"
