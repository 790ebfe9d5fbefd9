#include "engine_controller.h"

#include <QUrl>
#include <utility>

#include "engine_facts.h"
#include "engine_worker.h"

namespace kiln::gui {

EngineController::EngineController(QObject* parent) : QObject(parent) {
  registerEngineMetaTypes();
  worker_ = new EngineWorker;
  worker_->moveToThread(&thread_);
  connect(&thread_, &QThread::finished, worker_, &QObject::deleteLater);
  // Auto connections: the worker's signals are emitted on its thread, so they arrive queued here.
  connect(worker_, &EngineWorker::loadProgress, this, [this](const QString& stage, double fraction) {
    if (status_ != Loading || pendingLoads_ > 1) return;  // a superseded load may still report a step
    loadStage_ = stage;
    loadFraction_ = fraction;
    emit loadProgressChanged();
  });
  connect(worker_, &EngineWorker::loaded, this, &EngineController::onLoaded);
  connect(worker_, &EngineWorker::loadFailed, this, &EngineController::onLoadFailed);
  connect(worker_, &EngineWorker::inspected, this, [this](const QString& path, const kiln::ModelInfo& info) {
    emit inspected(path, modelInfoToMap(info));
  });
  connect(worker_, &EngineWorker::inspectFailed, this, &EngineController::inspectFailed);
  connect(worker_, &EngineWorker::hardwareProbed, this, &EngineController::hardwareProbed);
  connect(worker_, &EngineWorker::textArrived, this, &EngineController::textArrived);
  connect(worker_, &EngineWorker::liveSample, this, &EngineController::liveSample);
  connect(worker_, &EngineWorker::finished, this, &EngineController::onFinished);
  connect(worker_, &EngineWorker::failed, this, &EngineController::onFailed);
  thread_.setObjectName(QStringLiteral("kiln-engine"));
  thread_.start();
  // A remote model's answers arrive as a local one's do.
  remoteWorker_ = new RemoteWorker;
  remoteWorker_->moveToThread(&remoteThread_);
  connect(&remoteThread_, &QThread::finished, remoteWorker_, &QObject::deleteLater);
  connect(remoteWorker_, &RemoteWorker::textArrived, this, &EngineController::textArrived);
  connect(remoteWorker_, &RemoteWorker::liveSample, this, &EngineController::liveSample);
  connect(remoteWorker_, &RemoteWorker::finished, this, &EngineController::onFinished);
  connect(remoteWorker_, &RemoteWorker::failed, this, &EngineController::onFailed);
  remoteThread_.setObjectName(QStringLiteral("kiln-remote"));
  remoteThread_.start();
}

EngineController::~EngineController() {
  server_.stop();  // its tasks run on the worker: stop it while the worker still runs
  if (generationStop_) generationStop_->request_stop();
  if (loadStop_) loadStop_->request_stop();
  thread_.quit();  // runs after the worker's current call returns (cancelled above)
  remoteThread_.quit();
  thread_.wait();
  remoteThread_.wait();
}

void EngineController::setProfiling(bool enabled) {
  if (profiling_ == enabled) return;
  profiling_ = enabled;
  QMetaObject::invokeMethod(worker_, [worker = worker_, enabled] { worker->setProfiling(enabled); });
  emit profilingChanged();
}

void EngineController::load(const QString& path, const QString& precision, const QString& backend,
                            const QString& attention, int contextLength, int threads, const QString& signature) {
  const auto precisionKind = precisionFromSetting(precision);
  const auto backendKind = backendFromSetting(backend);
  const auto attentionKind = backendKind ? attentionFromSetting(attention, *backendKind) : std::nullopt;
  if (!precisionKind || !backendKind || !attentionKind) {
    setError(tr("Unknown load setting: %1 / %2 / %3").arg(precision, backend, attention));
    return;
  }
  if (path.isEmpty()) {
    setError(tr("Choose a model folder or file first."));
    return;
  }
  stop();
  endRemote();
  if (loadStop_) loadStop_->request_stop();  // a newer choice replaces a load still running
  loadStop_.emplace();
  ++pendingLoads_;
  LoadRequest request{path, *precisionKind, *backendKind, *attentionKind, contextLength, threads, loadStop_->get_token()};
  loadingPath_ = path;
  pendingSignature_ = signature;
  loadStage_ = QStringLiteral("reading");
  loadFraction_ = 0;
  setError({});
  setStatus(Loading);
  emit loadProgressChanged();
  QMetaObject::invokeMethod(worker_, [worker = worker_, request] { worker->load(request); });
}

void EngineController::cancelLoad() {
  if (loadStop_) loadStop_->request_stop();
}

void EngineController::unload() {
  stop();
  cancelLoad();
  endRemote();
  // The model is going: say so now, so nothing (the API server above all) starts on it meanwhile.
  modelInfo_.clear();
  loadedSignature_.clear();
  emit modelInfoChanged();
  setStatus(Empty);
  QMetaObject::invokeMethod(worker_, [worker = worker_] { worker->unload(); });
}

void EngineController::inspect(const QString& path) {
  QMetaObject::invokeMethod(worker_, [worker = worker_, path] { worker->inspect(path); });
}

void EngineController::probeHardware() {
  QMetaObject::invokeMethod(worker_, [worker = worker_] { worker->probeHardware(); });
}

void EngineController::stop() {
  if (generationStop_) generationStop_->request_stop();
}

void EngineController::useRemote(const QString& url, const QString& apiKey, const QString& model) {
  const QString root = RemoteWorker::apiRoot(url);
  if (root.isEmpty() || model.isEmpty()) {
    setError(tr("“%1” is not a web address (http:// or https://).").arg(url));
    return;
  }
  stop();
  cancelLoad();
  // The local model goes, to give its memory back (a load still running is dropped when it ends).
  if (!remote_ && modelLoaded()) QMetaObject::invokeMethod(worker_, [worker = worker_] { worker->unload(); });
  remote_ = RemoteTarget{url, apiKey, model};
  loadedInfo_ = {};
  const QString host = QUrl(root).authority();
  modelInfo_ = QVariantMap{{"name", model}, {"remote", true}, {"endpoint", root}, {"host", host},
                           // No file: a path no library entry has, so the Models page shows no local model as loaded.
                           {"path", QStringLiteral("remote:%1#%2").arg(root, model)},
                           {"backend", tr("remote")}, {"precision", QString()},
                           {"runsOn", tr("%1 (a remote endpoint)").arg(root)}};
  loadedSignature_.clear();
  loadingPath_.clear();
  emit modelInfoChanged();
  setError({});
  setStatus(Ready);
  updateServer();  // a local model's API server stops (status may have been Ready already)
  emit loaded(modelInfo_);
}

void EngineController::endRemote() {
  if (!remote_) return;
  remote_.reset();
  modelInfo_.clear();
  emit modelInfoChanged();
  if (status_ == Ready || status_ == Generating) setStatus(Empty);
}

quint64 EngineController::startChat(std::vector<kiln::ChatMessage> messages, kiln::GenerateOptions options) {
  if (status_ != Ready) return 0;
  generationStop_.emplace();
  options.cancel = generationStop_->get_token();
  activeId_ = nextId_++;
  ChatRequest request{activeId_, std::move(messages), std::move(options)};
  setStatus(Generating);
  if (remote_) {
    QMetaObject::invokeMethod(remoteWorker_, [worker = remoteWorker_, request = std::move(request), target = *remote_] {
      worker->chat(request, target);
    });
    return activeId_;
  }
  QMetaObject::invokeMethod(worker_, [worker = worker_, request = std::move(request)] { worker->chat(request); });
  return activeId_;
}

void EngineController::setStatus(Status status) {
  if (status_ == status) return;
  status_ = status;
  updateServer();
  emit statusChanged();
}

void EngineController::setServerEnabled(bool enabled) {
  if (serverEnabled_ == enabled) return;
  serverEnabled_ = enabled;
  updateServer();
  emit serverChanged();
}

void EngineController::setServerPort(int port) {
  if (serverPort_ == port) return;
  serverPort_ = port;
  if (server_.running()) server_.stop();  // restarted on the new port below
  updateServer();
  emit serverChanged();
}

void EngineController::updateServer() {
  const bool wanted = serverEnabled_ && modelLoaded() && !remote_;  // it serves local models only
  if (!wanted && server_.running()) {
    server_.stop();
    emit serverChanged();
  } else if (wanted && !server_.running()) {
    serverError_ = server_.start(worker_, loadedInfo_, serverPort_);
    emit serverChanged();
  } else if (!serverEnabled_ && !serverError_.isEmpty()) {
    serverError_.clear();
    emit serverChanged();
  }
}

void EngineController::setError(const QString& message, const QString& failedPath) {
  if (lastError_ == message && failedPath_ == failedPath) return;
  lastError_ = message;
  failedPath_ = failedPath;
  emit lastErrorChanged();
}

void EngineController::onLoaded(const kiln::ModelInfo& info) {
  if (--pendingLoads_ > 0) return;  // superseded: the worker loads the newer choice next
  if (remote_) {  // a remote model was chosen while this loaded: let it go again
    loadStop_.reset();
    QMetaObject::invokeMethod(worker_, [worker = worker_] { worker->unload(); });
    return;
  }
  if (loadStop_ && loadStop_->stop_requested()) {  // cancelled just as it finished: drop it
    QMetaObject::invokeMethod(worker_, [worker = worker_] { worker->unload(); });
    ++pendingLoads_;  // onLoadFailed below counts it down again
    onLoadFailed(tr("Loading was cancelled."), false);
    return;
  }
  loadStop_.reset();
  loadedInfo_ = info;
  modelInfo_ = modelInfoToMap(info);
  loadedSignature_ = pendingSignature_;
  loadingPath_.clear();
  loadStage_ = QStringLiteral("ready");
  loadFraction_ = 1;
  emit loadProgressChanged();
  emit modelInfoChanged();
  setError({});  // an error of an earlier model is not this one's
  setStatus(Ready);
  emit loaded(modelInfo_);
}

void EngineController::onLoadFailed(const QString& message, bool previousKept) {
  if (--pendingLoads_ > 0) return;
  if (remote_) {  // cancelled by choosing a remote model: nothing to say, and nothing to keep
    loadStop_.reset();
    if (previousKept) QMetaObject::invokeMethod(worker_, [worker = worker_] { worker->unload(); });
    return;
  }
  loadStop_.reset();
  const QString failed = loadingPath_;
  loadingPath_.clear();
  setError(message, failed);
  if (previousKept && !modelInfo_.isEmpty()) {
    setStatus(Ready);  // the model that was loaded answers on
  } else {
    modelInfo_.clear();
    loadedSignature_.clear();
    emit modelInfoChanged();
    setStatus(Empty);
  }
  emit loadFailed(message);
}

void EngineController::onFinished(quint64 id, const kiln::GenerationStats& stats) {
  if (id == activeId_) {
    generationStop_.reset();
    if (status_ == Generating) setStatus(Ready);
  }
  emit generationFinished(id, stats);
}

void EngineController::onFailed(quint64 id, const QString& message) {
  if (id == activeId_) {
    generationStop_.reset();
    if (status_ == Generating) setStatus(Ready);
  }
  emit generationFailed(id, message);
}

}  // namespace kiln::gui
