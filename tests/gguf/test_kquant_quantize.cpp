// K-quant quantizers (quant/kquant_quantize.h): blocks worked out by hand, round-trip error on
// realistic rows against the theory and against Q4_0 / Q8_0 on the same rows, and odd inputs.
// The Q5_0 quantizer (quant/block32_formats.h, kiln quantize's fallback for Q4_K) against the
// blocks llama.cpp's gguf-py makes of the same floats (tests/tools/q5_0_reference.py), byte for byte.
// Every row is read back by the existing dequantizer (the one tested against llama.cpp's own in
// test_kquants.cpp), so a byte in the wrong place shows up as error.
#include <QtTest>
#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <vector>

#include "kiln/types.h"
#include "quant/block32_formats.h"
#include "quant/convert.h"
#include "quant/kquant_blocks.h"
#include "quant/kquant_quantize.h"

using namespace kiln;

namespace {

std::vector<float> round_trip(DType type, const std::vector<float>& x) {
  std::vector<uint8_t> bytes(row_bytes(type, int64_t(x.size())));
  quantize_row(type, x.data(), int64_t(x.size()), bytes.data());
  std::vector<float> y(x.size());
  dequantize_row(type, bytes.data(), int64_t(x.size()), y.data());
  return y;
}

// sqrt(mean((y - x)^2)) / sqrt(mean(x^2))
double relative_rms(const std::vector<float>& x, const std::vector<float>& y) {
  double e = 0, s = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    e += double(y[i] - x[i]) * (y[i] - x[i]);
    s += double(x[i]) * x[i];
  }
  return std::sqrt(e / s);
}

// Rows as trained weights look: normal, a row scale that varies, and (optionally) rare outliers
// twenty times the spread, as attention and FFN weights have.
std::vector<float> weight_rows(int rows, int cols, bool outliers, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
  std::vector<float> x(size_t(rows) * cols);
  for (int r = 0; r < rows; ++r) {
    const float row_scale = 0.01f + 0.05f * uniform(rng);
    for (int c = 0; c < cols; ++c) {
      float v = normal(rng) * row_scale;
      if (outliers && uniform(rng) < 0.005f) v *= 20.0f;
      x[size_t(r) * cols + c] = v;
    }
  }
  return x;
}

}  // namespace

class TestKquantQuantize : public QObject {
  Q_OBJECT

 private slots:
  // x = (63/128) q - 63/64 with q = i % 16: every sub-block is exactly representable with scale
  // 63 * d, d = 1/128 and min 63 * dmin, dmin = 1/64, so the bytes are known in advance.
  void q4k_block_by_hand() {
    std::vector<float> x(256);
    for (int i = 0; i < 256; ++i) x[i] = 63.0f / 128.0f * float(i % 16) - 63.0f / 64.0f;
    BlockQ4K b;
    quantize_row(DType::Q4_K, x.data(), 256, &b);
    QCOMPARE(b.d, uint16_t(0x2000));     // fp16 1/128
    QCOMPARE(b.dmin, uint16_t(0x2400));  // fp16 1/64
    for (int k = 0; k < 12; ++k) QCOMPARE(b.scales[k], uint8_t(0xFF));  // every scale and min is 63
    for (int k = 0; k < 128; ++k) QCOMPARE(b.qs[k], uint8_t((k % 16) * 0x11));  // q(64c+l) = q(64c+32+l) = l % 16
    std::vector<float> y(256);
    dequantize_row(DType::Q4_K, &b, 256, y.data());
    for (int i = 0; i < 256; ++i) QCOMPARE(y[i], x[i]);
  }

  // Sub-block s holds (127/256) (4k - 32), k = 0..15: the value of largest magnitude maps to level
  // -32, so each sub-block scale is 127 * d with d = 1/256, and the stored levels are 4k.
  void q6k_block_by_hand() {
    std::vector<float> x(256);
    for (int i = 0; i < 256; ++i) x[i] = 127.0f / 256.0f * float(4 * (i % 16) - 32);
    BlockQ6K b;
    quantize_row(DType::Q6_K, x.data(), 256, &b);
    QCOMPARE(b.d, uint16_t(0x1C00));  // fp16 1/256
    for (int s = 0; s < 16; ++s) QCOMPARE(b.scales[s], int8_t(127));
    // Low nibbles: weights l and 64 + l (ql[l]) both have level 4 (l % 16), low 4 bits 4 (l % 4).
    for (int l = 0; l < 128; ++l) QCOMPARE(b.ql[l], uint8_t(4 * (l % 4) * 0x11));
    // High 2 bits of weights 32 j + l, j = 0..3, are (l % 16) >> 2 each.
    for (int l = 0; l < 64; ++l) QCOMPARE(b.qh[l], uint8_t(((l % 16) >> 2) * 0x55));
    std::vector<float> y(256);
    dequantize_row(DType::Q6_K, &b, 256, y.data());
    for (int i = 0; i < 256; ++i) QCOMPARE(y[i], x[i]);
  }

