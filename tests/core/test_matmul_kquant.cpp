// matmul on GGUF's K-quant weights (Q4_K, Q5_K, Q6_K, Q3_K, Q2_K) for every kernel set this CPU
// runs, against a double-precision dot of the weights as dequantize_row_kquant reads them.
//
// Weights come three ways: the K-quant matrices of llama-quantize's tiny Gemma 3 GGUFs in tests/data,
// random floats quantized by the small reference K-quantizer below (Q2_K, which no fixture holds,
// included), and random bytes with a sane fp16 scale (every bit pattern, the largest scales and
// quants included, which is where integer sums would overflow).
//
// matmul rounds each token's activations to int8 per 256 weights (quantize_activations_q8k), so it
// is held to two bounds: float rounding against the rounded activations, and the rounding itself,
// sum over super-blocks of d / 2 * sum |w|, against the exact ones. Token counts cover decode (1),
// each remainder of the kernels' groups of eight tokens (and of four), and several groups.
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <vector>

#include "kiln/types.h"
#include "model/gguf_file.h"
#include "quant/convert.h"
#include "quant/kquant_blocks.h"
#include "quant/kquants.h"
#include "runtime/cpu/matmul.h"
#include "cpu_kernel_sets.h"
#include "runtime/cpu/matmul_kernels.h"

using namespace kiln;
using kiln::test::cpu_kernel_sets;

