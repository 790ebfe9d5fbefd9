// The Settings page's local API server: core/server's OpenAI-compatible Server, fed by the
// app's own engine worker. The server's HTTP threads never touch the Engine: each request is
// posted to the worker thread as a task, so it takes turns with the app's own chat.
// Built only when the kiln_server library exists (KILN_HAVE_SERVER); otherwise start() refuses.
#pragma once

#include <QString>
#include <memory>

#include "kiln/types.h"

namespace kiln::server {
class Server;
}

namespace kiln::gui {

class EngineWorker;

class LocalServerHost {
 public:
  LocalServerHost();
  ~LocalServerHost();  // stops the server

  static bool available();

  // Starts serving `model` on 127.0.0.1:port through `worker` (which must outlive the server).
  // Returns "" or why it could not start (port in use...).
  QString start(EngineWorker* worker, const kiln::ModelInfo& model, int port);
  // Refuses waiting requests, stops the running one and joins the HTTP threads. Idempotent.
  void stop();

  bool running() const;
  int port() const;
  QString url() const;

 private:
  std::unique_ptr<kiln::server::Server> server_;
};

}  // namespace kiln::gui
