// Integer block dot products for the 8- and 4-bit formats (devices with shaderIntegerDotProduct):
// a block's 32 activations are rounded to int8 with an fp32 scale for each 16, and each 32-bit
// word of weights meets a word of activations in one 4-way int8 dot instruction. Against the fp32
// path this cuts the instructions a weight costs by about four, which is what 4-bit decode was
// limited by (PERFORMANCE.md). Precision: rounding moves an activation by at most half a step of
// max|x| / 127 (about 1/254 relative rms for uniform inputs); sums are exact in int32, then fp32.
#extension GL_EXT_spirv_intrinsics : require

// OpSDot (SPV_KHR_integer_dot_product) on packed 4 x int8: Debian's glslang has no
// GL_EXT_integer_dot_product, so the instruction is named directly. Format 0 = PackedVectorFormat4x8Bit.
spirv_instruction(extensions = ["SPV_KHR_integer_dot_product"], capabilities = [6019, 6018], id = 4450)
int dot_packed_i8(uint a, uint b, spirv_literal int format);
int sdot4(uint a, uint b) { return dot_packed_i8(a, b, 0); }
// OpSUDot: signed int8 times unsigned uint8, four of each packed in a word.
spirv_instruction(extensions = ["SPV_KHR_integer_dot_product"], capabilities = [6019, 6018], id = 4452)
int dot_packed_su8(uint signed_a, uint unsigned_b, spirv_literal int format);
int sudot4(uint signed_a, uint unsigned_b) { return dot_packed_su8(signed_a, unsigned_b, 0); }

// ROUND_MAGIC (common.glsl) rounds without a float-to-int conversion.
// The way back for |i| < 2^22, exact.
float int_to_float(int i) { return uintBitsToFloat(uint(i + 0x4B400000)) - ROUND_MAGIC; }

// A block of activations as int8 in two halves of 16, each with its own scale (an outlier costs
// only its half the precision): word i holds elements 4i .. 4i + 3, x ~ q * scale[i / 4].
struct QuantizedX {
  uint q[8];
  vec2 scale;
  vec2 sum_x;  // per half, sum(q) * scale: its activations' sum as rounded (4-bit weights are
               // stored + 8: the offset costs 8 sum_x; a K-quant's bias and min likewise)
};

// Each half's sum of q (Q4_0 and the K-quants need it; see QuantizedX).
ivec2 quantized_sums(uint q[8]) {
  ivec2 s = ivec2(0);
#if defined(WTYPE_Q4_0) || defined(WTYPE_KQUANT)
  for (uint i = 0; i < 4u; ++i) s += ivec2(sdot4(q[i], 0x01010101u), sdot4(q[4u + i], 0x01010101u));
#endif
  return s;
}

QuantizedX quantize_x(vec4 xv[8]) {
  QuantizedX r;
  for (uint h = 0; h < 2u; ++h) {
    const uint o = 4u * h;
    const vec4 m4 = max(max(abs(xv[o]), abs(xv[o + 1u])), max(abs(xv[o + 2u]), abs(xv[o + 3u])));
    const float amax = max(max(m4.x, m4.y), max(m4.z, m4.w));
    r.scale[h] = amax / 127.0;
    const float inv = amax > 0.0 ? 127.0 / amax : 0.0;
    for (uint i = o; i < o + 4u; ++i) {
      const uvec4 b = floatBitsToUint(xv[i] * inv + ROUND_MAGIC) & 255u;
      r.q[i] = b.x | (b.y << 8) | (b.z << 16) | (b.w << 24);
    }
  }
  r.sum_x = vec2(quantized_sums(r.q)) * r.scale;
  return r;
}

// A loaded block (weights.glsl) as the bytes its int8 dot products take, with its scales: word i
// meets activation word i (elements 4i .. 4i + 3; Q4_0: the unsigned nibbles, less 8 later). A
// kernel that multiplies a block with several tokens unpacks it once for all of them, and what
// depends on the weights alone is worked out there, so a token costs its dot products and a few
// float operations (a step of several sequences is bound by that per-token work).
struct BlockI8 {
  uint q[8];
#if defined(WTYPE_KQUANT)
  KScale k;  // offset less Q_BIAS * scale: the stored bias folded into the min
#else
  float d;
#endif
};
BlockI8 unpack_i8(Block k) {
  BlockI8 u;
#if defined(WTYPE_Q4_0)
  // Word w: low nibbles are weights 4w .. 4w + 3 (first half), high nibbles 16 + 4w .. (second).
  for (uint w = 0; w < 4u; ++w) {
    u.q[w] = k.q[w] & 0x0F0F0F0Fu;
    u.q[4u + w] = (k.q[w] >> 4) & 0x0F0F0F0Fu;
  }
  u.d = k.d;
#elif defined(WTYPE_KQUANT)
  for (uint w = 0; w < 4u; ++w) {
    const uvec2 q = kquant_bytes(k.q, k.high, w);
    u.q[w] = q.x;
    u.q[4u + w] = q.y;
  }
  u.k = KScale(k.k.scale, k.k.offset - Q_BIAS * k.k.scale);
#elif defined(WTYPE_Q8_0)
  u.q = uint[8](k.q0.x, k.q0.y, k.q0.z, k.q0.w, k.q1.x, k.q1.y, k.q1.z, k.q1.w);
  u.d = k.d;
#else
#error "the int8 path is for Q8_0, Q4_0 and the K-quants"
#endif
  return u;
}