namespace {

const DType kTypes[] = {DType::Q4_K, DType::Q6_K, DType::Q5_K, DType::Q3_K, DType::Q2_K};

int nearest(float v, int lo, int hi) { return std::clamp(static_cast<int>(std::lround(v)), lo, hi); }

// ---- A simple reference K-quantizer: per sub-block range, scales rounded on the super-block scale.

// Q4_K / Q5_K: 8 sub-blocks of 32, w = d * sc * q - dmin * m, q < levels.
template <typename Block>
void quantize_q45k(const float* x, Block& b, int levels) {
  float scale_f[8], min_f[8];
  for (int s = 0; s < 8; ++s) {
    const float lo = std::min(0.0f, *std::min_element(x + 32 * s, x + 32 * s + 32));
    const float hi = *std::max_element(x + 32 * s, x + 32 * s + 32);
    scale_f[s] = (hi - lo) / float(levels - 1);
    min_f[s] = -lo;
  }
  const float d = *std::max_element(scale_f, scale_f + 8) / 63.0f;
  const float dmin = *std::max_element(min_f, min_f + 8) / 63.0f;
  b.d = float_to_fp16(d);
  b.dmin = float_to_fp16(dmin);
  uint8_t sc[8], m[8];
  for (int s = 0; s < 8; ++s) {
    sc[s] = static_cast<uint8_t>(d > 0 ? nearest(scale_f[s] / d, 0, 63) : 0);
    m[s] = static_cast<uint8_t>(dmin > 0 ? nearest(min_f[s] / dmin, 0, 63) : 0);
  }
  for (int s = 0; s < 4; ++s) {
    b.scales[s] = static_cast<uint8_t>((sc[s] & 63) | ((sc[s + 4] >> 4) << 6));
    b.scales[s + 4] = static_cast<uint8_t>((m[s] & 63) | ((m[s + 4] >> 4) << 6));
    b.scales[s + 8] = static_cast<uint8_t>((sc[s + 4] & 15) | ((m[s + 4] & 15) << 4));
  }
  const float dd = fp16_to_float(b.d), dm = fp16_to_float(b.dmin);
  std::memset(b.qs, 0, sizeof(b.qs));
  if constexpr (requires { b.qh; }) std::memset(b.qh, 0, sizeof(b.qh));
  for (int i = 0; i < kSuperBlockSize; ++i) {
    const int s = i / 32;
    const float step = dd * sc[s];
    const int q = step > 0 ? nearest((x[i] + dm * m[s]) / step, 0, levels - 1) : 0;
    const int c = i / 64, k = (i / 32) % 2, l = i % 32;
    b.qs[32 * c + l] |= static_cast<uint8_t>((q & 15) << (4 * k));
    if constexpr (requires { b.qh; }) b.qh[l] |= static_cast<uint8_t>((q >> 4) << s);
  }
}

// Per 16-weight sub-block: the largest magnitude.
void sub_block_amax(const float* x, float (&amax)[16]) {
  for (int s = 0; s < 16; ++s) {
    amax[s] = 0.0f;
    for (int i = 0; i < 16; ++i) amax[s] = std::max(amax[s], std::fabs(x[16 * s + i]));
  }
}

void quantize_q6k(const float* x, BlockQ6K& b) {
  float amax[16];
  sub_block_amax(x, amax);
  const float d = *std::max_element(amax, amax + 16) / 31.0f / 127.0f;
  b.d = float_to_fp16(d);
  const float dd = fp16_to_float(b.d);
  for (int s = 0; s < 16; ++s) b.scales[s] = static_cast<int8_t>(d > 0 ? nearest(amax[s] / 31.0f / d, -127, 127) : 0);
  std::memset(b.ql, 0, sizeof(b.ql));
  std::memset(b.qh, 0, sizeof(b.qh));
  for (int i = 0; i < kSuperBlockSize; ++i) {
    const float step = dd * b.scales[i / 16];
    const int q = (step > 0 ? nearest(x[i] / step, -32, 31) : 0) + 32;
    const int h = i / 128, j = (i / 32) % 4, l = i % 32;
    b.ql[64 * h + 32 * (j % 2) + l] |= static_cast<uint8_t>((q & 15) << (j < 2 ? 0 : 4));
    b.qh[32 * h + l] |= static_cast<uint8_t>((q >> 4) << (2 * j));
  }
}

void quantize_q3k(const float* x, BlockQ3K& b) {
  float amax[16];
  sub_block_amax(x, amax);
  const float d = *std::max_element(amax, amax + 16) / 4.0f / 31.0f;
  b.d = float_to_fp16(d);
  const float dd = fp16_to_float(b.d);
  int sc[16];
  std::memset(b.scales, 0, sizeof(b.scales));
  for (int s = 0; s < 16; ++s) {
    sc[s] = d > 0 ? nearest(amax[s] / 4.0f / d, -32, 31) : 0;
    const int stored = sc[s] + 32;
    b.scales[s % 8] |= static_cast<uint8_t>((stored & 15) << (s < 8 ? 0 : 4));
    b.scales[8 + s % 4] |= static_cast<uint8_t>((stored >> 4) << (2 * (s / 4)));
  }
  std::memset(b.qs, 0, sizeof(b.qs));
  std::memset(b.hmask, 0, sizeof(b.hmask));
  for (int i = 0; i < kSuperBlockSize; ++i) {
    const float step = dd * sc[i / 16];
    const int q = (step > 0 ? nearest(x[i] / step, -4, 3) : 0) + 4;  // 0..7
    const int h = i / 128, j = (i / 32) % 4, l = i % 32;
    b.qs[32 * h + l] |= static_cast<uint8_t>((q & 3) << (2 * j));
    b.hmask[l] |= static_cast<uint8_t>((q >> 2) << (i / 32));
  }
}

void quantize_q2k(const float* x, BlockQ2K& b) {
  float scale_f[16], min_f[16];
  for (int s = 0; s < 16; ++s) {
    const float lo = std::min(0.0f, *std::min_element(x + 16 * s, x + 16 * s + 16));
    scale_f[s] = (*std::max_element(x + 16 * s, x + 16 * s + 16) - lo) / 3.0f;
    min_f[s] = -lo;
  }
  const float d = *std::max_element(scale_f, scale_f + 16) / 15.0f;
  const float dmin = *std::max_element(min_f, min_f + 16) / 15.0f;
  b.d = float_to_fp16(d);
  b.dmin = float_to_fp16(dmin);
  const float dd = fp16_to_float(b.d), dm = fp16_to_float(b.dmin);
  for (int s = 0; s < 16; ++s) {
    const int sc = d > 0 ? nearest(scale_f[s] / d, 0, 15) : 0, m = dmin > 0 ? nearest(min_f[s] / dmin, 0, 15) : 0;
    b.scales[s] = static_cast<uint8_t>(sc | (m << 4));
  }
  std::memset(b.qs, 0, sizeof(b.qs));
  for (int i = 0; i < kSuperBlockSize; ++i) {
    const int s = i / 16;
    const float step = dd * (b.scales[s] & 15);
    const int q = step > 0 ? nearest((x[i] + dm * (b.scales[s] >> 4)) / step, 0, 3) : 0;
    const int h = i / 128, j = (i / 32) % 4, l = i % 32;
    b.qs[32 * h + l] |= static_cast<uint8_t>(q << (2 * j));
  }
}

void quantize_super_block(DType type, const float* x, uint8_t* dst) {
  switch (type) {
    case DType::Q4_K: quantize_q45k(x, *reinterpret_cast<BlockQ4K*>(dst), 16); break;
    case DType::Q5_K: quantize_q45k(x, *reinterpret_cast<BlockQ5K*>(dst), 32); break;
    case DType::Q6_K: quantize_q6k(x, *reinterpret_cast<BlockQ6K*>(dst)); break;
    case DType::Q3_K: quantize_q3k(x, *reinterpret_cast<BlockQ3K*>(dst)); break;
    case DType::Q2_K: quantize_q2k(x, *reinterpret_cast<BlockQ2K*>(dst)); break;
    default: QFAIL("not a K-quant");
  }
}

// Offsets of the fp16 scales (d, and dmin where there is one) inside each block.
std::vector<size_t> scale_offsets(DType type) {
  switch (type) {
    case DType::Q4_K: return {offsetof(BlockQ4K, d), offsetof(BlockQ4K, dmin)};
    case DType::Q5_K: return {offsetof(BlockQ5K, d), offsetof(BlockQ5K, dmin)};
    case DType::Q6_K: return {offsetof(BlockQ6K, d)};
    case DType::Q3_K: return {offsetof(BlockQ3K, d)};
    case DType::Q2_K: return {offsetof(BlockQ2K, d), offsetof(BlockQ2K, dmin)};
    default: return {};
  }
}

enum class Source { Quantized, RandomBytes };

Matrix kquant_matrix(DType type, int64_t rows, int64_t cols, Source source, std::mt19937& rng) {
  Matrix m;
  m.type = type;
  m.rows = rows;
  m.cols = cols;
  m.storage = allocate_aligned(m.bytes());
  const size_t block = kquant_block_bytes(type);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::vector<float> x(kSuperBlockSize);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t b = 0; b < cols / kSuperBlockSize; ++b) {
      uint8_t* dst = m.row(r) + b * block;
      if (source == Source::Quantized) {
        const float magnitude = std::ldexp(1.0f, static_cast<int>(rng() % 8) - 6);  // rows of different scale
        const float shift = (r % 3 == 0) ? 0.3f * magnitude : 0.0f;                  // some blocks all but positive
        for (auto& v : x) v = unit(rng) * magnitude + shift;
        quantize_super_block(type, x.data(), dst);
      } else {
        for (size_t i = 0; i < block; ++i) dst[i] = static_cast<uint8_t>(rng());
        for (size_t offset : scale_offsets(type)) {
          const uint16_t d = float_to_fp16(std::fabs(unit(rng)) * 1e-3f + 1e-5f);
          std::memcpy(dst + offset, &d, 2);
        }
      }
    }
  }
  return m;
}

