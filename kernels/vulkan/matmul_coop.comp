#version 450
// Y = X W^T for a batch of tokens (prefill) on tensor cores (GL_NV_cooperative_matrix): fp16
// products, fp32 sums. A workgroup of WARPS_M x WARPS_N subgroups of 32 takes 16 FRAGS_M WARPS_M
// rows x 16 FRAGS_N WARPS_N tokens; each subgroup owns FRAGS_M x FRAGS_N accumulators of 16 x 16.
// K advances one 32-weight block a step: every row's block is dequantized to fp16 and every
// token's 32 activations converted to fp16 into shared memory, double-buffered, while the global
// loads of the next two steps are in flight in registers. (Two blocks a step fit NVIDIA's
// 48 KiB of shared memory only single-buffered, and measured slower on an H100.)
// Results go through shared memory to global (bounds, and with GLU the (gate, up) row pairs:
// gelu_tanh(gate) * up). Bindings, push constants, chunking: as matmul.comp. Split-K
// (split_blocks > 0): workgroup z takes blocks z split_blocks .. of every row and writes its
// partial sums z n_tokens y_stride floats further on; split_sum.comp adds them up. Needs a
// subgroup size of 32. The build uses 4 x 2 subgroups of 2 x 4 (128 x 128); other layouts measured
// slower on an H100 (kernels/vulkan/CMakeLists.txt, PERFORMANCE.md).
// HALF_X: the activations arrive in fp16, converted once per matrix input (convert_f16.comp,
// dense: x_offset 0, x_stride the row length), so the tiles read half the bytes and convert none.
// COOPMAT_KHR: the same kernel on GL_KHR_cooperative_matrix (VK_KHR_cooperative_matrix: AMD RDNA3,
// Intel, NVIDIA), compiled by Debian 13's glslc (kernels/vulkan/CMakeLists.txt); the pipeline then
// asks for subgroups of 32 where the device's default differs (RDNA3's wave64).
// Occupancy: the default is 155 registers and 40 KiB on an H100, one workgroup an SM. ACC16 (fp16
// sums, KHR) with BUFFERS 1 and AHEAD 1 is 111 registers and 20 KiB, two an SM: the engine's
// coop_sums=f16. KK_ROLLED keeps fewer fragments live (fp32 sums in 128 registers with BUFFERS 1);
// RESIDENCY counts the workgroups running at once. tests/vulkan/bench_coop_variants times them.
#extension GL_GOOGLE_include_directive : require
#ifdef COOPMAT_KHR
#extension GL_KHR_cooperative_matrix : require
#else
#extension GL_NV_cooperative_matrix : require
#endif
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_control_flow_attributes : require
#ifndef WARPS_M
#define WARPS_M 4  // subgroups along the rows
#endif
#ifndef WARPS_N
#define WARPS_N 2  // and along the tokens
#endif
#ifndef FRAGS_M
#define FRAGS_M 2  // a subgroup's 16 x 16 accumulators along the rows
#endif
#ifndef FRAGS_N
#define FRAGS_N 4  // and along the tokens
#endif
#ifndef AHEAD
#define AHEAD 2  // steps whose global loads are in flight in registers (1 or 2)
#endif
#ifndef BUFFERS
#define BUFFERS 2  // shared-memory buffers of a step (1: with AHEAD 1, a barrier more a step)
#endif
#if BUFFERS == 1 && AHEAD != 1
#error "one buffer takes loads one step ahead"
#endif
layout(local_size_x = WARPS_M * WARPS_N * 32) in;

#include "common.glsl"
#include "weights.glsl"

#ifdef HALF_X
layout(std430, binding = 2) readonly buffer Activations { uvec2 xh2[]; };  // 4 fp16 at each vec4's index
#define XV uvec2
#define X_AT(i) xh2[i]
#else
layout(std430, binding = 2) readonly buffer Activations { vec4 x4[]; };
#define XV vec4
#define X_AT(i) x4[i]
#endif
layout(std430, binding = 3) writeonly buffer Outputs { float y[]; };

