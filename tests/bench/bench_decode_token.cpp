// One decode token's matrix products on the Gemma 3 1B shape: 26 layers of q, k, v, o, gate, up
// and down (0.39 GB in Q4_0, 0.73 GB in Q8_0), far beyond the caches, one product after another as
// the CPU backend runs them. Unlike bench_matmul's single matrix, which fits in L3, this shows what
// a token really costs: streaming from memory, and each product's thread hand-over. Its bytes/s sit
// beside BM_stream_read, a plain read of the same weights split the same way (the ceiling).
#include <benchmark/benchmark.h>

#include <cstring>
#include <random>
#include <vector>

#include "quant/convert.h"
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

// Random blocks with a small fp16 scale: the kernels' speed does not depend on the values.
Matrix random_matrix(DType type, int64_t rows, int64_t cols, std::mt19937_64& rng) {
  Matrix m;
  m.type = type;
  m.rows = rows;
  m.cols = cols;
  m.storage = allocate_aligned(m.bytes());
  for (size_t i = 0; i + 8 <= m.bytes(); i += 8) {
    const uint64_t bits = rng();
    std::memcpy(m.storage.get() + i, &bits, 8);
  }
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
    for (const Matrix& w : token.weights) {
      const size_t stride = row_bytes(w.type, w.cols);
      pool.parallel_for(w.rows, [&](int64_t begin, int64_t end) {
        partial[size_t(begin)] = sum_bytes(w.row(begin), size_t(end - begin) * stride);
      }, std::max<int64_t>(1, int64_t((64 << 10) / stride)));
    }
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

}  // namespace

BENCHMARK_MAIN();
