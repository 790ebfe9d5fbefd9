// The Profiler page's data: where the last generation's time went, per op type and per layer,
// and tokens/s over the answer; exports a Chrome trace.
#pragma once

#include <QObject>
#include <QPointer>
#include <QQmlEngine>
#include <QStringList>
#include <QUrl>
#include <QVariantList>

#include "engine_controller.h"

namespace kiln::gui {

class ProfileReport : public QObject {
  Q_OBJECT
  QML_ELEMENT
  Q_PROPERTY(kiln::gui::EngineController* engine READ engine WRITE setEngine NOTIFY engineChanged)
  Q_PROPERTY(bool hasGeneration READ hasGeneration NOTIFY reportChanged)
  Q_PROPERTY(bool hasProfile READ hasProfile NOTIFY reportChanged)
  Q_PROPERTY(QVariantMap stats READ stats NOTIFY reportChanged)
  // [{op, ms, share (0..1 of profiled time), calls, device}], largest first
  Q_PROPERTY(QVariantList opTotals READ opTotals NOTIFY reportChanged)
  // op names in the order of opTotals: the key for colours shared by the charts
  Q_PROPERTY(QStringList opNames READ opNames NOTIFY reportChanged)
  // [{label, layer, ms, segments: [{op, ms}]}] in layer order; layer -1 is outside the layers
  Q_PROPERTY(QVariantList layers READ layers NOTIFY reportChanged)
  // points (token number, tokens/s at that token)
  Q_PROPERTY(QVariantList tokenRates READ tokenRates NOTIFY reportChanged)

 public:
  explicit ProfileReport(QObject* parent = nullptr);

  EngineController* engine() const { return engine_; }
  void setEngine(EngineController* engine);
  bool hasGeneration() const { return hasGeneration_; }
  bool hasProfile() const { return !last_.profile.empty(); }
  QVariantMap stats() const { return stats_; }
  QVariantList opTotals() const { return opTotals_; }
  QStringList opNames() const { return opNames_; }
  QVariantList layers() const { return layers_; }
  QVariantList tokenRates() const { return tokenRates_; }

  void setGeneration(const kiln::GenerationStats& stats);
  // Writes the Chrome trace; `target` is a path or a file:// URL. Returns "" or the problem.
  // Writes the trace to target (a path or a file URL), adding ".json" to a name without it.
  // Returns "" or the problem.
  Q_INVOKABLE QString exportChromeTrace(const QString& target) const;
  // The Save dialog's starting point: kiln-trace-DATE-TIME.json in Documents (else home).
  Q_INVOKABLE QUrl suggestedTraceFile() const;

 signals:
  void engineChanged();
  void reportChanged();

 private:
  QPointer<EngineController> engine_;
  kiln::GenerationStats last_;
  bool hasGeneration_ = false;
  QVariantMap stats_;
  QVariantList opTotals_, layers_, tokenRates_;
  QStringList opNames_;
};

}  // namespace kiln::gui
