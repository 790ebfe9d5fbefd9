#version 450
// Y = X W^T for a batch of tokens (prefill): 64 rows x 64 tokens a workgroup, K in steps of one
// 32-weight block. Weights are dequantized into shared memory once per tile and reused by 64
// tokens; each invocation accumulates a 4 x 4 tile in fp32. With GLU, rows come in (gate, up)
// pairs and the output is gelu_tanh(gate) * up.
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 256) in;

#include "common.glsl"
#include "weights.glsl"

layout(std430, binding = 2) readonly buffer Activations { vec4 x4[]; };
layout(std430, binding = 3) writeonly buffer Outputs { float y[]; };

layout(push_constant) uniform Push {
  uint rows;
  uint nb;
  uint n_tokens;
  uint x_offset;
  uint x_stride;
  uint y_offset;
  uint y_stride;
  uint groups_x;  // unused: the grid is (row tiles, token tiles)
} pc;

shared vec4 a_tile[32][16];  // [k][row / 4]: dequantized weights
shared vec4 b_tile[32][16];  // [k][token / 4]: activations

void main() {
  const uint tid = gl_LocalInvocationID.x;
  const uint tile_m = gl_WorkGroupID.x * 64u;
  const uint tile_n = gl_WorkGroupID.y * 64u;
  const uint tx = tid & 15u;  // token group: tokens tile_n + 4 tx ..
  const uint ty = tid >> 4;   // row group: rows tile_m + 4 ty ..
  vec4 acc[4];                // acc[i][j]: row 4 ty + i, token 4 tx + j
  for (uint i = 0; i < 4u; ++i) acc[i] = vec4(0.0);

  const uint a_row = tid >> 2, a_quarter = tid & 3u;
  for (uint b = 0; b < pc.nb; ++b) {
    {
      vec4 lo = vec4(0.0), hi = vec4(0.0);
      if (tile_m + a_row < pc.rows) {
        const uint gb = (tile_m + a_row) * pc.nb + b;
        dequant_quarter(gb, a_quarter, lo, hi);
      }
      const uint k0 = quarter_first(a_quarter) * 4u, k1 = quarter_second(a_quarter) * 4u;
      for (uint i = 0; i < 4u; ++i) {
        a_tile[k0 + i][a_row >> 2][a_row & 3u] = lo[i];
        a_tile[k1 + i][a_row >> 2][a_row & 3u] = hi[i];
      }
    }
    for (uint j = 0; j < 2u; ++j) {
      const uint idx = tid + 256u * j;
      const uint tok = idx >> 3, v = idx & 7u;
      vec4 xv = vec4(0.0);
      if (tile_n + tok < pc.n_tokens) xv = x4[((pc.x_offset + (tile_n + tok) * pc.x_stride) >> 2) + b * 8u + v];
      for (uint i = 0; i < 4u; ++i) b_tile[v * 4u + i][tok >> 2][tok & 3u] = xv[i];
    }
    barrier();
    for (uint k = 0; k < 32u; ++k) {
      const vec4 a = a_tile[k][ty];
      const vec4 x = b_tile[k][tx];
      acc[0] += a.x * x;
      acc[1] += a.y * x;
      acc[2] += a.z * x;
      acc[3] += a.w * x;
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
