// What a GPU benchmark needs beyond GpuContext (bench_vulkan_kernels,
// bench_decode_skeleton), and timing by GPU timestamps. Not a test harness: no Qt.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "gpu_context.h"
#include "kiln/types.h"
#include "quant/convert.h"
#include "runtime/vulkan/weight_layout.h"

namespace kiln::bench {

struct Bench : test::GpuContext {
  explicit Bench(int index) : GpuContext(index, {1u << 30, 256u << 20, 64u << 20, 4096}) {}
  vk::BufferSlice floats(size_t n, uint64_t seed) {
    std::mt19937 rng{uint32_t(seed)};
    std::uniform_real_distribution<float> u(-1, 1);
    std::vector<float> v(n);
    for (float& x : v) x = u(rng);
    vk::BufferSlice s = arena->allocate(n * 4);
    uploader->write(s, 0, v.data(), n * 4);
    uploader->finish();
    return s;
  }
  vk::BufferSlice host;  // readback buffer, grown as needed
  std::vector<float> read(const vk::BufferSlice& s, size_t count) {
    if (host.size < count * 4) host = readback->allocate(count * 4);
    seq->begin(false);
    seq->copy_to_host(s, 0, host, 0, count * 4);
    seq->submit_and_wait();
    std::vector<float> out(count);
    std::memcpy(out.data(), host.mapped, count * 4);
    return out;
  }
  // Mean GPU microseconds of one call of `record`, repeated `reps` times in one submission.
  template <typename F>
  double time(int reps, F&& record) {
    for (int pass = 0; pass < 2; ++pass) {  // the first warms up
      seq->begin(true);
      for (int i = 0; i < reps; ++i) record();
      seq->submit_and_wait();
      const auto prof = seq->take_profile();
      if (pass == 1) {
        double us = 0, calls = 0;
        for (const auto& t : prof) {
          us += t.micros;
          calls += double(t.calls);
        }
        return us / reps;
      }
    }
    return 0;
  }
};

// `rows` distinct random rows in t's GGUF form (quantized: random quants, block scales 0.004 to
// 0.02; F32/F16: uniform in +-0.05), uploaded in chunks of at most max_chunk_bytes.
inline vk::DeviceMatrix distinct_matrix(Bench& b, DType t, int64_t rows, int64_t cols, uint64_t max_chunk_bytes) {
  const size_t rb = row_bytes(t, cols);
  std::vector<uint8_t> host(size_t(rows) * rb);
  std::mt19937_64 rng(uint64_t(rows) * 131 + uint64_t(cols) * 7 + uint64_t(t));
  if (t == DType::Q8_0 || t == DType::Q4_0) {
    for (size_t i = 0; i < host.size(); i += 8) {
      const uint64_t v = rng();
      std::memcpy(&host[i], &v, std::min<size_t>(8, host.size() - i));
    }
    const size_t block = t == DType::Q8_0 ? sizeof(BlockQ8_0) : sizeof(BlockQ4_0);
    std::uniform_real_distribution<float> scale(0.004f, 0.02f);
    for (size_t i = 0; i < host.size(); i += block) {
      const uint16_t d = float_to_fp16(scale(rng));
      std::memcpy(&host[i], &d, 2);
    }
  } else {
    std::uniform_real_distribution<float> u(-0.05f, 0.05f);
    std::vector<float> row(static_cast<size_t>(cols));
    for (int64_t r = 0; r < rows; ++r) {
      for (float& v : row) v = u(rng);
      quantize_row(t, row.data(), cols, &host[size_t(r) * rb]);
    }
  }
  auto m = vk::upload_matrix(*b.arena, *b.uploader, t, rows, cols, [&](int64_t r) { return &host[size_t(r) * rb]; },
                             max_chunk_bytes, 64);
  b.uploader->finish();
  return m;
}

struct Difference {
  double relative = 0;  // ||coop - ref|| / ||ref||
  double max = 0;       // max |coop - ref| / max |ref|
};
inline Difference difference(const std::vector<float>& got, const std::vector<float>& ref) {
  double diff = 0, norm = 0, max_diff = 0, max_ref = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double d = std::isfinite(got[i]) ? double(got[i]) - ref[i] : INFINITY;
    diff += d * d;
    norm += double(ref[i]) * ref[i];
    max_diff = std::max(max_diff, std::abs(d));
    max_ref = std::max(max_ref, std::abs(double(ref[i])));
  }
  return {std::sqrt(diff / std::max(norm, 1e-30)), max_diff / std::max(max_ref, 1e-30)};
}
}  // namespace kiln::bench
