// Loading does not hold a model twice: a Q8_0 GGUF of random weights, several times larger than the
// CPU's caches, loaded by the real `kiln bench` on the CPU and on Vulkan (lavapipe, whose device memory
// is this process's memory, as an integrated GPU's is the laptop's RAM). The memory the model adds
// (peak resident memory, less the same command's on a 2 MB model: the binary, the driver and its
// compiled pipelines) stays within 1.1x the weights plus the KV cache (issue 26); before, it was 2x
// on both backends. The same shapes as a Hugging Face folder in bf16, quantized to Q4_0 at load, add
// at most 1.1x the Q4_0 weights plus the largest bf16 tensor and the KV cache: each tensor's source
// pages are let go once it is quantized.
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cstring>
#include <random>

#include "fixture_reference.h"
#include "model/checkpoint.h"
#include "model/gguf_model_metadata.h"
#include "model/gguf_writer.h"
#include "quant/convert.h"
#include "quant/dtype.h"
#include "tokenizer/tokenizer.h"

using namespace kiln;

namespace {

// The tiny fixture's tokenizer and settings, with matrices wide enough to weigh ~330 MB in Q8_0.
Gemma3Config big_config(const Gemma3Config& tiny) {
  Gemma3Config c = tiny;
  c.hidden_size = 1024;
  c.intermediate_size = 4096;
  c.num_layers = 20;
  c.num_heads = 4;
  c.num_kv_heads = 1;
  c.head_dim = 256;
  c.query_pre_attn_scalar = 256;
  c.layer_is_global.clear();
  finalize_config(c, "test");
  return c;
}

// Random Q8_0 blocks of small weights, written a row range at a time.
void write_q8_0(GgufWriter& w, int64_t rows, int64_t cols, std::mt19937& rng) {
  std::vector<uint8_t> row(row_bytes(DType::Q8_0, cols));
  const uint16_t d = float_to_fp16(1e-3f);
  std::uniform_int_distribution<int> q(-31, 31);
  for (int64_t r = 0; r < rows; ++r) {
    for (size_t b = 0; b < row.size(); b += sizeof(BlockQ8_0)) {
      std::memcpy(&row[b], &d, 2);
      for (int i = 0; i < kBlockSize; ++i) row[b + 2 + i] = uint8_t(int8_t(q(rng)));
    }
    w.write_tensor_data(row.data(), row.size());
  }
}

void write_model(const std::string& path, const Gemma3Config& c, const Tokenizer& tokenizer) {
  GgufWriter w(path);
  std::vector<std::string> notes;
  set_gemma3_metadata(w, c, notes);
  set_sentencepiece_tokenizer(w, tokenizer.vocabulary(), c);
  struct T {
    std::string name;
    int64_t rows, cols;  // rows 0: a norm vector of cols
  };
  const int64_t h = c.hidden_size, q = int64_t(c.num_heads) * c.head_dim, kv = int64_t(c.num_kv_heads) * c.head_dim;
  std::vector<T> tensors{{"token_embd.weight", c.vocab_size, h}, {"output_norm.weight", 0, h}};
  for (int i = 0; i < c.num_layers; ++i) {
    const std::string p = "blk." + std::to_string(i) + ".";
    for (const char* n : {"attn_norm", "post_attention_norm", "ffn_norm", "post_ffw_norm"}) tensors.push_back({p + n + ".weight", 0, h});
    for (const char* n : {"attn_q_norm", "attn_k_norm"}) tensors.push_back({p + n + ".weight", 0, c.head_dim});
    tensors.push_back({p + "attn_q.weight", q, h});
    tensors.push_back({p + "attn_k.weight", kv, h});
    tensors.push_back({p + "attn_v.weight", kv, h});
    tensors.push_back({p + "attn_output.weight", h, q});
    tensors.push_back({p + "ffn_gate.weight", c.intermediate_size, h});
    tensors.push_back({p + "ffn_up.weight", c.intermediate_size, h});
    tensors.push_back({p + "ffn_down.weight", h, c.intermediate_size});
  }
  for (const T& t : tensors) {
    if (t.rows == 0)
      w.add_tensor(t.name, {uint64_t(t.cols)}, GgmlType::F32, uint64_t(t.cols) * 4);
    else
      w.add_tensor(t.name, {uint64_t(t.cols), uint64_t(t.rows)}, GgmlType::Q8_0, t.rows * row_bytes(DType::Q8_0, t.cols));
  }
  w.begin();
  std::mt19937 rng(26);
  for (const T& t : tensors) {
    if (t.rows == 0) {
      const std::vector<float> ones(t.cols, 1.0f);  // llama.cpp's files store 1 + w
      w.write_tensor_data(ones.data(), ones.size() * 4);
    } else {
      write_q8_0(w, t.rows, t.cols, rng);
    }
  }
  w.finish();
}

// big_config's shapes as a Hugging Face folder: the tiny fixture's config.json with the shapes
// changed, its tokenizer, and one model.safetensors of random bf16 weights, written a row at a time.
// Returns the largest tensor's bytes.
int64_t write_hf_folder(const QString& dir, const Gemma3Config& c, const QString& tiny) {
  QFile in(tiny + "/config.json");
  if (!in.open(QIODevice::ReadOnly)) qFatal("cannot read the fixture's config.json");
  QJsonObject config = QJsonDocument::fromJson(in.readAll()).object();
  config["hidden_size"] = c.hidden_size;
  config["intermediate_size"] = int(c.intermediate_size);
  config["num_hidden_layers"] = c.num_layers;
  config["num_attention_heads"] = c.num_heads;
  config["num_key_value_heads"] = c.num_kv_heads;
  config["head_dim"] = c.head_dim;
  config["query_pre_attn_scalar"] = c.head_dim;
  QFile out_config(dir + "/config.json");
  if (!out_config.open(QIODevice::WriteOnly) || out_config.write(QJsonDocument(config).toJson()) < 0)
    qFatal("cannot write config.json");
  if (!QFile::copy(tiny + "/tokenizer.model", dir + "/tokenizer.model")) qFatal("cannot copy the tokenizer");

  struct T {
    QString name;
    int64_t rows, cols;  // rows 1: a norm vector of cols
  };
  const int64_t h = c.hidden_size, q = int64_t(c.num_heads) * c.head_dim, kv = int64_t(c.num_kv_heads) * c.head_dim;
  std::vector<T> tensors{{"model.embed_tokens.weight", c.vocab_size, h}, {"model.norm.weight", 1, h}};
  for (int i = 0; i < c.num_layers; ++i) {
    const QString p = QString("model.layers.%1.").arg(i);
    for (const char* n : {"input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm",
                          "post_feedforward_layernorm"})
      tensors.push_back({p + n + ".weight", 1, h});
    tensors.push_back({p + "self_attn.q_norm.weight", 1, c.head_dim});
    tensors.push_back({p + "self_attn.k_norm.weight", 1, c.head_dim});
    tensors.push_back({p + "self_attn.q_proj.weight", q, h});
    tensors.push_back({p + "self_attn.k_proj.weight", kv, h});
    tensors.push_back({p + "self_attn.v_proj.weight", kv, h});
    tensors.push_back({p + "self_attn.o_proj.weight", h, q});
    tensors.push_back({p + "mlp.gate_proj.weight", c.intermediate_size, h});
    tensors.push_back({p + "mlp.up_proj.weight", c.intermediate_size, h});
    tensors.push_back({p + "mlp.down_proj.weight", h, c.intermediate_size});
  }
  QJsonObject header{{"__metadata__", QJsonObject{{"format", "pt"}}}};
  int64_t offset = 0, largest = 0;
  for (const T& t : tensors) {
    const int64_t bytes = t.rows * t.cols * 2;
    const QJsonArray shape = t.rows == 1 ? QJsonArray{qint64(t.cols)} : QJsonArray{qint64(t.rows), qint64(t.cols)};
    header[t.name] = QJsonObject{{"dtype", "BF16"}, {"shape", shape}, {"data_offsets", QJsonArray{qint64(offset), qint64(offset + bytes)}}};
    offset += bytes;
    largest = std::max(largest, bytes);
  }
  const QByteArray header_text = QJsonDocument(header).toJson(QJsonDocument::Compact);
  QFile f(dir + "/model.safetensors");
  if (!f.open(QIODevice::WriteOnly)) qFatal("cannot write model.safetensors");
  QByteArray length(8, '\0');
  for (int i = 0; i < 8; ++i) length[i] = char((quint64(header_text.size()) >> (8 * i)) & 0xff);
  f.write(length + header_text);
  std::mt19937 rng(26);
  std::normal_distribution<float> weight(0.0f, 0.02f);
  std::vector<uint16_t> row;
  for (const T& t : tensors) {
    row.resize(size_t(t.cols));
    for (int64_t r = 0; r < t.rows; ++r) {
      for (uint16_t& v : row) {
        const float x = t.rows == 1 ? 0.0f : weight(rng);  // norms: weight 0 (Hugging Face stores w of 1 + w)
        uint32_t bits;
        std::memcpy(&bits, &x, 4);
        v = uint16_t(bits >> 16);
      }
      if (f.write(reinterpret_cast<const char*>(row.data()), qint64(row.size() * 2)) < 0) qFatal("write failed");
    }
  }
  return largest;
}

}  // namespace

