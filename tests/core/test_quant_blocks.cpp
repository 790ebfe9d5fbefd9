// Q8_0 and Q4_0: the exact GGUF bytes for hand-built blocks, and error bounds on random data.
#include <QtTest>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "quant/convert.h"
#include "quant/dtype.h"

using namespace kiln;

namespace {

// Little-endian fp16 scale followed by the payload bytes, as a GGUF file stores a block.
std::vector<uint8_t> block_bytes(uint16_t d, const std::vector<uint8_t>& payload) {
  std::vector<uint8_t> out(2 + payload.size());
  out[0] = static_cast<uint8_t>(d & 0xff);
  out[1] = static_cast<uint8_t>(d >> 8);
  for (size_t i = 0; i < payload.size(); ++i) out[2 + i] = payload[i];
  return out;
}

// Rows mixing scales from 1e-4 to 1e2 so that both fp16-subnormal and ordinary scales occur.
std::vector<float> random_row(std::mt19937& rng, int64_t n) {
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::uniform_int_distribution<int> decade(-4, 2);
  std::vector<float> x(n);
  for (int64_t b = 0; b < n / kBlockSize; ++b) {
    const float scale = std::pow(10.0f, static_cast<float>(decade(rng)));
    for (int j = 0; j < kBlockSize; ++j) x[b * kBlockSize + j] = unit(rng) * scale;
  }
  return x;
}

}  // namespace

class TestQuantBlocks : public QObject {
  Q_OBJECT

 private slots:
  void q8_0_exact_bytes() {
    // amax = 31.75 so d = 31.75 / 127 = 0.25 exactly (fp16 0x3400) and x / d is exact.
    std::vector<float> x(kBlockSize);
    std::vector<int8_t> q(kBlockSize);
    auto set = [&](int j, float value, int level) { x[j] = value; q[j] = static_cast<int8_t>(level); };
    set(0, -31.75f, -127);
    set(1, 31.75f, 127);
    set(2, 0.625f, 3);    // x / d = 2.5: rounds half away from zero
    set(3, -0.625f, -3);  // -2.5 -> -3
    set(4, 0.375f, 2);    // 1.5 -> 2
    set(5, 0.1f, 0);      // 0.4 -> 0
    set(6, 0.13f, 1);     // 0.52 -> 1
    for (int j = 7; j < kBlockSize; ++j) set(j, 0.25f * static_cast<float>(j - 16), j - 16);

    std::vector<uint8_t> payload(q.begin(), q.end());
    const std::vector<uint8_t> want = block_bytes(0x3400, payload);
    std::vector<uint8_t> got(row_bytes(DType::Q8_0, kBlockSize));
    QCOMPARE(got.size(), size_t(34));
    quantize_row(DType::Q8_0, x.data(), kBlockSize, got.data());
    QCOMPARE(got, want);

    std::vector<float> back(kBlockSize);
    dequantize_row(DType::Q8_0, want.data(), kBlockSize, back.data());
    for (int j = 0; j < kBlockSize; ++j) QCOMPARE(back[j], 0.25f * q[j]);
  }

  void q8_0_zero_block() {
    std::vector<float> x(kBlockSize, 0.0f);
    std::vector<uint8_t> got(34, 0xaa);
    quantize_row(DType::Q8_0, x.data(), kBlockSize, got.data());
    QCOMPARE(got, std::vector<uint8_t>(34, 0));
  }

