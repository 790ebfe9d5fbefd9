#include "runtime/cpu/kv_cache.h"

#include <sys/mman.h>

#include <algorithm>
#include <string>

#include "kiln/types.h"

namespace kiln {

ZeroedPages::ZeroedPages(size_t bytes) : bytes_(std::max<size_t>(bytes, 1)) {
  void* p = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw Error("out of memory allocating " + std::to_string(bytes) + " bytes of KV cache");
  data_ = static_cast<uint8_t*>(p);  // page-aligned, so 64-byte aligned as the kernels want
}

ZeroedPages::~ZeroedPages() {
  if (data_) ::munmap(data_, bytes_);
}

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
    keys_.emplace_back(bytes);
    values_.emplace_back(bytes);
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
