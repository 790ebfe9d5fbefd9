#include "engine/context_budget.h"

#include <algorithm>

#include "kiln/hardware.h"

namespace kiln {
namespace {

constexpr int kUnknownMemoryContext = 8192;  // the old default, where memory cannot be read
constexpr int kFloorContext = 1024;
constexpr uint64_t kMiB = 1ull << 20;

uint64_t largest_device_local_heap(const GpuDevice& gpu) {
  uint64_t best = 0;
  for (const MemoryHeap& h : gpu.heaps)
    if (h.device_local) best = std::max(best, h.size);
  return best;
}

int type_rank(const std::string& type) {  // as the Vulkan backend ranks devices for `auto`
  if (type == "discrete") return 4;
  if (type == "integrated") return 3;
  if (type == "virtual") return 2;
  if (type == "cpu") return 0;
  return 1;
}

// Whether the backend can run on `gpu` when asked: a CPU implementation of Vulkan is refused for
// `auto` only (runtime/vulkan/device.cpp words that refusal so); other refusals are hard.
bool runnable(const GpuDevice& gpu) {
  return gpu.usable || gpu.refusal.rfind("a CPU implementation of Vulkan", 0) == 0;
}

int rounded(int context) { return context > 8192 ? context / 1024 * 1024 : context / 256 * 256; }

}  // namespace

uint64_t kv_cache_bytes_for(const Gemma3Config& c, int context, DType element) {
  const uint64_t element_bytes = element == DType::F32 ? 4 : 2;
  uint64_t positions = 0;
  for (int layer = 0; layer < c.num_layers; ++layer) positions += uint64_t(c.kv_positions(layer, context));
  return positions * uint64_t(c.num_kv_heads) * uint64_t(c.head_dim) * 2 * element_bytes;  // keys and values
}

int default_context(const Gemma3Config& c, uint64_t weight_bytes, DType kv_element, const ContextBudget& budget) {
  const int trained = std::max(1, c.max_position_embeddings);
  const int floor = std::min(trained, kFloorContext);
  if (budget.memory_bytes == 0) return std::min(trained, kUnknownMemoryContext);
  int limit = trained;
  if (budget.max_binding_bytes > 0) {
    // A global layer's keys (or values) and the RoPE table (cos and sin in f32) per position.
    const uint64_t element_bytes = kv_element == DType::F32 ? 4 : 2;
    const uint64_t per_position = std::max(uint64_t(c.num_kv_heads) * c.head_dim * element_bytes, uint64_t(c.head_dim) * 8);
    limit = int(std::min<uint64_t>(limit, budget.max_binding_bytes / per_position));
  }
  const uint64_t margin = std::max(budget.memory_bytes / 10, 512 * kMiB);
  const uint64_t room = budget.memory_bytes > weight_bytes + margin ? budget.memory_bytes - weight_bytes - margin : 0;
  // The KV cache grows with the context (linearly once every sliding window is full): the longest
  // that fits, by bisection.
  int lo = 0, hi = limit;
  while (lo < hi) {
    const int mid = lo + (hi - lo + 1) / 2;
    if (kv_cache_bytes_for(c, mid, kv_element) <= room) lo = mid; else hi = mid - 1;
  }
  const int fits = lo >= trained ? trained : rounded(lo);
  return std::max(floor, std::min(fits, limit));
}

ContextBudget context_budget_for(const LoadOptions& options) {
  ContextBudget ram{available_memory_bytes(), 0, "RAM"};
#ifdef KILN_HAVE_VULKAN
  if (options.backend == BackendKind::Cpu) return ram;
  const HardwareInfo hw = probe_hardware();
  const GpuDevice* pick = nullptr;
  for (const GpuDevice& g : hw.gpus) {
    if (options.vulkan_device >= 0) {
      if (g.index == options.vulkan_device) pick = &g;
      continue;
    }
    // `auto` never runs on a CPU implementation of Vulkan; choosing Vulkan by hand may.
    if (!runnable(g) || (g.type == "cpu" && options.backend != BackendKind::Vulkan)) continue;
    if (!pick || type_rank(g.type) > type_rank(pick->type) ||
        (type_rank(g.type) == type_rank(pick->type) && largest_device_local_heap(g) > largest_device_local_heap(*pick)))
      pick = &g;
  }
  if (!pick || !runnable(*pick)) return ram;  // the CPU runs it
  ContextBudget gpu{largest_device_local_heap(*pick), pick->max_storage_buffer_range, "the memory of " + pick->name};
  // An integrated GPU's (or a CPU implementation's) "device memory" is the system's RAM.
  if (pick->type != "discrete" && ram.memory_bytes > 0)
    gpu.memory_bytes = gpu.memory_bytes > 0 ? std::min(gpu.memory_bytes, ram.memory_bytes) : ram.memory_bytes;
  return gpu;
#else
  (void)options;
  return ram;
#endif
}

}  // namespace kiln
