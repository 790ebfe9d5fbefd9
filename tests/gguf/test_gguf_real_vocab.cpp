// Real Gemma 3 GGUF files carry their vocabulary as llama.cpp's convert_hf_to_gguf.py rewrote it:
// every token that tokenizer_config.json's added_tokens_decoder lists is re-typed, so "<unk>" and the
// turn markers become CONTROL and the whitespace-run pieces become USER_DEFINED with "▁" written as a
// space. Kiln must read such a vocabulary as llama.cpp does and tokenize exactly like SentencePiece
// on the original tokenizer.model.
//
// data/gemma-layout-tokenizer.model has Gemma's layout (<pad> 0, <eos> 1, <bos> 2, <unk> 3; turn
// markers, newline runs, space runs and tab runs as user-defined pieces; byte fallback, digits split,
// no dummy prefix). Made with Debian's spm_train on ../data/fixtures/tokenizer-corpus.txt:
//   spm_train --model_type=bpe --vocab_size=700 --byte_fallback=true --split_digits=true
//     --add_dummy_prefix=false --normalization_rule_name=identity --remove_extra_whitespaces=false
//     --allow_whitespace_only_pieces=true --pad_id=0 --eos_id=1 --bos_id=2 --unk_id=3 (pieces named
//     <pad> <eos> <bos> <unk>) --user_defined_symbols=<start_of_turn>,<end_of_turn>,<mask>,\n,\n\n,\n\n\n,
//     ▁▁,▁▁▁,▁▁▁▁,▁▁▁▁▁▁▁▁,\t,\t\t
#include <sentencepiece_processor.h>

#include <QtTest>
#include <fstream>
#include <set>

#include "gguf_fixtures.h"
#include "gguf_vocab_writer.h"
#include "kiln/types.h"
#include "model/gguf_file.h"
#include "model/gguf_tokenizer.h"
#include "tokenizer/tokenizer.h"

using namespace kiln;
using namespace kiln::test;

namespace {

const std::string kModel = std::string(GGUF_TEST_DIR) + "/data/gemma-layout-tokenizer.model";
const std::string kSpace = "\xE2\x96\x81";

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = 0; (at = text.find(from, at)) != std::string::npos; at += to.size()) text.replace(at, from.size(), to);
  return text;
}

// The original model's arrays, re-typed as the converter does for Gemma 3: tokenizer_config.json
// marks <pad>, <eos>, <bos>, <unk>, <mask>, <start_of_turn> and <end_of_turn> special (CONTROL);
// every other added token (the whitespace runs) becomes USER_DEFINED with its "▁" written as " ".
// The model's user-defined symbols, as given to spm_train (this SentencePiece has no IsUserDefined()).
const std::set<std::string> kUserDefined = {"<start_of_turn>", "<end_of_turn>", "<mask>", "\n", "\n\n", "\n\n\n",
                                            kSpace + kSpace, kSpace + kSpace + kSpace, kSpace + kSpace + kSpace + kSpace,
                                            kSpace + kSpace + kSpace + kSpace + kSpace + kSpace + kSpace + kSpace,
                                            "\t", "\t\t"};

GgufVocab converter_layout(const sentencepiece::SentencePieceProcessor& sp) {
  const std::set<std::string> special = {"<pad>", "<eos>", "<bos>", "<unk>", "<mask>", "<start_of_turn>", "<end_of_turn>"};
  GgufVocab v;
  for (int id = 0; id < sp.GetPieceSize(); ++id) {
    const std::string& piece = sp.IdToPiece(id);
    int32_t type = sp.IsByte(id) ? 6 : sp.IsUnknown(id) ? 2 : sp.IsControl(id) ? 3 : kUserDefined.count(piece) ? 4 : 1;
    std::string text = piece;
    if (special.count(piece)) {
      type = 3;
    } else if (type == 4) {
      text = replace_all(piece, kSpace, " ");
    }
    v.tokens.push_back(text);
    v.scores.push_back(sp.GetScore(id));
    v.types.push_back(type);
  }
  return v;
}

std::vector<std::string> texts() {
  std::vector<std::string> lines;
  std::ifstream in(fixtures() + "/tokenizer-corpus.txt");
  std::vector<std::string> corpus;
  for (std::string line; std::getline(in, line);) corpus.push_back(line);
  lines = corpus;
  // Multi-line blocks keep the license files' indentation and blank lines.
  for (size_t i = 0; i + 8 < corpus.size(); i += 40) {
    std::string block;
    for (size_t j = i; j < i + 8; ++j) block += corpus[j] + "\n";
    lines.push_back(block);
  }
  for (const char* extra : {"def f(x):\n    if x:\n        return  x  * 2\n\treturn 0\n", "a  b   c    d     e         f",
                            "  leading and trailing  ", "\t\ttabs\tand\n\n\nnewlines", "Grüße, 你好, 🙂  end",
                            "<start_of_turn>user\nHi  there<end_of_turn>\n<start_of_turn>model\n", "x = [1,  2,   3]"})
    lines.push_back(extra);
  return lines;
}

}  // namespace

