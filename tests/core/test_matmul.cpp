// matmul against a double-precision dot of the dequantized weights, for every weight format, every
// kernel set this CPU runs (portable, AVX2, AVX-512), 1 and 2 threads, decode (n = 1) and prefill
// (n > 1), at sizes that hit every tail: rows not a multiple of the tile, columns not a multiple of
// 8 or of the column chunk. The K-quants have their own test (test_matmul_kquant.cpp).
// Q4_0 and GGUF's other 32-weight formats (Q5_0, quantized here as llama-quantize does; Q4_1, Q5_1,
// IQ4_NL, which Kiln only reads: random bytes) round each token's activations to int8 per 32 weights
// (quantize_activations_q8_0), Q8_0 to int16 (quantize_activations_q16):
// they are checked tightly against the rounded activations and, within the rounding's own bound,
// against the exact ones. A set with vdpbf16ps (avx512_vnni_bf16) rounds BF16 matrices' activations to
// bf16: checked the same way, within 2^-8 of sum |w x| of the exact result.
#include <QtTest>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kiln/types.h"
#include "quant/convert.h"
#include "runtime/cpu/matmul.h"
#include "cpu_kernel_sets.h"
#include "runtime/cpu/matmul_kernels.h"

using namespace kiln;
using kiln::test::cpu_kernel_sets;

