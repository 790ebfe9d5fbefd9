#version 450
// Attention of batched tokens (prefill), tiled: one workgroup takes a block of QB consecutive
// queries of one head and walks their keys in tiles of WG keys, so each key and value row is read
// once for QB queries (attention.comp, one workgroup a query, reads every row once a query).
// Invocation i scores key i of the tile against all QB queries (queries in shared memory, read as
// broadcasts); then it owns output pairs i and i + WG of every query while the tile's values are
// summed. Online softmax per query, causal, with the sliding window on local layers: the masks
// differ per query, so they are applied per (query, key). Same bindings and push block as
// attention.comp (qk_norm_rope has already written every token's keys and values to the cache).
// Built with SPANS, queries inside soft-token spans also see the rest of their span (attention_spans.glsl):
// each query's key range is then kept per query, and the block walks the union of them.
#extension GL_GOOGLE_include_directive : require
layout(local_size_x_id = 0) in;  // WG: keys a tile, >= head_dim / 4

#include "common.glsl"

#ifndef QB
#define QB 16u                    // queries a workgroup (the build makes 4, 8 and 16)
#endif
const uint MAX_HEAD_DIM = 256;

layout(std430, binding = 0) readonly buffer Qkv { vec4 q4[]; };
#ifdef KV_F16
layout(std430, binding = 1) readonly buffer KeyCache { uvec4 k8[]; };   // 8 fp16 a uvec4
layout(std430, binding = 2) readonly buffer ValueCache { uint v2[]; };  // 2 fp16 a uint
#else
layout(std430, binding = 1) readonly buffer KeyCache { vec4 k8[]; };    // 4 floats a vec4
layout(std430, binding = 2) readonly buffer ValueCache { vec2 v2[]; };
#endif
layout(std430, binding = 3) writeonly buffer Output { vec2 out2[]; };

layout(push_constant) uniform Push {
  uint pos0;
  uint n_heads;
  uint n_kv_heads;
  uint head_dim;
  uint qkv_stride;     // floats a token in Qkv
  uint out_stride;     // floats a token in Output
  uint slots;          // positions held by the cache (a ring on local layers)
  uint window;         // 0: global layer
  float scale;         // query_pre_attn_scalar^-0.5
  float softcap;       // 0: none
  uint n_tokens;       // queries in the batch
#ifdef SPANS
  uint span_count;
  uvec2 spans[8];
#endif
} pc;

shared vec4 q_s[QB][MAX_HEAD_DIM / 4];       // queries, scaled; zero past the batch
shared vec4 p_s[QB][gl_WorkGroupSize.x / 4];  // probabilities of the tile, 4 keys a vec4
shared float part_s[QB][MAX_SUBGROUPS];       // per-subgroup maxima, then sums
shared float m_s[QB], l_s[QB], corr_s[QB];    // running max and sum, this tile's rescale

vec2 load_value(uint row, uint pair) {
#ifdef KV_F16
  return unpackHalf2x16(v2[row * (pc.head_dim / 2u) + pair]);
#else
  return v2[row * (pc.head_dim / 2u) + pair];
#endif
}

// The lowest key position query position p sees.
uint first_key(uint p) { return (pc.window > 0u && p + 1u > pc.window) ? p + 1u - pc.window : 0u; }

#ifdef SPANS
#include "attention_spans.glsl"
#endif

