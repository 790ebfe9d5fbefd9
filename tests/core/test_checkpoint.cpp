// Opening model folders: both hub layouts and a sharded copy give the same canonical tensors with
// the bytes the files hold; missing or inconsistent pieces give an error naming the path.
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>

#include "kiln/types.h"
#include "model/checkpoint.h"
#include "test_files.h"

using namespace kiln::test;

namespace {

QString fixture(const char* name) { return QStringLiteral(KILN_TEST_DATA "/fixtures/") + name; }

// A tensor as the test reads it from a file, with Qt alone.
struct RawTensor {
  QString name;
  QString dtype;
  QJsonArray shape;
  QByteArray bytes;
};

std::vector<RawTensor> read_raw_tensors(const QString& path) {
  const QByteArray file = read_file(path);
  quint64 header_size = 0;
  for (int i = 7; i >= 0; --i) header_size = (header_size << 8) | uchar(file[i]);
  const QJsonObject header = QJsonDocument::fromJson(file.mid(8, qsizetype(header_size))).object();
  std::vector<RawTensor> tensors;
  for (const QString& name : header.keys()) {
    if (name == "__metadata__") continue;
    const QJsonObject entry = header[name].toObject();
    const QJsonArray offsets = entry["data_offsets"].toArray();
    const qint64 begin = qint64(8 + header_size) + offsets[0].toInteger();
    tensors.push_back({name, entry["dtype"].toString(), entry["shape"].toArray(),
                       file.mid(begin, offsets[1].toInteger() - offsets[0].toInteger())});
  }
  return tensors;
}

void write_safetensors(const QString& path, const std::vector<RawTensor>& tensors) {
  QJsonObject header{{"__metadata__", QJsonObject{{"format", "pt"}}}};
  QByteArray data;
  for (const RawTensor& tensor : tensors) {
    header[tensor.name] = QJsonObject{{"dtype", tensor.dtype},
                                      {"shape", tensor.shape},
                                      {"data_offsets", QJsonArray{data.size(), data.size() + tensor.bytes.size()}}};
    data += tensor.bytes;
  }
  const QByteArray header_text = QJsonDocument(header).toJson(QJsonDocument::Compact);
  QByteArray length(8, '\0');
  for (int i = 0; i < 8; ++i) length[i] = char((quint64(header_text.size()) >> (8 * i)) & 0xff);
  write_file(path, length + header_text + data);
}

// The canonical names tensor_source.h promises for a model of `layers` layers.
std::vector<std::string> expected_names(int layers) {
  std::vector<std::string> names{"embed_tokens.weight", "norm.weight"};
  for (int layer = 0; layer < layers; ++layer) {
    const std::string prefix = "layers." + std::to_string(layer) + ".";
    for (const char* part : {"input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm",
                             "post_feedforward_layernorm", "self_attn.q_proj", "self_attn.k_proj",
                             "self_attn.v_proj", "self_attn.o_proj", "self_attn.q_norm", "self_attn.k_norm",
                             "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj"}) {
      names.push_back(prefix + part + ".weight");
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> sorted_names(const kiln::TensorSource& source) {
  std::vector<std::string> names = source.names();
  std::sort(names.begin(), names.end());
  return names;
}

QByteArray view_bytes(const kiln::TensorView& view) {
  return QByteArray(reinterpret_cast<const char*>(view.data), qsizetype(view.bytes));
}

// The canonical name of a hub name, spelled out by hand for the layouts the fixtures use.
QString strip_hub_prefix(QString name) {
  for (const char* prefix : {"language_model.model.", "model."}) {
    if (name.startsWith(prefix)) return name.mid(qsizetype(strlen(prefix)));
  }
  return name;
}

// A model folder in a temp dir with fixture a's config and tokenizer.
void copy_model_files(const QString& from, const QString& to) {
  QVERIFY(QFile::copy(from + "/config.json", to + "/config.json"));
  QVERIFY(QFile::copy(from + "/tokenizer.model", to + "/tokenizer.model"));
}

}  // namespace

class CheckpointTest : public QObject {
  Q_OBJECT

 private slots:
  void fixtures_data() {
    QTest::addColumn<QString>("folder");
    QTest::addColumn<int>("layers");
    QTest::addColumn<bool>("nested");
    QTest::newRow("a, text-only layout") << fixture("tiny-gemma3-a") << 6 << false;
    QTest::newRow("b, multimodal layout") << fixture("tiny-gemma3-b") << 7 << true;
  }

  void fixtures() {
    QFETCH(QString, folder);
    QFETCH(int, layers);
    QFETCH(bool, nested);
    const kiln::Checkpoint checkpoint = kiln::open_checkpoint(folder.toStdString());
    QCOMPARE(checkpoint.format, std::string("safetensors"));
    QCOMPARE(checkpoint.path, folder.toStdString());
    QCOMPARE(checkpoint.config.num_layers, layers);
    QCOMPARE(checkpoint.config.nested_layout, nested);
    QCOMPARE(QString::fromStdString(checkpoint.tokenizer_path), folder + "/tokenizer.model");
    QVERIFY(checkpoint.tensors != nullptr);
    QVERIFY(!checkpoint.tensors->norms_include_one());
    QCOMPARE(sorted_names(*checkpoint.tensors), expected_names(layers));

    // Every canonical tensor holds the bytes, shape and dtype the file states under its hub name.
    uint64_t elements = 0;
    const QString weights = folder + "/model.safetensors";
    for (const RawTensor& raw : read_raw_tensors(weights)) {
      const kiln::TensorView* view = checkpoint.tensors->find(strip_hub_prefix(raw.name).toStdString());
      QVERIFY2(view != nullptr, qPrintable(raw.name));
      QCOMPARE(QString::fromStdString(view->name), strip_hub_prefix(raw.name));
      QCOMPARE(QString::fromStdString(view->file), weights);
      QVERIFY(view->dtype == kiln::DType::BF16);
      QCOMPARE(qsizetype(view->shape.size()), raw.shape.size());
      uint64_t count = 1;
      for (qsizetype i = 0; i < raw.shape.size(); ++i) {
        QCOMPARE(view->shape[size_t(i)], raw.shape[i].toInteger());
        count *= uint64_t(raw.shape[i].toInteger());
      }
      elements += count;
      QCOMPARE(view_bytes(*view), raw.bytes);
    }
    // The config's parameter count is what the file really holds (tied embedding, no lm_head).
    QCOMPARE(checkpoint.config.parameter_count(), elements);
  }

  // The same weights under every hub layout, with vision and lm_head tensors beside them,
  // give fixture a's canonical tensors byte for byte.
  void layoutsGiveSameTensors_data() {
    QTest::addColumn<QString>("text_prefix");
    QTest::addColumn<QStringList>("extra_tensors");
    QTest::newRow("released multimodal") << "language_model.model."
        << QStringList{"vision_tower.vision_model.embeddings.patch_embedding.weight",
                       "multi_modal_projector.mm_input_projection_weight", "language_model.lm_head.weight"};
    QTest::newRow("transformers 4.52+") << "model.language_model."
        << QStringList{"model.vision_tower.vision_model.post_layernorm.weight",
                       "model.multi_modal_projector.mm_soft_emb_norm.weight", "lm_head.weight"};
  }

  void layoutsGiveSameTensors() {
    QFETCH(QString, text_prefix);
    QFETCH(QStringList, extra_tensors);
    const QString source = fixture("tiny-gemma3-a");
    QTemporaryDir dir;
    copy_model_files(source, dir.path());
    QJsonObject text_config = QJsonDocument::fromJson(read_file(source + "/config.json")).object();
    const QJsonObject nested{{"model_type", "gemma3"},
                             {"architectures", QJsonArray{"Gemma3ForConditionalGeneration"}},
                             {"eos_token_id", text_config["eos_token_id"]},
                             {"text_config", text_config}};
    write_file(dir.filePath("config.json"), QJsonDocument(nested).toJson());
    std::vector<RawTensor> tensors;
    for (RawTensor raw : read_raw_tensors(source + "/model.safetensors")) {
      raw.name = text_prefix + strip_hub_prefix(raw.name);
      tensors.push_back(raw);
    }
    for (const QString& extra : extra_tensors) tensors.push_back({extra, "BF16", QJsonArray{4}, QByteArray(8, '\7')});
    write_safetensors(dir.filePath("model.safetensors"), tensors);

    const kiln::Checkpoint flat = kiln::open_checkpoint(source.toStdString());
    const kiln::Checkpoint rewritten = kiln::open_checkpoint(dir.path().toStdString());
    QVERIFY(rewritten.config.nested_layout);
    QCOMPARE(rewritten.config.parameter_count(), flat.config.parameter_count());
    QCOMPARE(sorted_names(*rewritten.tensors), sorted_names(*flat.tensors));
    for (const std::string& name : flat.tensors->names()) {
      QCOMPARE(view_bytes(*rewritten.tensors->find(name)), view_bytes(*flat.tensors->find(name)));
      QCOMPARE(rewritten.tensors->find(name)->shape, flat.tensors->find(name)->shape);
    }
  }

  void shardedIndex() {
    const QString source = fixture("tiny-gemma3-a");
    QTemporaryDir dir;
    copy_model_files(source, dir.path());
    const std::vector<RawTensor> tensors = read_raw_tensors(source + "/model.safetensors");
    const size_t half = tensors.size() / 2;
    const std::vector<RawTensor> first(tensors.begin(), tensors.begin() + qsizetype(half));
    const std::vector<RawTensor> second(tensors.begin() + qsizetype(half), tensors.end());
    const QString shard_names[2] = {"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"};
    write_safetensors(dir.filePath(shard_names[0]), first);
    write_safetensors(dir.filePath(shard_names[1]), second);
    QJsonObject weight_map;
    for (const RawTensor& raw : first) weight_map[raw.name] = shard_names[0];
    for (const RawTensor& raw : second) weight_map[raw.name] = shard_names[1];
    const QJsonObject index{{"metadata", QJsonObject{{"total_size", 511488}}}, {"weight_map", weight_map}};
    write_file(dir.filePath("model.safetensors.index.json"), QJsonDocument(index).toJson());

    const kiln::Checkpoint flat = kiln::open_checkpoint(source.toStdString());
    const kiln::Checkpoint sharded = kiln::open_checkpoint(dir.path().toStdString());
    QCOMPARE(sorted_names(*sharded.tensors), sorted_names(*flat.tensors));
    for (int shard = 0; shard < 2; ++shard) {
      const std::vector<RawTensor>& part = shard == 0 ? first : second;
      const uint8_t* shard_base = nullptr;  // one mapping per shard: every tensor sits at its offset from it
      qint64 offset = 0;
      for (const RawTensor& raw : part) {
        const std::string name = strip_hub_prefix(raw.name).toStdString();
        const kiln::TensorView* view = sharded.tensors->find(name);
        QVERIFY(view != nullptr);
        QCOMPARE(QString::fromStdString(view->file), dir.filePath(shard_names[shard]));
        QCOMPARE(view_bytes(*view), view_bytes(*flat.tensors->find(name)));
        if (shard_base == nullptr) shard_base = view->data - offset;
        QCOMPARE(view->data, shard_base + offset);
        offset += raw.bytes.size();
      }
    }

    // The index must be honest about where each tensor lives.
    weight_map[first.front().name] = shard_names[1];
    write_file(dir.filePath("model.safetensors.index.json"),
               QJsonDocument(QJsonObject{{"weight_map", weight_map}}).toJson());
    QString message = error_of([&] { kiln::open_checkpoint(dir.path().toStdString()); });
    QVERIFY2(message.startsWith(dir.filePath(shard_names[1]) + ": no tensor '" + first.front().name + "'"),
             qPrintable(message));

    QVERIFY(QFile::remove(dir.filePath(shard_names[0])));
    weight_map[first.front().name] = shard_names[0];
    write_file(dir.filePath("model.safetensors.index.json"),
               QJsonDocument(QJsonObject{{"weight_map", weight_map}}).toJson());
    message = error_of([&] { kiln::open_checkpoint(dir.path().toStdString()); });
    QCOMPARE(message, dir.filePath(shard_names[0]) + ": missing (listed in model.safetensors.index.json)");
  }

  void badIndex_data() {
    QTest::addColumn<QByteArray>("index");
    QTest::addColumn<QString>("mentions");
    QTest::newRow("not json") << QByteArray("{\"weight_map\": {") << "not valid JSON";
    QTest::newRow("number past double") << QByteArray("{\"metadata\": {\"total_size\": 1e999}}") << "not valid JSON";
    QTest::newRow("no weight_map") << QByteArray(R"({"metadata": {}})") << "no weight_map object";
    QTest::newRow("empty weight_map") << QByteArray(R"({"weight_map": {}})") << "weight_map is empty";
    QTest::newRow("outside the folder") << QByteArray(R"({"weight_map": {"model.norm.weight": "../model.safetensors"}})")
                                        << "not a file name in the model folder";
    QTest::newRow("shard not a string") << QByteArray(R"({"weight_map": {"model.norm.weight": 3}})")
                                        << "not a file name in the model folder";
  }

  void badIndex() {
    QFETCH(QByteArray, index);
    QFETCH(QString, mentions);
    QTemporaryDir dir;
    copy_model_files(fixture("tiny-gemma3-a"), dir.path());
    write_file(dir.filePath("model.safetensors.index.json"), index);
    const QString message = error_of([&] { kiln::open_checkpoint(dir.path().toStdString()); });
    QVERIFY2(message.startsWith(dir.filePath("model.safetensors.index.json") + ": "), qPrintable(message));
    QVERIFY2(message.contains(mentions), qPrintable(message));
  }

  // A .gguf path goes to the GGUF reader: same canonical tensors as the Hugging Face folder.
  void ggufPathDispatches() {
    const QString gguf = fixture("gguf/tiny-gemma3-a/tiny-gemma3-a-f16.gguf");
    const kiln::Checkpoint checkpoint = kiln::open_checkpoint(gguf.toStdString());
    QCOMPARE(checkpoint.format, std::string("gguf"));
    QCOMPARE(sorted_names(*checkpoint.tensors), expected_names(6));
    QCOMPARE(kiln::open_checkpoint_header(gguf.toStdString()).config.num_layers, 6);
    QTemporaryDir dir;
    const QString missing = dir.filePath("absent.gguf");
    QVERIFY(error_of([&] { kiln::open_checkpoint(missing.toStdString()); }).startsWith(missing + ": "));
  }

  void fileInsideFolderMeansFolder() {
    const QString folder = fixture("tiny-gemma3-b");
    for (const char* file : {"/config.json", "/model.safetensors", "/tokenizer.model"}) {
      const kiln::Checkpoint checkpoint = kiln::open_checkpoint((folder + file).toStdString());
      QCOMPARE(QString::fromStdString(checkpoint.tokenizer_path), folder + "/tokenizer.model");
      QVERIFY(checkpoint.tensors->find("layers.6.mlp.down_proj.weight") != nullptr);
    }
  }

  void headerOnly() {
    const QString folder = fixture("tiny-gemma3-b");
    const kiln::Checkpoint checkpoint = kiln::open_checkpoint_header(folder.toStdString());
    QVERIFY(checkpoint.tensors == nullptr);
    QCOMPARE(checkpoint.format, std::string("safetensors"));
    QCOMPARE(checkpoint.config.hidden_size, 96);
    QCOMPARE(QString::fromStdString(checkpoint.tokenizer_path), folder + "/tokenizer.model");
  }

  void missingPieces() {
    const QString source = fixture("tiny-gemma3-a");
    QTemporaryDir dir;
    const std::string folder = dir.path().toStdString();
    QCOMPARE(error_of([&] { kiln::open_checkpoint_header(folder); }), dir.path() + ": no config.json");
    QVERIFY(QFile::copy(source + "/config.json", dir.filePath("config.json")));
    QCOMPARE(error_of([&] { kiln::open_checkpoint(folder); }),
             dir.path() + ": no model.safetensors or model.safetensors.index.json (no weights)");
    QVERIFY(QFile::copy(source + "/model.safetensors", dir.filePath("model.safetensors")));
    QCOMPARE(error_of([&] { kiln::open_checkpoint(folder); }), dir.path() + ": no tokenizer.model or tokenizer.json (no tokenizer)");
    QCOMPARE(error_of([&] { kiln::open_checkpoint_header(folder); }), dir.path() + ": no tokenizer.model or tokenizer.json (no tokenizer)");
    QVERIFY(QFile::copy(source + "/tokenizer.model", dir.filePath("tokenizer.model")));
    QCOMPARE(kiln::open_checkpoint(folder).config.num_layers, 6);

    const QString nowhere = dir.filePath("no-such-model");
    QCOMPARE(error_of([&] { kiln::open_checkpoint(nowhere.toStdString()); }), nowhere + ": no such file or folder");
    QVERIFY(error_of([] { kiln::open_checkpoint(""); }).contains("no model path"));
  }

  void brokenPiecesNameTheirFile() {
    const QString source = fixture("tiny-gemma3-a");
    QTemporaryDir dir;
    copy_model_files(source, dir.path());
    write_file(dir.filePath("model.safetensors"), read_file(source + "/model.safetensors").left(4000));
    QString message = error_of([&] { kiln::open_checkpoint(dir.path().toStdString()); });
    QVERIFY2(message.startsWith(dir.filePath("model.safetensors") + ": "), qPrintable(message));

    write_file(dir.filePath("config.json"), R"({"model_type": "llama"})");
    message = error_of([&] { kiln::open_checkpoint(dir.path().toStdString()); });
    QCOMPARE(message, dir.filePath("config.json") + ": unsupported architecture 'llama' (Kiln runs Gemma 3)");
  }

  void embeddingMustExist() {
    const QString source = fixture("tiny-gemma3-a");
    QTemporaryDir dir;
    copy_model_files(source, dir.path());
    std::vector<RawTensor> tensors = read_raw_tensors(source + "/model.safetensors");
    std::erase_if(tensors, [](const RawTensor& raw) { return raw.name == "model.embed_tokens.weight"; });
    write_safetensors(dir.filePath("model.safetensors"), tensors);
    QCOMPARE(error_of([&] { kiln::open_checkpoint(dir.path().toStdString()); }),
             dir.filePath("model.safetensors") + ": no embed_tokens.weight tensor (the token embedding)");
    // The header-only path does not read tensors, so it still answers.
    QCOMPARE(kiln::open_checkpoint_header(dir.path().toStdString()).config.num_layers, 6);
  }

  void sameTensorTwiceIsAnError() {
    const QString source = fixture("tiny-gemma3-a");
    QTemporaryDir dir;
    copy_model_files(source, dir.path());
    std::vector<RawTensor> tensors = read_raw_tensors(source + "/model.safetensors");
    RawTensor duplicate = tensors.back();
    duplicate.name = "language_model.model.norm.weight";
    tensors.push_back(duplicate);
    write_safetensors(dir.filePath("model.safetensors"), tensors);
    const QString message = error_of([&] { kiln::open_checkpoint(dir.path().toStdString()); });
    QVERIFY2(message.startsWith(dir.filePath("model.safetensors") + ": tensor '"), qPrintable(message));
    QVERIFY2(message.contains("norm.weight' is also stored as"), qPrintable(message));
  }
};

QTEST_APPLESS_MAIN(CheckpointTest)
#include "test_checkpoint.moc"
