#include "runtime/cpu/ops.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include <vector>

#include "quant/convert.h"
#include "runtime/cpu/fast_exp.h"
#include "runtime/cpu/op_kernels.h"

namespace kiln {

void rms_norm(const float* x, const float* weight, int64_t n, float eps, float* out) {
  // Sum in double: the reference sums in float32 on the GPU in a tree, and a double sum is
  // closer to that than a long float32 chain.
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += double(x[i]) * x[i];
  const float inv = 1.0f / std::sqrt(float(sum / double(n)) + eps);
  for (int64_t i = 0; i < n; ++i) out[i] = x[i] * inv * weight[i];
}

void scale(float* x, int64_t n, float factor) {
  for (int64_t i = 0; i < n; ++i) x[i] *= factor;
}

void add_in_place(float* x, const float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] += y[i];
}

void gelu_tanh_mul(const float* gate, const float* up, int64_t n, float* out) {
  // 0.5 g (1 + tanh(u)) = g / (1 + e^(-2u)), u = sqrt(2 / pi) (g + 0.044715 g^3).
  constexpr float kSqrt2OverPi = 0.7978845608028654f;
  for (int64_t i = 0; i < n; ++i) {
    const float g = gate[i];
    const float u = kSqrt2OverPi * (g + 0.044715f * g * g * g);
    out[i] = g / (1.0f + exp_clamped(-2.0f * u)) * up[i];
  }
}

void rope_angles(int head_dim, int64_t pos, float base, float scaling, float* cos, float* sin) {
  const int half = head_dim / 2;
  const double p = double(pos) / double(scaling);
  for (int i = 0; i < half; ++i) {
    // inv_freq as the reference computes it (float32), the angle in double for long contexts.
    const float inv_freq = 1.0f / std::pow(base, float(2 * i) / float(head_dim));
    const double angle = p * double(inv_freq);
    cos[i] = float(std::cos(angle));
    sin[i] = float(std::sin(angle));
  }
}

void rope_rotate(float* x, int n_heads, int head_dim, const float* cos, const float* sin) {
  const int half = head_dim / 2;
  for (int h = 0; h < n_heads; ++h) {
    float* v = x + int64_t(h) * head_dim;
    for (int i = 0; i < half; ++i) {
      const float a = v[i];
      const float b = v[i + half];
      v[i] = a * cos[i] - b * sin[i];
      v[i + half] = b * cos[i] + a * sin[i];
    }
  }
}

void rope(float* x, int n_heads, int head_dim, int64_t pos, float base, float scaling) {
  std::vector<float> cos(size_t(head_dim / 2)), sin(size_t(head_dim / 2));
  rope_angles(head_dim, pos, base, scaling, cos.data(), sin.data());
  rope_rotate(x, n_heads, head_dim, cos.data(), sin.data());
}

void softmax(float* x, int64_t n) {
  float max_v = x[0];
  for (int64_t i = 1; i < n; ++i) max_v = std::max(max_v, x[i]);
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    x[i] = std::exp(x[i] - max_v);
    sum += x[i];
  }
  const float inv = float(1.0 / sum);
  for (int64_t i = 0; i < n; ++i) x[i] *= inv;
}

void scale_softcap(float* x, int64_t n, float factor, float cap) {
  for (int64_t i = 0; i < n; ++i) x[i] *= factor;
  if (cap > 0)
    for (int64_t i = 0; i < n; ++i) x[i] = cap * std::tanh(x[i] / cap);
}

void accumulate_rows(const uint8_t* rows, size_t stride, DType type, int64_t count, const float* weights, int n,
                     float* out) {
  for (int64_t j = 0; j < count; ++j) {
    const uint8_t* row = rows + j * stride;
    const float w = weights[j];
    if (type == DType::F16) {
      const uint16_t* v = reinterpret_cast<const uint16_t*>(row);
      float converted[64];  // a piece of the row as floats, so the multiply-adds vectorize
      for (int d0 = 0; d0 < n; d0 += 64) {
        const int len = std::min(64, n - d0);
        for (int d = 0; d < len; ++d) converted[d] = fp16_to_float(v[d0 + d]);
        for (int d = 0; d < len; ++d) out[d0 + d] += w * converted[d];
      }
    } else {
      const float* v = reinterpret_cast<const float*>(row);
      for (int d = 0; d < n; ++d) out[d] += w * v[d];
    }
  }
}

void attend_one(const float* q, const float* const* keys, const float* const* values, int64_t n_keys,
                int head_dim, float scale_factor, float* scores, float* out) {
  for (int64_t j = 0; j < n_keys; ++j) {
    const float* k = keys[j];
    float dot = 0;
    for (int d = 0; d < head_dim; ++d) dot += q[d] * k[d];
    scores[j] = dot * scale_factor;
  }
  softmax(scores, n_keys);
  std::fill(out, out + head_dim, 0.0f);
  for (int64_t j = 0; j < n_keys; ++j) {
    const float* v = values[j];
    const float w = scores[j];
    for (int d = 0; d < head_dim; ++d) out[d] += w * v[d];
  }
}

OpKernels portable_op_kernels() {
  OpKernels k;
  k.rms_norm = rms_norm;
  k.scale = scale;
  k.add_in_place = add_in_place;
  k.gelu_tanh_mul = gelu_tanh_mul;
  k.rope_rotate = rope_rotate;
  k.softmax = softmax;
  k.scale_softcap = scale_softcap;
  k.accumulate_rows = accumulate_rows;
  return k;
}

}  // namespace kiln
