// K-quant dequantization against llama.cpp's own (gguf-py, numpy) on random super-blocks, both
// directly and through a GGUF file holding the blocks as tensors.
#include <QtTest>
#include <cstring>
#include <nlohmann/json.hpp>

#include "gguf_fixtures.h"
#include "kiln/types.h"
#include "model/gguf_file.h"
#include "quant/convert.h"
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
    r.type = t == "Q4_K" ? DType::Q4_K : t == "Q5_K" ? DType::Q5_K : DType::Q6_K;
    r.ggml = t == "Q4_K" ? GgmlType::Q4_K : t == "Q5_K" ? GgmlType::Q5_K : GgmlType::Q6_K;
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
    QCOMPARE(kquant_block_bytes(DType::Q4_K), size_t(144));
    QCOMPARE(kquant_block_bytes(DType::Q5_K), size_t(176));
    QCOMPARE(kquant_block_bytes(DType::Q6_K), size_t(210));
  }

  void matchesLlamaCpp() {
    const auto cases = read_reference();
    QCOMPARE(cases.size(), size_t(3));
    for (const auto& c : cases) {
      const int64_t n = int64_t(c.values.size());
      QCOMPARE(c.blocks.size(), size_t(n / 256) * kquant_block_bytes(c.type));
      std::vector<float> ours(n), via_convert(n);
      dequantize_row_kquant(c.type, c.blocks.data(), n, ours.data());
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
      dequantize_row_kquant(cases[i].type, t->data + kquant_block_bytes(cases[i].type), 256, row.data());
      for (int k = 0; k < 256; ++k) QVERIFY(std::abs(row[k] - cases[i].values[256 + k]) <= 1e-6f * std::max(1.0f, std::abs(row[k])));
    }
  }

  void wrongLengthIsAnError() {
    std::vector<float> out(300);
    const std::string zeros(1000, '\0');
    QVERIFY_THROWS_EXCEPTION(Error, dequantize_row_kquant(DType::Q4_K, zeros.data(), 300, out.data()));
    QVERIFY_THROWS_EXCEPTION(Error, dequantize_row_kquant(DType::Q8_0, zeros.data(), 256, out.data()));
  }
};

QTEST_APPLESS_MAIN(KQuantsTest)
#include "test_kquants.moc"
