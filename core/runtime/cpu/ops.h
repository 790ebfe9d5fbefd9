// The CPU reference for every operation of the forward pass. The Vulkan shaders are tested
// against these, so they favour clarity; the heavy loops (matmul, attention) are threaded.
#pragma once

#include <cstddef>
#include <cstdint>

#include "quant/dtype.h"
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
// The same as rope_angles then rope_rotate.
void rope(float* x, int n_heads, int head_dim, int64_t pos, float base, float scaling);

// cos[i], sin[i] (i < head_dim / 2) of rope's angles at `pos`: the same for every head, and for
// queries and keys, so a backend computes them once a token.
void rope_angles(int head_dim, int64_t pos, float base, float scaling, float* cos, float* sin);
// Each head's pairs (i, i + head_dim/2) rotated by the angles of rope_angles.
void rope_rotate(float* x, int n_heads, int head_dim, const float* cos, const float* sin);

// In-place softmax over n values.
void softmax(float* x, int64_t n);

// x[i] *= factor, then, where cap > 0, x[i] = cap * tanh(x[i] / cap): attention scores (Gemma's
// attn_logit_softcapping) and final logits (factor 1).
void scale_softcap(float* x, int64_t n, float factor, float cap);

// out[d] += sum_j weights[j] * row_j[d] for j < count, d < n, in order of j: attention's weighted
// sum of value rows. Row j starts at rows + j * stride bytes; type is F32 or F16 (a KV cache's).
void accumulate_rows(const uint8_t* rows, size_t stride, DType type, int64_t count, const float* weights, int n,
                     float* out);

// Attention for one query position and one head over `n_keys` keys:
//   out[d] = sum_j softmax(scale * q.k_j)_j * v_j[d]
// keys/values are given as row pointers (so ring buffers need no copy); all head_dim long.
void attend_one(const float* q, const float* const* keys, const float* const* values, int64_t n_keys,
                int head_dim, float scale, float* scores_scratch, float* out);

}  // namespace kiln
