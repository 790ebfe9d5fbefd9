// The AIE attention kernel run on the CPU: the same buffers in, the same buffers out, the same
// arithmetic in the same order (npu_kernel_math.h), one compute tile's step at a time.
#pragma once

#include <memory>

#include "runtime/npu/npu_device.h"

namespace kiln {

class ThreadPool;

// Compute tiles are independent within a launch, so they run in parallel on the pool. Checks the
// deadline between steps.
std::unique_ptr<NpuDevice> make_npu_emulator(ThreadPool& pool);

// One compute tile's step, exactly as kernels/npu/attention_kernel.cc runs it: q_object holds the
// descriptor and Q tile, kv_objects the step's tiles_per_step K/V objects, out_object receives O, m, l.
// In the split variant (kv_split 2) a step is one column's half of a key chunk and out_object its
// partial state; the pair's merge is host code (NpuMerge), the same for the emulator and the NPU.
void emulate_npu_step(const NpuTileShape& shape, const int32_t* q_object, const int32_t* kv_objects,
                      int32_t* out_object);

}  // namespace kiln
