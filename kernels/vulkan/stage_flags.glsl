// Stage flags: a decode step recorded without pipeline barriers (CommandSequence, "stage flags").
// The recording numbers its dependent steps 1, 2, ... (stage); a workgroup of stage s waits until
// all stage_wait_groups workgroups of stage s - 1 have counted themselves done, and counts itself
// done in stage s when it has finished. The GPU then starts each dispatch while the previous one
// drains instead of idling at a barrier, and a matrix's first weight loads are already in flight
// when its input arrives (PERFORMANCE.md, "Stage flags instead of barriers").
//
// Since every workgroup of stage s waits for all of stage s - 1, each stage's work happens after
// all earlier stages' work: the recording keeps the order of a chain of barriers. Workgroups of a
// stage only wait once the GPU has started all workgroups of the stage before (it starts them in
// order), so a waiting workgroup never holds the place of one it waits for. Vulkan does not
// promise that order, so the wait is bounded: past the limit it marks the step abandoned, every
// later wait passes at once, and the host runs the step again with barriers.
//
// No barrier invalidates the caches between stages, so a stage must not find an earlier stage's
// data stale in its L1: a decode step writes every activation address once (each layer has its
// own buffers, ModelGpu's LayerGpu::token), and only after its stage's wait does anything read it.
// Reading inputs through `coherent` bindings instead cost a fifth of the decode speed on an H100.
//
// Include before the kernel's push_constant block `pc`, which ends with STAGE_PUSH, and call
// stage_wait(STAGE_ARGS) and stage_signal(STAGE_ARGS).
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require

// Word 0: nonzero when a wait gave up in this step. Word 32 (s + 1): workgroups of stage s that
// finished. A counter a 128-byte line, so the workgroups polling stage s - 1 and those counting
// themselves done in stage s do not contend for one line.
layout(buffer_reference, std430, buffer_reference_align = 4) coherent volatile buffer StageCounters {
  uint words[];
};
const uint STAGE_LINE_WORDS = 32u;

// The last 16 bytes of every kernel's push constants (kStagePushOffset in
// core/runtime/vulkan/sequence.h). stage 0: the recording has barriers, nothing to wait for.
#define STAGE_PUSH                                                                                    \
  layout(offset = 112) uvec2 stage_counters;                                                         \
  uint stage;                                                                                        \
  uint stage_wait_groups;
#define STAGE_ARGS pc.stage_counters, pc.stage, pc.stage_wait_groups

// A wait polls once a round, then idles a while (up to STAGE_BACKOFF steps of dependent
// arithmetic, about a microsecond on an H100), so that hundreds of waiting workgroups do not flood
// the one L2 line; a dispatch of few workgroups (add_norm has one) idles less, down to not at all.
// Rounds and idle are set per device (PipelineLibrary): lavapipe counts every loop iteration of an
// invocation and switches it off after 65535, so there their product stays well below that.
layout(constant_id = 14) const uint STAGE_SPIN_ROUNDS = 1000u;
layout(constant_id = 15) const uint STAGE_BACKOFF = 1u;

float stage_idle(float v) {
  const uint groups = gl_NumWorkGroups.x * gl_NumWorkGroups.y * gl_NumWorkGroups.z;
  const uint steps = min(STAGE_BACKOFF, groups / 32u);
  for (uint i = 0u; i < steps; ++i) {
    v = fma(v, 0.999, 0.001); v = fma(v, 0.999, 0.001); v = fma(v, 0.999, 0.001); v = fma(v, 0.999, 0.001);
    v = fma(v, 0.999, 0.001); v = fma(v, 0.999, 0.001); v = fma(v, 0.999, 0.001); v = fma(v, 0.999, 0.001);
  }
  return v;
}

// Invocation 0 polls `word` until it reaches `target` or the wait gives up.
void stage_poll(uvec2 counters, uint word, uint target) {
  if (gl_LocalInvocationIndex == 0u && target > 0u) {
    StageCounters c = StageCounters(counters);
    float idle = 0.0;
    for (uint round = 0u; c.words[word] < target && c.words[0] == 0u; ++round) {
      if (round == STAGE_SPIN_ROUNDS) {
        atomicOr(c.words[0], 1u);
        break;
      }
      idle = stage_idle(idle);
    }
    if (idle < 0.0) c.words[1] = 0u;  // never: keeps the idle arithmetic
  }
}

// Before the first read of anything an earlier stage wrote. Every invocation must call it.
void stage_wait(uvec2 counters, uint stage, uint wait_groups) {
  if (stage == 0u) return;
  stage_poll(counters, STAGE_LINE_WORDS * stage, wait_groups);  // stage - 1's counter
  memoryBarrierBuffer();
  barrier();
}

// A stage's early part: its first part_groups workgroups (in dispatch order) also count
// themselves in word STAGE_PART_WORD of the stage's line, so that the next stage can start on
// what they wrote while the rest still run (down on gate_up's first outputs: PERFORMANCE.md,
// "Ninth session"). The next stage waits for the part first, reads only what the part wrote, then
// waits for the whole stage with stage_wait before reading the rest.
const uint STAGE_PART_WORD = 16u;
void stage_wait_part(uvec2 counters, uint stage, uint part_groups) {
  if (stage == 0u) return;
  stage_poll(counters, STAGE_LINE_WORDS * stage + STAGE_PART_WORD, part_groups);
  memoryBarrierBuffer();
  barrier();
}

// After the workgroup's last write. Every invocation must call it, once.
void stage_signal(uvec2 counters, uint stage, uint wait_groups) {
  if (stage == 0u) return;
  memoryBarrierBuffer();  // this invocation's writes are visible device-wide ...
  barrier();              // ... for every invocation, before the count says so
  if (gl_LocalInvocationIndex == 0u) atomicAdd(StageCounters(counters).words[STAGE_LINE_WORDS * (stage + 1u)], 1u);
}

// stage_signal for a workgroup of a stage with an early part; in_part: it is one of the part's.
void stage_signal_part(uvec2 counters, uint stage, uint wait_groups, bool in_part) {
  if (stage == 0u) return;
  stage_signal(counters, stage, wait_groups);  // every invocation's writes are visible by now
  if (in_part && gl_LocalInvocationIndex == 0u)
    atomicAdd(StageCounters(counters).words[STAGE_LINE_WORDS * (stage + 1u) + STAGE_PART_WORD], 1u);
}
