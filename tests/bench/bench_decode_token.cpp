// One decode token's matrix products on the Gemma 3 1B shape: 26 layers of q, k, v, o, gate, up
// and down (0.39 GB in Q4_0, 0.73 GB in Q8_0), far beyond the caches, one product after another as
// the CPU backend runs them. Unlike bench_matmul's single matrix, which fits in L3, this shows what
// a token really costs: streaming from memory, and each product's thread hand-over. Its bytes/s sit
// beside BM_stream_read, a plain read of the same weights split the same way (the ceiling).
// BM_kquant_decode does the same for one Gemma 3 4B-shape matrix in Q4_K or Q6_K (its copies
// beyond L3), beside BM_kquant_read: the K-quant kernels alone.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "quant/convert.h"
#include "quant/kquant_blocks.h"
#include "runtime/cpu/matmul.h"
#include "runtime/cpu/matmul_kernels.h"
#include "runtime/cpu/read_bandwidth.h"

namespace {

using namespace kiln;

constexpr int kLayers = 26;
// rows x cols of each layer's products, in the order the backend runs them.
constexpr int64_t kShapes[7][2] = {{1024, 1152}, {256, 1152}, {256, 1152}, {1152, 1024},
                                   {6912, 1152}, {6912, 1152}, {1152, 6912}};
const DType kTypes[] = {DType::Q4_0, DType::Q8_0};

// Random bytes: the kernels' speed does not depend on the values.
Matrix random_bytes(DType type, int64_t rows, int64_t cols, std::mt19937_64& rng) {
  Matrix m;
  m.type = type;
  m.rows = rows;
  m.cols = cols;
  m.storage = allocate_aligned(m.bytes());
  for (size_t i = 0; i + 8 <= m.bytes(); i += 8) {
    const uint64_t bits = rng();
    std::memcpy(m.storage.get() + i, &bits, 8);
  }
  return m;
}

// Random 32-weight blocks with a small fp16 scale.
Matrix random_matrix(DType type, int64_t rows, int64_t cols, std::mt19937_64& rng) {
  Matrix m = random_bytes(type, rows, cols, rng);
  const uint16_t d = float_to_fp16(1e-3f);
  const size_t block = row_bytes(type, kBlockSize);
  for (size_t at = 0; at < m.bytes(); at += block) std::memcpy(m.storage.get() + at, &d, 2);
  return m;
}

struct Token {
  std::vector<Matrix> weights;  // [layers * 7]
  size_t bytes = 0;
  explicit Token(DType type) {
    std::mt19937_64 rng(1);
    for (int l = 0; l < kLayers; ++l)
      for (const auto& s : kShapes) {
        weights.push_back(random_matrix(type, s[0], s[1], rng));
        bytes += weights.back().bytes();
      }
  }
};

const Token& token_of(DType type) {  // built once per type: building 0.7 GB takes seconds
  static Token q4(DType::Q4_0), q8(DType::Q8_0);
  return type == DType::Q4_0 ? q4 : q8;
}

// args: dtype index, threads
// Every row of every matrix summed as bytes, the rows split over the pool as decode splits them
// (at least 64 KiB a task): a pure read of the same bytes. partial: one slot per row of the largest.
void read_rows(ThreadPool& pool, const std::vector<Matrix>& matrices, std::vector<uint64_t>& partial) {
  for (const Matrix& w : matrices) {
    const size_t stride = row_bytes(w.type, w.cols);
    pool.parallel_for(w.rows, [&](int64_t begin, int64_t end) {
      partial[size_t(begin)] = sum_bytes(w.row(begin), size_t(end - begin) * stride);
    }, std::max<int64_t>(1, int64_t((64 << 10) / stride)));
  }
}

void BM_decode_token(benchmark::State& state) {
  const Token& token = token_of(kTypes[state.range(0)]);
  ThreadPool pool(static_cast<int>(state.range(1)));
  std::vector<float> x(6912), y(6912);
  std::mt19937 rng(2);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  for (auto& v : x) v = unit(rng);
  for (auto _ : state) {
    for (const Matrix& w : token.weights) matmul(w, x.data(), 1, y.data(), pool);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * token.bytes));
  state.SetLabel(to_string(kTypes[state.range(0)]));
}
BENCHMARK(BM_decode_token)
    ->ArgsProduct({{0, 1}, {1, 2}})
    ->ArgNames({"dtype", "threads"})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// The same weights read and summed, each matrix split into the same row ranges: what memory gives.
