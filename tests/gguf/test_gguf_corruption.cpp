// A corrupt, truncated or hostile GGUF file must end in a one-line kiln::Error naming the file:
// never a crash, a hang, another exception type, or an allocation the file cannot back.
#include <sentencepiece_processor.h>
#include <sys/resource.h>

#include <QTemporaryDir>
#include <QtTest>
#include <cstring>
#include <fstream>

#include "gguf_fixtures.h"
#include "kiln/types.h"
#include "model/gguf_checkpoint.h"
#include "model/gguf_file.h"
#include "model/gguf_tokenizer.h"

using namespace kiln;
using namespace kiln::test;

namespace {

const std::string kName = "hostile.gguf";

// Position of the first byte after `text` in the header (the fixture's keys and names are unique).
size_t after(const std::string& bytes, const std::string& text) {
  size_t at = bytes.find(text);
  if (at == std::string::npos) qFatal("fixture lacks %s", text.c_str());
  return at + text.size();
}

template <typename T>
void poke(std::string& bytes, size_t at, T value) {
  std::memcpy(bytes.data() + at, &value, sizeof(T));
}

// Parses `bytes` as a whole model would be opened: file, config, tokenizer.
void open_all(const std::string& bytes) {
  auto f = GgufFile::from_bytes(bytes, kName);
  gemma3_config_from_gguf(*f);
  build_sentencepiece_proto(*f);
}

// Expects a kiln::Error whose one-line message names the file and contains `words`.
void expect_error(const std::string& bytes, const char* words) {
  try {
    open_all(bytes);
  } catch (const Error& e) {
    const std::string msg = e.what();
    QVERIFY2(msg.rfind(kName + ":", 0) == 0, msg.c_str());
    QVERIFY2(msg.find('\n') == std::string::npos, msg.c_str());
    QVERIFY2(msg.find(words) != std::string::npos, ("expected '" + std::string(words) + "' in: " + msg).c_str());
    return;
  }
  QFAIL(("no error; expected one about " + std::string(words)).c_str());
}

}  // namespace

class GgufCorruptionTest : public QObject {
  Q_OBJECT
  std::string f16_;  // tiny-gemma3-a-f16.gguf
  std::string q4_;   // tiny-gemma3-a-q4_0.gguf (smaller, for the exhaustive loops)
  size_t norm_entry_ = 0;  // where output_norm.weight's tensor entry continues after its name

 private slots:
  void initTestCase() {
    // A parser that trusted a count would try to allocate far more than this and fail the test.
    struct rlimit limit {3ull << 30, 3ull << 30};
    setrlimit(RLIMIT_AS, &limit);
    f16_ = read_file_bytes(gguf_path("a", "f16"));
    q4_ = read_file_bytes(gguf_path("a", "q4_0"));
    QVERIFY(f16_.size() > 500000);
    open_all(f16_);  // the untouched file opens
    norm_entry_ = f16_.rfind("output_norm.weight") + std::strlen("output_norm.weight");
  }

  void headerFields() {
    std::string b = f16_;
    b[0] = 'X';
    expect_error(b, "bad magic");
    b = f16_;
    poke<uint32_t>(b, 4, 1);
    expect_error(b, "version 1 is not supported");
    b = f16_;
    poke<uint32_t>(b, 4, 7);
    expect_error(b, "unsupported GGUF version 7");
    b = f16_;
    poke<uint32_t>(b, 4, 0x03000000);
    expect_error(b, "big-endian");
    b = f16_;
    poke<uint64_t>(b, 8, 1ull << 60);
    expect_error(b, "tensors cannot fit");
    b = f16_;
    poke<uint64_t>(b, 16, 1ull << 60);
    expect_error(b, "metadata entries cannot fit");
    b = f16_;
    poke<uint64_t>(b, 16, 200);  // more keys than there are: the tensor entries get read as keys
    expect_error(b, "");
  }

