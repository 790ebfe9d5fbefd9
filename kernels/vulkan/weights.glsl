// Weight matrices as uploaded (core/runtime/vulkan/weight_layout.h): every row is a run of 32-weight
// blocks; block gb = row * blocks_per_row + b. Binding 0 holds the weights, binding 1 the fp16 block
// scales of the quantized formats (two a word). A block is read as four quarters of 8 weights:
// quarter w yields two vec4 of weights and the vec4 indices (0..7) of the elements they multiply;
// dequant_quarter() the same with the block's scale (and a K-quant's min) applied. The K-quants
// (WTYPE_Q4_K, Q5_K, Q6_K, Q3_K, Q2_K) are in weights_kquant.glsl, and so are GGUF's other 32-weight
// formats (WTYPE_Q5_0, Q4_1, Q5_1, IQ4_NL) and IQ4_XS, whose weights are likewise nibbles (plus high
// bits) with a scale (and a min): WTYPE_KQUANT, the formats read as they are stored.
#if defined(WTYPE_Q5_0) || defined(WTYPE_Q4_1) || defined(WTYPE_Q5_1) || defined(WTYPE_IQ4_NL)
#define WTYPE_BLOCK32
#endif
#if defined(WTYPE_Q4_K) || defined(WTYPE_Q5_K) || defined(WTYPE_Q6_K) || defined(WTYPE_Q3_K) || defined(WTYPE_Q2_K) || \
    defined(WTYPE_IQ4_XS) || defined(WTYPE_BLOCK32)
#define WTYPE_KQUANT
#endif
#if defined(WTYPE_F32)
layout(std430, binding = 0) readonly buffer WeightData { vec4 w4[]; };   // 8 vec4 a block
#elif defined(WTYPE_Q3_K) || defined(WTYPE_Q2_K)
layout(std430, binding = 0) readonly buffer WeightData { uvec2 w2[]; };  // 1 a block: 2 bits a weight
#else
layout(std430, binding = 0) readonly buffer WeightData { uvec4 w4[]; };  // F16: 4, Q8_0: 2, Q4_0 and the rest: 1 a block
#endif
layout(std430, binding = 1) readonly buffer WeightScales { uint wscale[]; };
#if defined(WTYPE_Q4_K) || defined(WTYPE_Q5_K)
// The same binding read 16 bytes at a time (a super-block's d, dmin and 6-bit scales).
layout(std430, binding = 1) readonly buffer WeightScales4 { uvec4 wscale4[]; };
#endif

float block_scale(uint gb) {
#if defined(WTYPE_Q8_0) || defined(WTYPE_Q4_0)
  const vec2 d = unpackHalf2x16(wscale[gb >> 1]);
  return (gb & 1u) == 0u ? d.x : d.y;
#else
  return 1.0;
#endif
}

// Small integers become floats without int-to-float conversions (an eighth of the FP32 rate on
// some GPUs, the bottleneck of 4-bit decode): OR the integer into the mantissa of 2^23 and
// subtract, both full-rate and exact.
const float MAGIC = 8388608.0;  // 2^23: float bits 0x4B000000
#if defined(WTYPE_KQUANT)
#include "weights_kquant.glsl"
#elif defined(WTYPE_Q4_0)
// Byte j holds q[j] (low nibble) and q[j + 16] (high nibble); weight = q - 8.
uint quarter_first(uint w) { return w; }
uint quarter_second(uint w) { return 4u + w; }
void quarter(uint gb, uint w, out vec4 a, out vec4 b) {
  const uint word = w4[gb][w];
  a = uintBitsToFloat(((uvec4(word) >> uvec4(0, 8, 16, 24)) & 15u) | 0x4B000000u) - (MAGIC + 8.0);
  b = uintBitsToFloat(((uvec4(word) >> uvec4(4, 12, 20, 28)) & 15u) | 0x4B000000u) - (MAGIC + 8.0);
}
#elif defined(WTYPE_Q8_0)
uint quarter_first(uint w) { return 2u * w; }
uint quarter_second(uint w) { return 2u * w + 1u; }
// Four int8 as floats: flipping the sign bit makes them q + 128 in 0..255.
vec4 unpack_i8x4(uint word) {
  return uintBitsToFloat((((uvec4(word) >> uvec4(0, 8, 16, 24)) & 255u) ^ 128u) | 0x4B000000u) - (MAGIC + 128.0);
}
void quarter(uint gb, uint w, out vec4 a, out vec4 b) {
  const uvec4 v = w4[gb * 2u + (w >> 1)];
  const uvec2 p = (w & 1u) == 0u ? v.xy : v.zw;
  a = unpack_i8x4(p.x);
  b = unpack_i8x4(p.y);
}
#elif defined(WTYPE_F16)
uint quarter_first(uint w) { return 2u * w; }
uint quarter_second(uint w) { return 2u * w + 1u; }
void quarter(uint gb, uint w, out vec4 a, out vec4 b) {
  const uvec4 v = w4[gb * 4u + w];
  a = vec4(unpackHalf2x16(v.x), unpackHalf2x16(v.y));
  b = vec4(unpackHalf2x16(v.z), unpackHalf2x16(v.w));
}
#elif defined(WTYPE_F32)
uint quarter_first(uint w) { return 2u * w; }
uint quarter_second(uint w) { return 2u * w + 1u; }
void quarter(uint gb, uint w, out vec4 a, out vec4 b) {
  a = w4[gb * 8u + 2u * w];
  b = w4[gb * 8u + 2u * w + 1u];
}
#else
#error "define one of WTYPE_F32, WTYPE_F16, WTYPE_Q8_0, WTYPE_Q4_0 or a K-quant (WTYPE_Q4_K ...)"
#endif

