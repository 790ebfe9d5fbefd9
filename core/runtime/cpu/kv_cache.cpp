#include "runtime/cpu/kv_cache.h"

#include <algorithm>
#include <cstring>

namespace kiln {

KvCache::KvCache(const Gemma3Config& config, int context, DType element, int spare)
    : element_(element), context_(context), row_elements_(int64_t(config.num_kv_heads) * config.head_dim) {
  const size_t elem = element == DType::F32 ? 4 : 2;
  rewind_limit_ = context;
  for (int l = 0; l < config.num_layers; ++l) {
    const int ring = config.kv_positions(l, context);
    slots_.push_back(ring < context ? std::min(context, ring + std::max(0, spare)) : ring);
    // Going back r positions leaves stale entries of r - 1 positions past the new end; they must
    // not have overwritten the window before it: r - 1 <= ring - window.
    if (slots_.back() < context) rewind_limit_ = std::min(rewind_limit_, slots_.back() - ring + 1);
    const size_t bytes = size_t(slots_.back()) * row_elements_ * elem;
    keys_.push_back(allocate_aligned(bytes));
    values_.push_back(allocate_aligned(bytes));
    std::memset(keys_.back().get(), 0, bytes);
    std::memset(values_.back().get(), 0, bytes);
  }
}

uint64_t KvCache::bytes() const {
  uint64_t total = 0;
  for (int s : slots_) total += uint64_t(s) * row_elements_ * (element_ == DType::F32 ? 4 : 2) * 2;
  return total;
}

uint64_t KvCache::bytes_for(const Gemma3Config& config, int context, DType element) {
  uint64_t total = 0;
  for (int l = 0; l < config.num_layers; ++l)
    total += uint64_t(config.kv_positions(l, context)) * config.num_kv_heads * config.head_dim *
             (element == DType::F32 ? 4 : 2) * 2;
  return total;
}

}  // namespace kiln