class TestLoadMemory : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  QString model_;
  QString folder_;        // the same shapes as a bf16 Hugging Face folder
  int64_t largest_ = 0;   // its largest tensor's bytes

 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    const std::string tiny = test::fixture_dir("tiny-gemma3-a");
    Checkpoint ck = open_checkpoint(tiny);
    const Gemma3Config c = big_config(ck.config);
    model_ = dir_.filePath("random-q8_0.gguf");
    write_model(model_.toStdString(), c, open_tokenizer(ck));
    QVERIFY(QFileInfo(model_).size() > 300'000'000);
    folder_ = dir_.filePath("random-bf16");
    QVERIFY(QDir().mkpath(folder_));
    largest_ = write_hf_folder(folder_, c, QString::fromStdString(tiny));
    QVERIFY(QFileInfo(folder_ + "/model.safetensors").size() > 550'000'000);
  }

  void peakMemoryIsTheWeightsOnce_data() {
    QTest::addColumn<QString>("backend");
    QTest::newRow("cpu") << "cpu";
    QTest::newRow("vulkan (lavapipe)") << "vulkan";
  }

  void peakMemoryIsTheWeightsOnce() {
    QFETCH(QString, backend);
    const QJsonObject small = bench(QString::fromStdString(test::fixture_dir("gguf/tiny-gemma3-a/tiny-gemma3-a-q8_0.gguf")), backend);
    const QJsonObject r = bench(model_, backend);
    if (backend == "vulkan" && !r["backend"].toString().startsWith("vulkan")) QSKIP("no Vulkan device here");
    const double weights = r["weight_bytes"].toDouble(), kv = r["kv_cache_bytes"].toDouble();
    const double baseline = small["peak_rss_bytes"].toDouble() - small["weight_bytes"].toDouble();
    const double peak = r["peak_rss_bytes"].toDouble();
    QVERIFY(weights > 300e6);
    QVERIFY(baseline > 0);
    qInfo("%s: peak %.0f MB, %.0f MB of it the process without a model, for %.0f MB of weights and %.1f MB of "
          "KV cache (%.3fx)", qPrintable(backend), peak / 1e6, baseline / 1e6, weights / 1e6, kv / 1e6,
          (peak - baseline) / (weights + kv));
    QVERIFY2(peak - baseline <= 1.1 * (weights + kv), qPrintable(QString("peak %1 MB").arg(peak / 1e6)));
  }

  // Quantize-on-load streams: a tensor is read, quantized and its source pages let go, so the
  // bf16 file (3.6x the Q4_0 weights) is never resident at once.
  void quantizeOnLoadHoldsTheQuantizedWeightsOnce_data() { peakMemoryIsTheWeightsOnce_data(); }
  void quantizeOnLoadHoldsTheQuantizedWeightsOnce() {
    QFETCH(QString, backend);
    const QJsonObject small = bench(QString::fromStdString(test::fixture_dir("tiny-gemma3-a")), backend, "q4_0");
    const QJsonObject r = bench(folder_, backend, "q4_0");
    if (backend == "vulkan" && !r["backend"].toString().startsWith("vulkan")) QSKIP("no Vulkan device here");
    const double weights = r["weight_bytes"].toDouble(), kv = r["kv_cache_bytes"].toDouble();
    const double baseline = small["peak_rss_bytes"].toDouble() - small["weight_bytes"].toDouble();
    const double peak = r["peak_rss_bytes"].toDouble(), source = QFileInfo(folder_ + "/model.safetensors").size();
    QVERIFY(weights > 150e6 && weights < source / 3);  // Q4_0, 4.5 bits a weight against bf16's 16
    qInfo("%s: peak %.0f MB, %.0f MB of it the process without a model, for %.0f MB of Q4_0 weights from %.0f MB "
          "of bf16 (largest tensor %.1f MB) and %.1f MB of KV cache (%.3fx the weights, largest tensor and cache)",
          qPrintable(backend), peak / 1e6, baseline / 1e6, weights / 1e6, source / 1e6, largest_ / 1e6, kv / 1e6,
          (peak - baseline) / (weights + double(largest_) + kv));
    QVERIFY2(peak - baseline <= 1.1 * (weights + double(largest_) + kv), qPrintable(QString("peak %1 MB").arg(peak / 1e6)));
  }

 private:
  static QJsonObject bench(const QString& model, const QString& backend, const QString& precision = "auto") {
    QProcess p;
    p.start(QString(KILN_BINARY_DIR) + "/core/cli/kiln", {"bench", "--model", model, "--backend", backend, "--precision",
                                                          precision, "--threads", "2", "--prompt", "4", "--gen", "2", "--json"});
    if (!p.waitForFinished(300000)) qFatal("kiln bench did not finish");
    if (p.exitCode() != 0) qFatal("kiln bench failed: %s", p.readAllStandardError().constData());
    return QJsonDocument::fromJson(p.readAllStandardOutput()).object();
  }
};

QTEST_GUILESS_MAIN(TestLoadMemory)
#include "test_load_memory.moc"
