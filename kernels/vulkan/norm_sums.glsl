// The sums of the add_norm after o and down, gathered by those matrices (one token,
// ModelGpu::wide_norm), so that the add_norm needs no reduction over the whole vector and can be
// spread over many workgroups (add_norm.comp with SLOTS). add_norm.comp computes
//   h = x + rms_norm(y) * w_post,   xn = rms_norm(h) * w_pre;
// with a = 1 / rms(y), ||h||^2 = ||x||^2 + 2a <x, y w_post> + a^2 ||y w_post||^2, so the four sums
// (y.y, x.x, x.(y w_post), (y w_post).(y w_post)) settle both norms. Each workgroup of the matrix
// writes them over its rows into its own slot; the add_norm adds the slots up in a fixed order.
// Included by matvec_staged.comp (NORM_SUMS, with QACT_IN) after its push constants `pc`.
layout(std430, binding = 4) readonly buffer NormResidual { float res[]; };  // x
layout(std430, binding = 5) readonly buffer NormWeights { float norm_w[]; };
layout(std430, binding = 6) writeonly buffer NormSlots { vec4 slots[]; };  // [workgroups of the matrix]

shared vec4 row_sums[GROUPS * ROWS];

// Invocation tid < GROUPS * ROWS found output s for row `row` of this chunk (counted if valid).
void norm_sums_row(uint tid, uint row, float s, bool valid) {
  vec4 c = vec4(0.0);
  if (valid) {
    const uint e = pc.y_offset + row;  // element of the hidden vector
    const float x = res[e], yw = s * norm_w[pc.norm_post + e];
    c = vec4(s * s, x * x, x * yw, yw * yw);
  }
  row_sums[tid] = c;
}

// Then every invocation: the workgroup's sums into its slot, in a fixed order.
void norm_sums_store(uint tid, uint wg_row0) {
  barrier();
  if (tid == 0u) {
    vec4 t = vec4(0.0);
    for (uint i = 0; i < GROUPS * ROWS; ++i) t += row_sums[i];
    slots[(pc.y_offset + wg_row0) / (GROUPS * ROWS)] = t;  // chunks start at whole workgroups
  }
}
