#include "app_settings.h"

#include <QLocale>

namespace kiln::gui {

namespace {

// "sampling/version": 2 once unset sampling settings mean "the model's default".
constexpr int kSamplingVersion = 2;

}  // namespace

AppSettings::AppSettings(QObject* parent) : QObject(parent) { migrateSampling(); }

// Before version 2 every sampling setting had a fixed default (temperature 0.8, top-k 40, top-p
// 0.95, min-p 0.05, repeat penalty 1.1), and a saved value equal to it is almost always that
// default written back rather than a choice. Such values are dropped, once, so existing users get
// the model's own defaults like new ones; any other value was the user's choice and stays. The
// marker keeps a value the user sets later (0.8 included) from being taken for an old default.
// A repeat penalty of 1.0 is dropped too: it is "off", which is the engine's old default and the
// model default of every released Gemma 3, so nothing changes for those who chose it.
void AppSettings::migrateSampling() {
  if (settings_.value("sampling/version", 1).toInt() >= kSamplingVersion) return;
  for (const SamplingKey& k : {kTemperature, kTopK, kTopP, kMinP, kRepeatPenalty}) {
    if (!settings_.contains(k.key)) continue;
    const double saved = settings_.value(k.key).toDouble();
    const bool penaltyOff = QLatin1String(k.key) == QLatin1String(kRepeatPenalty.key) && qAbs(saved - 1.0) < 1e-6;
    if (qAbs(saved - k.oldDefault) < 1e-6 || penaltyOff) settings_.remove(k.key);
  }
  settings_.setValue("sampling/version", kSamplingVersion);
}

QVariant AppSettings::sampling(const SamplingKey& k) const {
  if (!settings_.contains(k.key)) return {};
  // INI files hold text: hand QML a number, not the string "0.8".
  const QVariant saved = settings_.value(k.key);
  return k.integer ? QVariant(saved.toInt()) : QVariant(saved.toDouble());
}

void AppSettings::setSampling(const SamplingKey& k, const QVariant& v) {
  if (!v.isValid() || v.isNull()) {
    if (!settings_.contains(k.key)) return;
    settings_.remove(k.key);
    emit changed();
    return;
  }
  bool ok = false;
  const double number = v.toDouble(&ok);
  if (!ok) {
    qWarning("AppSettings: ignoring %s = \"%s\"", k.key, qPrintable(v.toString()));  // a QML mistake
    return;
  }
  const double bounded = qBound(k.low, number, k.high);
  store(k.key, k.integer ? QVariant(qRound(bounded)) : QVariant(bounded));
}

void AppSettings::useModelDefaults() {
  for (const SamplingKey& k : {kTemperature, kTopK, kTopP, kMinP, kRepeatPenalty}) setSampling(k, {});
}

kiln::SamplingChoice AppSettings::samplingChoice() const {
  kiln::SamplingChoice choice;
  const auto real = [this](const SamplingKey& k) -> std::optional<float> {
    const QVariant v = sampling(k);
    return v.isValid() ? std::optional<float>(static_cast<float>(v.toDouble())) : std::nullopt;
  };
  choice.temperature = real(kTemperature);
  choice.top_p = real(kTopP);
  choice.min_p = real(kMinP);
  choice.repeat_penalty = real(kRepeatPenalty);
  if (const QVariant k = topK(); k.isValid()) choice.top_k = k.toInt();
  return choice;  // repeat_last_n and seed: the app has no setting for them
}

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

void AppSettings::setPrecision(const QString& v) { storeChoice("load/precision", v, {"auto", "fp32", "fp16", "int8", "int4"}); }
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
