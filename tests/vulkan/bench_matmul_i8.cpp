// Prefill's matrices without tensor cores, on a real GPU: fp32 tiles (matmul_*) against int8 tiles
// (quantize_i8 + matmul_i8_*, KernelPlan prefill int_dot) on Gemma 3 27B's four layer matrices at
// 512 tokens, Q4_0 and Q8_0, with the int8 result's distance to the fp32 one. Not a test: run it on
// the GPU machine (core/runtime/vulkan/PERFORMANCE.md); --quick (1/64 of the rows) on lavapipe.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kiln/types.h"
#include "quant/convert.h"
#include "runtime/vulkan/forward.h"
#include "runtime/vulkan/model_gpu.h"
#include "runtime/vulkan/push_constants.h"
#include "runtime/vulkan/weight_layout.h"
#include "bench_harness.h"

using namespace kiln;
using kiln::bench::Bench;

namespace {

// Random quants with block scales 0.004 to 0.02, as bench_vulkan_kernels' matrices.
vk::DeviceMatrix random_matrix(Bench& b, DType t, int64_t rows, int64_t cols) {
  const size_t rb = row_bytes(t, cols), block = t == DType::Q8_0 ? sizeof(BlockQ8_0) : sizeof(BlockQ4_0);
  std::vector<uint8_t> host(size_t(rows) * rb);
  std::mt19937_64 rng(uint64_t(rows) * 131 + uint64_t(cols));
  for (size_t i = 0; i < host.size(); i += 8) {
    const uint64_t v = rng();
    std::memcpy(&host[i], &v, std::min<size_t>(8, host.size() - i));
  }
  std::uniform_real_distribution<float> scale(0.004f, 0.02f);
  for (size_t i = 0; i < host.size(); i += block) {
    const uint16_t d = float_to_fp16(scale(rng));
    std::memcpy(&host[i], &d, 2);
  }
  const uint64_t limit = std::min<uint64_t>(b.device->limits().maxStorageBufferRange, b.arena->max_block_bytes());
  auto m = vk::upload_matrix(*b.arena, *b.uploader, t, rows, cols, [&](int64_t r) { return &host[size_t(r) * rb]; },
                             limit, 64);
  b.uploader->finish();
  return m;
}

double relative(const std::vector<float>& got, const std::vector<float>& ref) {
  double diff = 0, norm = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    diff += std::isfinite(got[i]) ? (double(got[i]) - ref[i]) * (double(got[i]) - ref[i]) : INFINITY;
    norm += double(ref[i]) * ref[i];
  }
  return std::sqrt(diff / std::max(norm, 1e-30));
}

}  // namespace

int main(int argc, char** argv) {
  int device = -1, shrink = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--device" && i + 1 < argc) device = std::atoi(argv[i + 1]);
    if (std::string(argv[i]) == "--quick") shrink = 64;
  }
  try {
    Bench b(device);
    const auto& info = b.device->info();
    std::printf("device: %s (%s), integer dot products %s\n", info.report.name.c_str(), info.report.driver.c_str(),
                !info.int8_dot ? "none" : info.int8_dot_fast ? "in hardware" : "emulated");
    if (!info.int8_dot) return 1;
    const int n = 512, reps = shrink > 1 ? 1 : 5;
    const vk::BufferSlice xs = b.floats(size_t(n) * 21504, 11);
    const vk::BufferSlice y_fp32 = b.arena->allocate(size_t(n) * 21504 * 4), y_i8 = b.arena->allocate(size_t(n) * 21504 * 4);
    const vk::BufferSlice xq = b.arena->allocate(size_t(n) * 21504 / 32 * vk::kQuantizedBlockBytes);
    const vk::Kernel& quantize = b.pipelines->get("quantize_i8", 2);
    const VkDescriptorSet qset = b.descriptors->allocate(quantize, std::vector{xs, xq});
    struct Shape {
      const char* name;
      int64_t rows, cols;
      bool glu;
    };
    const Shape shapes[] = {{"qkv", 8192, 5376, false}, {"o_proj", 5376, 4096, false},
                            {"gate_up", 43008, 5376, true}, {"down", 5376, 21504, false}};
    std::printf("\n== prefill, %d tokens: fp32 tiles (matmul) vs int8 tiles (quantize_i8 + matmul_i8)\n", n);
    std::printf("%-8s %-5s %12s %9s %9s %11s %8s %9s\n", "shape", "type", "rows x cols", "fp32 ms", "int8 ms",
                "quantize ms", "speedup", "rel.diff");
    for (DType t : {DType::Q4_0, DType::Q8_0}) {
      double total_fp32 = 0, total_i8 = 0;
      for (const Shape& s : shapes) {
        const int64_t rows = s.rows / shrink / 2 * 2;
        const vk::DeviceMatrix m = random_matrix(b, t, rows, s.cols);
        const vk::MatrixCall call{s.glu, true, n, 0, uint32_t(s.cols), uint32_t(s.glu ? rows / 2 : rows)};
        const vk::Kernel& fp32 = b.pipelines->get(vk::matmul_kernel_name(t, s.glu, vk::kMatmulTile), 4);
        const vk::Kernel& i8 = b.pipelines->get(vk::matmul_i8_kernel_name(t, s.glu), 4);
        std::vector<VkDescriptorSet> fp32_sets, i8_sets;
        for (const auto& c : m.chunks) {
          fp32_sets.push_back(b.descriptors->allocate(fp32, std::vector{c.weights, c.scales, xs, y_fp32}));
          i8_sets.push_back(b.descriptors->allocate(i8, std::vector{c.weights, c.scales, xq, y_i8}));
        }
        const uint32_t nb = uint32_t(s.cols / 32);
        const double us_fp32 = b.time(reps, [&] { vk::record_matrix(*b.seq, fp32, m.chunks, m.cols,
                                                                    fp32_sets, call, {}, 65535, "m", 0); });
        const double us_q = b.time(reps, [&] { vk::record_quantize(*b.seq, quantize, qset, n, nb, 0, uint32_t(s.cols), 0); });
        const double us_i8 = b.time(reps, [&] {
          vk::record_quantize(*b.seq, quantize, qset, n, nb, 0, uint32_t(s.cols), 0);
          vk::record_matrix(*b.seq, i8, m.chunks, m.cols, i8_sets, call, {}, 65535, "m", 0);
        });
        const size_t count = size_t(n) * size_t(call.y_stride);
        std::printf("%-8s %-5s %6lldx%-5lld %9.3f %9.3f %11.3f %7.2fx %9.2e\n", s.name, to_string(t), (long long)rows,
                    (long long)s.cols, us_fp32 / 1000, us_i8 / 1000, us_q / 1000, us_fp32 / us_i8,
                    relative(b.read(y_i8, count), b.read(y_fp32, count)));
        total_fp32 += us_fp32;
        total_i8 += us_i8;
      }
      std::printf("%s, a layer's four matrices: fp32 %.2f ms, int8 %.2f ms (%.2fx)\n", to_string(t), total_fp32 / 1000,
                  total_i8 / 1000, total_fp32 / total_i8);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_matmul_i8: %s\n", e.what());
    return 1;
  }
  return 0;
}