layout(push_constant) uniform Push {
  uint rows;
  uint nb;
  uint n_tokens;
  uint x_offset;
  uint x_stride;
  uint y_offset;
  uint y_stride;
  uint split_blocks;  // split-K: blocks a split (0: all); grid (row tiles, token tiles, splits)
} pc;

const uint THREADS = WARPS_M * WARPS_N * 32;
const uint WARP_M = FRAGS_M * 16, WARP_N = FRAGS_N * 16;  // rows, tokens a subgroup
const uint TILE_M = WARPS_M * WARP_M, TILE_N = WARPS_N * WARP_N;  // rows, tokens a workgroup
// A row of a tile: a block of 32 fp16 as 4 uvec4 "chunks" of 8, plus one uvec4 of padding so
// that the 16-byte reads of 8 consecutive rows hit distinct banks.
const uint ROW_STRIDE = 5;
const uint A_BUFFER = TILE_M * ROW_STRIDE, B_BUFFER = TILE_N * ROW_STRIDE;  // uvec4 of one buffer
shared uvec4 a_tile[BUFFERS * A_BUFFER];  // [buffer][row][chunk]: weights, fp16
shared uvec4 b_tile[BUFFERS * B_BUFFER];  // [buffer][token][chunk]: activations, fp16
#ifdef RESIDENCY  // bench_coop_variants: how many workgroups run at once, GPU-wide
layout(std430, binding = 4) buffer Residency { uint running; uint peak; } residency;
#endif
// Each invocation loads A_UNITS half blocks of weights and B_UNITS half blocks of activations a step.
// A tile of fewer tokens than half the invocations leaves the rest out of the activations' loads.
const uint A_UNITS = 2 * TILE_M / THREADS;
const uint B_UNITS = 2 * TILE_N >= THREADS ? 2 * TILE_N / THREADS : 1;
#define B_LOADER (2 * TILE_N >= THREADS || tid < 2 * TILE_N)

#ifdef COOPMAT_KHR
#define MAT_A coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>
#define MAT_B coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB>
#define MAT32 coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
#ifdef ACC16  // fp16 sums (half the accumulator registers), converted at the end
#define MAT_ACC coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
#define TO_MAT32(m) MAT32(m)
#else
#define MAT_ACC MAT32
#define TO_MAT32(m) (m)
#endif
#define LOAD_A(m, buf, at, stride) coopMatLoad(m, buf, at, stride, gl_CooperativeMatrixLayoutRowMajor)
#define LOAD_B(m, buf, at, stride) coopMatLoad(m, buf, at, stride, gl_CooperativeMatrixLayoutColumnMajor)
#define STORE_COLS(m, buf, at, stride) coopMatStore(m, buf, at, stride, gl_CooperativeMatrixLayoutColumnMajor)
#define MUL_ADD(a, b, c) coopMatMulAdd(a, b, c)
#else
#define MAT_A fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>
#define MAT_B MAT_A
#define MAT32 fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>
#define MAT_ACC MAT32
#define TO_MAT32(m) (m)
#define LOAD_A(m, buf, at, stride) coopMatLoadNV(m, buf, at, stride, false)
#define LOAD_B(m, buf, at, stride) coopMatLoadNV(m, buf, at, stride, true)
#define STORE_COLS(m, buf, at, stride) coopMatStoreNV(m, buf, at, stride, true)
#define MUL_ADD(a, b, c) coopMatMulAddNV(a, b, c)
#endif

// The order of k inside a tile's block is free as long as weights and activations agree. Each
// format keeps the order its bits unpack in cheaply; chunk c (8 fp16) of the activations takes
// the vec4s at x_lo(c), x_hi(c) of the block, each as (x, z, y, w) when SWIZZLE (the quantized
// formats unpack the even then the odd bytes of a word).
//   Q4_0: word c holds q[4c + j] (low nibbles) and q[16 + 4c + j] (high): k 4c + (0 2 1 3), 16 + 4c + (0 2 1 3)
//   Q8_0: words 2c, 2c + 1 hold q[8c .. 8c + 7]:                        k 8c + (0 2 1 3 4 6 5 7)
//   F16, F32: natural order. K-quants: Q4_0's order unswizzled (they unpack to fp32 first).
#if defined(WTYPE_KQUANT)
uint x_lo(uint c) { return c; }
uint x_hi(uint c) { return c + 4u; }
#elif defined(WTYPE_Q4_0)
#define SWIZZLE 1
uint x_lo(uint c) { return c; }
uint x_hi(uint c) { return c + 4u; }
#elif defined(WTYPE_Q8_0)
#define SWIZZLE 1
uint x_lo(uint c) { return 2u * c; }
uint x_hi(uint c) { return 2u * c + 1u; }
#else
uint x_lo(uint c) { return 2u * c; }
uint x_hi(uint c) { return 2u * c + 1u; }
#endif

