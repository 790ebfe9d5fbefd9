#version 450
// The vision tower's matrices (core/runtime/vulkan/vision_tower_gpu.cpp): for M tokens,
//   Y[m][n] = epilogue( sum_k X[m][k] W[n][k] )      any M, N, K (K need not be a multiple of 32)
// epilogue, by push flags: + bias[n] (FLAG_BIAS), gelu_tanh (FLAG_GELU, after the bias),
// + R[m][n] (FLAG_ADD_R: the position embedding), + the old Y[m][n] (FLAG_ACCUMULATE: a residual).
// W is [N][k_weight] with rows zero-padded to k_weight (a multiple of 32), F16 (WEIGHT_F16: halves
// packed in pairs, the lower k in the low bits) or F32. X and Y are F32.
// A workgroup computes 128 tokens x 64 outputs, K in steps of 32 staged in shared memory; each
// invocation accumulates 8 tokens x 4 outputs in fp32 (three shared loads a step for 32 fma).
// Grid: (ceil(N / 64), ceil(M / 128)).
//
// Push constants (VisionMatmulPush in vision_tower_gpu.cpp), 4-byte words:
//   0 m, 1 n, 2 k, 3 k_weight, 4 x_stride, 5 y_stride, 6 r_stride, 7 flags
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 256) in;

#include "common.glsl"

#ifdef WEIGHT_F16
layout(std430, binding = 0) readonly buffer Weights { uint w[]; };  // [N][k_weight / 2] half pairs
#else
layout(std430, binding = 0) readonly buffer Weights { float w[]; };  // [N][k_weight]
#endif
layout(std430, binding = 1) readonly buffer Inputs { float x[]; };   // [M][x_stride]
layout(std430, binding = 2) readonly buffer Bias { float bias[]; };  // [N]
layout(std430, binding = 3) readonly buffer Added { float r[]; };    // [M][r_stride]
layout(std430, binding = 4) buffer Outputs { float y[]; };           // [M][y_stride]

layout(push_constant) uniform Push {
  uint m, n, k, k_weight, x_stride, y_stride, r_stride, flags;
} pc;

const uint FLAG_BIAS = 1u, FLAG_GELU = 2u, FLAG_ADD_R = 4u, FLAG_ACCUMULATE = 8u;

shared vec4 w_tile[32][16];  // [k][output / 4]
shared vec4 x_tile[32][32];  // [k][token / 4]

void main() {
  const uint tid = gl_LocalInvocationID.x;
  const uint n0 = gl_WorkGroupID.x * 64u, m0 = gl_WorkGroupID.y * 128u;
  const uint tn = tid & 15u;  // outputs n0 + 4 tn ..
  const uint tm = tid >> 4;   // tokens m0 + 8 tm ..
  vec4 acc[8];                // acc[i][j]: token 8 tm + i, output 4 tn + j
  for (uint i = 0; i < 8u; ++i) acc[i] = vec4(0.0);

  for (uint k0 = 0; k0 < pc.k; k0 += 32u) {
    // Inputs: 128 tokens x 32 k, 16 an invocation; 32 neighbours read one row's 32 floats.
    for (uint j = 0; j < 16u; ++j) {
      const uint idx = tid + 256u * j, row = idx >> 5, kk = idx & 31u;
      float v = 0.0;
      if (m0 + row < pc.m && k0 + kk < pc.k) v = x[(m0 + row) * pc.x_stride + k0 + kk];
      x_tile[kk][row >> 2][row & 3u] = v;
    }
#ifdef WEIGHT_F16
    // Weights: 64 outputs x 16 half pairs, 4 an invocation (padding past k is zero).
    for (uint j = 0; j < 4u; ++j) {
      const uint idx = tid + 256u * j, row = idx >> 4, pair = idx & 15u;
      vec2 v = vec2(0.0);
      if (n0 + row < pc.n) v = unpackHalf2x16(w[((n0 + row) * pc.k_weight + k0) / 2u + pair]);
      w_tile[2u * pair][row >> 2][row & 3u] = v.x;
      w_tile[2u * pair + 1u][row >> 2][row & 3u] = v.y;
    }
#else
    for (uint j = 0; j < 8u; ++j) {
      const uint idx = tid + 256u * j, row = idx >> 5, kk = idx & 31u;
      float v = 0.0;
      if (n0 + row < pc.n) v = w[(n0 + row) * pc.k_weight + k0 + kk];
      w_tile[kk][row >> 2][row & 3u] = v;
    }
#endif
    barrier();
    for (uint kk = 0; kk < 32u; ++kk) {
      const vec4 a = w_tile[kk][tn];
      const vec4 b0 = x_tile[kk][2u * tm], b1 = x_tile[kk][2u * tm + 1u];
      acc[0] += b0.x * a;
      acc[1] += b0.y * a;
      acc[2] += b0.z * a;
      acc[3] += b0.w * a;
      acc[4] += b1.x * a;
      acc[5] += b1.y * a;
      acc[6] += b1.z * a;
      acc[7] += b1.w * a;
    }
    barrier();
  }

  for (uint i = 0; i < 8u; ++i) {
    const uint row = m0 + 8u * tm + i;
    if (row >= pc.m) continue;
    for (uint j = 0; j < 4u; ++j) {
      const uint col = n0 + 4u * tn + j;
      if (col >= pc.n) continue;
      float v = acc[i][j];
      if ((pc.flags & FLAG_BIAS) != 0u) v += bias[col];
      if ((pc.flags & FLAG_GELU) != 0u) v = gelu_tanh(v);
      if ((pc.flags & FLAG_ADD_R) != 0u) v += r[row * pc.r_stride + col];
      const uint at = row * pc.y_stride + col;
      if ((pc.flags & FLAG_ACCUMULATE) != 0u) v += y[at];
      y[at] = v;
    }
  }
}
