#include "hardware_monitor.h"

#include <QDir>
#include <QFile>
#include <QPointF>

#include "engine_facts.h"

namespace kiln::gui {

namespace {

// AMD's amdgpu (and some others) publish how busy the GPU is; NVIDIA's driver and lavapipe don't.
QString findGpuBusyFile() {
  const QDir drm(QStringLiteral("/sys/class/drm"));
  for (const QString& card : drm.entryList({QStringLiteral("card?")}, QDir::Dirs | QDir::System)) {
    const QString path = drm.filePath(card + QStringLiteral("/device/gpu_busy_percent"));
    if (QFile::exists(path)) return path;
  }
  return {};
}

void appendBounded(QVariantList& series, QPointF point) {
  series.append(point);
  if (series.size() > HardwareMonitor::kMaxSamples) series.removeFirst();
}

}  // namespace

HardwareMonitor::HardwareMonitor(QObject* parent) : QObject(parent), gpuBusySource_(findGpuBusyFile()) {}

void HardwareMonitor::setEngine(EngineController* engine) {
  if (engine_ == engine) return;
  if (engine_) disconnect(engine_, nullptr, this, nullptr);
  engine_ = engine;
  if (engine_) {
    connect(engine_, &EngineController::hardwareProbed, this, [this](const kiln::HardwareInfo& info) {
      info_ = hardwareInfoToMap(info);
      emit infoChanged();
    });
    connect(engine_, &EngineController::liveSample, this, &HardwareMonitor::addSample);
  }
  emit engineChanged();
}

void HardwareMonitor::refresh() {
  if (engine_) engine_->probeHardware();
}

void HardwareMonitor::addSample(const LiveSample& sample) {
  if (sample.id != samplesOf_) {  // a new answer: start the plots afresh
    samplesOf_ = sample.id;
    tokensPerSecond_.clear();
    memoryMiB_.clear();
    gpuBusy_.clear();
  }
  const double seconds = sample.elapsedMs / 1000.0;
  appendBounded(tokensPerSecond_, {seconds, sample.tokensPerSecond});
  appendBounded(memoryMiB_, {seconds, sample.residentBytes / (1024.0 * 1024.0)});
  if (!gpuBusySource_.isEmpty()) {
    QFile file(gpuBusySource_);
    bool ok = false;
    const double busy = file.open(QIODevice::ReadOnly) ? file.readAll().trimmed().toDouble(&ok) : 0;
    if (ok) appendBounded(gpuBusy_, {seconds, busy});
  }
  emit samplesChanged();
}

}  // namespace kiln::gui
