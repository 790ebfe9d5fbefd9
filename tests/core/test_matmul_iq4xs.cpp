// matmul on IQ4_XS weights (random super-blocks: every grid value and 6-bit scale) against a
// double-precision dot of the dequantized weights, for every kernel set this CPU runs (portable,
// AVX2, AVX-512 VNNI: the tests force each), 1 and 2 threads, decode and prefill (from 8 tokens the
// VNNI set's repacked tiles), rows not a multiple of any tile. The integer kernels round each
// token's activations to int8 per 32 weights (quantize_activations_q8_0), so they are checked
// tightly against the rounded activations (their sums are exact) and, within the rounding's own
// bound, against the exact ones; matmul_float_activations (the Vulkan fp32 reference) to rounding.
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kiln/types.h"
#include "quant/convert.h"
#include "quant/iq4_xs.h"
#include "runtime/cpu/matmul.h"
#include "cpu_kernel_sets.h"
#include "runtime/cpu/matmul_kernels.h"

using namespace kiln;
using kiln::test::cpu_kernel_sets;

namespace {

// Random bytes with d chosen so weights are of order 1 (|d (ls - 32) grid| <= 32 * 127 d).
Matrix random_iq4xs(int64_t rows, int64_t cols, std::mt19937& rng, float scale = 1.0f) {
  Matrix m;
  m.type = DType::IQ4_XS;
  m.rows = rows;
  m.cols = cols;
  m.storage = allocate_aligned(m.bytes());
  for (size_t i = 0; i < m.bytes(); ++i) m.storage.get()[i] = uint8_t(rng());
  std::uniform_real_distribution<float> unit(0.25f, 1.0f);
  for (size_t b = 0; b < m.bytes() / sizeof(BlockIQ4_XS); ++b) {
    const uint16_t d = float_to_fp16(scale * unit(rng) / (32.0f * 127.0f));
    std::memcpy(m.storage.get() + b * sizeof(BlockIQ4_XS), &d, 2);
  }
  return m;
}

std::vector<float> random_x(int64_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(n));
  for (auto& v : x) v = unit(rng);
  return x;
}

// x as the integer kernels see it: each 32-block rounded by quantize_activations_q8_0.
std::vector<float> rounded(const std::vector<float>& x, int64_t cols) {
  std::vector<float> out(x.size());
  std::vector<ActivationBlockQ8_0> q(size_t(cols / kBlockSize));
  for (size_t t = 0; t < x.size() / size_t(cols); ++t) {
    quantize_activations_q8_0(x.data() + t * cols, cols, q.data());
    for (int64_t c = 0; c < cols; ++c) out[t * cols + c] = q[c / kBlockSize].d * q[c / kBlockSize].q[c % kBlockSize];
  }
  return out;
}

// Empty when every y[t][r] is within 1e-5 of sum |w x| (+ the int8 rounding's bound when
// `rounding`: half a step, max |x| / 127 / 2, times sum |w| per 32-block) of the double dot.
QString check(const Matrix& w, const std::vector<float>& x, int64_t n, const std::vector<float>& y, bool rounding) {
  std::vector<float> row(size_t(w.cols));
  for (int64_t r = 0; r < w.rows; ++r) {
    dequantize_row(w.type, w.row(r), w.cols, row.data());
    for (int64_t t = 0; t < n; ++t) {
      double s = 0, magnitude = 0, bound = 0, amax = 0, wsum = 0;
      for (int64_t c = 0; c < w.cols; ++c) {
        const double p = double(row[c]) * x[t * w.cols + c];
        s += p;
        magnitude += std::fabs(p);
        amax = std::max(amax, std::fabs(double(x[t * w.cols + c])));
        wsum += std::fabs(double(row[c]));
        if (c % kBlockSize == kBlockSize - 1) {
          if (rounding) bound += amax / 127.0 / 2.0 * wsum;
          amax = wsum = 0;
        }
      }
      bound += 1e-5 * magnitude + 1e-30;
      const double got = y[t * w.rows + r];
      if (!(std::fabs(got - s) <= bound))
        return QString("row %1 token %2: %3 vs %4 (bound %5)").arg(r).arg(t).arg(got).arg(s).arg(bound);
    }
  }
  return {};
}

}  // namespace

class TestMatmulIq4xs : public QObject {
  Q_OBJECT

