// Packed-fp16 block dot products for the 8- and 4-bit formats (devices with shaderFloat16): two
// multiply-adds an instruction and integer-to-half conversion by OR-ing into the mantissa of
// 1024 (exact for 0..1023), about half the instructions of the fp32 path per weight.
// Precision: the 32 activations of a block are scaled by a power of two into (-1, 1) before they
// are rounded to fp16 (relative error 2^-11, no overflow), products are summed in fp16 over 8
// weights, and everything after is fp32.
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require

// The block's activations, scaled and paired the way the format's weights come out of a word.
// Returns the factor that undoes the scaling.
float prepare_x(vec4 xv[8], out f16vec2 p[16]) {
  const vec4 m4 = max(max(max(abs(xv[0]), abs(xv[1])), max(abs(xv[2]), abs(xv[3]))),
                      max(max(abs(xv[4]), abs(xv[5])), max(abs(xv[6]), abs(xv[7]))));
  const float m = max(max(m4.x, m4.y), max(m4.z, m4.w));
  int e = 0;
  frexp(m, e);  // m = f 2^e, f in [0.5, 1)
  const float s = m > 0.0 ? ldexp(1.0, -e) : 1.0;
#if defined(WTYPE_Q4_0)
  // Quarter w: low nibbles of bytes (0, 2) and (1, 3) are elements 4w + (0, 2), 4w + (1, 3);
  // high nibbles the same 16 further on.
  for (uint w = 0; w < 4u; ++w) {
    const vec4 lo = xv[w] * s, hi = xv[4u + w] * s;
    p[4u * w] = f16vec2(lo.xz);
    p[4u * w + 1u] = f16vec2(lo.yw);
    p[4u * w + 2u] = f16vec2(hi.xz);
    p[4u * w + 3u] = f16vec2(hi.yw);
  }
#else
  // Word k holds elements 4k .. 4k + 3: bytes (0, 2) and (1, 3).
  for (uint k = 0; k < 8u; ++k) {
    const vec4 v = xv[k] * s;
    p[2u * k] = f16vec2(v.xz);
    p[2u * k + 1u] = f16vec2(v.yw);
  }
#endif
  return m > 0.0 ? ldexp(1.0, e) : 1.0;
}

float block_dot_h(Block k, f16vec2 p[16]) {
  float s = 0.0;
#if defined(WTYPE_Q4_0)
  const uvec4 q = k.q;
  for (uint w = 0; w < 4u; ++w) {
    const uint word = q[w];
    const f16vec2 bias = f16vec2(1032.0);  // 1024 + 8: the weight is q - 8
    f16vec2 acc = (unpackFloat2x16((word & 0x000F000Fu) | 0x64006400u) - bias) * p[4u * w];
    acc = fma(unpackFloat2x16(((word >> 8) & 0x000F000Fu) | 0x64006400u) - bias, p[4u * w + 1u], acc);
    acc = fma(unpackFloat2x16(((word >> 4) & 0x000F000Fu) | 0x64006400u) - bias, p[4u * w + 2u], acc);
    acc = fma(unpackFloat2x16(((word >> 12) & 0x000F000Fu) | 0x64006400u) - bias, p[4u * w + 3u], acc);
    s += float(acc.x) + float(acc.y);
  }
#elif defined(WTYPE_Q8_0)
  const uvec4 v0 = k.q0, v1 = k.q1;
  const uint words[8] = uint[8](v0.x, v0.y, v0.z, v0.w, v1.x, v1.y, v1.z, v1.w);
  const f16vec2 bias = f16vec2(1152.0);  // 1024 + 128: the sign bit flipped makes q + 128
  for (uint w = 0; w < 4u; ++w) {
    f16vec2 acc = f16vec2(0.0);
    for (uint h = 0; h < 2u; ++h) {
      const uint word = words[2u * w + h], k = 2u * w + h;
      acc = fma(unpackFloat2x16(((word & 0x00FF00FFu) ^ 0x00800080u) | 0x64006400u) - bias, p[2u * k], acc);
      acc = fma(unpackFloat2x16((((word >> 8) & 0x00FF00FFu) ^ 0x00800080u) | 0x64006400u) - bias, p[2u * k + 1u], acc);
    }
    s += float(acc.x) + float(acc.y);
  }
#else
#error "the fp16 path is for Q8_0 and Q4_0"
#endif
  return s * k.d;
}
