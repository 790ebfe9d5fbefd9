// kiln chat: an interactive conversation with history (the KV cache carries it between turns).
#include <cstdio>
#include <iostream>

#include "cli/common.h"

namespace kiln::cli {

void add_chat_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("chat", "Interactive chat (empty line or Ctrl+D ends; /reset clears)");
  auto model = std::make_shared<ModelFlags>();
  auto sampling = std::make_shared<SamplingFlags>();
  auto system = std::make_shared<std::string>();
  add_model_flags(*cmd, *model);
  add_sampling_flags(*cmd, *sampling);
  cmd->add_option("--system", *system, "System prompt");
  cmd->callback([=] {
    auto engine = load_engine(*model);
    std::vector<ChatMessage> history;
    if (!system->empty()) history.push_back({Role::System, *system});
    std::string line;
    while (true) {
      std::fprintf(stderr, "> ");
      if (!std::getline(std::cin, line) || line.empty()) break;
      if (line == "/reset") {
        history.resize(system->empty() ? 0 : 1);
        continue;
      }
      history.push_back({Role::User, line});
      InterruptScope interrupt;  // Ctrl+C stops this answer, not the chat
      GenerateOptions options = generate_options(*sampling);
      options.cancel = interrupt.token();
      std::string answer;
      engine->chat(history, options, [&](std::string_view text) {
        answer += text;
        std::fwrite(text.data(), 1, text.size(), stdout);
        std::fflush(stdout);
        return true;
      });
      std::printf("\n");
      history.push_back({Role::Assistant, answer});
    }
  });
}

}  // namespace kiln::cli
