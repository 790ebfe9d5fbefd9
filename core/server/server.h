// Kiln's OpenAI-compatible HTTP server (cpp-httplib), on top of the engine API.
//
// Endpoints: GET /health, GET /metrics (Prometheus), GET /v1/models, GET /v1/models/{id}, POST /v1/chat/completions,
// POST /v1/completions (streaming as server-sent events ending with "data: [DONE]").
//
// Threads. HTTP threads parse and validate requests and write responses; they never touch the Engine.
// Every generation runs on ONE inference thread, the thread that owns the Engine. It serves up to
// ServerOptions::parallel requests at once in the engine's slots (each its own KV cache), decoded
// together one token a step (Engine::step_slots); requests beyond that wait in a queue that serves
// clients round-robin (the client is OpenAI's `user` field when given, else the remote address), and
// join between steps as slots free up. Who provides that thread is the owner's choice, through
// InferenceExecutor:
//
//  * `kiln serve`: the server's owner makes an EngineThread, which owns the Engine and its own thread:
//        auto engine_thread = std::make_shared<EngineThread>(Engine::load(options));
//        Server server(server_options, engine_thread->model_info(), engine_thread);
//        server.start();  ...  server.stop();
//
//  * The desktop app: its worker thread already owns the Engine. It implements InferenceExecutor::post
//    by queueing the task onto that worker (e.g. QMetaObject::invokeMethod(worker, …, Qt::QueuedConnection))
//    where it calls task(engine). A task serves until no slot is busy (with parallel 1: one request)
//    and returns; a task that finds the queue empty returns at once. So the worker interleaves server
//    requests with its own work, and the Engine is never shared between threads. Stop the server
//    before unloading or replacing the Engine. The first task opens the engine's slots
//    (Engine::open_slots); slot 0 is the cache the worker's own chat() uses.
//
// A client that hangs up stops its generation within a token (through GenerateOptions::cancel) and frees
// its slot at the next step; stop() refuses waiting requests with 503, stops the running one, and joins the HTTP threads.
//
// Web pages and slow clients: request_policy.h says which Host and Origin values are served (others get
// 403); connection_guard.h gives each request head and body a deadline (408) and caps connections (503).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "kiln/engine.h"

namespace kiln::server {

struct ServerOptions {
  std::string host = "127.0.0.1";   // loopback only unless told otherwise
  int port = 8080;                  // 0: any free port (see Server::port())
  std::string api_key;              // empty: no key needed; else "Authorization: Bearer KEY" on /v1/* and /metrics
  std::string cors_origin;          // empty: no CORS headers at all; "*" or "http://host:port"
  // Host names served besides the bound address, localhost, 127.0.0.1 and [::1] (e.g. a reverse
  // proxy's); "name" allows it with any port's form we serve, "name:port" exactly that. Any other
  // Host gets 403, and so does an Origin that is neither --cors nor one of these (see request_policy.h).
  std::vector<std::string> allowed_hosts;
  std::string model_id;             // the name /v1/models shows; empty: the model's folder or file name
  // Larger request bodies get 413. 32 MiB holds a 20 MB image as base64 (4/3 of its size) with room
  // for the conversation; raise it with ImageOptions::max_bytes for larger images.
  size_t max_body_bytes = 32u << 20;
  size_t max_waiting = 16;          // requests waiting for a slot; more get 503
  // Requests generated at once, each in a slot with its own KV cache (parallel x the cache's memory),
  // decoded together. Fewer where the engine's backend decodes one sequence at a time.
  int parallel = 4;
  // Slow clients (see connection_guard.h): the whole request head must arrive within head_timeout_ms,
  // the body within body_timeout_ms after it, or the server answers 408 and closes the connection.
  int head_timeout_ms = 10000;
  int body_timeout_ms = 60000;
  // Connections served at once, each on its own thread (waiting requests included); more get 503.
  size_t max_connections = 256;
  // Images in chat messages (image_url parts, models with ModelInfo::vision): the limits the engine
  // loaded with (LoadOptions::images); an image over images.max_bytes gets 413, one that does not
  // decode 400. Remote http(s) image URLs are fetched only through fetch_remote_image (at most
  // max_bytes; `kiln serve --allow-remote-images` sets it); unset, they get 400.
  ImageOptions images;
  std::function<std::string(const std::string& url, uint64_t max_bytes)> fetch_remote_image;
  // One line per finished request ("POST /v1/chat/completions 200 …"); called from HTTP threads.
  std::function<void(const std::string&)> log;
};

// Runs the server's inference tasks on the thread that owns the Engine.
class InferenceExecutor {
 public:
  virtual ~InferenceExecutor() = default;
  // Called from HTTP threads, once per queued request. The owner must call task(engine) exactly once,
  // soon, on the Engine's thread. The task keeps what it needs alive: it is safe to run after the
  // Server is gone (it then returns at once).
  virtual void post(std::function<void(Engine&)> task) = 0;
};

// An executor that owns the Engine and one thread that runs the tasks in order (`kiln serve`).
class EngineThread final : public InferenceExecutor {
 public:
  explicit EngineThread(std::unique_ptr<Engine> engine);
  ~EngineThread() override;  // runs the tasks still posted (each returns at once after stop()), joins
  void post(std::function<void(Engine&)> task) override;
  // Copied at construction, so any thread may read it.
  const ModelInfo& model_info() const { return info_; }

