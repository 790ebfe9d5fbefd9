// kiln bench --image: one 896 x 896 image through Gemma 3 4B's vision tower and projector, on the
// CPU with synthetic weights, which cost the same time as the real ones.
#include <chrono>
#include <optional>
#include <cstdio>
#include <random>

#include "cli/bench_image.h"
#include "kiln/hardware.h"
#include "runtime/cpu/matmul_kernels.h"
#include "vision/vision_encoder.h"

namespace kiln::cli {

void run_image_bench(const ModelFlags& model, bool json) {
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
  const auto encoder = VisionEncoder::synthetic(config, matrices, 1234);
  const double make_s = std::chrono::duration<double>(Clock::now() - t0).count();
  ThreadPool pool(model.threads);
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> pixel(-1.0f, 1.0f);
  std::vector<float> pixels(3 * size_t(config.image_size) * config.image_size);
  for (float& p : pixels) p = pixel(rng);

  t0 = Clock::now();
  const std::vector<float> out = encoder->encode(pixels, pool);
  const double encode_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  double checksum = 0;  // runs that compute the same thing show the same value
  for (float v : out) checksum += v;

  const int patches = (config.image_size / config.patch_size) * (config.image_size / config.patch_size);
  if (json) {
    std::printf("{\"tower\": \"gemma3-4b (synthetic)\", \"backend\": \"cpu\", \"precision\": \"%s\", \"threads\": %d, "
                "\"image_size\": %d, \"patches\": %d, \"tokens\": %d, \"weight_bytes\": %llu, "
                "\"image_encode_ms\": %.1f, \"output_sum\": %.6g, \"peak_rss_bytes\": %llu, \"cpu_kernels\": \"%s\"}\n",
                to_string(matrices), pool.size(), config.image_size, patches, config.tokens_per_image,
                (unsigned long long)encoder->bytes(), encode_ms, checksum,
                (unsigned long long)peak_resident_memory_bytes(), best_matmul_kernels().name);
    return;
  }
  std::printf("tower        gemma3-4b vision (synthetic), %s matrices, %.3f GB (made in %.1f s)\n", to_string(matrices),
              encoder->bytes() / 1e9, make_s);
  std::printf("backend      cpu, %d threads (%s kernels)\n", pool.size(), best_matmul_kernels().name);
  std::printf("image        %d x %d pixels, %d patches -> %d tokens\n", config.image_size, config.image_size, patches,
              config.tokens_per_image);
  std::printf("encode       %.1f ms\n", encode_ms);
  std::printf("peak memory  %.3f GB\n", peak_resident_memory_bytes() / 1e9);
}

}  // namespace kiln::cli
