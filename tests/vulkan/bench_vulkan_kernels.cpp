// Kernel-level measurements for tuning the Vulkan backend on a real GPU (not a test; no Qt, so it
// runs on the measurement machine): the copy-bandwidth ceiling, decode matvec shapes of Gemma 3
// 27B swept over workgroup layouts, the cost of one dependent dispatch, attention, and prefill
// (512 tokens through each 27B matrix, fp32 tiles against tensor cores, with the difference of
// their results and a check of every weight format). Prints one table per part; GB/s counts the
// weight bytes a kernel must read. --prefill: only the prefill part; --decode: all but it; --khr:
// the tensor-core kernel on VK_KHR_cooperative_matrix (matmul_coop_khr_*) instead of NV's.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kiln/types.h"
#include "quant/convert.h"
#include "runtime/vulkan/bandwidth.h"
#include "runtime/vulkan/device.h"
#include "runtime/vulkan/forward.h"
#include "runtime/vulkan/memory.h"
#include "runtime/vulkan/pipeline.h"
#include "runtime/vulkan/push_constants.h"
#include "runtime/vulkan/sequence.h"
#include "runtime/vulkan/weight_layout.h"
#include "bench_harness.h"
#include "bench_prefill_attention.h"

using namespace kiln;
using kiln::bench::Bench;
using kiln::bench::Difference;
using kiln::bench::difference;
using kiln::bench::distinct_matrix;

