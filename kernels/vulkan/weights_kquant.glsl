// GGUF K-quant blocks as uploaded (core/runtime/vulkan/kquant_layout.h), included by weights.glsl:
// binding 0 holds each 32-weight block's low quant bits (Q4_K, Q5_K, Q6_K: nibbles in Q4_0's order,
// a uvec4; Q3_K, Q2_K: 2 bits, a uvec2), binding 1 each 256-weight super-block's SB_WORDS words of
// scales, mins and high bits. Weights are x = (q - Q_BIAS) * scale + offset, with a scale and an
// offset for each half (16 weights) of a block. GGUF's other 32-weight formats (WTYPE_BLOCK32,
// runtime/vulkan/weight_layout.h) are read the same way: their nibbles in binding 0 as Q4_0's, and
// BLOCK_HALVES halfwords a block in binding 1, the GGUF block's own: d, then m (Q4_1, Q5_1), then qh
// (Q5_0, Q5_1: bit j = bit 4 of q[j], as Q5_K's word). Q5_0: (q - 16) d; Q4_1, Q5_1: q d + m;
// IQ4_NL: IQ4NL_GRID[q] d. IQ4_XS (runtime/vulkan/kquant_layout.h) is a super-block format: its
// nibbles as Q4_0's, 2 words a super-block (half2(d, scales_h), scales_l): IQ4NL_GRID[q] d (ls - 32).
#if defined(WTYPE_IQ4_NL) || defined(WTYPE_IQ4_XS)
#define IQ4_GRID
// The IQ4_NL grid (quant/block32_formats.h, kIq4nlValues).
const int IQ4NL_GRID[16] = int[16](-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113);
#endif
#if defined(WTYPE_BLOCK32)
const uint SB_WORDS = 0u;  // no super-blocks
#if defined(WTYPE_Q5_0)
const float Q_BIAS = 16.0;
const uint BLOCK_HALVES = 3u;
#elif defined(WTYPE_Q4_1)
const float Q_BIAS = 0.0;
const uint BLOCK_HALVES = 2u;
#elif defined(WTYPE_Q5_1)
const float Q_BIAS = 0.0;
const uint BLOCK_HALVES = 4u;
#else
const float Q_BIAS = 0.0;
const uint BLOCK_HALVES = 1u;
#endif
#elif defined(WTYPE_IQ4_XS)
const uint SB_WORDS = 2u;
const float Q_BIAS = 0.0;
#elif defined(WTYPE_Q6_K)
const uint SB_WORDS = 21u;
const float Q_BIAS = 32.0;
#elif defined(WTYPE_Q5_K)
const uint SB_WORDS = 12u;
const float Q_BIAS = 0.0;
#elif defined(WTYPE_Q4_K)
const uint SB_WORDS = 4u;
const float Q_BIAS = 0.0;
#elif defined(WTYPE_Q3_K)
const uint SB_WORDS = 12u;
const float Q_BIAS = 4.0;
#else
const uint SB_WORDS = 5u;
const float Q_BIAS = 0.0;
#endif
#if defined(WTYPE_Q3_K) || defined(WTYPE_Q2_K)
#define TWO_BIT_QUANTS
#endif
#if defined(WTYPE_Q3_K)
#define TWO_BIT_QUANTS_SHIFT 2u  // where block_high's one bit goes in q (Q3_K, Q5_K)
#else
#define TWO_BIT_QUANTS_SHIFT 4u
#endif

uint quarter_first(uint w) { return w; }
uint quarter_second(uint w) { return 4u + w; }

struct KScale {
  vec2 scale, offset;  // .x: the block's weights 0..15, .y: 16..31
};

// Byte i of the words from `base` on.
uint scale_byte(uint base, uint i) { return (wscale[base + (i >> 2)] >> (8u * (i & 3u))) & 255u; }

#if defined(WTYPE_Q3_K)
// The signed 6-bit scale of sub-block s (16 weights) from GGUF's 12 bytes (BlockQ3K).
float q3k_scale(uint base, uint s) {
  const uint low = s < 8u ? scale_byte(base, s) & 15u : scale_byte(base, s - 8u) >> 4;
  const uint high = (scale_byte(base, 8u + (s & 3u)) >> (2u * (s >> 2))) & 3u;
  return float(int(low | (high << 4)) - 32);
}
#endif

#if defined(WTYPE_BLOCK32)
// Halfword i of binding 1.
uint scale_half(uint i) { return (wscale[i >> 1] >> (16u * (i & 1u))) & 0xFFFFu; }
#endif