namespace {

const DType kTypes[] = {DType::F32,  DType::F16,  DType::BF16, DType::Q8_0,
                        DType::Q4_0, DType::Q5_0, DType::Q4_1, DType::Q5_1, DType::IQ4_NL};

// Formats Kiln reads but does not write: random bytes (every quant pattern) with a scale of the
// size quantize_row would give (and a min of the same size, either sign).
bool random_bytes(DType type) { return type == DType::Q4_1 || type == DType::Q5_1 || type == DType::IQ4_NL; }

Matrix random_matrix(DType type, int64_t rows, int64_t cols, std::mt19937& rng, float scale = 1.0f) {
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  Matrix m;
  m.type = type;
  m.rows = rows;
  m.cols = cols;
  m.storage = allocate_aligned(m.bytes());
  if (random_bytes(type)) {
    const float step = scale / (type == DType::IQ4_NL ? 127.0f : type == DType::Q4_1 ? 8.0f : 16.0f);
    const size_t block = row_bytes(type, kBlockSize);
    for (size_t i = 0; i < m.bytes(); ++i) m.storage.get()[i] = uint8_t(rng());
    for (size_t b = 0; b < m.bytes() / block; ++b) {
      const uint16_t d = float_to_fp16(step * (0.25f + 0.75f * std::fabs(unit(rng))));
      const uint16_t min = float_to_fp16(-step * 8.0f * unit(rng));
      std::memcpy(m.storage.get() + b * block, &d, 2);
      if (type != DType::IQ4_NL) std::memcpy(m.storage.get() + b * block + 2, &min, 2);
    }
    return m;
  }
  std::vector<float> row(cols);
  for (int64_t r = 0; r < rows; ++r) {
    for (auto& v : row) v = unit(rng) * scale;
    // Some weights so small that fp16 holds them as subnormals (below 2^-14 = 6.1e-5).
    for (int64_t c = r % 7; c < cols; c += 7) row[c] *= 1e-5f;
    quantize_row(type, row.data(), cols, m.row(r));
  }
  return m;
}

// Q4_0 and GGUF's other 32-weight formats round activations to int8 per 32 weights, Q8_0 to int16:
// the largest integer, or 0.
double activation_steps(DType type) {
  return type == DType::Q8_0 ? 32767.0 : type == DType::Q4_0 || is_block32_matmul_type(type) ? 127.0 : 0.0;
}
bool rounds_activations(DType type) { return activation_steps(type) > 0; }

struct Reference {
  std::vector<double> y;          // [n][rows]
  std::vector<double> magnitude;  // [n][rows]: sum |w| |x|, the scale of float rounding error
  std::vector<double> rounding;   // [n][rows]: sum over 32-blocks of d / 2 * sum |w|, d = max |x| / steps
};

// y[t][r] = sum_c w[r][c] x[t][c] in double, with w from the scalar dequantize_row. `rounding` is
// the most that rounding activations as documented for ActivationBlockQ8_0 / ActivationBlockQ16
// can move y (for the formats that do).
Reference reference_matmul(const Matrix& w, const std::vector<float>& x, int64_t n) {
  Reference ref{std::vector<double>(n * w.rows), std::vector<double>(n * w.rows), std::vector<double>(n * w.rows)};
  std::vector<float> row(w.cols);
  for (int64_t r = 0; r < w.rows; ++r) {
    dequantize_row(w.type, w.row(r), w.cols, row.data());
    for (int64_t t = 0; t < n; ++t) {
      double s = 0, m = 0, rounding = 0, amax = 0, wsum = 0;
      for (int64_t c = 0; c < w.cols; ++c) {
        const double p = double(row[c]) * double(x[t * w.cols + c]);
        s += p;
        m += std::fabs(p);
        amax = std::max(amax, std::fabs(double(x[t * w.cols + c])));
        wsum += std::fabs(double(row[c]));
        if (c % kBlockSize == kBlockSize - 1 || c == w.cols - 1) {
          rounding += amax / activation_steps(w.type) / 2.0 * wsum;
          amax = wsum = 0;
        }
      }
      ref.y[t * w.rows + r] = s;
      ref.magnitude[t * w.rows + r] = m;
      ref.rounding[t * w.rows + r] = rounds_activations(w.type) ? rounding : 0.0;
    }
  }
  return ref;
}

// x as the integer kernels see it: each 32-block rounded by quantize_activations_q8_0 (Q4_0) or
// quantize_activations_q16 (Q8_0).
template <typename Activation>
std::vector<float> rounded_activations(const std::vector<float>& x, int64_t cols,
                                       void (*quantize)(const float*, int64_t, Activation*)) {
  std::vector<float> rounded(x.size());
  std::vector<Activation> xq(cols / kBlockSize);
  for (size_t t = 0; t < x.size() / cols; ++t) {
    quantize(x.data() + t * cols, cols, xq.data());
    for (int64_t c = 0; c < cols; ++c) rounded[t * cols + c] = xq[c / kBlockSize].d * xq[c / kBlockSize].q[c % kBlockSize];
  }
  return rounded;
}

// Error relative to sum |w x|: float accumulation of m terms is off by about m * 2^-24 of that
// sum, and a plain |y - ref| / |ref| would be meaningless where the terms cancel.
// Plus ref.rounding where activations are rounded to int8.
QString check_against(const std::vector<float>& y, const Reference& ref) {
  for (size_t i = 0; i < y.size(); ++i) {
    const double error = std::fabs(double(y[i]) - ref.y[i]);
    const double bound = 1e-5 * ref.magnitude[i] + ref.rounding[i] + 1e-30;
    if (!(error <= bound)) {
      return QString("output %1: %2 vs %3 (error %4, bound %5)").arg(i).arg(y[i]).arg(ref.y[i]).arg(error).arg(bound);
    }
  }
  return {};
}

// x as the BF16 kernels of a set with dot_rows_bf16 see it: each value rounded to bf16.
std::vector<float> bf16_activations(const std::vector<float>& x) {
  std::vector<uint16_t> bits(x.size());
  round_activations_bf16(x.data(), int64_t(x.size()), bits.data());
  std::vector<float> rounded(x.size());
  for (size_t i = 0; i < x.size(); ++i) rounded[i] = bf16_to_float(bits[i]);
  return rounded;
}

// Whether `kernels` rounds the activations of a `type` matrix to bf16 (vdpbf16ps).
bool rounds_to_bf16(const MatmulKernels& kernels, DType type) { return type == DType::BF16 && kernels.dot_rows_bf16; }

// y from matmul of w and x with `kernels` against ref = reference_matmul(w, x): for the int8 formats
// first tightly against the rounded activations (no rounding allowance: the kernels' integer sums
// are exact). BF16 with bf16 activations: tightly against the rounded activations (the products
// are exact, the sums fp32), then against the exact ones within the rounding, 2^-8 of sum |w x|.
QString check(const std::vector<float>& y, const Reference& ref, const Matrix& w, const std::vector<float>& x,
              const MatmulKernels& kernels) {
  if (rounds_to_bf16(kernels, w.type)) {
    const QString problem = check_against(y, reference_matmul(w, bf16_activations(x), int64_t(x.size()) / w.cols));
    if (!problem.isEmpty()) return "against the bf16 activations: " + problem;
    Reference rounded = ref;
    for (size_t i = 0; i < rounded.rounding.size(); ++i) rounded.rounding[i] = 0x1p-8 * ref.magnitude[i];
    return check_against(y, rounded);
  }
  if (rounds_activations(w.type)) {
    const std::vector<float> rounded = w.type != DType::Q8_0 ? rounded_activations(x, w.cols, quantize_activations_q8_0)
                                                              : rounded_activations(x, w.cols, quantize_activations_q16);
    Reference tight = reference_matmul(w, rounded, int64_t(x.size()) / w.cols);
    std::fill(tight.rounding.begin(), tight.rounding.end(), 0.0);
    const QString problem = check_against(y, tight);
    if (!problem.isEmpty()) return "against the rounded activations: " + problem;
  }
  return check_against(y, ref);
}

}  // namespace

