// The kernel's arithmetic as the emulator models it (npu_kernel_math.h), on the inputs where the
// documented hardware differs from textbook math:
// - floor and ceil built from AIE-ML's truncating float -> int32 conversion plus a correction: the
//   exp2 path at negative fractions and the running maximum at positive fractional maxima, against
//   a double-precision reference, and against what the uncorrected truncation (the kernel before
//   issue 29) would compute there;
// - the matrix unit's one rounding per 8-product mmul step, visible in a whole kernel step.
#include <QtTest>
#include <algorithm>
#include <bit>
#include <cmath>
#include <vector>

#include "runtime/npu/npu_emulator.h"
#include "runtime/npu/npu_kernel_math.h"

using namespace kiln;
using namespace kiln_npu;
using npu_math::FloatToInt;

namespace {

// exp2 as the kernel computed it before the fix, on hardware that truncates: n = trunc(x), so the
// fraction x - n lies in (-1, 0], outside the cubic's interval [0, 1).
float exp2_uncorrected(float x) {
  if (!(x >= kExpMin)) return 0.0f;
  const int32_t n = npu_math::to_fixed_int32(std::min(x, 0.0f), FloatToInt::TowardZero);
  const float fb = npu_math::round_bf16(x - float(n));
  float acc = npu_math::mac_bf16(kExp2C2, kExp2C3, fb);
  acc = npu_math::mac_bf16(kExp2C1, npu_math::round_bf16(acc), fb);
  acc = npu_math::mac_bf16(kExp2C0, npu_math::round_bf16(acc), fb);
  return std::bit_cast<float>(std::bit_cast<uint32_t>(acc) + (uint32_t(n) << 23));
}

// Arguments of exp2 with a negative fraction (floor and truncation differ), all exact in fp32.
std::vector<float> negative_fractions() {
  std::vector<float> xs;
  for (int whole = 0; whole <= 125; ++whole)
    for (int k = 1; k < 64; ++k) xs.push_back(-float(whole) - float(k) / 64.0f);
  xs.push_back(std::nextafter(-1.0f, 0.0f));  // just above -1: fraction ~1 - 2^-24 under floor
  xs.push_back(std::nextafter(0.0f, -1.0f));  // the smallest negative float
  return xs;
}

uint16_t bf16_bits(float f) { return uint16_t(std::bit_cast<uint32_t>(npu_math::round_bf16(f)) >> 16); }

// One kernel step with one query row against the keys whose scores (q . k) and values are given:
// D = 8, 8 keys per tile, so each score is a single mmul step. q_row and key_rows are bf16 values.
struct StepResult {
  float m = 0, l = 0;
  std::vector<float> o;
};
StepResult run_step(const std::vector<float>& q_row, const std::vector<std::vector<float>>& key_rows,
                    const std::vector<std::vector<float>>& value_rows) {
  const NpuTileShape shape{8, 4, 8, 1, 1, 1};
  const int D = 8, keys = int(key_rows.size());
  std::vector<int32_t> q(size_t(q_object_words(shape)), 0), kv(size_t(kv_object_words(shape)), 0),
      out(size_t(out_object_words(shape)), 0);
  q[kDescMagic] = kDescriptorMagic;
  q[kDescRowsValid] = 1;
  q[kDescGroup] = 1;
  q[kDescQueryPos] = keys - 1;  // the query sees every key
  q[kDescKeyEnd] = keys;
  q[kDescTilesValid] = 1;
  auto* qt = reinterpret_cast<uint16_t*>(q.data() + kDescriptorWords);
  for (int d = 0; d < D; ++d) qt[q_offset(D, 0, d)] = bf16_bits(q_row[d]);
  auto* kt = reinterpret_cast<uint16_t*>(kv.data());
  uint16_t* vt = kt + shape.kv_keys * D;
  for (int j = 0; j < keys; ++j)
    for (int d = 0; d < D; ++d) {
      kt[kt_offset(shape.kv_keys, d, j)] = bf16_bits(key_rows[j][d]);
      vt[v_offset(D, j, d)] = bf16_bits(value_rows[j][d]);
    }
  emulate_npu_step(shape, q.data(), kv.data(), out.data());
  const float* f = reinterpret_cast<const float*>(out.data());
  StepResult r;
  r.m = f[shape.q_rows * D];
  r.l = f[shape.q_rows * D + shape.q_rows];
  for (int d = 0; d < D; ++d) r.o.push_back(f[o_offset(D, 0, d)]);
  return r;
}

}  // namespace

class NpuKernelMath : public QObject {
  Q_OBJECT
 private slots:
  // UG1529: AIE-ML float -> int32 (vector) truncates. The correction makes floor and ceil exact for
  // it, and for a round-to-nearest conversion too (a later AIE API may switch).
  void floor_and_ceil_by_conversion() {
    QCOMPARE(npu_math::to_fixed_int32(-2.5f), -2);
    QCOMPARE(npu_math::to_fixed_int32(2.75f), 2);
    std::vector<float> xs = negative_fractions();
    for (float x : negative_fractions()) xs.push_back(-x);           // positive fractions
    for (int i = -130; i <= 130; ++i) xs.push_back(float(i));        // whole numbers stay put
    for (float big : {1048575.5f, -1048575.5f, 1048576.0f, -1048576.0f}) xs.push_back(big);
    for (FloatToInt mode : {FloatToInt::TowardZero, FloatToInt::NearestEven})
      for (float x : xs) {
        QCOMPARE(npu_math::floor_by_conversion(x, mode), int32_t(std::floor(x)));
        QCOMPARE(npu_math::ceil_by_conversion(x, mode), int32_t(std::ceil(x)));
      }
  }

