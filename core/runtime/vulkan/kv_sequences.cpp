// ModelGpu's sequences (kv_sequences.h): their caches, their sets, and what a step of several
// sequences needs.
#include <algorithm>
#include <string>

#include "kiln/hardware.h"
#include "kiln/types.h"
#include "runtime/vulkan/model_gpu.h"

namespace kiln::vk {
namespace {

constexpr uint64_t kMiB = 1ull << 20;

uint64_t largest_device_local_heap(const PhysicalDeviceInfo& d) {
  uint64_t best = 0;
  for (uint32_t i = 0; i < d.memory.memoryHeapCount; ++i)
    if (d.memory.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) best = std::max(best, d.memory.memoryHeaps[i].size);
  return best;
}

}  // namespace

std::unique_ptr<KvSequence> ModelGpu::allocate_sequence(MemoryArena& arena) {
  auto s = std::make_unique<KvSequence>();
  s->layers.resize(layers.size());
  for (size_t i = 0; i < layers.size(); ++i) {
    s->layers[i].k = arena.allocate(layers[i].cache_bytes);
    s->layers[i].v = arena.allocate(layers[i].cache_bytes);
  }
  return s;
}

void ModelGpu::bind_sequence(KvSequence& s, DescriptorAllocator& d) {
  for (size_t i = 0; i < layers.size(); ++i) {
    LayerKv& kv = s.layers[i];
    const LayerGpu::TokenBuffers& t = layers[i].token;
    if (kv.rope_set == VK_NULL_HANDLE) {
      const BufferSlice r[] = {qkv, weights.norms, rope, kv.k, kv.v};
      kv.rope_set = d.allocate(*kernels.rope, r);
      const BufferSlice a[] = {qkv, kv.k, kv.v, att};
      kv.attention_set = d.allocate(*kernels.attention, a);
      // One token: the layer's own buffers (LayerGpu::token); the cache again for the newest slot.
      const BufferSlice da[] = {t.qkv, kv.k, kv.v, t.att, partials, split_arrivals, weights.norms, rope, kv.k, kv.v};
      kv.decode_attention_set = d.allocate(*kernels.decode_attention, da);
    }
    if (items.attention && kv.items_attention_set == VK_NULL_HANDLE) {  // a step's batch buffers
      const BufferSlice ia[] = {qkv, kv.k, kv.v, att, items.partials, items.arrivals, weights.norms, rope, kv.k, kv.v};
      kv.items_attention_set = d.allocate(*items.attention, ia);
    }
  }
}

// Once, on the first set_sequences() of two or more: the items' attention kernel, partials and
// counters (zeroed: the last split of a head resets its counter), and every matvec_items_*
// pipeline a step may ask for, so that none is created while decoding.
void ModelGpu::build_items() {
  const Gemma3Config& c = config;
  StepItems s;
  s.max_items = std::min({kMaxStepItems, int(plan.max_step_items), logit_rows, max_batch});
  if (s.max_items < 2) return;  // the device's bindings hold one row: steps of one item
  s.attention = &kernels.pipelines->get(std::string("attention_decode_items_kv_") + (kv_f16 ? "f16" : "f32"), 10,
                                {plan.attention_wg});
  s.partial_floats = plan.max_attention_splits * uint32_t(c.num_heads) * uint32_t(c.head_dim + 2);
  const uint64_t partial_bytes = uint64_t(s.max_items) * s.partial_floats * 4;
  const uint64_t max_range = std::min<uint64_t>(device.limits().maxStorageBufferRange, state_arena->max_block_bytes());
  if (partial_bytes > max_range) s.max_items = int(std::max<uint64_t>(1, max_range / (uint64_t(s.partial_floats) * 4)));
  if (s.max_items < 2) return;
  s.partials = state_arena->allocate(uint64_t(s.max_items) * s.partial_floats * 4);
  const uint64_t arrival_bytes = uint64_t(s.max_items) * uint64_t(c.num_heads) * 4;
  s.arrivals = state_arena->allocate(arrival_bytes);
  {
    Uploader up(device, std::max<uint64_t>(arrival_bytes, 64 * 1024));
    const std::vector<uint32_t> zeros(size_t(arrival_bytes / 4), 0);
    up.write(s.arrivals, 0, zeros.data(), arrival_bytes);
    up.finish();
  }
  items = s;
  make_items_kernels(items.max_items);
  kernels.pipelines->save_cache();
}

void ModelGpu::set_sequences(int count) {
  count = std::max(1, count);
  const int have = int(sequences.size());
  if (count > have) {
    // Device memory that the arenas do not hold yet. An integrated GPU's is the system's RAM too,
    // which other programs use; a CPU implementation's is only that (lavapipe reports a heap of
    // 2 GiB and allocates past it from RAM).
    const uint64_t more = kv_bytes * uint64_t(count - have);
    uint64_t held = weights.arena->bytes_allocated() + state_arena->bytes_allocated() +
                    upload_arena->bytes_allocated() + readback_arena->bytes_allocated();
    for (const auto& s : sequences)
      if (s->arena) held += s->arena->bytes_allocated();
    const uint64_t heap = device.info().cpu_implementation ? 0 : largest_device_local_heap(device.info());
    uint64_t free = heap > held ? heap - held : 0;
    if (device.info().unified_memory)
      if (const uint64_t ram = available_memory_bytes(); ram > 0) free = heap > 0 ? std::min(free, ram) : ram;
    if ((heap > 0 || device.info().unified_memory) && more > free)
      throw Error("Vulkan: " + std::to_string(count) + " sequences need " + std::to_string((more + kMiB - 1) / kMiB) +
                  " MiB more of KV cache (" + std::to_string((kv_bytes + kMiB - 1) / kMiB) + " MiB each), but " +
                  device.info().report.name + " has only " + std::to_string(free / kMiB) +
                  " MiB free; use fewer slots or a shorter context");
    if (count >= 2 && items.max_items == 0) build_items();
  }
  // Sets of sequences already there that predate the items' kernel.
  if (items.attention) bind_sequence(*sequences[0], *descriptors);
  for (int i = 1; i < int(sequences.size()) && i < count; ++i) bind_sequence(*sequences[size_t(i)], *sequences[size_t(i)]->descriptors);
  sequences.resize(size_t(std::min(count, have)));
  while (int(sequences.size()) < count) {
    const std::string what = "sequence " + std::to_string(sequences.size()) + "'s KV cache";
    // One block for all its layers: room for each slice's alignment (at most 256 bytes, 16 more
    // for the size's rounding), else the last slice would take a second block as large.
    const uint64_t block = kv_bytes + uint64_t(layers.size()) * 2 * 512;
    auto arena = std::make_unique<MemoryArena>(device, MemoryKind::DeviceLocal, block, what);
    std::unique_ptr<KvSequence> s = allocate_sequence(*arena);
    s->arena = std::move(arena);
    s->descriptors = std::make_unique<DescriptorAllocator>(device);
    bind_sequence(*s, *s->descriptors);
    sequences.push_back(std::move(s));
  }
}

}  // namespace kiln::vk
