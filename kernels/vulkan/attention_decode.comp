#version 450
// A layer's whole attention for one token (decode) in one dispatch, from the raw q|k|v row to the
// output: workgroup (head h, split s) takes query head h over split s of its keys.
//  - Every workgroup RMS-normalises (q_norm) and ropes its own query in shared memory.
//  - The split holding the newest position (the last) also builds that position's key (k_norm +
//    RoPE) and value, scores them from shared memory and writes them to the cache slot
//    position % slots. No other workgroup of the dispatch reads that slot, so the write needs no
//    ordering; under GQA only the first query head of a kv head writes it.
//  - With several splits, each writes its (max, sum, out[D]) partial and bumps the head's counter;
//    the last to arrive merges the partials, writes the output and sets the counter back to zero
//    for the next dispatch (counters start zeroed at load).
// With QACT_OUT the output is written rounded to int8 for the o matrix (matvec_qin_*, matvec_staged.comp): per 32
// values 8 words of int8 and 4 fp32 scales, one for each 8 (the 4 lanes holding them share it).
// With ITEMS, one of several sequences' tokens of a decode step (Backend::forward_sequences): its
// q|k|v row, output row, partials and counters start at the push constants' bases, so the items'
// dispatches (each on its own sequence's cache) run side by side without a barrier between them.
#extension GL_GOOGLE_include_directive : require
layout(local_size_x_id = 0) in;

#include "common.glsl"
#include "stage_flags.glsl"

layout(std430, binding = 0) readonly buffer Qkv { float qkv[]; };  // [heads | kv_heads | kv_heads][head_dim]
#ifdef QACT_OUT
#extension GL_KHR_shader_subgroup_shuffle : require
layout(std430, binding = 3) writeonly buffer Output { uint outq[]; };  // [heads * head_dim / 32][12]
#else
layout(std430, binding = 3) writeonly buffer Output { vec2 out2[]; };  // [heads][head_dim]
#endif
// [head][split][max, sum, out[head_dim]]: read back by another workgroup of the same dispatch.
layout(std430, binding = 4) coherent buffer Partials { float partials[]; };
layout(std430, binding = 5) coherent buffer Arrivals { uint arrived[]; };  // [head]
layout(std430, binding = 6) readonly buffer Norms { float norms[]; };
layout(std430, binding = 7) readonly buffer Rope { vec2 rope_cs[]; };  // [kind][position][head_dim / 2]
// The cache again, for writing the newest slot (bindings 1 and 2 read it; same buffers). Writable
// bindings of the tiles' buffers made the whole kernel 1.8x slower on an H100 (25 vs 14 us, 512 keys).
#ifdef KV_F16
layout(std430, binding = 8) writeonly buffer KeyCacheOut { uvec4 k8_out[]; };
layout(std430, binding = 9) writeonly buffer ValueCacheOut { uint v2_out[]; };
#else
layout(std430, binding = 8) writeonly buffer KeyCacheOut { vec4 k8_out[]; };
layout(std430, binding = 9) writeonly buffer ValueCacheOut { vec2 v2_out[]; };
#endif

layout(push_constant) uniform Push {
  uint pos;            // the token's position
  uint n_heads;
  uint n_kv_heads;
  uint head_dim;
  uint slots;          // positions held by the cache (a ring on local layers)
  uint window;         // 0: global layer
  uint splits;         // workgroups a query head's keys are split over
  uint keys_per_split;
  uint q_norm_offset;  // floats into Norms
  uint k_norm_offset;
  uint rope_offset;    // vec2 index of position 0 of this layer's kind
  float scale;         // query_pre_attn_scalar^-0.5
  float softcap;       // 0: none
  float eps;
#ifdef ITEMS
  uint qkv_base;      // floats into Qkv: the item's row
  uint out_base;      // floats into Output: the item's row
  uint partial_base;  // floats into Partials: the item's [head][split] records
  uint arrival_base;  // uints into Arrivals: the item's counters
#endif
  STAGE_PUSH
} pc;
#ifdef ITEMS
#define QKV_BASE pc.qkv_base
#define OUT_BASE pc.out_base
#define PARTIAL_BASE pc.partial_base
#define ARRIVAL_BASE pc.arrival_base
#else
#define QKV_BASE 0u
#define OUT_BASE 0u
#define PARTIAL_BASE 0u
#define ARRIVAL_BASE 0u
#endif

#include "attention_tiles.glsl"

shared float head_s[MAX_HEAD_DIM];   // the newest key, normalised and roped
shared float value_s[MAX_HEAD_DIM];  // the newest value
shared bool last_s;