// acc plus an unpacked block times a quantized block of activations, all scales applied. Every
// product is an explicit fma or stands alone (sum_x too: an add of two of them could be contracted
// where quantize_x is inlined), so no compiler contracts it differently in another kernel: a step
// of several sequences gives the bits of the one-token kernel that rounds as it does
// (test_sequences, unstaged, on NVIDIA too).
float block_dot_i8(BlockI8 u, QuantizedX x, float acc) {
  ivec2 s = ivec2(0);
  for (uint w = 0; w < 4u; ++w) s += ivec2(sdot4(u.q[w], x.q[w]), sdot4(u.q[4u + w], x.q[4u + w]));
#if defined(WTYPE_KQUANT)
  // Each half's sum(q x) exact in int32; then both scales, and the offset (a min, less the bias)
  // times the activations' sum, in fp32.
  const vec2 w = x.scale * u.k.scale;
  acc = fma(x.sum_x.y, u.k.offset.y, fma(x.sum_x.x, u.k.offset.x, acc));
  return fma(int_to_float(s.y), w.y, fma(int_to_float(s.x), w.x, acc));
#else
  float y = fma(int_to_float(s.y), x.scale.y, int_to_float(s.x) * x.scale.x);
#if defined(WTYPE_Q4_0)
  y = fma(-8.0, x.sum_x.y, fma(-8.0, x.sum_x.x, y));  // the stored + 8 times the activations' sum
#endif
  return fma(y, u.d, acc);
#endif
}
float block_dot_i8(Block k, QuantizedX x, float acc) { return block_dot_i8(unpack_i8(k), x, acc); }

// A block of activations rounded to int8 by their producer (matvec_staged.comp with QACT_OUT):
// words lo = elements 0..15, hi = 16..31, one scale for each 8. Exact int32 sums, then four fp32
// scales. For Q4_0 the caller passes, once a block for all its rows, x8 = block_x8(scale, the
// sum of each 8's q): the high nibbles are multiplied in place (unsigned, 16 q) and the stored + 8
// is taken off in fp32, which saves a third of the integer instructions a row's block costs, what
// 4-bit decode was limited by (PERFORMANCE.md, "Fewer integer instructions for Q4_0"). The
// K-quants take each 8's sum of activations from it for their mins and Q_BIAS.
struct X8 {
  vec4 scale;    // each 8's scale (Q4_0: the high halves' scales / 16)
  float offset;  // Q4_0: 8 sum(q * scale), the + 8 of the stored weights
  vec4 sum_x;    // K-quants: each 8's sum of activations, sum(q) * scale
};
X8 block_x8(vec4 scale, ivec4 sums8) {
  const vec4 sums = vec4(int_to_float(sums8.x), int_to_float(sums8.y), int_to_float(sums8.z), int_to_float(sums8.w));
#if defined(WTYPE_Q4_0)
  return X8(vec4(scale.xy, scale.zw * (1.0 / 16.0)), 8.0 * dot(sums, scale), vec4(0.0));
#else
  return X8(scale, 0.0, sums * scale);
#endif
}
float block_dot_i8_x8(Block k, uvec4 lo, uvec4 hi, X8 x8) {
#if defined(WTYPE_Q4_0)
  const uint m = 0x0F0F0F0Fu, mh = 0xF0F0F0F0u;
  const ivec4 s = ivec4(sudot4(lo.x, k.q[0] & m) + sudot4(lo.y, k.q[1] & m),
                        sudot4(lo.z, k.q[2] & m) + sudot4(lo.w, k.q[3] & m),
                        sudot4(hi.x, k.q[0] & mh) + sudot4(hi.y, k.q[1] & mh),
                        sudot4(hi.z, k.q[2] & mh) + sudot4(hi.w, k.q[3] & mh));
  const vec4 f = vec4(int_to_float(s.x), int_to_float(s.y), int_to_float(s.z), int_to_float(s.w));
  return (dot(f, x8.scale) - x8.offset) * k.d;
#elif defined(WTYPE_Q8_0)
  const ivec4 s = ivec4(sdot4(k.q0.x, lo.x) + sdot4(k.q0.y, lo.y), sdot4(k.q0.z, lo.z) + sdot4(k.q0.w, lo.w),
                        sdot4(k.q1.x, hi.x) + sdot4(k.q1.y, hi.y), sdot4(k.q1.z, hi.z) + sdot4(k.q1.w, hi.w));
  return dot(vec4(int_to_float(s.x), int_to_float(s.y), int_to_float(s.z), int_to_float(s.w)), x8.scale) * k.d;
#else
  // Quarter w's bytes: .x weights 4w .. 4w + 3 (of lo), .y 16 + 4w .. (of hi). Each 8's sum(q x)
  // exact in int32, then its activation scale; the weights' scale and offset are per 16.
  const uvec2 q0 = kquant_bytes(k.q, k.high, 0u), q1 = kquant_bytes(k.q, k.high, 1u);
  const uvec2 q2 = kquant_bytes(k.q, k.high, 2u), q3 = kquant_bytes(k.q, k.high, 3u);
  const ivec4 s = ivec4(sdot4(q0.x, lo.x) + sdot4(q1.x, lo.y), sdot4(q2.x, lo.z) + sdot4(q3.x, lo.w),
                        sdot4(q0.y, hi.x) + sdot4(q1.y, hi.y), sdot4(q2.y, hi.z) + sdot4(q3.y, hi.w));
  const vec4 dots = vec4(int_to_float(s.x), int_to_float(s.y), int_to_float(s.z), int_to_float(s.w)) * x8.scale -
                    Q_BIAS * x8.sum_x;
  return (dots.x + dots.y) * k.k.scale.x + (dots.z + dots.w) * k.k.scale.y +
         (x8.sum_x.x + x8.sum_x.y) * k.k.offset.x + (x8.sum_x.z + x8.sum_x.w) * k.k.offset.y;
#endif
}
