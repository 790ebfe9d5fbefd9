// Aligned storage for weights: 64 bytes so that vector loads of a row start never split a cache line.
#include "quant/matrix.h"

#include <cstdint>
#include <string>

#include "kiln/types.h"

namespace kiln {

AlignedBytes allocate_aligned(size_t bytes) {
  constexpr size_t kAlign = 64;
  if (bytes > SIZE_MAX - kAlign) throw Error("cannot allocate " + std::to_string(bytes) + " bytes");
  // aligned_alloc wants a multiple of the alignment, and may return null for 0 bytes.
  const size_t rounded = bytes == 0 ? kAlign : (bytes + kAlign - 1) / kAlign * kAlign;
  void* p = std::aligned_alloc(kAlign, rounded);
  if (!p) throw Error("out of memory allocating " + std::to_string(bytes) + " bytes");
  return AlignedBytes(static_cast<uint8_t*>(p));
}

}  // namespace kiln
