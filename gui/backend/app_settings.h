// The user's choices, kept with QSettings (~/.config/kiln/kiln-desktop.conf on Linux).
// One instance per window, created in QML; every property writes through at once.
#pragma once

#include <QObject>
#include <QQmlEngine>
#include <QSettings>
#include <QStringList>

#include "kiln/types.h"

namespace kiln::gui {

class AppSettings : public QObject {
  Q_OBJECT
  QML_ELEMENT
  // Loading: changes here need a reload, which loadSignature tells apart.
  Q_PROPERTY(QString precision READ precision WRITE setPrecision NOTIFY changed)          // auto / fp16 / int8 / int4
  Q_PROPERTY(QString backend READ backend WRITE setBackend NOTIFY changed)                // auto / vulkan / cpu
  Q_PROPERTY(QString npuAttention READ npuAttention WRITE setNpuAttention NOTIFY changed)  // auto / on / off
  Q_PROPERTY(int contextLength READ contextLength WRITE setContextLength NOTIFY changed)  // 0: model default
  Q_PROPERTY(int threads READ threads WRITE setThreads NOTIFY changed)                    // 0: all cores
  Q_PROPERTY(QString loadSignature READ loadSignature NOTIFY changed)
  // Sampling for new answers. Each is undefined in QML until the user sets it: the answer then
  // takes the loaded model's own default (its generation_config.json), as LM Studio does.
  // Assigning undefined (or useModelDefaults()) goes back to the model's value.
  Q_PROPERTY(QVariant temperature READ temperature WRITE setTemperature RESET resetTemperature NOTIFY changed)
  Q_PROPERTY(QVariant topK READ topK WRITE setTopK RESET resetTopK NOTIFY changed)
  Q_PROPERTY(QVariant topP READ topP WRITE setTopP RESET resetTopP NOTIFY changed)
  Q_PROPERTY(QVariant minP READ minP WRITE setMinP RESET resetMinP NOTIFY changed)
  Q_PROPERTY(QVariant repeatPenalty READ repeatPenalty WRITE setRepeatPenalty RESET resetRepeatPenalty NOTIFY changed)
  Q_PROPERTY(int maxTokens READ maxTokens WRITE setMaxTokens NOTIFY changed)
  // The local API server.
  Q_PROPERTY(bool serverEnabled READ serverEnabled WRITE setServerEnabled NOTIFY changed)
  Q_PROPERTY(int serverPort READ serverPort WRITE setServerPort NOTIFY changed)
  // Downloads: a Hugging Face token for gated repositories ("" = HF_TOKEN from the environment).
  Q_PROPERTY(QString hfToken READ hfToken WRITE setHfToken NOTIFY changed)
  // Downloads go into the Hugging Face cache's layout (shared with Python tools and llama.cpp).
  Q_PROPERTY(bool hubSharedCache READ hubSharedCache WRITE setHubSharedCache NOTIFY changed)
  // Appearance and the window.
  Q_PROPERTY(QString language READ language WRITE setLanguage NOTIFY changed)  // en / de
  Q_PROPERTY(QString theme READ theme WRITE setTheme NOTIFY changed)           // light / dark
  Q_PROPERTY(bool profiling READ profiling WRITE setProfiling NOTIFY changed)
  // The old way to send: Ctrl+Enter sends and Enter starts a new line (by default Enter sends).
  Q_PROPERTY(bool ctrlEnterSends READ ctrlEnterSends WRITE setCtrlEnterSends NOTIFY changed)
  Q_PROPERTY(int windowWidth READ windowWidth WRITE setWindowWidth NOTIFY changed)
  Q_PROPERTY(int windowHeight READ windowHeight WRITE setWindowHeight NOTIFY changed)
  // Models.
  Q_PROPERTY(QStringList recentModels READ recentModels NOTIFY changed)
  Q_PROPERTY(QString lastModel READ lastModel WRITE setLastModel NOTIFY changed)

 public:
  static constexpr int kMaxRecentModels = 8;

  explicit AppSettings(QObject* parent = nullptr);

  // auto: a GGUF as its file stores it (a folder: int8), what users of llama.cpp and LM Studio expect.
  QString precision() const { return value("load/precision", "auto").toString(); }
  void setPrecision(const QString& v);
  QString backend() const { return value("load/backend", "auto").toString(); }
  void setBackend(const QString& v);
  QString npuAttention() const { return value("load/npu_attention", "auto").toString(); }
  void setNpuAttention(const QString& v);
  int contextLength() const { return value("load/context_length", 0).toInt(); }
  void setContextLength(int v) { store("load/context_length", qMax(0, v)); }
  int threads() const { return value("load/threads", 0).toInt(); }
  void setThreads(int v) { store("load/threads", qMax(0, v)); }
  QString loadSignature() const;

