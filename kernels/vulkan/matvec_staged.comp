#version 450
// Decode matvec with int8 dot products (dot_i8.glsl) whose activations are rounded to int8 ONCE
// per workgroup, into shared memory, instead of once per invocation and iteration as matvec.comp
// does with I8_DOT: the loop is left with weight loads, three shared loads a block and the dots.
// One token. Same layout constants as matvec.comp; MAX_BLOCKS (>= cols / 32) sizes shared memory.
// The first weight loads are issued before the activations are staged, so their latency hides.
// With QACT_OUT (GLU only), the output is written already rounded to int8 for the down matrix
// (matvec_qin.comp): per 32 outputs, 8 words of int8 and 4 fp32 scales (one for each 8), 48 bytes.
// A workgroup's outputs must come in whole groups of 8 (GROUPS * ROWS / 2, a multiple of 8), and
// subgroups must hold at least 8 invocations.
#extension GL_GOOGLE_include_directive : require
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint ROWS = 2;
layout(constant_id = 2) const uint TPR = 64;
layout(constant_id = 3) const uint MAX_BLOCKS = 672;

#include "common.glsl"
#include "weights.glsl"
#include "dot_i8.glsl"

layout(std430, binding = 2) readonly buffer Activations { vec4 x4[]; };
#ifdef QACT_OUT
#extension GL_KHR_shader_subgroup_shuffle : require
layout(std430, binding = 3) writeonly buffer Outputs { uint yq[]; };
#else
layout(std430, binding = 3) writeonly buffer Outputs { float y[]; };
#endif

layout(push_constant) uniform Push {
  uint rows, nb, n_tokens, x_offset, x_stride, y_offset, y_stride, groups_x;
} pc;

const uint GROUPS = gl_WorkGroupSize.x / TPR;
shared uvec4 xq_s[MAX_BLOCKS * 2];  // a block's 32 int8 activations
shared vec4 xmeta_s[MAX_BLOCKS];    // scale of each half, and (as bits) the sums of its q
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

  Block cur[ROWS];
  if (lane < pc.nb)
    for (uint r = 0; r < ROWS; ++r) cur[r] = load_block(row_base[r] + lane);

  const uint xb = pc.x_offset >> 2;
  for (uint b = tid; b < pc.nb; b += gl_WorkGroupSize.x) {
    vec4 xv[8];
    for (uint i = 0; i < 8u; ++i) xv[i] = x4[xb + b * 8u + i];
    const QuantizedX q = quantize_x(xv);
    xq_s[2u * b] = uvec4(q.q[0], q.q[1], q.q[2], q.q[3]);
    xq_s[2u * b + 1u] = uvec4(q.q[4], q.q[5], q.q[6], q.q[7]);
    xmeta_s[b] = vec4(q.scale, intBitsToFloat(q.sum));
  }
  barrier();

  float acc[ROWS];
  for (uint r = 0; r < ROWS; ++r) acc[r] = 0.0;
  for (uint b = lane; b < pc.nb; b += TPR) {
    Block next[ROWS];
    const uint bn = min(b + TPR, pc.nb - 1u);
    for (uint r = 0; r < ROWS; ++r) next[r] = load_block(row_base[r] + bn);
    const uvec4 lo = xq_s[2u * b], hi = xq_s[2u * b + 1u];
    const vec4 meta = xmeta_s[b];
    QuantizedX q;
    q.q = uint[8](lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w);
    q.scale = meta.xy;
    q.sum = floatBitsToInt(meta.zw);
    for (uint r = 0; r < ROWS; ++r) acc[r] += block_dot_i8(cur[r], q);
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
#ifdef GLU
  if (tid < GROUPS * ROWS / 2u) {
    const uint g = tid / (ROWS / 2u), pair = tid % (ROWS / 2u);
    const uint row = wg_row0 + g * ROWS + 2u * pair;
    float value = 0.0;  // QACT_OUT: rows past the end count as 0
    if (row + 1u < pc.rows) {
      float gate = 0.0, up = 0.0;
      for (uint i = 0; i < parts; ++i) {
        gate += partial[2u * pair][g * parts + i];
        up += partial[2u * pair + 1u][g * parts + i];
      }
#ifdef QACT_OUT
      value = gelu_tanh(gate) * up;
#else
      y[pc.y_offset + row / 2u] = gelu_tanh(gate) * up;
#endif
    }
#ifdef QACT_OUT
    // Each 8 consecutive outputs (8 lanes of one subgroup): the largest |value| sets their scale,
    // rounding as quantize_x does, bytes gathered into words by shuffles.
    float amax = abs(value);
    amax = max(amax, subgroupShuffleXor(amax, 1u));
    amax = max(amax, subgroupShuffleXor(amax, 2u));
    amax = max(amax, subgroupShuffleXor(amax, 4u));
    const float inv = amax > 0.0 ? 127.0 / amax : 0.0;
    uint word = (floatBitsToUint(value * inv + ROUND_MAGIC) & 255u) << (8u * (tid & 3u));
    word |= subgroupShuffleXor(word, 1u);
    word |= subgroupShuffleXor(word, 2u);
    // o and tid agree mod 8 (a workgroup's and a chunk's outputs start at multiples of 8).
    const uint o = pc.y_offset + row / 2u, block = o / 32u, k = (o % 32u) / 8u;
    if (row + 1u < pc.rows && (tid & 3u) == 0u) yq[block * 12u + 2u * k + ((tid >> 2) & 1u)] = word;
    if (row + 1u < pc.rows && (tid & 7u) == 0u) yq[block * 12u + 8u + k] = floatBitsToUint(amax / 127.0);
#endif
  }
#else
  if (tid < GROUPS * ROWS) {
    const uint g = tid / ROWS, r = tid % ROWS;
    const uint row = wg_row0 + g * ROWS + r;
    if (row < pc.rows) {
      float s = 0.0;
      for (uint i = 0; i < parts; ++i) s += partial[r][g * parts + i];
      y[pc.y_offset + row] = s;
    }
  }
#endif
}
