// Weight matrices as uploaded (core/runtime/vulkan/weight_layout.h): every row is a run of 32-weight
// blocks; block gb = row * blocks_per_row + b. Binding 0 holds the weights, binding 1 the fp16 block
// scales of the quantized formats (two a word). A block is read as four quarters of 8 weights:
// quarter w yields two vec4 of weights and the vec4 indices (0..7) of the elements they multiply.
#if defined(WTYPE_F32)
layout(std430, binding = 0) readonly buffer WeightData { vec4 w4[]; };   // 8 vec4 a block
#else
layout(std430, binding = 0) readonly buffer WeightData { uvec4 w4[]; };  // F16: 4, Q8_0: 2, Q4_0: 1 a block
#endif
layout(std430, binding = 1) readonly buffer WeightScales { uint wscale[]; };

float block_scale(uint gb) {
#if defined(WTYPE_Q8_0) || defined(WTYPE_Q4_0)
  const vec2 d = unpackHalf2x16(wscale[gb >> 1]);
  return (gb & 1u) == 0u ? d.x : d.y;
#else
  return 1.0;
#endif
}

#if defined(WTYPE_Q4_0)
// Byte j holds q[j] (low nibble) and q[j + 16] (high nibble); weight = q - 8.
uint quarter_first(uint w) { return w; }
uint quarter_second(uint w) { return 4u + w; }
void quarter(uint gb, uint w, out vec4 a, out vec4 b) {
  const uint word = w4[gb][w];
  a = vec4((uvec4(word) >> uvec4(0, 8, 16, 24)) & 15u) - 8.0;
  b = vec4((uvec4(word) >> uvec4(4, 12, 20, 28)) & 15u) - 8.0;
}
#elif defined(WTYPE_Q8_0)
uint quarter_first(uint w) { return 2u * w; }
uint quarter_second(uint w) { return 2u * w + 1u; }
vec4 unpack_i8x4(uint word) { return vec4((ivec4(word) << ivec4(24, 16, 8, 0)) >> 24); }
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
#error "define one of WTYPE_F32, WTYPE_F16, WTYPE_Q8_0, WTYPE_Q4_0"
#endif

// One block times 32 activations (xv[i] = elements 4i..4i+3), scale applied.
float block_dot(uint gb, vec4 xv[8]) {
  float s = 0.0;
  for (uint w = 0; w < 4u; ++w) {
    vec4 a, b;
    quarter(gb, w, a, b);
    s += dot(a, xv[quarter_first(w)]) + dot(b, xv[quarter_second(w)]);
  }
  return s * block_scale(gb);
}
