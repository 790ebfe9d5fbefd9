#include "local_server.h"

#include "engine_worker.h"

#ifdef KILN_HAVE_SERVER
#include "server/server.h"
#endif

namespace kiln::gui {

#ifdef KILN_HAVE_SERVER

namespace {

// Posts each server task onto the worker's thread, where the Engine lives.
class WorkerExecutor final : public kiln::server::InferenceExecutor {
 public:
  explicit WorkerExecutor(EngineWorker* worker) : worker_(worker) {}
  void post(std::function<void(kiln::Engine&)> task) override {
    // Called from HTTP threads: queuing an event to the worker is thread-safe; the worker
    // outlives the server (the controller stops the server before the worker's thread ends).
    QMetaObject::invokeMethod(worker_, [worker = worker_, task = std::move(task)] { worker->runTask(task); },
                              Qt::QueuedConnection);
  }

 private:
  EngineWorker* worker_;
};

}  // namespace

LocalServerHost::LocalServerHost() = default;
LocalServerHost::~LocalServerHost() { stop(); }

bool LocalServerHost::available() { return true; }

QString LocalServerHost::start(EngineWorker* worker, const kiln::ModelInfo& model, int port) {
  stop();
  kiln::server::ServerOptions options;
  options.port = port;
  // One request at a time: the app's chat shares this engine, and each slot would hold a KV cache
  // of the model's whole context beside the chat's.
  options.parallel = 1;
  try {
    auto server = std::make_unique<kiln::server::Server>(options, model, std::make_shared<WorkerExecutor>(worker));
    server->start();
    server_ = std::move(server);
    return {};
  } catch (const std::exception& e) {
    return QString::fromStdString(e.what());
  }
}

void LocalServerHost::stop() {
  if (server_) server_->stop();
  server_.reset();
}

bool LocalServerHost::running() const { return server_ && server_->running(); }
int LocalServerHost::port() const { return server_ ? server_->port() : 0; }
QString LocalServerHost::url() const { return server_ ? QString::fromStdString(server_->base_url()) : QString(); }

#else  // no kiln_server in this build

LocalServerHost::LocalServerHost() = default;
LocalServerHost::~LocalServerHost() = default;
bool LocalServerHost::available() { return false; }
QString LocalServerHost::start(EngineWorker*, const kiln::ModelInfo&, int) {
  return QStringLiteral("this build has no API server");
}
void LocalServerHost::stop() {}
bool LocalServerHost::running() const { return false; }
int LocalServerHost::port() const { return 0; }
QString LocalServerHost::url() const { return {}; }

#endif

}  // namespace kiln::gui