KScale block_kscale(uint gb) {
  const uint base = (gb >> 3) * SB_WORDS, j = gb & 7u;
#if defined(WTYPE_Q4_1) || defined(WTYPE_Q5_1)
  const uint at = BLOCK_HALVES * gb;
  return KScale(vec2(unpackHalf2x16(scale_half(at)).x), vec2(unpackHalf2x16(scale_half(at + 1u)).x));
#elif defined(WTYPE_BLOCK32)
  return KScale(vec2(unpackHalf2x16(scale_half(BLOCK_HALVES * gb)).x), vec2(0.0));
#elif defined(WTYPE_IQ4_XS)
  // Sub-block j's 6-bit scale: the low 4 bits nibble j of scales_l (word 1), the high 2 bits
  // bits 2j .. 2j + 1 of scales_h (the high half of word 0).
  const uint w0 = wscale[base], w1 = wscale[base + 1u];
  const uint ls = ((w1 >> (4u * j)) & 15u) | (((w0 >> (16u + 2u * j)) & 3u) << 4);
  return KScale(vec2(unpackHalf2x16(w0).x * float(int(ls) - 32)), vec2(0.0));
#elif defined(WTYPE_Q6_K)
  // int8 scales of sub-blocks 2j, 2j + 1 (16 weights each), then d.
  const int word = int(wscale[base + 16u + (j >> 1)] >> (16u * (j & 1u)));
  const float d = unpackHalf2x16(wscale[base + 20u]).x;
  return KScale(d * vec2(float(bitfieldExtract(word, 0, 8)), float(bitfieldExtract(word, 8, 8))), vec2(0.0));
#elif defined(WTYPE_Q3_K)
  const float d = unpackHalf2x16(wscale[base + 11u]).x;
  return KScale(d * vec2(q3k_scale(base + 8u, 2u * j), q3k_scale(base + 8u, 2u * j + 1u)), vec2(0.0));
#elif defined(WTYPE_Q2_K)
  // A byte a sub-block: scale in the low nibble, min in the high one.
  const vec2 dm = unpackHalf2x16(wscale[base + 4u]);
  const uvec2 b = uvec2(scale_byte(base, 2u * j), scale_byte(base, 2u * j + 1u));
  return KScale(dm.x * vec2(b & 15u), -dm.y * vec2(b >> 4));
#else
  // d, dmin, then GGUF's 12 bytes of 6-bit scales and mins (quant/kquant_blocks.h, BlockQ4K): the
  // super-block's first 16 bytes, one aligned 16-byte load (SB_WORDS is 4 or 12), bytes taken from
  // registers rather than a load for each.
  const uvec4 v = wscale4[base >> 2];
  const vec2 dm = unpackHalf2x16(v.x);
  const uvec3 b = v.yzw;  // scale bytes 0..11
  uint sc, m;
  if (j < 4u) {
    sc = (b.x >> (8u * j)) & 63u;
    m = (b.y >> (8u * j)) & 63u;
  } else {
    const uint low = (b.z >> (8u * (j - 4u))) & 255u;
    sc = (low & 15u) | (((b.x >> (8u * (j - 4u))) >> 6 & 3u) << 4);
    m = (low >> 4) | (((b.y >> (8u * (j - 4u))) >> 6 & 3u) << 4);
  }
  return KScale(vec2(dm.x * float(sc)), vec2(-dm.y * float(m)));
#endif
}

// The bits above those in binding 0: Q5_K, Q5_0 and Q5_1 one word (bit j: q[j]'s bit 4), Q3_K one (bit j:
// q[j]'s bit 2), Q6_K two (q[j]'s bits 4-5 at bits 2 (j % 16) of word j / 16).
uvec2 block_high(uint gb) {
  const uint base = (gb >> 3) * SB_WORDS, j = gb & 7u;
#if defined(WTYPE_Q5_0) || defined(WTYPE_Q5_1)
  const uint at = BLOCK_HALVES * gb + BLOCK_HALVES - 2u;  // qh: the block's last two halfwords
  return uvec2(scale_half(at) | (scale_half(at + 1u) << 16), 0u);
#elif defined(WTYPE_Q6_K)
  return uvec2(wscale[base + 2u * j], wscale[base + 2u * j + 1u]);
#elif defined(WTYPE_Q5_K)
  return uvec2(wscale[base + 4u + j], 0u);
#elif defined(WTYPE_Q3_K)
  return uvec2(wscale[base + j], 0u);
#else
  return uvec2(0u);
#endif
}

// The block's words in binding 0 (2-bit quants: in .xy).
uvec4 block_quants(uint gb) {
#if defined(TWO_BIT_QUANTS)
  return uvec4(w2[gb], 0u, 0u);
#else
  return w4[gb];
#endif
}