 private:
  void loop();
  std::unique_ptr<Engine> engine_;
  ModelInfo info_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void(Engine&)>> tasks_;
  bool closing_ = false;
  std::thread thread_;  // last: starts after everything it uses exists
};

class FairQueue;
class RequestMetrics;

// Counters for /health and for tests.
struct ServerCounters {
  size_t waiting = 0, running = 0, slot_count = 0;
  uint64_t completed = 0, cancelled = 0, refused = 0, failed = 0, generated_tokens = 0;
};

class Server {
 public:
  // `model` describes the executor's engine (name, context length for /v1/models and /health).
  Server(ServerOptions options, ModelInfo model, std::shared_ptr<InferenceExecutor> executor);
  ~Server();  // stop()
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds and starts serving on a thread of its own; returns once the port is open.
  // Throws kiln::Error when the address cannot be bound (in use, not an address of this machine).
  void start();
  // Refuses waiting requests (503), stops the running generation, closes the port, joins the threads.
  // Idempotent; any thread except an HTTP thread of this server.
  void stop();
  bool running() const { return running_; }

  int port() const { return port_; }                  // the bound port (useful with port 0)
  std::string base_url() const;                       // "http://127.0.0.1:8080/v1"
  const std::string& model_id() const { return model_id_; }
  ServerCounters counters() const;

 private:
  struct Http;  // cpp-httplib stays out of this header
  void install_routes();

  ServerOptions options_;
  ModelInfo model_;
  std::string model_id_;
  std::shared_ptr<InferenceExecutor> executor_;
  std::shared_ptr<FairQueue> queue_;  // shared with posted tasks, which may outlive the server
  std::shared_ptr<RequestMetrics> metrics_;  // GET /metrics; shared with responses being written
  std::unique_ptr<Http> http_;
  std::thread listener_;
  std::atomic<bool> running_{false};
  std::atomic<uint64_t> next_id_{0};
  uint64_t id_salt_ = 0;
  int64_t started_at_ = 0;
  int port_ = 0;
  std::mutex stop_mutex_;
};

// What to tell the user at start: where the server listens and who can reach it, e.g.
// "Serving gemma-3-1b-it at http://127.0.0.1:8080/v1 (loopback only: other machines cannot connect)".
std::string describe_listening(const Server& server, const ServerOptions& options);

// The model id shown to clients: the model's folder name, or the file name without ".gguf".
std::string default_model_id(const std::string& model_path);

}  // namespace kiln::server
