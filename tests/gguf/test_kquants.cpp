// K-quant block formats (and GGUF's other 32-weight formats Kiln reads: Q4_1, Q5_0, Q5_1, IQ4_NL):
// their byte layout, blocks worked out by hand, and dequantization against llama.cpp's own (gguf-py,
// numpy; tests/tools/kquants_reference.py) on random blocks, both directly and through a GGUF file
// holding the blocks as tensors.
#include <QtTest>
#include <cstddef>
#include <cstring>
#include <nlohmann/json.hpp>

#include "gguf_fixtures.h"
#include "kiln/types.h"
#include "model/gguf_file.h"
#include "quant/block32_formats.h"
#include "quant/convert.h"
#include "quant/kquant_blocks.h"
#include "quant/kquants.h"

using namespace kiln;

namespace {

struct ReferenceCase {
  DType type;
  GgmlType ggml;
  std::string blocks;         // raw super-blocks
  std::vector<float> values;  // as llama.cpp dequantizes them
};

std::vector<ReferenceCase> read_reference() {
  const auto root = nlohmann::json::parse(test::read_file_bytes(std::string(GGUF_TEST_DIR) + "/data/kquants-reference.json"));
  std::vector<ReferenceCase> out;
  for (const auto& c : root["cases"]) {
    ReferenceCase r;
    const std::string t = c["type"];
    const std::pair<DType, GgmlType> types[] = {{DType::Q2_K, GgmlType::Q2_K}, {DType::Q3_K, GgmlType::Q3_K},
                                                {DType::Q4_K, GgmlType::Q4_K}, {DType::Q5_K, GgmlType::Q5_K},
                                                {DType::Q6_K, GgmlType::Q6_K}, {DType::Q4_1, GgmlType::Q4_1},
                                                {DType::Q5_0, GgmlType::Q5_0}, {DType::Q5_1, GgmlType::Q5_1},
                                                {DType::IQ4_NL, GgmlType::IQ4_NL}};
    const auto& [type, ggml] = *std::find_if(std::begin(types), std::end(types),
                                             [&t](const auto& p) { return to_string(p.first) == t; });
    r.type = type;
    r.ggml = ggml;
    const std::string hex = c["blocks_hex"];
    for (size_t i = 0; i < hex.size(); i += 2) r.blocks.push_back(char(std::stoi(hex.substr(i, 2), nullptr, 16)));
    r.values = c["values"].get<std::vector<float>>();
    out.push_back(std::move(r));
  }
  return out;
}

// A minimal GGUF v3 file: one key, one [256, rows] tensor per case, 32-byte alignment.
std::string gguf_with(const std::vector<ReferenceCase>& cases) {
  std::string b;
  auto u32 = [&](uint32_t v) { b.append(reinterpret_cast<const char*>(&v), 4); };
  auto u64 = [&](uint64_t v) { b.append(reinterpret_cast<const char*>(&v), 8); };
  auto str = [&](const std::string& s) { u64(s.size()); b += s; };
  b += "GGUF";
  u32(3);
  u64(cases.size());
  u64(1);
  str("general.architecture");
  u32(uint32_t(GgufType::String));
  str("gemma3");
  uint64_t offset = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    str("t" + std::to_string(i));
    u32(2);
    u64(256);
    u64(cases[i].values.size() / 256);
    u32(uint32_t(cases[i].ggml));
    u64(offset);
    offset += (cases[i].blocks.size() + 31) / 32 * 32;
  }
  b.resize((b.size() + 31) / 32 * 32, '\0');
  for (const auto& c : cases) {
    b += c.blocks;
    b.resize((b.size() + 31) / 32 * 32, '\0');
  }
  return b;
}

}  // namespace

class KQuantsTest : public QObject {
  Q_OBJECT
 private slots:
  void blockSizes() {
    QCOMPARE(kquant_block_bytes(DType::Q2_K), size_t(84));
    QCOMPARE(kquant_block_bytes(DType::Q3_K), size_t(110));
    QCOMPARE(kquant_block_bytes(DType::Q4_K), size_t(144));
    QCOMPARE(kquant_block_bytes(DType::Q5_K), size_t(176));
    QCOMPARE(kquant_block_bytes(DType::Q6_K), size_t(210));
    QCOMPARE(row_bytes(DType::Q3_K, 512), size_t(220));
  }

