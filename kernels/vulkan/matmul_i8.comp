#version 450
// Y = X W^T for a batch of tokens (prefill) on devices without cooperative matrices: int8 weights
// times int8 activations (quantize_i8.comp's blocks, a scale each half) in packed 4-way integer dot
// products, exact int32 sums per half block, then the scales in fp32. 64 rows x 64 tokens a
// workgroup, BK blocks (an even number) a step: a step's weights are unpacked to int8 into shared
// memory once and reused by 64 tokens; each invocation accumulates 4 rows x 4 tokens. Against
// matmul.comp's fp32 tiles a block costs each invocation 8 dot instructions an output instead of
// 32 FMAs, and a quarter of the shared-memory reads. With GLU, rows come in (gate, up) pairs and
// the output is gelu_tanh(gate) * up. Weights: Q8_0, Q4_0, and GGUF's Q5_0, IQ4_NL and IQ4_XS (no min to
// carry; Q4_1 / Q5_1 and the K-quants stay on fp32 tiles). The tile, BK and the register prefetch are
// matmul.comp's shape, not tuned on hardware: on an H100 (prefill=int_dot, 27B Q4_0 pp512) 985 tok/s
// against llama.cpp's 877 without matrix cores (PERFORMANCE.md).
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 256) in;

#include "common.glsl"
#include "weights.glsl"
#include "dot_i8.glsl"
#include "quantize_i8.glsl"

#ifndef BK
#define BK 2u
#endif

layout(std430, binding = 2) readonly buffer QuantizedActivations { uvec4 xq4[]; };  // quantize_i8.comp's layout
layout(std430, binding = 3) writeonly buffer Outputs { float y[]; };

layout(push_constant) uniform Push {
  uint rows;
  uint nb;
  uint n_tokens;
  uint x_offset;  // unused: quantize_i8 applied it
  uint x_stride;  // unused
  uint y_offset;
  uint y_stride;
  uint groups_x;  // unused: the grid is (row tiles, token tiles)
} pc;

// [block of the step][word of the block][row or token / 4]: word w of a block holds its elements
// 4w .. 4w + 3, so one uvec4 read gives an invocation its 4 rows' (or tokens') word.
shared uvec4 a_q[BK][8][16];
shared uvec4 b_q[BK][8][16];
shared vec4 a_d[BK][16];  // weight block scales
shared vec4 b_d[BK][GROUPS][16];  // activation scales: [block][group][token / 4]

// Q4_0 stores q + 8 in nibbles: bytes q in 0..15 become the int8 q - 8 without borrows between
// bytes ((q + 120) ^ 128 = q - 8 mod 256).
uint nibbles_to_i8(uint nib) { return (nib + 0x78787878u) ^ 0x80808080u; }

// Half h (elements 16h .. 16h + 15) of block b of a row, as 4 words of int8 and the block's
// scale; zeros past the matrix.
struct Half {
  uvec4 q;
  float d;
};
Half weight_half(uint row, uint b, uint h) {
  Half r = Half(uvec4(0u), 0.0);
  if (row >= pc.rows || b >= pc.nb) return r;
  const uint gb = row * pc.nb + b;
#if defined(WTYPE_Q4_0)
  // Low nibbles are elements 0..15, high nibbles 16..31.
  const uvec4 nib = (w4[gb] >> (4u * h)) & 0x0F0F0F0Fu;
  r.q = uvec4(nibbles_to_i8(nib.x), nibbles_to_i8(nib.y), nibbles_to_i8(nib.z), nibbles_to_i8(nib.w));
  r.d = block_scale(gb);
#elif defined(WTYPE_Q5_0) || defined(WTYPE_IQ4_NL) || defined(WTYPE_IQ4_XS)
  // Their quants as bytes (weights_kquant.glsl): IQ4_NL's and IQ4_XS's grid values are int8 already, Q5_0's
  // 0..31 become q - 16 as Q4_0's nibbles do ((q + 112) ^ 128).
  const uvec4 q = w4[gb];
  const uvec2 high = block_high(gb);
  for (uint w = 0; w < 4u; ++w) {
    const uvec2 bytes = kquant_bytes(q, high, w);
    r.q[w] = h == 0u ? bytes.x : bytes.y;
  }
#if defined(WTYPE_Q5_0)
  r.q = (r.q + 0x70707070u) ^ 0x80808080u;
#endif
  r.d = block_kscale(gb).scale.x;
#else
  r.q = w4[gb * 2u + h];
  r.d = block_scale(gb);
#endif
  return r;
}
// The same of a token's activations, with the scales of the half's groups.
struct ActivationHalf {
  uvec4 q;
  float d[GROUPS / 2u];
};
ActivationHalf activation_half(uint token, uint b, uint h, uint scale_base) {
  ActivationHalf r;
  r.q = uvec4(0u);
  for (uint g = 0; g < GROUPS / 2u; ++g) r.d[g] = 0.0;
  if (token >= pc.n_tokens || b >= pc.nb) return r;
  const uint block = token * pc.nb + b;
  r.q = xq4[block * 2u + h];
  for (uint g = 0; g < GROUPS / 2u; ++g) {
    const uint sw = scale_base + GROUPS * block + GROUPS / 2u * h + g;  // scale_base is a multiple of 8
    r.d[g] = uintBitsToFloat(xq4[sw >> 2][sw & 3u]);
  }
  return r;
}

