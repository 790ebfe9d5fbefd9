#version 450
// Attention of one query head of one token over its keys (causal; a sliding window on local
// layers), with an online softmax over tiles of WG keys: each invocation scores one key of the
// tile, then owns a pair of output dimensions while the tile's values are summed. Long key ranges
// are split across workgroups (split > 1): each writes (max, sum, unnormalized output) for
// attention_combine. GQA: query head h reads kv head h / (heads / kv_heads).
#extension GL_GOOGLE_include_directive : require
layout(local_size_x_id = 0) in;

#include "common.glsl"

layout(std430, binding = 0) readonly buffer Qkv { vec4 q4[]; };
#ifdef KV_F16
layout(std430, binding = 1) readonly buffer KeyCache { uvec4 k8[]; };   // 8 fp16 a uvec4
layout(std430, binding = 2) readonly buffer ValueCache { uint v2[]; };  // 2 fp16 a uint
#else
layout(std430, binding = 1) readonly buffer KeyCache { vec4 k8[]; };    // 4 floats a vec4
layout(std430, binding = 2) readonly buffer ValueCache { vec2 v2[]; };
#endif
layout(std430, binding = 3) writeonly buffer Output { vec2 out2[]; };
layout(std430, binding = 4) writeonly buffer Partials { float partials[]; };

layout(push_constant) uniform Push {
  uint pos0;
  uint n_heads;
  uint n_kv_heads;
  uint head_dim;
  uint qkv_stride;     // floats a token in Qkv
  uint out_stride;     // floats a token in Output
  uint slots;          // positions held by the cache (a ring on local layers)
  uint window;         // 0: global layer
  uint splits;         // workgroups a query head's keys are split over
  uint keys_per_split;
  float scale;         // query_pre_attn_scalar^-0.5
  float softcap;       // 0: none
} pc;

const uint MAX_HEAD_DIM = 256;
shared vec4 q_s[MAX_HEAD_DIM / 4];
shared float p_s[gl_WorkGroupSize.x];

// q (in shared memory, scaled) times 8 elements i*8 .. i*8+7 of a cached key row.
float key_dot(uint row, uint i) {
  const uint D8 = pc.head_dim / 8u;
#ifdef KV_F16
  const uvec4 k = k8[row * D8 + i];
  return dot(q_s[2u * i], vec4(unpackHalf2x16(k.x), unpackHalf2x16(k.y))) +
         dot(q_s[2u * i + 1u], vec4(unpackHalf2x16(k.z), unpackHalf2x16(k.w)));
#else
  return dot(q_s[2u * i], k8[row * 2u * D8 + 2u * i]) + dot(q_s[2u * i + 1u], k8[row * 2u * D8 + 2u * i + 1u]);
#endif
}

// Value elements (2 pair, 2 pair + 1) of a cached row.
vec2 load_value(uint row, uint pair) {
#ifdef KV_F16
  return unpackHalf2x16(v2[row * (pc.head_dim / 2u) + pair]);
#else
  return v2[row * (pc.head_dim / 2u) + pair];
#endif
}

void main() {
  const uint tid = gl_LocalInvocationID.x;
  const uint WG = gl_WorkGroupSize.x;
  const uint split = gl_WorkGroupID.x % pc.splits;
  const uint item = gl_WorkGroupID.x / pc.splits;  // token * heads + head
  const uint h = item % pc.n_heads;
  const uint t = item / pc.n_heads;
  const uint kv_head = h / (pc.n_heads / pc.n_kv_heads);
  const uint D = pc.head_dim;
  const uint pos = pc.pos0 + t;

  const uint lo = (pc.window > 0u && pos + 1u > pc.window) ? pos + 1u - pc.window : 0u;
  const uint k_begin = lo + split * pc.keys_per_split;
  const uint k_end = min(pos + 1u, k_begin + pc.keys_per_split);

  const uint q_base = (t * pc.qkv_stride + h * D) >> 2;
  for (uint i = tid; i < D / 4u; i += WG) q_s[i] = q4[q_base + i] * pc.scale;
  barrier();

  float m = NEG_BIG, l = 0.0;
  vec2 acc0 = vec2(0.0), acc1 = vec2(0.0);  // output pairs tid and tid + WG
  const uint pairs = D / 2u;
  const uint k_row = D / 8u;  // uvec4 (f16) or vec4-pair (f32) loads a key row
  for (uint tile = k_begin; tile < k_end; tile += WG) {
    const uint j = tile + tid;
    float s = NEG_BIG;
    if (j < k_end) {
      const uint row = (j % pc.slots) * pc.n_kv_heads + kv_head;
      // Two independent accumulators: the loads of one overlap the math of the other.
      float d0 = 0.0, d1 = 0.0;
      for (uint i = 0; i < k_row; i += 2u) {
        d0 += key_dot(row, i);
        if (i + 1u < k_row) d1 += key_dot(row, i + 1u);
      }
      s = d0 + d1;
      if (pc.softcap > 0.0) s = pc.softcap * tanh(s / pc.softcap);
    }
    const float m_new = max(m, wg_max(s));
    const float correction = exp(m - m_new);
    const float p = j < k_end ? exp(s - m_new) : 0.0;
    p_s[tid] = p;
    l = l * correction + wg_sum(p);  // its barriers also publish p_s
    m = m_new;
    acc0 *= correction;
    acc1 *= correction;
    // Values: eight keys' loads in flight before their products (the ring slot advances by one).
    const uint count = min(WG, k_end - tile);
    uint slot = tile % pc.slots;
    uint jj = 0;
    for (; jj + 8u <= count; jj += 8u) {
      vec2 v0[8], v1[8];
      for (uint u = 0; u < 8u; ++u) {
        const uint su = slot + u >= pc.slots ? slot + u - pc.slots : slot + u;
        const uint row = su * pc.n_kv_heads + kv_head;
        v0[u] = tid < pairs ? load_value(row, tid) : vec2(0.0);
        v1[u] = tid + WG < pairs ? load_value(row, tid + WG) : vec2(0.0);
      }
      for (uint u = 0; u < 8u; ++u) {
        acc0 += p_s[jj + u] * v0[u];
        acc1 += p_s[jj + u] * v1[u];
      }
      slot = slot + 8u >= pc.slots ? slot + 8u - pc.slots : slot + 8u;
    }
    for (; jj < count; ++jj) {
      const uint row = slot * pc.n_kv_heads + kv_head;
      if (tid < pairs) acc0 += p_s[jj] * load_value(row, tid);
      if (tid + WG < pairs) acc1 += p_s[jj] * load_value(row, tid + WG);
      slot = slot + 1u == pc.slots ? 0u : slot + 1u;
    }
    barrier();  // p_s is rewritten by the next tile
  }

  if (pc.splits == 1u) {
    const uint o = (t * pc.out_stride + h * D) >> 1;
    if (tid < pairs) out2[o + tid] = acc0 / l;
    if (tid + WG < pairs) out2[o + tid + WG] = acc1 / l;
  } else {
    const uint o = gl_WorkGroupID.x * (D + 2u);  // [(token, head, split)][max, sum, out[D]]
    if (tid == 0u) {
      partials[o] = m;
      partials[o + 1u] = l;
    }
    if (tid < pairs) {
      partials[o + 2u + 2u * tid] = acc0.x;
      partials[o + 3u + 2u * tid] = acc0.y;
    }
    if (tid + WG < pairs) {
      partials[o + 2u + 2u * (tid + WG)] = acc1.x;
      partials[o + 3u + 2u * (tid + WG)] = acc1.y;
    }
  }
}
