// kiln perplexity: how well a model predicts a text, and what a weight precision costs against another.
//
// Windows, as llama.cpp's perplexity tool scores them: each window is [BOS] + ctx-1 tokens of the text,
// windows advance by ctx/2, and only the predictions in a window's second half (window index >= ctx/2)
// are scored, so every scored token has at least ctx/2-1 tokens of context and each text token from
// index ctx/2-1 on is scored exactly once. resources/training/train.py computes the same figure with
// transformers (tests/data/demo-reference.json), and tests/core/test_perplexity.cpp holds the two equal.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "cli/common.h"

namespace {

using kiln::Error;

constexpr int kDefaultWindow = 512;
constexpr std::uintmax_t kMaxFileBytes = 256u << 20;  // a text, not a corpus dump

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open: " + std::strerror(errno));
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  if (size < 0) throw Error(path + ": cannot read (not a regular file?)");
  if (std::uintmax_t(size) > kMaxFileBytes)
    throw Error(path + ": " + std::to_string(size >> 20) + " MB is more than the 256 MB perplexity reads");
  in.seekg(0);
  std::string text(size_t(size), '\0');
  if (!in.read(text.data(), size)) throw Error(path + ": read failed");
  return text;
}

// Text tokens [start, start + length) go into one window after BOS.
struct Window {
  size_t start = 0;
  size_t length = 0;
};

std::vector<Window> plan_windows(size_t tokens, int ctx) {
  const size_t half = size_t(ctx / 2);
  std::vector<Window> windows;
  for (size_t start = 0; start + half <= tokens; start += half)
    windows.push_back({start, std::min(size_t(ctx - 1), tokens - start)});
  return windows;
}

// log(sum(exp(row))) in double, stable for any logit range.
double log_sum_exp(std::span<const float> row) {
  const float top = *std::max_element(row.begin(), row.end());
  double sum = 0;
  for (float x : row) sum += std::exp(double(x) - top);
  return top + std::log(sum);
}

size_t argmax(std::span<const float> row) {
  return size_t(std::max_element(row.begin(), row.end()) - row.begin());
}

// KL(reference || test) in nats for one position: sum_i p_i (log p_i - log q_i).
double kl_divergence(std::span<const float> reference, double reference_lse, std::span<const float> test,
                     double test_lse) {
  double kl = 0;
  for (size_t i = 0; i < reference.size(); ++i) {
    const double log_p = reference[i] - reference_lse;
    const double log_q = test[i] - test_lse;
    kl += std::exp(log_p) * (log_p - log_q);
  }
  return std::max(0.0, kl);  // rounding can leave a tiny negative for identical rows
}

struct Totals {
  double nll = 0, reference_nll = 0, kl = 0;
  size_t scored = 0, top1_agree = 0;
};

struct PerplexityArgs {
  kiln::cli::ModelFlags model;
  std::string file;
  std::string kl_reference;
  bool json = false;
};

