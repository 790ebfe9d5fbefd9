#version 450
// Decode matvec (one token) with int8 dot products (dot_i8.glsl) and activations already in int8:
//  - staged (default): each workgroup rounds the fp32 activations to int8 ONCE, into shared
//    memory, instead of once per invocation and iteration as matvec.comp does with I8_DOT. Its
//    first weight loads are issued before, so their latency hides behind the rounding.
//  - QACT_IN: the activations arrive rounded by the kernel that produced them (add_norm, the
//    decode attention, gate_up with QACT_OUT): per 32 values 8 words of int8 and 4 fp32 scales,
//    one for each 8 (48 bytes); the loop loads them with the weights, and there is no prologue.
// With QACT_OUT (GLU only), the output is written in that int8 form for the down matrix. A
// workgroup's outputs must come in whole groups of 8 (GROUPS * ROWS / 2, a multiple of 8), and
// subgroups must hold at least 8 invocations. With NORM_SUMS (o and down), each workgroup also
// adds up, over its rows, the sums the add_norm after the matrix needs (norm_sums.glsl). With
// EARLY_PART (down), the first blocks of the row are taken as soon as the gate_up workgroups that
// wrote them are done, the rest after all of gate_up (Push: part_groups, part_blocks).
// Same layout constants as matvec.comp; MAX_BLOCKS (>= cols / 32) sizes the staging memory.
#extension GL_GOOGLE_include_directive : require
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint ROWS = 2;
layout(constant_id = 2) const uint TPR = 64;
layout(constant_id = 3) const uint MAX_BLOCKS = 672;

#include "common.glsl"
#include "stage_flags.glsl"
#include "weights.glsl"
#include "dot_i8.glsl"

#ifdef QACT_IN
layout(std430, binding = 2) readonly buffer Activations { uvec4 xq4[]; };  // 3 a block: lo, hi, scales
#else
layout(std430, binding = 2) readonly buffer Activations { vec4 x4[]; };
#endif
#ifdef QACT_OUT
#extension GL_KHR_shader_subgroup_shuffle : require
layout(std430, binding = 3) writeonly buffer Outputs { uint yq[]; };
#else
layout(std430, binding = 3) writeonly buffer Outputs { float y[]; };
#endif

layout(push_constant) uniform Push {
  uint rows, nb, n_tokens, x_offset, x_stride, y_offset, y_stride, groups_x;
  uint norm_post;  // NORM_SUMS (norm_sums.glsl): offset of w_post (floats)
  // Stage flags, down reading gate_up's output while gate_up's last workgroups still run:
  // EARLY_PART (down): the blocks below part_blocks wait only for gate_up's first part_groups
  // workgroups, which wrote them; GLU with QACT_OUT (gate_up): the first part_groups workgroups
  // count themselves in that part (stage_flags.glsl, stage_signal_part).
  uint part_groups, part_blocks;
  STAGE_PUSH
} pc;

const uint GROUPS = gl_WorkGroupSize.x / TPR;
#ifndef QACT_IN
shared uvec4 xq_s[MAX_BLOCKS * 2];  // a block's 32 int8 activations
shared vec4 xmeta_s[MAX_BLOCKS];    // each half's scale, then its sum_x (dot_i8.glsl)
#endif
shared float partial[ROWS][gl_WorkGroupSize.x];
#ifdef NORM_SUMS
#include "norm_sums.glsl"
#endif

