#version 450
// Reads `count` 16-byte words of binding 0 and keeps nothing: one matrix of the decode skeleton
// benchmark, or the read-bandwidth ceiling. `never` is 0; the store only keeps the loads alive.
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer Words { uvec4 words[]; };
layout(std430, binding = 1) writeonly buffer Sink { uint sink[]; };
layout(push_constant) uniform Push { uint count, never; } pc;

#include "stream_read.glsl"
STREAM_FUNCTIONS(words_stream, words)

void main() {
  uvec4 cur[LOADS];
  uvec4 acc = uvec4(0);
  words_stream_first(pc.count, cur);
  words_stream_rest(pc.count, gl_NumWorkGroups.x, cur, acc);
  if (pc.never != 0u) sink[gl_LocalInvocationID.x] = acc.x ^ acc.y ^ acc.z ^ acc.w;
}
