// The HTTP side of the server: routes, API key, Host/Origin checks, CORS, body limits, errors, start and stop.
#include "server/server.h"

#include <httplib.h>

#include <chrono>
#include <filesystem>
#include <random>
#include <strings.h>
#include <sys/socket.h>

#include "server/connection_guard.h"
#include "server/metrics.h"
#include "server/openai_protocol.h"
#include "server/request_policy.h"
#include "server/request_queue.h"
#include "server/response_writers.h"

namespace kiln::server {

struct Server::Http {
  GuardedHttpServer http;
  std::unique_ptr<RequestPolicy> policy;  // made in start(), once the port is known
};

namespace {

int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void send_error(httplib::Response& res, const ApiError& error) {
  res.status = error.status();
  res.set_content(error_body(error), "application/json");
  if (error.status() == 401) res.set_header("WWW-Authenticate", "Bearer");
  if (error.status() == 503) res.set_header("Retry-After", "1");
}

// Compares without stopping at the first difference, so the time taken does not leak the key.
bool same_secret(const std::string& given, const std::string& expected) {
  unsigned char diff = given.size() != expected.size();
  for (size_t i = 0; i < expected.size(); ++i)
    diff |= static_cast<unsigned char>(expected[i] ^ (i < given.size() ? given[i] : 0));
  return diff == 0;
}

void send_timeout(httplib::Response& res) {
  send_error(res, ApiError(408, "The request was not received in time.", "invalid_request_error", {}, "request_timeout"));
  res.set_header("Connection", "close");
}

bool is_loopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

constexpr const char* kChatPath = R"(/(?:v1/)?chat/completions)";
constexpr const char* kCompletionsPath = R"(/(?:v1/)?completions)";
constexpr const char* kModelsPath = R"(/(?:v1/)?models)";
constexpr const char* kModelPath = R"(/(?:v1/)?models/(.+))";

}  // namespace

std::string default_model_id(const std::string& model_path) {
  std::filesystem::path p(model_path);
  while (!p.empty() && p.filename().empty()) p = p.parent_path();  // "folder/" names the folder
  if (p.empty()) return "kiln";
  return p.extension() == ".gguf" ? p.stem().string() : p.filename().string();
}

Server::Server(ServerOptions options, ModelInfo model, std::shared_ptr<InferenceExecutor> executor)
    : options_(std::move(options)),
      model_(std::move(model)),
      model_id_(options_.model_id.empty() ? default_model_id(model_.path) : options_.model_id),
      executor_(std::move(executor)),
      queue_(std::make_shared<FairQueue>(options_.max_waiting, options_.parallel)),
      metrics_(std::make_shared<RequestMetrics>()),
      http_(std::make_unique<Http>()),
      id_salt_(std::random_device{}()),
      started_at_(unix_now()) {
  if (!executor_) throw Error("the server needs an executor to run inference on");
  install_routes();
}

Server::~Server() { stop(); }

std::string Server::base_url() const {
  const bool v6 = options_.host.find(':') != std::string::npos;
  return "http://" + (v6 ? "[" + options_.host + "]" : options_.host) + ":" + std::to_string(port_) + "/v1";
}

ServerCounters Server::counters() const {
  const QueueCounters q = queue_->counters();
  return {q.waiting, q.running, q.slot_count, q.completed, q.cancelled, q.refused, q.failed, q.generated_tokens};
}

void Server::start() {
  std::lock_guard lock(stop_mutex_);
  if (running_ || listener_.joinable()) throw Error("the server was already started");
  auto& http = http_->http;
  // Every connection holds a thread (a waiting request too); the cap answers 503 past max_connections.
  if (options_.max_connections < 1 || options_.head_timeout_ms < 1 || options_.body_timeout_ms < 1)
    throw Error("the server's connection cap and timeouts must be positive");
  if (options_.parallel < 1 || options_.parallel > 64)
    throw Error("--parallel must be 1 to 64 slots, got " + std::to_string(options_.parallel));
  http.set_limits({std::chrono::milliseconds(options_.head_timeout_ms),
                   std::chrono::milliseconds(options_.body_timeout_ms), options_.max_connections});
  http.set_payload_max_length(options_.max_body_bytes);
  // httplib's default sets SO_REUSEPORT, which lets a second server bind the same port and silently
  // take half the requests. SO_REUSEADDR alone still allows a quick restart, but refuses a taken port.
  http.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });

  const std::string where = options_.host + ":" + std::to_string(options_.port);
  if (options_.port < 0 || options_.port > 65535) throw Error("port " + std::to_string(options_.port) + " is not a TCP port");
  if (options_.port == 0) {
    port_ = http.bind_to_any_port(options_.host);
    if (port_ <= 0) throw Error("cannot listen on " + options_.host + ": not an address of this machine");
  } else {
    if (!http.bind_to_port(options_.host, options_.port))
      throw Error("cannot listen on " + where + ": the port is in use or the address is not of this machine");
    port_ = options_.port;
  }
  http.widen_backlog();
  http_->policy = std::make_unique<RequestPolicy>(options_.host, port_, options_.allowed_hosts, options_.cors_origin);
  auto listener_ended = std::make_shared<std::atomic<bool>>(false);
  listener_ = std::thread([this, listener_ended] {
    http_->http.listen_after_bind();
    *listener_ended = true;
  });
  // stop() can only close the socket once the accept loop runs; wait for it (microseconds).
  while (!http.is_running() && !*listener_ended) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  if (*listener_ended) {
    listener_.join();
    throw Error("cannot listen on " + where + ": the accept loop ended at once");
  }
  running_ = true;
}

