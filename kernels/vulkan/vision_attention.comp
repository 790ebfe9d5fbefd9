#version 450
// The vision tower's attention: every patch attends to every patch of the image (no mask), one
// head at a time, flash style. A workgroup takes one head and 64 queries, one query an invocation
// (its scaled q and its output in registers); keys and values come through shared memory KT at a
// time, and a running max and sum (online softmax) rescale the output when the max grows, so no
// score matrix is ever held. Any head_dim up to 4 * D4. Grid: (ceil(tokens / 64), heads).
//   out[t][h * hd + d] = sum_j softmax_j(q_t . k_j * scale) v_j[h * hd + d]
// q, k and v are columns of one buffer of rows `in_stride` floats wide: q of head h at h * hd,
// k at k_offset + h * hd, v at v_offset + h * hd (the tower's fused q|k|v projection).
//
// Specialization constants: 0 D4 = ceil(head_dim / 4), 1 KT = keys staged a step.
// Push constants (VisionAttentionPush in vision_tower_gpu.cpp):
//   0 tokens, 1 head_dim, 2 in_stride, 3 k_offset, 4 v_offset, 5 out_stride (uint), 6 scale (float)
layout(local_size_x = 64) in;

layout(constant_id = 0) const uint D4 = 18;
layout(constant_id = 1) const uint KT = 32;

layout(std430, binding = 0) readonly buffer Inputs { float qkv[]; };  // [tokens][in_stride]
layout(std430, binding = 1) writeonly buffer Outputs { float y[]; };  // [tokens][out_stride]

layout(push_constant) uniform Push {
  uint tokens, head_dim, in_stride, k_offset, v_offset, out_stride;
  float scale;
} pc;

const float NEG_BIG = -1.0e30;

shared vec4 k_tile[KT * D4];  // [key][d / 4], zero past head_dim
shared vec4 v_tile[KT * D4];

void main() {
  const uint tid = gl_LocalInvocationID.x, h = gl_WorkGroupID.y;
  const uint t = gl_WorkGroupID.x * 64u + tid;
  const uint hd = pc.head_dim, column = h * hd;
  vec4 q[D4], o[D4];
  for (uint c = 0; c < D4; ++c) {
    o[c] = vec4(0.0);
    for (uint e = 0; e < 4u; ++e) {
      const uint d = 4u * c + e;
      q[c][e] = t < pc.tokens && d < hd ? qkv[t * pc.in_stride + column + d] * pc.scale : 0.0;
    }
  }
  float running_max = NEG_BIG, running_sum = 0.0;

  const uint tile_floats = KT * D4 * 4u;
  for (uint k0 = 0; k0 < pc.tokens; k0 += KT) {
    for (uint idx = tid; idx < tile_floats; idx += 64u) {
      const uint j = idx / (D4 * 4u), d = idx % (D4 * 4u), key = k0 + j;
      const bool inside = key < pc.tokens && d < hd;
      const uint at = key * pc.in_stride + column + d;
      k_tile[j * D4 + d / 4u][d % 4u] = inside ? qkv[at + pc.k_offset] : 0.0;
      v_tile[j * D4 + d / 4u][d % 4u] = inside ? qkv[at + pc.v_offset] : 0.0;
    }
    barrier();
    const uint keys = min(KT, pc.tokens - k0);
    for (uint j = 0; j < keys; ++j) {
      float s0 = 0.0, s1 = 0.0;  // two chains of sums: half the dependent latency
      for (uint c = 0; c + 1u < D4; c += 2u) {
        s0 += dot(q[c], k_tile[j * D4 + c]);
        s1 += dot(q[c + 1u], k_tile[j * D4 + c + 1u]);
      }
      if ((D4 & 1u) != 0u) s0 += dot(q[D4 - 1u], k_tile[j * D4 + D4 - 1u]);
      const float s = s0 + s1;
      if (s > running_max) {  // rare after the first keys: rescale what was summed so far
        const float correction = exp(running_max - s);
        running_sum *= correction;
        for (uint c = 0; c < D4; ++c) o[c] *= correction;
        running_max = s;
      }
      const float p = exp(s - running_max);
      running_sum += p;
      for (uint c = 0; c < D4; ++c) o[c] += p * v_tile[j * D4 + c];
    }
    barrier();
  }
  if (t >= pc.tokens) return;
  const float inv = 1.0 / running_sum;
  for (uint c = 0; c < D4; ++c)
    for (uint e = 0; e < 4u; ++e) {
      const uint d = 4u * c + e;
      if (d < hd) y[t * pc.out_stride + column + d] = o[c][e] * inv;
    }
}
