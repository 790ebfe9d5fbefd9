#version 450
// y = W x for the tokens of one decode step of several sequences (Backend::forward_sequences), or
// of a batch of 2 to 4 tokens of one (Recorder::matrix):
// matvec.comp's layout and arithmetic, but each weight block is loaded once for TOKENS tokens
// (accumulators [ROWS][TOKENS]), where matvec.comp loads it again for every token. Tokens beyond
// TOKENS take further passes. Each token's sum runs in matvec.comp's order (same blocks per lane,
// same reductions), so a row equals what matvec.comp of the same WG and TPR gives for it.
// With GLU, rows come in (gate, up) pairs and y is gelu_tanh(gate) * up. With QIN (devices with
// integer dot products) the activations were rounded to int8 once for all rows by quantize_i8.comp,
// as matvec.comp's I8_DOT rounds them (dot_i8.glsl), and each weight block is unpacked to its int8
// bytes once for all tokens, so a token costs only its dot products: rounding and unpacking again
// for every token made a step of 4 cost 3.5 times one token on an H100 (27B Q4_K_M).
#extension GL_GOOGLE_include_directive : require
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint ROWS = 2;    // rows an invocation accumulates (even for GLU)
layout(constant_id = 2) const uint TPR = 64;    // invocations sharing those rows; divides WG
layout(constant_id = 3) const uint TOKENS = 4;  // tokens a pass

#include "common.glsl"
#include "stage_flags.glsl"
#include "weights.glsl"
#ifdef QIN
#include "dot_i8.glsl"
#endif

#ifdef QIN
// quantize_i8.comp's layout (two halves of 16): token t's block b is words 8 (t nb + b) .. + 8,
// its halves' scales at 8 n nb + 2 (t nb + b) and their sum_x at 10 n nb + 2 (t nb + b) (n = n_tokens).
layout(std430, binding = 2) readonly buffer Quantized { uvec4 xq4[]; };
layout(std430, binding = 2) readonly buffer QuantizedMeta { vec2 xmeta2[]; };
QuantizedX quantized_x(uint block, uint blocks) {
  QuantizedX r;
  const uvec4 lo = xq4[2u * block], hi = xq4[2u * block + 1u];
  r.q = uint[8](lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w);
  r.scale = xmeta2[4u * blocks + block];
  r.sum_x = xmeta2[5u * blocks + block];
  return r;
}
#else
layout(std430, binding = 2) readonly buffer Activations { vec4 x4[]; };
#endif
layout(std430, binding = 3) writeonly buffer Outputs { float y[]; };

layout(push_constant) uniform Push {
  uint rows;       // rows of W in this chunk
  uint nb;         // blocks per row (cols / 32)
  uint n_tokens;
  uint x_offset;   // floats; multiple of 4 (QIN: unused, the int8 form is dense)
  uint x_stride;   // floats between tokens; multiple of 4
  uint y_offset;   // floats
  uint y_stride;
  uint groups_x;
  STAGE_PUSH
} pc;

const uint GROUPS = gl_WorkGroupSize.x / TPR;
shared float partial[ROWS * TOKENS][gl_WorkGroupSize.x];  // [row][token] sums of each invocation (or subgroup)