  void error_on_normal_rows_data() {
    QTest::addColumn<bool>("outliers");
    QTest::newRow("normal") << false;
    QTest::newRow("outliers") << true;
  }
  // Bits per weight buy accuracy in the order of the formats' sizes, and Q4_K's searched scales
  // and mins beat Q4_0's max-derived scale at the same 4.5 bits a weight.
  void error_on_normal_rows() {
    QFETCH(bool, outliers);
    const std::vector<float> x = weight_rows(32, 2048, outliers, outliers ? 7 : 3);
    const double q4_0 = relative_rms(x, round_trip(DType::Q4_0, x));
    const double q4_k = relative_rms(x, round_trip(DType::Q4_K, x));
    const double q5_k = relative_rms(x, round_trip(DType::Q5_K, x));
    const double q6_k = relative_rms(x, round_trip(DType::Q6_K, x));
    const double q8_0 = relative_rms(x, round_trip(DType::Q8_0, x));
    qInfo("relative RMS error: Q4_0 %.4f  Q4_K %.4f  Q5_K %.4f  Q6_K %.4f  Q8_0 %.4f", q4_0, q4_k, q5_k, q6_k, q8_0);
    QVERIFY2(q4_k < 0.9 * q4_0, "Q4_K must be clearly better than Q4_0");
    QVERIFY(q5_k < 0.6 * q4_k);  // one more bit roughly halves the step
    QVERIFY(q6_k < 0.75 * q5_k);
    QVERIFY(q8_0 < q6_k);
    // Uniform rounding of a normal sample: 32 weights span about 4.1 sigma, so 15 steps of
    // 0.27 sigma give 0.27 / sqrt(12) = 0.079 sigma; Q6_K's 16-weight sub-blocks reach about
    // 2 sigma over 32 steps, 0.018 sigma. The searches must do at least that well.
    if (!outliers) {
      QVERIFY2(q4_k < 0.079, qPrintable(QString::number(q4_k)));
      QVERIFY2(q6_k < 0.018, qPrintable(QString::number(q6_k)));
    }
  }

  // llama-quantize writes Q5_0 where a Q4_K row is not whole super-blocks; kiln quantize must
  // write the same bytes for the same floats.
  void q5_0_matches_llama_cpp() {
    std::ifstream in(std::string(GGUF_TEST_DIR) + "/data/q5_0-reference.json");
    QVERIFY(in.good());
    const nlohmann::json reference = nlohmann::json::parse(in);
    int blocks = 0;
    for (const auto& c : reference["cases"]) {
      const std::vector<float> x = c["floats"].get<std::vector<float>>();
      std::vector<uint8_t> ours(row_bytes(DType::Q5_0, int64_t(x.size())));
      quantize_row(DType::Q5_0, x.data(), int64_t(x.size()), ours.data());
      const std::string hex = c["blocks_hex"];
      QCOMPARE(hex.size(), ours.size() * 2);
      for (size_t i = 0; i < ours.size(); ++i) {
        const int theirs = std::stoi(hex.substr(2 * i, 2), nullptr, 16);
        QVERIFY2(ours[i] == theirs, qPrintable(QString("block %1 byte %2: ours %3, llama.cpp's %4")
                                                   .arg(blocks + int(i / sizeof(BlockQ5_0))).arg(i % sizeof(BlockQ5_0))
                                                   .arg(ours[i]).arg(theirs)));
      }
      blocks += int(ours.size() / sizeof(BlockQ5_0));
    }
    QVERIFY(blocks >= 30);
  }

  // Q5_0 sits between Q4_0 and Q8_0: one more bit than Q4_0 halves its step.
  void q5_0_error_between_q4_0_and_q8_0() {
    const std::vector<float> x = weight_rows(32, 1152, true, 5);
    const double q4_0 = relative_rms(x, round_trip(DType::Q4_0, x));
    const double q5_0 = relative_rms(x, round_trip(DType::Q5_0, x));
    const double q8_0 = relative_rms(x, round_trip(DType::Q8_0, x));
    qInfo("relative RMS error: Q4_0 %.4f  Q5_0 %.4f  Q8_0 %.4f", q4_0, q5_0, q8_0);
    QVERIFY(q5_0 < 0.6 * q4_0);
    QVERIFY(q8_0 < 0.2 * q5_0);
    std::vector<float> zeros(64, 0.0f);
    for (float v : round_trip(DType::Q5_0, zeros)) QCOMPARE(v, 0.0f);
  }

  void zeros_and_constants() {
    for (DType t : {DType::Q4_K, DType::Q5_K, DType::Q6_K}) {
      std::vector<float> zeros(512, 0.0f);
      for (float v : round_trip(t, zeros)) QCOMPARE(v, 0.0f);
      // A constant positive row: Q4_K / Q5_K can only subtract a min, so level q * scale holds it.
      std::vector<float> constant(256, 0.25f);
      const std::vector<float> y = round_trip(t, constant);
      for (float v : y) QVERIFY2(std::fabs(v - 0.25f) < 0.25f * 0.01f, to_string(t));
    }
  }

  void non_finite_input_gives_valid_blocks() {
    std::vector<float> x = weight_rows(1, 256, false, 11);
    x[5] = std::nanf("");
    x[77] = INFINITY;
    for (DType t : {DType::Q4_K, DType::Q5_K, DType::Q6_K, DType::Q5_0}) {
      std::vector<uint8_t> bytes(row_bytes(t, 256));
      quantize_row(t, x.data(), 256, bytes.data());  // must not crash or leave bytes undefined
      std::vector<float> y(256);
      dequantize_row(t, bytes.data(), 256, y.data());
    }
  }

  void whole_super_blocks_only() {
    std::vector<float> x(300, 1.0f);
    std::vector<uint8_t> bytes(1024);
    QVERIFY_THROWS_EXCEPTION(Error, quantize_row(DType::Q4_K, x.data(), 300, bytes.data()));
    QVERIFY_THROWS_EXCEPTION(Error, quantize_row_kquant(DType::Q3_K, x.data(), 256, bytes.data()));
    QVERIFY(can_quantize_kquant(DType::Q6_K));
    QVERIFY(!can_quantize_kquant(DType::Q2_K));
  }
};

QTEST_APPLESS_MAIN(TestKquantQuantize)
#include "test_kquant_quantize.moc"
