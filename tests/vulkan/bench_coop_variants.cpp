// Layouts of the tensor-core prefill tile (kernels/vulkan/matmul_coop.comp, KHR, fp16 input) on
// Gemma 3 27B's four matrices at 512 tokens, Q4_0 and Q8_0: milliseconds, TFLOP/s and the
// difference from the fp32 tiles, a layer's total per layout. The layouts are compiled beside
// this bench (tests/vulkan/CMakeLists.txt: "base" is the engine's); kernel_stats gives their
// registers. For tuning on a real GPU, not a test.
//   bench_coop_variants [--device N] [--quick] [TAG ...]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "coop_variants_spirv_table.h"
#include "kiln/types.h"
#include "runtime/vulkan/forward.h"
#include "runtime/vulkan/model_kernels.h"
#include "bench_harness.h"

using namespace kiln;
using kiln::bench::Bench;

namespace {

struct Shape {
  const char* name;
  int64_t rows, cols;
  bool glu;
};

// The variant's tile: 128 rows by 128 tokens, or by 64 where its tag says t64.
vk::MatmulTile tile_of(const std::string& tag) { return {128, tag.find("t64") != std::string::npos ? 64u : 128u}; }

// As KernelPlan::coop_splits: about 500 workgroups for matrices of few tiles (o, down).
uint32_t splits_for(int64_t rows, int n, vk::MatmulTile tile, bool glu) {
  if (glu) return 1;
  const int64_t tiles = (rows + tile.rows - 1) / tile.rows * ((n + tile.tokens - 1) / tile.tokens);
  return tiles >= 256 ? 1 : uint32_t(std::clamp<int64_t>(504 / tiles, 1, 8));
}

std::span<const uint32_t> variant_spirv(const std::string& name) {
  for (const auto& e : coop_variants::kTable)
    if (name == e.name) return {e.words, e.count};
  throw Error("no variant kernel " + name);
}

// The most workgroups of the layout's gate_up that ran at once (its RESIDENCY build): with all
// SMs busy, that many over the SM count is its occupancy.
uint32_t peak_workgroups(Bench& b, const vk::DeviceMatrix& m, const std::string& tag, const vk::BufferSlice& x,
                         const vk::BufferSlice& y, int n, int64_t cols, int64_t out_rows) {
  const std::string name = "coopvar_khr_" + tag + "_res_glu_q4_0";
  const vk::Kernel& k = b.pipelines->get(name, variant_spirv(name), 5);
  const vk::BufferSlice counters = b.arena->allocate(256);
  const uint32_t zero[2] = {0, 0};
  b.uploader->write(counters, 0, zero, sizeof zero);
  b.uploader->finish();
  std::vector<VkDescriptorSet> sets;
  for (const auto& c : m.chunks)
    sets.push_back(b.descriptors->allocate(k, std::vector{c.weights, c.scales, x, y, counters}));
  vk::MatrixCall call{true, true, n, 0, uint32_t(cols), uint32_t(out_rows), tile_of(tag)};
  b.seq->begin(false);
  vk::record_matrix(*b.seq, k, m.chunks, m.cols, sets, call, {}, 65535, "matmul", 0);
  b.seq->submit_and_wait();
  const std::vector<float> v = b.read(counters, 2);
  uint32_t peak = 0;
  std::memcpy(&peak, &v[1], 4);
  return peak;
}

}  // namespace

