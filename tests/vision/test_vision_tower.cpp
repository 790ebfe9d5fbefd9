// The vision tower: found from a Hugging Face folder or an mmproj file (named or beside a GGUF
// model), refused with the file named when it does not fit, and computing what transformers computes.
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <cstring>
#include <random>

#include "kiln/types.h"
#include "model/checkpoint.h"
#include "runtime/cpu/ops.h"
#include "vision/siglip_attention.h"
#include "vision/vision_encoder.h"
#include "test_files.h"
#include "vision_pixels.h"

using namespace kiln::test;

namespace {

using kiln::VisionSource;

const std::string kVision = KILN_TEST_DATA "/vision";
const std::string kModelGguf = kVision + "/tiny-gemma3-vision-f16.gguf";
const std::string kMmproj = kVision + "/mmproj-tiny-gemma3-vision-f16.gguf";
const std::string kTextOnlyFolder = KILN_TEST_DATA "/fixtures/tiny-gemma3-a";
const std::string kTextOnlyGguf = KILN_TEST_DATA "/fixtures/gguf/tiny-gemma3-a/tiny-gemma3-a-f16.gguf";

std::optional<VisionSource> find(const std::string& model, const std::string& mmproj = "") {
  return kiln::find_vision(kiln::open_checkpoint_header(model), mmproj);
}

// max |a - b| / max |b|
double relative_error(const std::vector<float>& a, const std::vector<float>& b) {
  double diff = 0, scale = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    diff = std::max(diff, std::fabs(double(a[i]) - b[i]));
    scale = std::max(scale, std::fabs(double(b[i])));
  }
  return diff / scale;
}

std::vector<float> encode(const VisionSource& source, kiln::DType matrices) {
  auto encoder = kiln::VisionEncoder::load(source, matrices);
  kiln::ThreadPool pool(2);
  return encoder->encode(exact_pixels(source.config), pool);
}

}  // namespace

class VisionTowerTest : public QObject {
  Q_OBJECT

 private slots:
  void hugging_face_folder_has_its_tower() {
    const auto source = find(kVision);
    QVERIFY(source.has_value());
    QVERIFY(!source->gguf);
    const kiln::VisionConfig& c = source->config;
    QCOMPARE(c.image_size, 64);
    QCOMPARE(c.patch_size, 8);
    QCOMPARE(c.hidden, 64);
    QCOMPARE(c.intermediate, 128);
    QCOMPARE(c.layers, 2);
    QCOMPARE(c.heads, 4);
    QCOMPARE(c.tokens_per_image, 16);
    QCOMPARE(c.text_hidden, 128);
    QCOMPARE(c.boi_token, 630);
    QCOMPARE(c.eoi_token, 631);
    QCOMPARE(c.image_token, 640);
    QCOMPARE(c.norm.mean[1], 0.5f);
    QCOMPARE(c.norm.std[2], 0.5f);
    QVERIFY(std::fabs(c.norm.rescale - 1.0f / 255) < 1e-9);
  }

  void mmproj_file_describes_the_same_tower() {
    const auto hf = find(kVision);
    for (const auto& source : {find(kModelGguf, kMmproj), find(kModelGguf), find(kVision, kMmproj)}) {
      QVERIFY(source.has_value());
      QVERIFY(source->gguf);
      QCOMPARE(QString::fromStdString(source->path), QString::fromStdString(kMmproj));
      const kiln::VisionConfig& c = source->config;
      QCOMPARE(c.image_size, hf->config.image_size);
      QCOMPARE(c.patch_size, hf->config.patch_size);
      QCOMPARE(c.hidden, hf->config.hidden);
      QCOMPARE(c.intermediate, hf->config.intermediate);
      QCOMPARE(c.layers, hf->config.layers);
      QCOMPARE(c.heads, hf->config.heads);
      QCOMPARE(c.tokens_per_image, hf->config.tokens_per_image);
      QCOMPARE(c.text_hidden, hf->config.text_hidden);
      QCOMPARE(c.image_token, -1);  // GGUF does not say: the tokenizer must
    }
  }

  void text_only_models_have_no_tower() {
    QVERIFY(!find(kTextOnlyFolder).has_value());
    // A multimodal config (vision_config) over text weights only: a text model.
    QVERIFY(!find(KILN_TEST_DATA "/fixtures/tiny-gemma3-b").has_value());
    QVERIFY(!find(kTextOnlyGguf).has_value());  // no mmproj beside it
    // Two mmproj files beside a model: which one is meant is not clear, so none.
    QTemporaryDir dir;
    const QString model = dir.filePath("model.gguf");
    QVERIFY(QFile::copy(QString::fromStdString(kModelGguf), model));
    QVERIFY(QFile::copy(QString::fromStdString(kMmproj), dir.filePath("mmproj-a.gguf")));
    QVERIFY(find(model.toStdString()).has_value());
    QVERIFY(QFile::copy(QString::fromStdString(kMmproj), dir.filePath("mmproj-b.gguf")));
    QVERIFY(!find(model.toStdString()).has_value());
  }