class GgufRealVocabTest : public QObject {
  Q_OBJECT
 private slots:
  void convertedVocabularyTokenizesLikeTheOriginal() {
    sentencepiece::SentencePieceProcessor original;
    QVERIFY(original.Load(kModel).ok());
    // The layout this test is about: a whitespace run is a piece of its own, matched in text.
    std::vector<std::string> pieces;
    QVERIFY(original.Encode("a  b", &pieces).ok());
    QCOMPARE(pieces, (std::vector<std::string>{"a", kSpace + kSpace, "b"}));
    const GgufVocab layout = converter_layout(original);
    QCOMPARE(layout.types[3], 3);  // "<unk>" stored as CONTROL, as in every Gemma 3 GGUF
    const auto file = GgufFile::from_bytes(gguf_vocab_bytes(layout), "converted.gguf");

    const Tokenizer tokenizer = Tokenizer::from_serialized_proto(build_sentencepiece_proto(*file), "converted.gguf");
    sentencepiece::SentencePieceProcessor rebuilt;
    QVERIFY(rebuilt.LoadFromSerializedProto(build_sentencepiece_proto(*file)).ok());
    QCOMPARE(rebuilt.unk_id(), 3);
    QVERIFY(rebuilt.IsUnknown(3));
    QCOMPARE(rebuilt.IdToPiece(original.PieceToId(kSpace + kSpace)), kSpace + kSpace);
    QCOMPARE(tokenizer.bos_id(), 2);
    QCOMPARE(tokenizer.eos_id(), 1);

    size_t tokens = 0, with_space_runs = 0;
    const std::vector<std::string> all = texts();
    for (const std::string& text : all) {
      std::vector<int> want;
      QVERIFY(original.Encode(text, &want).ok());
      // The original matches its user-defined turn markers in text; so does Kiln when it parses special text.
      const std::vector<int32_t> got = tokenizer.encode(text, SpecialText::Parse);
      QVERIFY2(std::vector<int>(got.begin(), got.end()) == want, ("ids differ for: " + text).c_str());
      // Control tokens decode to nothing; every other text comes back whole.
      if (std::none_of(got.begin(), got.end(), [&](int32_t id) { return tokenizer.is_control(id); }))
        QCOMPARE(tokenizer.decode(got), text);
      tokens += want.size();
      with_space_runs += text.find("  ") != std::string::npos;
    }
    QVERIFY(with_space_runs > 20);
    qInfo("%zu texts (%zu with runs of spaces), %zu tokens identical", all.size(), with_space_runs, tokens);
  }

  void unknownTokenIdWinsOverStoredTypes() {
    sentencepiece::SentencePieceProcessor original;
    QVERIFY(original.Load(kModel).ok());
    GgufVocab layout = converter_layout(original);
    // A stray UNKNOWN-typed piece elsewhere: unknown_token_id still decides, the other is control.
    layout.types[6] = 2;
    const auto file = GgufFile::from_bytes(gguf_vocab_bytes(layout), "two-unknowns.gguf");
    const SentencePieceVocabulary vocabulary = read_gguf_vocabulary(*file);
    QCOMPARE(vocabulary.unk_id, 3);
    QVERIFY(vocabulary.pieces[3].type == PieceType::Unknown);
    QVERIFY(vocabulary.pieces[6].type == PieceType::Control);
  }

  void specialTextParsedOnlyWhenAsked() {
    sentencepiece::SentencePieceProcessor original;
    QVERIFY(original.Load(kModel).ok());
    const auto file = GgufFile::from_bytes(gguf_vocab_bytes(converter_layout(original)), "converted.gguf");
    const Tokenizer tokenizer = Tokenizer::from_serialized_proto(build_sentencepiece_proto(*file), "converted.gguf");
    const int32_t start = tokenizer.piece_to_id("<start_of_turn>"), end = tokenizer.piece_to_id("<end_of_turn>");
    QVERIFY(tokenizer.is_control(start));
    const std::string prompt = "<bos><start_of_turn>user\nHi<end_of_turn>\n<start_of_turn>model\n";
    const std::vector<int32_t> parsed = tokenizer.encode(prompt, SpecialText::Parse);
    QCOMPARE(parsed.front(), 2);
    QCOMPARE(parsed[1], start);
    QCOMPARE(std::count(parsed.begin(), parsed.end(), start), 2);
    QCOMPARE(std::count(parsed.begin(), parsed.end(), end), 1);
    // Chat content keeps the same text as text: a user cannot forge a turn or a BOS.
    const std::vector<int32_t> literal = tokenizer.encode(prompt, SpecialText::Literal);
    for (int32_t id : literal) QVERIFY(!tokenizer.is_control(id));
    QCOMPARE(tokenizer.decode(literal), prompt);
  }
};

QTEST_APPLESS_MAIN(GgufRealVocabTest)
#include "test_gguf_real_vocab.moc"
