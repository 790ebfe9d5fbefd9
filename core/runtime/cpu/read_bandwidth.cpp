#include "runtime/cpu/read_bandwidth.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <vector>

#include "quant/matrix.h"
#include "runtime/cpu/matmul_kernels.h"
#include "runtime/cpu/thread_pool.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#endif

namespace kiln {
namespace {

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
// Whole 32-byte loads; the caller sums what is left over.
__attribute__((target("avx2"))) uint64_t sum_bytes_avx2(const uint8_t* p, size_t n) {
  __m256i sum = _mm256_setzero_si256();
  for (size_t i = 0; i + 32 <= n; i += 32)
    sum = _mm256_add_epi64(sum, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i)));
  alignas(32) uint64_t lanes[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), sum);
  return lanes[0] + lanes[1] + lanes[2] + lanes[3];
}
#endif

uint64_t sum_words(const uint8_t* p, size_t n) {
  uint64_t sum = 0;
  for (size_t i = 0; i + 8 <= n; i += 8) {
    uint64_t v;
    std::memcpy(&v, p + i, 8);
    sum += v;
  }
  return sum;
}

}  // namespace

uint64_t sum_bytes(const uint8_t* p, size_t n) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  if (cpu_has_avx2_kernels()) {
    const size_t wide = n / 32 * 32;
    return sum_bytes_avx2(p, wide) + sum_words(p + wide, n - wide);
  }
#endif
  return sum_words(p, n);
}

double measure_read_bandwidth(ThreadPool& pool, size_t bytes, int repeats) {
  bytes = std::max<size_t>(bytes / 64 * 64, 64);
  AlignedBytes buffer = allocate_aligned(bytes);
  std::memset(buffer.get(), 1, bytes);  // touches every page: the reads below never fault
  const int64_t parts = pool.size();
  std::vector<uint64_t> partial(size_t(parts), 0);
  std::atomic<uint64_t> sink{0};
  double best_s = 0;
  for (int r = 0; r < std::max(1, repeats); ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    pool.parallel_for(parts, [&](int64_t begin, int64_t end) {
      for (int64_t part = begin; part < end; ++part) {
        // Range `part` of `parts`, cut on 64-byte lines so no two threads share one.
        const size_t from = bytes / 64 * size_t(part) / size_t(parts) * 64;
        const size_t to = bytes / 64 * size_t(part + 1) / size_t(parts) * 64;
        partial[size_t(part)] = sum_bytes(buffer.get() + from, to - from);
      }
    });
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (r == 0 || s < best_s) best_s = s;
    for (uint64_t v : partial) sink.fetch_add(v, std::memory_order_relaxed);  // keeps the sums live
  }
  return best_s > 0 ? double(bytes) / best_s / 1e9 : 0;
}

}  // namespace kiln
