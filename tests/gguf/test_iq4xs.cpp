// IQ4_XS (quant/iq4_xs.h, BlockIQ4_XS in quant/kquant_blocks.h): its byte layout, a block worked out
// by hand, dequantization against llama.cpp's own (gguf-py, numpy; tests/tools/iq4xs_reference.py)
// on random blocks, and a GGUF file holding such a tensor, or one whose rows are not whole super-blocks.
#include <QtTest>
#include <cstddef>
#include <cstring>
#include <nlohmann/json.hpp>

#include "gguf_fixtures.h"
#include "kiln/types.h"
#include "model/gguf_file.h"
#include "quant/convert.h"
#include "quant/iq4_xs.h"

using namespace kiln;

namespace {

struct Reference {
  std::string blocks;         // raw super-blocks
  std::vector<float> values;  // as llama.cpp dequantizes them
};

Reference read_reference() {
  const auto root = nlohmann::json::parse(test::read_file_bytes(std::string(GGUF_TEST_DIR) + "/data/iq4xs-reference.json"));
  Reference r;
  const std::string hex = root["blocks_hex"];
  for (size_t i = 0; i < hex.size(); i += 2) r.blocks.push_back(char(std::stoi(hex.substr(i, 2), nullptr, 16)));
  r.values = root["values"].get<std::vector<float>>();
  return r;
}

// A minimal GGUF v3 file: one key and one IQ4_XS tensor of [rows, cols] holding `blocks`.
std::string gguf_with(const std::string& name, uint64_t cols, uint64_t rows, const std::string& blocks) {
  std::string b;
  auto u32 = [&](uint32_t v) { b.append(reinterpret_cast<const char*>(&v), 4); };
  auto u64 = [&](uint64_t v) { b.append(reinterpret_cast<const char*>(&v), 8); };
  auto str = [&](const std::string& s) { u64(s.size()); b += s; };
  b += "GGUF";
  u32(3);
  u64(1);
  u64(1);
  str("general.architecture");
  u32(uint32_t(GgufType::String));
  str("gemma3");
  str(name);
  u32(2);
  u64(cols);
  u64(rows);
  u32(uint32_t(GgmlType::IQ4_XS));
  u64(0);
  b.resize((b.size() + 31) / 32 * 32, '\0');
  b += blocks;
  return b;
}

}  // namespace

class Iq4xsTest : public QObject {
  Q_OBJECT
 private slots:
  // Where each field sits, as GGUF files store it, and what a row takes.
  void layout() {
    QCOMPARE(sizeof(BlockIQ4_XS), size_t(136));
    QCOMPARE(offsetof(BlockIQ4_XS, scales_h), size_t(2));
    QCOMPARE(offsetof(BlockIQ4_XS, scales_l), size_t(4));
    QCOMPARE(offsetof(BlockIQ4_XS, qs), size_t(8));
    QCOMPARE(row_bytes(DType::IQ4_XS, 512), size_t(272));
    QCOMPARE(block_weights(DType::IQ4_XS), int64_t(256));
    QVERIFY(is_block_quantized(DType::IQ4_XS));
    QCOMPARE(std::string(to_string(DType::IQ4_XS)), std::string("IQ4_XS"));
    QVERIFY_THROWS_EXCEPTION(Error, row_bytes(DType::IQ4_XS, 384));
    QCOMPARE(storage_type_for(DType::IQ4_XS, 1152), DType::F16);  // not whole super-blocks
  }

