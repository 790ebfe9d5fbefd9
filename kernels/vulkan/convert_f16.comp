#version 450
// A batch's activations converted to fp16 once per matrix input, for the tensor-core tiles with
// HALF_X (matmul_coop.comp): each row-tile workgroup then reads 2 bytes an activation instead of
// 4 and converts nothing. Values past fp16's range saturate. An invocation a 32-element block.
// Layout of xh for n tokens of nb blocks: dense, element k of token t at t * 32 nb + k (fp16
// pairs, a uvec2 for each 4 elements).
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 64) in;

layout(std430, binding = 0) readonly buffer Activations { vec4 x4[]; };
layout(std430, binding = 1) writeonly buffer Half { uvec2 xh[]; };

layout(push_constant) uniform Push {
  uint n_tokens;
  uint nb;        // blocks a token
  uint x_offset;  // floats, multiple of 4
  uint x_stride;  // floats between tokens, multiple of 4
} pc;

const float F16_MAX = 65504.0;

void main() {
  const uint b = gl_GlobalInvocationID.x, t = gl_WorkGroupID.y;
  if (b >= pc.nb || t >= pc.n_tokens) return;
  const uint base = ((pc.x_offset + t * pc.x_stride) >> 2) + b * 8u, dst = (t * pc.nb + b) * 8u;
  for (uint i = 0; i < 8u; ++i) {
    const vec4 v = clamp(x4[base + i], -F16_MAX, F16_MAX);
    xh[dst + i] = uvec2(packHalf2x16(v.xy), packHalf2x16(v.zw));
  }
}
