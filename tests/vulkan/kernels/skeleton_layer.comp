#version 450
// The decode skeleton's persistent layer (tests/vulkan/bench_decode_skeleton.cpp): one dispatch
// streams a layer's four matrices (q/k/v, o, gate_up, down) with device-wide barriers where the
// real layer has dependencies (after q/k/v, after attention, after o, after gate_up). It measures
// what a persistent decode kernel could reach; it is not used by the engine, because Vulkan does
// not promise that the workgroups of one dispatch run concurrently (the barrier relies on every
// workgroup being resident: `groups` must fit the GPU at once).
// With PREFETCH, each workgroup issues its first loads of the next matrix before it waits.
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer Qkv { uvec4 qkv[]; };
layout(std430, binding = 1) readonly buffer O { uvec4 o[]; };
layout(std430, binding = 2) readonly buffer GateUp { uvec4 gate_up[]; };
layout(std430, binding = 3) readonly buffer Down { uvec4 down[]; };
layout(std430, binding = 4) coherent volatile buffer Sync { uint arrived; };
layout(std430, binding = 5) writeonly buffer Sink { uint sink[]; };
layout(push_constant) uniform Push {
  uint count[4];   // words of each matrix
  uint base;       // `arrived` at the start of this dispatch
  uint prefetch;   // 1: next matrix's first loads before each barrier
  uint never;
} pc;

#include "stream_read.glsl"
STREAM_FUNCTIONS(qkv_stream, qkv)
STREAM_FUNCTIONS(o_stream, o)
STREAM_FUNCTIONS(gate_up_stream, gate_up)
STREAM_FUNCTIONS(down_stream, down)

uint barriers_passed = 0;
void grid_barrier() {
  barriers_passed++;
  barrier();
  if (gl_LocalInvocationIndex == 0u) {
    atomicAdd(arrived, 1u);
    const uint target = pc.base + barriers_passed * gl_NumWorkGroups.x;
    while (arrived < target) {
    }
  }
  barrier();
}

void main() {
  const uint G = gl_NumWorkGroups.x;
  uvec4 acc = uvec4(0), cur[LOADS];
  qkv_stream_first(pc.count[0], cur);
  qkv_stream_rest(pc.count[0], G, cur, acc);
  grid_barrier();  // q/k/v -> attention
  if (pc.prefetch != 0u) o_stream_first(pc.count[1], cur);
  grid_barrier();  // attention -> o
  if (pc.prefetch == 0u) o_stream_first(pc.count[1], cur);
  o_stream_rest(pc.count[1], G, cur, acc);
  if (pc.prefetch != 0u) gate_up_stream_first(pc.count[2], cur);
  grid_barrier();  // o (+ the add_norm every workgroup would do itself) -> gate_up
  if (pc.prefetch == 0u) gate_up_stream_first(pc.count[2], cur);
  gate_up_stream_rest(pc.count[2], G, cur, acc);
  if (pc.prefetch != 0u) down_stream_first(pc.count[3], cur);
  grid_barrier();  // gate_up -> down
  if (pc.prefetch == 0u) down_stream_first(pc.count[3], cur);
  down_stream_rest(pc.count[3], G, cur, acc);
  if (pc.never != 0u) sink[gl_LocalInvocationID.x] = acc.x ^ acc.y ^ acc.z ^ acc.w;
}
