#version 450
// Attention of batched tokens (prefill) on tensor cores (GL_KHR_cooperative_matrix): fp16
// products, fp32 sums. A workgroup is one subgroup of 32 and takes 16 consecutive queries of one
// head (four subgroups of 16 queries each in a workgroup measured no faster on an H100, and left
// too few workgroups where heads are few); it walks their keys KT at a time, reading key and value
// rows straight from the fp16 cache. Two passes over the keys: the first finds each query's largest score and
// the sum of exp(score - largest); the second forms the probabilities exactly and sums P V. One
// pass would have to rescale the partial outputs per query, and cooperative matrices give no
// per-row access; the scores are computed twice instead, 1.5x the products, all on tensor cores.
// Same bindings and push block as attention_prefill.comp (not SPANS). Needs the fp16 cache, a head
// of HEAD_DIM (the build makes 128 and 256), a cache ring of a multiple of 16 slots (a 16-key
// fragment is then contiguous; ModelGpu sizes the rings so), and subgroups of 32.
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x = 32) in;

#include "common.glsl"

const uint D = uint(HEAD_DIM), DF = D / 16u, D8 = D / 8u;  // head: 16-wide fragments, uvec4 (8 fp16) a row
const uint KT = 32u, KF = KT / 16u;                  // keys a step, 16-key fragments a step
const uint QS = 16u;                                 // queries a subgroup

layout(std430, binding = 0) readonly buffer Qkv { vec4 q4[]; };
layout(std430, binding = 1) readonly buffer KeyCache { uvec4 k8[]; };    // 8 fp16 a uvec4
layout(std430, binding = 2) readonly buffer ValueCache { uvec4 v8[]; };  // 8 fp16 a uvec4
layout(std430, binding = 3) writeonly buffer Output { vec4 out4[]; };

layout(push_constant) uniform Push {
  uint pos0;
  uint n_heads;
  uint n_kv_heads;
  uint head_dim;
  uint qkv_stride;  // floats a token in Qkv
  uint out_stride;  // floats a token in Output
  uint slots;       // positions held by the cache (a ring on local layers)
  uint window;      // 0: global layer
  float scale;      // query_pre_attn_scalar^-0.5
  float softcap;    // 0: none
  uint n_tokens;    // queries in the batch
} pc;

#define MAT_A coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>
#define MAT_B coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB>
#define MAT32 coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>

// Heads wider than 128 keep the queries in shared memory, not in registers: 16 fragments of them
// beside 16 accumulators of output would not fit a lane's registers (kept in registers, a 4B
// prefill measured slower than the tiled attention on an H100).
#if HEAD_DIM > 128
#define Q_SHARED 1
#endif
// In uvec4: the queries in fp16 (QS x D), while loading them or (Q_SHARED) throughout; then, from
// SCRATCH, a step's scores (QS x KT fp32, 4 KT uvec4) and probabilities (QS x KT fp16, 2 KT
// uvec4); at the end one 16 x 16 fp32 output fragment at a time (64 uvec4).
#ifdef Q_SHARED
const uint SCRATCH = QS * D8, REGION = QS * D8 + 6u * KT;
#else
const uint SCRATCH = 0u, REGION = max(QS * D8, 6u * KT);
#endif
const uint P_AT = SCRATCH + 4u * KT;  // probabilities after the scores
shared uvec4 sh[REGION];

// The lowest key position query position p sees.
uint first_key(uint p) { return (pc.window > 0u && p + 1u > pc.window) ? p + 1u - pc.window : 0u; }