class TestMatmul : public QObject {
  Q_OBJECT

 private slots:
  void every_format_at_odd_sizes() {
    std::mt19937 rng(2024);
    ThreadPool one(1), two(2);
    const auto sets = cpu_kernel_sets();
    QString names;
    for (const auto& set : sets) names += QString(names.isEmpty() ? "" : ", ") + set.name;
    qInfo("kernel sets: %s", qPrintable(names));
    const int64_t row_counts[] = {1, 3, 16, 17, 40, 67};
    const int64_t token_counts[] = {1, 2, 3, 5, 9, 16};  // from 8: the VNNI set's repacked tiles
    int cases = 0;
    for (DType type : kTypes) {
      // Block formats need whole 32-weight blocks; float formats take any width.
      const std::vector<int64_t> widths = is_block_quantized(type)
          ? std::vector<int64_t>{32, 96, 288, 320} : std::vector<int64_t>{32, 33, 47, 257, 319};
      for (int64_t rows : row_counts) {
        for (int64_t cols : widths) {
          const Matrix w = random_matrix(type, rows, cols, rng);
          for (int64_t n : token_counts) {
            std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
            std::vector<float> x(n * cols);
            for (auto& v : x) v = unit(rng);
            const Reference ref = reference_matmul(w, x, n);
            for (const auto& kernels : sets) {
              for (ThreadPool* pool : {&one, &two}) {
                std::vector<float> y(n * rows, std::nanf(""));
                matmul_with(kernels, w, x.data(), n, y.data(), *pool);
                const QString problem = check(y, ref, w, x, kernels);
                if (!problem.isEmpty()) {
                  QFAIL(qPrintable(QString("%1 %2x%3 n=%4 %5 threads=%6: %7").arg(to_string(type)).arg(rows)
                                       .arg(cols).arg(n).arg(kernels.name).arg(pool->size()).arg(problem)));
                }
                ++cases;
              }
            }
          }
        }
      }
    }
    QVERIFY(cases > 0);
  }

  void larger_matrices_split_across_threads() {
    // Big enough that decode gives each thread several chunks and prefill several tiles; 17 tokens
    // need two token vectors and a tail, 70 more than one group of transposed tokens.
    std::mt19937 rng(5);
    ThreadPool two(2);
    for (DType type : kTypes) {
      const Matrix w = random_matrix(type, 300, 1024, rng);
      for (int64_t n : {int64_t(1), int64_t(4), int64_t(17), int64_t(70)}) {
        std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
        std::vector<float> x(n * w.cols);
        for (auto& v : x) v = unit(rng);
        const Reference ref = reference_matmul(w, x, n);
        for (const auto& kernels : cpu_kernel_sets()) {
          std::vector<float> y(n * w.rows, std::nanf(""));
          matmul_with(kernels, w, x.data(), n, y.data(), two);
          const QString problem = check(y, ref, w, x, kernels);
          QVERIFY2(problem.isEmpty(), qPrintable(QString("%1 %2: %3").arg(to_string(type)).arg(kernels.name).arg(problem)));
        }
      }
    }
  }