std::vector<float> random_activations(int64_t n, int64_t cols, std::mt19937& rng) {
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::vector<float> x(n * cols);
  for (int64_t i = 0; i < n * cols; ++i) x[i] = unit(rng) * (i % 97 == 0 ? 8.0f : 1.0f);  // a few outliers
  return x;
}

struct Reference {
  std::vector<double> y;          // [n][rows]
  std::vector<double> magnitude;  // [n][rows]: sum |w x|, the scale of float rounding error
  std::vector<double> rounding;   // [n][rows]: sum over super-blocks of d / 2 * sum |w|
};

// x: [n][cols]. The rounding bound uses d = max |x| / 127 per super-block, as documented for
// ActivationBlockQ8K.
Reference reference_matmul(const Matrix& w, const float* x, int64_t n) {
  Reference ref{std::vector<double>(n * w.rows), std::vector<double>(n * w.rows), std::vector<double>(n * w.rows)};
  std::vector<float> row(w.cols);
  for (int64_t r = 0; r < w.rows; ++r) {
    dequantize_row_kquant(w.type, w.row(r), w.cols, row.data());
    for (int64_t t = 0; t < n; ++t) {
      const float* xt = x + t * w.cols;
      double s = 0, m = 0, rounding = 0;
      for (int64_t b = 0; b < w.cols; b += kSuperBlockSize) {
        double amax = 0, wsum = 0;
        for (int64_t c = b; c < b + kSuperBlockSize; ++c) {
          const double p = double(row[c]) * double(xt[c]);
          s += p;
          m += std::fabs(p);
          amax = std::max(amax, std::fabs(double(xt[c])));
          wsum += std::fabs(double(row[c]));
        }
        rounding += amax / 127.0 / 2.0 * wsum;
      }
      ref.y[t * w.rows + r] = s;
      ref.magnitude[t * w.rows + r] = m;
      ref.rounding[t * w.rows + r] = rounding;
    }
  }
  return ref;
}