// Half a block of one row (chunks 2h, 2h + 1) as loaded from global memory.
#if defined(WTYPE_KQUANT)
struct AHalf { uvec4 q; uvec2 high; KScale k; uint h; };  // the whole block's quants (16 B at most)
AHalf load_a(uint gb, uint h) { return AHalf(block_quants(gb), block_high(gb), block_kscale(gb), h); }
#elif defined(WTYPE_Q4_0)
struct AHalf { uvec2 q; float d; };
AHalf load_a(uint gb, uint h) { return AHalf(uvec2(w4[gb][2u * h], w4[gb][2u * h + 1u]), block_scale(gb)); }
#elif defined(WTYPE_Q8_0)
struct AHalf { uvec4 q; float d; };
AHalf load_a(uint gb, uint h) { return AHalf(w4[gb * 2u + h], block_scale(gb)); }
#elif defined(WTYPE_F16)
struct AHalf { uvec4 c0, c1; };
AHalf load_a(uint gb, uint h) { return AHalf(w4[gb * 4u + 2u * h], w4[gb * 4u + 2u * h + 1u]); }
#else
struct AHalf { vec4 v0, v1, v2, v3; };
AHalf load_a(uint gb, uint h) {
  const uint i = gb * 8u + 4u * h;
  return AHalf(w4[i], w4[i + 1u], w4[i + 2u], w4[i + 3u]);
}
#endif

// Integers 0..1023 OR'ed into the mantissa of fp16 1024.0 (0x6400) read as 1024 + n: exact.
uint scaled_pair(uint bits, float16_t bias, float16_t d) {
  return packFloat2x16((unpackFloat2x16(bits | 0x64006400u) - f16vec2(bias)) * d);
}
#if defined(WTYPE_Q4_0)
uvec4 q4_chunk(uint word, float16_t d) {
  const float16_t bias = float16_t(1032.0);  // 1024 + the Q4_0 offset 8
  return uvec4(scaled_pair(word & 0x000F000Fu, bias, d), scaled_pair((word >> 8) & 0x000F000Fu, bias, d),
               scaled_pair((word >> 4) & 0x000F000Fu, bias, d), scaled_pair((word >> 12) & 0x000F000Fu, bias, d));
}
#elif defined(WTYPE_Q8_0)
// int8 with the sign bit flipped is q + 128 in 0..255.
uvec2 q8_pairs(uint word, float16_t d) {
  const float16_t bias = float16_t(1152.0);
  return uvec2(scaled_pair((word & 0x00FF00FFu) ^ 0x00800080u, bias, d),
               scaled_pair(((word >> 8) & 0x00FF00FFu) ^ 0x00800080u, bias, d));
}
#endif