  void tiny_weights_keep_their_precision() {
    // Weights below 6.1e-5 are fp16 subnormals (and give Q8_0 / Q4_0 subnormal scales): every kernel
    // must decode them exactly, which the mixed-magnitude cases above could not show.
    std::mt19937 rng(12);
    ThreadPool pool(2);
    for (DType type : kTypes) {
      const Matrix w = random_matrix(type, 21, 96, rng, 3e-5f);
      for (int64_t n : {int64_t(1), int64_t(3)}) {
        std::vector<float> x(n * w.cols);
        std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
        for (auto& v : x) v = unit(rng);
        const Reference ref = reference_matmul(w, x, n);
        for (const auto& kernels : cpu_kernel_sets()) {
          std::vector<float> y(n * w.rows);
          matmul_with(kernels, w, x.data(), n, y.data(), pool);
          const QString problem = check(y, ref, w, x, kernels);
          QVERIFY2(problem.isEmpty(), qPrintable(QString("%1 %2: %3").arg(to_string(type)).arg(kernels.name).arg(problem)));
        }
      }
    }
  }

  void infinities_and_nans_propagate() {
    // A weight that is inf or nan in storage must not decode to a finite number on any path.
    ThreadPool pool(1);
    for (DType type : {DType::F32, DType::F16, DType::BF16}) {
      std::vector<float> row0(43, 0.5f), row1(43, 0.5f);
      row0[3] = std::numeric_limits<float>::infinity();  // in the vector part
      row1[41] = std::nanf("");                           // in the scalar tail
      Matrix w;
      w.type = type;
      w.rows = 2;
      w.cols = 43;
      w.storage = allocate_aligned(w.bytes());
      quantize_row(type, row0.data(), 43, w.row(0));
      quantize_row(type, row1.data(), 43, w.row(1));
      for (const auto& kernels : cpu_kernel_sets()) {
        for (int64_t n : {int64_t(1), int64_t(3)}) {
          std::vector<float> x(n * 43, 1.0f), y(n * 2);
          matmul_with(kernels, w, x.data(), n, y.data(), pool);
          for (int64_t t = 0; t < n; ++t) {
            QVERIFY2(std::isinf(y[t * 2]) && y[t * 2] > 0, qPrintable(QString("%1 %2").arg(to_string(type)).arg(kernels.name)));
            QVERIFY2(std::isnan(y[t * 2 + 1]), qPrintable(QString("%1 %2").arg(to_string(type)).arg(kernels.name)));
          }
        }
      }
    }
  }

  void every_set_rounds_activations_to_the_same_bits() {
    // The tight check above holds only if each set's own quantize_q8_0 / quantize_q16 matches the
    // reference bit for bit, blocks with inf or nan (d = nan) and all-zero blocks included.
    std::mt19937 rng(31);
    std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
    std::vector<float> x(32 * 40);
    for (size_t i = 0; i < x.size(); ++i) x[i] = unit(rng) * (i % 61 == 0 ? 50.0f : 1.0f);
    std::fill_n(x.begin() + 64, 32, 0.0f);
    x[100] = std::numeric_limits<float>::infinity();
    x[200] = std::nanf("");
    x[300] = 127.5f;  // x / d lands exactly on .5 for some elements
    const int64_t blocks = int64_t(x.size()) / kBlockSize;
    std::vector<ActivationBlockQ8_0> want8(blocks), got8(blocks);
    std::vector<ActivationBlockQ16> want16(blocks), got16(blocks);
    quantize_activations_q8_0(x.data(), int64_t(x.size()), want8.data());
    quantize_activations_q16(x.data(), int64_t(x.size()), want16.data());
    QCOMPARE(want8[2].d, 0.0f);
    QCOMPARE(want16[2].d, 0.0f);
    QVERIFY(std::isnan(want8[100 / 32].d) && want8[200 / 32].offset == 0 && std::isnan(want16[200 / 32].d));
    for (const auto& kernels : cpu_kernel_sets()) {
      QVERIFY2(kernels.quantize_q8_0 && kernels.quantize_q16 && kernels.dot_rows_q8_0 && kernels.dot_rows_q4_0,
               kernels.name);
      kernels.quantize_q8_0(x.data(), int64_t(x.size()), got8.data());
      kernels.quantize_q16(x.data(), int64_t(x.size()), got16.data());
      for (int64_t b = 0; b < blocks; ++b) {
        QVERIFY2(std::memcmp(&want8[b], &got8[b], sizeof(ActivationBlockQ8_0)) == 0,
                 qPrintable(QString("%1 int8 block %2").arg(kernels.name).arg(b)));
        QVERIFY2(std::memcmp(&want16[b], &got16[b], sizeof(ActivationBlockQ16)) == 0,
                 qPrintable(QString("%1 int16 block %2").arg(kernels.name).arg(b)));
      }
    }
  }

