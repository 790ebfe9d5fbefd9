#version 450
// Per head of each token in the fused q|k|v rows: RMSNorm over head_dim (q_norm / k_norm, 1 + w
// form), rotate-half RoPE from a table of (cos, sin), then queries stay in place and keys and
// values go to the layer's KV cache at slot = position % slots. One workgroup a (token, head)
// over heads + kv_heads. Batches only: attention_decode.comp does this itself for one token.
#extension GL_GOOGLE_include_directive : require
layout(local_size_x_id = 0) in;

#include "common.glsl"

layout(std430, binding = 0) buffer Qkv { float qkv[]; };
layout(std430, binding = 1) readonly buffer Norms { float norms[]; };
layout(std430, binding = 2) readonly buffer Rope { vec2 rope_cs[]; };  // [kind][position][head_dim / 2]
#ifdef KV_F16
layout(std430, binding = 3) writeonly buffer KeyCache { uint k_cache[]; };    // fp16 pairs
layout(std430, binding = 4) writeonly buffer ValueCache { uint v_cache[]; };
#else
layout(std430, binding = 3) writeonly buffer KeyCache { float k_cache[]; };
layout(std430, binding = 4) writeonly buffer ValueCache { float v_cache[]; };
#endif

layout(push_constant) uniform Push {
  uint pos0;         // position of the first token
  uint n_heads;
  uint n_kv_heads;
  uint head_dim;
  uint qkv_stride;   // floats a token: (heads + 2 kv_heads) * head_dim
  uint slots;        // positions the layer's cache holds (ring for local layers)
  uint q_norm_offset;
  uint k_norm_offset;
  uint rope_offset;  // vec2 index of position 0 of this layer's kind
  float eps;
} pc;

shared float rotated[256];  // a key head, gathered so fp16 pairs can be packed

void main() {
  const uint heads = pc.n_heads + pc.n_kv_heads;
  const uint h = gl_WorkGroupID.x % heads;
  const uint t = gl_WorkGroupID.x / heads;
  const uint pos = pc.pos0 + t;
  const uint D = pc.head_dim, half_d = D / 2u;
  const uint base = t * pc.qkv_stride + h * D;  // q heads, then k heads, are contiguous
  const uint tid = gl_LocalInvocationID.x;
  const bool is_query = h < pc.n_heads;
  const uint w = is_query ? pc.q_norm_offset : pc.k_norm_offset;

  float ss = 0.0;
  for (uint d = tid; d < D; d += gl_WorkGroupSize.x) ss += qkv[base + d] * qkv[base + d];
  const float inv = 1.0 / sqrt(wg_sum(ss) / float(D) + pc.eps);

  const uint rope_base = pc.rope_offset + pos * half_d;
  for (uint i = tid; i < half_d; i += gl_WorkGroupSize.x) {
    const float a = qkv[base + i] * inv * norms[w + i];
    const float b = qkv[base + i + half_d] * inv * norms[w + i + half_d];
    const vec2 cs = rope_cs[rope_base + i];
    const float ra = a * cs.x - b * cs.y;
    const float rb = b * cs.x + a * cs.y;
    if (is_query) {
      qkv[base + i] = ra;
      qkv[base + i + half_d] = rb;
    } else {
      rotated[i] = ra;
      rotated[i + half_d] = rb;
    }
  }
  if (is_query) return;  // uniform over the workgroup

  barrier();
  const uint kv_head = h - pc.n_heads;
  const uint dst = ((pos % pc.slots) * pc.n_kv_heads + kv_head) * D;
  const uint v_src = t * pc.qkv_stride + (pc.n_heads + pc.n_kv_heads + kv_head) * D;
#ifdef KV_F16
  for (uint j = tid; j < half_d; j += gl_WorkGroupSize.x) {
    k_cache[dst / 2u + j] = packHalf2x16(vec2(rotated[2u * j], rotated[2u * j + 1u]));
    v_cache[dst / 2u + j] = packHalf2x16(vec2(qkv[v_src + 2u * j], qkv[v_src + 2u * j + 1u]));
  }
#else
  for (uint d = tid; d < D; d += gl_WorkGroupSize.x) {
    k_cache[dst + d] = rotated[d];
    v_cache[dst + d] = qkv[v_src + d];
  }
#endif
}
