#version 450
// y = W x for a few tokens (decode): each workgroup owns ROWS rows, its invocations stride over the
// 32-weight blocks of those rows (16-byte loads, consecutive invocations on consecutive blocks),
// accumulate in fp32 and reduce through subgroups. With GLU, rows come in (gate, up) pairs and the
// output is gelu_tanh(gate) * up, so the MLP's gate, up and activation are one dispatch.
#extension GL_GOOGLE_include_directive : require
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint ROWS = 2;

#include "common.glsl"
#include "weights.glsl"

layout(std430, binding = 2) readonly buffer Activations { vec4 x4[]; };
layout(std430, binding = 3) writeonly buffer Outputs { float y[]; };

layout(push_constant) uniform Push {
  uint rows;       // rows of W in this chunk
  uint nb;         // blocks per row (cols / 32)
  uint n_tokens;
  uint x_offset;   // floats; multiple of 4
  uint x_stride;   // floats between tokens; multiple of 4
  uint y_offset;   // floats
  uint y_stride;
  uint groups_x;
} pc;

shared float row_sums[ROWS][MAX_SUBGROUPS];

void main() {
  const uint row0 = flat_group_index(pc.groups_x) * ROWS;
  if (row0 >= pc.rows) return;
  const uint tid = gl_LocalInvocationID.x;
  for (uint t = 0; t < pc.n_tokens; ++t) {
    float acc[ROWS];
    for (uint r = 0; r < ROWS; ++r) acc[r] = 0.0;
    const uint xb = (pc.x_offset + t * pc.x_stride) >> 2;
    for (uint b = tid; b < pc.nb; b += gl_WorkGroupSize.x) {
      vec4 xv[8];
      for (uint i = 0; i < 8u; ++i) xv[i] = x4[xb + b * 8u + i];
      for (uint r = 0; r < ROWS; ++r)
        if (row0 + r < pc.rows) acc[r] += block_dot((row0 + r) * pc.nb + b, xv);
    }
    for (uint r = 0; r < ROWS; ++r) {
      const float s = subgroupAdd(acc[r]);
      if (subgroupElect()) row_sums[r][gl_SubgroupID] = s;
    }
    barrier();
#ifdef GLU
    if (tid < ROWS / 2u && row0 + 2u * tid + 1u < pc.rows) {
      float g = 0.0, u = 0.0;
      for (uint i = 0; i < gl_NumSubgroups; ++i) {
        g += row_sums[2u * tid][i];
        u += row_sums[2u * tid + 1u][i];
      }
      y[pc.y_offset + t * pc.y_stride + row0 / 2u + tid] = gelu_tanh(g) * u;
    }
#else
    if (tid < ROWS && row0 + tid < pc.rows) {
      float s = 0.0;
      for (uint i = 0; i < gl_NumSubgroups; ++i) s += row_sums[tid][i];
      y[pc.y_offset + t * pc.y_stride + row0 + tid] = s;
    }
#endif
    barrier();
  }
}