  // One super-block with a few weights worked out from the formula in kquant_blocks.h
  // (d = 0.5: 0x3800; grid: code 0 -127, 7 -10, 8 1, 9 13, 15 113).
  void handComputedBlock() {
    BlockIQ4_XS b{};
    b.d = 0x3800;
    b.scales_l[0] = 0xF1;                 // sub-block 0: low 4 bits 1; sub-block 1: 15
    b.scales_h = 0x2 | 0x1 << 2 | 0x3 << 14;  // sub-block 0: high bits 2 (ls 33), 1: 1 (ls 31), 7: 3
    b.scales_l[3] = 0xF0;                 // sub-block 7: low 4 bits 15 (ls 63); sub-blocks 2-6: ls 0
    QCOMPARE(iq4xs_scale(b, 0), 1);
    QCOMPARE(iq4xs_scale(b, 1), -1);
    QCOMPARE(iq4xs_scale(b, 2), -32);
    QCOMPARE(iq4xs_scale(b, 7), 31);
    b.qs[0] = 0xF0;     // weight 0: code 0, weight 16: code 15
    b.qs[16] = 0x98;    // weight 32: code 8, weight 48: code 9
    b.qs[112] = 0x07;   // weight 224: code 7, weight 240: code 0
    std::vector<float> y(256);
    dequantize_row(DType::IQ4_XS, &b, 256, y.data());
    QCOMPARE(y[0], 0.5f * 1 * -127);
    QCOMPARE(y[16], 0.5f * 1 * 113);
    QCOMPARE(y[1], 0.5f * 1 * -127);  // byte 1 is 0: code 0 for weights 1 and 17
    QCOMPARE(y[32], 0.5f * -1 * 1);
    QCOMPARE(y[48], 0.5f * -1 * 13);
    QCOMPARE(y[64], 0.5f * -32 * -127);
    QCOMPARE(y[224], 0.5f * 31 * -10);
    QCOMPARE(y[240], 0.5f * 31 * -127);
  }

  void matchesLlamaCpp() {
    const Reference ref = read_reference();
    const int64_t n = int64_t(ref.values.size());
    QCOMPARE(n, int64_t(6 * 256));
    QCOMPARE(ref.blocks.size(), row_bytes(DType::IQ4_XS, n));
    std::vector<float> ours(n);
    dequantize_row(DType::IQ4_XS, ref.blocks.data(), n, ours.data());
    for (int64_t i = 0; i < n; ++i) {
      // The same two products in float32 (d * (ls - 32), then times the grid value).
      QVERIFY2(ours[i] == ref.values[i],
               qPrintable(QString("weight %1: %2 vs llama.cpp %3").arg(i).arg(ours[i]).arg(ref.values[i])));
    }
  }

  void throughAGgufFile() {
    const Reference ref = read_reference();
    auto file = GgufFile::from_bytes(gguf_with("blk.0.ffn_up.weight", 256, 6, ref.blocks), "iq4xs.gguf");
    const GgufTensorInfo* t = file->find_tensor("blk.0.ffn_up.weight");
    QVERIFY(t);
    QCOMPARE(t->bytes, size_t(6 * 136));
    QCOMPARE(std::string(ggml_type_name(t->type)), std::string("IQ4_XS"));
    std::vector<float> row(256);
    dequantize_row(DType::IQ4_XS, t->data + 2 * 136, 256, row.data());
    for (int k = 0; k < 256; ++k) QCOMPARE(row[k], ref.values[2 * 256 + k]);
  }

  // Rows of 384 weights are one and a half super-blocks: the file is refused naming itself and the tensor.
  void rowsNotWholeSuperBlocksAreAnError() {
    const Reference ref = read_reference();
    try {
      GgufFile::from_bytes(gguf_with("blk.0.attn_q.weight", 384, 4, ref.blocks), "broken-iq4xs.gguf");
      QFAIL("no error");
    } catch (const Error& e) {
      const std::string msg = e.what();
      QVERIFY2(msg.find("broken-iq4xs.gguf") != std::string::npos, msg.c_str());
      QVERIFY2(msg.find("blk.0.attn_q.weight") != std::string::npos, msg.c_str());
      QVERIFY2(msg.find("IQ4_XS") != std::string::npos, msg.c_str());
    }
    std::vector<float> out(384);
    QVERIFY_THROWS_EXCEPTION(Error, dequantize_row(DType::IQ4_XS, ref.blocks.data(), 384, out.data()));
  }
};

QTEST_APPLESS_MAIN(Iq4xsTest)
#include "test_iq4xs.moc"