// A step's tiles are 64 rows (tokens) x BK blocks x 2 halves: ITEMS halves of each an invocation,
// the halves and blocks of a row next to each other so that neighbours read neighbouring bytes.
const uint ITEMS = BK * 128u / 256u;

void main() {
  const uint tid = gl_LocalInvocationID.x;
  const uint tile_m = gl_WorkGroupID.x * 64u;
  const uint tile_n = gl_WorkGroupID.y * 64u;
  const uint tx = tid & 15u;  // token group: tokens tile_n + 4 tx ..
  const uint ty = tid >> 4;   // row group: rows tile_m + 4 ty ..
  vec4 acc[4];                // acc[i][j]: row 4 ty + i, token 4 tx + j
  for (uint i = 0; i < 4u; ++i) acc[i] = vec4(0.0);
  const uint scale_base = pc.n_tokens * pc.nb * 8u;

  // The next step's halves are loaded into registers while this step's are multiplied.
  Half wv[ITEMS];
  ActivationHalf xv[ITEMS];
  for (uint it = 0; it < ITEMS; ++it) {
    const uint idx = tid + 256u * it, h = idx & 1u, k = (idx >> 1) % BK, r = idx / (2u * BK);
    wv[it] = weight_half(tile_m + r, k, h);
    xv[it] = activation_half(tile_n + r, k, h, scale_base);
  }
  for (uint b0 = 0; b0 < pc.nb; b0 += BK) {
    for (uint it = 0; it < ITEMS; ++it) {
      const uint idx = tid + 256u * it, h = idx & 1u, k = (idx >> 1) % BK, r = idx / (2u * BK);
      for (uint j = 0; j < 4u; ++j) {
        a_q[k][4u * h + j][r >> 2][r & 3u] = wv[it].q[j];
        b_q[k][4u * h + j][r >> 2][r & 3u] = xv[it].q[j];
      }
      if (h == 0u) a_d[k][r >> 2][r & 3u] = wv[it].d;
      for (uint g = 0; g < GROUPS / 2u; ++g) b_d[k][GROUPS / 2u * h + g][r >> 2][r & 3u] = xv[it].d[g];
    }
    barrier();
    if (b0 + BK < pc.nb) {
      for (uint it = 0; it < ITEMS; ++it) {
        const uint idx = tid + 256u * it, h = idx & 1u, k = (idx >> 1) % BK, r = idx / (2u * BK);
        wv[it] = weight_half(tile_m + r, b0 + BK + k, h);
        xv[it] = activation_half(tile_n + r, b0 + BK + k, h, scale_base);
      }
    }
    for (uint k = 0; k < BK; ++k) {
      vec4 t[4];  // t[i][j]: row 4 ty + i, token 4 tx + j, the block's sum but for the weight scale
      for (uint i = 0; i < 4u; ++i) t[i] = vec4(0.0);
      for (uint g = 0; g < GROUPS; ++g) {
        // The group's exact sums (|sum| < 2^18), kept as the bits of the float 1.5 * 2^23 + sum:
        // one float subtraction converts them (int_to_float without its integer add: the
        // integer pipe is the one the dots load).
        ivec4 s[4];
        for (uint i = 0; i < 4u; ++i) s[i] = ivec4(0x4B400000);
        for (uint w = GROUP_WORDS * g; w < GROUP_WORDS * (g + 1u); ++w) {
          const uvec4 a = a_q[k][w][ty];
          const uvec4 x = b_q[k][w][tx];
          for (uint i = 0; i < 4u; ++i)
            s[i] += ivec4(sdot4(a[i], x.x), sdot4(a[i], x.y), sdot4(a[i], x.z), sdot4(a[i], x.w));
        }
        const vec4 dx = b_d[k][g][tx];
        for (uint i = 0; i < 4u; ++i) t[i] += (uintBitsToFloat(uvec4(s[i])) - ROUND_MAGIC) * dx;
      }
      const vec4 da = a_d[k][ty];
      for (uint i = 0; i < 4u; ++i) acc[i] += t[i] * da[i];
    }
    barrier();
  }

  for (uint j = 0; j < 4u; ++j) {
    const uint tok = tile_n + tx * 4u + j;
    if (tok >= pc.n_tokens) continue;
    const uint out_base = pc.y_offset + tok * pc.y_stride;
#ifdef GLU
    for (uint i = 0; i < 4u; i += 2u) {
      const uint m = tile_m + ty * 4u + i;
      if (m + 1u < pc.rows) y[out_base + m / 2u] = gelu_tanh(acc[i][j]) * acc[i + 1u][j];
    }
#else
    for (uint i = 0; i < 4u; ++i) {
      const uint m = tile_m + ty * 4u + i;
      if (m < pc.rows) y[out_base + m] = acc[i][j];
    }
#endif
  }
}
