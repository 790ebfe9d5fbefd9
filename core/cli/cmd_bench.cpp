// kiln bench: prefill and decode speed, bytes moved per token, and peak memory, on a real model or
// on random weights of a released model's shape (--synthetic), which cost the same time.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>
#include <random>

#include "cli/bench_image.h"
#include "cli/bench_parallel.h"
#include "cli/common.h"
#include "engine/backend_factory.h"
#include "generate/sampler.h"
#include "kiln/hardware.h"
#include "model/checkpoint.h"
#include "model/presets.h"
#include "model/weights.h"
#include "quant/convert.h"
#include "runtime/cpu/matmul_kernels.h"
#include "runtime/cpu/read_bandwidth.h"
#include "runtime/cpu/thread_pool.h"
#ifdef KILN_HAVE_VULKAN
#include "runtime/vulkan/bandwidth.h"
#endif

namespace kiln::cli {
namespace {

using Clock = std::chrono::steady_clock;

struct BenchFlags {
  ModelFlags model;
  std::string synthetic;
  int prompt = 128;
  int gen = 32;
  bool json = false;
  bool profile = false;
  std::vector<int> parallel;  // --parallel: client counts (bench_parallel.h)
  int shared_prefix = 0;      // --shared-prefix: time to first token with a cached prefix
  bool image = false;         // --image: the vision tower's time for one image (bench_image.h)
};

struct BenchResult {
  std::string model, backend, precision;
  uint64_t weight_bytes = 0, kv_bytes = 0, peak_rss = 0;
  double load_s = 0, prefill_tps = 0, decode_tps = 0, bytes_per_token = 0;
  double prefill_again_tps = 0;  // the same prompt once more, right after: the warm figure
  double copy_gbs = 0;  // the device's compute-shader copy bandwidth (Vulkan): decode's ceiling
  double read_gbs = 0;  // a streaming read of memory by the CPU backend's threads: its decode's ceiling
  bool device_argmax = false;  // decode's greedy pick made by the backend on its device
  bool device_pick_agrees = false;  // ... and the last one equals the host's argmax of its logits
  // FNV-1a of the last decode step's logits, bit for bit: runs of one synthetic model that must
  // compute the same thing (a kernel variant that only reorders work) must show the same hash.
  uint64_t last_logits_hash = 0;
  std::vector<std::pair<std::string, double>> counters;
  std::optional<GpuPlan> plan;  // the Vulkan backend's plan for its device
  std::vector<OpTiming> profile;          // decode, all tokens
  std::vector<OpTiming> prefill_profile;  // one more prefill of the same prompt, after the timed one
  std::vector<std::string> notes;
};

// Bytes one decode step reads: every weight once (the embedding as the output projection; the
// lookup of one row is negligible) plus the keys and values attention reads at position `pos`.
double bytes_per_token(const Gemma3Weights& w, int64_t pos, bool f16_kv) {
  const Gemma3Config& c = w.config;
  double kv = 0;
  for (int l = 0; l < c.num_layers; ++l)
    kv += double(std::min<int64_t>(pos + 1, c.kv_positions(l, int(pos + 1)))) * c.num_kv_heads * c.head_dim * 2 *
          (f16_kv ? 2 : 4);
  return double(w.bytes()) + kv;
}

BenchResult run_bench(const BenchFlags& f) {
  BenchResult r;
  LoadOptions options = load_options(f.model);
  check_backend_options(options);  // before minutes of making weights
  r.precision = to_string(options.precision);
  const DType dtype = dtype_of(options.precision);
  const auto t0 = Clock::now();
  // The weights, and how to make them again should a Vulkan upload fail half way (create_backend).
  std::function<Gemma3Weights()> load;
  std::optional<Checkpoint> ck;
  if (!f.synthetic.empty()) {
    auto config = preset_config(f.synthetic);
    if (!config) throw Error("--synthetic: unknown model '" + f.synthetic + "' (gemma3-1b, -4b, -12b, -27b)");
    r.model = f.synthetic + " (synthetic)";
    load = [config, dtype, &options] { return synthetic_weights(*config, dtype, 1234, options.threads); };
  } else {
    const std::string path = options.path.empty() ? default_model_path() : options.path;
    if (path.empty()) throw Error("no model given and no bundled default model is installed");
    ck = open_checkpoint(path);
    r.model = path;
    load = [&ck, &options] { return load_checkpoint_weights(*ck, options.precision, options.threads, {}); };
  }
  auto weights = std::make_shared<Gemma3Weights>(load());
  const Gemma3Config config = weights->config;
  r.weight_bytes = weights->bytes();
  const int context = std::max(options.context_length, f.prompt + f.gen + 1);
  const bool f16_kv = dtype != DType::F32;
  auto backend = create_backend(weights, options, context, f16_kv ? DType::F16 : DType::F32, r.notes, load);
  ck.reset();
  const double bytes_at_end = bytes_per_token(*weights, f.prompt + f.gen / 2, f16_kv);
  weights.reset();
  r.load_s = std::chrono::duration<double>(Clock::now() - t0).count();
  r.backend = backend->name();
  r.kv_bytes = backend->kv_cache_bytes();

  std::mt19937 rng(42);
  std::uniform_int_distribution<int32_t> pick(3, config.vocab_size - 1);
  std::vector<int32_t> prompt(f.prompt);
  for (int32_t& t : prompt) t = pick(rng);
  std::vector<float> logits(config.vocab_size);

  // One untimed token warms caches, pipelines and the thread pool.
  backend->forward(std::span<const int32_t>(prompt.data(), 1), 0, false, logits.data());
  auto t1 = Clock::now();
  backend->forward(prompt, 0, false, logits.data());
  const double prefill_s = std::chrono::duration<double>(Clock::now() - t1).count();
  r.prefill_tps = f.prompt / prefill_s;
  // Again (same tokens, positions and cache contents): what the first one paid for first use.
  t1 = Clock::now();
  backend->forward(prompt, 0, false, logits.data());
  r.prefill_again_tps = f.prompt / std::chrono::duration<double>(Clock::now() - t1).count();
  if (f.profile) {
    // Profiled separately, so the timestamps cost the timed prefill nothing. The same tokens at the
    // same positions write the same cache, so decode below is unchanged.
    backend->set_profiling(true);
    backend->take_profile();
    backend->forward(prompt, 0, false, logits.data());
    r.prefill_profile = backend->take_profile();
  }

  backend->set_profiling(f.profile);
  backend->take_profile();
  t1 = Clock::now();
  // Greedy, as the engine decodes at temperature 0: the pick made on the device where the backend
  // can (Backend::forward_argmax), else the logits read back and the pick made here.
  std::optional<int32_t> picked;
  int32_t next = 0;
  for (int i = 0; i < f.gen; ++i) {
    next = std::clamp(picked ? *picked : argmax(logits), 0, config.vocab_size - 1);
    const std::span<const int32_t> fed(&next, 1);
    picked = backend->forward_argmax(fed, f.prompt + i);
    if (!picked) backend->forward(fed, f.prompt + i, false, logits.data());
    r.device_argmax = picked.has_value();
  }
  const double decode_s = std::chrono::duration<double>(Clock::now() - t1).count();
  r.decode_tps = f.gen / decode_s;
  r.bytes_per_token = bytes_at_end;
  r.counters = backend->counters();
  r.plan = backend->gpu_plan();
  r.profile = backend->take_profile();
  // The last step once more (a rewrite of its position), its logits read back: does the host's
  // argmax pick what the device did? After the counters and the profile, which it must not touch.
  if (picked) {
    backend->forward(std::span<const int32_t>(&next, 1), f.prompt + f.gen - 1, false, logits.data());
    r.device_pick_agrees = *picked == argmax(logits);
  }
  r.last_logits_hash = 14695981039346656037ull;
  for (float v : logits) {
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    for (int i = 0; i < 4; ++i) r.last_logits_hash = (r.last_logits_hash ^ ((bits >> (8 * i)) & 255u)) * 1099511628211ull;
  }
  r.peak_rss = peak_resident_memory_bytes();
  // The CPU's ceiling: 512 MiB (far past any L3 decode could hide in) read by as many threads as
  // the backend has, after decode so it disturbs nothing, and after peak_rss so it is not counted.
  if (r.backend.rfind("cpu", 0) == 0) {
    ThreadPool pool(options.threads);
    r.read_gbs = measure_read_bandwidth(pool, size_t(512) << 20, 5);
  }
#ifdef KILN_HAVE_VULKAN
  // The ceiling decode is measured against: a large copy through the shader cores, same run.
  if (r.backend.rfind("vulkan", 0) == 0) {
    try {
      r.copy_gbs = measure_vulkan_bandwidth(options.vulkan_device, options.backend == BackendKind::Vulkan, 1ull << 30, 5)
                       .copy_gbs;
    } catch (const Error& e) {
      r.notes.push_back(std::string("bandwidth probe failed: ") + e.what());
    }
  }
#endif
  return r;
}

void print_json(const BenchResult& r) {
  std::printf("{\"model\": \"%s\", \"backend\": \"%s\", \"precision\": \"%s\", \"weight_bytes\": %llu, "
              "\"kv_cache_bytes\": %llu, \"load_s\": %.3f, \"prefill_tokens_per_s\": %.3f, "
              "\"decode_tokens_per_s\": %.3f, \"bytes_per_token\": %.0f, \"achieved_gb_per_s\": %.3f, "
              "\"peak_rss_bytes\": %llu, \"prefill_again_tokens_per_s\": %.3f, \"decode_pick\": \"%s\", "
              "\"last_logits_fnv1a\": \"%016llx\", \"cpu_kernels\": \"%s\"",
              r.model.c_str(), r.backend.c_str(), r.precision.c_str(), (unsigned long long)r.weight_bytes,
              (unsigned long long)r.kv_bytes, r.load_s, r.prefill_tps, r.decode_tps, r.bytes_per_token,
              r.bytes_per_token * r.decode_tps / 1e9, (unsigned long long)r.peak_rss, r.prefill_again_tps,
              !r.device_argmax ? "host" : r.device_pick_agrees ? "device" : "device, differs from the host",
              (unsigned long long)r.last_logits_hash, best_matmul_kernels().name);
  if (!r.counters.empty()) {
    std::printf(", \"counters\": {");
    for (size_t i = 0; i < r.counters.size(); ++i)
      std::printf("%s\"%s\": %.6g", i ? ", " : "", r.counters[i].first.c_str(), r.counters[i].second);
    std::printf("}");
  }
  if (r.copy_gbs > 0)
    std::printf(", \"device_copy_gb_per_s\": %.1f, \"decode_fraction_of_copy\": %.3f", r.copy_gbs,
                r.bytes_per_token * r.decode_tps / 1e9 / r.copy_gbs);
  if (r.read_gbs > 0)
    std::printf(", \"memory_read_gb_per_s\": %.1f, \"decode_fraction_of_read\": %.3f", r.read_gbs,
                r.bytes_per_token * r.decode_tps / 1e9 / r.read_gbs);
  if (r.plan) {
    std::printf(", \"vulkan\": {");
    const char* keys[] = {"allocations_during_decode", "descriptor_set_allocations_during_decode",
                          "pipeline_creations_during_decode", "submits_per_token"};
    for (const char* k : keys)
      for (const auto& [name, value] : r.counters)
        if (name == k) std::printf("\"%s\": %.6g, ", k, value);
    const GpuPlan& p = *r.plan;
    std::printf("\"plan\": {\"family\": \"%s\", \"prefill\": \"%s\", \"prefill_sums\": \"%s\", \"decode\": \"%s\", "
                "\"stage_flags\": %s, \"run_ahead\": %s, \"subgroup_size\": %d}}",
                p.family.c_str(), p.prefill.c_str(), p.prefill_sums.c_str(), p.decode.c_str(), p.stage_flags ? "true" : "false",
                p.run_ahead ? "true" : "false", p.subgroup_size);
  }
  auto print_profile = [](const char* key, const std::vector<OpTiming>& profile) {
    if (profile.empty()) return;
    std::printf(", \"%s\": [", key);
    for (size_t i = 0; i < profile.size(); ++i)
      std::printf("%s{\"op\": \"%s\", \"layer\": %d, \"micros\": %.1f, \"calls\": %llu}", i ? ", " : "",
                  profile[i].op.c_str(), profile[i].layer, profile[i].micros, (unsigned long long)profile[i].calls);
    std::printf("]");
  };
  print_profile("profile", r.profile);
  print_profile("prefill_profile", r.prefill_profile);
  std::printf("}\n");
}

void print_text(const BenchResult& r) {
  for (const std::string& n : r.notes) std::fprintf(stderr, "note: %s\n", n.c_str());
  std::printf("model        %s\nbackend      %s\nprecision    %s\n", r.model.c_str(), r.backend.c_str(),
              r.precision.c_str());
  std::printf("weights      %.3f GB\nkv cache     %.3f GB\nload         %.2f s\n", r.weight_bytes / 1e9,
              r.kv_bytes / 1e9, r.load_s);
  std::printf("prefill      %.2f tokens/s (again: %.2f)\ndecode       %.2f tokens/s (%.2f GB/s of %.3f GB a token)\n",
              r.prefill_tps, r.prefill_again_tps, r.decode_tps, r.bytes_per_token * r.decode_tps / 1e9, r.bytes_per_token / 1e9);
  std::printf("greedy pick  %s\n", !r.device_argmax        ? "on the host"
                                    : r.device_pick_agrees ? "on the device (the host's argmax agrees)"
                                                           : "on the device (DIFFERS from the host's argmax)");
  if (r.copy_gbs > 0)
    std::printf("device copy  %.1f GB/s (decode reaches %.1f %% of it)\n", r.copy_gbs,
                100 * r.bytes_per_token * r.decode_tps / 1e9 / r.copy_gbs);
  if (r.read_gbs > 0)
    std::printf("memory read  %.1f GB/s (decode reaches %.1f %% of it)\n", r.read_gbs,
                100 * r.bytes_per_token * r.decode_tps / 1e9 / r.read_gbs);
  if (r.plan)
    std::printf("plan         %s family: prefill %s (%s sums), decode %s, %s%s, subgroup size %d\n",
                r.plan->family.c_str(), r.plan->prefill.c_str(), r.plan->prefill_sums.c_str(), r.plan->decode.c_str(),
                r.plan->stage_flags ? "stage flags" : "pipeline barriers", r.plan->run_ahead ? ", steps run ahead" : "",
                r.plan->subgroup_size);
  std::printf("peak memory  %.3f GB\n", r.peak_rss / 1e9);
  for (const auto& [name, value] : r.counters) std::printf("%-28s %g\n", name.c_str(), value);
  auto print_per_op = [](const char* title, const std::vector<OpTiming>& profile) {
    if (profile.empty()) return;
    std::printf("%s\n", title);
    for (const auto& [op, us] : time_per_op(profile)) std::printf("  %-20s %10.2f\n", op.c_str(), us / 1000.0);
  };
  print_per_op("prefill profile (ms, one prefill):", r.prefill_profile);
  print_per_op("decode profile (ms, all tokens):", r.profile);
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("bench", "Measure prefill and decode speed and memory");
  auto f = std::make_shared<BenchFlags>();
  add_model_flags(*cmd, f->model);
  cmd->add_option("--synthetic", f->synthetic, "Random weights of a released shape: gemma3-1b, -4b, -12b, -27b");
  cmd->add_option("--prompt", f->prompt, "Prompt tokens (one prefill batch)")->capture_default_str();
  cmd->add_option("--gen", f->gen, "Tokens to decode")->capture_default_str();
  cmd->add_flag("--json", f->json, "Print one JSON object");
  cmd->add_flag("--profile", f->profile, "Per-op timings of the decode phase (with --parallel: a step's, for each count; with --image --backend vulkan: of the vision tower)");
  cmd->add_option("--parallel", f->parallel,
                  "Aggregate decode speed of N generations decoded together in the engine's slots, for each N "
                  "(e.g. 1,2,4,8); needs a model (not --synthetic)")
      ->delimiter(',');
  cmd->add_option("--shared-prefix", f->shared_prefix,
                  "Time to first token of a request sharing this many prompt tokens with the one before "
                  "(then --prompt new ones), against the same request cold");
  cmd->add_flag("--image", f->image,
                 "Time to encode one 896x896 image with Gemma 3 4B's vision tower (synthetic weights; on the CPU "
                 "with --threads, or --backend vulkan [--device N]; --precision f16 or f32)");
  cmd->callback([f] {
    if (f->image) return run_image_bench(f->model, f->json, f->profile);
    if (f->prompt < 1 || f->gen < 1) throw Error("--prompt and --gen must be at least 1");
    if (f->shared_prefix > 0) {
      if (!f->synthetic.empty()) throw Error("--shared-prefix runs the engine, which needs a model file: not --synthetic");
      return run_prefix_bench(f->model, f->shared_prefix, f->prompt);
    }
    if (!f->parallel.empty()) {
      if (!f->synthetic.empty()) throw Error("--parallel runs the engine, which needs a model file: not --synthetic");
      return run_parallel_bench(f->model, f->parallel, f->prompt, f->gen, f->json, f->profile);
    }
    const BenchResult r = run_bench(*f);
    if (f->json) print_json(r);
    else print_text(r);
  });
}

}  // namespace kiln::cli
