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
  auto images = std::make_shared<std::vector<std::string>>();
  cmd->add_flag("--raw", *raw, "Continue the text as is, without the chat turn format");
  cmd->add_option("--image", *images, "An image (PNG, JPEG, WebP) the model sees before the prompt (repeatable; "
                                      "needs a model that sees images)")
      ->allow_extra_args(false);  // one file an occurrence: never the prompt after it
  cmd->add_flag("--stats", *stats, "Print timing statistics to stderr");
  cmd->add_flag("--no-parse-special", *literal,
                "Take special-token text (<start_of_turn>, <bos>) in a --raw prompt as plain text");
  cmd->callback([=] {
    if (*raw && !images->empty()) throw Error("--image needs a chat turn; leave out --raw");
    ChatMessage turn{Role::User, *prompt, {}};
    for (const std::string& path : *images) turn.images.push_back(read_image_file(path));  // before the load
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
    // Images are always shown in a user turn.
    const bool chat = !*raw && (!model->model.empty() || !turn.images.empty());
    GenerationStats s = chat ? engine->chat({turn}, options, print)
                             : engine->generate(*prompt, options, print);
    std::printf("\n");
    for (const std::string& note : s.notes) std::fprintf(stderr, "note: %s\n", printable(note).c_str());
    if (*stats)
      std::fprintf(stderr, "prompt %d tokens, %d generated, first token %.0f ms, prefill %.1f tok/s, decode %.1f tok/s (%s)\n",
                   s.prompt_tokens, s.generated_tokens, s.time_to_first_token_ms, s.prefill_tokens_per_s,
                   s.decode_tokens_per_s, to_string(s.stop_reason).c_str());
    if (*stats && s.images_encoded > 0)
      std::fprintf(stderr, "%d image(s) encoded in %.0f ms\n", s.images_encoded, s.image_encode_ms);
  });
}

}  // namespace kiln::cli
