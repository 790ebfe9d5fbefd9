#version 450
// A batch's activations rounded to int8 once per matrix input, for the int8 tiles (matmul_i8.comp):
// each half of a 32-element block (16 elements) gets its own fp32 scale, max|x| / 127, and its
// elements round(x / scale), as the one-token int8 kernels round (dot_i8.glsl): one scale a block
// put the tiny fixtures' Q4_0 logits past their bound, an outlier costing its whole block. An
// invocation a block: it reads the block's 32 floats and writes its 8 words and 2 scales.
// Layout of xq for n tokens of nb blocks: words [0, 8 n nb) the int8 (4 a word, block (t, b) at
// 8 (t nb + b)), then 2 n nb scales (block (t, b)'s halves at 8 n nb + 2 (t nb + b) + 0, 1), then
// 2 n nb fp32 sums of the halves' activations as rounded, sum(q) * scale (at 10 n nb + 2 (t nb + b)
// + 0, 1), which the K-quants' mins and Q4_0's + 8 take (matvec_items.comp with QIN, dot_i8.glsl's
// sum_x; matmul_i8.comp sums its own).
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 64) in;

#include "common.glsl"
#include "quantize_i8.glsl"

layout(std430, binding = 0) readonly buffer Activations { vec4 x4[]; };
layout(std430, binding = 1) writeonly buffer Quantized { uint xq[]; };

layout(push_constant) uniform Push {
  uint n_tokens;
  uint nb;        // blocks a token
  uint x_offset;  // floats, multiple of 4
  uint x_stride;  // floats between tokens, multiple of 4
} pc;

void main() {
  const uint b = gl_GlobalInvocationID.x, t = gl_WorkGroupID.y;
  if (b >= pc.nb || t >= pc.n_tokens) return;
  const uint base = ((pc.x_offset + t * pc.x_stride) >> 2) + b * 8u;
  const uint block = t * pc.nb + b;
  for (uint g = 0; g < GROUPS; ++g) {
    vec4 v[GROUP_WORDS];
    vec4 m = vec4(0.0);
    for (uint i = 0; i < GROUP_WORDS; ++i) {
      v[i] = x4[base + GROUP_WORDS * g + i];
      m = max(m, abs(v[i]));
    }
    const float amax = max(max(m.x, m.y), max(m.z, m.w));
    const float inv = amax > 0.0 ? 127.0 / amax : 0.0;
    int sum = 0;
    for (uint i = 0; i < GROUP_WORDS; ++i) {
      const uvec4 q = floatBitsToUint(v[i] * inv + ROUND_MAGIC) & 255u;
      xq[block * 8u + GROUP_WORDS * g + i] = q.x | (q.y << 8) | (q.z << 16) | (q.w << 24);
      const ivec4 signed_q = ivec4(q << 24) >> 24;
      sum += signed_q.x + signed_q.y + signed_q.z + signed_q.w;
    }
    const uint blocks = pc.n_tokens * pc.nb;
    const float scale = amax / 127.0;
    xq[blocks * 8u + GROUPS * block + g] = floatBitsToUint(scale);
    xq[blocks * (8u + GROUPS) + GROUPS * block + g] = floatBitsToUint(float(sum) * scale);
  }
}
