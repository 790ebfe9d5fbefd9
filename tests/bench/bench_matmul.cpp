// Decode (one token) and short prefill matmul on a Gemma 3 4B FFN-sized weight, 2560 x 10240, in
// every storage format. Decode reads every weight once, so bytes/s of weights is the figure to
// compare with the machine's memory bandwidth. BM_ffn compares the K-quants with Q4_0 / Q8_0 on
// Gemma 3 FFN shapes whose rows are whole 256-weight super-blocks.
#include <benchmark/benchmark.h>

#include <cstring>
#include <random>
#include <vector>

#include "quant/convert.h"
#include "quant/kquant_blocks.h"
#include "quant/kquants.h"
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

// y = x W^T for n random tokens with `kernels`, timed: weight bytes, tokens and GFLOP a second.
void time_matmul(benchmark::State& state, const MatmulKernels& kernels, const Matrix& w, int64_t n, ThreadPool& pool,
                 const std::string& label) {
  std::vector<float> x(n * w.cols), y(n * w.rows);
  std::mt19937 rng(2);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  for (auto& v : x) v = unit(rng);
  for (auto _ : state) {
    matmul_with(kernels, w, x.data(), n, y.data(), pool);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(w.bytes()));
  state.counters["tokens/s"] = benchmark::Counter(double(n) * state.iterations(), benchmark::Counter::kIsRate);
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * n * w.rows * w.cols * state.iterations() / 1e9, benchmark::Counter::kIsRate);
  state.SetLabel(label);
}

