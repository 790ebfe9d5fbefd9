// The CPU reference for every operation of the forward pass. The Vulkan shaders are tested
// against these, so they favour clarity; the heavy loops (matmul, attention) are threaded.
#pragma once

#include <cstdint>

#include "runtime/cpu/thread_pool.h"

namespace kiln {

// out[i] = x[i] / sqrt(mean(x^2) + eps) * weight[i], for n elements. weight already holds 1 + w.
// out may alias x.
void rms_norm(const float* x, const float* weight, int64_t n, float eps, float* out);

// x = x * sqrt(hidden), the embedding scale.
void scale(float* x, int64_t n, float factor);

// x[i] += y[i]
void add_in_place(float* x, const float* y, int64_t n);

// out[i] = gelu_tanh(gate[i]) * up[i]
void gelu_tanh_mul(const float* gate, const float* up, int64_t n, float* out);

// Rotate-half RoPE on one vector of n_heads * head_dim at position `pos`:
// pairs (i, i + head_dim/2) rotate by angle (pos / scaling) * base^(-2i/head_dim).
void rope(float* x, int n_heads, int head_dim, int64_t pos, float base, float scaling);

// In-place softmax over n values.
void softmax(float* x, int64_t n);

// Attention for one query position and one head over `n_keys` keys:
//   out[d] = sum_j softmax(scale * q.k_j)_j * v_j[d]
// keys/values are given as row pointers (so ring buffers need no copy); all head_dim long.
void attend_one(const float* q, const float* const* keys, const float* const* values, int64_t n_keys,
                int head_dim, float scale, float* scores_scratch, float* out);

}  // namespace kiln
