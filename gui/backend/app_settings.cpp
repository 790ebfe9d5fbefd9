#include "app_settings.h"

#include <QLocale>

namespace kiln::gui {

AppSettings::AppSettings(QObject* parent) : QObject(parent) {}

void AppSettings::store(const char* key, const QVariant& v) {
  if (settings_.contains(key) && settings_.value(key) == v) return;
  settings_.setValue(key, v);
  emit changed();
}

void AppSettings::storeChoice(const char* key, const QString& v, std::initializer_list<const char*> allowed) {
  for (const char* choice : allowed)
    if (v == QLatin1String(choice)) return store(key, v);
  qWarning("AppSettings: ignoring %s = \"%s\"", key, qPrintable(v));  // a QML typo, not user input
}

void AppSettings::setPrecision(const QString& v) { storeChoice("load/precision", v, {"fp16", "int8", "int4"}); }
void AppSettings::setBackend(const QString& v) { storeChoice("load/backend", v, {"auto", "vulkan", "cpu"}); }
void AppSettings::setNpuAttention(const QString& v) { storeChoice("load/npu_attention", v, {"auto", "on", "off"}); }
void AppSettings::setTheme(const QString& v) { storeChoice("ui/theme", v, {"light", "dark"}); }

QString AppSettings::loadSignature() const {
  return QStringLiteral("%1|%2|%3|%4|%5").arg(precision(), backend(), npuAttention()).arg(contextLength()).arg(threads());
}

QString AppSettings::language() const {
  // First start: follow the system when it speaks a language the app has.
  const QString system = QLocale::system().language() == QLocale::German ? QStringLiteral("de") : QStringLiteral("en");
  return value("ui/language", system).toString();
}

void AppSettings::setLanguage(const QString& v) { storeChoice("ui/language", v, {"en", "de"}); }

void AppSettings::addRecentModel(const QString& path) {
  if (path.isEmpty()) return;
  QStringList recent = recentModels();
  recent.removeAll(path);
  recent.prepend(path);
  while (recent.size() > kMaxRecentModels) recent.removeLast();
  store("models/recent", recent);
}

void AppSettings::removeRecentModel(const QString& path) {
  QStringList recent = recentModels();
  if (recent.removeAll(path) > 0) store("models/recent", recent);
}

}  // namespace kiln::gui
