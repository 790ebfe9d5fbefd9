// Aligned storage for weights: 64 bytes so that vector loads of a row start never split a cache line.
// Large buffers (a model's weights, read once per token in decode) are aligned to 2 MiB and marked
// for transparent huge pages: streaming 0.7 GB through 4 KiB pages costs a TLB miss every 4 KiB.
#include "quant/matrix.h"

#include <cstdint>
#include <string>

#include "kiln/types.h"

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace kiln {

namespace {
constexpr size_t kHugePage = size_t(2) << 20;
}  // namespace

AlignedBytes allocate_aligned(size_t bytes) {
  constexpr size_t kAlign = 64;
  if (bytes > SIZE_MAX - kHugePage) throw Error("cannot allocate " + std::to_string(bytes) + " bytes");
  const size_t align = bytes >= kHugePage ? kHugePage : kAlign;
  void* p = nullptr;
  if (posix_memalign(&p, align, bytes == 0 ? kAlign : bytes) != 0 || !p)
    throw Error("out of memory allocating " + std::to_string(bytes) + " bytes");
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  // Only whole huge pages: a partly used one at the end would add up to 2 MiB of resident memory
  // to every matrix. Advice only; where THP is off this does nothing.
  if (align == kHugePage) (void)madvise(p, bytes / kHugePage * kHugePage, MADV_HUGEPAGE);
#endif
  return AlignedBytes(static_cast<uint8_t*>(p));
}

}  // namespace kiln
