// A Vulkan device with everything a kernel test needs: buffers filled from host vectors, one
// dispatch at a time, results read back. Uses the backend's own device, memory and pipeline code.
#pragma once

#include <QtTest>

#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "gpu_context.h"
#include "quant/convert.h"
#include "quant/matrix.h"
#include "runtime/cpu/matmul.h"
#include "runtime/cpu/ops.h"
#include "runtime/vulkan/push_constants.h"
#include "runtime/vulkan/weight_layout.h"

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

// embed_<type> (`kernel`) on six tokens of e, uploaded in chunks of 64 rows when `chunked`, against
// the CPU: x = row * sqrt(hidden) and xn = rms_norm(x) * w. The relative errors of x and xn, and how
// many chunks the upload made.
struct EmbedCheck {
  double x = 0, xn = 0;
  size_t chunks = 0;
};
inline EmbedCheck check_embed(VkHarness& h, const Matrix& e, const std::string& kernel, bool chunked) {
  const int64_t hidden = e.cols, last = e.rows - 1;
  const std::vector<int32_t> tokens{0, int32_t(last), 150, 7, int32_t(last), 64};
  const std::vector<float> w = random_floats(size_t(hidden) + 4, 8, 0.5f, 1.5f);  // offset 4 in the norms buffer
  const float eps = 1e-6f;
  const size_t n = tokens.size();
  std::vector<float> x(n * hidden), xn(n * hidden);
  for (size_t i = 0; i < n; ++i) {
    matrix_row(e, tokens[i], &x[i * hidden]);
    scale(&x[i * hidden], hidden, std::sqrt(float(hidden)));
    rms_norm(&x[i * hidden], w.data() + 4, hidden, eps, &xn[i * hidden]);
  }
  const uint64_t limit = chunked ? 64 * vk::layout_weight_bytes(e.type, 1, hidden) : ~0ull;
  const vk::DeviceMatrix dm = vk::upload_matrix(*h.arena, *h.uploader, e.type, e.rows, hidden,
                                                [&](int64_t r) { return e.row(r); }, limit, 64);
  h.uploader->finish();
  const vk::BufferSlice ts = h.upload(tokens), xs = h.poisoned(x.size()), xns = h.poisoned(xn.size()), ws = h.upload(w);
  const vk::Kernel& k = h.pipelines->get(kernel, 6, {256});
  for (const auto& c : dm.chunks) {
    vk::EmbedPush p{uint32_t(n), uint32_t(hidden), uint32_t(hidden / 32), uint32_t(c.row_begin), uint32_t(c.rows), 4,
                    std::sqrt(float(hidden)), eps};
    h.run(k, {c.weights, c.scales, ts, xs, xns, ws}, p, uint32_t(n));
  }
  return {relative_error(h.read(xs, x.size()), x), relative_error(h.read(xns, xn.size()), xn), dm.chunks.size()};
}

}  // namespace kiln::test