  // Where each field sits, as GGUF files store it.
  void blockLayouts() {
    QCOMPARE(offsetof(BlockQ2K, qs), size_t(16));
    QCOMPARE(offsetof(BlockQ2K, d), size_t(80));
    QCOMPARE(offsetof(BlockQ2K, dmin), size_t(82));
    QCOMPARE(offsetof(BlockQ3K, qs), size_t(32));
    QCOMPARE(offsetof(BlockQ3K, scales), size_t(96));
    QCOMPARE(offsetof(BlockQ3K, d), size_t(108));
    QCOMPARE(offsetof(BlockQ4K, scales), size_t(4));
    QCOMPARE(offsetof(BlockQ4K, qs), size_t(16));
    QCOMPARE(offsetof(BlockQ5K, qh), size_t(16));
    QCOMPARE(offsetof(BlockQ5K, qs), size_t(48));
    QCOMPARE(offsetof(BlockQ6K, qh), size_t(128));
    QCOMPARE(offsetof(BlockQ6K, scales), size_t(192));
    QCOMPARE(offsetof(BlockQ6K, d), size_t(208));
  }

  // One super-block of each format with a few weights worked out by hand from the formulas in
  // kquant_blocks.h (fp16: 1.0 = 0x3C00, 0.5 = 0x3800, 0.25 = 0x3400).
  void handComputedBlocks() {
    auto weights = [](DType type, const auto& block) {
      std::vector<float> y(256);
      dequantize_row_kquant(type, &block, 256, y.data());
      return y;
    };
    BlockQ2K q2{};
    q2.d = 0x3C00, q2.dmin = 0x3800;
    q2.scales[0] = 0x23, q2.scales[2] = 0x15;  // sub-block 0: scale 3, min 2; sub-block 2: scale 5, min 1
    q2.qs[0] = 0b11100100;                     // weights 0, 32, 64, 96: q = 0, 1, 2, 3
    auto y = weights(DType::Q2_K, q2);
    QCOMPARE(y[0], 1.0f * 3 * 0 - 0.5f * 2);
    QCOMPARE(y[32], 1.0f * 5 * 1 - 0.5f * 1);
    QCOMPARE(y[1], -1.0f);  // q 0 in sub-block 0

    BlockQ3K q3{};
    q3.d = 0x3C00;
    q3.scales[0] = 0x05, q3.scales[8] = 0x02;  // scale[0] = 5 | 2 << 4 = 37, less 32: 5
    q3.hmask[0] = 0x01, q3.qs[0] = 0x03;       // weight 0: high bit set, q 3
    y = weights(DType::Q3_K, q3);
    QCOMPARE(y[0], 5.0f * 3);
    QCOMPARE(y[1], 5.0f * (0 - 4));   // no high bit: q - 4
    QCOMPARE(y[16], -32.0f * (0 - 4));  // sub-block 1: scale 0 - 32

    BlockQ4K q4{};
    q4.d = 0x3C00, q4.dmin = 0x3400;
    q4.scales[0] = 7, q4.scales[4] = 3;  // sub-block 0: scale 7, min 3
    q4.scales[1] = 2, q4.scales[5] = 4;  // sub-block 1: scale 2, min 4
    q4.qs[0] = 0xA2;                     // weight 0: 2, weight 32: 10
    y = weights(DType::Q4_K, q4);
    QCOMPARE(y[0], 7.0f * 2 - 0.25f * 3);
    QCOMPARE(y[32], 2.0f * 10 - 0.25f * 4);

    BlockQ5K q5{};
    q5.d = q4.d, q5.dmin = q4.dmin;
    std::memcpy(q5.scales, q4.scales, 12);
    q5.qs[0] = 0xA2;
    q5.qh[0] = 0x03;  // the fifth bit of weights 0 and 32
    y = weights(DType::Q5_K, q5);
    QCOMPARE(y[0], 7.0f * 18 - 0.25f * 3);
    QCOMPARE(y[32], 2.0f * 26 - 0.25f * 4);

    BlockQ6K q6{};
    q6.d = 0x3800;
    q6.scales[0] = 2, q6.scales[4] = -1;
    q6.ql[0] = 0x31;  // weight 0 low bits 1, weight 64 low bits 3
    q6.qh[0] = 0x02;  // weight 0 high bits 2
    y = weights(DType::Q6_K, q6);
    QCOMPARE(y[0], 0.5f * 2 * ((1 | 2 << 4) - 32));
    QCOMPARE(y[64], 0.5f * -1 * (3 - 32));
  }

  void matchesLlamaCpp() {
    const auto cases = read_reference();
    QCOMPARE(cases.size(), size_t(9));
    for (const auto& c : cases) {
      const int64_t n = int64_t(c.values.size());
      QCOMPARE(c.blocks.size(), row_bytes(c.type, n));
      std::vector<float> ours(n), via_convert(n);
      if (is_kquant(c.type))
        dequantize_row_kquant(c.type, c.blocks.data(), n, ours.data());
      else
        dequantize_row_block32(c.type, c.blocks.data(), n, ours.data());
      dequantize_row(c.type, c.blocks.data(), n, via_convert.data());
      for (int64_t i = 0; i < n; ++i) {
        // The same products in float32; allow one rounding of difference in the order of operations.
        const float tol = 1e-6f * std::max(1.0f, std::abs(c.values[i]));
        QVERIFY2(std::abs(ours[i] - c.values[i]) <= tol,
                 qPrintable(QString("%1 weight %2: %3 vs llama.cpp %4").arg(to_string(c.type)).arg(i).arg(ours[i]).arg(c.values[i])));
        QCOMPARE(via_convert[i], ours[i]);
      }
    }
  }