  // Sampling: an invalid QVariant is "model default"; setting an invalid or null one resets.
  QVariant temperature() const { return sampling(kTemperature); }
  void setTemperature(const QVariant& v) { setSampling(kTemperature, v); }
  void resetTemperature() { setSampling(kTemperature, {}); }
  QVariant topK() const { return sampling(kTopK); }
  void setTopK(const QVariant& v) { setSampling(kTopK, v); }
  void resetTopK() { setSampling(kTopK, {}); }
  QVariant topP() const { return sampling(kTopP); }
  void setTopP(const QVariant& v) { setSampling(kTopP, v); }
  void resetTopP() { setSampling(kTopP, {}); }
  QVariant minP() const { return sampling(kMinP); }
  void setMinP(const QVariant& v) { setSampling(kMinP, v); }
  void resetMinP() { setSampling(kMinP, {}); }
  QVariant repeatPenalty() const { return sampling(kRepeatPenalty); }
  void setRepeatPenalty(const QVariant& v) { setSampling(kRepeatPenalty, v); }
  void resetRepeatPenalty() { setSampling(kRepeatPenalty, {}); }
  // Every sampling setting back to the model's default.
  Q_INVOKABLE void useModelDefaults();
  // What the user set, for GenerateOptions::sampling; the rest stays unset (the model's default).
  kiln::SamplingChoice samplingChoice() const;
  // 0 (the default): until the model ends its turn, capped only by the context.
  int maxTokens() const { return value("sampling/max_tokens", 0).toInt(); }
  void setMaxTokens(int v) { store("sampling/max_tokens", qBound(0, v, 1 << 20)); }

  bool serverEnabled() const { return value("server/enabled", false).toBool(); }
  void setServerEnabled(bool v) { store("server/enabled", v); }
  int serverPort() const { return value("server/port", 8080).toInt(); }
  void setServerPort(int v) { store("server/port", qBound(1, v, 65535)); }

  QString hfToken() const { return value("hub/token", QString()).toString(); }
  void setHfToken(const QString& v) { store("hub/token", v.trimmed()); }
  bool hubSharedCache() const { return value("hub/sharedCache", false).toBool(); }
  void setHubSharedCache(bool v) { store("hub/sharedCache", v); }

  QString language() const;
  void setLanguage(const QString& v);
  QString theme() const { return value("ui/theme", "light").toString(); }
  void setTheme(const QString& v);
  bool profiling() const { return value("ui/profiling", false).toBool(); }
  void setProfiling(bool v) { store("ui/profiling", v); }
  bool ctrlEnterSends() const { return value("chat/ctrl_enter_sends", false).toBool(); }
  void setCtrlEnterSends(bool v) { store("chat/ctrl_enter_sends", v); }
  int windowWidth() const { return value("window/width", 1180).toInt(); }
  void setWindowWidth(int v) { store("window/width", qMax(640, v)); }
  int windowHeight() const { return value("window/height", 760).toInt(); }
  void setWindowHeight(int v) { store("window/height", qMax(480, v)); }

  QStringList recentModels() const { return value("models/recent", QStringList()).toStringList(); }
  QString lastModel() const { return value("models/last", QString()).toString(); }
  void setLastModel(const QString& path) { store("models/last", path); }
  // Puts `path` first in the recent list (kept to kMaxRecentModels).
  Q_INVOKABLE void addRecentModel(const QString& path);
  Q_INVOKABLE void removeRecentModel(const QString& path);

 signals:
  // One signal for all: settings change rarely and QML re-reads cheaply.
  void changed();

 private:
  struct SamplingKey {
    const char* key;
    double low, high;
    bool integer;
    double oldDefault;  // the fixed default before "model default" existed (see migrateSampling)
  };
  static constexpr SamplingKey kTemperature{"sampling/temperature", 0.0, 2.0, false, 0.8};
  static constexpr SamplingKey kTopK{"sampling/top_k", 0, 1 << 20, true, 40};
  static constexpr SamplingKey kTopP{"sampling/top_p", 0.0, 1.0, false, 0.95};
  static constexpr SamplingKey kMinP{"sampling/min_p", 0.0, 1.0, false, 0.05};
  static constexpr SamplingKey kRepeatPenalty{"sampling/repeat_penalty", 1.0, 2.0, false, 1.1};  // 1: off

  QVariant value(const char* key, const QVariant& fallback) const { return settings_.value(key, fallback); }
  QVariant sampling(const SamplingKey& k) const;
  void setSampling(const SamplingKey& k, const QVariant& v);
  void migrateSampling();
  void store(const char* key, const QVariant& v);
  void storeChoice(const char* key, const QString& v, std::initializer_list<const char*> allowed);

  QSettings settings_;
};

}  // namespace kiln::gui