// Writes the half block as fp16 chunks to a_tile[at], a_tile[at + 1].
void store_a(AHalf a, uint at) {
#if defined(WTYPE_KQUANT)
  [[unroll]] for (uint c = 0; c < 2u; ++c) {  // quarters 2h, 2h + 1 (weights.glsl)
    vec4 lo, hi;
    kquants(a.q, a.high, 2u * a.h + c, lo, hi);
    lo = lo * a.k.scale.x + a.k.offset.x;
    hi = hi * a.k.scale.y + a.k.offset.y;
    a_tile[at + c] = uvec4(packHalf2x16(lo.xy), packHalf2x16(lo.zw), packHalf2x16(hi.xy), packHalf2x16(hi.zw));
  }
#elif defined(WTYPE_Q4_0)
  const float16_t d = float16_t(a.d);
  a_tile[at] = q4_chunk(a.q.x, d);
  a_tile[at + 1u] = q4_chunk(a.q.y, d);
#elif defined(WTYPE_Q8_0)
  const float16_t d = float16_t(a.d);
  a_tile[at] = uvec4(q8_pairs(a.q.x, d), q8_pairs(a.q.y, d));
  a_tile[at + 1u] = uvec4(q8_pairs(a.q.z, d), q8_pairs(a.q.w, d));
#elif defined(WTYPE_F16)
  a_tile[at] = a.c0;
  a_tile[at + 1u] = a.c1;
#else
  a_tile[at] = uvec4(packHalf2x16(a.v0.xy), packHalf2x16(a.v0.zw), packHalf2x16(a.v1.xy), packHalf2x16(a.v1.zw));
  a_tile[at + 1u] = uvec4(packHalf2x16(a.v2.xy), packHalf2x16(a.v2.zw), packHalf2x16(a.v3.xy), packHalf2x16(a.v3.zw));
#endif
}

#ifdef HALF_X
// Already fp16 (saturated by convert_f16.comp), in pairs (x, y), (z, w); SWIZZLE wants (x, z), (y, w).
uvec2 swizzled(uvec2 p) {
#ifdef SWIZZLE
  return uvec2((p.x & 0xFFFFu) | (p.y << 16), (p.x >> 16) | (p.y & 0xFFFF0000u));
#else
  return p;
#endif
}
uvec4 b_chunk(uvec2 lo, uvec2 hi) { return uvec4(swizzled(lo), swizzled(hi)); }
#else
// Activations past fp16's range would become infinities; they saturate instead.
const float F16_MAX = 65504.0;
uvec4 b_chunk(vec4 lo, vec4 hi) {
  lo = clamp(lo, -F16_MAX, F16_MAX);
  hi = clamp(hi, -F16_MAX, F16_MAX);
#ifdef SWIZZLE
  return uvec4(packHalf2x16(lo.xz), packHalf2x16(lo.yw), packHalf2x16(hi.xz), packHalf2x16(hi.yw));
#else
  return uvec4(packHalf2x16(lo.xy), packHalf2x16(lo.zw), packHalf2x16(hi.xy), packHalf2x16(hi.zw));
#endif
}
#endif  // HALF_X

// One subgroup's 16 x 16 accumulator (rows m0 .., tokens tok0 ..) to y: staged column-major in
// this subgroup's 1 KiB of a_tile (free once the products are done; room while
// WARPS_N <= 10 FRAGS_M / 4);
// lane l then writes token
// tok0 + l / 2, rows m0 + 8 (l % 2) .. + 7.
void write_out(MAT32 acc, uint m0, uint tok0) {
  const uint stage = gl_SubgroupID * 64u;  // uvec4
  const uint lane = gl_SubgroupInvocationID;
  STORE_COLS(acc, a_tile, stage, 4u);
  subgroupMemoryBarrierShared();
  subgroupBarrier();
  const uint at = stage + (lane >> 1) * 4u + (lane & 1u) * 2u;
  const vec4 v0 = uintBitsToFloat(a_tile[at]), v1 = uintBitsToFloat(a_tile[at + 1u]);
  subgroupBarrier();  // read before the next accumulator overwrites the stage
  const uint tok = tok0 + (lane >> 1), m = m0 + 8u * (lane & 1u);
  if (tok >= pc.n_tokens) return;
  const uint out_base = pc.y_offset + (gl_WorkGroupID.z * pc.n_tokens + tok) * pc.y_stride;
#ifdef GLU
  const vec4 gate = vec4(v0.xz, v1.xz), up = vec4(v0.yw, v1.yw);
  [[unroll]] for (uint p = 0; p < 4u; ++p)
    if (m + 2u * p + 1u < pc.rows) y[out_base + m / 2u + p] = gelu_tanh(gate[p]) * up[p];
#else
  [[unroll]] for (uint r = 0; r < 4u; ++r) {
    if (m + r < pc.rows) y[out_base + m + r] = v0[r];
    if (m + 4u + r < pc.rows) y[out_base + m + 4u + r] = v1[r];
  }
#endif
}

