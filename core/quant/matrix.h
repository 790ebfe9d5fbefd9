// A 2-D weight held by the engine: rows x cols, row-major, every row in one DType.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>

#include "quant/dtype.h"

namespace kiln {

struct AlignedFree {
  void operator()(void* p) const { std::free(p); }
};
using AlignedBytes = std::unique_ptr<uint8_t[], AlignedFree>;
AlignedBytes allocate_aligned(size_t bytes);  // 64-byte aligned; throws kiln::Error when out of memory

struct Matrix {
  DType type = DType::F32;
  int64_t rows = 0;
  int64_t cols = 0;
  AlignedBytes storage;  // rows * row_bytes(type, cols) bytes

  const uint8_t* row(int64_t r) const { return storage.get() + r * row_bytes(type, cols); }
  uint8_t* row(int64_t r) { return storage.get() + r * row_bytes(type, cols); }
  size_t bytes() const { return static_cast<size_t>(rows) * row_bytes(type, cols); }
};

}  // namespace kiln