  // The exp2 path where floor and truncation differ: within 3e-3 of exp2 in double precision (the
  // cubic's 1.0e-4 plus bf16 rounding of the fraction, 2^-9 relative, times ln 2), the same bits
  // under either conversion model; the uncorrected truncation is off by up to ~10 %.
  void exp2_at_negative_fractions() {
    double worst = 0, worst_uncorrected = 0;
    for (float x : negative_fractions()) {
      const double want = std::exp2(double(x));
      const float got = npu_math::exp2_kernel(x, FloatToInt::TowardZero);
      QCOMPARE(std::bit_cast<uint32_t>(got), std::bit_cast<uint32_t>(npu_math::exp2_kernel(x, FloatToInt::NearestEven)));
      worst = std::max(worst, std::fabs(got / want - 1.0));
      worst_uncorrected = std::max(worst_uncorrected, std::fabs(exp2_uncorrected(x) / want - 1.0));
    }
    qInfo("exp2 at negative fractions: largest relative error %.3g (uncorrected truncation %.3g)", worst,
          worst_uncorrected);
    QVERIFY2(worst < 3e-3, qPrintable(QString("relative error %1").arg(worst)));
    QVERIFY(worst_uncorrected > 0.05);  // these inputs do tell the two apart
  }

  // The running maximum at positive fractional maxima: the ceiling, so no score exceeds m and every
  // exp2 argument stays <= 0. Truncation would round 2.25 down to 2 and clamp 2^0.25 to 2^0.
  void running_maximum_is_a_ceiling() {
    for (float x : {0.25f, 2.25f, 7.5f, 100.0f + 1.0f / 64, 1048575.5f}) {
      QCOMPARE(npu_math::ceil_clamped(x), std::ceil(x));
      QVERIFY(float(npu_math::to_fixed_int32(x)) < x);  // what the old kernel stored as m
    }
    QCOMPARE(npu_math::ceil_clamped(-2.75f), -2.0f);
    QCOMPARE(npu_math::ceil_clamped(3.0f), 3.0f);
    QCOMPARE(npu_math::ceil_clamped(1e30f), kMaxClamp);
    QCOMPARE(npu_math::ceil_clamped(-1e30f), -kMaxClamp);
  }

  // A whole step with a positive fractional maximum (2.25) and negative fractional scores: m is 3,
  // each output is its key's weight exp2(s - 3) (values are one-hot), l their sum, all within the
  // exp2 bound plus the bf16 rounding of P (2^-9) of the double-precision reference.
  void step_with_fractional_scores() {
    const std::vector<float> scores = {2.25f, 1.5f, -0.75f, 0.5f, -3.25f, 2.0f, -10.125f, 0.0f};
    std::vector<std::vector<float>> k(8, std::vector<float>(8, 0.0f)), v = k;
    for (int j = 0; j < 8; ++j) {
      k[j][0] = scores[j];
      v[j][j] = 1.0f;
    }
    std::vector<float> q(8, 0.0f);
    q[0] = 1.0f;
    const StepResult r = run_step(q, k, v);
    QCOMPARE(r.m, 3.0f);
    double l_ref = 0;
    for (int j = 0; j < 8; ++j) {
      const double p = std::exp2(double(scores[j]) - 3.0);
      l_ref += p;
      QVERIFY2(r.o[j] <= 1.0f, "a weight above 1: the maximum was rounded down");
      QVERIFY2(std::fabs(r.o[j] / p - 1.0) < 3e-3 + 2e-3, qPrintable(QString("key %1: %2 vs %3").arg(j).arg(r.o[j]).arg(p)));
    }
    QVERIFY(std::fabs(r.l / l_ref - 1.0) < 5e-3);
  }

  // AM020's matrix unit adds a step's 8 products to the accumulator with one rounding. Scores of
  // 1 + 7 * 2^-24: one rounding gives 1 + 2^-21 (so m = 2), adding the products one at a time gives
  // 1 (m = 1) because each 1 + 2^-24 rounds back to 1.
  void one_rounding_per_mmul_step() {
    const float tiny = std::ldexp(1.0f, -12);
    std::vector<float> q(8, tiny), key(8, tiny);
    q[0] = key[0] = 1.0f;
    const std::vector<float> products = {1.0f, tiny * tiny, tiny * tiny, tiny * tiny,
                                         tiny * tiny, tiny * tiny, tiny * tiny, tiny * tiny};
    QCOMPARE(npu_math::mmul_lane(0.0f, products.data(), 8), 1.0f + std::ldexp(1.0f, -21));
    float sequential = 0.0f;
    for (float p : products) sequential += p;
    QCOMPARE(sequential, 1.0f);
    const StepResult r = run_step(q, {key}, {std::vector<float>(8, 1.0f)});
    QCOMPARE(r.m, 2.0f);
  }
};

QTEST_APPLESS_MAIN(NpuKernelMath)
#include "test_npu_kernel_math.moc"