// Quarter w's quants less Q_BIAS, as floats: a = q[4w .. 4w + 3], b = q[16 + 4w .. 16 + 4w + 3].
void kquants(uvec4 q, uvec2 high, uint w, out vec4 a, out vec4 b) {
#if defined(TWO_BIT_QUANTS)
  uvec4 qa = (uvec4(q.x) >> (8u * w + uvec4(0, 2, 4, 6))) & 3u;
  uvec4 qb = (uvec4(q.y) >> (8u * w + uvec4(0, 2, 4, 6))) & 3u;
#else
  uvec4 qa = (uvec4(q[w]) >> uvec4(0, 8, 16, 24)) & 15u;
  uvec4 qb = (uvec4(q[w]) >> uvec4(4, 12, 20, 28)) & 15u;
#endif
#if defined(WTYPE_Q5_K) || defined(WTYPE_Q3_K) || defined(WTYPE_Q5_0) || defined(WTYPE_Q5_1)
  // One bit a weight above the others: 16 (Q5_K) or 4 (Q3_K).
  const uint hb = TWO_BIT_QUANTS_SHIFT;
  qa |= ((uvec4(high.x) >> (4u * w + uvec4(0, 1, 2, 3))) & 1u) << hb;
  qb |= ((uvec4(high.x) >> (16u + 4u * w + uvec4(0, 1, 2, 3))) & 1u) << hb;
#elif defined(WTYPE_Q6_K)
  qa |= ((uvec4(high.x) >> (8u * w + uvec4(0, 2, 4, 6))) & 3u) << 4;
  qb |= ((uvec4(high.y) >> (8u * w + uvec4(0, 2, 4, 6))) & 3u) << 4;
#endif
#if defined(IQ4_GRID)
  a = vec4(IQ4NL_GRID[qa.x], IQ4NL_GRID[qa.y], IQ4NL_GRID[qa.z], IQ4NL_GRID[qa.w]);
  b = vec4(IQ4NL_GRID[qb.x], IQ4NL_GRID[qb.y], IQ4NL_GRID[qb.z], IQ4NL_GRID[qb.w]);
#else
  a = uintBitsToFloat(qa | 0x4B000000u) - (MAGIC + Q_BIAS);
  b = uintBitsToFloat(qb | 0x4B000000u) - (MAGIC + Q_BIAS);
#endif
}

// Quarter w's quants (not less Q_BIAS; IQ4_NL, IQ4_XS: their grid values) as bytes, for int8 dot products (dot_i8.glsl): .x holds
// q[4w .. 4w + 3], .y q[16 + 4w .. 16 + 4w + 3]. spread2 moves 2-bit field i of v to byte i, spread1 bit i.
uint spread2(uint v) { return (v & 3u) | ((v & 12u) << 6) | ((v & 48u) << 12) | ((v & 192u) << 18); }
uint spread1(uint v) { return (v & 1u) | ((v & 2u) << 7) | ((v & 4u) << 14) | ((v & 8u) << 21); }
#if defined(IQ4_GRID)
// Four quants 0..15 (a byte each) as their grid values, int8 bytes (signed: sdot4 takes them so).
uint grid_bytes(uint q) {
  uint r = 0u;
  for (uint i = 0u; i < 4u; ++i) r |= (uint(IQ4NL_GRID[(q >> (8u * i)) & 15u]) & 255u) << (8u * i);
  return r;
}
#endif
uvec2 kquant_bytes(uvec4 q, uvec2 high, uint w) {
#if defined(TWO_BIT_QUANTS)
  uvec2 r = uvec2(spread2((q.x >> (8u * w)) & 255u), spread2((q.y >> (8u * w)) & 255u));
#else
  uvec2 r = uvec2(q[w] & 0x0F0F0F0Fu, (q[w] >> 4) & 0x0F0F0F0Fu);
#endif
#if defined(WTYPE_Q5_K) || defined(WTYPE_Q3_K) || defined(WTYPE_Q5_0) || defined(WTYPE_Q5_1)
  r |= uvec2(spread1((high.x >> (4u * w)) & 15u), spread1((high.x >> (16u + 4u * w)) & 15u)) << TWO_BIT_QUANTS_SHIFT;
#elif defined(WTYPE_Q6_K)
  r |= uvec2(spread2((high.x >> (8u * w)) & 255u), spread2((high.y >> (8u * w)) & 255u)) << 4;
#elif defined(IQ4_GRID)
  r = uvec2(grid_bytes(r.x), grid_bytes(r.y));
#endif
  return r;
}

void dequant_quarter(uint gb, uint w, out vec4 a, out vec4 b) {
  kquants(block_quants(gb), block_high(gb), w, a, b);
  const KScale k = block_kscale(gb);
  a = a * k.scale.x + k.offset.x;
  b = b * k.scale.y + k.offset.y;
}

struct Block { uvec4 q; uvec2 high; KScale k; };
Block load_block(uint gb) { return Block(block_quants(gb), block_high(gb), block_kscale(gb)); }

// The mins of Q4_K, Q5_K, Q2_K: offset times the sum of each half's activations.
float block_dot(Block k, vec4 xv[8]) {
  vec2 s = vec2(0.0), sx = vec2(0.0);
  for (uint w = 0; w < 4u; ++w) {
    vec4 a, b;
    kquants(k.q, k.high, w, a, b);
    s += vec2(dot(a, xv[w]), dot(b, xv[4u + w]));
    sx += vec2(dot(xv[w], vec4(1.0)), dot(xv[4u + w], vec4(1.0)));
  }
  return dot(s, k.k.scale) + dot(sx, k.k.offset);
}
