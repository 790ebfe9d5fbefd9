// fp16 / bf16 conversions against known bit patterns and an independent nearest-value oracle, and
// the size and naming helpers of quant/dtype.h.
#include <QtTest>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "kiln/types.h"
#include "quant/convert.h"
#include "quant/dtype.h"

using namespace kiln;

namespace {

float from_bits(uint32_t b) { return std::bit_cast<float>(b); }
uint32_t bits_of(float f) { return std::bit_cast<uint32_t>(f); }

// The value of an fp16 bit pattern computed from the IEEE definition, in double (independent of
// fp16_to_float).
double fp16_value(uint16_t h) {
  const int e = (h >> 10) & 0x1f;
  const int m = h & 0x3ff;
  const double sign = (h & 0x8000) ? -1.0 : 1.0;
  if (e == 0) return sign * std::ldexp(m, -24);
  return sign * std::ldexp(1024 + m, e - 25);
}

// Round-to-nearest-even into fp16 by searching the sorted table of all finite non-negative fp16
// values (plus 65536 standing for inf): no bit tricks shared with the code under test.
uint16_t fp16_oracle(float f, const std::vector<double>& positive_values) {
  const uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  const double a = std::fabs(static_cast<double>(f));
  if (a >= 65520.0) return sign | 0x7c00;  // halfway between 65504 and 65536 and above: inf
  const auto it = std::lower_bound(positive_values.begin(), positive_values.end(), a);
  auto hi = static_cast<uint16_t>(it - positive_values.begin());
  if (positive_values[hi] == a || hi == 0) return sign | hi;
  const auto lo = static_cast<uint16_t>(hi - 1);
  const double below = a - positive_values[lo];
  const double above = positive_values[hi] - a;
  if (below < above) return sign | lo;
  if (above < below) return sign | hi;
  return sign | ((lo & 1) ? hi : lo);  // tie: the even pattern
}

// Round-to-nearest-even into bf16 by comparing the two neighbours in double.
uint16_t bf16_oracle(float f) {
  const uint32_t b = bits_of(f);
  const auto lo = static_cast<uint16_t>(b >> 16);
  if ((b & 0xffff) == 0) return lo;
  const auto hi = static_cast<uint16_t>(lo + 1);  // next magnitude (may be inf)
  const double x = std::fabs(static_cast<double>(f));
  const double vlo = std::fabs(static_cast<double>(from_bits(uint32_t(lo) << 16)));
  const double vhi_bits = std::fabs(static_cast<double>(from_bits(uint32_t(hi) << 16)));
  // The neighbour above the largest finite bf16 is inf; rounding treats it as 2^128.
  const double vhi = std::isinf(vhi_bits) ? std::ldexp(1.0, 128) : vhi_bits;
  if (x - vlo < vhi - x) return lo;
  if (vhi - x < x - vlo) return hi;
  return (lo & 1) ? hi : lo;
}

}  // namespace

class TestQuantConvert : public QObject {
  Q_OBJECT

 private slots:
  void fp16_known_patterns() {
    QCOMPARE(float_to_fp16(1.0f), uint16_t(0x3c00));
    QCOMPARE(float_to_fp16(-2.5f), uint16_t(0xc100));
    QCOMPARE(float_to_fp16(65504.0f), uint16_t(0x7bff));
    QCOMPARE(float_to_fp16(0.0f), uint16_t(0x0000));
    QCOMPARE(float_to_fp16(-0.0f), uint16_t(0x8000));
    QCOMPARE(float_to_fp16(0.1f), uint16_t(0x2e66));
    QCOMPARE(float_to_fp16(std::ldexp(1.0f, -14)), uint16_t(0x0400));     // smallest normal
    QCOMPARE(float_to_fp16(std::ldexp(1.0f, -24)), uint16_t(0x0001));     // smallest subnormal
    QCOMPARE(float_to_fp16(std::ldexp(1023.0f, -24)), uint16_t(0x03ff));  // largest subnormal
    QCOMPARE(float_to_fp16(std::numeric_limits<float>::infinity()), uint16_t(0x7c00));
    QCOMPARE(float_to_fp16(-std::numeric_limits<float>::infinity()), uint16_t(0xfc00));
    QCOMPARE(float_to_fp16(1e10f), uint16_t(0x7c00));  // overflow
    QCOMPARE(float_to_fp16(1e-10f), uint16_t(0x0000)); // underflow
    const uint16_t nan = float_to_fp16(std::numeric_limits<float>::quiet_NaN());
    QVERIFY((nan & 0x7c00) == 0x7c00 && (nan & 0x3ff) != 0);
    const uint16_t snan = float_to_fp16(from_bits(0xff800001u));  // payload only in low bits
    QVERIFY((snan & 0x7c00) == 0x7c00 && (snan & 0x3ff) != 0 && (snan & 0x8000));
  }

