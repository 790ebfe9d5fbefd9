#include "cli/common.h"

#include "common/printable.h"

#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <fstream>
#include <sstream>
#include <cstdio>
#include <iostream>

namespace kiln::cli {

void add_model_flags(CLI::App& cmd, ModelFlags& f, const std::string& default_precision) {
  f.precision = default_precision;
  cmd.add_option("-m,--model", f.model, "Model folder (Hugging Face) or .gguf file; default: the bundled model");
  cmd.add_option("-p,--precision", f.precision,
                 "Weights in memory: auto (a GGUF as stored, a folder in q8_0), f32, f16, q8_0 (int8), q4_0 (int4), "
                 "q4_k_m, q6_k (llama.cpp's mixes; need K-quant kernels)")
      ->capture_default_str();
  cmd.add_option("--backend", f.backend, "auto, vulkan or cpu")->capture_default_str();
  cmd.add_option("--device", f.device, "Vulkan device index (see kiln info --hardware)");
  cmd.add_option("--ctx", f.context, "Context length in tokens (default: the model's own, as far as memory holds it)");
  cmd.add_flag("--ctx-force", f.context_force, "Allow --ctx past the context the model was trained for");
  cmd.add_option("-t,--threads", f.threads, "CPU threads (default: one per physical core)");
  cmd.add_option("--attention", f.attention, "Where attention runs: auto, gpu, cpu, npu, npu-emulator")
      ->capture_default_str();
  cmd.add_option("--tune", f.tune,
                 "Vulkan tuning or experiment, key=value over the device's plan (repeatable; e.g. stage_flags=0; "
                 "see core/runtime/vulkan/PERFORMANCE.md, \"Device plans\")")
      ->allow_extra_args(false);  // one pair an occurrence: never the prompt after it
  cmd.add_option("--mmproj", f.mmproj,
                 "Vision tower for a GGUF model (llama.cpp's mmproj file; default: the one mmproj*.gguf beside it)");
  cmd.add_flag("--pan-and-scan", f.pan_and_scan,
               "Images whose long side is 1.2 times the short one or more also go in as crops (Gemma 3's pan-and-scan)");
}

void add_sampling_flags(CLI::App& cmd, SamplingFlags& f) {
  // Unset flags take the model's generation_config.json, then Kiln's defaults (kiln info --model).
  const SamplingParams kiln;
  auto fallback = [](auto value) { return "model default, else " + CLI::detail::to_string(value); };
  cmd.add_option("--temperature,--temp", f.choice.temperature, "0 = greedy")->default_str(fallback(kiln.temperature));
  cmd.add_option("--top-k", f.choice.top_k, "0 = off")->default_str(fallback(kiln.top_k));
  cmd.add_option("--top-p", f.choice.top_p, "1 = off")->default_str(fallback(kiln.top_p));
  cmd.add_option("--min-p", f.choice.min_p, "0 = off")->default_str(fallback(kiln.min_p));
  cmd.add_option("--repeat-penalty", f.choice.repeat_penalty, "1 = off")->default_str(fallback(kiln.repeat_penalty));
  cmd.add_option("--repeat-last-n", f.choice.repeat_last_n)->default_str(std::to_string(kiln.repeat_last_n));
  cmd.add_option("--seed", f.choice.seed, "0 = random")->default_str("0");
  cmd.add_option("-n,--max-tokens", f.max_tokens)->capture_default_str();
  cmd.add_option("--stop", f.stop, "Stop string (repeatable)");
}

LoadOptions load_options(const ModelFlags& f) {
  LoadOptions o;
  o.path = f.model;
  auto p = parse_precision(f.precision);
  if (!p) throw Error("unknown precision '" + f.precision + "' (auto, f32, f16, q8_0, q4_0, q4_k_m, q6_k)");
  o.precision = *p;
  auto b = parse_backend(f.backend);
  if (!b) throw Error("unknown backend '" + f.backend + "' (auto, vulkan, cpu)");
  o.backend = *b;
  auto a = parse_attention(f.attention);
  if (!a) throw Error("unknown attention placement '" + f.attention + "' (auto, gpu, cpu, npu, npu-emulator)");
  o.attention = *a;
  o.vulkan_device = f.device;
  o.context_length = f.context;
  if (f.context_force) o.context_beyond_training = LoadOptions::BeyondTraining::Allow;
  o.threads = f.threads;
  o.mmproj = f.mmproj;
  o.images.pan_and_scan = f.pan_and_scan;
  for (const std::string& t : f.tune) {
    const size_t eq = t.find('=');
    if (eq == std::string::npos || eq == 0) throw Error("--tune takes key=value, not '" + t + "'");
    o.vulkan_tuning.emplace_back(t.substr(0, eq), t.substr(eq + 1));
  }
  return o;
}

std::vector<std::pair<std::string, double>> time_per_op(const std::vector<OpTiming>& profile) {
  std::vector<std::pair<std::string, double>> per_op;
  for (const OpTiming& t : profile) {
    auto it = std::find_if(per_op.begin(), per_op.end(), [&](const auto& p) { return p.first == t.op; });
    if (it == per_op.end()) per_op.emplace_back(t.op, t.micros);
    else it->second += t.micros;
  }
  std::sort(per_op.begin(), per_op.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return per_op;
}

std::unique_ptr<Engine> load_engine(const ModelFlags& f, bool quiet) {
  LoadOptions o = load_options(f);
  const bool tty = isatty(STDERR_FILENO);
  if (tty && !quiet)
    o.on_progress = [](const LoadProgress& p) {
      std::fprintf(stderr, "\r%-10s %3d%%", p.stage.c_str(), int(p.fraction * 100));
      if (p.fraction >= 1.0) std::fprintf(stderr, "\r\033[K");
    };
  auto engine = Engine::load(o);
  if (!quiet)
    for (const std::string& note : engine->info().notes) std::cerr << "note: " << printable(note) << "\n";
  return engine;
}

GenerateOptions generate_options(const SamplingFlags& f) {
  GenerateOptions g;
  g.sampling = f.choice;
  g.max_tokens = f.max_tokens;
  g.stop = f.stop;
  return g;
}

Image read_image_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open the image file");
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (in.bad()) throw Error(path + ": cannot read the image file");
  return {path, std::move(bytes).str()};
}

namespace {
std::stop_source* g_interrupt = nullptr;  // only the signal handler's view of the active scope
extern "C" void on_sigint(int) {
  if (g_interrupt && !g_interrupt->stop_requested()) {
    g_interrupt->request_stop();
  } else {
    std::_Exit(130);
  }
}
std::stop_source g_source_storage;
}  // namespace

InterruptScope::InterruptScope() {
  g_source_storage = std::stop_source();
  g_interrupt = &g_source_storage;
  std::signal(SIGINT, on_sigint);
}

InterruptScope::~InterruptScope() {
  std::signal(SIGINT, SIG_DFL);
  g_interrupt = nullptr;
}

std::stop_token InterruptScope::token() const { return g_source_storage.get_token(); }

}  // namespace kiln::cli
