// Kernel measurements for GGUF's K-quants as the GPU holds them (runtime/vulkan/kquant_layout.h),
// for tuning on a real GPU (not a test): decode matvecs at Gemma 3 27B's shapes in GB/s of
// weights, fp32 and int8 dots, next to Q4_0; then prefill at 512 tokens, fp32 tiles against the
// tensor cores (matmul_coop_*, --khr: matmul_coop_khr_*), with the two's relative difference
// (bound 1.5e-3; exit status 1 beyond it). --quick: 1/64 of the rows (a smoke test on lavapipe).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "bench_harness.h"
#include "quant/convert.h"
#include "quant/kquants.h"
#include "runtime/vulkan/forward.h"
#include "runtime/vulkan/model_gpu.h"
#include "runtime/vulkan/weight_layout.h"

using namespace kiln;
using namespace kiln::bench;

namespace {

const char* suffix(DType t) {
  switch (t) {
    case DType::Q4_0: return "q4_0";
    case DType::Q4_K: return "q4_k";
    case DType::Q5_K: return "q5_k";
    case DType::Q6_K: return "q6_k";
    case DType::Q3_K: return "q3_k";
    default: return "q2_k";
  }
}

// `rows` rows of random blocks (64 distinct rows repeated: the GPU still reads every byte) with
// d (and dmin) of 1e-3 .. 1e-2, in the file's layout, uploaded in chunks of at most `limit` bytes.
vk::DeviceMatrix random_matrix(Bench& b, DType t, int64_t rows, int64_t cols, uint64_t limit) {
  const size_t rb = row_bytes(t, cols);
  std::vector<uint8_t> host(64 * rb);
  std::mt19937_64 rng(uint64_t(rows) * 31 + uint64_t(cols));
  for (auto& v : host) v = uint8_t(rng());
  std::uniform_real_distribution<float> scale(1e-3f, 1e-2f);
  const size_t block = t == DType::Q4_0 ? sizeof(BlockQ4_0) : kquant_block_bytes(t);
  const bool d_first = t == DType::Q4_0 || t == DType::Q4_K || t == DType::Q5_K;
  const bool has_min = t == DType::Q4_K || t == DType::Q5_K || t == DType::Q2_K;
  const size_t d_at = d_first ? 0 : block - (has_min ? 4 : 2);
  for (size_t i = 0; i < host.size(); i += block) {
    const uint16_t d = float_to_fp16(scale(rng)), dmin = float_to_fp16(scale(rng));
    std::memcpy(&host[i + d_at], &d, 2);
    if (has_min) std::memcpy(&host[i + d_at + 2], &dmin, 2);
  }
  auto m = vk::upload_matrix(*b.arena, *b.uploader, t, rows, cols, [&](int64_t r) { return &host[(r % 64) * rb]; },
                             limit, 64);
  b.uploader->finish();
  return m;
}

struct Shape {
  const char* name;
  int64_t rows, cols;
  bool glu;
};
const Shape kShapes[] = {{"qkv", 8192, 5376, false},
                         {"o_proj", 5376, 4096, false},
                         {"gate_up", 43008, 5376, true},
                         {"down", 5376, 21504, false}};

void decode(Bench& b, int shrink, uint64_t limit) {
  const vk::MatvecShape layouts[] = {{128, 4, 64}, {128, 8, 64}, {128, 4, 32}, {256, 8, 32}};
  const vk::BufferSlice x = b.floats(21504, 1), y = b.arena->allocate(43008 * 4);
  std::printf("\n== decode matvec (1 token), GB/s of weights at layouts 128,4,64 128,8,64 128,4,32 256,8,32\n");
  for (DType t : {DType::Q4_0, DType::Q4_K, DType::Q6_K, DType::Q5_K, DType::Q3_K, DType::Q2_K})
    for (bool i8 : {false, true}) {
      if (i8 && !b.device->info().int8_dot) continue;
      for (const Shape& s : kShapes) {
        const vk::DeviceMatrix m = random_matrix(b, t, s.rows / shrink / 2 * 2, s.cols, limit);
        std::printf("%-8s %-10s %8.1f MB", s.name, (std::string(suffix(t)) + (i8 ? " int8" : "")).c_str(),
                    double(m.bytes()) / 1e6);
        for (const vk::MatvecShape& l : layouts) {
          const vk::Kernel& k = b.pipelines->get(std::string(i8 ? "matvec_i8_" : "matvec_") + (s.glu ? "glu_" : "") +
                                                     suffix(t), 4, {l.wg, l.rows, l.tpr});
          std::vector<VkDescriptorSet> sets;
          for (const auto& c : m.chunks) sets.push_back(b.descriptors->allocate(k, std::vector{c.weights, c.scales, x, y}));
          const double us = b.time(20, [&] {
            vk::record_matrix(*b.seq, k, m.chunks, m.cols,
                              sets, vk::MatrixCall{s.glu, false, 1, 0, uint32_t(s.cols), 0}, l,
                              b.device->limits().maxComputeWorkGroupCount[0], "matvec", 0);
          });
          std::printf(" %8.0f", double(m.bytes()) / (us * 1e-6) / 1e9);
        }
        std::printf("\n");
      }
    }
}

// Microseconds of n tokens through m with the kernel of `tile`; the output left in ys.
double time_matmul(Bench& b, const vk::DeviceMatrix& m, bool glu, int n, vk::MatmulTile tile, bool khr,
                   const vk::BufferSlice& xs, const vk::BufferSlice& ys) {
  const vk::Kernel& k = b.pipelines->get(vk::matmul_kernel_name(m.type, glu, tile, khr), 4);
  std::vector<VkDescriptorSet> sets;
  for (const auto& c : m.chunks) sets.push_back(b.descriptors->allocate(k, std::vector{c.weights, c.scales, xs, ys}));
  const vk::MatrixCall call{glu, true, n, 0, uint32_t(m.cols), uint32_t(glu ? m.rows / 2 : m.rows), tile};
  return b.time(3, [&] { vk::record_matrix(*b.seq, k, m.chunks, m.cols, sets, call, {}, 65535, "matmul", 0); });
}

int prefill(Bench& b, int shrink, uint64_t limit, bool khr) {
  const auto& info = b.device->info();
  if (khr ? !(info.coop_khr_f16 && vk::khr_coopmat_built()) : !info.coop_matrix_f16) {
    std::printf("\n== prefill: no %s cooperative matrices on this device\n", khr ? "KHR" : "NV");
    return 0;
  }
  const int n = 512;
  const vk::BufferSlice xs = b.floats(size_t(n) * 21504, 11);
  const uint64_t y_bytes = uint64_t(n) * 21504 * 4;  // the widest output: gate_up's 21504 a token
  const vk::BufferSlice y_ref = b.arena->allocate(y_bytes), y_coop = b.arena->allocate(y_bytes);
  std::printf("\n== prefill, %d tokens: fp32 tiles vs %s; ms, TFLOP/s, relative difference\n", n,
              khr ? "matmul_coop_khr_*" : "matmul_coop_*");
  int bad = 0;
  for (DType t : {DType::Q4_0, DType::Q4_K, DType::Q6_K, DType::Q5_K, DType::Q3_K, DType::Q2_K})
    for (const Shape& s : kShapes) {
      const int64_t rows = s.rows / shrink / 2 * 2;
      const vk::DeviceMatrix m = random_matrix(b, t, rows, s.cols, limit);
      const double us_ref = time_matmul(b, m, s.glu, n, vk::kMatmulTile, false, xs, y_ref);
      const double us = time_matmul(b, m, s.glu, n, vk::kCoopTile, khr, xs, y_coop);
      const size_t count = size_t(n) * size_t(s.glu ? rows / 2 : rows);
      const std::vector<float> got = b.read(y_coop, count), ref = b.read(y_ref, count);
      double diff = 0, norm = 0;
      for (size_t i = 0; i < count; ++i) {
        const double d = std::isfinite(got[i]) ? double(got[i]) - ref[i] : INFINITY;
        diff += d * d;
        norm += double(ref[i]) * ref[i];
      }
      const double rel = std::sqrt(diff / std::max(norm, 1e-30)), flop = 2.0 * n * double(rows) * double(s.cols);
      bad += !(rel < 1.5e-3);
      std::printf("%-8s %-5s fp32 %8.3f ms %6.1f   coop %8.3f ms %6.1f   %9.2e %s\n", s.name, suffix(t), us_ref / 1000,
                  flop / (us_ref * 1e6), us / 1000, flop / (us * 1e6), rel, rel < 1.5e-3 ? "ok" : "FAIL");
    }
  return bad ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  int device = -1, shrink = 1;
  bool khr = false;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--device" && i + 1 < argc) device = std::atoi(argv[i + 1]);
    if (std::string(argv[i]) == "--quick") shrink = 64;
    if (std::string(argv[i]) == "--khr") khr = true;
  }
  try {
    Bench b(device);
    const auto& info = b.device->info();
    std::printf("device: %s (%s)\n", info.report.name.c_str(), info.report.driver.c_str());
    const uint64_t limit = std::min<uint64_t>(b.device->limits().maxStorageBufferRange, b.arena->max_block_bytes());
    decode(b, shrink, limit);
    return prefill(b, shrink, limit, khr);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_kquant_kernels: %s\n", e.what());
    return 1;
  }
}