void main() {
  const uint tid = gl_LocalInvocationID.x;
  const uint WG = gl_WorkGroupSize.x;
  const uint D = pc.head_dim, pairs = D / 2u;
  const uint h = gl_WorkGroupID.x % pc.n_heads;
  // The blocks with the most keys (the last) start first: less idle tail.
  const uint blocks = (pc.n_tokens + QB - 1u) / QB;
  const uint t0 = (blocks - 1u - gl_WorkGroupID.x / pc.n_heads) * QB;
  const uint nq = min(QB, pc.n_tokens - t0);  // valid queries of this block
  const uint kv_head = h / (pc.n_heads / pc.n_kv_heads);

  for (uint i = tid; i < QB * (D / 4u); i += WG) {
    const uint q = i / (D / 4u), c = i % (D / 4u);
    q_s[q][c] = q < nq ? q4[((t0 + q) * pc.qkv_stride + h * D) / 4u + c] * pc.scale : vec4(0.0);
  }
  if (tid < QB) {
    m_s[tid] = NEG_BIG;
    l_s[tid] = 0.0;
  }
  barrier();

  vec2 acc0[QB], acc1[QB];  // output pairs tid and tid + WG of each query
  for (uint q = 0; q < QB; ++q) {
    acc0[q] = vec2(0.0);
    acc1[q] = vec2(0.0);
  }
  const uint p_first = pc.pos0 + t0, p_last = pc.pos0 + t0 + nq - 1u;
#ifdef SPANS
  uvec2 range[QB];  // [first key, end) of each query
  uint k_begin = 0xffffffffu, k_end = 0u;
  for (uint q = 0; q < QB; ++q) {
    range[q] = q < nq ? key_range(p_first + q, first_key(p_first + q)) : uvec2(0u);
    if (q < nq) {
      k_begin = min(k_begin, range[q].x);
      k_end = max(k_end, range[q].y);
    }
  }
#else
  const uint k_begin = first_key(p_first), k_end = p_last + 1u;
#endif
  const uint k_row = D / 8u;  // uvec4 (f16) or vec4-pair (f32) loads a key row
  for (uint tile = k_begin; tile < k_end; tile += WG) {
    // Scores of key j against every query, masked per query.
    const uint j = tile + tid;
    float s[QB];
    for (uint q = 0; q < QB; ++q) s[q] = 0.0;
    if (j < k_end) {
      const uint row = (j % pc.slots) * pc.n_kv_heads + kv_head;
      for (uint i = 0; i < k_row; ++i) {
#ifdef KV_F16
        const uvec4 k = k8[row * k_row + i];
        const vec4 lo = vec4(unpackHalf2x16(k.x), unpackHalf2x16(k.y));
        const vec4 hi = vec4(unpackHalf2x16(k.z), unpackHalf2x16(k.w));
#else
        const vec4 lo = k8[row * 2u * k_row + 2u * i], hi = k8[row * 2u * k_row + 2u * i + 1u];
#endif
        for (uint q = 0; q < QB; ++q) s[q] += dot(q_s[q][2u * i], lo) + dot(q_s[q][2u * i + 1u], hi);
      }
    }
    for (uint q = 0; q < QB; ++q) {
#ifdef SPANS
      const bool seen = q < nq && j >= range[q].x && j < range[q].y;
#else
      const uint p = p_first + q;
      const bool seen = q < nq && j <= p && j >= first_key(p);  // j < k_end follows from j <= p
#endif
      s[q] = seen ? (pc.softcap > 0.0 ? pc.softcap * tanh(s[q] / pc.softcap) : s[q]) : NEG_BIG;
      const float m = subgroupMax(s[q]);
      if (subgroupElect()) part_s[q][gl_SubgroupID] = m;
    }
    barrier();
    if (tid < QB) {
      float m = m_s[tid];
      for (uint g = 0; g < gl_NumSubgroups; ++g) m = max(m, part_s[tid][g]);
      corr_s[tid] = exp(m_s[tid] - m);
      m_s[tid] = m;
    }
    barrier();
    for (uint q = 0; q < QB; ++q) {
      // Masked keys get exactly 0, also while a query has seen no key yet (m still NEG_BIG).
      const float p = s[q] > 0.5 * NEG_BIG ? exp(s[q] - m_s[q]) : 0.0;
      p_s[q][tid / 4u][tid % 4u] = p;
      const float sum = subgroupAdd(p);
      if (subgroupElect()) part_s[q][gl_SubgroupID] = sum;
      acc0[q] *= corr_s[q];
      acc1[q] *= corr_s[q];
    }
    barrier();
    if (tid < QB) {
      float sum = 0.0;
      for (uint g = 0; g < gl_NumSubgroups; ++g) sum += part_s[tid][g];
      l_s[tid] = l_s[tid] * corr_s[tid] + sum;
    }
    // Values: four keys' rows loaded, then their products for every query (p_s as vec4 broadcasts).
    const uint count = min(WG, k_end - tile);
    for (uint jj = 0; jj < count; jj += 4u) {
      vec2 v0[4], v1[4];
      for (uint u = 0; u < 4u; ++u) {
        const uint row = ((tile + jj + u) % pc.slots) * pc.n_kv_heads + kv_head;
        const bool in_tile = jj + u < count;  // p_s is 0 there, but the row may not exist
        v0[u] = in_tile && tid < pairs ? load_value(row, tid) : vec2(0.0);
        v1[u] = in_tile && tid + WG < pairs ? load_value(row, tid + WG) : vec2(0.0);
      }
      for (uint q = 0; q < QB; ++q) {
        const vec4 p = p_s[q][jj / 4u];
        acc0[q] += p.x * v0[0] + p.y * v0[1] + p.z * v0[2] + p.w * v0[3];
        acc1[q] += p.x * v1[0] + p.y * v1[1] + p.z * v1[2] + p.w * v1[3];
      }
    }
    barrier();  // p_s, part_s and l_s are rewritten by the next tile
  }

  for (uint q = 0; q < nq; ++q) {
    const uint o = ((t0 + q) * pc.out_stride + h * D) / 2u;
    const float inv = 1.0 / l_s[q];
    if (tid < pairs) out2[o + tid] = acc0[q] * inv;
    if (tid + WG < pairs) out2[o + tid + WG] = acc1[q] * inv;
  }
}
