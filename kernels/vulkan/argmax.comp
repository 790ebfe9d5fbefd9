#version 450
// Greedy decoding's pick made on the device: the index of the largest logit, so that a decode
// step reads back 4 bytes instead of its whole row of logits (262144 floats at Gemma 3) and the
// host does not scan them between steps. The rule is the CPU's kiln::argmax: the lowest index
// wins a tie, NaN never wins, and when nothing is above -inf the first value that is not NaN
// does; 0xffffffff (-1) when every value is NaN.
// Two dispatches of this kernel: pass 0, workgroup g reduces logits [g per_group, (g + 1)
// per_group) to (value, index) in partial[g]; pass 1, one workgroup reduces the `count` partials
// and writes the index to pick[slot] (host-visible memory) and, as the next step's input, to
// tokens[0] (0 when every value is NaN: an index that can be read), so that a greedy decode step
// can be queued before this one is done.
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 256) in;

#include "common.glsl"
#include "stage_flags.glsl"

layout(std430, binding = 0) readonly buffer Logits { float logits[]; };
layout(std430, binding = 1) buffer Partials { uvec2 partial[]; };  // (float bits, index)
layout(std430, binding = 2) writeonly buffer Pick { uint pick[]; };
layout(std430, binding = 3) writeonly buffer Tokens { uint tokens[]; };

layout(push_constant) uniform Push {
  uint count;      // pass 0: logits in the row; pass 1: partials
  uint per_group;  // pass 0: logits a workgroup takes
  uint pass;
  uint slot;       // pass 1: where in pick
  STAGE_PUSH
} pc;

const uint NONE = 0xffffffffu;
const float NEG_INF = -1.0 / 0.0;  // -inf

// (v, i) ranks before (best, at): larger, or equal and earlier. NaN compares false both ways, so
// it never enters; -inf equals the starting -inf, so the earliest -inf enters.
bool ranks_before(float v, uint i, float best, uint at) { return v > best || (v == best && i < at); }

shared float group_best[MAX_SUBGROUPS];
shared uint group_at[MAX_SUBGROUPS];

void main() {
  stage_wait(STAGE_ARGS);
  const uint tid = gl_LocalInvocationIndex;
  float best = NEG_INF;
  uint at = NONE;
  if (pc.pass == 0u) {
    const uint begin = gl_WorkGroupID.x * pc.per_group, end = min(begin + pc.per_group, pc.count);
    for (uint i = begin + tid; i < end; i += gl_WorkGroupSize.x) {
      const float v = logits[i];
      if (ranks_before(v, i, best, at)) {
        best = v;
        at = i;
      }
    }
  } else {
    for (uint i = tid; i < pc.count; i += gl_WorkGroupSize.x) {
      const uvec2 p = partial[i];
      if (ranks_before(uintBitsToFloat(p.x), p.y, best, at)) {
        best = uintBitsToFloat(p.x);
        at = p.y;
      }
    }
  }
  // best is never NaN here, so the subgroup's maximum is well defined; the lowest index holding it
  // wins (an invocation that saw nothing holds (-inf, NONE) and loses to any -inf it ties).
  const float sub_best = subgroupMax(best);
  const uint sub_at = subgroupMin(best == sub_best ? at : NONE);
  if (subgroupElect()) {
    group_best[gl_SubgroupID] = sub_best;
    group_at[gl_SubgroupID] = sub_at;
  }
  barrier();
  if (tid == 0u) {
    best = NEG_INF;
    at = NONE;
    for (uint s = 0u; s < gl_NumSubgroups; ++s)
      if (ranks_before(group_best[s], group_at[s], best, at)) {
        best = group_best[s];
        at = group_at[s];
      }
    if (pc.pass == 0u) partial[gl_WorkGroupID.x] = uvec2(floatBitsToUint(best), at);
    else {
      pick[pc.slot] = at;
      tokens[0] = at == NONE ? 0u : at;
    }
  }
  stage_signal(STAGE_ARGS);
}