#if !defined(WTYPE_KQUANT)
void dequant_quarter(uint gb, uint w, out vec4 a, out vec4 b) {
  quarter(gb, w, a, b);
  const float d = block_scale(gb);
  a *= d;
  b *= d;
}

// A whole block in registers, so a kernel can issue the loads of several rows (and of its next
// iteration) before the arithmetic that needs them.
#if defined(WTYPE_Q4_0)
struct Block { uvec4 q; float d; };
Block load_block(uint gb) { return Block(w4[gb], block_scale(gb)); }
#elif defined(WTYPE_Q8_0)
struct Block { uvec4 q0, q1; float d; };
Block load_block(uint gb) { return Block(w4[gb * 2u], w4[gb * 2u + 1u], block_scale(gb)); }
#elif defined(WTYPE_F16)
struct Block { uvec4 q0, q1, q2, q3; };
Block load_block(uint gb) { return Block(w4[gb * 4u], w4[gb * 4u + 1u], w4[gb * 4u + 2u], w4[gb * 4u + 3u]); }
#else
struct Block { vec4 v[8]; };
Block load_block(uint gb) {
  Block k;
  for (uint i = 0; i < 8u; ++i) k.v[i] = w4[gb * 8u + i];
  return k;
}
#endif

// One loaded block times its 32 activations (xv[i] = elements 4i .. 4i + 3), scale applied.
float block_dot(Block k, vec4 xv[8]) {
#if defined(WTYPE_Q4_0)
  float s = 0.0;
  for (uint w = 0; w < 4u; ++w) {
    const uint word = k.q[w];
    const vec4 a = uintBitsToFloat(((uvec4(word) >> uvec4(0, 8, 16, 24)) & 15u) | 0x4B000000u) - (MAGIC + 8.0);
    const vec4 b = uintBitsToFloat(((uvec4(word) >> uvec4(4, 12, 20, 28)) & 15u) | 0x4B000000u) - (MAGIC + 8.0);
    s += dot(a, xv[w]) + dot(b, xv[4u + w]);
  }
  return s * k.d;
#elif defined(WTYPE_Q8_0)
  const uint words[8] = uint[8](k.q0.x, k.q0.y, k.q0.z, k.q0.w, k.q1.x, k.q1.y, k.q1.z, k.q1.w);
  float s = 0.0;
  for (uint i = 0; i < 8u; ++i) s += dot(unpack_i8x4(words[i]), xv[i]);
  return s * k.d;
#elif defined(WTYPE_F16)
  const uvec4 q[4] = uvec4[4](k.q0, k.q1, k.q2, k.q3);
  float s = 0.0;
  for (uint i = 0; i < 4u; ++i)
    s += dot(vec4(unpackHalf2x16(q[i].x), unpackHalf2x16(q[i].y)), xv[2u * i]) +
         dot(vec4(unpackHalf2x16(q[i].z), unpackHalf2x16(q[i].w)), xv[2u * i + 1u]);
  return s;
#else
  float s = 0.0;
  for (uint i = 0; i < 8u; ++i) s += dot(k.v[i], xv[i]);
  return s;
#endif
}
#endif  // !WTYPE_KQUANT
