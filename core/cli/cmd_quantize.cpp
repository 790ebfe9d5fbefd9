// kiln quantize IN OUT --type q4_k_m|q6_k|q8_0|q4_0: a model folder or GGUF file written as a
// quantized GGUF file that llama.cpp and Kiln both load (model/gguf_quantize.h does the work).
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>

#include "cli/common.h"
#include "kiln/types.h"
#include "model/gguf_quantize.h"

namespace {

struct QuantizeArgs {
  std::string input;
  std::string output;
  std::string type = "q4_k_m";
  int threads = 0;
  bool quiet = false;
};

void run_quantize(const QuantizeArgs& args) {
  auto mix = kiln::parse_quant_mix(args.type);
  if (!mix) throw kiln::Error("unknown --type '" + args.type + "' (use q4_k_m, q6_k, q8_0 or q4_0)");
  kiln::QuantizeOptions options;
  options.input = args.input;
  options.output = args.output;
  options.mix = *mix;
  options.threads = args.threads;
  const bool show_progress = !args.quiet && isatty(STDERR_FILENO);
  if (show_progress) {
    options.progress = [](int done, int total) {
      std::fprintf(stderr, "\rquantizing: %d/%d tensors", done, total);
      if (done == total) std::fputc('\n', stderr);
    };
  }
  const kiln::QuantizeReport report = kiln::quantize_model(options);
  if (!args.quiet)
    for (const std::string& note : report.notes) std::fprintf(stderr, "note: %s\n", note.c_str());
  std::string types;
  for (const auto& [type, count] : report.types)
    types += (types.empty() ? "" : ", ") + std::to_string(count) + " " + type;
  std::printf("%s: %d tensors (%s), %.1f MB, %s\n", args.output.c_str(), report.tensors, types.c_str(),
              double(report.bytes) / 1e6, kiln::to_string(*mix));
}

}  // namespace

void add_quantize_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("quantize", "Write a model (folder or GGUF) as a quantized GGUF file");
  auto args = std::make_shared<QuantizeArgs>();
  cmd->add_option("input", args->input, "Hugging Face model folder or .gguf file")->required();
  cmd->add_option("output", args->output, "GGUF file to write (replaced only once complete)")->required();
  cmd->add_option("--type", args->type,
                  "q4_k_m (llama.cpp's mix: Q4_K, Q6_K on the embedding and some attn_v / ffn_down), "
                  "q6_k, q8_0 or q4_0 (default q4_k_m)");
  cmd->add_option("--threads", args->threads, "Threads (default: one per physical core)");
  cmd->add_flag("-q,--quiet", args->quiet, "Print only the summary line");
  cmd->callback([args] { run_quantize(*args); });
}
