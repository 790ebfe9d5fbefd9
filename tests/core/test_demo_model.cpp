// The bundled demo model (resources/models/kiln-demo): it is found with no model named, loads, continues
// "Once upon a time", and Kiln computes on it what Hugging Face transformers computes
// (tests/data/demo-reference.json, written by resources/training/train.py: code we did not write).
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "kiln/engine.h"

using namespace kiln;
namespace fs = std::filesystem;

namespace {

const std::string kModelDir = std::string(KILN_TEST_DATA) + "/../../resources/models/kiln-demo";

QJsonObject read_json(const std::string& path) {
  QFile f(QString::fromStdString(path));
  if (!f.open(QIODevice::ReadOnly)) qFatal("cannot open %s", path.c_str());
  return QJsonDocument::fromJson(f.readAll()).object();
}

std::vector<int32_t> ids_of(const QJsonValue& array) {
  std::vector<int32_t> ids;
  for (const QJsonValue& v : array.toArray()) ids.push_back(v.toInt());
  return ids;
}

std::string read_text(const std::string& path) {
  QFile f(QString::fromStdString(path));
  if (!f.open(QIODevice::ReadOnly)) qFatal("cannot open %s", path.c_str());
  return f.readAll().toStdString();
}

std::unique_ptr<Engine> load(const std::string& path, Precision precision = Precision::F32) {
  LoadOptions o;
  o.path = path;
  o.precision = precision;
  o.backend = BackendKind::Cpu;
  o.context_length = 1024;
  o.threads = 2;
  return Engine::load(o);
}

// ||ours - ref|| / ||ref|| over the listed rows.
double relative_error(const std::vector<std::vector<float>>& rows, const QJsonArray& positions,
                      const QJsonArray& reference) {
  double diff = 0, norm = 0;
  for (qsizetype k = 0; k < positions.size(); ++k) {
    const std::vector<float>& ours = rows[size_t(positions[k].toInt())];
    const QJsonArray ref = reference[k].toArray();
    if (size_t(ref.size()) != ours.size()) return INFINITY;
    for (qsizetype v = 0; v < ref.size(); ++v) {
      const double r = ref[v].toDouble();
      diff += (ours[size_t(v)] - r) * (ours[size_t(v)] - r);
      norm += r * r;
    }
  }
  return std::sqrt(diff / norm);
}

}  // namespace

class DemoModel : public QObject {
  Q_OBJECT
  QJsonObject reference_;
  std::unique_ptr<Engine> engine_;  // F32, the model in the source tree

 private slots:
  void initTestCase() {
    reference_ = read_json(std::string(KILN_TEST_DATA) + "/demo-reference.json");
    QVERIFY(!reference_.isEmpty());
    engine_ = load(kModelDir);
  }

  // What ships must stay small enough for the repository and the installer.
  void model_folder_is_small() {
    uintmax_t total = 0;
    for (const auto& entry : fs::directory_iterator(kModelDir)) total += entry.file_size();
    QVERIFY2(total < 30'000'000, qPrintable(QString("model folder is %1 bytes").arg(total)));
    QVERIFY(fs::file_size(fs::path(kModelDir) / "model.safetensors") < 16u * 1024 * 1024);
  }

  // With no model named, the CLI, the server and the app use this model.
  void default_model_path_finds_a_loadable_model() {
    qunsetenv("KILN_DEFAULT_MODEL");
    const std::string path = default_model_path();
    QVERIFY2(!path.empty(), "no bundled model found");
    auto engine = load(path, Precision::Q8_0);
    QCOMPARE(engine->info().architecture, std::string("gemma3"));
    QVERIFY(engine->info().vocab > 0);
  }

  void architecture_is_gemma3_with_local_and_global_layers() {
    const ModelInfo& info = engine_->info();
    QCOMPARE(info.architecture, std::string("gemma3"));
    QCOMPARE(qint64(info.parameter_count), reference_["parameter_count"].toInteger());  // transformers' count
    QCOMPARE(info.layers, 12);
    QCOMPARE(info.global_layers, 2);
    QVERIFY(info.sliding_window > 0 && info.sliding_window < info.max_context);
    QVERIFY(info.heads > info.kv_heads);  // grouped-query attention, as in every Gemma 3
  }