  void bf16_rounding_is_to_nearest_even() {
    // The reference itself, on values whose rounding follows from the definition: bf16 keeps 8
    // significant bits, so 1 + 2^-8 lies halfway between 1 and 1 + 2^-7.
    QCOMPARE(bf16_to_float(round_to_bf16(1.0f + 0x1p-8f)), 1.0f);                 // tie: to even
    QCOMPARE(bf16_to_float(round_to_bf16(1.0f + 3 * 0x1p-8f)), 1.0f + 0x1p-6f);   // tie: to even, up
    QCOMPARE(bf16_to_float(round_to_bf16(1.0f + 0x1p-8f + 0x1p-20f)), 1.0f + 0x1p-7f);
    QCOMPARE(bf16_to_float(round_to_bf16(-1.0f - 0x1p-9f)), -1.0f);
    QVERIFY(std::isinf(bf16_to_float(round_to_bf16(std::numeric_limits<float>::max()))));
    QCOMPARE(round_to_bf16(0x1p-130f), uint16_t(0));       // subnormal: zero, as vdpbf16ps reads it
    QCOMPARE(round_to_bf16(-0x1p-130f), uint16_t(0x8000));
    QVERIFY(std::isnan(bf16_to_float(round_to_bf16(std::nanf("")))));
    QVERIFY(std::isnan(bf16_to_float(round_to_bf16(std::bit_cast<float>(0x7f800001u)))));  // not rounded to inf

    // Every set's own rounding gives the reference's bits, 32 at a time and in the tail.
    std::mt19937 rng(33);
    std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
    std::vector<float> x(32 * 7 + 13);
    for (size_t i = 0; i < x.size(); ++i) x[i] = unit(rng) * (i % 5 == 0 ? 1e4f : 1.0f);
    x[3] = 1.0f + 0x1p-8f;
    x[4] = 0x1p-130f;
    x[5] = -std::numeric_limits<float>::infinity();
    x[6] = std::nanf("");
    x[7] = std::bit_cast<float>(0xff800001u);
    x[8] = std::numeric_limits<float>::max();
    x[x.size() - 2] = std::nanf("");
    std::vector<uint16_t> want(x.size()), got(x.size());
    round_activations_bf16(x.data(), int64_t(x.size()), want.data());
    int sets = 0;
    for (const auto& kernels : cpu_kernel_sets()) {
      if (!kernels.round_bf16) continue;
      std::fill(got.begin(), got.end(), uint16_t(0x1234));
      kernels.round_bf16(x.data(), int64_t(x.size()), got.data());
      for (size_t i = 0; i < x.size(); ++i)
        QVERIFY2(got[i] == want[i], qPrintable(QString("%1 element %2: %3 vs %4").arg(kernels.name).arg(i)
                                                   .arg(got[i], 4, 16).arg(want[i], 4, 16)));
      ++sets;
    }
    if (cpu_has_avx512_bf16_kernels()) QVERIFY(sets > 0);
  }

