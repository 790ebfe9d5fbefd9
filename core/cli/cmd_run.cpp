// kiln run: one prompt, the answer streamed to stdout.
#include <cstdio>
#include <iostream>

#include "cli/common.h"
#include "common/printable.h"

namespace kiln::cli {

void add_run_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("run", "Generate text from a prompt (streams the answer)");
  auto model = std::make_shared<ModelFlags>();
  auto sampling = std::make_shared<SamplingFlags>();
  auto prompt = std::make_shared<std::string>();
  auto raw = std::make_shared<bool>(false);
  auto stats = std::make_shared<bool>(false);
  auto literal = std::make_shared<bool>(false);
  add_model_flags(*cmd, *model);
  add_sampling_flags(*cmd, *sampling);
  cmd->add_option("prompt,--prompt", *prompt, "The prompt")->required();
  cmd->add_flag("--raw", *raw, "Continue the text as is, without the chat turn format");
  cmd->add_flag("--stats", *stats, "Print timing statistics to stderr");
  cmd->add_flag("--no-parse-special", *literal,
                "Take special-token text (<start_of_turn>, <bos>) in a --raw prompt as plain text");
  cmd->callback([=] {
    auto engine = load_engine(*model);
    InterruptScope interrupt;
    GenerateOptions options = generate_options(*sampling);
    options.cancel = interrupt.token();
    options.parse_special = !*literal;
    auto print = [](std::string_view text) {
      std::fwrite(text.data(), 1, text.size(), stdout);
      std::fflush(stdout);
      return true;
    };
    // A named model is taken as a chat model and answers a user turn; the bundled demo model is a
    // plain text model (it was never tuned on turns), so without --model the prompt is continued.
    const bool chat = !*raw && !model->model.empty();
    GenerationStats s = chat ? engine->chat({{Role::User, *prompt}}, options, print)
                             : engine->generate(*prompt, options, print);
    std::printf("\n");
    for (const std::string& note : s.notes) std::fprintf(stderr, "note: %s\n", printable(note).c_str());
    if (*stats)
      std::fprintf(stderr, "prompt %d tokens, %d generated, first token %.0f ms, prefill %.1f tok/s, decode %.1f tok/s (%s)\n",
                   s.prompt_tokens, s.generated_tokens, s.time_to_first_token_ms, s.prefill_tokens_per_s,
                   s.decode_tokens_per_s, to_string(s.stop_reason).c_str());
  });
}

}  // namespace kiln::cli