  void q4_0_exact_bytes() {
    // The first element of largest magnitude is x[5] = -4, so d = -4 / -8 = 0.5 (fp16 0x3800),
    // 1/d = 2, and q = min(15, trunc(2x + 8.5)).
    std::vector<float> x(kBlockSize);
    std::vector<int> q(kBlockSize);
    auto set = [&](int j, float value, int level) { x[j] = value; q[j] = level; };
    set(0, 0.0f, 8);
    set(1, 0.5f, 9);
    set(2, -0.5f, 7);
    set(3, 0.25f, 9);    // 2x + 8.5 = 9.0
    set(4, -0.25f, 8);   // 8.0: ties go up, not away from zero
    set(5, -4.0f, 0);    // the scale's element
    set(6, 3.5f, 15);    // 15.5 -> 15
    set(7, 3.74f, 15);   // 15.98 -> 15
    set(8, -3.75f, 1);   // 1.0
    set(9, 1.0f, 10);
    set(10, -1.0f, 6);
    set(11, 0.74f, 9);   // 9.98 -> 9
    set(12, 0.76f, 10);  // 10.02 -> 10
    set(13, 2.0f, 12);
    set(14, -2.0f, 4);
    set(15, 0.1f, 8);    // 8.7 -> 8
    set(16, 0.3f, 9);    // 9.1 -> 9
    set(17, -3.0f, 2);   // 2.5 -> 2
    set(18, 1.5f, 11);
    set(19, -1.5f, 5);
    set(20, 4.0f, 15);   // same magnitude as x[5] but later: 16.5 -> clamped to 15
    for (int j = 21; j < kBlockSize; ++j) set(j, 0.5f * static_cast<float>(j - 21) - 2.5f, j - 18);

    std::vector<uint8_t> payload(kBlockSize / 2);
    for (int j = 0; j < kBlockSize / 2; ++j) payload[j] = static_cast<uint8_t>(q[j] | (q[j + 16] << 4));
    const std::vector<uint8_t> want = block_bytes(0x3800, payload);
    std::vector<uint8_t> got(row_bytes(DType::Q4_0, kBlockSize));
    QCOMPARE(got.size(), size_t(18));
    quantize_row(DType::Q4_0, x.data(), kBlockSize, got.data());
    QCOMPARE(got, want);

    std::vector<float> back(kBlockSize);
    dequantize_row(DType::Q4_0, want.data(), kBlockSize, back.data());
    for (int j = 0; j < kBlockSize; ++j) QCOMPARE(back[j], 0.5f * static_cast<float>(q[j] - 8));
  }

  void q4_0_positive_maximum_gives_negative_scale() {
    std::vector<float> x(kBlockSize, 0.0f);
    x[0] = 4.0f;   // first and largest: d = 4 / -8 = -0.5 (fp16 0xb800), 4 maps to level 0
    x[1] = -4.0f;  // -4 / -0.5 + 8.5 = 16.5 -> 15
    x[16] = 1.0f;  // -2 + 8.5 -> 6
    std::vector<uint8_t> got(18);
    quantize_row(DType::Q4_0, x.data(), kBlockSize, got.data());
    QCOMPARE(got[0], uint8_t(0x00));
    QCOMPARE(got[1], uint8_t(0xb8));
    QCOMPARE(got[2], uint8_t(0x0 | (6 << 4)));  // q[0] = 0, q[16] = 6
    QCOMPARE(got[3], uint8_t(15 | (8 << 4)));   // q[1] = 15, q[17] = 8 (zero)
    std::vector<float> back(kBlockSize);
    dequantize_row(DType::Q4_0, got.data(), kBlockSize, back.data());
    QCOMPARE(back[0], 4.0f);
    QCOMPARE(back[1], -3.5f);  // the clamp costs one step: error |d|
    QCOMPARE(back[16], 1.0f);
  }

  // Q8_0 bound. With d = amax / 127 (fp32) the rounding step gives |x - d q| <= d/2. The stored
  // scale is fp16(d), which adds |q| * |fp16(d) - d|: |x - fp16(d) q| <= d/2 + |q| |fp16(d) - d|.
  void q8_0_error_bound_on_random_data() {
    std::mt19937 rng(7);
    const int64_t n = 64 * kBlockSize;
    for (int trial = 0; trial < 20; ++trial) {
      const std::vector<float> x = random_row(rng, n);
      std::vector<uint8_t> bytes(row_bytes(DType::Q8_0, n));
      std::vector<float> back(n);
      quantize_row(DType::Q8_0, x.data(), n, bytes.data());
      dequantize_row(DType::Q8_0, bytes.data(), n, back.data());
      for (int64_t b = 0; b < n / kBlockSize; ++b) {
        BlockQ8_0 block;
        std::memcpy(&block, bytes.data() + b * sizeof(BlockQ8_0), sizeof block);
        double amax = 0;
        for (int j = 0; j < kBlockSize; ++j) amax = std::max(amax, std::fabs(double(x[b * kBlockSize + j])));
        const double d = amax / 127.0;
        const double stored_d = fp16_to_float(block.d);
        for (int j = 0; j < kBlockSize; ++j) {
          const double xj = x[b * kBlockSize + j];
          const int q = block.qs[j];
          QVERIFY(q >= -127 && q <= 127);
          const double slack = 1e-6 * d;  // the fp32 reciprocal and product
          if (std::fabs(xj - d * q) > d / 2 + slack) {
            QFAIL(qPrintable(QString("Q8_0 level error %1 > d/2 = %2").arg(std::fabs(xj - d * q)).arg(d / 2)));
          }
          const double bound = d / 2 + std::abs(q) * std::fabs(stored_d - d) + slack;
          QVERIFY(std::fabs(xj - back[b * kBlockSize + j]) <= bound);
        }
      }
    }
  }