  void nan_activations_give_nan_for_int8_formats() {
    // Rounding to int8 must not turn a nan or inf activation into a finite output.
    std::mt19937 rng(32);
    ThreadPool pool(2);
    for (DType type : {DType::Q8_0, DType::Q4_0, DType::Q5_0, DType::Q4_1, DType::Q5_1, DType::IQ4_NL}) {
      const Matrix w = random_matrix(type, 9, 96, rng);
      for (int64_t n : {int64_t(1), int64_t(10)}) {
        std::vector<float> x(n * 96, 0.25f);
        x[(n - 1) * 96 + 40] = std::nanf("");
        for (const auto& kernels : cpu_kernel_sets()) {
          std::vector<float> y(n * 9, 0.0f);
          matmul_with(kernels, w, x.data(), n, y.data(), pool);
          for (int64_t r = 0; r < 9; ++r) {
            QVERIFY2(std::isnan(y[(n - 1) * 9 + r]), qPrintable(QString("%1 %2").arg(to_string(type)).arg(kernels.name)));
            if (n > 1) QVERIFY(std::isfinite(y[r]));
          }
        }
      }
    }
  }

  void default_matmul_uses_a_correct_kernel_set() {
    std::mt19937 rng(8);
    ThreadPool pool(2);
    const Matrix w = random_matrix(DType::Q4_0, 33, 64, rng);
    std::vector<float> x(3 * 64, 0.5f);
    const Reference ref = reference_matmul(w, x, 3);
    std::vector<float> y(3 * 33);
    matmul(w, x.data(), 3, y.data(), pool);
    const QString problem = check(y, ref, w, x, best_matmul_kernels());
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
  }

  void matrix_row_returns_the_dequantized_row() {
    std::mt19937 rng(9);
    for (DType type : kTypes) {
      const Matrix w = random_matrix(type, 5, 64, rng);
      std::vector<float> got(64), want(64);
      matrix_row(w, 3, got.data());
      dequantize_row(type, w.row(3), 64, want.data());
      QCOMPARE(got, want);
    }
  }

  void bad_input_is_an_error() {
    std::mt19937 rng(10);
    ThreadPool pool(1);
    const Matrix w = random_matrix(DType::F32, 4, 8, rng);
    std::vector<float> out(8), x(8);
    QVERIFY_THROWS_EXCEPTION(Error, matrix_row(w, 4, out.data()));
    QVERIFY_THROWS_EXCEPTION(Error, matrix_row(w, -1, out.data()));
    Matrix kquant;  // K-quant rows are whole 256-weight super-blocks
    kquant.type = DType::Q4_K;
    kquant.rows = 1;
    kquant.cols = 128;
    kquant.storage = allocate_aligned(144);
    QVERIFY_THROWS_EXCEPTION(Error, matmul(kquant, x.data(), 1, out.data(), pool));
    Matrix ragged;
    ragged.type = DType::Q8_0;
    ragged.rows = 1;
    ragged.cols = 40;
    ragged.storage = allocate_aligned(64);
    QVERIFY_THROWS_EXCEPTION(Error, matmul(ragged, x.data(), 1, out.data(), pool));
    Matrix empty_storage;
    empty_storage.rows = 2;
    empty_storage.cols = 8;
    QVERIFY_THROWS_EXCEPTION(Error, matmul(empty_storage, x.data(), 1, out.data(), pool));
  }

  void allocation_is_aligned() {
    for (size_t bytes : {size_t(0), size_t(1), size_t(63), size_t(64), size_t(1000)}) {
      AlignedBytes p = allocate_aligned(bytes);
      QVERIFY(p);
      QCOMPARE(reinterpret_cast<uintptr_t>(p.get()) % 64, uintptr_t(0));
    }
    QVERIFY_THROWS_EXCEPTION(Error, allocate_aligned(SIZE_MAX - 10));
    QVERIFY_THROWS_EXCEPTION(Error, allocate_aligned(size_t(1) << 62));  // refused, not a crash
  }
};

QTEST_APPLESS_MAIN(TestMatmul)
#include "test_matmul.moc"
