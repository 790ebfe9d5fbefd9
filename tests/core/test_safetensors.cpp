// The safetensors reader: the fixtures against a header read with Qt's JSON parser and values read
// straight from the file, and one clear error naming the file for each kind of broken file.
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include <cstring>

#include "kiln/types.h"
#include "model/mapped_file.h"
#include "model/safetensors.h"
#include "test_files.h"

using kiln::DType;
using kiln::SafetensorsFile;

using namespace kiln::test;

namespace {

QString fixture(const char* name) { return QStringLiteral(KILN_TEST_DATA "/fixtures/") + name; }

QByteArray u64_le(quint64 value) {
  QByteArray bytes(8, '\0');
  for (int i = 0; i < 8; ++i) bytes[i] = char((value >> (8 * i)) & 0xff);
  return bytes;
}

// A safetensors file from a header text and a data region.
QByteArray safetensors_bytes(const QByteArray& header, const QByteArray& data) {
  return u64_le(quint64(header.size())) + header + data;
}

// bf16 is the upper half of a float32: an independent decoding for the value checks.
float bf16_value(const uchar* bytes) {
  const quint32 bits = quint32(bytes[0] | (bytes[1] << 8)) << 16;
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

}  // namespace

class SafetensorsTest : public QObject {
  Q_OBJECT

 private slots:
  void fixtureHeaders_data() {
    QTest::addColumn<QString>("path");
    QTest::newRow("a") << fixture("tiny-gemma3-a/model.safetensors");
    QTest::newRow("b") << fixture("tiny-gemma3-b/model.safetensors");
  }

  void fixtureHeaders() {
    QFETCH(QString, path);
    const QByteArray bytes = read_file(path);
    quint64 header_size = 0;
    for (int i = 7; i >= 0; --i) header_size = (header_size << 8) | uchar(bytes[i]);
    const QJsonObject header = QJsonDocument::fromJson(bytes.mid(8, int(header_size))).object();
    QVERIFY(header.size() > 10);

    const SafetensorsFile file = SafetensorsFile::open(path.toStdString());
    QCOMPARE(file.path(), path.toStdString());
    QCOMPARE(qsizetype(file.tensors().size()), header.size() - 1);  // all but __metadata__
    QVERIFY(file.find("__metadata__") == nullptr);
    const uint8_t* base = file.mapping().data();
    for (const QString& name : header.keys()) {
      if (name == "__metadata__") continue;
      const QJsonObject entry = header[name].toObject();
      const kiln::TensorView* view = file.find(name.toStdString());
      QVERIFY2(view != nullptr, qPrintable(name));
      QCOMPARE(view->file, path.toStdString());
      QCOMPARE(entry["dtype"].toString(), QStringLiteral("BF16"));
      QVERIFY(view->dtype == DType::BF16);
      std::vector<int64_t> shape;
      for (const QJsonValue& dim : entry["shape"].toArray()) shape.push_back(dim.toInteger());
      QCOMPARE(view->shape, shape);
      const QJsonArray offsets = entry["data_offsets"].toArray();
      QCOMPARE(qint64(view->bytes), offsets[1].toInteger() - offsets[0].toInteger());
      // No copy: the view points into the mapping, at the offset the header states.
      QCOMPARE(view->data, base + 8 + header_size + offsets[0].toInteger());
      QCOMPARE(QByteArray(reinterpret_cast<const char*>(view->data), qsizetype(view->bytes)),
               bytes.mid(qsizetype(8 + header_size + offsets[0].toInteger()), qsizetype(view->bytes)));
    }
  }

