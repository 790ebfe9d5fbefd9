#version 450
// Soft tokens (an image's embeddings, Backend::EmbeddingSpan): x[t] = rows[t] as they are (not
// scaled by sqrt(hidden) as embed.comp scales token embeddings), fused like embed.comp with the
// first layer's input RMSNorm: xn = norm(x) * w. One workgroup a token of one span; embed.comp
// skipped these tokens (their id is -1 in Tokens), so both run between the same two barriers.
#extension GL_GOOGLE_include_directive : require
layout(local_size_x_id = 0) in;

#include "common.glsl"

layout(std430, binding = 0) readonly buffer Rows { vec4 rows4[]; };  // [max_batch][hidden], by batch row
layout(std430, binding = 1) writeonly buffer Residual { vec4 x4[]; };
layout(std430, binding = 2) writeonly buffer Normed { vec4 xn4[]; };
layout(std430, binding = 3) readonly buffer Norms { vec4 norm4[]; };

// SoftEmbedPush (core/runtime/vulkan/push_constants.h).
layout(push_constant) uniform Push {
  uint first;        // batch row of the span's first token (Rows, Residual and Normed alike)
  uint hidden;       // multiple of 4
  uint norm_offset;  // floats into Norms; multiple of 4
  float eps;
} pc;

void main() {
  const uint t = pc.first + gl_WorkGroupID.x;
  const uint base = (t * pc.hidden) >> 2, quads = pc.hidden >> 2;
  float ss = 0.0;
  for (uint i = gl_LocalInvocationID.x; i < quads; i += gl_WorkGroupSize.x) {
    const vec4 v = rows4[base + i];
    x4[base + i] = v;
    ss += dot(v, v);
  }
  const float inv = 1.0 / sqrt(wg_sum(ss) / float(pc.hidden) + pc.eps);
  const uint nbase = pc.norm_offset >> 2;
  for (uint i = gl_LocalInvocationID.x; i < quads; i += gl_WorkGroupSize.x)
    xn4[base + i] = rows4[base + i] * inv * norm4[nbase + i];
}