void body() {
  const uint tid = gl_LocalInvocationID.x;
  const uint group = tid / TPR, lane = tid % TPR;
  const uint wg_row0 = flat_group_index(pc.groups_x) * GROUPS * ROWS;
  if (wg_row0 >= pc.rows) return;
  const uint row0 = wg_row0 + group * ROWS;
  const bool whole_subgroups = TPR % gl_SubgroupSize == 0;

  // Rows past the end are read at the last row and never written (matvec.comp).
  uint row_base[ROWS];
  for (uint r = 0; r < ROWS; ++r) row_base[r] = min(row0 + r, pc.rows - 1u) * pc.nb;

  for (uint t0 = 0; t0 < pc.n_tokens; t0 += TOKENS) {
    // Tokens past the end of the last pass read the last token and are never written.
#ifdef QIN
    uint xblock[TOKENS];  // each token's first block in the int8 form
    for (uint t = 0; t < TOKENS; ++t) xblock[t] = min(t0 + t, pc.n_tokens - 1u) * pc.nb;
    const uint blocks = pc.n_tokens * pc.nb;
#else
    uint xb[TOKENS];
    for (uint t = 0; t < TOKENS; ++t) xb[t] = (pc.x_offset + min(t0 + t, pc.n_tokens - 1u) * pc.x_stride) >> 2;
#endif
    float acc[ROWS][TOKENS];
    for (uint r = 0; r < ROWS; ++r)
      for (uint t = 0; t < TOKENS; ++t) acc[r][t] = 0.0;
    Block cur[ROWS];
    if (lane < pc.nb)
      for (uint r = 0; r < ROWS; ++r) cur[r] = load_block(row_base[r] + lane);
    for (uint b = lane; b < pc.nb; b += TPR) {
      Block next[ROWS];
      const uint bn = min(b + TPR, pc.nb - 1u);
      for (uint r = 0; r < ROWS; ++r) next[r] = load_block(row_base[r] + bn);
#ifdef QIN
      BlockI8 u[ROWS];
      for (uint r = 0; r < ROWS; ++r) u[r] = unpack_i8(cur[r]);
      for (uint t = 0; t < TOKENS; ++t) {
        const QuantizedX xq = quantized_x(xblock[t] + b, blocks);
        for (uint r = 0; r < ROWS; ++r) acc[r][t] = block_dot_i8(u[r], xq, acc[r][t]);
      }
#else
      for (uint t = 0; t < TOKENS; ++t) {
        vec4 xv[8];
        for (uint i = 0; i < 8u; ++i) xv[i] = x4[xb[t] + b * 8u + i];
        for (uint r = 0; r < ROWS; ++r) acc[r][t] += block_dot(cur[r], xv);
      }
#endif
      for (uint r = 0; r < ROWS; ++r) cur[r] = next[r];
    }
    for (uint r = 0; r < ROWS; ++r)
      for (uint t = 0; t < TOKENS; ++t) {
        if (whole_subgroups) {
          const float s = subgroupAdd(acc[r][t]);
          if (subgroupElect()) partial[r * TOKENS + t][gl_SubgroupID] = s;
        } else {
          partial[r * TOKENS + t][tid] = acc[r][t];
        }
      }
    barrier();
    const uint parts = whole_subgroups ? TPR / gl_SubgroupSize : TPR;
#ifdef GLU
    for (uint o = tid; o < GROUPS * ROWS / 2u * TOKENS; o += gl_WorkGroupSize.x) {
      const uint t = o % TOKENS, g = o / TOKENS / (ROWS / 2u), pair = o / TOKENS % (ROWS / 2u);
      const uint row = wg_row0 + g * ROWS + 2u * pair;
      if (row + 1u < pc.rows && t0 + t < pc.n_tokens) {
        float gate = 0.0, up = 0.0;
        for (uint i = 0; i < parts; ++i) {
          gate += partial[2u * pair * TOKENS + t][g * parts + i];
          up += partial[(2u * pair + 1u) * TOKENS + t][g * parts + i];
        }
        y[pc.y_offset + (t0 + t) * pc.y_stride + row / 2u] = gelu_tanh(gate) * up;
      }
    }
#else
    for (uint o = tid; o < GROUPS * ROWS * TOKENS; o += gl_WorkGroupSize.x) {
      const uint t = o % TOKENS, g = o / TOKENS / ROWS, r = o / TOKENS % ROWS;
      const uint row = wg_row0 + g * ROWS + r;
      if (row < pc.rows && t0 + t < pc.n_tokens) {
        float s = 0.0;
        for (uint i = 0; i < parts; ++i) s += partial[r * TOKENS + t][g * parts + i];
        y[pc.y_offset + (t0 + t) * pc.y_stride + row] = s;
      }
    }
#endif
    barrier();
  }
}

void main() {
  stage_wait(STAGE_ARGS);
  body();
  stage_signal(STAGE_ARGS);
}