// Float accumulation error relative to sum |w x| (see test_matmul.cpp), plus `extra`.
QString check(const std::vector<float>& y, const std::vector<double>& want, const std::vector<double>& magnitude,
              const std::vector<double>* extra) {
  for (size_t i = 0; i < y.size(); ++i) {
    const double error = std::fabs(double(y[i]) - want[i]);
    const double bound = 1e-5 * magnitude[i] + (extra ? (*extra)[i] : 0.0) + 1e-30;
    if (!(error <= bound)) {
      return QString("output %1: %2 vs %3 (error %4, bound %5)").arg(i).arg(y[i]).arg(want[i]).arg(error).arg(bound);
    }
  }
  return {};
}

// Runs matmul_with and checks it against the activations as rounded (tight) and the exact ones
// (within the rounding bound).
QString run_and_check(const MatmulKernels& kernels, const Matrix& w, const std::vector<float>& x, int64_t n,
                      ThreadPool& pool) {
  std::vector<float> y(n * w.rows, std::nanf(""));
  matmul_with(kernels, w, x.data(), n, y.data(), pool);
  const int64_t blocks = w.cols / kSuperBlockSize;
  std::vector<ActivationBlockQ8K> xq(n * blocks);
  std::vector<float> rounded(n * w.cols);
  for (int64_t t = 0; t < n; ++t) {
    quantize_activations_q8k(x.data() + t * w.cols, w.cols, xq.data() + t * blocks);
    for (int64_t c = 0; c < w.cols; ++c) {
      const ActivationBlockQ8K& a = xq[t * blocks + c / kSuperBlockSize];
      rounded[t * w.cols + c] = a.d * a.q[c % kSuperBlockSize];
    }
  }
  const Reference tight = reference_matmul(w, rounded.data(), n);
  QString problem = check(y, tight.y, tight.magnitude, nullptr);
  if (problem.isEmpty()) {
    const Reference exact = reference_matmul(w, x.data(), n);
    problem = check(y, exact.y, exact.magnitude, &exact.rounding);
  }
  return problem;
}

}  // namespace

class TestMatmulKQuant : public QObject {
  Q_OBJECT

 private slots:
  void every_kernel_set_covers_every_type() {
    for (const auto& kernels : cpu_kernel_sets()) {
      qInfo("kernel set: %s", kernels.name);
      QVERIFY(kernels.tile_product);
      for (int t = 0; t < kMatmulTypeCount; ++t) {
        const DType type = static_cast<DType>(t);
        QVERIFY2(is_matmul_type(type), to_string(type));
        bool complete = is_kquant(type) ? kernels.dot_rows_q8k[t] != nullptr && kernels.quantize_q8k != nullptr
                                        : kernels.dot_rows[t] != nullptr && kernels.to_float[t] != nullptr;
        if (is_block32_matmul_type(type)) complete = complete && kernels.dot_rows_i8[t] && kernels.quantize_q8_0;
        QVERIFY2(complete, qPrintable(QString("%1 %2").arg(kernels.name).arg(to_string(type))));
      }
    }
  }

