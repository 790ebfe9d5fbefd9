#version 450
// Attention of batched tokens (prefill; qk_norm_rope has already normalised and roped the
// queries and written every token's keys and values to the cache): one workgroup a (token, query
// head) over all its keys, causal, with a sliding window on local layers. GQA: query head h reads
// kv head h / (heads / kv_heads). Single-token steps use attention_decode.comp. Built with SPANS,
// queries inside soft-token spans also see the rest of their span (attention_spans.glsl).
#extension GL_GOOGLE_include_directive : require
layout(local_size_x_id = 0) in;

#include "common.glsl"

layout(std430, binding = 0) readonly buffer Qkv { vec4 q4[]; };
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
#ifdef SPANS
  uint n_tokens;       // unused here: keeps AttentionPush's layout
  uint span_count;
  uvec2 spans[8];
#endif
} pc;

#include "attention_tiles.glsl"
#ifdef SPANS
#include "attention_spans.glsl"
#endif

void main() {
  const uint tid = gl_LocalInvocationID.x;
  const uint WG = gl_WorkGroupSize.x;
  const uint h = gl_WorkGroupID.x % pc.n_heads;
  const uint t = gl_WorkGroupID.x / pc.n_heads;
  const uint kv_head = h / (pc.n_heads / pc.n_kv_heads);
  const uint D = pc.head_dim;
  const uint pos = pc.pos0 + t;
  const uint lo = (pc.window > 0u && pos + 1u > pc.window) ? pos + 1u - pc.window : 0u;

  const uint q_base = (t * pc.qkv_stride + h * D) >> 2;
  for (uint i = tid; i < D / 4u; i += WG) q_s[i] = q4[q_base + i] * pc.scale;
  barrier();

  Softmax st = Softmax(NEG_BIG, 0.0, vec2(0.0), vec2(0.0));
#ifdef SPANS
  const uvec2 keys = key_range(pos, lo);
  attend_tiles(st, keys.x, keys.y, kv_head);
#else
  attend_tiles(st, lo, pos + 1u, kv_head);
#endif

  const uint o = (t * pc.out_stride + h * D) >> 1, pairs = D / 2u;
  if (tid < pairs) out2[o + tid] = st.acc0 / st.l;
  if (tid + WG < pairs) out2[o + tid + WG] = st.acc1 / st.l;
}