namespace {


// A matrix of random quants in GGUF blocks (64 distinct rows repeated: the GPU still reads every byte).
vk::DeviceMatrix random_matrix(Bench& b, DType t, int64_t rows, int64_t cols) {
  const size_t rb = row_bytes(t, cols);
  std::vector<uint8_t> host(64 * rb);
  std::mt19937_64 rng(rows * 31 + cols);
  for (auto& v : host) v = uint8_t(rng());
  const size_t block = t == DType::Q8_0 ? sizeof(BlockQ8_0) : sizeof(BlockQ4_0);
  const uint16_t d = float_to_fp16(0.01f);
  for (size_t i = 0; i < host.size(); i += block) std::memcpy(&host[i], &d, 2);
  const uint64_t limit = std::min<uint64_t>(b.device->limits().maxStorageBufferRange, b.arena->max_block_bytes());
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

// --khr: the tensor-core kernel is matmul_coop_khr_* (VK_KHR_cooperative_matrix) instead of NV's.
bool g_khr = false;

// Runs `n` tokens of xs through m with the kernel of `tile` (GLU form when glu): mean microseconds
// of one call, the output left in ys.
double time_matmul(Bench& b, const vk::DeviceMatrix& m, bool glu, int n, vk::MatmulTile tile,
                   const vk::BufferSlice& xs, const vk::BufferSlice& ys, int reps, uint32_t splits = 1) {
  const vk::Kernel& k = b.pipelines->get(vk::matmul_kernel_name(m.type, glu, tile, g_khr), 4);
  std::vector<VkDescriptorSet> sets;
  for (const auto& c : m.chunks) sets.push_back(b.descriptors->allocate(k, std::vector{c.weights, c.scales, xs, ys}));
  vk::MatrixCall call{glu, true, n, 0, uint32_t(m.cols), uint32_t(glu ? m.rows / 2 : m.rows), tile};
  call.splits = splits;  // ys must hold `splits` slices
  call.split_sum = &b.pipelines->get("split_sum", 4);
  return b.time(reps, [&] { vk::record_matrix(*b.seq, k, m.chunks, m.cols, sets, call, {}, 65535, "matmul", 0); });
}

// The fp32 kernel (matmul) and the tensor-core one (matmul_coop) on the same input: times, and how
// far the second's output is from the first's.
struct PrefillResult {
  double us_fp32 = 0, us_coop = 0;
  Difference diff;
};
PrefillResult compare_matmuls(Bench& b, const vk::DeviceMatrix& m, bool glu, int n, const vk::BufferSlice& xs,
                              const vk::BufferSlice& y_ref, const vk::BufferSlice& y_coop, int reps,
                              uint32_t splits = 1) {
  PrefillResult r;
  const size_t count = size_t(n) * size_t(glu ? m.rows / 2 : m.rows);
  r.us_fp32 = time_matmul(b, m, glu, n, vk::kMatmulTile, xs, y_ref, reps);
  r.us_coop = time_matmul(b, m, glu, n, vk::kCoopTile, xs, y_coop, reps, splits);
  r.diff = difference(b.read(y_coop, count), b.read(y_ref, count));
  return r;
}

// The prefill part: 27B's matrices at 512 tokens in Q4_0 and Q8_0, then every weight format on
// shapes with partial tiles and chunks. Returns 1 when a tensor-core result is off.
int prefill(Bench& b, int shrink) {
  const auto& info = b.device->info();
  // The loader hands out this entry point even where no driver has the extension: ask first.
  uint32_t n_ext = 0;
  vkEnumerateDeviceExtensionProperties(info.handle, nullptr, &n_ext, nullptr);
  std::vector<VkExtensionProperties> ext(n_ext);
  vkEnumerateDeviceExtensionProperties(info.handle, nullptr, &n_ext, ext.data());
  const bool has_ext = std::any_of(ext.begin(), ext.end(), [](const VkExtensionProperties& e) {
    return std::strcmp(e.extensionName, VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME) == 0;
  });
  auto list = reinterpret_cast<PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesNV>(
      vkGetInstanceProcAddr(b.instance->handle(), "vkGetPhysicalDeviceCooperativeMatrixPropertiesNV"));
  std::printf("\n== cooperative matrices: coop_matrix_f16 %s; driver's shapes (M N K A B C D scope):",
              info.coop_matrix_f16 ? "yes" : "no");
  if (has_ext && list) {
    uint32_t count = 0;
    list(info.handle, &count, nullptr);
    std::vector<VkCooperativeMatrixPropertiesNV> props(count, {VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV});
    list(info.handle, &count, props.data());
    for (const auto& p : props)
      std::printf(" [%u %u %u %d %d %d %d %d]", p.MSize, p.NSize, p.KSize, p.AType, p.BType, p.CType, p.DType, p.scope);
  }
  std::printf("\n== KHR cooperative matrices: coop_khr_f16 %s (subgroup size asked: %u, full subgroups %d; "
              "only fp16 sums: %d); kernels %s\n",
              info.coop_khr_f16 ? "yes" : "no", info.coop_khr_subgroup_size, int(info.full_subgroups),
              int(info.coop_khr_f16_acc_only), vk::khr_coopmat_built() ? "built" : "not built");
  if (g_khr ? !(info.coop_khr_f16 && vk::khr_coopmat_built()) : !info.coop_matrix_f16) return 1;
  std::printf("tensor-core kernel: %s\n", g_khr ? "matmul_coop_khr_* (VK_KHR_cooperative_matrix)" : "matmul_coop_* (VK_NV_cooperative_matrix)");

  const int n = 512;
  const uint64_t limit = std::min<uint64_t>(b.device->limits().maxStorageBufferRange, b.arena->max_block_bytes());
  const vk::BufferSlice xs = b.floats(size_t(n) * 21504, 11);
  const vk::BufferSlice y_ref = b.arena->allocate(size_t(n) * 21504 * 4), y_coop = b.arena->allocate(size_t(n) * 21504 * 4);
  const Shape shapes[] = {{"qkv", 8192, 5376, false},
                          {"o_proj", 5376, 4096, false},
                          {"gate_up", 43008, 5376, true},
                          {"down", 5376, 21504, false}};
  std::printf("\n== prefill, %d tokens: fp32 tiles (matmul) vs tensor cores (matmul_coop)\n", n);
  std::printf("%-8s %-5s %12s %10s %8s %10s %8s %7s %9s %9s\n", "shape", "type", "rows x cols", "fp32 ms", "TFLOP/s",
              "coop ms", "TFLOP/s", "speedup", "rel.diff", "max.diff");
  int bad = 0;
  double total_fp32 = 0, total_coop = 0;
  for (DType t : {DType::Q4_0, DType::Q8_0}) {
    for (const Shape& s : shapes) {
      const int64_t rows = s.rows / shrink / 2 * 2;
      const vk::DeviceMatrix m = distinct_matrix(b, t, rows, s.cols, limit);
      const PrefillResult r = compare_matmuls(b, m, s.glu, n, xs, y_ref, y_coop, 5);
      const double flop = 2.0 * n * double(rows) * double(s.cols);
      std::printf("%-8s %-5s %6lldx%-5lld %10.3f %8.1f %10.3f %8.1f %6.1fx %9.2e %9.2e\n", s.name, to_string(t),
                  (long long)rows, (long long)s.cols, r.us_fp32 / 1000, flop / (r.us_fp32 * 1e6), r.us_coop / 1000,
                  flop / (r.us_coop * 1e6), r.us_fp32 / r.us_coop, r.diff.relative, r.diff.max);
      bad += !(r.diff.relative < 2e-3);
      total_fp32 += r.us_fp32;
      total_coop += r.us_coop;
    }
  }
  std::printf("a layer's four matrices, Q4_0 + Q8_0: fp32 %.2f ms, coop %.2f ms\n", total_fp32 / 1000,
              total_coop / 1000);

  // Split-K for o and down (42 row tiles x 4 token tiles = 168 workgroups on the H100's 132 SMs):
  // s parts of the row, each in its own slice of y, then split_sum (its time included).
  std::printf("\n== split-K (matmul_coop, s parts + split_sum): ms and relative difference to fp32 tiles\n");
  for (DType t : {DType::Q4_0, DType::Q8_0})
    for (const Shape& s : {shapes[1], shapes[3]}) {
      const int64_t rows = s.rows / shrink / 2 * 2;
      const vk::DeviceMatrix m = distinct_matrix(b, t, rows, s.cols, limit);
      time_matmul(b, m, false, n, vk::kMatmulTile, xs, y_ref, 1);
      const size_t count = size_t(n) * size_t(rows);
      std::printf("%-8s %-5s", s.name, to_string(t));
      for (uint32_t split = 1; split <= 4; ++split) {
        const double us = time_matmul(b, m, false, n, vk::kCoopTile, xs, y_coop, 5, split);
        const Difference d = difference(b.read(y_coop, count), b.read(y_ref, count));
        bad += !(d.relative < 2e-3);
        std::printf("  s=%u %7.3f ms %8.1e", split, us / 1000, d.relative);
      }
      std::printf("\n");
    }

  // Every format, GLU and not, partial tiles (rows and tokens), chunks of one tile and of less.
  struct Case {
    int64_t rows, cols;
    int n;
    int64_t chunk_rows;  // 0: one chunk
  };
  const Case cases[] = {{300, 2240, 200, 0}, {330, 96, 129, 128}, {200, 64, 20, 64}, {4096, 1024, 512, 0}};
  std::printf("\n== matmul_coop against matmul, every format: relative difference (bound 1.5e-3)\n");
  for (DType t : {DType::F32, DType::F16, DType::Q8_0, DType::Q4_0})
    for (uint32_t splits : {1u, 3u})  // split-K: not with GLU
      for (bool glu : {false, true})
      for (const Case& c : cases) {
        if (glu && splits > 1) continue;
        const int64_t rows = glu ? 2 * c.rows : c.rows;
        const uint64_t chunk = c.chunk_rows ? uint64_t(c.chunk_rows) * vk::layout_weight_bytes(t, 1, c.cols) : limit;
        const vk::DeviceMatrix m = distinct_matrix(b, t, rows, c.cols, chunk);
        const PrefillResult r = compare_matmuls(b, m, glu, c.n, xs, y_ref, y_coop, 1, splits);
        const bool ok = r.diff.relative < 1.5e-3;
        bad += !ok;
        std::printf("%-5s %-4s split %u %5lld x %-5lld %3d tokens %zu chunk(s): %9.2e (max %9.2e) %s\n", to_string(t),
                    glu ? "glu" : "", splits, (long long)rows, (long long)c.cols, c.n, m.chunks.size(), r.diff.relative,
                    r.diff.max, ok ? "ok" : "FAIL");
      }
  if (g_khr) bad += prefill_attention(b);
  std::printf("prefill check: %s\n", bad ? "FAILED" : "all within bounds");
  return bad ? 1 : 0;
}

// 21504 activations in the int8 form their producers write (per 32: 8 words of int8, 4 fp32
// scales), for matvec_qin_*.
vk::BufferSlice int8_activations(Bench& b) {
  std::vector<uint32_t> words(size_t(21504 / 32) * 12);
  for (size_t i = 0; i < words.size(); ++i) {
    const float scale = 0.01f;
    std::memcpy(&words[i], &scale, 4);
    if (i % 12 < 8) words[i] = uint32_t(i * 2654435761u);
  }
  vk::BufferSlice xq = b.arena->allocate(words.size() * 4);
  b.uploader->write(xq, 0, words.data(), words.size() * 4);
  b.uploader->finish();
  return xq;
}

// --rows: the one-token int8 kernels on activations rounded by their producer (matvec_qin_*), Q4_0
// and Q8_0, in the shapes decode uses, over a range of row counts at 27B's two row lengths. A
// dispatch's fixed cost and a partial last wave of workgroups show as microseconds beyond the
// bytes at the copy rate ("extra"), which a per-op rate alone cannot tell apart from a slow loop.
void rows_sweep(Bench& b, double copy_gbs, int shrink) {
  const vk::BufferSlice xq = int8_activations(b), y = b.arena->allocate(262144 * 4);
  vk::KernelPlan plan;
  std::printf("\n== matvec_qin by rows (1 token): us, GB/s, us beyond the bytes at %.0f GB/s, workgroups\n", copy_gbs);
  std::printf("%-5s %-4s %6s %7s %9s %8s %8s %7s %6s\n", "type", "glu", "cols", "rows", "MB", "us", "GB/s", "extra",
              "wgs");
  for (DType t : {DType::Q4_0, DType::Q8_0})
    for (int64_t cols : {int64_t(5376), int64_t(21504)})
      for (bool glu : {true, false}) {
        if (glu && cols != 5376) continue;
        const vk::MatvecShape shape = plan.qin_shape(glu);
        const std::string name = std::string(glu ? "matvec_qin_glu_qout_" : "matvec_qin_") +
                                 (t == DType::Q4_0 ? "q4_0" : "q8_0");
        const vk::Kernel& k = b.pipelines->get(name, 4, {shape.wg, shape.rows, shape.tpr});
        for (int64_t rows : {4096, 5376, 8192, 10752, 16384, 21504, 32768, 43008, 53760, 65536, 131072, 262144}) {
          rows = rows / shrink / 32 * 32;
          if (cols == 21504 && rows > 65536) continue;
          const vk::DeviceMatrix m = random_matrix(b, t, rows, cols);
          std::vector<VkDescriptorSet> sets;
          for (const auto& c : m.chunks) sets.push_back(b.descriptors->allocate(k, std::vector{c.weights, c.scales, xq, y}));
          const double us = b.time(50, [&] {
            vk::record_matrix(*b.seq, k, m.chunks, m.cols,
                              sets, vk::MatrixCall{glu, false, 1, 0, uint32_t(cols), 0}, shape,
                              b.device->limits().maxComputeWorkGroupCount[0], "matvec", 0);
          });
          const double bytes = double(m.bytes());
          std::printf("%-5s %-4s %6lld %7lld %9.1f %8.2f %8.0f %7.2f %6lld\n", to_string(t), glu ? "glu" : "",
                      (long long)cols, (long long)rows, bytes / 1e6, us, bytes / (us * 1e3), us - bytes / (copy_gbs * 1e3),
                      (long long)((rows + shape.rows_per_workgroup() - 1) / shape.rows_per_workgroup()));
        }
      }
}

}  // namespace

int main(int argc, char** argv) {
  int device = -1, shrink = 1;  // --quick: 1/64 of the rows, a smoke test on lavapipe
  bool prefill_only = false, decode_only = false, rows_only = false;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--device" && i + 1 < argc) device = std::atoi(argv[i + 1]);
    if (std::string(argv[i]) == "--quick") shrink = 64;
    if (std::string(argv[i]) == "--prefill") prefill_only = true;
    if (std::string(argv[i]) == "--decode") decode_only = true;
    if (std::string(argv[i]) == "--rows") rows_only = true;
    if (std::string(argv[i]) == "--khr") g_khr = true;
  }
  try {
    Bench b(device);
    const auto& info = b.device->info();
    std::printf("device: %s (%s), subgroup %u, maxStorageBufferRange %u MiB\n", info.report.name.c_str(),
                info.report.driver.c_str(), info.subgroup_size, b.device->limits().maxStorageBufferRange >> 20);
    if (prefill_only) return prefill(b, shrink);

    const VulkanBandwidth bw = measure_vulkan_bandwidth(device, true, (2ull << 30) / shrink, 5);
    std::printf("\n== copy ceiling: %.1f GB/s (compute-shader copy of %llu MiB, read + write)\n", bw.copy_gbs,
                (unsigned long long)(bw.buffer_bytes >> 20));
    if (rows_only) {
      rows_sweep(b, bw.copy_gbs, shrink);
      return 0;
    }

    // Decode matvecs of Gemma 3 27B.
    const Shape shapes[] = {{"qkv", 8192, 5376, false},
                            {"o_proj", 5376, 4096, false},
                            {"gate_up", 43008, 5376, true},
                            {"down", 5376, 21504, false},
                            {"logits", 262208, 5376, false}};
    const uint32_t layouts[][3] = {{128, 4, 128}, {128, 4, 64}, {128, 8, 64}, {64, 4, 64},
                                   {128, 4, 32},  {128, 8, 32}, {256, 8, 32}};
    vk::BufferSlice x = b.floats(21504, 1), y = b.arena->allocate(262208 * 4);
    std::printf("\n== decode matvec (1 token), GB/s of weights; best layout per shape marked *\n");
    std::printf("%-8s %-10s %10s", "shape", "type", "MB");
    for (const auto& l : layouts) std::printf(" %3u,%u,%-3u", l[0], l[1], l[2]);
    std::printf("\n");
    // Kinds: fp32 arithmetic, int8 dots (matvec_i8_*), int8 dots with the activations staged in
    // shared memory once per workgroup (matvec_staged_*, checked against matvec_i8_*).
    // ... and int8 dots on activations their producer rounded (matvec_qin_*; GLU rows also write
    // their output rounded, and need whole groups of 8 outputs a workgroup: 0 where a layout has not).
    const vk::BufferSlice xq = int8_activations(b);
    for (DType t : {DType::Q4_0, DType::Q8_0})
    for (int kind : {0, 1, 2, 3}) {
      if (kind > 0 && !b.device->info().int8_dot) continue;
      const char* kind_name[] = {"", " int8", " staged", " qin"};
      const char* prefix[] = {"matvec_", "matvec_i8_", "matvec_staged_", "matvec_qin_"};
      for (const Shape& s : shapes) {
        const vk::DeviceMatrix m = random_matrix(b, t, s.rows / shrink / 2 * 2, s.cols);
        const double mb = double(m.bytes()) / 1e6;
        std::printf("%-8s %-10s %10.1f", s.name, (std::string(to_string(t)) + kind_name[kind]).c_str(), mb);
        std::vector<double> gbs;
        const uint32_t nb = uint32_t(s.cols / 32);
        const std::string suffix =
            std::string(s.glu ? (kind == 3 ? "glu_qout_" : "glu_") : "") + (t == DType::Q4_0 ? "q4_0" : "q8_0");
        auto kernel = [&](int k, const vk::MatvecShape& shape) -> const vk::Kernel& {
          std::vector<uint32_t> spec{shape.wg, shape.rows, shape.tpr};
          if (k == 2) spec.push_back(nb);
          return b.pipelines->get(prefix[k] + suffix, 4, spec);
        };
        auto record = [&](const vk::Kernel& k, const vk::MatvecShape& shape, const vk::BufferSlice& out) {
          std::vector<VkDescriptorSet> sets;
          for (const auto& c : m.chunks)
            sets.push_back(b.descriptors->allocate(k, std::vector{c.weights, c.scales, kind == 3 ? xq : x, out}));
          return sets;
        };
        for (const auto& l : layouts) {
          const vk::MatvecShape shape{l[0], s.glu && l[1] % 2 ? l[1] + 1 : l[1], l[2]};
          if (kind == 3 && s.glu && (shape.wg / shape.tpr) * shape.rows / 2 % 8 != 0) {
            gbs.push_back(0);
            continue;
          }
          const vk::Kernel& k = kernel(kind, shape);
          const std::vector<VkDescriptorSet> sets = record(k, shape, y);
          const double us = b.time(20, [&] {
            vk::record_matrix(*b.seq, k, m.chunks, m.cols,
                              sets, vk::MatrixCall{s.glu, false, 1, 0, uint32_t(s.cols), 0}, shape,
                              b.device->limits().maxComputeWorkGroupCount[0], "matvec", 0);
          });
          gbs.push_back(double(m.bytes()) / (us * 1e-6) / 1e9);
        }
        const size_t best = size_t(std::max_element(gbs.begin(), gbs.end()) - gbs.begin());
        for (size_t i = 0; i < gbs.size(); ++i) std::printf(" %8.0f%s", gbs[i], i == best ? "*" : " ");
        std::printf("   best %.0f%% of copy", 100 * gbs[best] / bw.copy_gbs);
        if (kind == 2) {  // the staged kernel must give the int8 kernel's results
          const vk::MatvecShape shape{128, s.glu ? 8u : 8u, 64};
          const size_t count = size_t(s.glu ? m.rows / 2 : m.rows);
          double worst = 0;
          std::vector<float> got[2];
          for (int k = 1; k <= 2; ++k) {
            const vk::Kernel& kk = kernel(k, shape);
            const std::vector<VkDescriptorSet> sets = record(kk, shape, y);
            b.seq->begin(false);
            vk::record_matrix(*b.seq, kk, m.chunks, m.cols,
                              sets, vk::MatrixCall{s.glu, false, 1, 0, uint32_t(s.cols), 0}, shape,
                              b.device->limits().maxComputeWorkGroupCount[0], "matvec", 0);
            b.seq->submit_and_wait();
            got[k - 1] = b.read(y, count);
          }
          for (size_t i = 0; i < count; ++i) worst = std::max(worst, double(std::fabs(got[0][i] - got[1][i])));
          std::printf("   max |staged - int8| %.2g", worst);
        }
        std::printf("\n");
      }
    }

    // One small dependent dispatch (add_norm, 1 token) and its barrier, by workgroup size.
    {
      vk::BufferSlice yv = b.floats(5376, 2), xv = b.floats(5376, 3), xn = b.floats(5376, 4), w = b.floats(2 * 5376, 5);
      std::printf("\n== one dependent small dispatch (add_norm, 1 token), us:");
      for (uint32_t wg : {256u, 512u, 1024u}) {
        if (wg / b.device->info().subgroup_size > 64) continue;
        const vk::Kernel& k = b.pipelines->get("add_norm", 5, {wg});
        VkDescriptorSet set = b.descriptors->allocate(k, std::vector{yv, xv, xn, w, xv});
        const vk::AddNormPush p{5376, 0, 5376, 1e-6f};
        const double us = b.time(500, [&] {
          b.seq->dispatch(k, set, &p, sizeof p, 1, 1, 1, "add_norm", 0);
          b.seq->barrier();
        });
        std::printf("  wg %u: %.2f", wg, us);
      }
      std::printf("\n");
    }

    // Decode attention at 27B's shape: 32 heads, 16 kv heads, head_dim 128, fp16 cache; one
    // dispatch does q/k norm + RoPE, the cache write, the key splits and their merge.
    {
      const uint32_t H = 32, KV = 16, D = 128, ctx = 8192;
      vk::BufferSlice qkv = b.floats((H + 2 * KV) * D, 6), kc = b.floats(size_t(ctx) * KV * D / 2, 7),
                      vc = b.floats(size_t(ctx) * KV * D / 2, 8), out = b.floats(H * D, 9),
                      part = b.floats(size_t(256) * H * (D + 2), 10), norms = b.floats(2 * D, 11),
                      rope = b.floats(size_t(ctx) * D, 12), arrivals = b.arena->allocate(H * 4);
      const std::vector<uint32_t> zeros(H, 0);  // the kernel leaves its split counters at zero
      b.uploader->write(arrivals, 0, zeros.data(), H * 4);
      b.uploader->finish();
      std::printf("\n== decode attention (fp16 KV, one dispatch), us: keys, splits\n");
      for (uint32_t keys : {512u, 1024u, 4096u / shrink, 8192u / shrink})
        for (uint32_t per_split : {32u, 64u, 128u, 256u}) {
          const uint32_t wg = 64;
          const vk::Kernel& att = b.pipelines->get("attention_decode_kv_f16", 10, {wg});
          VkDescriptorSet set = b.descriptors->allocate(att, std::vector{qkv, kc, vc, out, part, arrivals, norms, rope, kc, vc});
          vk::KernelPlan plan;
          plan.attention_keys_per_split = per_split;
          const vk::AttentionSplit split = vk::decode_attention_split(keys, plan);
          const vk::DecodeAttentionPush ap{keys - 1, H, KV, D, ctx, 0, split.splits, split.keys_per_split, 0, D, 0,
                                           0.088f, 0, 1e-6f};
          const double us = b.time(20, [&] {
            b.seq->dispatch(att, set, &ap, sizeof ap, H * split.splits, 1, 1, "attention", 0);
            b.seq->barrier();
          });
          std::printf("keys %5u  per split %3u  splits %3u  %8.1f us  (%.0f GB/s of K+V)\n", keys,
                      split.keys_per_split, split.splits, us, double(keys) * KV * D * 2 * 2 / (us * 1e-6) / 1e9);
        }
    }

    if (!decode_only && prefill(b, shrink) != 0) return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_vulkan_kernels: %s\n", e.what());
    return 1;
  }
  return 0;
}
