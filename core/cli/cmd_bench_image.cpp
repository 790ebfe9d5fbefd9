// kiln bench --image: one 896 x 896 image through Gemma 3 4B's vision tower and projector with
// synthetic weights, which cost the same time as the real ones: on the CPU, or with --backend
// vulkan on a Vulkan device (a warm-up run, then timed runs).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <optional>
#include <random>

#include "cli/bench_image.h"
#include "kiln/hardware.h"
#include "runtime/cpu/matmul_kernels.h"
#include "vision/vision_encoder.h"
#include "vision/vision_weights.h"
#ifdef KILN_HAVE_VULKAN
#include "runtime/vulkan/vision_tower_gpu.h"
#endif

namespace kiln::cli {
namespace {

constexpr int kGpuTimedRuns = 5;  // after one warm-up run (pipelines, caches, clocks)

// GPU time per op (summed over layers) for one image: the profile of `runs` encodes.
using OpMillis = std::vector<std::pair<std::string, double>>;
OpMillis per_op(const std::vector<OpTiming>& timings, size_t runs) {
  OpMillis out;
  for (const OpTiming& t : timings) {
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& o) { return o.first == t.op; });
    if (it == out.end()) it = out.insert(out.end(), {t.op, 0.0});
    it->second += t.micros / 1000.0 / double(std::max<size_t>(runs, 1));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return out;
}

// The encoder on the backend asked for, and what to call where it runs. profile: the GPU times
// each dispatch of the timed runs (`profile` gets them, per op).
std::unique_ptr<VisionEncoder> make_encoder(const ModelFlags& model, const VisionConfig& config, DType matrices,
                                            std::string& where, std::function<OpMillis(size_t)>& profile) {
  if (model.backend == "vulkan") {
#ifdef KILN_HAVE_VULKAN
    auto gpu = make_vulkan_vision_encoder(synthetic_siglip_weights(config, matrices, 1234), {model.device, true});
    where = "vulkan (" + gpu->device_name() + ")";
    VulkanVisionEncoder* tower = gpu.get();
    profile = [tower](size_t runs) {
      OpMillis ops = per_op(tower->take_profile(), runs);
      tower->set_profiling(true);
      return ops;
    };
    return gpu;
#else
    (void)profile;
    throw Error("--image --backend vulkan: Kiln was built without Vulkan");
#endif
  }
  if (model.backend != "cpu" && model.backend != "auto")
    throw Error("--image: the tower runs on cpu or vulkan, not " + model.backend);
  where = "cpu";
  return VisionEncoder::synthetic(config, matrices, 1234);
}

}  // namespace

void run_image_bench(const ModelFlags& model, bool json, bool profile_ops) {
  const std::optional<Precision> precision = parse_precision(model.precision);
  if (!precision || (*precision != Precision::Auto && *precision != Precision::F16 && *precision != Precision::F32))
    throw Error("--image: the tower's matrices are held in f16 or f32, not " + model.precision);
  const DType matrices = *precision == Precision::F32 ? DType::F32 : DType::F16;
  VisionConfig config;  // Gemma 3 4B / 12B / 27B (the same tower)
  config.image_size = 896;
  config.patch_size = 14;
  config.hidden = 1152;
  config.intermediate = 4304;
  config.layers = 27;
  config.heads = 16;
  config.tokens_per_image = 256;
  config.text_hidden = 2560;

  using Clock = std::chrono::steady_clock;
  auto t0 = Clock::now();
  std::string where;
  std::function<OpMillis(size_t)> profile;  // set for the GPU: starts profiling, returns what was timed
  const auto encoder = make_encoder(model, config, matrices, where, profile);
  const bool gpu = where != "cpu";
  const double make_s = std::chrono::duration<double>(Clock::now() - t0).count();
  ThreadPool pool(model.threads);
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> pixel(-1.0f, 1.0f);
  std::vector<float> pixels(3 * size_t(config.image_size) * config.image_size);
  for (float& p : pixels) p = pixel(rng);

  // The CPU tower is timed once (a run takes seconds); a GPU's first run also builds its caches.
  std::vector<double> times;
  std::vector<float> out;
  for (int run = 0; run < (gpu ? 1 + kGpuTimedRuns : 1); ++run) {
    t0 = Clock::now();
    out = encoder->encode(pixels, pool);
    if (!gpu || run > 0) times.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    if (gpu && run == 0 && profile_ops) profile(1);  // from now on (the warm-up's are dropped)
  }
  const OpMillis ops = profile_ops && profile ? profile(times.size()) : OpMillis{};
  std::sort(times.begin(), times.end());
  const double encode_ms = times[times.size() / 2], best_ms = times.front();
  double checksum = 0;  // runs that compute the same thing show the same value (CPU and GPU: close)
  for (float v : out) checksum += v;

  const int patches = (config.image_size / config.patch_size) * (config.image_size / config.patch_size);
  if (json) {
    std::printf("{\"tower\": \"gemma3-4b (synthetic)\", \"backend\": \"%s\", \"device\": \"%s\", \"precision\": \"%s\", "
                "\"threads\": %d, \"image_size\": %d, \"patches\": %d, \"tokens\": %d, \"weight_bytes\": %llu, "
                "\"image_encode_ms\": %.1f, \"image_encode_best_ms\": %.1f, \"timed_runs\": %zu, \"output_sum\": %.6g, "
                "\"peak_rss_bytes\": %llu, \"cpu_kernels\": \"%s\", \"gpu_op_ms\": {",
                gpu ? "vulkan" : "cpu", where.c_str(), to_string(matrices), pool.size(), config.image_size, patches,
                config.tokens_per_image, (unsigned long long)encoder->bytes(), encode_ms, best_ms, times.size(),
                checksum, (unsigned long long)peak_resident_memory_bytes(), best_matmul_kernels().name);
    for (size_t i = 0; i < ops.size(); ++i) std::printf("%s\"%s\": %.2f", i ? ", " : "", ops[i].first.c_str(), ops[i].second);
    std::printf("}}\n");
    return;
  }
  std::printf("tower        gemma3-4b vision (synthetic), %s matrices, %.3f GB (made in %.1f s)\n", to_string(matrices),
              encoder->bytes() / 1e9, make_s);
  if (gpu)
    std::printf("backend      %s\n", where.c_str());
  else
    std::printf("backend      cpu, %d threads (%s kernels)\n", pool.size(), best_matmul_kernels().name);
  std::printf("image        %d x %d pixels, %d patches -> %d tokens\n", config.image_size, config.image_size, patches,
              config.tokens_per_image);
  if (gpu)
    std::printf("encode       %.1f ms (median of %zu after a warm-up; best %.1f ms)\n", encode_ms, times.size(), best_ms);
  else
    std::printf("encode       %.1f ms\n", encode_ms);
  std::printf("output sum   %.6g\n", checksum);
  for (const auto& [op, ms] : ops) std::printf("  %-16s %8.2f ms  (GPU time an image)\n", op.c_str(), ms);
  std::printf("peak memory  %.3f GB\n", peak_resident_memory_bytes() / 1e9);
}

}  // namespace kiln::cli