  void mmproj_of_another_model_is_refused_naming_both_files() {
    const QString error = error_of([] { find(kTextOnlyGguf, kMmproj); });
    QVERIFY2(error.contains(QString::fromStdString(kMmproj)), qPrintable(error));
    QVERIFY2(error.contains(QString::fromStdString(kTextOnlyGguf)), qPrintable(error));
    QVERIFY2(error.contains("128") && error.contains("64"), qPrintable(error));
    qInfo("%s", qPrintable(error));
  }

  void broken_mmproj_files_are_refused_naming_them() {
    QTemporaryDir dir;
    const QByteArray bytes = read_file(kMmproj);
    const QString truncated = dir.filePath("mmproj-truncated.gguf");
    write_file(truncated, bytes.left(bytes.size() / 2));
    QString error = error_of([&] { find(kModelGguf, truncated.toStdString()); });
    QVERIFY2(error.startsWith(truncated), qPrintable(error));

    // A text model given as the mmproj.
    error = error_of([] { find(kModelGguf, kModelGguf); });
    QVERIFY2(error.contains(QString::fromStdString(kModelGguf)) && error.contains("mmproj"), qPrintable(error));

    // A tower tensor renamed: found, but loading names the file and the missing tensor as it spells it.
    for (const auto& [name, other] : {std::pair{"v.post_ln.weight", "v.post_xx.weight"},
                                      std::pair{"v.blk.1.attn_out.bias", "v.blk.1.attn_xxx.bias"}}) {
      QByteArray renamed = bytes;
      const int at = renamed.indexOf(name);
      QVERIFY(at > 0);
      renamed.replace(at, int(strlen(name)), other);
      const QString missing = dir.filePath("mmproj-missing.gguf");
      write_file(missing, renamed);
      const auto source = find(kModelGguf, missing.toStdString());
      QVERIFY(source.has_value());
      error = error_of([&] { kiln::VisionEncoder::load(*source, kiln::DType::F32); });
      QVERIFY2(error.startsWith(missing) && error.contains(QString(" tensor ") + name + ": missing"), qPrintable(error));
      qInfo("%s", qPrintable(error));
    }
  }

  // transformers' projector output for exact.png (reference.json: the first image token's embedding).
  void hugging_face_tower_matches_transformers() {
    const auto source = find(kVision);
    const std::vector<float> out = encode(*source, kiln::DType::F32);
    QCOMPARE(out.size(), size_t(16 * 128));
    const QJsonObject root = QJsonDocument::fromJson(read_file(kVision + "/reference.json")).object();
    const QJsonObject exact = root["cases"].toArray()[0].toObject();
    QCOMPARE(exact["image"].toString(), QString("exact.png"));
    std::vector<float> expected;
    for (const QJsonValue& v : exact["image_embeddings_first_row"].toArray()) expected.push_back(float(v.toDouble()));
    QCOMPARE(expected.size(), size_t(128));
    const double error = relative_error(std::vector<float>(out.begin(), out.begin() + 128), expected);
    QVERIFY2(error < 1e-4, qPrintable(QString::number(error)));
    qInfo("relative error against transformers: %g", error);
  }

  void mmproj_tower_matches_the_hugging_face_one() {
    const std::vector<float> hf = encode(*find(kVision), kiln::DType::F32);
    const std::vector<float> gguf = encode(*find(kModelGguf), kiln::DType::F32);
    const std::vector<float> gguf_f16 = encode(*find(kModelGguf), kiln::DType::F16);
    const double error = relative_error(gguf, hf), error_f16 = relative_error(gguf_f16, hf);
    QVERIFY2(error < 1e-3, qPrintable(QString::number(error)));
    QVERIFY2(error_f16 < 1e-3, qPrintable(QString::number(error_f16)));
    qInfo("mmproj against the Hugging Face tower: %g (F32 matrices), %g (F16)", error, error_f16);
  }

