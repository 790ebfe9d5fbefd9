// The context a load gets when its caller leaves the length to the engine (LoadOptions::
// context_length 0): the model's own trained length, cut to what the memory it will run in holds
// next to its weights, and to what one GPU buffer holds (a global layer's keys or values, and the
// RoPE table, are one binding each). Cut on the GPU rather than let the load fall back to the CPU.
#pragma once

#include <cstdint>
#include <string>

#include "kiln/types.h"
#include "model/config.h"
#include "quant/dtype.h"

namespace kiln {

struct ContextBudget {
  uint64_t memory_bytes = 0;       // what the weights and the KV cache may take together; 0: unknown
  uint64_t max_binding_bytes = 0;  // the largest single GPU buffer (maxStorageBufferRange); 0: no such limit
  std::string where;               // "RAM", "the memory of <GPU name>": for the load's note
};

// Keys and values of every layer for `context` positions (sliding layers hold at most their window).
uint64_t kv_cache_bytes_for(const Gemma3Config& c, int context, DType element);

// The longest context up to the trained length whose KV cache fits beside `weight_bytes` in the
// budget's memory, less a margin for activations and everything else (a tenth, at least 512 MiB),
// and whose per-layer buffers each fit max_binding_bytes; rounded down to a multiple of 256 (1024
// past 8192). Never below min(trained, 1024): a model that fits at all gets a usable context, and
// one that does not fails with the load's own error. Unknown memory keeps min(trained, 8192).
int default_context(const Gemma3Config& c, uint64_t weight_bytes, DType kv_element, const ContextBudget& budget);

// Where a load with `options` runs and what that holds: the Vulkan device it would pick (its
// largest device-local heap, and RAM when that heap is the system's), else the RAM available now.
ContextBudget context_budget_for(const LoadOptions& options);

}  // namespace kiln