  void reference_quantizer_keeps_the_weights() {
    // The "quantized" weights below are only realistic if the test's quantizer is: its blocks must
    // read back close to what it was given (RMS error relative to RMS value, generous bounds).
    std::mt19937 rng(1);
    std::normal_distribution<float> normal(0.0f, 0.02f);
    const std::pair<DType, double> bounds[] = {
        {DType::Q6_K, 0.03}, {DType::Q5_K, 0.06}, {DType::Q4_K, 0.12}, {DType::Q3_K, 0.3}, {DType::Q2_K, 0.5}};
    for (auto [type, bound] : bounds) {
      std::vector<float> x(4 * kSuperBlockSize), back(x.size());
      for (auto& v : x) v = normal(rng);
      std::vector<uint8_t> blocks(4 * kquant_block_bytes(type));
      for (int b = 0; b < 4; ++b)
        quantize_super_block(type, x.data() + b * kSuperBlockSize, blocks.data() + b * kquant_block_bytes(type));
      dequantize_row_kquant(type, blocks.data(), int64_t(x.size()), back.data());
      double error = 0, value = 0;
      for (size_t i = 0; i < x.size(); ++i) {
        error += (x[i] - back[i]) * (x[i] - back[i]);
        value += x[i] * x[i];
      }
      const double relative = std::sqrt(error / value);
      QVERIFY2(relative < bound, qPrintable(QString("%1: %2").arg(to_string(type)).arg(relative)));
    }
  }

  void activations_round_to_int8_per_super_block() {
    std::mt19937 rng(3);
    const std::vector<float> x = random_activations(1, 768, rng);
    std::vector<ActivationBlockQ8K> xq(3);
    quantize_activations_q8k(x.data(), 768, xq.data());
    for (int b = 0; b < 3; ++b) {
      float amax = 0;
      for (int i = 0; i < kSuperBlockSize; ++i) amax = std::max(amax, std::fabs(x[b * kSuperBlockSize + i]));
      QCOMPARE(xq[b].d, amax / 127.0f);
      for (int i = 0; i < kSuperBlockSize; ++i) {
        const float error = std::fabs(x[b * kSuperBlockSize + i] - xq[b].d * xq[b].q[i]);
        QVERIFY2(error <= xq[b].d * 0.5f * 1.0001f, qPrintable(QString("block %1 weight %2").arg(b).arg(i)));
      }
      for (int k = 0; k < 16; ++k) {
        int sum = 0;
        for (int i = 0; i < 16; ++i) sum += xq[b].q[16 * k + i];
        QCOMPARE(int(xq[b].sums[k]), sum);
      }
    }
    std::vector<float> zeros(256, 0.0f);  // an all-zero block gives zeros, not nan
    quantize_activations_q8k(zeros.data(), 256, xq.data());
    QCOMPARE(xq[0].d, 0.0f);
    QVERIFY(std::all_of(xq[0].q, xq[0].q + 256, [](int8_t q) { return q == 0; }));
  }

  void every_set_rounds_activations_as_the_reference() {
    // The kernels' sums are only checked against quantize_activations_q8k's rounding if every
    // set's own quantize_q8k gives the same bits, non-finite blocks included.
    std::mt19937 rng(5);
    std::vector<float> x = random_activations(1, 6 * kSuperBlockSize, rng);
    std::fill(x.begin() + 256, x.begin() + 512, 0.0f);
    x[600] = std::numeric_limits<float>::infinity();
    x[900] = std::nanf("");
    x[1100] = 1e30f;
    std::vector<ActivationBlockQ8K> want(6), got(6);
    quantize_activations_q8k(x.data(), int64_t(x.size()), want.data());
    QVERIFY(std::isnan(want[2].d) && std::isnan(want[3].d) && want[1].d == 0.0f);
    for (const auto& kernels : cpu_kernel_sets()) {
      kernels.quantize_q8k(x.data(), int64_t(x.size()), got.data());
      for (int b = 0; b < 6; ++b) {
        const bool same_d = std::isnan(want[b].d) ? std::isnan(got[b].d) : got[b].d == want[b].d;
        QVERIFY2(same_d && std::memcmp(got[b].q, want[b].q, sizeof(want[b].q)) == 0 &&
                     std::memcmp(got[b].sums, want[b].sums, sizeof(want[b].sums)) == 0,
                 qPrintable(QString("%1 block %2").arg(kernels.name).arg(b)));
      }
    }
  }