  void metadataValues() {
    std::string b = f16_;
    poke<uint64_t>(b, 24, 1ull << 40);  // first key's length
    expect_error(b, "runs past the end of the file");
    b = f16_;
    poke<uint32_t>(b, after(f16_, "general.architecture"), 13);
    expect_error(b, "unknown value type 13");
    b = f16_;
    const size_t tokens = after(f16_, "tokenizer.ggml.tokens");  // u32 type, u32 item type, u64 count
    poke<uint64_t>(b, tokens + 8, 1ull << 40);
    expect_error(b, "more than the file holds");
    b = f16_;
    poke<uint64_t>(b, tokens + 16, 1ull << 50);  // the first token string's length
    expect_error(b, "runs past the end of the file");
    b = f16_;
    poke<uint32_t>(b, tokens + 4, 77);
    expect_error(b, "array of unknown type 77");
    b = f16_;
    b.replace(after(f16_, "general.type") - 12, 12, "general.name");  // general.type -> a second general.name
    expect_error(b, "appears twice");
  }

  void tensorEntries() {
    std::string b = f16_;
    // output_norm.weight: u32 n_dims, u64 dims[0], u32 type, u64 offset
    const size_t dims = norm_entry_, d0 = dims + 4, type = d0 + 8, offset = type + 4;
    uint64_t original_offset;
    std::memcpy(&original_offset, f16_.data() + offset, 8);
    poke<uint64_t>(b, offset, uint64_t(f16_.size()));
    expect_error(b, "runs past the end of the file");
    b = f16_;
    poke<uint64_t>(b, offset, ~uint64_t(31));  // aligned, and offset + bytes overflows
    expect_error(b, "runs past the end of the file");
    b = f16_;
    poke<uint64_t>(b, offset, original_offset + 4);
    expect_error(b, "is not aligned to 32");
    b = f16_;
    poke<uint32_t>(b, type, 99);
    expect_error(b, "unknown type 99");
    b = f16_;
    poke<uint32_t>(b, dims, 5);
    expect_error(b, "5 dimensions");
    b = f16_;
    poke<uint64_t>(b, d0, 1ull << 62);
    expect_error(b, "impossibly large");
    b = f16_;
    poke<uint32_t>(b, type, uint32_t(GgmlType::Q8_0));
    poke<uint64_t>(b, d0, 48);
    expect_error(b, "not a whole number of Q8_0 blocks");
    b = f16_;
    b.replace(after(f16_, "blk.0.attn_q.weight") - 19, 19, "blk.0.attn_k.weight");
    expect_error(b, "appears twice");
  }

  void repeatedTokenStillLoads() {
    // Token "on" renamed to "er": SentencePiece itself refuses repeated pieces, Kiln keeps the id unused.
    std::string b = f16_;
    const std::string er_on = std::string("\x02\0\0\0\0\0\0\0er\x02\0\0\0\0\0\0\0on", 20);
    const size_t at = b.find(er_on);
    QVERIFY(at != std::string::npos);
    b.replace(at + 18, 2, "er");
    auto f = GgufFile::from_bytes(b, kName);
    const std::string proto = build_sentencepiece_proto(*f);
    QVERIFY(proto.find("<kiln-duplicate-") != std::string::npos);
    sentencepiece::SentencePieceProcessor sp;
    QVERIFY(sp.LoadFromSerializedProto(proto).ok());
    QCOMPARE(sp.GetPieceSize(), 512);
  }

  void alignmentKey() {
    // general.file_type and general.alignment are both 17 bytes and u32: renaming one makes the other.
    std::string b = f16_;
    const size_t key = after(f16_, "general.file_type");
    b.replace(key - 17, 17, "general.alignment");
    poke<uint32_t>(b, key + 4, 3);
    expect_error(b, "power of two");
    poke<uint32_t>(b, key + 4, 128);  // some tensors sit at odd multiples of 64
    expect_error(b, "is not aligned to 128");
  }

