// kiln chat: an interactive conversation with history (the KV cache carries it between turns), with
// a local model or, given --endpoint, a model served elsewhere over the OpenAI-compatible API.
#include <cstdio>
#include <functional>
#include <iostream>

#include "cli/common.h"
#include "common/printable.h"
#ifdef KILN_HAVE_REMOTE
#include "remote/openai_client.h"
#endif

namespace kiln::cli {
namespace {

using Respond = std::function<GenerationStats(const std::vector<ChatMessage>&, const GenerateOptions&, const TokenCallback&)>;

// `/image PATH`: the file's bytes wait for the next message. false: the line is no /image command.
bool attach_command(const std::string& line, std::vector<Image>& pending) {
  if (line != "/image" && line.rfind("/image ", 0) != 0) return false;
  std::string path = line.size() > 7 ? line.substr(7) : "";
  while (!path.empty() && path.back() == ' ') path.pop_back();
  if (path.size() >= 2 && (path.front() == '"' || path.front() == '\'') && path.back() == path.front())
    path = path.substr(1, path.size() - 2);  // a path pasted in quotes
  if (path.empty()) {
    std::cerr << "usage: /image PATH (the image goes with your next message)\n";
    return true;
  }
  try {
    pending.push_back(read_image_file(path));
    std::cerr << "attached " << printable(path) << " (" << pending.size() << " image"
              << (pending.size() == 1 ? "" : "s") << " for your next message)\n";
  } catch (const Error& e) {
    std::cerr << "error: " << printable(e.what()) << "\n";
  }
  return true;
}

void chat_loop(const std::string& system, const SamplingFlags& sampling, const Respond& respond, bool keep_going_on_error) {
  std::vector<ChatMessage> history;
  if (!system.empty()) history.push_back({Role::System, system, {}});
  std::vector<Image> pending;  // /image files for the next message
  std::string line;
  while (true) {
    std::fprintf(stderr, "> ");
    if (!std::getline(std::cin, line) || line.empty()) break;
    if (line == "/reset") {
      history.resize(system.empty() ? 0 : 1);
      pending.clear();
      continue;
    }
    if (attach_command(line, pending)) continue;
    const bool with_images = !pending.empty();
    history.push_back({Role::User, line, std::move(pending)});
    pending.clear();
    InterruptScope interrupt;  // Ctrl+C stops this answer, not the chat
    GenerateOptions options = generate_options(sampling);
    options.cancel = interrupt.token();
    std::string answer;
    auto on_text = [&](std::string_view text) {
      answer += text;
      std::fwrite(text.data(), 1, text.size(), stdout);
      std::fflush(stdout);
      return true;
    };
    try {
      respond(history, options, on_text);
    } catch (const Error& e) {
      // A remote endpoint may come back (a restart, a network blip), and a bad image is the turn's
      // fault, not the chat's: the turn is dropped, the chat goes on.
      if (!keep_going_on_error && !with_images) throw;
      std::fflush(stdout);
      std::cerr << (answer.empty() ? "" : "\n") << "error: " << printable(e.what()) << "\n";
      history.pop_back();
      continue;
    }
    std::printf("\n");
    history.push_back({Role::Assistant, answer, {}});
  }
}

#ifdef KILN_HAVE_REMOTE
// The model to ask: --model when given (a note when the endpoint does not list it, as Ollama takes
// names it does not list), else the endpoint's only model.
std::string pick_remote_model(const remote::Endpoint& endpoint, const std::string& wanted) {
  const std::vector<remote::RemoteModel> models = remote::list_models(endpoint);
  std::string names;
  for (const auto& m : models) names += (names.empty() ? "" : ", ") + m.id;
  if (!wanted.empty()) {
    bool listed = false;
    for (const auto& m : models) listed = listed || m.id == wanted;
    if (!listed) std::cerr << "note: the endpoint does not list '" << printable(wanted) << "' (it lists: " << printable(names) << ")\n";
    return wanted;
  }
  if (models.size() == 1) return models.front().id;
  if (models.empty()) throw Error("the endpoint lists no models");
  throw Error("the endpoint serves " + std::to_string(models.size()) + " models; pick one with --model: " + names);
}
#endif

}  // namespace

void add_chat_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("chat", "Interactive chat (empty line or Ctrl+D ends; /reset clears; /image PATH attaches an image)");
  auto model = std::make_shared<ModelFlags>();
  auto sampling = std::make_shared<SamplingFlags>();
  auto system = std::make_shared<std::string>();
  auto endpoint = std::make_shared<std::string>();
  auto api_key = std::make_shared<std::string>();
  add_model_flags(*cmd, *model);
  add_sampling_flags(*cmd, *sampling);
  cmd->add_option("--system", *system, "System prompt");
#ifdef KILN_HAVE_REMOTE
  cmd->add_option("--endpoint", *endpoint,
                  "Chat with a model served elsewhere: an OpenAI-compatible API's URL (kiln serve, vLLM, SGLang, "
                  "llama.cpp, Ollama), e.g. http://host:8080/v1; --model then names one of its models");
  cmd->add_option("--api-key", *api_key, "The endpoint's API key (sent as a bearer token)");
#endif
  cmd->callback([=] {
#ifdef KILN_HAVE_REMOTE
    if (!endpoint->empty()) {
      const remote::Endpoint where{*endpoint, *api_key};
      const std::string name = pick_remote_model(where, model->model);
      std::cerr << "Chatting with " << printable(name) << " at " << printable(remote::api_root(*endpoint)) << "\n";
      chat_loop(*system, *sampling, [&](const auto& history, const auto& options, const auto& on_text) {
        return remote::chat(where, name, history, options, on_text);
      }, true);
      return;
    }
#endif
    if (!api_key->empty()) throw Error("--api-key goes with --endpoint");
    auto engine = load_engine(*model);
    chat_loop(*system, *sampling, [&](const auto& history, const auto& options, const auto& on_text) {
      return engine->chat(history, options, on_text);
    }, false);
  });
}

}  // namespace kiln::cli