void main() {
  const uint tid = gl_LocalInvocationID.x;
#ifdef RESIDENCY
  if (tid == 0u) atomicMax(residency.peak, atomicAdd(residency.running, 1u) + 1u);
#endif
  const uint tile_m = gl_WorkGroupID.x * TILE_M, tile_n = gl_WorkGroupID.y * TILE_N;
  // This workgroup's blocks: first_block .. + nb (all of them without split-K).
  const uint first_block = gl_WorkGroupID.z * pc.split_blocks;
  const uint nb = pc.split_blocks == 0u ? pc.nb : min(pc.split_blocks, pc.nb - first_block);
  // Loading: unit u = tid + THREADS i is chunks 2 (u % 2), + 1 of the step's block in row (token)
  // u / 2 of the tile; THREADS is even, so h is this invocation's for every i. Rows and tokens
  // past the end repeat the last one: they only feed outputs never written.
  const uint h = tid & 1u;
  uint a_block[A_UNITS], a_at[A_UNITS], x_base[B_UNITS], b_at[B_UNITS];
  [[unroll]] for (uint i = 0; i < A_UNITS; ++i) {
    const uint r = (tid + THREADS * i) / 2u;
    a_block[i] = min(tile_m + r, pc.rows - 1u) * pc.nb + first_block;
    a_at[i] = r * ROW_STRIDE + 2u * h;
  }
  [[unroll]] for (uint i = 0; i < B_UNITS; ++i) {
    const uint t = (tid + THREADS * i) / 2u;
    x_base[i] = ((pc.x_offset + min(tile_n + t, pc.n_tokens - 1u) * pc.x_stride) >> 2) + first_block * 8u;
    b_at[i] = t * ROW_STRIDE + 2u * h;
  }

  const uint warp = gl_SubgroupID;
  const uint warp_m = (warp % WARPS_M) * WARP_M, warp_n = (warp / WARPS_M) * WARP_N;
  MAT_ACC acc[FRAGS_M * FRAGS_N];  // acc[FRAGS_N i + j]: rows warp_m + 16 i .., tokens warp_n + 16 j ..
  [[unroll]] for (uint i = 0; i < FRAGS_M * FRAGS_N; ++i) acc[i] = MAT_ACC(0.0);

  AHalf a_next[A_UNITS];
  XV x_next[4 * B_UNITS];
#if AHEAD == 2
  AHalf a_after[A_UNITS];
  XV x_after[4 * B_UNITS];
#endif
  // The loads of step (block) s into registers A, X, then from registers into buffer `buf` (fp16).
#define LOAD_STEP(s, A, X)                                                          \
  {                                                                                 \
    const uint blk = (s);                                                           \
    [[unroll]] for (uint i = 0; i < A_UNITS; ++i) A[i] = load_a(a_block[i] + blk, h); \
    if (B_LOADER) [[unroll]] for (uint i = 0; i < B_UNITS; ++i) {                  \
      const uint xb = x_base[i] + blk * 8u;                                         \
      [[unroll]] for (uint c = 0; c < 2u; ++c) {                                    \
        X[4u * i + 2u * c] = X_AT(xb + x_lo(2u * h + c));                           \
        X[4u * i + 2u * c + 1u] = X_AT(xb + x_hi(2u * h + c));                      \
      }                                                                             \
    }                                                                               \
  }
#define STORE_STEP(buf, A, X)                                                       \
  {                                                                                 \
    [[unroll]] for (uint i = 0; i < A_UNITS; ++i) store_a(A[i], (buf) * A_BUFFER + a_at[i]); \
    if (B_LOADER) [[unroll]] for (uint i = 0; i < B_UNITS; ++i) {                  \
      const uint at = (buf) * B_BUFFER + b_at[i];                                   \
      b_tile[at] = b_chunk(X[4u * i], X[4u * i + 1u]);                              \
      b_tile[at + 1u] = b_chunk(X[4u * i + 2u], X[4u * i + 3u]);                    \
    }                                                                               \
  }
  // This step's products from buffer `cur`.
#ifdef KK_ROLLED  // the block's two k slices one after the other (fewer registers live)
#define KK_LOOP [[dont_unroll]]
#else
#define KK_LOOP [[unroll]]
#endif
// Each B fragment is loaded just before its products, one live at a time (the same speed and
// registers as loading all FRAGS_N first on an H100, fewer where the compiler keeps them apart).
#define PRODUCTS(cur)                                                               \
  KK_LOOP for (uint kk = 0; kk < 2u; ++kk) { /* 16-wide k slices of the block */    \
    MAT_A a[FRAGS_M];                                                               \
    [[unroll]] for (uint i = 0; i < FRAGS_M; ++i)                                   \
      LOAD_A(a[i], a_tile, (cur) * A_BUFFER + (warp_m + 16u * i) * ROW_STRIDE + 2u * kk, ROW_STRIDE); \
    [[unroll]] for (uint j = 0; j < FRAGS_N; ++j) { /* column-major K x N: a token's k run is contiguous */ \
      MAT_B bm;                                                                     \
      LOAD_B(bm, b_tile, (cur) * B_BUFFER + (warp_n + 16u * j) * ROW_STRIDE + 2u * kk, ROW_STRIDE); \
      [[unroll]] for (uint i = 0; i < FRAGS_M; ++i)                                 \
        acc[FRAGS_N * i + j] = MUL_ADD(a[i], bm, acc[FRAGS_N * i + j]);             \
    }                                                                               \
  }
  LOAD_STEP(0u, a_next, x_next)
  STORE_STEP(0u, a_next, x_next)
  barrier();
#if BUFFERS == 1
  for (uint s = 0; s < nb; ++s) {
    if (s + 1u < nb) LOAD_STEP(s + 1u, a_next, x_next)
    PRODUCTS(0u)
    barrier();
    if (s + 1u < nb) STORE_STEP(0u, a_next, x_next)
    barrier();
  }
#elif AHEAD == 1
  // Step s + 1's loads in flight through step s's products.
  for (uint s = 0; s < nb; ++s) {
    const uint cur = s & 1u;
    if (s + 1u < nb) LOAD_STEP(s + 1u, a_next, x_next)
    PRODUCTS(cur)
    if (s + 1u < nb) STORE_STEP(cur ^ 1u, a_next, x_next)
    barrier();
  }
#else
  // Global loads two steps ahead: step s + 2's are in flight through step s's products and step
  // s + 1's, in two register sets that take turns (the loop goes two steps a turn, so both stay
  // registers). One step ahead left the loads' latency exposed: 27B pp512 on an H100 2122 -> 2170
  // tok/s (Q4_0), 2051 -> 2079 (Q4_K_M); 4B unchanged.
  if (nb > 1u) LOAD_STEP(1u, a_next, x_next)
  for (uint s = 0; s < nb; s += 2u) {
    // Step s (buffer 0): a_next holds step s + 1; load s + 2 into a_after.
    if (s + 2u < nb) LOAD_STEP(s + 2u, a_after, x_after)
    PRODUCTS(0u)
    if (s + 1u < nb) STORE_STEP(1u, a_next, x_next)
    barrier();
    if (s + 1u >= nb) break;
    // Step s + 1 (buffer 1): a_after holds step s + 2; load s + 3 into a_next.
    if (s + 3u < nb) LOAD_STEP(s + 3u, a_next, x_next)
    PRODUCTS(1u)
    if (s + 2u < nb) STORE_STEP(0u, a_after, x_after)
    barrier();
  }
#endif

  // Constant indices only: the accumulators stay in registers.
  [[unroll]] for (uint i = 0; i < FRAGS_M; ++i)
    [[unroll]] for (uint j = 0; j < FRAGS_N; ++j)
      write_out(TO_MAT32(acc[FRAGS_N * i + j]), tile_m + warp_m + 16u * i, tile_n + warp_n + 16u * j);
#ifdef RESIDENCY
  if (tid == 0u) atomicAdd(residency.running, uint(-1));
#endif
}