  void modelKeys() {
    std::string b = f16_;
    b.replace(after(f16_, "general.architecture") + 4 + 8, 6, "llama3");
    expect_error(b, "is not Gemma 3");
    b = f16_;
    b.replace(after(f16_, "gemma3.block_count") - 5, 5, "cXunt");
    expect_error(b, "gemma3.block_count is missing");
    b = f16_;
    poke<uint32_t>(b, after(f16_, "gemma3.block_count") + 4, 0x7fffffff);
    expect_error(b, "out of range");
    b = f16_;
    poke<uint32_t>(b, after(f16_, "gemma3.block_count") + 4, 3);  // tensors of layers 3..5 have no layer
    QTemporaryDir dir;
    const std::string path = dir.filePath("fewer-layers.gguf").toStdString();
    std::ofstream(path, std::ios::binary) << b;
    try {
      open_gguf_checkpoint(path);
      QFAIL("no error for tensors of layers the model does not have");
    } catch (const Error& e) {
      QVERIFY2(std::string(e.what()).find("belongs to layer 3") != std::string::npos, e.what());
    }
  }

  void unsupportedTensorTypeNamesTensorAndType() {
    std::string b = f16_;
    poke<uint32_t>(b, norm_entry_ + 12, uint32_t(GgmlType::MXFP4));  // 64 weights = 2 blocks = 34 bytes
    QTemporaryDir dir;
    const std::string path = dir.filePath("mxfp4.gguf").toStdString();
    std::ofstream(path, std::ios::binary) << b;
    try {
      open_gguf_checkpoint(path);
      QFAIL("no error for an MXFP4 tensor");
    } catch (const Error& e) {
      const std::string msg = e.what();
      QVERIFY2(msg.find(path) == 0 && msg.find("output_norm.weight") != std::string::npos &&
                   msg.find("MXFP4") != std::string::npos,
               msg.c_str());
    }
    // A missing file and a directory are errors too.
    QVERIFY_THROWS_EXCEPTION(Error, open_gguf_checkpoint(dir.filePath("absent.gguf").toStdString()));
    QVERIFY_THROWS_EXCEPTION(Error, GgufFile::open(dir.path().toStdString()));
  }

  void everyTruncationIsAnError() {
    // The last tensor ends at the end of the file, so every proper prefix is incomplete.
    auto whole = GgufFile::from_bytes(q4_, kName);
    const size_t header = size_t(whole->data_offset());
    for (size_t n = 0; n <= header + 64; ++n) QVERIFY_THROWS_EXCEPTION(Error, GgufFile::from_bytes(q4_.substr(0, n), kName));
    for (size_t n = header + 64; n < q4_.size(); n += 997)
      QVERIFY_THROWS_EXCEPTION(Error, GgufFile::from_bytes(q4_.substr(0, n), kName));
    QVERIFY_THROWS_EXCEPTION(Error, GgufFile::from_bytes(q4_.substr(0, q4_.size() - 1), kName));
  }

  void byteFlipsNeverCrash() {
    // Any single damaged header byte either still parses or gives a kiln::Error (nothing else).
    auto whole = GgufFile::from_bytes(q4_, kName);
    const size_t header = size_t(whole->data_offset());
    int errors = 0, opened = 0;
    for (size_t i = 0; i < header; ++i) {
      for (unsigned char v : {0x00, 0xFF, 0x7F}) {
        if (i > 4096 && v == 0x7F) continue;  // the keys are dense at the start; sample the rest
        std::string b = q4_;
        if (static_cast<unsigned char>(b[i]) == v) continue;
        b[i] = static_cast<char>(v);
        try {
          open_all(b);
          ++opened;
        } catch (const Error&) {
          ++errors;
        }
      }
    }
    qInfo("%d damaged files refused, %d still opened", errors, opened);
    QVERIFY(errors > 1000);
  }
};

QTEST_APPLESS_MAIN(GgufCorruptionTest)
#include "test_gguf_corruption.moc"