// Output pair p (elements 2p, 2p + 1) of head h. With QACT_OUT, lanes p ^ 1, p ^ 2 hold the rest
// of its group of 8 (p and the invocation index agree mod 4), all active.
void write_pair(uint h, uint p, vec2 v) {
#ifdef QACT_OUT
  float amax = max(abs(v.x), abs(v.y));
  amax = max(amax, subgroupShuffleXor(amax, 1u));
  amax = max(amax, subgroupShuffleXor(amax, 2u));
  const float inv = amax > 0.0 ? 127.0 / amax : 0.0;
  const uvec2 q = floatBitsToUint(v * inv + ROUND_MAGIC) & 255u;
  uint word = (q.x | (q.y << 8)) << (16u * (p & 1u));
  word |= subgroupShuffleXor(word, 1u);
  const uint e = h * pc.head_dim + 2u * p, block = e / 32u, at = e % 32u;
  if ((p & 1u) == 0u) outq[block * 12u + at / 4u] = word;
  if ((p & 3u) == 0u) outq[block * 12u + 8u + at / 8u] = floatBitsToUint(amax / 127.0);
#else
  out2[OUT_BASE / 2u + h * (pc.head_dim / 2u) + p] = v;
#endif
}

// What the cache holds for x: later steps read the newest key back rounded, so this one uses it
// rounded too.
float as_cached(float x) {
#ifdef KV_F16
  return unpackHalf2x16(packHalf2x16(vec2(x, 0.0))).x;
#else
  return x;
#endif
}

// RMSNorm (q_norm) and rotate-half RoPE at pc.pos of query head h, into q_s with the score scale;
// in the split holding the newest position also of its key (k_norm), into head_s, and its value
// into value_s, both rounded as the cache holds them. The query's and the key's loads go out
// together and their sums reduce back to back (one after the other, they were 0.8 and 1.9 us of
// the split's step on an H100). Must be reached by the whole workgroup.
void norm_rope_q_and_newest(uint h, uint kv_head, bool with_key) {
  const uint tid = gl_LocalInvocationID.x, WG = gl_WorkGroupSize.x;
  const uint D = pc.head_dim, half_d = D / 2u;
  const uint q_base = QKV_BASE + h * D, k_base = QKV_BASE + (pc.n_heads + kv_head) * D,
             v_base = QKV_BASE + (pc.n_heads + pc.n_kv_heads + kv_head) * D;
  float ssq = 0.0, ssk = 0.0;
  for (uint d = tid; d < D; d += WG) {
    ssq += qkv[q_base + d] * qkv[q_base + d];
    if (with_key) ssk += qkv[k_base + d] * qkv[k_base + d];
  }
  const float inv_q = 1.0 / sqrt(wg_sum(ssq) / float(D) + pc.eps);
  const float inv_k = with_key ? 1.0 / sqrt(wg_sum(ssk) / float(D) + pc.eps) : 0.0;  // with_key is uniform
  const uint rope_base = pc.rope_offset + pc.pos * half_d;
  for (uint i = tid; i < half_d; i += WG) {
    const vec2 cs = rope_cs[rope_base + i];
    const float a = qkv[q_base + i] * inv_q * norms[pc.q_norm_offset + i];
    const float b = qkv[q_base + i + half_d] * inv_q * norms[pc.q_norm_offset + i + half_d];
    q_s[i / 4u][i % 4u] = (a * cs.x - b * cs.y) * pc.scale;
    q_s[(i + half_d) / 4u][(i + half_d) % 4u] = (b * cs.x + a * cs.y) * pc.scale;
    if (with_key) {
      const float ka = qkv[k_base + i] * inv_k * norms[pc.k_norm_offset + i];
      const float kb = qkv[k_base + i + half_d] * inv_k * norms[pc.k_norm_offset + i + half_d];
      head_s[i] = as_cached(ka * cs.x - kb * cs.y);
      head_s[i + half_d] = as_cached(kb * cs.x + ka * cs.y);
    }
  }
  if (with_key)
    for (uint d = tid; d < D; d += WG) value_s[d] = as_cached(qkv[v_base + d]);
  barrier();
}

// The newest key and value (in head_s, value_s) into cache row `row`.
void write_cache(uint row) {
  const uint tid = gl_LocalInvocationID.x, WG = gl_WorkGroupSize.x, D = pc.head_dim;
#ifdef KV_F16
  for (uint i = tid; i < D / 8u; i += WG) {
    const uint e = 8u * i;
    k8_out[row * (D / 8u) + i] = uvec4(packHalf2x16(vec2(head_s[e], head_s[e + 1u])),
                                   packHalf2x16(vec2(head_s[e + 2u], head_s[e + 3u])),
                                   packHalf2x16(vec2(head_s[e + 4u], head_s[e + 5u])),
                                   packHalf2x16(vec2(head_s[e + 6u], head_s[e + 7u])));
  }
  for (uint p = tid; p < D / 2u; p += WG) v2_out[row * (D / 2u) + p] = packHalf2x16(vec2(value_s[2u * p], value_s[2u * p + 1u]));
#else
  for (uint i = tid; i < D / 4u; i += WG)
    k8_out[row * (D / 4u) + i] = vec4(head_s[4u * i], head_s[4u * i + 1u], head_s[4u * i + 2u], head_s[4u * i + 3u]);
  for (uint p = tid; p < D / 2u; p += WG) v2_out[row * (D / 2u) + p] = vec2(value_s[2u * p], value_s[2u * p + 1u]);
#endif
}