  void bf16ValuesMatchDirectRead() {
    const QString path = fixture("tiny-gemma3-a/model.safetensors");
    const QByteArray bytes = read_file(path);
    const SafetensorsFile file = SafetensorsFile::open(path.toStdString());
    const kiln::TensorView* embed = file.find("model.embed_tokens.weight");
    QVERIFY(embed != nullptr);
    QCOMPARE(embed->shape, (std::vector<int64_t>{512, 64}));
    // The header puts the embedding first in the data region; read row 7 by hand from the file.
    quint64 header_size = 0;
    for (int i = 7; i >= 0; --i) header_size = (header_size << 8) | uchar(bytes[i]);
    const auto* file_row = reinterpret_cast<const uchar*>(bytes.constData()) + 8 + header_size + 7 * 64 * 2;
    const auto* view_row = embed->data + 7 * 64 * 2;
    float sum_of_squares = 0;
    for (int col = 0; col < 64; ++col) {
      const float expected = bf16_value(file_row + 2 * col);
      QCOMPARE(bf16_value(view_row + 2 * col), expected);
      sum_of_squares += expected * expected;
    }
    QVERIFY(sum_of_squares > 0);  // random weights, not a zero page
  }

  void f16AndF32AndScalar() {
    QTemporaryDir dir;
    const QString path = dir.filePath("mixed.safetensors");
    QByteArray data;
    const float values[3] = {1.5f, -2.0f, 0.25f};
    data.append(reinterpret_cast<const char*>(values), sizeof values);
    data.append("\x00\x3c", 2);  // fp16 1.0
    write_file(path, safetensors_bytes(
        R"({"f":{"dtype":"F32","shape":[3],"data_offsets":[0,12]},"h":{"dtype":"F16","shape":[],"data_offsets":[12,14]},)"
        R"("empty":{"dtype":"BF16","shape":[0,4],"data_offsets":[14,14]},"__metadata__":{"format":"pt"}})", data));
    const SafetensorsFile file = SafetensorsFile::open(path.toStdString());
    QCOMPARE(file.tensors().size(), size_t(3));
    const kiln::TensorView* f = file.find("f");
    QVERIFY(f->dtype == DType::F32 && f->bytes == 12);
    float read_back[3];
    std::memcpy(read_back, f->data, sizeof read_back);
    QCOMPARE(read_back[2], 0.25f);
    QVERIFY(file.find("h")->dtype == DType::F16 && file.find("h")->shape.empty());
    QCOMPARE(file.find("empty")->bytes, size_t(0));
  }

