// The Hardware page's data: what the machine has (probed on the engine's thread) and the live
// series drawn while an answer is generated.
#pragma once

#include <QObject>
#include <QPointer>
#include <QQmlEngine>
#include <QVariantList>
#include <QVariantMap>

#include "engine_controller.h"

namespace kiln::gui {

class HardwareMonitor : public QObject {
  Q_OBJECT
  QML_ELEMENT
  Q_PROPERTY(kiln::gui::EngineController* engine READ engine WRITE setEngine NOTIFY engineChanged)
  Q_PROPERTY(QVariantMap info READ info NOTIFY infoChanged)
  Q_PROPERTY(bool probed READ probed NOTIFY infoChanged)
  // One point per live sample of the current (or last) answer; x is seconds since it started.
  Q_PROPERTY(QVariantList tokensPerSecond READ tokensPerSecond NOTIFY samplesChanged)
  Q_PROPERTY(QVariantList memoryMiB READ memoryMiB NOTIFY samplesChanged)
  Q_PROPERTY(QVariantList gpuBusy READ gpuBusy NOTIFY samplesChanged)  // empty when the driver hides it
  Q_PROPERTY(QString gpuBusySource READ gpuBusySource CONSTANT)        // the sysfs file read, or ""

 public:
  static constexpr int kMaxSamples = 600;  // a minute at the worker's 100 ms sampling

  explicit HardwareMonitor(QObject* parent = nullptr);

  EngineController* engine() const { return engine_; }
  void setEngine(EngineController* engine);
  QVariantMap info() const { return info_; }
  bool probed() const { return !info_.isEmpty(); }
  QVariantList tokensPerSecond() const { return tokensPerSecond_; }
  QVariantList memoryMiB() const { return memoryMiB_; }
  QVariantList gpuBusy() const { return gpuBusy_; }
  QString gpuBusySource() const { return gpuBusySource_; }

  Q_INVOKABLE void refresh();
  void addSample(const LiveSample& sample);

 signals:
  void engineChanged();
  void infoChanged();
  void samplesChanged();

 private:
  QPointer<EngineController> engine_;
  QVariantMap info_;
  QVariantList tokensPerSecond_, memoryMiB_, gpuBusy_;  // of QPointF
  quint64 samplesOf_ = 0;                                // generation id the series belong to
  QString gpuBusySource_;
};

}  // namespace kiln::gui
