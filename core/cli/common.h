// Options and helpers shared by the CLI's subcommands.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "kiln/engine.h"

namespace kiln::cli {

struct ModelFlags {
  std::string model;        // folder or .gguf; "" = the bundled default model
  std::string precision = "auto";
  std::string backend = "auto";
  std::string attention = "auto";
  int device = -1;
  int context = 0;
  bool context_force = false;
  int threads = 0;
  std::vector<std::string> tune;  // key=value, over the Vulkan device's plan
  std::string mmproj;             // llama.cpp's vision tower file for a GGUF model
  bool pan_and_scan = false;      // large or long images also go in as crops
};

struct SamplingFlags {
  SamplingChoice choice;  // only what the user passed; the rest is the model's default
  int max_tokens = 512;
  std::vector<std::string> stop;
};

// --model, --precision, --backend, --device, --ctx, --threads, --attention, --tune, --mmproj
void add_model_flags(CLI::App& cmd, ModelFlags& flags, const std::string& default_precision = "auto");
// --temperature, --top-k, --top-p, --min-p, --repeat-penalty, --repeat-last-n, --seed, --max-tokens, --stop
void add_sampling_flags(CLI::App& cmd, SamplingFlags& flags);

LoadOptions load_options(const ModelFlags& flags);
// Loads with a progress line on stderr (when it is a terminal) and prints the engine's notes there.
std::unique_ptr<Engine> load_engine(const ModelFlags& flags, bool quiet = false);
GenerateOptions generate_options(const SamplingFlags& flags);
// An image file's bytes, named by its path for messages. Throws Error when it cannot be read.
Image read_image_file(const std::string& path);
// A profile's time summed over layers per op, longest first (microseconds): where the time goes.
std::vector<std::pair<std::string, double>> time_per_op(const std::vector<OpTiming>& profile);

// A stop source that Ctrl+C triggers while `scope` lives (the second Ctrl+C exits).
class InterruptScope {
 public:
  InterruptScope();
  ~InterruptScope();
  std::stop_token token() const;
};

void add_run_command(CLI::App& app);
void add_chat_command(CLI::App& app);
void add_info_command(CLI::App& app);
void add_logits_command(CLI::App& app);
void add_tokenize_command(CLI::App& app);
void add_bench_command(CLI::App& app);

}  // namespace kiln::cli

// Subcommands from optional libraries, defined in their own files.
void add_serve_command(CLI::App& app);
void add_pull_command(CLI::App& app);
void add_perplexity_command(CLI::App& app);
void add_quantize_command(CLI::App& app);
