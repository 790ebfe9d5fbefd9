// The GGUF writer (model/gguf_writer.h) read back by Kiln's own reader: every metadata type,
// tensor offsets under the alignment, copying values between files, and what failure leaves.
#include <QtTest>
#include <csignal>
#include <filesystem>
#include <sys/resource.h>

#include "kiln/types.h"
#include "model/gguf_file.h"
#include "model/gguf_writer.h"

using namespace kiln;
namespace fs = std::filesystem;

class TestGgufWriter : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  std::string path(const char* name) { return (fs::path(dir_.path().toStdString()) / name).string(); }

  // A small file with one value of every kind and two tensors.
  void write_sample(const std::string& file, uint64_t alignment) {
    GgufWriter w(file, alignment);
    w.set_string("general.architecture", "gemma3");
    w.set_u32("gemma3.block_count", 26);
    w.set_i32("test.negative", -7);
    w.set_u64("test.big", uint64_t(1) << 40);
    w.set_f32("gemma3.rope.freq_base", 1e6f);
    w.set_bool("tokenizer.ggml.add_bos_token", true);
    w.set_string_array("tokenizer.ggml.tokens", {"<pad>", "</s>", "\xE2\x96\x81hello", ""});
    w.set_f32_array("tokenizer.ggml.scores", {0.0f, -1.5f, 2.25f, -0.0f});
    w.set_i32_array("tokenizer.ggml.token_type", {3, 3, 1, 6});
    w.set_bool_array("gemma3.attention.sliding_window_pattern", {true, false, true});
    w.set_u32("gemma3.block_count", 6);  // replaced in place, not added twice
    std::vector<float> a(10), b(64);
    for (size_t i = 0; i < a.size(); ++i) a[i] = float(i);
    for (size_t i = 0; i < b.size(); ++i) b[i] = -float(i);
    w.add_tensor("a", {10}, GgmlType::F32, 40);
    w.add_tensor("b", {32, 2}, GgmlType::F32, 256);
    w.begin();
    w.write_tensor_data(a.data(), 40);
    w.write_tensor_data(b.data(), 100);  // in pieces
    w.write_tensor_data(reinterpret_cast<const char*>(b.data()) + 100, 156);
    w.finish();
  }

 private slots:
  void initTestCase() { QVERIFY(dir_.isValid()); }

  void metadata_and_tensors_read_back_data() {
    QTest::addColumn<int>("alignment");
    QTest::newRow("32") << 32;
    QTest::newRow("64") << 64;
  }
  void metadata_and_tensors_read_back() {
    QFETCH(int, alignment);
    const std::string file = path("sample.gguf");
    write_sample(file, uint64_t(alignment));
    auto g = GgufFile::open(file);
    QCOMPARE(g->version(), 3u);
    QCOMPARE(g->alignment(), uint64_t(alignment));
    QCOMPARE(g->data_offset() % uint64_t(alignment), uint64_t(0));
    QCOMPARE(*g->get_string("general.architecture"), std::string_view("gemma3"));
    QCOMPARE(*g->get_uint("gemma3.block_count"), uint64_t(6));
    QCOMPARE(g->find("test.negative")->i, int64_t(-7));
    QCOMPARE(*g->get_uint("test.big"), uint64_t(1) << 40);
    QCOMPARE(*g->get_float("gemma3.rope.freq_base"), 1e6);
    QCOMPARE(*g->get_bool("tokenizer.ggml.add_bos_token"), true);
    const auto tokens = *g->get_string_array("tokenizer.ggml.tokens");
    QCOMPARE(tokens.size(), size_t(4));
    QCOMPARE(tokens[2], std::string_view("\xE2\x96\x81hello"));
    QCOMPARE(tokens[3], std::string_view(""));
    const auto scores = *g->get_float_array("tokenizer.ggml.scores");
    QCOMPARE(scores[2], 2.25f);
    QVERIFY(std::signbit(scores[3]));  // -0.0 kept: llama.cpp's readers tell it from +0.0
    QCOMPARE(*g->get_int_array("tokenizer.ggml.token_type"), (std::vector<int64_t>{3, 3, 1, 6}));
    QCOMPARE(*g->get_int_array("gemma3.attention.sliding_window_pattern"), (std::vector<int64_t>{1, 0, 1}));
    QCOMPARE(g->metadata().size(), size_t(alignment == 32 ? 10 : 11));  // general.alignment when not 32
    const GgufTensorInfo* a = g->find_tensor("a");
    const GgufTensorInfo* b = g->find_tensor("b");
    QVERIFY(a && b);
    QCOMPARE(b->dims, (std::vector<uint64_t>{32, 2}));
    QCOMPARE(b->offset % uint64_t(alignment), uint64_t(0));
    QCOMPARE(reinterpret_cast<const float*>(a->data)[9], 9.0f);
    QCOMPARE(reinterpret_cast<const float*>(b->data)[63], -63.0f);
    QVERIFY(!fs::exists(file + ".partial"));
  }

  // Values read from one file and set into another come out identical (kiln quantize's GGUF input).
  void values_copy_between_files() {
    const std::string first = path("first.gguf"), second = path("second.gguf");
    write_sample(first, 32);
    auto g = GgufFile::open(first);
    {
      GgufWriter w(second);
      for (const auto& [key, value] : g->metadata()) w.set_value(key, value);
      w.begin();
      w.finish();
    }
    auto h = GgufFile::open(second);
    QCOMPARE(h->metadata().size(), g->metadata().size());
    for (const auto& [key, value] : g->metadata()) {
      const GgufValue* copy = h->find(key);
      QVERIFY2(copy, key.c_str());
      QCOMPARE(copy->type, value.type);
      QCOMPARE(copy->u, value.u);
      QCOMPARE(copy->i, value.i);
      QCOMPARE(copy->f, value.f);
      QCOMPARE(copy->str, value.str);
      QCOMPARE(copy->count, value.count);
      QCOMPARE(std::string_view(reinterpret_cast<const char*>(copy->items), copy->items_bytes),
               std::string_view(reinterpret_cast<const char*>(value.items), value.items_bytes));
    }
  }

  // Nothing at the target until finish(); an abandoned writer removes its partial file, and an
  // existing file is only replaced by a complete one.
  void no_partial_file_is_left() {
    const std::string file = path("abandoned.gguf");
    write_sample(file, 32);
    const auto before = fs::file_size(file);
    {
      GgufWriter w(file);
      w.set_string("general.architecture", "gemma3");
      w.add_tensor("t", {64}, GgmlType::F32, 256);
      w.begin();
      QVERIFY(fs::exists(file + ".partial"));
      std::vector<float> x(16);
      w.write_tensor_data(x.data(), 64);
      QVERIFY_THROWS_EXCEPTION(Error, w.finish());  // 192 bytes of "t" missing
    }
    QVERIFY(!fs::exists(file + ".partial"));
    QCOMPARE(fs::file_size(file), before);  // the old file is untouched
  }

  void missing_folder_is_a_clear_error() {
    GgufWriter w(path("no/such/folder/out.gguf"));
    try {
      w.begin();
      QFAIL("begin() into a missing folder succeeded");
    } catch (const Error& e) {
      QVERIFY2(QString(e.what()).contains("does not exist"), e.what());
    }
  }

  // A write the file system refuses (here a file size limit, as a full disk refuses) names the file.
  void refused_write_is_a_clear_error() {
    const std::string file = path("limited.gguf");
    rlimit old{};
    QVERIFY(getrlimit(RLIMIT_FSIZE, &old) == 0);
    auto previous = std::signal(SIGXFSZ, SIG_IGN);  // the write fails with EFBIG instead of a signal
    rlimit small = old;
    small.rlim_cur = 64 * 1024;
    QVERIFY(setrlimit(RLIMIT_FSIZE, &small) == 0);
    QString message;
    {
      GgufWriter w(file);
      w.add_tensor("big", {1 << 16}, GgmlType::F32, 1 << 18);
      std::vector<float> x(1 << 16, 1.0f);
      try {
        w.begin();
        w.write_tensor_data(x.data(), x.size() * 4);
        w.finish();
      } catch (const Error& e) {
        message = e.what();
      }
    }
    setrlimit(RLIMIT_FSIZE, &old);
    std::signal(SIGXFSZ, previous);
    QVERIFY2(message.contains(QString::fromStdString(file)), qPrintable(message));
    QVERIFY(!fs::exists(file));
    QVERIFY(!fs::exists(file + ".partial"));
  }
};

QTEST_GUILESS_MAIN(TestGgufWriter)
#include "test_gguf_writer.moc"
