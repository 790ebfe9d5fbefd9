// Decode (one token) and short prefill matmul on a Gemma 3 4B FFN-sized weight, 2560 x 10240, in
// every storage format. Decode reads every weight once, so bytes/s of weights is the figure to
// compare with the machine's memory bandwidth.
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "quant/convert.h"
#include "runtime/cpu/matmul.h"
#include "runtime/cpu/matmul_kernels.h"

namespace {

using namespace kiln;

constexpr int64_t kRows = 2560;
constexpr int64_t kCols = 10240;
const DType kTypes[] = {DType::F32, DType::F16, DType::BF16, DType::Q8_0, DType::Q4_0};

Matrix make_weight(DType type) {
  Matrix m;
  m.type = type;
  m.rows = kRows;
  m.cols = kCols;
  m.storage = allocate_aligned(m.bytes());
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::vector<float> row(kCols);
  for (int64_t r = 0; r < kRows; ++r) {
    for (auto& v : row) v = unit(rng);
    quantize_row(type, row.data(), kCols, m.row(r));
  }
  return m;
}

// args: dtype index, tokens, threads, kernel set (0 best, 1 portable)
void BM_matmul(benchmark::State& state) {
  const DType type = kTypes[state.range(0)];
  const int64_t n = state.range(1);
  ThreadPool pool(static_cast<int>(state.range(2)));
  const MatmulKernels kernels = state.range(3) == 0 ? best_matmul_kernels() : portable_matmul_kernels();
  const Matrix w = make_weight(type);
  std::vector<float> x(n * kCols, 0.25f), y(n * kRows);
  for (auto _ : state) {
    matmul_with(kernels, w, x.data(), n, y.data(), pool);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(w.bytes()));
  state.counters["tokens/s"] = benchmark::Counter(double(n) * state.iterations(), benchmark::Counter::kIsRate);
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * n * kRows * kCols * state.iterations() / 1e9, benchmark::Counter::kIsRate);
  state.SetLabel(std::string(to_string(type)) + " " + kernels.name);
}

void decode_and_prefill(benchmark::internal::Benchmark* b) {
  for (int t = 0; t < 5; ++t) {
    for (int threads : {1, 2}) b->Args({t, 1, threads, 0});   // decode, fastest kernels
    b->Args({t, 1, 2, 1});                                     // decode, portable kernels
    b->Args({t, 16, 2, 0});                                    // prefill of 16 tokens
  }
  b->ArgNames({"dtype", "n", "threads", "portable"})->UseRealTime()->Unit(benchmark::kMillisecond);
}

BENCHMARK(BM_matmul)->Apply(decode_and_prefill);

// The ceiling for decode: summing a buffer as large as the F32 weight (105 MB, far beyond cache)
// with as many threads, split as matmul splits rows.
void BM_read_bandwidth(benchmark::State& state) {
  ThreadPool pool(static_cast<int>(state.range(0)));
  std::vector<float> buffer(kRows * kCols, 1.0f);
  std::vector<float> partial(kRows);
  for (auto _ : state) {
    pool.parallel_for(kRows, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const float* row = buffer.data() + r * kCols;
        float lanes[8] = {};
        for (int64_t c = 0; c < kCols; c += 8)
          for (int l = 0; l < 8; ++l) lanes[l] += row[c + l];
        partial[r] = lanes[0] + lanes[1] + lanes[2] + lanes[3] + lanes[4] + lanes[5] + lanes[6] + lanes[7];
      }
    }, 16);
    benchmark::DoNotOptimize(partial.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * kRows * kCols * 4);
}
BENCHMARK(BM_read_bandwidth)->ArgName("threads")->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
