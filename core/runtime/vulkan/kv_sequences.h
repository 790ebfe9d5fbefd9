// Several sequences on the device (Backend::set_sequences: the server's slots): each has its own KV
// cache, one binding a layer's keys or values as sequence 0's (so each stays within the device's
// storage-binding range: 128 MiB on lavapipe), with the descriptor sets of the kernels that read
// and write it. Sequences after the first hold their own memory and sets, freed when they go.
//
// A decode step of several sequences (Backend::forward_sequences, record_items in forward.h) runs
// their tokens as the rows of one batch: the matrices through matvec_items_* (each weight block
// read once for all rows), the attention as one attention_decode_items_* dispatch an item on its
// own sequence's cache, with its own partials and counters (StepItems) so that the items'
// dispatches need no barrier between them.
#pragma once

#include <vulkan/vulkan.h>

#include <memory>
#include <vector>

#include "runtime/vulkan/memory.h"
#include "runtime/vulkan/pipeline.h"

namespace kiln::vk {

// Items a step of several sequences takes at most (more go in further steps), and the tokens
// matvec_items_* handles a pass (its TOKENS constant) for a step of n items: 2, 4, 8 or 16.
constexpr int kMaxStepItems = 16;
inline uint32_t items_tokens(int n) { return n <= 2 ? 2u : n <= 4 ? 4u : n <= 8 ? 8u : 16u; }
// Where a pass of `tokens` (items_tokens) keeps its matvec_items_* kernel (MatrixKernels::items).
constexpr size_t kItemsPasses = 4;
inline size_t items_slot(uint32_t tokens) { return tokens <= 2 ? 0 : tokens <= 4 ? 1 : tokens <= 8 ? 2 : 3; }

// One layer of one sequence's cache, and the sets binding it (batches: rope_set, attention_set;
// one token: decode_attention_set; several sequences' step: items_attention_set).
struct LayerKv {
  BufferSlice k, v;  // [LayerGpu::cache_slots][kv_heads][head_dim], fp16 or fp32 (ModelGpu::kv_f16)
  VkDescriptorSet rope_set = VK_NULL_HANDLE, attention_set = VK_NULL_HANDLE, decode_attention_set = VK_NULL_HANDLE;
  VkDescriptorSet items_attention_set = VK_NULL_HANDLE;
};

struct KvSequence {
  std::unique_ptr<MemoryArena> arena;                // null for sequence 0 (ModelGpu::state_arena)
  std::unique_ptr<DescriptorAllocator> descriptors;  // null for sequence 0 (ModelGpu::descriptors)
  std::vector<LayerKv> layers;
};

// What a step of several sequences needs beyond the batch buffers, built on the first
// set_sequences() of two or more: the attention kernel and each item's partials and counters.
struct StepItems {
  int max_items = 0;  // items one recording takes: kMaxStepItems, the plan's max_step_items, logit_rows, max_batch
  const Kernel* attention = nullptr;  // attention_decode_items_kv_*
  uint32_t partial_floats = 0;        // an item's partials: [heads][max splits][max, sum, out[head_dim]]
  BufferSlice partials;    // [max_items][partial_floats]
  BufferSlice arrivals;    // uint [max_items][heads], zero between dispatches
};

}  // namespace kiln::vk