  void sharded_folder_gives_the_same_tower() {
    QTemporaryDir dir;
    for (const char* name : {"config.json", "preprocessor_config.json", "tokenizer.model"})
      QVERIFY(QFile::copy(QString::fromStdString(kVision + "/" + name), dir.filePath(name)));
    const QByteArray weights = read_file(kVision + "/model.safetensors");
    write_file(dir.filePath("model-00001-of-00001.safetensors"), weights);
    quint64 header = 0;
    memcpy(&header, weights.constData(), 8);
    QJsonObject map;
    for (const QString& tensor : QJsonDocument::fromJson(weights.mid(8, int(header))).object().keys())
      if (tensor != "__metadata__") map[tensor] = "model-00001-of-00001.safetensors";
    write_file(dir.filePath("model.safetensors.index.json"), QJsonDocument(QJsonObject{{"weight_map", map}}).toJson());
    const auto sharded = find(dir.path().toStdString());
    QVERIFY(sharded.has_value());
    QCOMPARE(encode(*sharded, kiln::DType::F32), encode(*find(kVision), kiln::DType::F32));
  }

  // transformers >= 4.52 saves the tower as model.vision_tower.* and model.multi_modal_projector.*.
  void newer_transformers_layout_gives_the_same_tower() {
    QTemporaryDir dir;
    for (const char* name : {"config.json", "preprocessor_config.json", "tokenizer.model"})
      QVERIFY(QFile::copy(QString::fromStdString(kVision + "/" + name), dir.filePath(name)));
    const QByteArray weights = read_file(kVision + "/model.safetensors");
    quint64 size = 0;
    memcpy(&size, weights.constData(), 8);
    const QJsonObject header = QJsonDocument::fromJson(weights.mid(8, int(size))).object();
    QJsonObject renamed;
    for (auto it = header.begin(); it != header.end(); ++it) {
      const QString name = it.key();
      const bool tower = name.startsWith("vision_tower.") || name.startsWith("multi_modal_projector.");
      const QString text = name.startsWith("language_model.model.") ? "model.language_model." + name.mid(21) : name;
      renamed[tower ? "model." + name : text] = it.value();
    }
    QByteArray json = QJsonDocument(renamed).toJson(QJsonDocument::Compact);
    json.append(QByteArray((8 - json.size() % 8) % 8, ' '));  // data stays 8-byte aligned
    quint64 new_size = quint64(json.size());
    write_file(dir.filePath("model.safetensors"),
               QByteArray(reinterpret_cast<const char*>(&new_size), 8) + json + weights.mid(8 + int(size)));
    const auto newer = find(dir.path().toStdString());
    QVERIFY(newer.has_value());
    QCOMPARE(encode(*newer, kiln::DType::F32), encode(*find(kVision), kiln::DType::F32));
  }

  void blocked_attention_equals_plain_softmax_attention() {
    // Sizes off every block boundary: 301 keys span two key blocks and end mid-tile, 16 and 72
    // dimensions a head are the tiny and the real towers'.
    for (const auto& [tokens, heads, head_dim] : {std::tuple{301, 3, 16}, std::tuple{70, 2, 72}, std::tuple{5, 1, 8}}) {
      const int64_t width = int64_t(heads) * head_dim;
      std::mt19937 rng(tokens);
      std::normal_distribution<float> normal(0.0f, 2.0f);  // peaked softmaxes too
      std::vector<float> q(tokens * width), k(kiln::siglip_key_rows(tokens) * width, 0.0f), v(tokens * width);
      for (float& x : q) x = normal(rng);
      for (int64_t i = 0; i < tokens * width; ++i) k[i] = normal(rng);
      for (float& x : v) x = normal(rng);
      std::vector<float> out(tokens * width), expected(tokens * width), scores(tokens);
      kiln::ThreadPool pool(2);
      kiln::siglip_attention(q.data(), k.data(), v.data(), tokens, heads, head_dim, out.data(), pool);
      for (int h = 0; h < heads; ++h) {
        std::vector<const float*> keys, values;
        for (int j = 0; j < tokens; ++j) {
          keys.push_back(k.data() + j * width + h * head_dim);
          values.push_back(v.data() + j * width + h * head_dim);
        }
        for (int t = 0; t < tokens; ++t)
          kiln::attend_one(q.data() + t * width + h * head_dim, keys.data(), values.data(), tokens, head_dim,
                           1.0f / std::sqrt(float(head_dim)), scores.data(), expected.data() + t * width + h * head_dim);
      }
      const double error = relative_error(out, expected);
      QVERIFY2(error < 1e-5, qPrintable(QString("%1 tokens: %2").arg(tokens).arg(error)));
    }
  }

  void wrong_pixel_count_is_refused() {
    auto encoder = kiln::VisionEncoder::load(*find(kVision), kiln::DType::F32);
    kiln::ThreadPool pool(1);
    std::vector<float> pixels(3 * 32 * 32);
    QVERIFY(!error_of([&] { encoder->encode(pixels, pool); }).isEmpty());
    QVERIFY(encoder->bytes() > 0);
  }
};

QTEST_APPLESS_MAIN(VisionTowerTest)
#include "test_vision_tower.moc"