  void every_type_at_odd_sizes() {
    std::mt19937 rng(2026);
    ThreadPool one(1), two(2);
    const auto sets = cpu_kernel_sets();
    const int64_t row_counts[] = {1, 5, 7, 17, 67};
    const int64_t widths[] = {256, 768, 1280};
    const int64_t token_counts[] = {1, 2, 3, 4, 5, 7, 13, 33};  // every tail of 4 and 8 tokens
    int cases = 0;
    for (DType type : kTypes) {
      for (Source source : {Source::Quantized, Source::RandomBytes}) {
        for (int64_t rows : row_counts) {
          for (int64_t cols : widths) {
            const Matrix w = kquant_matrix(type, rows, cols, source, rng);
            for (int64_t n : token_counts) {
              const std::vector<float> x = random_activations(n, cols, rng);
              for (const auto& kernels : sets) {
                ThreadPool& pool = (cases % 2) ? two : one;
                const QString problem = run_and_check(kernels, w, x, n, pool);
                if (!problem.isEmpty()) {
                  QFAIL(qPrintable(QString("%1 %2 %3x%4 n=%5 %6 threads=%7: %8").arg(to_string(type))
                                       .arg(source == Source::Quantized ? "quantized" : "random bytes").arg(rows)
                                       .arg(cols).arg(n).arg(kernels.name).arg(pool.size()).arg(problem)));
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

  void a_token_gives_the_same_bits_alone_and_beside_others() {
    // Decode (one token) and a batch (a slot decoding beside others, or prefill) run the same
    // kernels on different token counts: each token's sums must not depend on its neighbours.
    std::mt19937 rng(27);
    ThreadPool two(2);
    for (DType type : kTypes) {
      for (Source source : {Source::Quantized, Source::RandomBytes}) {
        const Matrix w = kquant_matrix(type, 37, 1280, source, rng);
        const int64_t n = 11;  // a group of eight tokens and a tail of three
        const std::vector<float> x = random_activations(n, w.cols, rng);
        for (const auto& kernels : cpu_kernel_sets()) {
          std::vector<float> together(n * w.rows), alone(w.rows);
          matmul_with(kernels, w, x.data(), n, together.data(), two);
          for (int64_t t = 0; t < n; ++t) {
            matmul_with(kernels, w, x.data() + t * w.cols, 1, alone.data(), two);
            QVERIFY2(std::memcmp(alone.data(), together.data() + t * w.rows, alone.size() * sizeof(float)) == 0,
                     qPrintable(QString("%1 %2 token %3").arg(to_string(type)).arg(kernels.name).arg(t)));
          }
        }
      }
    }
  }

  void real_blocks_from_gguf_files() {
    // Every K-quant matrix of llama-quantize's Q4_K_M and Q3_K_M files of the tiny Gemma 3
    // (Q3_K, Q4_K, Q5_K and Q6_K blocks as llama.cpp writes them), its first 64 rows.
    std::mt19937 rng(12);
    ThreadPool two(2);
    std::map<DType, int> matrices;
    for (const char* file : {"tiny-gemma3-k-q4_k_m.gguf", "tiny-gemma3-k-q3_k_m.gguf"}) {
      const auto gguf = GgufFile::open(std::string(KILN_TEST_DATA) + "/fixtures/gguf/tiny-gemma3-k/" + file);
      for (const GgufTensorInfo& t : gguf->tensors()) {
        const std::map<uint32_t, DType> kquants = {{10, DType::Q2_K}, {11, DType::Q3_K}, {12, DType::Q4_K},
                                                   {13, DType::Q5_K}, {14, DType::Q6_K}};
        if (!kquants.count(t.type) || t.dims.size() != 2) continue;
        Matrix w;
        w.type = kquants.at(t.type);
        w.cols = static_cast<int64_t>(t.dims[0]);
        w.rows = std::min<int64_t>(64, static_cast<int64_t>(t.dims[1]));
        w.storage = allocate_aligned(w.bytes());
        std::memcpy(w.storage.get(), t.data, w.bytes());
        ++matrices[w.type];
        for (int64_t n : {int64_t(1), int64_t(6)}) {
          const std::vector<float> x = random_activations(n, w.cols, rng);
          for (const auto& kernels : cpu_kernel_sets()) {
            const QString problem = run_and_check(kernels, w, x, n, two);
            QVERIFY2(problem.isEmpty(), qPrintable(QString("%1 %2 (%3) n=%4 %5: %6").arg(file).arg(t.name.c_str())
                                                       .arg(to_string(w.type)).arg(n).arg(kernels.name).arg(problem)));
          }
        }
      }
    }
    for (DType type : {DType::Q3_K, DType::Q4_K, DType::Q5_K, DType::Q6_K})
      QVERIFY2(matrices[type] > 0, to_string(type));
  }

  void larger_matrices_split_across_threads() {
    // Decode gives each thread several chunks, prefill several tiles and, at 70 tokens, three groups.
    std::mt19937 rng(11);
    ThreadPool two(2);
    for (DType type : kTypes) {
      const Matrix w = kquant_matrix(type, 301, 2304, Source::Quantized, rng);
      for (int64_t n : {int64_t(1), int64_t(4), int64_t(70)}) {
        const std::vector<float> x = random_activations(n, w.cols, rng);
        for (const auto& kernels : cpu_kernel_sets()) {
          const QString problem = run_and_check(kernels, w, x, n, two);
          QVERIFY2(problem.isEmpty(), qPrintable(QString("%1 n=%2 %3: %4").arg(to_string(type)).arg(n)
                                                     .arg(kernels.name).arg(problem)));
        }
      }
    }
  }

  void default_matmul_and_matrix_row() {
    std::mt19937 rng(4);
    ThreadPool pool(2);
    for (DType type : kTypes) {
      const Matrix w = kquant_matrix(type, 9, 512, Source::Quantized, rng);
      const std::vector<float> x = random_activations(1, 512, rng);
      const Reference ref = reference_matmul(w, x.data(), 1);
      std::vector<float> y(9);
      matmul(w, x.data(), 1, y.data(), pool);
      const QString problem = check(y, ref.y, ref.magnitude, &ref.rounding);
      QVERIFY2(problem.isEmpty(), qPrintable(QString("%1: %2").arg(to_string(type)).arg(problem)));

      std::vector<float> got(512), want(512);
      matrix_row(w, 8, got.data());
      dequantize_row_kquant(type, w.row(8), 512, want.data());
      QCOMPARE(got, want);
    }
  }

  void non_finite_activations_give_nan() {
    std::mt19937 rng(6);
    ThreadPool pool(1);
    for (DType type : kTypes) {
      const Matrix w = kquant_matrix(type, 3, 512, Source::Quantized, rng);
      std::vector<float> x = random_activations(1, 512, rng);
      x[300] = std::nanf("");
      for (const auto& kernels : cpu_kernel_sets()) {
        std::vector<float> y(3);
        matmul_with(kernels, w, x.data(), 1, y.data(), pool);
        for (float v : y) QVERIFY2(std::isnan(v), qPrintable(QString("%1 %2").arg(to_string(type)).arg(kernels.name)));
      }
    }
  }

  void rows_of_partial_super_blocks_are_an_error() {
    ThreadPool pool(1);
    std::vector<float> x(512), y(2);
    for (DType type : kTypes) {
      Matrix w;
      w.type = type;
      w.rows = 2;
      w.cols = 288;  // a whole number of 32-weight blocks, not of 256-weight super-blocks
      w.storage = allocate_aligned(4096);
      try {
        matmul(w, x.data(), 1, y.data(), pool);
        QFAIL("no error");
      } catch (const Error& e) {
        const QString message = e.what();
        QVERIFY2(message.contains("matmul") && message.contains("256") && message.contains(to_string(type)),
                 qPrintable(message));
      }
    }
  }
};

QTEST_APPLESS_MAIN(TestMatmulKQuant)
#include "test_matmul_kquant.moc"