void run_perplexity(PerplexityArgs args) {
  if (args.model.model.empty()) args.model.model = kiln::default_model_path();
  if (args.model.model.empty()) throw Error("no --model given and no bundled model found");
  const bool window_given = args.model.context > 0;
  int ctx = window_given ? args.model.context : kDefaultWindow;
  const int model_max = kiln::Engine::inspect(args.model.model).max_context;
  if (ctx > model_max) {
    if (window_given)
      throw Error("--ctx " + std::to_string(ctx) + " is more than the model's context of " + std::to_string(model_max));
    ctx = model_max;
  }
  if (ctx < 4) throw Error("--ctx must be at least 4 tokens");
  args.model.context = ctx;  // the engine needs no more cache than one window

  std::optional<kiln::Precision> reference_precision;
  if (!args.kl_reference.empty()) {
    reference_precision = kiln::parse_precision(args.kl_reference);
    if (!reference_precision)
      throw Error("unknown --kl-reference precision '" + args.kl_reference + "' (f32, f16, q8_0, q4_0)");
  }

  const std::string text = read_text_file(args.file);
  auto engine = kiln::cli::load_engine(args.model, args.json);
  std::unique_ptr<kiln::Engine> reference;
  if (reference_precision) {
    kiln::cli::ModelFlags flags = args.model;
    flags.precision = kiln::to_string(*reference_precision);
    reference = kiln::cli::load_engine(flags, true);
  }

  const std::vector<int32_t> bos = engine->tokenize("", true);
  if (bos.size() != 1) throw Error(args.model.model + ": the tokenizer has no BOS token");
  const std::vector<int32_t> tokens = engine->tokenize(text, false, /*parse_special=*/false);  // as llama.cpp scores text
  const std::vector<Window> windows = plan_windows(tokens.size(), ctx);
  if (windows.empty())
    throw Error(args.file + ": " + std::to_string(tokens.size()) + " tokens are too few for windows of " +
                std::to_string(ctx) + " (at least " + std::to_string(ctx / 2) + " needed)");

  kiln::cli::InterruptScope interrupt;
  const bool progress = !args.json && isatty(STDERR_FILENO);
  const auto started = std::chrono::steady_clock::now();
  const size_t half = size_t(ctx / 2);
  Totals totals;
  std::vector<int32_t> input;  // [window length + 1]: BOS, then the window's text tokens
  for (size_t w = 0; w < windows.size(); ++w) {
    if (interrupt.token().stop_requested()) throw Error("perplexity: interrupted");
    input.assign(bos.begin(), bos.end());
    input.insert(input.end(), tokens.begin() + long(windows[w].start),
                 tokens.begin() + long(windows[w].start + windows[w].length));
    // Only the scored half: rows[j - half] predicts input[j].
    const int first_row = int(half) - 1;
    const auto rows = engine->logits(input, 0, first_row);
    std::vector<std::vector<float>> reference_rows;
    if (reference) reference_rows = reference->logits(input, 0, first_row);
    for (size_t j = half; j < input.size(); ++j) {
      const std::span<const float> row = rows[j - half];
      const double lse = log_sum_exp(row);
      totals.nll += lse - row[size_t(input[j])];
      ++totals.scored;
      if (reference) {
        const std::span<const float> ref_row = reference_rows[j - half];
        const double ref_lse = log_sum_exp(ref_row);
        totals.reference_nll += ref_lse - ref_row[size_t(input[j])];
        totals.kl += kl_divergence(ref_row, ref_lse, row, lse);
        totals.top1_agree += argmax(ref_row) == argmax(row);
      }
    }
    if (progress)
      std::fprintf(stderr, "\rwindow %zu/%zu  perplexity %.4f\033[K", w + 1, windows.size(),
                   std::exp(totals.nll / double(totals.scored)));
  }
  if (progress) std::fprintf(stderr, "\r\033[K");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  const double n = double(totals.scored);
  const double perplexity = std::exp(totals.nll / n);
  const std::string precision = kiln::to_string(engine->info().precision);
  if (args.json) {
    std::printf("{\"perplexity\":%.6f,\"tokens\":%zu,\"precision\":\"%s\",\"ctx\":%d,\"windows\":%zu,\"seconds\":%.3f",
                perplexity, totals.scored, precision.c_str(), ctx, windows.size(), seconds);
    if (reference)
      std::printf(",\"reference_precision\":\"%s\",\"reference_perplexity\":%.6f,\"kl_divergence\":%.6g,"
                  "\"top1_agreement\":%.6f",
                  kiln::to_string(*reference_precision).c_str(), std::exp(totals.reference_nll / n),
                  totals.kl / n, double(totals.top1_agree) / n);
    std::printf("}\n");
    return;
  }
  std::printf("perplexity %.4f over %zu tokens (%s, %zu windows of %d tokens, %.1f s)\n", perplexity,
              totals.scored, precision.c_str(), windows.size(), ctx, seconds);
  if (reference)
    std::printf("against %s (perplexity %.4f): mean KL divergence %.3g nats/token, top-1 agreement %.2f %%\n",
                kiln::to_string(*reference_precision).c_str(), std::exp(totals.reference_nll / n), totals.kl / n,
                100.0 * double(totals.top1_agree) / n);
}

}  // namespace

void add_perplexity_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("perplexity", "Perplexity of a text file; with --kl-reference, what a precision costs");
  auto args = std::make_shared<PerplexityArgs>();
  kiln::cli::add_model_flags(*cmd, args->model);
  cmd->get_option("--ctx")->description("Window in tokens (default 512, at most the model's context)");
  cmd->add_option("-f,--file", args->file, "Text file to score (UTF-8)")->required();
  cmd->add_flag("--json", args->json, "Print {\"perplexity\": .., \"tokens\": .., ...} on one line");
  cmd->add_option("--kl-reference", args->kl_reference,
                  "Also run this precision (e.g. f32) and report mean KL divergence and top-1 agreement against it");
  cmd->callback([args] { run_perplexity(*args); });
}
