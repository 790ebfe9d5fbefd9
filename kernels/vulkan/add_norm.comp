#version 450
// The residual step of both halves of a layer, and the norm that follows it, in one pass a token:
//   x  = x + rms_norm(y) * w_post     (post_attention_norm / post_ffn_norm)
//   xn = rms_norm(x) * w_pre          (pre_ffn_norm, the next layer's input_norm, or the final norm)
// The residual is read from binding 1 and written to binding 4: the same buffer for batches, each
// layer's own for one token (a decode step writes every address once: stage_flags.glsl). Each
// invocation reads back only what it wrote itself, so no barrier is needed between passes.
// With QACT_OUT (one token), xn is written rounded to int8 for the matrices that read it
// (matvec_staged.comp with QACT_IN): per 32 values 8 words of int8 and 4 fp32 scales, one for
// each 8, which two neighbouring invocations share.
// With SLOTS (one token, ModelGpu::wide_norm), the matrix before has left the sums both norms need
// in slots (norm_sums.glsl), so there is no pass over the whole vector: workgroup g takes elements
// [4 WG g, 4 WG (g + 1)), one vec4 an invocation, and the step is as short as one round of loads.
#extension GL_GOOGLE_include_directive : require
layout(local_size_x_id = 0) in;

#include "common.glsl"
#include "stage_flags.glsl"

layout(std430, binding = 0) readonly buffer BlockOutput { vec4 y4[]; };
layout(std430, binding = 1) readonly buffer Residual { vec4 x4[]; };
layout(std430, binding = 4) buffer ResidualOut { vec4 x4_out[]; };
#ifdef QACT_OUT
#extension GL_KHR_shader_subgroup_shuffle : require
layout(std430, binding = 2) writeonly buffer Normed { uint xq[]; };
#else
layout(std430, binding = 2) writeonly buffer Normed { vec4 xn4[]; };
#endif
layout(std430, binding = 3) readonly buffer Norms { vec4 norm4[]; };
#ifdef SLOTS
layout(std430, binding = 5) readonly buffer Slots { vec4 slots[]; };
shared vec4 sums_buf[MAX_SUBGROUPS];
#endif

layout(push_constant) uniform Push {
  uint hidden;
  uint post_offset;  // floats into Norms; multiples of 4
  uint pre_offset;
  float eps;
  uint slot_count;  // SLOTS: how many
  STAGE_PUSH
} pc;

// xn for the elements 4i .. 4i + 3 (as int8 with QACT_OUT: i and the invocation index agree mod 2,
// and lane tid ^ 1, active too, holds the other half of the group of 8).
void write_normed(uint i, uint base, vec4 v) {
#ifdef QACT_OUT
  const vec4 a = abs(v);
  float amax = max(max(a.x, a.y), max(a.z, a.w));
  amax = max(amax, subgroupShuffleXor(amax, 1u));
  const float inv = amax > 0.0 ? 127.0 / amax : 0.0;
  const uvec4 q = floatBitsToUint(v * inv + ROUND_MAGIC) & 255u;
  xq[i / 8u * 12u + i % 8u] = q.x | (q.y << 8) | (q.z << 16) | (q.w << 24);
  if ((i & 1u) == 0u) xq[i / 8u * 12u + 8u + (i % 8u) / 2u] = floatBitsToUint(amax / 127.0);
#else
  xn4[base + i] = v;
#endif
}

#ifdef SLOTS
void body() {
  const uint tid = gl_LocalInvocationID.x;
  vec4 t = vec4(0.0);
  for (uint s = tid; s < pc.slot_count; s += gl_WorkGroupSize.x) t += slots[s];
  t = subgroupAdd(t);
  if (subgroupElect()) sums_buf[gl_SubgroupID] = t;
  barrier();
  t = vec4(0.0);
  for (uint s = 0; s < gl_NumSubgroups; ++s) t += sums_buf[s];
  const float n = float(pc.hidden);
  const float a = 1.0 / sqrt(t.x / n + pc.eps);
  const float inv_x = 1.0 / sqrt(max(t.y + 2.0 * a * t.z + a * a * t.w, 0.0) / n + pc.eps);
  const uint i = gl_WorkGroupID.x * gl_WorkGroupSize.x + tid;
  if (i < pc.hidden / 4u) {
    const vec4 v = x4[i] + y4[i] * a * norm4[(pc.post_offset >> 2) + i];
    x4_out[i] = v;
    write_normed(i, 0u, v * inv_x * norm4[(pc.pre_offset >> 2) + i]);
  }
}
#else
void body() {
  const uint t = gl_WorkGroupID.x;
  const uint n4 = pc.hidden >> 2;
  const uint base = t * n4;
  const uint tid = gl_LocalInvocationID.x;
  float ss = 0.0;
  for (uint i = tid; i < n4; i += gl_WorkGroupSize.x) {
    const vec4 v = y4[base + i];
    ss += dot(v, v);
  }
  const float inv_y = 1.0 / sqrt(wg_sum(ss) / float(pc.hidden) + pc.eps);
  float ss2 = 0.0;
  for (uint i = tid; i < n4; i += gl_WorkGroupSize.x) {
    const vec4 v = x4[base + i] + y4[base + i] * inv_y * norm4[(pc.post_offset >> 2) + i];
    x4_out[base + i] = v;
    ss2 += dot(v, v);
  }
  const float inv_x = 1.0 / sqrt(wg_sum(ss2) / float(pc.hidden) + pc.eps);
  for (uint i = tid; i < n4; i += gl_WorkGroupSize.x) {
    write_normed(i, base, x4_out[base + i] * inv_x * norm4[(pc.pre_offset >> 2) + i]);
  }
}
#endif

void main() {
  stage_wait(STAGE_ARGS);
  body();
  stage_signal(STAGE_ARGS);
}
