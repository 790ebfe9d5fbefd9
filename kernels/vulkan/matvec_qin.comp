#version 450
// Decode matvec (one token) whose activations arrive already rounded to int8 by the kernel that
// produced them (matvec_staged.comp with QACT_OUT: the GLU output feeding the down matrix): the
// loop loads 48 bytes of activations a block and does int8 dots, with no rounding and no
// per-workgroup prologue (which cost the staged kernel too much on down's long rows).
// Same layout constants and reductions as matvec.comp.
#extension GL_GOOGLE_include_directive : require
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint ROWS = 2;
layout(constant_id = 2) const uint TPR = 64;

#include "common.glsl"
#include "weights.glsl"
#include "dot_i8.glsl"

layout(std430, binding = 2) readonly buffer Activations { uvec4 xq4[]; };  // 3 a block: lo, hi, scales
layout(std430, binding = 3) writeonly buffer Outputs { float y[]; };

layout(push_constant) uniform Push {
  uint rows, nb, n_tokens, x_offset, x_stride, y_offset, y_stride, groups_x;
} pc;

const uint GROUPS = gl_WorkGroupSize.x / TPR;
shared float partial[ROWS][gl_WorkGroupSize.x];

void main() {
  const uint tid = gl_LocalInvocationID.x;
  const uint group = tid / TPR, lane = tid % TPR;
  const uint wg_row0 = flat_group_index(pc.groups_x) * GROUPS * ROWS;
  if (wg_row0 >= pc.rows) return;
  const uint row0 = wg_row0 + group * ROWS;
  const bool whole_subgroups = TPR >= gl_SubgroupSize;
  uint row_base[ROWS];
  for (uint r = 0; r < ROWS; ++r) row_base[r] = min(row0 + r, pc.rows - 1u) * pc.nb;

  float acc[ROWS];
  for (uint r = 0; r < ROWS; ++r) acc[r] = 0.0;
  Block cur[ROWS];
  if (lane < pc.nb)
    for (uint r = 0; r < ROWS; ++r) cur[r] = load_block(row_base[r] + lane);
  for (uint b = lane; b < pc.nb; b += TPR) {
    Block next[ROWS];
    const uint bn = min(b + TPR, pc.nb - 1u);
    for (uint r = 0; r < ROWS; ++r) next[r] = load_block(row_base[r] + bn);
    const uvec4 lo = xq4[3u * b], hi = xq4[3u * b + 1u];
    const vec4 scale = uintBitsToFloat(xq4[3u * b + 2u]);
#if defined(WTYPE_Q4_0)
    const uint ones = 0x01010101u;
    const ivec4 sums8 = ivec4(sdot4(lo.x, ones) + sdot4(lo.y, ones), sdot4(lo.z, ones) + sdot4(lo.w, ones),
                              sdot4(hi.x, ones) + sdot4(hi.y, ones), sdot4(hi.z, ones) + sdot4(hi.w, ones));
#else
    const ivec4 sums8 = ivec4(0);
#endif
    for (uint r = 0; r < ROWS; ++r) acc[r] += block_dot_i8_x8(cur[r], lo, hi, scale, sums8);
    for (uint r = 0; r < ROWS; ++r) cur[r] = next[r];
  }
  for (uint r = 0; r < ROWS; ++r) {
    if (whole_subgroups) {
      const float s = subgroupAdd(acc[r]);
      if (subgroupElect()) partial[r][gl_SubgroupID] = s;
    } else {
      partial[r][tid] = acc[r];
    }
  }
  barrier();
  const uint parts = whole_subgroups ? TPR / gl_SubgroupSize : TPR;
  if (tid < GROUPS * ROWS) {
    const uint g = tid / ROWS, r = tid % ROWS;
    const uint row = wg_row0 + g * ROWS + r;
    if (row < pc.rows) {
      float s = 0.0;
      for (uint i = 0; i < parts; ++i) s += partial[r][g * parts + i];
      y[pc.y_offset + row] = s;
    }
  }
}