  void fp16_rounding_ties() {
    // Between 1 (0x3c00) and 1 + 2^-10 (0x3c01): the tie goes to the even 0x3c00.
    QCOMPARE(float_to_fp16(1.0f + std::ldexp(1.0f, -11)), uint16_t(0x3c00));
    QCOMPARE(float_to_fp16(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)), uint16_t(0x3c01));
    // Between 0x3c01 and 0x3c02: the tie goes up to the even 0x3c02.
    QCOMPARE(float_to_fp16(1.0f + 3 * std::ldexp(1.0f, -11)), uint16_t(0x3c02));
    // 2047.5 ties between 2047 (odd mantissa) and 2048: the carry moves into the exponent.
    QCOMPARE(float_to_fp16(2047.5f), uint16_t(0x6800));
    QCOMPARE(float_to_fp16(65519.0f), uint16_t(0x7bff));
    QCOMPARE(float_to_fp16(65520.0f), uint16_t(0x7c00));  // tie between 65504 and 65536 -> inf
    // Subnormal ties: 2^-25 is halfway between 0 and 2^-24 -> 0; 1.5 * 2^-24 -> 2 * 2^-24.
    QCOMPARE(float_to_fp16(std::ldexp(1.0f, -25)), uint16_t(0x0000));
    QCOMPARE(float_to_fp16(std::ldexp(1.0f, -25) * 1.0001f), uint16_t(0x0001));
    QCOMPARE(float_to_fp16(std::ldexp(3.0f, -25)), uint16_t(0x0002));
    QCOMPARE(float_to_fp16(-std::ldexp(3.0f, -25)), uint16_t(0x8002));
    // Largest subnormal + half an ulp ties up into the smallest normal.
    QCOMPARE(float_to_fp16(std::ldexp(2047.0f, -25)), uint16_t(0x0400));
  }

  void fp16_to_float_known() {
    QCOMPARE(fp16_to_float(0x3c00), 1.0f);
    QCOMPARE(fp16_to_float(0xc100), -2.5f);
    QCOMPARE(fp16_to_float(0x7bff), 65504.0f);
    QCOMPARE(fp16_to_float(0x0001), std::ldexp(1.0f, -24));
    QCOMPARE(fp16_to_float(0x03ff), std::ldexp(1023.0f, -24));
    QCOMPARE(fp16_to_float(0x0400), std::ldexp(1.0f, -14));
    QVERIFY(std::isinf(fp16_to_float(0x7c00)) && fp16_to_float(0x7c00) > 0);
    QVERIFY(std::isinf(fp16_to_float(0xfc00)) && fp16_to_float(0xfc00) < 0);
    QVERIFY(std::isnan(fp16_to_float(0x7e00)));
    QVERIFY(std::isnan(fp16_to_float(0x7c01)));
    QVERIFY(std::signbit(fp16_to_float(0x8000)) && fp16_to_float(0x8000) == 0.0f);
  }

  void fp16_every_pattern() {
    // All 65536 patterns decode to their IEEE value and encode back to themselves (nan stays nan).
    for (uint32_t h = 0; h < 0x10000; ++h) {
      const auto p = static_cast<uint16_t>(h);
      const float f = fp16_to_float(p);
      const bool is_nan = ((p & 0x7c00) == 0x7c00) && (p & 0x3ff);
      if (is_nan) {
        QVERIFY(std::isnan(f));
        const uint16_t back = float_to_fp16(f);
        QVERIFY((back & 0x7c00) == 0x7c00 && (back & 0x3ff) != 0);
        continue;
      }
      if ((p & 0x7c00) != 0x7c00) QCOMPARE(static_cast<double>(f), fp16_value(p));
      if (float_to_fp16(f) != p) QFAIL(qPrintable(QString("fp16 0x%1 does not round-trip").arg(h, 4, 16)));
    }
  }

  void fp16_random_against_oracle() {
    std::vector<double> positive;  // every finite non-negative fp16 value, ascending
    for (uint16_t h = 0; h < 0x7c00; ++h) positive.push_back(fp16_value(h));
    positive.push_back(65536.0);  // pattern 0x7c00 (inf) is the neighbour above 65504
    std::mt19937 rng(1234);
    // Floats whose exponent spans the fp16 range and a bit beyond on both sides.
    std::uniform_int_distribution<uint32_t> exponent(127 - 27, 127 + 17);
    std::uniform_int_distribution<uint32_t> mantissa(0, 0x7fffff);
    for (int i = 0; i < 200000; ++i) {
      const uint32_t sign = (i & 1) ? 0x80000000u : 0;
      // Every fourth sample sits exactly on or next to a halfway point.
      uint32_t m = mantissa(rng);
      if (i % 4 == 0) m = (m & ~0x1fffu) | 0x1000u | (i % 8 == 0 ? 0 : 1);
      const float f = from_bits(sign | (exponent(rng) << 23) | m);
      const uint16_t want = fp16_oracle(f, positive);
      if (float_to_fp16(f) != want) {
        QFAIL(qPrintable(QString("float_to_fp16(%1 = 0x%2) gave 0x%3, nearest-even is 0x%4")
                             .arg(double(f), 0, 'g', 12).arg(bits_of(f), 8, 16)
                             .arg(float_to_fp16(f), 4, 16).arg(want, 4, 16)));
      }
    }
  }

  void bf16_known_patterns() {
    QCOMPARE(float_to_bf16(1.0f), uint16_t(0x3f80));
    QCOMPARE(float_to_bf16(-2.5f), uint16_t(0xc020));
    QCOMPARE(float_to_bf16(65504.0f), uint16_t(0x4780));  // 65504 needs 11 bits: rounds to 65536
    QCOMPARE(bf16_to_float(0x3f80), 1.0f);
    QCOMPARE(bf16_to_float(0xc020), -2.5f);
    QCOMPARE(bf16_to_float(0x4780), 65536.0f);
    // Ties: 1 + 2^-8 is halfway between 0x3f80 and 0x3f81 -> even 0x3f80; the next tie goes up.
    QCOMPARE(float_to_bf16(from_bits(0x3f808000u)), uint16_t(0x3f80));
    QCOMPARE(float_to_bf16(from_bits(0x3f818000u)), uint16_t(0x3f82));
    QCOMPARE(float_to_bf16(from_bits(0x3f808001u)), uint16_t(0x3f81));
    // Subnormals keep the same rule.
    QCOMPARE(float_to_bf16(from_bits(0x00008000u)), uint16_t(0x0000));
    QCOMPARE(float_to_bf16(from_bits(0x00018000u)), uint16_t(0x0002));
    QCOMPARE(float_to_bf16(from_bits(0x80010000u)), uint16_t(0x8001));
    QCOMPARE(bf16_to_float(0x0001), from_bits(0x00010000u));
    // The largest float rounds up to inf; inf stays inf.
    QCOMPARE(float_to_bf16(std::numeric_limits<float>::max()), uint16_t(0x7f80));
    QCOMPARE(float_to_bf16(-std::numeric_limits<float>::infinity()), uint16_t(0xff80));
    // A nan whose payload is only in the low bits must stay nan, not become inf.
    const uint16_t nan = float_to_bf16(from_bits(0x7f800001u));
    QVERIFY((nan & 0x7f80) == 0x7f80 && (nan & 0x7f) != 0);
    QVERIFY(std::isnan(bf16_to_float(nan)));
  }

  void bf16_random_against_oracle() {
    std::mt19937 rng(99);
    std::uniform_int_distribution<uint32_t> any_bits;
    for (int i = 0; i < 200000; ++i) {
      uint32_t b = any_bits(rng);
      if (i % 4 == 0) b = (b & 0xffff0000u) | 0x8000u;  // exact ties
      const float f = from_bits(b);
      if (std::isnan(f)) continue;
      const uint16_t want = bf16_oracle(f);
      if (float_to_bf16(f) != want) {
        QFAIL(qPrintable(QString("float_to_bf16(0x%1) gave 0x%2, nearest-even is 0x%3")
                             .arg(b, 8, 16).arg(float_to_bf16(f), 4, 16).arg(want, 4, 16)));
      }
    }
  }

  void rows_of_float_formats_round_trip() {
    const std::vector<float> values = {1.0f, -2.5f, 0.1f, 65504.0f, 3.14159f, -1e-6f, 0.0f};
    const auto n = static_cast<int64_t>(values.size());
    std::vector<uint8_t> bytes(row_bytes(DType::F16, n));
    std::vector<float> back(values.size());
    quantize_row(DType::F16, values.data(), n, bytes.data());
    dequantize_row(DType::F16, bytes.data(), n, back.data());
    for (size_t i = 0; i < values.size(); ++i) QCOMPARE(back[i], fp16_to_float(float_to_fp16(values[i])));
    QCOMPARE(bytes[0], uint8_t(0x00));  // 1.0 = 0x3c00, little-endian
    QCOMPARE(bytes[1], uint8_t(0x3c));
    quantize_row(DType::BF16, values.data(), n, bytes.data());
    dequantize_row(DType::BF16, bytes.data(), n, back.data());
    for (size_t i = 0; i < values.size(); ++i) QCOMPARE(back[i], bf16_to_float(float_to_bf16(values[i])));
    std::vector<uint8_t> f32(row_bytes(DType::F32, n));
    quantize_row(DType::F32, values.data(), n, f32.data());
    dequantize_row(DType::F32, f32.data(), n, back.data());
    for (size_t i = 0; i < values.size(); ++i) QCOMPARE(back[i], values[i]);
  }

  void row_bytes_of_each_format() {
    QCOMPARE(row_bytes(DType::F32, 10), size_t(40));
    QCOMPARE(row_bytes(DType::F16, 7), size_t(14));
    QCOMPARE(row_bytes(DType::BF16, 2560), size_t(5120));
    QCOMPARE(row_bytes(DType::Q8_0, 32), size_t(34));
    QCOMPARE(row_bytes(DType::Q8_0, 2560), size_t(80 * 34));
    QCOMPARE(row_bytes(DType::Q4_0, 32), size_t(18));
    QCOMPARE(row_bytes(DType::Q4_0, 10240), size_t(320 * 18));
    QCOMPARE(row_bytes(DType::Q4_K, 512), size_t(2 * 144));
    QCOMPARE(row_bytes(DType::Q5_K, 256), size_t(176));
    QCOMPARE(row_bytes(DType::Q6_K, 2560), size_t(10 * 210));
    QCOMPARE(row_bytes(DType::F32, 0), size_t(0));
    QVERIFY_THROWS_EXCEPTION(Error, row_bytes(DType::Q8_0, 33));
    QVERIFY_THROWS_EXCEPTION(Error, row_bytes(DType::Q4_0, 48));
    QVERIFY_THROWS_EXCEPTION(Error, row_bytes(DType::Q6_K, 288));
    QVERIFY_THROWS_EXCEPTION(Error, row_bytes(DType::F16, -1));
  }

  void names_and_block_flags() {
    QCOMPARE(QString(to_string(DType::F32)), QString("F32"));
    QCOMPARE(QString(to_string(DType::BF16)), QString("BF16"));
    QCOMPARE(QString(to_string(DType::Q8_0)), QString("Q8_0"));
    QCOMPARE(QString(to_string(DType::Q4_0)), QString("Q4_0"));
    QCOMPARE(QString(to_string(DType::Q6_K)), QString("Q6_K"));
    QVERIFY(!is_block_quantized(DType::F32) && !is_block_quantized(DType::F16) && !is_block_quantized(DType::BF16));
    QVERIFY(is_block_quantized(DType::Q8_0) && is_block_quantized(DType::Q4_0) && is_block_quantized(DType::Q5_K));
  }

  void storage_type_falls_back_for_partial_blocks() {
    QCOMPARE(storage_type_for(DType::Q8_0, 2560), DType::Q8_0);
    QCOMPARE(storage_type_for(DType::Q4_0, 64), DType::Q4_0);
    QCOMPARE(storage_type_for(DType::Q8_0, 100), DType::F16);
    QCOMPARE(storage_type_for(DType::Q4_0, 1), DType::F16);
    QCOMPARE(storage_type_for(DType::F32, 7), DType::F32);
    QCOMPARE(storage_type_for(DType::F16, 7), DType::F16);
  }

  void bad_lengths_are_errors_not_crashes() {
    std::vector<float> src(40, 1.0f);
    std::vector<uint8_t> dst(256);
    QVERIFY_THROWS_EXCEPTION(Error, quantize_row(DType::Q8_0, src.data(), 40, dst.data()));
    QVERIFY_THROWS_EXCEPTION(Error, dequantize_row(DType::Q4_0, dst.data(), 20, src.data()));
    QVERIFY_THROWS_EXCEPTION(Error, quantize_row(DType::Q4_K, src.data(), 40, dst.data()));  // not 256-aligned
    QVERIFY_THROWS_EXCEPTION(Error, quantize_row(DType::Q2_K, src.data(), 256, dst.data()));  // read-only format
  }
};

QTEST_APPLESS_MAIN(TestQuantConvert)
#include "test_quant_convert.moc"