void Server::stop() {
  std::lock_guard lock(stop_mutex_);
  running_ = false;
  // First wake every HTTP thread that waits on a job, then close the port and join the threads.
  queue_->shutdown();
  if (listener_.joinable()) {
    http_->http.stop();
    listener_.join();
  }
}

std::string describe_listening(const Server& server, const ServerOptions& options) {
  std::string text = "Serving " + server.model_id() + " at " + server.base_url();
  if (is_loopback(options.host)) {
    text += " (loopback only: programs on this machine can connect, other machines cannot)";
  } else {
    text += options.host == "0.0.0.0" || options.host == "::" ? " (all network interfaces" : " (address " + options.host;
    text += ": other machines that reach this port can use the model; ";
    text += options.api_key.empty() ? "no API key is set, so anyone can" : "they need the API key";
    text += ")";
  }
  return text;
}

void Server::install_routes() {
  auto& http = http_->http;

  auto authorized = [this](const httplib::Request& req) {
    if (options_.api_key.empty()) return true;
    const std::string header = req.get_header_value("Authorization");
    constexpr std::string_view bearer = "Bearer ";
    if (header.size() < bearer.size() || strncasecmp(header.c_str(), bearer.data(), bearer.size()) != 0) return false;
    return same_secret(header.substr(bearer.size()), options_.api_key);
  };
  auto refuse_key = [](const httplib::Request& req, httplib::Response& res) {
    const bool given = req.has_header("Authorization");
    send_error(res, ApiError(401,
                             given ? "Incorrect API key provided."
                                   : "You didn't provide an API key. Send it as 'Authorization: Bearer KEY'.",
                             "invalid_request_error", {}, "invalid_api_key"));
  };

  // Every request, before routing: a Host or Origin of a page that is not ours gets 403 (see
  // request_policy.h). 403 rather than 421 Misdirected Request: 421 asks a client to retry on another
  // connection, and this is a refusal, not a routing mistake that another connection would fix.
  http.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    const RequestPolicy& policy = *http_->policy;
    std::string refusal, code;
    if (!policy.host_allowed(req.get_header_value("Host"), req.has_header("Host"))) {
      refusal = "The Host '" + req.get_header_value("Host") + "' is not one this server answers to; "
                "start it with --allowed-host NAME to add one.";
      code = "host_not_allowed";
    } else if (req.has_header("Origin") && !policy.origin_allowed(req.get_header_value("Origin"))) {
      refusal = "Requests from the web page at '" + req.get_header_value("Origin") + "' are not allowed; "
                "start the server with --cors ORIGIN to allow one.";
      code = "origin_not_allowed";
    } else {
      return httplib::Server::HandlerResponse::Unhandled;
    }
    send_error(res, ApiError(403, refusal, "invalid_request_error", {}, code));
    res.set_header("Connection", "close");  // a body, if any, is left unread on the wire
    return httplib::Server::HandlerResponse::Handled;
  });

  http.Get("/health", [this, authorized](const httplib::Request& req, httplib::Response& res) {
    // With a key set, the model's name and the traffic are for those who hold it.
    if (!authorized(req)) return res.set_content(R"({"status":"ok"})", "application/json");
    const ServerCounters c = counters();
    res.set_content(health_body(model_id_, {{"waiting", c.waiting},
                                            {"running", c.running},
                                            {"slots", c.slot_count},
                                            {"completed", c.completed},
                                            {"cancelled", c.cancelled},
                                            {"refused", c.refused},
                                            {"failed", c.failed},
                                            {"generated_tokens", c.generated_tokens}}),
                    "application/json");
  });

  // Traffic and model speed are for those who hold the key, as /v1 routes are.
  http.Get("/metrics", [=, this](const httplib::Request& req, httplib::Response& res) {
    if (!authorized(req)) return refuse_key(req, res);
    res.set_content(prometheus_text(*metrics_, queue_->counters()), "text/plain; version=0.0.4; charset=utf-8");
  });

  http.Get(kModelsPath, [=, this](const httplib::Request& req, httplib::Response& res) {
    if (!authorized(req)) return refuse_key(req, res);
    res.set_content(models_body(model_id_, started_at_, model_.vision), "application/json");
  });
  http.Get(kModelPath, [=, this](const httplib::Request& req, httplib::Response& res) {
    if (!authorized(req)) return refuse_key(req, res);
    const std::string id = req.matches[1];
    if (id != model_id_)
      return send_error(res, ApiError(404, "The model '" + id + "' does not exist; this server has '" + model_id_ + "'.",
                                      "invalid_request_error", "model", "model_not_found"));
    res.set_content(model_body(model_id_, started_at_, model_.vision), "application/json");
  });

  auto generation = [=, this](Endpoint endpoint) {
    return [=, this](const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& reader) {
      // Requests answered here count as errors (or cancelled: the client left while waiting); an
      // admitted one is counted by its response writer.
      bool admitted = false;
      std::shared_ptr<InferenceJob> queued;
      [&] {
        // Read (or, without the key, drain) the body first so the connection stays usable; never past the limit.
        const bool key_ok = authorized(req);
        std::string body;
        size_t received = 0;
        bool too_large = false;
        const bool read_ok = reader([&](const char* data, size_t size) {
          received += size;
          if (received > options_.max_body_bytes) { too_large = true; return false; }
          if (key_ok) body.append(data, size);
          return true;
        });
        if (!read_ok) res.set_header("Connection", "close");  // the rest of the body is still on the wire
        if (!read_ok && GuardedHttpServer::request_timed_out()) return send_timeout(res);
        if (!key_ok) return refuse_key(req, res);
        if (too_large || res.status == 413)
          return send_error(res, ApiError(413, "The request body is larger than the server's limit of " +
                                                   std::to_string(options_.max_body_bytes) + " bytes.",
                                          "invalid_request_error", {}, "request_too_large"));
        if (!read_ok) return send_error(res, ApiError(400, "The request body could not be read."));

        try {
          CompletionRequest request =
              parse_completion_request(endpoint, body, {options_.images.max_bytes, options_.fetch_remote_image});
          check_images(request.messages, model_, model_id_, options_.images);
          const bool stream = request.stream;
          const std::string client = request.user.empty() ? "addr:" + req.remote_addr : "user:" + request.user;
          auto job = std::make_shared<InferenceJob>(std::move(request), client);
          queued = job;
          queue_->push(job);
          executor_->post([queue = queue_](Engine& engine) { queue->serve(engine); });
          if (auto refused = job->wait_admission()) return send_error(res, *refused);

          const bool chat = endpoint == Endpoint::ChatCompletions;
          char id[48];
          std::snprintf(id, sizeof id, "%s%08llx%llu", chat ? "chatcmpl-" : "cmpl-",
                        static_cast<unsigned long long>(id_salt_ & 0xffffffffu),
                        static_cast<unsigned long long>(next_id_++));
          auto response = std::make_shared<GenerationResponse>();
          response->job = job;
          response->queue = queue_;
          response->who = {endpoint, id, unix_now(), model_id_};
          response->request_line = req.method + " " + req.path;
          response->log = options_.log;
          response->metrics = metrics_;
          admitted = true;
          auto release = [response](bool) { release_generation(*response); };
          if (stream) {
            res.set_header("Cache-Control", "no-cache");
            auto started = std::make_shared<bool>(false);
            res.set_chunked_content_provider(
                "text/event-stream",
                [response, started](size_t, httplib::DataSink& sink) {
                  return write_event_stream(*response, *started, sink);
                },
                release);
          } else {
            auto text = std::make_shared<std::string>();
            res.set_chunked_content_provider(
                "application/json",
                [response, text](size_t, httplib::DataSink& sink) { return write_json_when_done(*response, *text, sink); },
                release);
          }
        } catch (const ApiError& e) {
          send_error(res, e);
        }
      }();
      if (admitted) return;
      const bool left = queued && queued->cancelled() && !queued->failure();
      metrics_->count(endpoint, left ? RequestOutcome::Cancelled : RequestOutcome::Error);
    };
  };
  http.Post(kChatPath, generation(Endpoint::ChatCompletions));
  http.Post(kCompletionsPath, generation(Endpoint::Completions));

  // The right path with the wrong method gets 405, not "unknown URL".
  auto wrong_method = [](const char* allowed) {
    return [allowed](const httplib::Request& req, httplib::Response& res) {
      res.set_header("Allow", allowed);
      send_error(res, ApiError(405, req.method + " is not allowed on " + req.path + "; use " + allowed + ".",
                               "invalid_request_error", {}, "method_not_allowed"));
    };
  };
  http.Get(kChatPath, wrong_method("POST"));
  http.Get(kCompletionsPath, wrong_method("POST"));
  http.Post(kModelsPath, wrong_method("GET"));
  http.Post("/health", wrong_method("GET"));
  http.Post("/metrics", wrong_method("GET"));

  if (!options_.cors_origin.empty()) {
    http.Options(R"(.*)", [](const httplib::Request&, httplib::Response& res) { res.status = 204; });
    http.set_post_routing_handler([origin = options_.cors_origin](const httplib::Request&, httplib::Response& res) {
      res.set_header("Access-Control-Allow-Origin", origin);
      res.set_header("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
      res.set_header("Access-Control-Allow-Headers", "Authorization, Content-Type");
      res.set_header("Access-Control-Max-Age", "600");
      if (origin != "*") res.set_header("Vary", "Origin");
    });
  }

  // Errors that httplib produces itself (unknown path, bad request line, body over the limit) get
  // OpenAI's shape too; responses that already carry a body are left alone.
  http.set_error_handler(httplib::Server::HandlerWithResponse([this](const httplib::Request& req, httplib::Response& res) {
    if (GuardedHttpServer::request_timed_out()) {  // httplib's 400 for a head cut off at its deadline
      send_timeout(res);
      return httplib::Server::HandlerResponse::Handled;
    }
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    if (res.status == 404)
      send_error(res, ApiError(404, "Unknown request URL: " + req.method + " " + req.path +
                                        ". This server offers /v1/chat/completions, /v1/completions, /v1/models, "
                                        "/health and /metrics.",
                               "invalid_request_error", {}, "unknown_url"));
    else if (res.status == 413)
      send_error(res, ApiError(413, "The request body is larger than the server's limit of " +
                                        std::to_string(options_.max_body_bytes) + " bytes.",
                               "invalid_request_error", {}, "request_too_large"));
    else
      send_error(res, ApiError(res.status, "The request could not be handled (HTTP " + std::to_string(res.status) + ").",
                               res.status >= 500 ? "server_error" : "invalid_request_error"));
    return httplib::Server::HandlerResponse::Handled;
  }));
  http.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "unknown error";
    try {
      std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    send_error(res, ApiError(500, "Internal server error: " + what, "server_error"));
  });
  http.set_logger([this](const httplib::Request& req, const httplib::Response& res) {
    // Called once the response is written: a response that closes the connection ends it here.
    if (res.get_header_value("Connection") == "close") GuardedHttpServer::close_after_response();
    // Generations that were admitted log their own line when they end (with token counts).
    const bool admitted_generation = req.method == "POST" && res.status == 200;
    if (options_.log && !admitted_generation)
      options_.log(req.method + " " + req.path + " " + std::to_string(res.status));
  });
}

}  // namespace kiln::server