// args: dtype index, tokens, threads, kernel set (0 best, 1 portable)
void BM_matmul(benchmark::State& state) {
  const DType type = kTypes[state.range(0)];
  ThreadPool pool(static_cast<int>(state.range(2)));
  const MatmulKernels kernels = state.range(3) == 0 ? best_matmul_kernels() : portable_matmul_kernels();
  time_matmul(state, kernels, make_weight(type), state.range(1), pool, std::string(to_string(type)) + " " + kernels.name);
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

// rows x cols: Gemma 3 1B's FFN down (1152 x 6912) and 4B's gate/up (10240 x 2560), and 1B's gate/up
// (6912 x 1152), which cannot be K-quants: 1152 is 4.5 super-blocks, so Q4_K_M files hold Q5_0 there.
const DType kFfnTypes[] = {DType::Q8_0, DType::Q4_0, DType::Q4_K, DType::Q6_K,
                           DType::Q5_K, DType::Q3_K, DType::Q2_K, DType::Q5_0, DType::IQ4_XS};
constexpr int64_t kFfnShapes[3][2] = {{1152, 6912}, {10240, 2560}, {6912, 1152}};
const char* const kFfnShapeNames[3] = {" 1B down ", " 4B gate ", " 1B gate "};

// The fp16 scales of a K-quant block (d, and dmin where there is one).
std::vector<size_t> kquant_scale_offsets(DType type) {
  switch (type) {
    case DType::Q4_K: return {offsetof(BlockQ4K, d), offsetof(BlockQ4K, dmin)};
    case DType::Q5_K: return {offsetof(BlockQ5K, d), offsetof(BlockQ5K, dmin)};
    case DType::Q6_K: return {offsetof(BlockQ6K, d)};
    case DType::Q3_K: return {offsetof(BlockQ3K, d)};
    default: return {offsetof(BlockQ2K, d), offsetof(BlockQ2K, dmin)};
  }
}

// K-quant (and IQ4_XS) weights as random bytes with small fp16 scales: the kernels' speed does not
// depend on the values, and core has no K-quantizer of its own here.
Matrix make_weight(DType type, int64_t rows, int64_t cols) {
  Matrix m;
  m.type = type;
  m.rows = rows;
  m.cols = cols;
  m.storage = allocate_aligned(m.bytes());
  std::mt19937 rng(1);
  if (is_kquant(type) || type == DType::IQ4_XS) {
    for (size_t i = 0; i < m.bytes(); ++i) m.storage[i] = static_cast<uint8_t>(rng());
    const uint16_t d = float_to_fp16(1e-3f);
    const size_t block = row_bytes(type, kSuperBlockSize);
    const std::vector<size_t> scales = is_kquant(type) ? kquant_scale_offsets(type) : std::vector<size_t>{0};
    for (size_t at = 0; at < m.bytes(); at += block)
      for (size_t offset : scales) std::memcpy(m.storage.get() + at + offset, &d, 2);
    return m;
  }
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::vector<float> row(cols);
  for (int64_t r = 0; r < rows; ++r) {
    for (auto& v : row) v = unit(rng);
    quantize_row(type, row.data(), cols, m.row(r));
  }
  return m;
}


// args: dtype index in kFfnTypes, shape (0: 1B down, 1: 4B gate, 2: 1B gate), tokens, threads, kernel set
// (0 best, 1 AVX2)
void BM_ffn(benchmark::State& state) {
  const DType type = kFfnTypes[state.range(0)];
  const int64_t rows = kFfnShapes[state.range(1)][0], cols = kFfnShapes[state.range(1)][1];
  const int64_t n = state.range(2);
  ThreadPool pool(static_cast<int>(state.range(3)));
  if (state.range(4) == 1 && !cpu_has_avx2_kernels()) {
    state.SkipWithError("no AVX2");
    return;
  }
  const MatmulKernels kernels = state.range(4) == 0 ? best_matmul_kernels() : avx2_matmul_kernels();
  time_matmul(state, kernels, make_weight(type, rows, cols), n, pool,
              std::string(to_string(type)) + kFfnShapeNames[state.range(1)] + kernels.name);
}

void ffn_shapes(benchmark::internal::Benchmark* b) {
  for (int t = 0; t < 7; ++t)
    for (int shape : {0, 1})
      for (int n : {1, 64}) b->Args({t, shape, n, 2, 0});
  for (int t : {0, 1, 2, 3}) b->Args({t, 0, 64, 2, 1});  // Q8_0 / Q4_0 / Q4_K / Q6_K prefill with the AVX2 kernels
  // One thread: its CPU time is the work itself, a steadier figure than wall time on a busy machine.
  for (int t = 0; t < 4; ++t)
    for (int n : {1, 64}) b->Args({t, 0, n, 1, 0});
  for (int t : {0, 1, 7})  // 1B's gate in Q8_0, Q4_0 and Q5_0 (its Q4_K_M files' type)
    for (int n : {1, 64}) b->Args({t, 2, n, 1, 0});
  for (int n : {1, 64}) {  // IQ4_XS beside the one-thread Q4_0 / Q4_K figures above, and on 2 threads
    b->Args({8, 0, n, 1, 0});
    b->Args({8, 0, n, 2, 0});
  }
  b->ArgNames({"dtype", "shape", "n", "threads", "avx2"})->UseRealTime()->Unit(benchmark::kMillisecond);
}

BENCHMARK(BM_ffn)->Apply(ffn_shapes);

// F16 and BF16 on 2560 x 10240, decode and 64-token prefill, 1 and 2 threads, with the AVX2 set
// (F16C / shift to floats, fp32 FMA) against the best (on AVX-512: vcvtph2ps 16-wide; vdpbf16ps
// with activations rounded to bf16 where the CPU has AVX512_BF16).
// args: dtype (0 F16, 1 BF16), tokens, threads, kernel set (0 best, 1 AVX2)
void BM_half_formats(benchmark::State& state) {
  const DType type = state.range(0) == 0 ? DType::F16 : DType::BF16;
  const int64_t n = state.range(1);
  ThreadPool pool(static_cast<int>(state.range(2)));
  if (state.range(3) == 1 && !cpu_has_avx2_kernels()) {
    state.SkipWithError("no AVX2");
    return;
  }
  const MatmulKernels kernels = state.range(3) == 0 ? best_matmul_kernels() : avx2_matmul_kernels();
  time_matmul(state, kernels, make_weight(type), n, pool, std::string(to_string(type)) + " " + kernels.name);
}

void half_format_cases(benchmark::internal::Benchmark* b) {
  for (int t : {0, 1})
    for (int n : {1, 64})
      for (int threads : {1, 2})
        for (int set : {1, 0}) b->Args({t, n, threads, set});
  b->ArgNames({"dtype", "n", "threads", "avx2"})->UseRealTime()->Unit(benchmark::kMillisecond);
}

BENCHMARK(BM_half_formats)->Apply(half_format_cases);

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
