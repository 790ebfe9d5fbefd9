// Streaming reads for the decode skeleton benchmark (tests/vulkan/bench_decode_skeleton.cpp):
// what a matrix-vector kernel would cost if its arithmetic were free. Each invocation keeps
// LOADS 16-byte loads in flight and issues the next iteration's before folding the current one,
// as matvec.comp does; consecutive invocations read consecutive words.
const uint LOADS = 4;
const uint WG = 256;

// Reads words [0, count) of buffer `which` over `groups` workgroups, starting with the loads in
// `cur` (already issued by stream_first) and folding everything into acc.
#define STREAM_FUNCTIONS(NAME, BUF)                                                     \
  void NAME##_first(uint count, out uvec4 cur[LOADS]) {                                 \
    const uint i = gl_WorkGroupID.x * WG * LOADS + gl_LocalInvocationID.x;              \
    for (uint k = 0; k < LOADS; ++k) cur[k] = i + k * WG < count ? BUF[i + k * WG] : uvec4(0); \
  }                                                                                     \
  void NAME##_rest(uint count, uint groups, inout uvec4 cur[LOADS], inout uvec4 acc) {  \
    const uint step = groups * WG * LOADS;                                              \
    for (uint i = gl_WorkGroupID.x * WG * LOADS + gl_LocalInvocationID.x; i < count; i += step) { \
      uvec4 next[LOADS];                                                                \
      for (uint k = 0; k < LOADS; ++k) {                                                \
        const uint j = i + step + k * WG;                                               \
        next[k] = j < count ? BUF[j] : uvec4(0);                                        \
      }                                                                                 \
      for (uint k = 0; k < LOADS; ++k) acc ^= cur[k];                                   \
      cur = next;                                                                       \
    }                                                                                   \
  }
