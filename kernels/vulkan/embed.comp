#version 450
// x = embed[token] * sqrt(hidden), fused with the first layer's input RMSNorm: xn = norm(x) * w.
// One workgroup a token. The embedding may be split into row chunks (maxStorageBufferRange):
// the dispatch of each chunk handles only the tokens whose rows it holds.
#extension GL_GOOGLE_include_directive : require
layout(local_size_x_id = 0) in;

#include "common.glsl"
#include "stage_flags.glsl"
#include "weights.glsl"

layout(std430, binding = 2) readonly buffer Tokens { int tokens[]; };
layout(std430, binding = 3) buffer Residual { vec4 x4[]; };
layout(std430, binding = 4) writeonly buffer Normed { vec4 xn4[]; };
layout(std430, binding = 5) readonly buffer Norms { vec4 norm4[]; };

layout(push_constant) uniform Push {
  uint n_tokens;
  uint hidden;
  uint nb;           // blocks per row
  uint row_begin;    // first embedding row of this chunk
  uint row_count;
  uint norm_offset;  // floats into Norms; multiple of 4
  float scale;       // sqrt(hidden)
  float eps;
  STAGE_PUSH
} pc;

void body() {
  const uint t = gl_WorkGroupID.x;
  const int token = tokens[t];
  if (token < int(pc.row_begin) || token >= int(pc.row_begin + pc.row_count)) return;
  const uint row = uint(token) - pc.row_begin;
  const uint xb = (t * pc.hidden) >> 2;
  float ss = 0.0;
  for (uint q = gl_LocalInvocationID.x; q < pc.nb * 4u; q += gl_WorkGroupSize.x) {
    const uint b = q >> 2, w = q & 3u;
    const uint gb = row * pc.nb + b;
    vec4 lo, hi;
    dequant_quarter(gb, w, lo, hi);
    lo = lo * pc.scale;
    hi = hi * pc.scale;
    x4[xb + b * 8u + quarter_first(w)] = lo;
    x4[xb + b * 8u + quarter_second(w)] = hi;
    ss += dot(lo, lo) + dot(hi, hi);
  }
  const float inv = 1.0 / sqrt(wg_sum(ss) / float(pc.hidden) + pc.eps);
  const uint nbase = pc.norm_offset >> 2;
  for (uint q = gl_LocalInvocationID.x; q < pc.nb * 4u; q += gl_WorkGroupSize.x) {
    const uint b = q >> 2, w = q & 3u;
    const uint i0 = b * 8u + quarter_first(w), i1 = b * 8u + quarter_second(w);
    xn4[xb + i0] = x4[xb + i0] * inv * norm4[nbase + i0];
    xn4[xb + i1] = x4[xb + i1] * inv * norm4[nbase + i1];
  }
}

void main() {
  stage_wait(STAGE_ARGS);
  body();
  stage_signal(STAGE_ARGS);
}