  void brokenFiles_data() {
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("mentions");
    const QByteArray fixture_bytes = read_file(fixture("tiny-gemma3-a/model.safetensors"));
    const QByteArray good_entry = R"({"w":{"dtype":"BF16","shape":[2,3],"data_offsets":[0,12]}})";
    const QByteArray twelve(12, '\1');

    QTest::newRow("empty file") << QByteArray() << "empty file";
    QTest::newRow("shorter than the length") << QByteArray("\x10\x00\x00", 3) << "too short";
    QTest::newRow("truncated") << fixture_bytes.left(fixture_bytes.size() / 2) << "past the end of the data";
    QTest::newRow("header past end") << u64_le(5000) + QByteArray("{}") << "header size 5000 runs past the end";
    QTest::newRow("huge header size") << u64_le(0xfffffffffffff000ull) + good_entry << "over the 100 MB limit";
    QTest::newRow("header just over limit") << u64_le(100'000'001) + good_entry << "over the 100 MB limit";
    QTest::newRow("offsets past end") << safetensors_bytes(R"({"w":{"dtype":"BF16","shape":[2,3],"data_offsets":[12,24]}})", twelve)
                                      << "tensor 'w' has data_offsets [12,24] past the end of the data (12 bytes";
    QTest::newRow("shape vs offsets") << safetensors_bytes(R"({"w":{"dtype":"BF16","shape":[2,2],"data_offsets":[0,12]}})", twelve)
                                      << "tensor 'w' has shape [2, 2] of 8 bytes but data_offsets [0,12] span 12";
    QTest::newRow("dtype vs offsets") << safetensors_bytes(R"({"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,12]}})", twelve)
                                      << "of 24 bytes but data_offsets [0,12] span 12";
    QTest::newRow("unknown dtype") << safetensors_bytes(R"({"ids":{"dtype":"I64","shape":[1],"data_offsets":[0,8]}})", twelve)
                                   << "tensor 'ids' has dtype 'I64', which Kiln does not read";
    QTest::newRow("bad json") << safetensors_bytes(R"({"w":{"dtype":"BF16",)", twelve) << "header is not valid JSON";
    QTest::newRow("number past double") << safetensors_bytes(R"({"w":{"dtype":"BF16","shape":[1e999],"data_offsets":[0,2]}})", twelve)
                                        << "header is not valid JSON";
    QTest::newRow("binary header") << safetensors_bytes(QByteArray(64, '\xff'), twelve) << "header is not valid JSON";
    QTest::newRow("not an object") << safetensors_bytes("[1,2,3]", twelve) << "header is not a JSON object";
    QTest::newRow("deep nesting") << safetensors_bytes(QByteArray(100000, '['), twelve) << "nests deeper than 16";
    QTest::newRow("reversed offsets") << safetensors_bytes(R"({"w":{"dtype":"BF16","shape":[0],"data_offsets":[8,4]}})", twelve)
                                      << "end before they begin";
    QTest::newRow("negative dim") << safetensors_bytes(R"({"w":{"dtype":"BF16","shape":[-2,-3],"data_offsets":[0,12]}})", twelve)
                                  << "not a non-negative integer (-2)";
    QTest::newRow("overflowing shape") << safetensors_bytes(
        R"({"w":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,0]}})", twelve) << "too large to address";
    QTest::newRow("overflowing bytes") << safetensors_bytes(
        R"({"w":{"dtype":"F32","shape":[4611686018427387904],"data_offsets":[0,0]}})", twelve) << "too large to address";
    QTest::newRow("huge offsets") << safetensors_bytes(
        R"({"w":{"dtype":"BF16","shape":[1],"data_offsets":[18446744073709551614,18446744073709551615]}})", twelve)
                                  << "past the end of the data";
    QTest::newRow("no dtype") << safetensors_bytes(R"({"w":{"shape":[1],"data_offsets":[0,2]}})", twelve) << "tensor 'w' has no dtype";
    QTest::newRow("no offsets") << safetensors_bytes(R"({"w":{"dtype":"BF16","shape":[1]}})", twelve) << "has no data_offsets";
    QTest::newRow("three offsets") << safetensors_bytes(R"({"w":{"dtype":"BF16","shape":[1],"data_offsets":[0,1,2]}})", twelve)
                                   << "needs data_offsets [begin, end]";
    QTest::newRow("fractional dim") << safetensors_bytes(R"({"w":{"dtype":"BF16","shape":[1.5],"data_offsets":[0,2]}})", twelve)
                                    << "not a non-negative integer";
  }

  void brokenFiles() {
    QFETCH(QByteArray, bytes);
    QFETCH(QString, mentions);
    QTemporaryDir dir;
    const QString path = dir.filePath("broken.safetensors");
    write_file(path, bytes);
    const QString message = error_of([&] { SafetensorsFile::open(path.toStdString()); });
    QVERIFY2(message.startsWith(path + ": "), qPrintable(message));
    QVERIFY2(message.contains(mentions), qPrintable(message));
    QVERIFY2(!message.contains('\n'), qPrintable(message));
  }

  void missingFileAndFolder() {
    QTemporaryDir dir;
    const QString missing = dir.filePath("nothing.safetensors");
    QCOMPARE(error_of([&] { SafetensorsFile::open(missing.toStdString()); }), missing + ": no such file");
    QCOMPARE(error_of([&] { SafetensorsFile::open(dir.path().toStdString()); }),
             dir.path() + ": is a folder, not a file");
  }

  void mappedFileMovesKeepTheMapping() {
    const std::string path = fixture("tiny-gemma3-a/tokenizer.model").toStdString();
    kiln::MappedFile first = kiln::MappedFile::open(path);
    const uint8_t* data = first.data();
    const size_t size = first.size();
    QCOMPARE(qint64(size), QFileInfo(QString::fromStdString(path)).size());
    kiln::MappedFile second = std::move(first);
    QCOMPARE(second.data(), data);
    QCOMPARE(second.size(), size);
    QVERIFY(first.data() == nullptr && first.size() == 0);
    QCOMPARE(QByteArray(reinterpret_cast<const char*>(second.data()), qsizetype(size)),
             read_file(QString::fromStdString(path)));
  }
};

QTEST_APPLESS_MAIN(SafetensorsTest)
#include "test_safetensors.moc"