void BM_stream_read(benchmark::State& state) {
  const Token& token = token_of(kTypes[state.range(0)]);
  ThreadPool pool(static_cast<int>(state.range(1)));
  std::vector<uint64_t> partial(6912);
  for (auto _ : state) {
    read_rows(pool, token.weights, partial);
    benchmark::DoNotOptimize(partial.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * token.bytes));
  state.SetLabel(to_string(kTypes[state.range(0)]));
}
BENCHMARK(BM_stream_read)
    ->ArgsProduct({{0, 1}, {1, 2}})
    ->ArgNames({"dtype", "threads"})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// Gemma 3 4B's products (rows x cols): FFN down, gate / up, and the tied output projection.
constexpr int64_t kKquantShapes[3][2] = {{2560, 10240}, {10240, 2560}, {262144, 2560}};
const DType kKquantTypes[] = {DType::Q4_K, DType::Q6_K};

// Copies of one K-quant matrix, at least 256 MB in all so that a pass streams them from memory;
// random bytes with a small fp16 scale (d, and dmin where there is one) in every super-block.
struct KquantCopies {
  DType type = DType::Q4_K;
  int shape = -1;
  std::vector<Matrix> copies;
  size_t bytes = 0;
};

const KquantCopies& kquant_copies(DType type, int shape) {  // one case kept at a time: they are large
  static KquantCopies held;
  if (held.type == type && held.shape == shape) return held;
  held = KquantCopies{type, shape, {}, 0};
  std::mt19937_64 rng(3);
  const uint16_t d = float_to_fp16(1e-3f);
  do {
    Matrix m = random_bytes(type, kKquantShapes[shape][0], kKquantShapes[shape][1], rng);
    const size_t block = row_bytes(type, kSuperBlockSize);
    const size_t d_at = type == DType::Q4_K ? offsetof(BlockQ4K, d) : offsetof(BlockQ6K, d);
    for (size_t at = 0; at < m.bytes(); at += block) {
      std::memcpy(m.storage.get() + at + d_at, &d, 2);
      if (type == DType::Q4_K) std::memcpy(m.storage.get() + at + offsetof(BlockQ4K, dmin), &d, 2);
    }
    held.bytes += m.bytes();
    held.copies.push_back(std::move(m));
  } while (held.bytes < (size_t(256) << 20));
  return held;
}

// args: dtype (0 Q4_K, 1 Q6_K), shape (0 4B down, 1 4B gate, 2 4B output), threads. With one
// thread the CPU time is the kernel's own, the steadier figure on a busy machine.
void BM_kquant_decode(benchmark::State& state) {
  const DType type = kKquantTypes[state.range(0)];
  const KquantCopies& m = kquant_copies(type, int(state.range(1)));
  ThreadPool pool(static_cast<int>(state.range(2)));
  std::vector<float> x(size_t(m.copies[0].cols)), y(size_t(m.copies[0].rows));
  std::mt19937 rng(2);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  for (auto& v : x) v = unit(rng);
  for (auto _ : state) {
    for (const Matrix& w : m.copies) matmul(w, x.data(), 1, y.data(), pool);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * m.bytes));
  state.SetLabel(std::string(to_string(type)) + " " + std::to_string(m.copies[0].rows) + "x" +
                 std::to_string(m.copies[0].cols) + " x" + std::to_string(m.copies.size()));
}

// The same bytes read and summed, split as decode splits them.
void BM_kquant_read(benchmark::State& state) {
  const DType type = kKquantTypes[state.range(0)];
  const KquantCopies& m = kquant_copies(type, int(state.range(1)));
  ThreadPool pool(static_cast<int>(state.range(2)));
  std::vector<uint64_t> partial(size_t(m.copies[0].rows));
  for (auto _ : state) {
    read_rows(pool, m.copies, partial);
    benchmark::DoNotOptimize(partial.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * m.bytes));
  state.SetLabel(to_string(type));
}

void kquant_cases(benchmark::internal::Benchmark* b) {
  for (int type : {0, 1})
    for (int shape : {0, 1, 2})
      for (int threads : {1, 2}) b->Args({type, shape, threads});
  b->ArgNames({"dtype", "shape", "threads"})->UseRealTime()->Unit(benchmark::kMillisecond);
}
BENCHMARK(BM_kquant_decode)->Apply(kquant_cases);
BENCHMARK(BM_kquant_read)->Apply(kquant_cases);

}  // namespace

BENCHMARK_MAIN();