void main() {
  const uint lane = gl_SubgroupInvocationID;
  const uint h = gl_WorkGroupID.x % pc.n_heads;
  const uint kv_head = h / (pc.n_heads / pc.n_kv_heads);
  // The blocks with the most keys (the last) start first: less idle tail.
  const uint blocks = (pc.n_tokens + QS - 1u) / QS;
  const uint t0 = (blocks - 1u - gl_WorkGroupID.x / pc.n_heads) * QS;
  const uint nq = min(QS, pc.n_tokens - t0);
  const uint key_stride = pc.n_kv_heads * D8;  // uvec4 from one position's row to the next

  // Queries, scaled, to fp16 (zero past the batch), then into registers as A fragments.
  // (Q_SHARED: they stay where they are.)
  for (uint u = lane; u < QS * D8; u += 32u) {
    const uint r = u / D8, c = u % D8;
    vec4 lo = vec4(0.0), hi = vec4(0.0);
    if (r < nq) {
      const uint at = ((t0 + r) * pc.qkv_stride + h * D) / 4u + 2u * c;
      lo = q4[at] * pc.scale;
      hi = q4[at + 1u] * pc.scale;
    }
    sh[u] = uvec4(packHalf2x16(lo.xy), packHalf2x16(lo.zw), packHalf2x16(hi.xy), packHalf2x16(hi.zw));
  }
  subgroupMemoryBarrierShared();
  subgroupBarrier();
#ifndef Q_SHARED
  MAT_A qa[DF];
  [[unroll]] for (uint i = 0; i < DF; ++i)
    coopMatLoad(qa[i], sh, 2u * i, D8, gl_CooperativeMatrixLayoutRowMajor);
  subgroupBarrier();  // the region is the scores' from here on
#endif

  // Lane: query row r, keys half * 16 .. + 15 of each step.
  const uint r = lane >> 1, half_ = lane & 1u;
  const uint p = pc.pos0 + t0 + r;  // this row's position (meaningful for r < nq)
  const uint k_lo = first_key(pc.pos0 + t0), k_end = pc.pos0 + t0 + nq;  // keys any row sees
  const uint k_first = first_key(p);
  float m = NEG_BIG, l = 0.0;  // this lane's running maximum and sum (pass 0)
  float inv = 0.0;             // 1 / the row's sum (pass 1)
  MAT32 o[DF];
  [[unroll]] for (uint i = 0; i < DF; ++i) o[i] = MAT32(0.0);

  for (uint pass = 0; pass < 2u; ++pass) {
    for (uint j0 = k_lo & ~15u; j0 < k_end; j0 += KT) {
      // Scores of the step's keys: S = Q K^T, K read column-major (a key's row is contiguous).
      [[unroll]] for (uint f = 0; f < KF; ++f) {
        MAT32 s = MAT32(0.0);
        if (j0 + 16u * f < k_end) {
          const uint row = ((j0 + 16u * f) % pc.slots) * pc.n_kv_heads + kv_head;
          [[unroll]] for (uint i = 0; i < DF; ++i) {
            MAT_B kb;
            coopMatLoad(kb, k8, row * D8 + 2u * i, key_stride, gl_CooperativeMatrixLayoutColumnMajor);
#ifdef Q_SHARED
            MAT_A q;
            coopMatLoad(q, sh, 2u * i, D8, gl_CooperativeMatrixLayoutRowMajor);
            s = coopMatMulAdd(q, kb, s);
#else
            s = coopMatMulAdd(qa[i], kb, s);
#endif
          }
        }
        coopMatStore(s, sh, SCRATCH + 4u * f, KT / 4u, gl_CooperativeMatrixLayoutRowMajor);
      }
      subgroupMemoryBarrierShared();
      subgroupBarrier();
      float v[16];
      [[unroll]] for (uint c = 0; c < 4u; ++c) {
        const vec4 w = uintBitsToFloat(sh[SCRATCH + r * (KT / 4u) + half_ * 4u + c]);
        [[unroll]] for (uint e = 0; e < 4u; ++e) {
          const uint j = j0 + half_ * 16u + 4u * c + e;
          const bool seen = r < nq && j >= k_first && j <= p;
          const float x = pc.softcap > 0.0 ? pc.softcap * tanh(w[e] / pc.softcap) : w[e];
          v[4u * c + e] = seen ? x : NEG_BIG;
        }
      }
      if (pass == 0u) {
        float step_max = NEG_BIG;
        [[unroll]] for (uint e = 0; e < 16u; ++e) step_max = max(step_max, v[e]);
        const float m_new = max(m, step_max);
        float sum = 0.0;
        [[unroll]] for (uint e = 0; e < 16u; ++e) sum += v[e] > 0.5 * NEG_BIG ? exp(v[e] - m_new) : 0.0;
        l = l * exp(m - m_new) + sum;
        m = m_new;
        subgroupBarrier();  // read before the next step's scores overwrite them
        continue;
      }
      // Probabilities, exact: exp(s - max) / sum, 0 where masked; then O += P V.
      [[unroll]] for (uint c = 0; c < 2u; ++c) {
        uvec4 packed;
        [[unroll]] for (uint e = 0; e < 4u; ++e) {
          const float a = v[8u * c + 2u * e], b = v[8u * c + 2u * e + 1u];
          packed[e] = packHalf2x16(vec2(a > 0.5 * NEG_BIG ? exp(a - m) * inv : 0.0, b > 0.5 * NEG_BIG ? exp(b - m) * inv : 0.0));
        }
        sh[P_AT + r * (KT / 8u) + half_ * 2u + c] = packed;
      }
      subgroupMemoryBarrierShared();
      subgroupBarrier();
      [[unroll]] for (uint f = 0; f < KF; ++f) {
        if (j0 + 16u * f >= k_end) continue;
        MAT_A pa;
        coopMatLoad(pa, sh, P_AT + 2u * f, KT / 8u, gl_CooperativeMatrixLayoutRowMajor);
        const uint row = ((j0 + 16u * f) % pc.slots) * pc.n_kv_heads + kv_head;
        [[unroll]] for (uint i = 0; i < DF; ++i) {
          MAT_B vb;
          coopMatLoad(vb, v8, row * D8 + 2u * i, key_stride, gl_CooperativeMatrixLayoutRowMajor);
          o[i] = coopMatMulAdd(pa, vb, o[i]);
        }
      }
      subgroupBarrier();  // scores and probabilities are rewritten by the next step
    }
    if (pass == 0u) {  // the row's two lanes together
      const float m2 = subgroupShuffleXor(m, 1u), l2 = subgroupShuffleXor(l, 1u);
      const float mm = max(m, m2);
      const float sum = l * exp(m - mm) + l2 * exp(m2 - mm);
      m = mm;
      inv = sum > 0.0 ? 1.0 / sum : 0.0;
    }
  }

  // O to the output through this subgroup's region, a 16 x 16 fragment at a time; lane: row r,
  // columns 8 half_ .. + 7 of the fragment.
  [[unroll]] for (uint i = 0; i < DF; ++i) {
    coopMatStore(o[i], sh, SCRATCH, 4u, gl_CooperativeMatrixLayoutRowMajor);
    subgroupMemoryBarrierShared();
    subgroupBarrier();
    if (r < nq) {
      const uint at = ((t0 + r) * pc.out_stride + h * D + 16u * i + 8u * half_) / 4u;
      out4[at] = uintBitsToFloat(sh[SCRATCH + r * 4u + 2u * half_]);
      out4[at + 1u] = uintBitsToFloat(sh[SCRATCH + r * 4u + 2u * half_ + 1u]);
    }
    subgroupBarrier();
  }
}