void body() {
  const uint tid = gl_LocalInvocationID.x;
  const uint WG = gl_WorkGroupSize.x;
  const uint split = gl_WorkGroupID.x % pc.splits;
  const uint h = gl_WorkGroupID.x / pc.splits;
  const uint group = pc.n_heads / pc.n_kv_heads;
  const uint kv_head = h / group;
  const uint D = pc.head_dim, pairs = D / 2u;

  const uint lo = (pc.window > 0u && pc.pos + 1u > pc.window) ? pc.pos + 1u - pc.window : 0u;
  const uint k_begin = lo + split * pc.keys_per_split;
  const uint k_end = min(pc.pos + 1u, k_begin + pc.keys_per_split);
  const bool holds_newest = k_end == pc.pos + 1u;  // uniform over the workgroup

  // Trace phases: 1 q (and the newest k), 2 its cache write, 3 the cached keys, 4 the newest key's
  // score, 5 the partial and arrival, 6 the merge.
  norm_rope_q_and_newest(h, kv_head, holds_newest);
  if (holds_newest && h % group == 0u) write_cache((pc.pos % pc.slots) * pc.n_kv_heads + kv_head);

  Softmax st = Softmax(NEG_BIG, 0.0, vec2(0.0), vec2(0.0));
  attend_tiles(st, k_begin, holds_newest ? pc.pos : k_end, kv_head);  // the cached keys

  if (holds_newest) {  // the newest key, from shared memory
    float part = 0.0;
    for (uint i = tid; i < D / 4u; i += WG)
      part += dot(q_s[i], vec4(head_s[4u * i], head_s[4u * i + 1u], head_s[4u * i + 2u], head_s[4u * i + 3u]));
    const float s = apply_softcap(wg_sum(part));
    const float m_new = max(st.m, s);
    const float correction = exp(st.m - m_new), p = exp(s - m_new);
    st.m = m_new;
    st.l = st.l * correction + p;
    if (tid < pairs) st.acc0 = st.acc0 * correction + p * vec2(value_s[2u * tid], value_s[2u * tid + 1u]);
    if (tid + WG < pairs)
      st.acc1 = st.acc1 * correction + p * vec2(value_s[2u * (tid + WG)], value_s[2u * (tid + WG) + 1u]);
  }

  if (pc.splits == 1u) {
    if (tid < pairs) write_pair(h, tid, st.acc0 / st.l);
    if (tid + WG < pairs) write_pair(h, tid + WG, st.acc1 / st.l);
    return;
  }

  const uint rec = D + 2u;
  const uint mine = PARTIAL_BASE + gl_WorkGroupID.x * rec;
  if (tid == 0u) {
    partials[mine] = st.m;
    partials[mine + 1u] = st.l;
  }
  if (tid < pairs) {
    partials[mine + 2u + 2u * tid] = st.acc0.x;
    partials[mine + 3u + 2u * tid] = st.acc0.y;
  }
  if (tid + WG < pairs) {
    partials[mine + 2u + 2u * (tid + WG)] = st.acc1.x;
    partials[mine + 3u + 2u * (tid + WG)] = st.acc1.y;
  }
  // Every invocation's partial writes are visible device-wide before the count says so.
  memoryBarrierBuffer();
  barrier();
  if (tid == 0u) last_s = atomicAdd(arrived[ARRIVAL_BASE + h], 1u) == pc.splits - 1u;
  barrier();
  if (!last_s) return;  // uniform: another split of this head finishes it
  memoryBarrierBuffer();

  // The last split: out = sum_s e^(m_s - M) acc_s / sum_s e^(m_s - M) l_s, in one pass with a
  // running maximum. Each invocation reads every split's (m, l) itself (the same words across the
  // workgroup: no reduction, no barrier) with its pairs' partial outputs, eight splits' loads in
  // flight at a time.
  const uint first = PARTIAL_BASE + h * pc.splits * rec;
  for (uint p = tid; p < pairs; p += WG) {
    float M = NEG_BIG, L = 0.0;
    vec2 sum = vec2(0.0);
    for (uint s0 = 0; s0 < pc.splits; s0 += 8u) {
      float m8[8], l8[8];
      vec2 a8[8];
      for (uint u = 0; u < 8u; ++u) {
        const uint at = first + min(s0 + u, pc.splits - 1u) * rec;
        m8[u] = partials[at];
        l8[u] = partials[at + 1u];
        a8[u] = vec2(partials[at + 2u + 2u * p], partials[at + 3u + 2u * p]);
      }
      for (uint u = 0; u < 8u; ++u) {
        if (s0 + u >= pc.splits) break;
        const float m_new = max(M, m8[u]);
        const float c = exp(M - m_new), w = exp(m8[u] - m_new);
        L = L * c + w * l8[u];
        sum = sum * c + w * a8[u];
        M = m_new;
      }
    }
    write_pair(h, p, sum / L);
  }
  if (tid == 0u) arrived[ARRIVAL_BASE + h] = 0u;  // ready for the next dispatch (a barrier or a stage wait separates them)
}

void main() {
  stage_wait(STAGE_ARGS);
  body();
  stage_signal(STAGE_ARGS);
}