int main(int argc, char** argv) {
  int device = -1, shrink = 1;
  std::vector<std::string> tags;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--device" && i + 1 < argc) device = std::atoi(argv[++i]);
    else if (a == "--quick") shrink = 64;
    else tags.push_back(a);
  }
  if (tags.empty())  // every tag in the table, in its order
    for (const auto& e : coop_variants::kTable) {
      std::string n = e.name;
      n = n.substr(std::strlen("coopvar_khr_"));
      if (n.find("_glu_") != std::string::npos || n.size() < 6 || n.substr(n.size() - 5) != "_q4_0") continue;
      tags.push_back(n.substr(0, n.size() - 5));
    }
  try {
    Bench b(device);
    const auto& info = b.device->info();
    std::printf("device: %s (%s)\n", info.report.name.c_str(), info.report.driver.c_str());
    if (!info.coop_khr_f16) {
      std::printf("no KHR cooperative matrices with fp32 sums on this device\n");
      return 1;
    }
    const int n = 512;
    const size_t max_cols = 21504;
    // Activations already fp16-exact, so the fp32 reference and the fp16 input hold the same values.
    std::vector<float> x(size_t(n) * max_cols);
    std::vector<uint16_t> xh(x.size());
    std::mt19937 rng{7};
    std::uniform_real_distribution<float> u(-1, 1);
    for (size_t i = 0; i < x.size(); ++i) {
      xh[i] = float_to_fp16(u(rng));
      x[i] = fp16_to_float(xh[i]);
    }
    const vk::BufferSlice xs = b.arena->allocate(x.size() * 4), xs_half = b.arena->allocate(xh.size() * 2);
    b.uploader->write(xs, 0, x.data(), x.size() * 4);
    b.uploader->write(xs_half, 0, xh.data(), xh.size() * 2);
    b.uploader->finish();
    const size_t y_floats = size_t(8) * n * 21504;  // o's and down's split-K slices included
    const vk::BufferSlice y_ref = b.arena->allocate(size_t(n) * 21504 * 4), y = b.arena->allocate(y_floats * 4);
    const uint64_t limit = std::min<uint64_t>(b.device->limits().maxStorageBufferRange, b.arena->max_block_bytes());
    const Shape shapes[] = {{"qkv", 8192, 5376, false},
                            {"o", 5376, 4096, false},
                            {"gate_up", 43008, 5376, true},
                            {"down", 5376, 21504, false}};

    std::printf("%-8s %-5s %-14s %9s %8s %9s\n", "matrix", "type", "layout", "ms", "TFLOP/s", "rel.diff");
    std::map<std::string, double> layer_ms;  // "type layout" -> a layer's four matrices
    std::map<std::string, uint32_t> residency;  // layout -> workgroups at once on gate_up
    int bad = 0;
    for (DType t : {DType::Q4_0, DType::Q8_0}) {
      const std::string fmt = t == DType::Q4_0 ? "q4_0" : "q8_0";
      for (const Shape& s : shapes) {
        const int64_t rows = s.rows / shrink / 2 * 2, out_rows = s.glu ? rows / 2 : rows;
        const vk::DeviceMatrix m = bench::distinct_matrix(b, t, rows, s.cols, limit);
        auto run = [&](const vk::Kernel& k, const vk::BufferSlice& in, const vk::BufferSlice& out,
                       vk::MatmulTile tile, uint32_t splits, int reps) {
          std::vector<VkDescriptorSet> sets;
          for (const auto& c : m.chunks) sets.push_back(b.descriptors->allocate(k, std::vector{c.weights, c.scales, in, out}));
          vk::MatrixCall call{s.glu, true, n, 0, uint32_t(s.cols), uint32_t(out_rows), tile};
          call.splits = splits;
          call.split_sum = &b.pipelines->get("split_sum", 4);
          // The fastest of three runs of `reps` calls: an H100 left idle between runs (reading back,
          // comparing) is slow for the next few milliseconds, which made single runs vary 4x.
          double best = 1e30;
          for (int trial = 0; trial < 3; ++trial)
            best = std::min(best, b.time(reps, [&] {
              vk::record_matrix(*b.seq, k, m.chunks, m.cols, sets, call, {}, 65535, "matmul", 0);
            }));
          return best;
        };
        run(b.pipelines->get(vk::matmul_kernel_name(t, s.glu, vk::kMatmulTile), 4), xs, y_ref, vk::kMatmulTile, 1, 1);
        const std::vector<float> ref = b.read(y_ref, size_t(n) * out_rows);
        const double flop = 2.0 * n * double(rows) * double(s.cols);
        for (const std::string& tag : tags) {
          const std::string name = "coopvar_khr_" + tag + (s.glu ? "_glu_" : "_") + fmt;
          const vk::MatmulTile tile = tile_of(tag);
          const uint32_t splits = splits_for(rows, n, tile, s.glu);
          const double us = run(b.pipelines->get(name, variant_spirv(name), 4), xs_half, y, tile, splits, 20);
          const bench::Difference d = bench::difference(b.read(y, size_t(n) * out_rows), ref);
          // fp16 sums round each partial sum to 11 bits: 3.1e-3 to 3.9e-3 here on the H100.
          const double bound = tag.find("acc16") != std::string::npos ? 5e-3 : 2e-3;
          bad += !(d.relative < bound);
          layer_ms[fmt + " " + tag] += us / 1000;
          std::printf("%-8s %-5s %-14s %9.3f %8.1f %9.2e%s\n", s.name, fmt.c_str(), tag.c_str(), us / 1000,
                      flop / (us * 1e6), d.relative, d.relative < bound ? "" : "  FAIL");
          if (s.glu && t == DType::Q4_0) residency[tag] = peak_workgroups(b, m, tag, xs_half, y, n, s.cols, out_rows);
        }
      }
    }
    std::printf("\na layer's four matrices, ms (27B, %d tokens):\n", n);
    for (const auto& [key, ms] : layer_ms) std::printf("  %-22s %8.3f\n", key.c_str(), ms);
    std::printf("\nworkgroups running at once on gate_up, Q4_0 (most seen; the device has %s):\n",
                info.report.name.c_str());
    for (const auto& [tag, peak] : residency) std::printf("  %-14s %5u\n", tag.c_str(), peak);
    return bad ? 1 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_coop_variants: %s\n", e.what());
    return 1;
  }
}
