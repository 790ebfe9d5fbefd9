// kiln-desktop: loads the Kiln QML module; everything else is created from Main.qml.
#include <QGuiApplication>
#include <QLocale>
#include <QQmlApplicationEngine>
#include <QQuickStyle>
#include <QUrl>
#include <QtQml/QQmlExtensionPlugin>

#include "app_settings.h"
#include "launch_options.h"

Q_IMPORT_QML_PLUGIN(KilnPlugin)
Q_IMPORT_QML_PLUGIN(Kiln_UiPlugin)

int main(int argc, char* argv[]) {
  QGuiApplication app(argc, argv);
  // Settings: ~/.config/kiln/kiln-desktop.conf; conversations: ~/.local/share/kiln/kiln-desktop/.
  QGuiApplication::setOrganizationName(QStringLiteral("kiln"));
  QGuiApplication::setApplicationName(QStringLiteral("kiln-desktop"));
  QGuiApplication::setApplicationDisplayName(QStringLiteral("Kiln"));
  QGuiApplication::setApplicationVersion(QStringLiteral(KILN_VERSION));
  QGuiApplication::setDesktopFileName(QStringLiteral("kiln-desktop"));
  // The app draws its own look on the Basic style, the one every platform has and that
  // follows the palette the theme sets.
  QQuickStyle::setStyle(QStringLiteral("Basic"));
  // Numbers and sizes follow the interface language from the first frame (the QML Translator
  // switches it later when the user changes the language).
  const kiln::gui::LaunchOptions launch;
  const QString language = launch.language().isEmpty() ? kiln::gui::AppSettings().language() : launch.language();
  QLocale::setDefault(QLocale(language));

  QQmlApplicationEngine engine;
  engine.addImportPath(QStringLiteral("qrc:/"));  // the static modules' qmldir files live there
  engine.load(QUrl(QStringLiteral("qrc:/Kiln/Main.qml")));
  if (engine.rootObjects().isEmpty()) return 1;
  return QGuiApplication::exec();
}
