// How fast this machine's threads stream memory: the ceiling CPU decode is measured against
// (`kiln bench`), as the Vulkan backend's device copy is for the GPU.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kiln {

class ThreadPool;

// The sum of the n bytes at p taken as 64-bit words (a trailing n % 8 bytes are skipped), 32 bytes a
// load where the CPU has AVX2: a read the compiler cannot drop, at the speed memory gives.
uint64_t sum_bytes(const uint8_t* p, size_t n);

// GB/s of a streaming read of a buffer of `bytes` (make it much larger than the caches), split into
// one contiguous range per thread of `pool`; the best of `repeats` reads. The buffer is allocated and
// written once (so its pages are real) before the reads, and freed before returning.
double measure_read_bandwidth(ThreadPool& pool, size_t bytes = size_t(512) << 20, int repeats = 5);

}  // namespace kiln