  void throughAGgufFile() {
    const auto cases = read_reference();
    auto file = GgufFile::from_bytes(gguf_with(cases), "kquants.gguf");
    QCOMPARE(file->tensors().size(), cases.size());
    for (size_t i = 0; i < cases.size(); ++i) {
      const GgufTensorInfo* t = file->find_tensor("t" + std::to_string(i));
      QVERIFY(t);
      QCOMPARE(t->bytes, cases[i].blocks.size());
      QVERIFY(std::memcmp(t->data, cases[i].blocks.data(), t->bytes) == 0);
      std::vector<float> row(256);
      dequantize_row(cases[i].type, t->data + row_bytes(cases[i].type, 256), 256, row.data());
      for (int k = 0; k < 256; ++k) QVERIFY(std::abs(row[k] - cases[i].values[256 + k]) <= 1e-6f * std::max(1.0f, std::abs(row[k])));
    }
  }

  // Q4_1, Q5_0, Q5_1 and IQ4_NL blocks with the same codes: nibble byte j = j | (15 - j) << 4, so
  // weight j has code j and weight j + 16 code 15 - j; the fifth bits 0xAAAA5555 set weights 0, 2, ...
  // 14 and 17, 19, ... 31.
  void handComputedBlock32() {
    std::vector<uint8_t> nibbles(16);
    for (int j = 0; j < 16; ++j) nibbles[j] = uint8_t(j | (15 - j) << 4);
    const uint8_t qh[4] = {0x55, 0x55, 0xAA, 0xAA};
    auto block = [&](std::vector<uint16_t> halves, bool fifth) {
      std::string b;
      for (uint16_t h : halves) b.append(reinterpret_cast<const char*>(&h), 2);
      if (fifth) b.append(reinterpret_cast<const char*>(qh), 4);
      b.append(reinterpret_cast<const char*>(nibbles.data()), 16);
      return b;
    };
    auto values = [](DType t, const std::string& b) {
      std::vector<float> y(32);
      dequantize_row(t, b.data(), 32, y.data());
      return y;
    };
    // d = 0.5 (0x3800), m = -1 (0xBC00).
    auto y = values(DType::Q4_1, block({0x3800, 0xBC00}, false));
    QCOMPARE(y[0], -1.0f);
    QCOMPARE(y[3], 0.5f);
    QCOMPARE(y[16], 6.5f);   // code 15
    QCOMPARE(y[31], -1.0f);  // code 0
    // d = 0.25: x = (code - 16) / 4; weight 0 code 16, weight 1 code 1, weight 16 code 15, weight 17 code 30.
    y = values(DType::Q5_0, block({0x3400}, true));
    QCOMPARE(y[0], 0.0f);
    QCOMPARE(y[1], -3.75f);
    QCOMPARE(y[16], -0.25f);
    QCOMPARE(y[17], 3.5f);
    y = values(DType::Q5_1, block({0x3400, 0xBC00}, true));
    QCOMPARE(y[0], 3.0f);    // 16 / 4 - 1
    QCOMPARE(y[17], 6.5f);   // 30 / 4 - 1
    // d = 2: the grid's values, twice.
    y = values(DType::IQ4_NL, block({0x4000}, false));
    QCOMPARE(y[0], -254.0f);
    QCOMPARE(y[8], 2.0f);
    QCOMPARE(y[16], 226.0f);  // code 15
    QCOMPARE(row_bytes(DType::Q5_0, 64), size_t(44));
    QCOMPARE(row_bytes(DType::IQ4_NL, 1152), size_t(36 * 18));
  }

  void wrongLengthIsAnError() {
    std::vector<float> out(300);
    const std::string zeros(1000, '\0');
    QVERIFY_THROWS_EXCEPTION(Error, dequantize_row_kquant(DType::Q4_K, zeros.data(), 300, out.data()));
    QVERIFY_THROWS_EXCEPTION(Error, dequantize_row_kquant(DType::Q8_0, zeros.data(), 256, out.data()));
    QVERIFY_THROWS_EXCEPTION(Error, dequantize_row(DType::Q5_0, zeros.data(), 40, out.data()));
    QVERIFY_THROWS_EXCEPTION(Error, row_bytes(DType::Q5_1, 48));
  }
};

QTEST_APPLESS_MAIN(KQuantsTest)
#include "test_kquants.moc"
