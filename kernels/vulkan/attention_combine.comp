#version 450
// Merges the split partial results of attention (split > 1): out = sum_s e^(m_s - M) acc_s /
// sum_s e^(m_s - M) l_s. One workgroup a (token, head).
#extension GL_GOOGLE_include_directive : require
layout(local_size_x_id = 0) in;

#include "common.glsl"

layout(std430, binding = 0) readonly buffer Partials { float partials[]; };
layout(std430, binding = 1) writeonly buffer Output { float outputs[]; };

layout(push_constant) uniform Push {
  uint n_heads;
  uint head_dim;
  uint splits;
  uint out_stride;
} pc;

void main() {
  const uint item = gl_WorkGroupID.x;  // token * heads + head
  const uint h = item % pc.n_heads, t = item / pc.n_heads;
  const uint D = pc.head_dim, rec = D + 2u;
  const uint first = item * pc.splits * rec;
  float M = NEG_BIG;
  for (uint s = 0; s < pc.splits; ++s) M = max(M, partials[first + s * rec]);
  float L = 0.0;
  for (uint s = 0; s < pc.splits; ++s) L += partials[first + s * rec + 1u] * exp(partials[first + s * rec] - M);
  for (uint d = gl_LocalInvocationID.x; d < D; d += gl_WorkGroupSize.x) {
    float sum = 0.0;
    for (uint s = 0; s < pc.splits; ++s)
      sum += partials[first + s * rec + 2u + d] * exp(partials[first + s * rec] - M);
    outputs[t * pc.out_stride + h * D + d] = sum / L;
  }
}
