// The only object that touches kiln::Engine. It lives on its own QThread; the GUI talks to it
// through queued signals and gets answers the same way, so a long load or generation never
// blocks the window.
#pragma once

#include <QObject>
#include <functional>
#include <memory>
#include <optional>

#include "engine_messages.h"
#include "kiln/engine.h"

namespace kiln::gui {

class EngineWorker : public QObject {
  Q_OBJECT

 public:
  explicit EngineWorker(QObject* parent = nullptr);
  ~EngineWorker() override;

 public slots:
  void load(const kiln::gui::LoadRequest& request);
  void unload();
  void inspect(const QString& path);
  void chat(const kiln::gui::ChatRequest& request);
  void probeHardware();
  void setProfiling(bool enabled);
  // A task of the local API server: runs one request on the engine (dropped when none is loaded;
  // the server is stopped before any unload, so only leftovers of a stopped server land there).
  void runTask(const std::function<void(kiln::Engine&)>& task);

 signals:
  void loadProgress(const QString& stage, double fraction);
  void loaded(const kiln::ModelInfo& info);
  // previousKept: the model loaded before is still loaded (the new one was refused before it was
  // let go, or it was loaded again after the new one failed).
  void loadFailed(const QString& message, bool previousKept);
  void inspected(const QString& path, const kiln::ModelInfo& info);
  void inspectFailed(const QString& path, const QString& message);
  void textArrived(quint64 id, const QString& text);
  void liveSample(const kiln::gui::LiveSample& sample);
  void finished(quint64 id, const kiln::GenerationStats& stats);
  void failed(quint64 id, const QString& message);
  void hardwareProbed(const kiln::HardwareInfo& info);

 private:
  // The engine for `request`; loading progress is reported unless `quiet`.
  std::unique_ptr<kiln::Engine> open(const kiln::gui::LoadRequest& request, bool quiet);

  std::unique_ptr<kiln::Engine> engine_;
  std::optional<kiln::gui::LoadRequest> loadedRequest_;  // what engine_ was loaded with
  bool profiling_ = false;
};

}  // namespace kiln::gui
