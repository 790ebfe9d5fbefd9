#include "profile_report.h"

#include <QDateTime>
#include <QDir>
#include <QJsonDocument>
#include <QPointF>
#include <QSaveFile>
#include <QStandardPaths>
#include <QUrl>
#include <algorithm>
#include <map>

#include "chrome_trace.h"
#include "engine_facts.h"

namespace kiln::gui {

ProfileReport::ProfileReport(QObject* parent) : QObject(parent) {}

void ProfileReport::setEngine(EngineController* engine) {
  if (engine_ == engine) return;
  if (engine_) disconnect(engine_, nullptr, this, nullptr);
  engine_ = engine;
  if (engine_)
    connect(engine_, &EngineController::generationFinished, this,
            [this](quint64, const kiln::GenerationStats& stats) { setGeneration(stats); });
  emit engineChanged();
}

void ProfileReport::setGeneration(const kiln::GenerationStats& stats) {
  last_ = stats;
  hasGeneration_ = true;
  stats_ = statsToMap(stats);

  struct Total { double micros = 0; uint64_t calls = 0; std::string device; };
  std::map<std::string, Total> totals;
  double profiled = 0;
  for (const auto& op : stats.profile) {
    Total& t = totals[op.op];
    t.micros += op.micros;
    t.calls += op.calls;
    if (t.device.empty()) t.device = op.device;
    else if (t.device != op.device && t.device.find(op.device) == std::string::npos) t.device += "+" + op.device;
    profiled += op.micros;
  }
  std::vector<std::pair<std::string, Total>> ordered(totals.begin(), totals.end());
  std::stable_sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) { return a.second.micros > b.second.micros; });
  opTotals_.clear();
  opNames_.clear();
  for (const auto& [op, t] : ordered) {
    opNames_ << QString::fromStdString(op);
    opTotals_ << QVariantMap{{"op", QString::fromStdString(op)}, {"ms", t.micros / 1000.0},
                             {"share", profiled > 0 ? t.micros / profiled : 0.0},
                             {"calls", static_cast<double>(t.calls)}, {"device", QString::fromStdString(t.device)}};
  }

  std::map<int, std::map<std::string, double>> byLayer;
  for (const auto& op : stats.profile) byLayer[op.layer][op.op] += op.micros;
  layers_.clear();
  for (const auto& [layer, ops] : byLayer) {
    QVariantList segments;
    double layerMicros = 0;
    for (const auto& [op, _] : ordered) {  // same order as the legend
      const auto it = ops.find(op);
      if (it == ops.end()) continue;
      segments << QVariantMap{{"op", QString::fromStdString(op)}, {"ms", it->second / 1000.0}};
      layerMicros += it->second;
    }
    layers_ << QVariantMap{{"layer", layer},
                           {"label", layer < 0 ? tr("other") : QString::number(layer)},
                           {"ms", layerMicros / 1000.0},
                           {"segments", segments}};
  }

  tokenRates_.clear();
  for (size_t i = 1; i < stats.token_times_ms.size(); ++i) {
    const double gap = stats.token_times_ms[i] - stats.token_times_ms[i - 1];
    if (gap > 0) tokenRates_ << QPointF(static_cast<double>(i + 1), 1000.0 / gap);
  }
  emit reportChanged();
}

QString ProfileReport::exportChromeTrace(const QString& target) const {
  if (!hasGeneration_) return tr("Nothing to export yet: generate an answer first.");
  const QUrl url(target);
  QString path = url.isLocalFile() ? url.toLocalFile() : target;
  // A name typed without the extension still gets a file the trace viewers open.
  if (!path.endsWith(QStringLiteral(".json"), Qt::CaseInsensitive)) path += QStringLiteral(".json");
  const QString model = engine_ ? engine_->modelInfo().value(QStringLiteral("name")).toString() : QString();
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly)) return tr("%1: cannot be written (%2)").arg(path, file.errorString());
  file.write(QJsonDocument(chromeTrace(last_, model)).toJson(QJsonDocument::Compact));
  if (!file.commit()) return tr("%1: cannot be written (%2)").arg(path, file.errorString());
  return {};
}

QUrl ProfileReport::suggestedTraceFile() const {
  QString folder = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
  if (folder.isEmpty() || !QDir(folder).exists()) folder = QDir::homePath();
  const QString name = QStringLiteral("kiln-trace-%1.json")
                           .arg(QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss")));
  return QUrl::fromLocalFile(QDir(folder).filePath(name));
}

}  // namespace kiln::gui
