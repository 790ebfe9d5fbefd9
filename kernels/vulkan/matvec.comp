#version 450
// y = W x for a few tokens (decode). The workgroup's WG invocations form WG / TPR groups; each
// group owns ROWS consecutive rows and its TPR invocations stride over their 32-weight blocks
// (16-byte loads, consecutive invocations on consecutive blocks). An invocation loads its 32
// activations once and uses them for all ROWS rows, so activation traffic (L1) stays well under
// weight traffic (DRAM). Wide rows want many invocations a row (TPR = WG), narrow ones many rows
// a workgroup. fp32 accumulation, subgroup reductions. With GLU, rows come in (gate, up) pairs and
// the output is gelu_tanh(gate) * up, so the MLP's gate, up and activation are one dispatch.
// With I8_DOT (Q8_0, Q4_0), activations are rounded to int8 (a scale for each 16) and products
// are int8 dot products (dot_i8.glsl).
#extension GL_GOOGLE_include_directive : require
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint ROWS = 2;  // rows an invocation accumulates (even for GLU)
layout(constant_id = 2) const uint TPR = 64;  // invocations sharing those rows; divides WG

#include "common.glsl"
#include "stage_flags.glsl"
#include "weights.glsl"
#ifdef I8_DOT
#include "dot_i8.glsl"
#endif

layout(std430, binding = 2) readonly buffer Activations { vec4 x4[]; };
layout(std430, binding = 3) writeonly buffer Outputs { float y[]; };

layout(push_constant) uniform Push {
  uint rows;       // rows of W in this chunk
  uint nb;         // blocks per row (cols / 32)
  uint n_tokens;
  uint x_offset;   // floats; multiple of 4
  uint x_stride;   // floats between tokens; multiple of 4
  uint y_offset;   // floats
  uint y_stride;
  uint groups_x;
  STAGE_PUSH
} pc;

const uint GROUPS = gl_WorkGroupSize.x / TPR;
shared float partial[ROWS][gl_WorkGroupSize.x];  // per-invocation (or per-subgroup) sums

void body() {
  const uint tid = gl_LocalInvocationID.x;
  const uint group = tid / TPR, lane = tid % TPR;
  const uint wg_row0 = flat_group_index(pc.groups_x) * GROUPS * ROWS;
  if (wg_row0 >= pc.rows) return;
  const uint row0 = wg_row0 + group * ROWS;
  const bool whole_subgroups = TPR % gl_SubgroupSize == 0;  // row groups of whole subgroups

  // Rows past the end (a partial last group) are read at the last row and never written: the
  // loop has no per-row branches, and all of an invocation's loads can be in flight together.
  uint row_base[ROWS];
  for (uint r = 0; r < ROWS; ++r) row_base[r] = min(row0 + r, pc.rows - 1u) * pc.nb;

  for (uint t = 0; t < pc.n_tokens; ++t) {
    float acc[ROWS];
    for (uint r = 0; r < ROWS; ++r) acc[r] = 0.0;
    const uint xb = (pc.x_offset + t * pc.x_stride) >> 2;
    Block cur[ROWS];
    if (lane < pc.nb)
      for (uint r = 0; r < ROWS; ++r) cur[r] = load_block(row_base[r] + lane);
    for (uint b = lane; b < pc.nb; b += TPR) {
      // Next iteration's weights first: their latency hides behind this iteration's math.
      Block next[ROWS];
      const uint bn = min(b + TPR, pc.nb - 1u);
      for (uint r = 0; r < ROWS; ++r) next[r] = load_block(row_base[r] + bn);
      vec4 xv[8];
      for (uint i = 0; i < 8u; ++i) xv[i] = x4[xb + b * 8u + i];
#ifdef I8_DOT
      const QuantizedX xq = quantize_x(xv);  // once for all ROWS rows
      for (uint r = 0; r < ROWS; ++r) acc[r] = block_dot_i8(cur[r], xq, acc[r]);
#else
      for (uint r = 0; r < ROWS; ++r) acc[r] += block_dot(cur[r], xv);
#endif
      for (uint r = 0; r < ROWS; ++r) cur[r] = next[r];
    }
    // Reduce each group's TPR partial sums: through subgroups when a group spans whole ones.
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
      if (row + 1u < pc.rows) {
        float gate = 0.0, up = 0.0;
        for (uint i = 0; i < parts; ++i) {
          gate += partial[2u * pair][g * parts + i];
          up += partial[2u * pair + 1u][g * parts + i];
        }
        y[pc.y_offset + t * pc.y_stride + row / 2u] = gelu_tanh(gate) * up;
      }
    }
#else
    if (tid < GROUPS * ROWS) {
      const uint g = tid / ROWS, r = tid % ROWS;
      const uint row = wg_row0 + g * ROWS + r;
      if (row < pc.rows) {
        float s = 0.0;
        for (uint i = 0; i < parts; ++i) s += partial[r][g * parts + i];
        y[pc.y_offset + t * pc.y_stride + row] = s;
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