 private slots:
  void every_set_against_the_reference() {
    std::mt19937 rng(2026);
    ThreadPool one(1), two(2);
    const auto sets = cpu_kernel_sets();
    QString names;
    for (const auto& set : sets) names += QString(names.isEmpty() ? "" : ", ") + set.name;
    qInfo("kernel sets: %s", qPrintable(names));
    for (const auto& set : sets) QVERIFY2(set.dot_rows_i8[int(DType::IQ4_XS)] && set.quantize_q8_0, set.name);
    int cases = 0;
    for (int64_t rows : {1, 3, 16, 17, 40, 67}) {
      for (int64_t cols : {256, 768, 2304}) {
        const Matrix w = random_iq4xs(rows, cols, rng);
        for (int64_t n : {1, 2, 3, 5, 9, 16, 17}) {
          const std::vector<float> x = random_x(n * cols, rng), xr = rounded(x, cols);
          for (const auto& kernels : sets) {
            for (ThreadPool* pool : {&one, &two}) {
              std::vector<float> y(size_t(n * rows), std::nanf(""));
              matmul_with(kernels, w, x.data(), n, y.data(), *pool);
              QString problem = check(w, xr, n, y, false);
              if (problem.isEmpty()) problem = check(w, x, n, y, true);
              QVERIFY2(problem.isEmpty(), qPrintable(QString("%1x%2 n=%3 %4 threads=%5: %6").arg(rows).arg(cols).arg(n)
                                                         .arg(kernels.name).arg(pool->size()).arg(problem)));
              ++cases;
            }
          }
        }
      }
    }
    QVERIFY(cases > 0);
  }

  // Several chunks a thread in decode, several 8-row tiles and a token tail in prefill.
  void larger_matrices_split_across_threads() {
    std::mt19937 rng(7);
    ThreadPool two(2);
    const Matrix w = random_iq4xs(300, 1024, rng);
    for (int64_t n : {1, 4, 17, 70}) {
      const std::vector<float> x = random_x(n * w.cols, rng), xr = rounded(x, w.cols);
      for (const auto& kernels : cpu_kernel_sets()) {
        std::vector<float> y(size_t(n * w.rows), std::nanf(""));
        matmul_with(kernels, w, x.data(), n, y.data(), two);
        const QString problem = check(w, xr, n, y, false);
        QVERIFY2(problem.isEmpty(), qPrintable(QString("n=%1 %2: %3").arg(n).arg(kernels.name).arg(problem)));
      }
    }
  }

  // The float path (decode's dot_rows, prefill's super-block tiles): the Vulkan fp32 kernels' reference.
  void float_activations_to_rounding() {
    std::mt19937 rng(9);
    ThreadPool two(2);
    // Tiny scales: fp16 subnormal d, which every path must decode exactly.
    for (float scale : {1.0f, 1e-3f}) {
      const Matrix w = random_iq4xs(37, 768, rng, scale);
      for (int64_t n : {1, 3, 33}) {
        const std::vector<float> x = random_x(n * w.cols, rng);
        std::vector<float> y(size_t(n * w.rows), std::nanf(""));
        matmul_float_activations(w, x.data(), n, y.data(), two);
        const QString problem = check(w, x, n, y, false);
        QVERIFY2(problem.isEmpty(), qPrintable(QString("scale %1 n=%2: %3").arg(scale).arg(n).arg(problem)));
      }
    }
  }

  // Rounding to int8 must not turn a nan activation into a finite output.
  void nan_activations_give_nan() {
    std::mt19937 rng(32);
    ThreadPool pool(2);
    const Matrix w = random_iq4xs(9, 512, rng);
    for (int64_t n : {1, 10}) {
      std::vector<float> x(size_t(n * 512), 0.25f);
      x[(n - 1) * 512 + 300] = std::nanf("");
      for (const auto& kernels : cpu_kernel_sets()) {
        std::vector<float> y(size_t(n * 9), 0.0f);
        matmul_with(kernels, w, x.data(), n, y.data(), pool);
        for (int64_t r = 0; r < 9; ++r) {
          QVERIFY2(std::isnan(y[(n - 1) * 9 + r]), kernels.name);
          if (n > 1) QVERIFY(std::isfinite(y[r]));
        }
      }
    }
  }
};

QTEST_APPLESS_MAIN(TestMatmulIq4xs)
#include "test_matmul_iq4xs.moc"
