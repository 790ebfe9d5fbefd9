// Keys and values of every layer. Global layers hold every position of the context; local
// (sliding-window) layers hold a ring of the last `window` positions, slot = pos % window:
// for the 27B model at 8k context that is about 1.1 GB in fp16 instead of 4.2 GB.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "model/config.h"
#include "quant/matrix.h"

namespace kiln {

// Anonymous memory for a cache: zero from the start, its pages taken from the system only when
// first written. A slot's cache for a long context then costs memory as its conversation grows,
// not when the slot opens (8 server slots of a 1B model at 131k tokens are 4.6 GB, which zeroing
// up front made the first request wait 7 s for).
class ZeroedPages {
 public:
  explicit ZeroedPages(size_t bytes);  // throws Error when the address space lacks it
  ZeroedPages(ZeroedPages&& other) noexcept : data_(other.data_), bytes_(other.bytes_) { other.data_ = nullptr; }
  ZeroedPages& operator=(ZeroedPages&&) = delete;
  ~ZeroedPages();
  uint8_t* get() const { return data_; }

 private:
  uint8_t* data_ = nullptr;
  size_t bytes_ = 0;
};

class KvCache {
 public:
  // element: DType::F32 (exact) or DType::F16 (half the memory). spare: positions a local layer's
  // ring holds beyond the window, so that a sequence can go back that many more positions and keep
  // its earlier ones (Backend::rewind_limit; the server's prefix reuse).
  KvCache(const Gemma3Config& config, int context, DType element, int spare = 0);

  DType element() const { return element_; }
  int context() const { return context_; }
  int slot_count(int layer) const { return slots_[layer]; }
  int slot_of(int layer, int64_t pos) const { return int(pos % slots_[layer]); }
  int64_t row_elements() const { return row_elements_; }  // kv_heads * head_dim

  // [slots][kv_heads][head_dim] of element() for one layer.
  uint8_t* keys(int layer) { return keys_[layer].get(); }
  uint8_t* values(int layer) { return values_[layer].get(); }
  const uint8_t* keys(int layer) const { return keys_[layer].get(); }
  const uint8_t* values(int layer) const { return values_[layer].get(); }

  uint64_t bytes() const;
  // How many positions a sequence may go back from its end and still find the window before it
  // intact: 1 + the spare positions of the local rings (the whole context where no ring is shorter).
  int rewind_limit() const { return rewind_limit_; }
  static uint64_t bytes_for(const Gemma3Config& config, int context, DType element);

 private:
  DType element_;
  int context_;
  int64_t row_elements_;
  int rewind_limit_ = 1;
  std::vector<int> slots_;
  std::vector<ZeroedPages> keys_, values_;
};

}  // namespace kiln