  // Same ids as SentencePiece's Python package gave transformers for the whole held-out text.
  void tokenizer_matches_reference() {
    const std::string text = read_text(std::string(KILN_TEST_DATA) + "/demo-heldout.txt");
    const std::vector<int32_t> expected = ids_of(reference_["heldout"].toObject()["token_ids"]);
    const std::vector<int32_t> ours = engine_->tokenize(text, false);
    QCOMPARE(ours.size(), expected.size());
    QVERIFY(ours == expected);
    QCOMPARE(engine_->detokenize(ours), text);
  }

  // Full-vocabulary logits of held-out sequences of 16, 200 and 600 tokens (the last two longer than
  // the sliding window of 128, so local and global layers differ), in one batch and through the KV cache.
  void logits_match_transformers() {
    for (const QJsonValue& value : reference_["cases"].toArray()) {
      const QJsonObject c = value.toObject();
      const std::vector<int32_t> ids = ids_of(c["input_ids"]);
      const QJsonArray positions = c["positions"].toArray();
      const double batch_error = relative_error(engine_->logits(ids), positions, c["logits"].toArray());
      const double cached_error =
          relative_error(engine_->logits(ids, int(ids.size() / 2)), positions, c["logits"].toArray());
      qInfo("case of %zu tokens: relative error %.2e in one batch, %.2e through the cache", ids.size(),
            batch_error, cached_error);
      // float32 against float32 on the same bf16 weights: ~1e-6; a wrong window, norm or RoPE: > 1e-1.
      QVERIFY2(batch_error < 1e-4, qPrintable(QString::number(batch_error)));
      QVERIFY2(cached_error < 1e-4, qPrintable(QString::number(cached_error)));
    }
  }

  // `kiln run "Once upon a time"` with no model: greedy decoding gives transformers' continuation.
  void greedy_continuation_matches_transformers() {
    const QJsonObject greedy = reference_["greedy"].toObject();
    const std::vector<int32_t> expected = ids_of(greedy["new_tokens"]);
    const QJsonArray margins = greedy["top2_margins"].toArray();
    // Compare up to the first step where transformers' top two logits were within 0.02: there float
    // rounding may legitimately pick the other token.
    size_t trusted = 0;
    while (trusted < expected.size() && margins[qsizetype(trusted)].toDouble() > 0.02) ++trusted;
    QVERIFY(trusted >= 10);
    GenerateOptions options;
    options.sampling.temperature = 0;
    options.max_tokens = int(expected.size());
    std::string text;
    GenerationStats stats = engine_->generate(greedy["prompt"].toString().toStdString(), options,
                                              [&](std::string_view piece) {
                                                text += piece;
                                                return true;
                                              });
    const std::string want = engine_->detokenize(std::span(expected).first(trusted));
    qInfo("continuation: %s", text.c_str());
    QVERIFY2(text.starts_with(want), qPrintable(QString::fromStdString("got: " + text + "\nwant: " + want)));
    QCOMPARE(stats.generated_tokens, int(expected.size()));
  }

  // Sampled text is English words, not byte soup: the model is really trained.
  void sampled_continuation_is_words() {
    auto engine = load(kModelDir, Precision::Q8_0);
    GenerateOptions options;
    options.sampling.temperature = 0.8f;
    options.sampling.seed = 7;
    options.max_tokens = 48;
    std::string text;
    engine->generate("Once upon a time", options, [&](std::string_view piece) {
      text += piece;
      return true;
    });
    qInfo("sampled: %s", text.c_str());
    size_t letters = 0, spaces = 0;
    for (unsigned char ch : text) {
      letters += std::isalpha(ch) != 0;
      spaces += ch == ' ' || ch == '\n';
    }
    QVERIFY2(spaces >= 8, qPrintable(QString::fromStdString(text)));
    // The held-out text is 78 % letters; random bytes or pieces would be far from that.
    QVERIFY2(letters >= text.size() * 6 / 10, qPrintable(QString::fromStdString(text)));
  }
};

QTEST_APPLESS_MAIN(DemoModel)
#include "test_demo_model.moc"
