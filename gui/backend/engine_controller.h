// The GUI thread's handle on the engine: owns the worker thread, forwards requests as queued
// calls and turns the worker's answers into properties QML binds to. Nothing here blocks.
#pragma once

#include <QObject>
#include <QQmlEngine>
#include <QThread>
#include <QVariantMap>
#include <optional>
#include <stop_token>

#include "engine_messages.h"
#include "local_server.h"
#include "remote_worker.h"

namespace kiln::gui {

class EngineWorker;

class EngineController : public QObject {
  Q_OBJECT
  QML_ELEMENT
  Q_PROPERTY(Status status READ status NOTIFY statusChanged)
  Q_PROPERTY(bool modelLoaded READ modelLoaded NOTIFY statusChanged)
  Q_PROPERTY(bool loading READ loading NOTIFY statusChanged)
  Q_PROPERTY(bool generating READ generating NOTIFY statusChanged)
  Q_PROPERTY(QString loadingPath READ loadingPath NOTIFY statusChanged)
  Q_PROPERTY(QString loadStage READ loadStage NOTIFY loadProgressChanged)
  Q_PROPERTY(double loadFraction READ loadFraction NOTIFY loadProgressChanged)
  Q_PROPERTY(QVariantMap modelInfo READ modelInfo NOTIFY modelInfoChanged)
  Q_PROPERTY(QString loadedSignature READ loadedSignature NOTIFY modelInfoChanged)
  Q_PROPERTY(QString lastError READ lastError NOTIFY lastErrorChanged)
  // The model lastError is about ("" when it is not about a load): its page shows the error, the
  // others do not. A failed load keeps the model that was loaded before it.
  Q_PROPERTY(QString failedPath READ failedPath NOTIFY lastErrorChanged)
  Q_PROPERTY(bool profiling READ profiling WRITE setProfiling NOTIFY profilingChanged)
  // The local API server serves the loaded model while serverEnabled; it stops for a reload.
  Q_PROPERTY(bool serverAvailable READ serverAvailable CONSTANT)
  Q_PROPERTY(bool serverEnabled READ serverEnabled WRITE setServerEnabled NOTIFY serverChanged)
  Q_PROPERTY(int serverPort READ serverPort WRITE setServerPort NOTIFY serverChanged)
  Q_PROPERTY(bool serverRunning READ serverRunning NOTIFY serverChanged)
  Q_PROPERTY(QString serverUrl READ serverUrl NOTIFY serverChanged)
  Q_PROPERTY(QString serverError READ serverError NOTIFY serverChanged)
  // The model in use is a remote endpoint's (useRemote): chats go there, nothing is loaded here.
  Q_PROPERTY(bool remote READ remote NOTIFY modelInfoChanged)

 public:
  enum Status { Empty, Loading, Ready, Generating };
  Q_ENUM(Status)

  explicit EngineController(QObject* parent = nullptr);
  // Stops any generation or load, then waits for the worker thread: closing mid-answer is safe.
  ~EngineController() override;

  Status status() const { return status_; }
  bool modelLoaded() const { return status_ == Ready || status_ == Generating; }
  bool loading() const { return status_ == Loading; }
  bool generating() const { return status_ == Generating; }
  QString loadingPath() const { return loadingPath_; }
  QString loadStage() const { return loadStage_; }
  double loadFraction() const { return loadFraction_; }
  QVariantMap modelInfo() const { return modelInfo_; }
  QString loadedSignature() const { return loadedSignature_; }
  QString lastError() const { return lastError_; }
  QString failedPath() const { return failedPath_; }
  bool profiling() const { return profiling_; }
  void setProfiling(bool enabled);
  static bool serverAvailable() { return LocalServerHost::available(); }
  bool serverEnabled() const { return serverEnabled_; }
  void setServerEnabled(bool enabled);
  int serverPort() const { return serverPort_; }
  void setServerPort(int port);
  bool serverRunning() const { return server_.running(); }
  QString serverUrl() const { return server_.url(); }
  QString serverError() const { return serverError_; }
  bool remote() const { return remote_.has_value(); }

  // precision: fp16/int8/int4; backend: auto/vulkan/cpu; attention: auto/on/off.
  // signature: the caller's summary of these choices, kept to tell when a reload is needed.
  Q_INVOKABLE void load(const QString& path, const QString& precision, const QString& backend,
                        const QString& attention, int contextLength, int threads,
                        const QString& signature = {});
  Q_INVOKABLE void cancelLoad();
  Q_INVOKABLE void unload();
  Q_INVOKABLE void inspect(const QString& path);
  Q_INVOKABLE void probeHardware();
  // Ends the running generation now; its finished() arrives with stop reason "cancelled".
  Q_INVOKABLE void stop();
  // Answers come from `model` at an OpenAI-compatible endpoint from now on (a local model is
  // unloaded, to give its memory back); ready at once, as the endpoint holds the model. load()
  // or unload() ends it.
  Q_INVOKABLE void useRemote(const QString& url, const QString& apiKey, const QString& model);

  // Starts a chat generation and returns its id (0 when no model is ready or one is running).
  quint64 startChat(std::vector<kiln::ChatMessage> messages, kiln::GenerateOptions options);

 signals:
  void statusChanged();
  void loadProgressChanged();
  void modelInfoChanged();
  void lastErrorChanged();
  void profilingChanged();
  void serverChanged();
  void loaded(const QVariantMap& info);
  void loadFailed(const QString& message);
  void inspected(const QString& path, const QVariantMap& info);
  void inspectFailed(const QString& path, const QString& message);
  void hardwareProbed(const kiln::HardwareInfo& info);
  void textArrived(quint64 id, const QString& text);
  void liveSample(const kiln::gui::LiveSample& sample);
  void generationFinished(quint64 id, const kiln::GenerationStats& stats);
  void generationFailed(quint64 id, const QString& message);


 private:
  void setStatus(Status status);
  // Starts or stops the API server to match serverEnabled and whether a model is ready.
  void updateServer();
  void setError(const QString& message, const QString& failedPath = {});
  void onLoaded(const kiln::ModelInfo& info);
  void onLoadFailed(const QString& message, bool previousKept);
  void onFinished(quint64 id, const kiln::GenerationStats& stats);
  void onFailed(quint64 id, const QString& message);
  // Back from a remote model to none (load() and unload() then go on as usual).
  void endRemote();

  QThread thread_;
  QThread remoteThread_;
  RemoteWorker* remoteWorker_ = nullptr;  // lives on remoteThread_
  std::optional<RemoteTarget> remote_;
  LocalServerHost server_;          // declared after thread_: destroyed (stopped) before it
  kiln::ModelInfo loadedInfo_;
  bool serverEnabled_ = false;
  int serverPort_ = 8080;
  QString serverError_;
  EngineWorker* worker_ = nullptr;  // lives on thread_, deleted there when it finishes
  Status status_ = Empty;
  QString loadingPath_, pendingSignature_, loadStage_, loadedSignature_, lastError_, failedPath_;
  double loadFraction_ = 0;
  QVariantMap modelInfo_;
  bool profiling_ = false;
  int pendingLoads_ = 0;  // loads sent to the worker and not yet answered; only the last counts
  quint64 nextId_ = 1, activeId_ = 0;
  std::optional<std::stop_source> loadStop_, generationStop_;
};

}  // namespace kiln::gui
