// The tokenizer rebuilt from a GGUF's tokenizer.ggml.* arrays must give exactly the ids that
// SentencePiece gives with the original tokenizer.model, on every line of the corpus.
#include <sentencepiece_processor.h>

#include <QtTest>
#include <fstream>

#include "gguf_fixtures.h"
#include "kiln/types.h"
#include "model/gguf_checkpoint.h"
#include "tokenizer/tokenizer.h"

using namespace kiln;
using namespace kiln::test;

namespace {

std::vector<std::string> corpus_lines() {
  std::ifstream in(fixtures() + "/tokenizer-corpus.txt");
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace

class GgufTokenizerTest : public QObject {
  Q_OBJECT
 private slots:
  void sameIdsAsTheOriginalModel_data() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<QString>("kind");
    QTest::newRow("a f16") << "a" << "f16";
    QTest::newRow("b q4_0") << "b" << "q4_0";
  }
  void sameIdsAsTheOriginalModel() {
    QFETCH(QString, name);
    QFETCH(QString, kind);
    sentencepiece::SentencePieceProcessor original;
    QVERIFY(original.Load(folder_path(name.toStdString()) + "/tokenizer.model").ok());
    Checkpoint ck = open_gguf_checkpoint(gguf_path(name.toStdString(), kind.toStdString()), /*header_only=*/true);
    sentencepiece::SentencePieceProcessor rebuilt;
    const auto status = rebuilt.LoadFromSerializedProto(ck.tokenizer_proto);
    QVERIFY2(status.ok(), status.ToString().c_str());
    // Kiln's own tokenizer, loaded the way the engine loads a GGUF and the way it loads the folder.
    const Tokenizer kiln_tokenizer = Tokenizer::from_serialized_proto(ck.tokenizer_proto, ck.path);
    const Tokenizer kiln_original = Tokenizer::from_file(folder_path(name.toStdString()) + "/tokenizer.model");

    QCOMPARE(rebuilt.GetPieceSize(), original.GetPieceSize());
    QCOMPARE(rebuilt.bos_id(), original.bos_id());
    QCOMPARE(rebuilt.eos_id(), original.eos_id());
    QCOMPARE(rebuilt.pad_id(), original.pad_id());
    QCOMPARE(rebuilt.unk_id(), original.unk_id());
    for (int id = 0; id < original.GetPieceSize(); ++id) {
      QCOMPARE(rebuilt.IdToPiece(id), original.IdToPiece(id));
      QCOMPARE(rebuilt.IsControl(id), original.IsControl(id));
      QCOMPARE(rebuilt.IsByte(id), original.IsByte(id));
      QCOMPARE(rebuilt.IsUnknown(id), original.IsUnknown(id));
    }

    std::vector<std::string> lines = corpus_lines();
    QVERIFY(lines.size() > 5000);
    // Beyond the corpus: the turn markers, digits, spaces, and bytes the vocabulary lacks.
    lines.push_back("<start_of_turn>user\nHello  world 12345<end_of_turn>\n");
    lines.push_back("  leading and trailing spaces  ");
    lines.push_back("Grüße, 你好, 🙂 and tabs\tend");
    size_t tokens = 0;
    for (const std::string& line : lines) {
      std::vector<int> want, got;
      QVERIFY(original.Encode(line, &want).ok());
      QVERIFY(rebuilt.Encode(line, &got).ok());
      QVERIFY2(got == want, ("ids differ for line: " + line).c_str());
      // kiln::Tokenizer keeps turn-marker text literal (its own rule), so compare it with itself.
      QVERIFY2(kiln_tokenizer.encode(line) == kiln_original.encode(line), ("kiln::Tokenizer differs for: " + line).c_str());
      tokens += want.size();
    }
    qInfo("%zu lines, %zu tokens identical", lines.size(), tokens);
  }

  void userDefinedTurnMarkersStayWhole() {
    // llama.cpp wrote <start_of_turn> as a normal token; the original model matches it whole in text.
    Checkpoint ck = open_gguf_checkpoint(gguf_path("a", "q8_0"), true);
    sentencepiece::SentencePieceProcessor rebuilt;
    QVERIFY(rebuilt.LoadFromSerializedProto(ck.tokenizer_proto).ok());
    std::vector<int> ids;
    QVERIFY(rebuilt.Encode("<start_of_turn>model", &ids).ok());
    QVERIFY(!ids.empty());
    QCOMPARE(ids[0], 4);
  }
};

QTEST_APPLESS_MAIN(GgufTokenizerTest)
#include "test_gguf_tokenizer.moc"
