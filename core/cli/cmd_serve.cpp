// kiln serve: the loaded model behind an OpenAI-compatible HTTP API until Ctrl+C.
#include <csignal>
#include <cstdlib>
#include <cstdio>
#include <thread>

#include "cli/common.h"
#include "server/openai_protocol.h"
#include "server/server.h"
#ifdef KILN_HAVE_DOWNLOAD
#include "download/http_client.h"
#endif

namespace {

// Set by SIGINT/SIGTERM; the main thread polls it and shuts the server down outside the handler.
volatile std::sig_atomic_t g_stop_signal = 0;

extern "C" void on_stop_signal(int sig) {
  g_stop_signal = sig;
  std::signal(sig, SIG_DFL);  // a second Ctrl+C ends the process at once
}

#ifdef KILN_HAVE_DOWNLOAD
// --allow-remote-images: an image_url that is http(s) is fetched here, within the image byte limit,
// and a server that does not answer or stalls is given up on soon (the client is waiting).
std::string fetch_remote_image(const std::string& url, uint64_t max_bytes) {
  using kiln::server::ApiError;
  kiln::HttpRequest request;
  request.url = url;
  request.accept = "image/png, image/jpeg, image/webp";
  request.connect_seconds = 10;
  request.stall_seconds = 15;
  const kiln::HttpResult got = kiln::http_get_text(request, max_bytes);
  if (got.curl_code != 0 && got.curl_error.find("larger than") != std::string::npos)
    throw ApiError(413, "The image at " + url + " is larger than the server's limit of " + std::to_string(max_bytes) +
                            " bytes.", "invalid_request_error", {}, "image_too_large");
  if (got.curl_code != 0)
    throw ApiError(400, "The image at " + url + " could not be fetched: " + got.curl_error, "invalid_request_error");
  if (got.status < 200 || got.status >= 300)
    throw ApiError(400, "The image at " + url + " could not be fetched: HTTP " + std::to_string(got.status),
                   "invalid_request_error");
  return got.body;
}
#endif

}  // namespace

void add_serve_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("serve", "Serve the model over an OpenAI-compatible HTTP API (Ctrl+C stops)");
  auto model = std::make_shared<kiln::cli::ModelFlags>();
  auto options = std::make_shared<kiln::server::ServerOptions>();
  auto max_body_kib = std::make_shared<size_t>(options->max_body_bytes / 1024);
  kiln::cli::add_model_flags(*cmd, *model);
  cmd->add_option("--host", options->host, "Address to listen on; 0.0.0.0 lets other machines connect")
      ->capture_default_str();
  cmd->add_option("--port", options->port, "TCP port (0: any free port)")->capture_default_str()->check(CLI::Range(0, 65535));
  cmd->add_option("--api-key", options->api_key, "Require 'Authorization: Bearer KEY' on /v1 requests");
  cmd->add_option("--cors", options->cors_origin, "Allow browser pages from ORIGIN (e.g. http://localhost:3000, or *)");
  cmd->add_option("--allowed-host", options->allowed_hosts,
                  "Also answer requests for this Host name (repeatable; e.g. a reverse proxy's kiln.lan); "
                  "others than the listening address, localhost, 127.0.0.1 and [::1] get 403")
      ->allow_extra_args(false);  // one name an occurrence
  cmd->add_option("--model-id", options->model_id, "Model name shown in /v1/models (default: folder or file name)");
  cmd->add_option("--parallel", options->parallel,
                  "Requests generated at once, decoded together; each slot has its own KV cache (memory x N)")
      ->capture_default_str()->check(CLI::Range(1, 64));
  cmd->add_option("--max-waiting", options->max_waiting, "Requests that may wait for a free slot; more get 503")
      ->capture_default_str()->check(CLI::Range(1, 4096));
  cmd->add_option("--max-body-kib", *max_body_kib, "Largest request body in KiB (32 MiB holds a 20 MB image as base64); larger gets 413")
      ->capture_default_str()->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--head-timeout", options->head_timeout_ms,
                  "Milliseconds a client has to send a request's line and headers; slower gets 408")
      ->capture_default_str()->check(CLI::Range(100, 3600 * 1000));
  cmd->add_option("--body-timeout", options->body_timeout_ms,
                  "Milliseconds a client has to send a request's body once its headers are in; slower gets 408")
      ->capture_default_str()->check(CLI::Range(100, 3600 * 1000));
  cmd->add_option("--max-connections", options->max_connections,
                  "Connections served at once (waiting requests included); more get 503 at once")
      ->capture_default_str()->check(CLI::Range(1, 4096));
  auto allow_remote_images = std::make_shared<bool>(false);
  cmd->add_flag("--allow-remote-images", *allow_remote_images,
                "Fetch http(s) image URLs in chat messages (default: data: URLs only; when on, the server requests "
                "whatever URLs its clients send)");
  cmd->callback([=] {
    options->max_body_bytes = *max_body_kib * 1024;
    const kiln::LoadOptions load = kiln::cli::load_options(*model);
    options->images = load.images;
    if (*allow_remote_images) {
#ifdef KILN_HAVE_DOWNLOAD
      options->fetch_remote_image = fetch_remote_image;
#else
      throw kiln::Error("--allow-remote-images needs a build with libcurl");
#endif
    }
    options->log = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
    if (options->api_key.empty() && std::getenv("KILN_API_KEY")) options->api_key = std::getenv("KILN_API_KEY");

    auto engine_thread = std::make_shared<kiln::server::EngineThread>(kiln::cli::load_engine(*model));
    kiln::server::Server server(*options, engine_thread->model_info(), engine_thread);
    server.start();
    std::signal(SIGINT, on_stop_signal);
    std::signal(SIGTERM, on_stop_signal);
    std::printf("%s\n", kiln::server::describe_listening(server, *options).c_str());
    std::printf("Press Ctrl+C to stop.\n");
    std::fflush(stdout);
    while (!g_stop_signal) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    std::fprintf(stderr, "Stopping: finishing requests and closing the port...\n");
    server.stop();
    std::fprintf(stderr, "Stopped.\n");
  });
}
