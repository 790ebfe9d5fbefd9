// The app's window as kiln-desktop creates it (Main.qml, offscreen): Ctrl+Q closes it as its
// close button would, so the app quits and the window's size is saved.
#include <QQmlApplicationEngine>
#include <QQuickStyle>
#include <QQuickWindow>
#include <QTemporaryDir>
#include <QTest>
#include <QtQml/QQmlExtensionPlugin>

#include "gui_test_support.h"

Q_IMPORT_QML_PLUGIN(KilnPlugin)
Q_IMPORT_QML_PLUGIN(Kiln_UiPlugin)

class TestMainWindow : public QObject {
  Q_OBJECT

  QTemporaryDir home_;

 private slots:
  void initTestCase() {
    QVERIFY(home_.isValid());
    kiln::gui::test::useScratchHome(home_);
    QCoreApplication::setOrganizationName(QStringLiteral("kiln"));
    QCoreApplication::setApplicationName(QStringLiteral("kiln-desktop"));
    QQuickStyle::setStyle(QStringLiteral("Basic"));
  }

  void ctrlQClosesTheWindow() {
    QQmlApplicationEngine engine;
    engine.addImportPath(QStringLiteral("qrc:/"));
    engine.load(QUrl(QStringLiteral("qrc:/Kiln/Main.qml")));
    QCOMPARE(engine.rootObjects().size(), 1);
    auto* window = qobject_cast<QQuickWindow*>(engine.rootObjects().first());
    QVERIFY(window);
    QVERIFY(QTest::qWaitForWindowExposed(window));
    window->requestActivate();
    QVERIFY(window->isVisible());
    QTest::keyClick(window, Qt::Key_Q, Qt::ControlModifier);
    QTRY_VERIFY_WITH_TIMEOUT(!window->isVisible(), 5000);
  }
};

QTEST_MAIN(TestMainWindow)
#include "test_main_window.moc"
