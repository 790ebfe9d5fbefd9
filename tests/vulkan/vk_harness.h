// A Vulkan device with everything a kernel test needs: buffers filled from host vectors, one
// dispatch at a time, results read back. Uses the backend's own device, memory and pipeline code.
#pragma once

#include <QtTest>

#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "gpu_context.h"
#include "runtime/vulkan/push_constants.h"
#include "quant/convert.h"
#include "quant/matrix.h"

namespace kiln::test {

struct VkHarness : GpuContext {
  VkHarness() : GpuContext(-1, {64u << 20, 64u << 20, 8u << 20, 64}) {}

  template <typename T>
  vk::BufferSlice upload(const std::vector<T>& data) {
    vk::BufferSlice s = arena->allocate(data.size() * sizeof(T));
    uploader->write(s, 0, data.data(), data.size() * sizeof(T));
    uploader->finish();
    return s;
  }
  // A buffer filled with NaN, so anything a kernel fails to write shows up.
  vk::BufferSlice poisoned(size_t floats) { return upload(std::vector<float>(floats, std::nanf(""))); }

  template <typename T = float>
  std::vector<T> read(const vk::BufferSlice& s, size_t count) {
    vk::BufferSlice host = readback->allocate(count * sizeof(T));
    seq->begin(false);
    seq->copy_to_host(s, 0, host, 0, count * sizeof(T));
    seq->submit_and_wait();
    std::vector<T> out(count);
    std::memcpy(out.data(), host.mapped, count * sizeof(T));
    return out;
  }

  // x ([tokens][cols] floats on the device) in fp16 as the model feeds the tensor-core tiles with
  // fp16 input (convert_f16.comp): dense, [tokens][cols].
  vk::BufferSlice to_f16(const vk::BufferSlice& x, uint32_t tokens, uint32_t cols) {
    const vk::BufferSlice xh = poisoned(size_t(tokens) * cols / 2);
    run(pipelines->get("convert_f16", 2), {x, xh}, vk::QuantizePush{tokens, cols / 32, 0, cols}, (cols / 32 + 63) / 64,
        tokens);
    return xh;
  }

  template <typename Push>
  void run(const vk::Kernel& k, std::initializer_list<vk::BufferSlice> buffers, const Push& push, uint32_t gx,
           uint32_t gy = 1) {
    std::vector<vk::BufferSlice> b(buffers);
    VkDescriptorSet set = descriptors->allocate(k, b);
    seq->begin(false);
    seq->dispatch(k, set, &push, sizeof push, gx, gy, 1, "test", -1);
    seq->submit_and_wait();
  }
};

inline std::vector<float> random_floats(size_t n, uint64_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

// A rows x cols weight of random values in [-1, 1), quantized to `type`.
inline Matrix random_matrix(DType type, int64_t rows, int64_t cols, uint64_t seed) {
  Matrix m;
  m.type = type;
  m.rows = rows;
  m.cols = cols;
  m.storage = allocate_aligned(m.bytes());
  const std::vector<float> v = random_floats(size_t(rows * cols), seed);
  for (int64_t r = 0; r < rows; ++r) quantize_row(type, &v[r * cols], cols, m.row(r));
  return m;
}

// ||a - b|| / ||b||; NaN anywhere in a gives infinity.
inline double relative_error(const std::vector<float>& a, const std::vector<float>& b) {
  double diff = 0, norm = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    if (!std::isfinite(a[i])) return INFINITY;
    diff += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
    norm += double(b[i]) * b[i];
  }
  return std::sqrt(diff / std::max(norm, 1e-30));
}

}  // namespace kiln::test