  // Q4_0 bound. With d = max / -8 (fp32), an element with x/d <= 7.5 is within |d|/2 of d (q - 8);
  // an element on the other side of zero from `max` with x/d > 7.5 is clamped to level 15 and is
  // within |d| (x/d <= 8). The fp16 scale adds |q - 8| |fp16(d) - d|.
  void q4_0_error_bound_on_random_data() {
    std::mt19937 rng(11);
    const int64_t n = 64 * kBlockSize;
    int clamped = 0;
    for (int trial = 0; trial < 20; ++trial) {
      const std::vector<float> x = random_row(rng, n);
      std::vector<uint8_t> bytes(row_bytes(DType::Q4_0, n));
      std::vector<float> back(n);
      quantize_row(DType::Q4_0, x.data(), n, bytes.data());
      dequantize_row(DType::Q4_0, bytes.data(), n, back.data());
      for (int64_t b = 0; b < n / kBlockSize; ++b) {
        BlockQ4_0 block;
        std::memcpy(&block, bytes.data() + b * sizeof(BlockQ4_0), sizeof block);
        float amax = 0, max = 0;
        for (int j = 0; j < kBlockSize; ++j) {
          const float v = x[b * kBlockSize + j];
          if (std::fabs(v) > amax) { amax = std::fabs(v); max = v; }
        }
        const double d = static_cast<double>(max) / -8.0;
        const double stored_d = fp16_to_float(block.d);
        for (int j = 0; j < kBlockSize; ++j) {
          const double xj = x[b * kBlockSize + j];
          const int packed = block.qs[j % 16];
          const int q = j < 16 ? (packed & 0x0f) : (packed >> 4);
          const bool was_clamped = xj / d > 7.5;
          clamped += was_clamped;
          const double level_bound = (was_clamped ? 1.0 : 0.5) * std::fabs(d) * (1 + 1e-6);
          if (std::fabs(xj - d * (q - 8)) > level_bound) {
            QFAIL(qPrintable(QString("Q4_0 level error %1 > %2").arg(std::fabs(xj - d * (q - 8))).arg(level_bound)));
          }
          const double bound = level_bound + std::abs(q - 8) * std::fabs(stored_d - d);
          QVERIFY(std::fabs(xj - back[b * kBlockSize + j]) <= bound);
        }
      }
    }
    QVERIFY(clamped > 0);  // random data does reach the clamped case, so both bounds were exercised
  }

  void many_blocks_in_one_row_are_independent() {
    // Quantizing a 3-block row equals quantizing each block alone, in order.
    std::mt19937 rng(3);
    const std::vector<float> x = random_row(rng, 3 * kBlockSize);
    for (DType t : {DType::Q8_0, DType::Q4_0}) {
      std::vector<uint8_t> whole(row_bytes(t, 3 * kBlockSize));
      quantize_row(t, x.data(), 3 * kBlockSize, whole.data());
      const size_t block = row_bytes(t, kBlockSize);
      for (int b = 0; b < 3; ++b) {
        std::vector<uint8_t> one(block);
        quantize_row(t, x.data() + b * kBlockSize, kBlockSize, one.data());
        QVERIFY(std::memcmp(one.data(), whole.data() + b * block, block) == 0);
      }
    }
  }
};

QTEST_APPLESS_MAIN(TestQuantBlocks)
#include "test_quant_blocks.moc"