void body() {
  const uint tid = gl_LocalInvocationID.x;
  const uint group = tid / TPR, lane = tid % TPR;
  const uint wg_row0 = flat_group_index(pc.groups_x) * GROUPS * ROWS;
  if (wg_row0 >= pc.rows) return;  // reads nothing: counts itself done without waiting
  const uint row0 = wg_row0 + group * ROWS;
  const bool whole_subgroups = TPR % gl_SubgroupSize == 0;  // row groups of whole subgroups
  uint row_base[ROWS];
  for (uint r = 0; r < ROWS; ++r) row_base[r] = min(row0 + r, pc.rows - 1u) * pc.nb;

  Block cur[ROWS];
  if (lane < pc.nb)
    for (uint r = 0; r < ROWS; ++r) cur[r] = load_block(row_base[r] + lane);
#ifdef EARLY_PART
  stage_wait_part(pc.stage_counters, pc.stage, pc.part_groups);
#else
  stage_wait(STAGE_ARGS);  // the first weights are on their way while the input is awaited
#endif

#ifndef QACT_IN
  const uint xb = pc.x_offset >> 2;
  for (uint b = tid; b < pc.nb; b += gl_WorkGroupSize.x) {
    vec4 xv[8];
    for (uint i = 0; i < 8u; ++i) xv[i] = x4[xb + b * 8u + i];
    const QuantizedX q = quantize_x(xv);
    xq_s[2u * b] = uvec4(q.q[0], q.q[1], q.q[2], q.q[3]);
    xq_s[2u * b + 1u] = uvec4(q.q[4], q.q[5], q.q[6], q.q[7]);
    xmeta_s[b] = vec4(q.scale, q.sum_x);
  }
  barrier();
#endif

  float acc[ROWS];
  for (uint r = 0; r < ROWS; ++r) acc[r] = 0.0;
#ifdef EARLY_PART
  // The part's blocks, then the wait for all of gate_up (the whole workgroup), then the rest.
  uint b = lane;
  for (uint part = 0u; part < 2u; ++part) {
    if (part == 1u) stage_wait(STAGE_ARGS);
    const uint end = part == 0u ? pc.part_blocks : pc.nb;
  for (; b < end; b += TPR) {
#else
  for (uint b = lane; b < pc.nb; b += TPR) {
#endif
    Block next[ROWS];
    const uint bn = min(b + TPR, pc.nb - 1u);
    for (uint r = 0; r < ROWS; ++r) next[r] = load_block(row_base[r] + bn);
#ifdef QACT_IN
    const uvec4 lo = xq4[3u * b], hi = xq4[3u * b + 1u];
    const vec4 scale = uintBitsToFloat(xq4[3u * b + 2u]);
#if defined(WTYPE_Q4_0) || defined(WTYPE_KQUANT)
    const uint ones = 0x01010101u;
    const ivec4 sums8 = ivec4(sdot4(lo.x, ones) + sdot4(lo.y, ones), sdot4(lo.z, ones) + sdot4(lo.w, ones),
                              sdot4(hi.x, ones) + sdot4(hi.y, ones), sdot4(hi.z, ones) + sdot4(hi.w, ones));
#else
    const ivec4 sums8 = ivec4(0);
#endif
    const X8 x8 = block_x8(scale, sums8);
    for (uint r = 0; r < ROWS; ++r) acc[r] += block_dot_i8_x8(cur[r], lo, hi, x8);
#else
    const uvec4 lo = xq_s[2u * b], hi = xq_s[2u * b + 1u];
    const vec4 meta = xmeta_s[b];
    QuantizedX q;
    q.q = uint[8](lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w);
    q.scale = meta.xy;
    q.sum_x = meta.zw;
    for (uint r = 0; r < ROWS; ++r) acc[r] = block_dot_i8(cur[r], q, acc[r]);
#endif
    for (uint r = 0; r < ROWS; ++r) cur[r] = next[r];
  }
#ifdef EARLY_PART
  }
#endif
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
    float s = 0.0;
    if (row < pc.rows) {
      for (uint i = 0; i < parts; ++i) s += partial[r][g * parts + i];
      y[pc.y_offset + row] = s;
    }
#ifdef NORM_SUMS
    norm_sums_row(tid, row, s, row < pc.rows);
#endif
  }
#ifdef NORM_SUMS
  norm_sums_store(tid, wg_row0);
#endif
#endif
}

void main() {
  body();
#if defined(GLU) && defined(QACT_OUT)
  stage_signal_part(STAGE_ARGS, flat_group_index(pc.groups_x) < pc.part_groups);
#else
  stage_signal(STAGE_ARGS);
#endif
}
