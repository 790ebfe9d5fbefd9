// A Hugging Face tokenizer.json read as a SentencePiece vocabulary: transformers' own ids for the
// fixtures' converted tokenizers, agreement with SentencePiece on the original tokenizer.model,
// the same pieces and types, and clear errors for what it cannot tokenize the same way.
#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <functional>
#include <sstream>

#include "kiln/types.h"
#include "tokenizer/tokenizer.h"

using kiln::SpecialText;
using kiln::Tokenizer;
using json = nlohmann::json;

namespace {

std::string fixtures() { return std::string(KILN_TEST_DATA) + "/fixtures"; }
// name: "a" or "b"
std::string tokenizer_json_path(const std::string& name) { return fixtures() + "/hf5/tiny-gemma3-" + name + "-tokenizer.json"; }
std::string hf_ids_path(const std::string& name) { return fixtures() + "/hf5/tiny-gemma3-" + name + "-hf-ids.json"; }
std::string tokenizer_model_path(const std::string& name) { return fixtures() + "/tiny-gemma3-" + name + "/tokenizer.model"; }

// The fixtures' config.json: bos 2, eos 1, pad 0.
constexpr kiln::SpecialTokenIds kFixtureIds{2, 1, 0};

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream all;
  all << in.rdbuf();
  return all.str();
}

struct Reference {
  std::vector<std::string> texts;
  std::vector<std::vector<int32_t>> ids;
};

// transformers' encode(text, add_special_tokens=False) for each text.
Reference transformers_ids(const std::string& name) {
  const json doc = json::parse(read_file(hf_ids_path(name)));
  Reference ref{doc.at("texts").get<std::vector<std::string>>(), doc.at("ids").get<std::vector<std::vector<int32_t>>>()};
  return ref;
}

QString ids_text(const std::vector<int32_t>& ids) { return QString::fromStdString(json(ids).dump()); }

std::string write_file(const QTemporaryDir& dir, const QString& name, const std::string& bytes) {
  const std::string path = dir.filePath(name).toStdString();
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

// Fixture a's tokenizer.json without the merges that produce any of `pieces`.
json without_merges_producing(std::initializer_list<std::string> pieces) {
  json doc = json::parse(read_file(tokenizer_json_path("a")));
  json& merges = doc["model"]["merges"];
  json kept = json::array();
  for (const auto& m : merges)
    if (std::find(pieces.begin(), pieces.end(), m[0].get<std::string>() + m[1].get<std::string>()) == pieces.end())
      kept.push_back(m);
  merges = kept;
  return doc;
}

}  // namespace

class TestTokenizerJson : public QObject {
  Q_OBJECT

 private slots:
  void encodes_like_transformers_data() {
    QTest::addColumn<QString>("name");
    QTest::newRow("a") << "a";
    QTest::newRow("b") << "b";
  }
  void encodes_like_transformers() {
    QFETCH(QString, name);
    const Reference ref = transformers_ids(name.toStdString());
    QVERIFY(ref.texts.size() > 4000);
    QCOMPARE(ref.ids.size(), ref.texts.size());
    const Tokenizer tok = Tokenizer::from_tokenizer_json(tokenizer_json_path(name.toStdString()), kFixtureIds);
    size_t tokens = 0;
    for (size_t i = 0; i < ref.texts.size(); ++i) {
      const auto ids = tok.encode(ref.texts[i], SpecialText::Parse);
      QVERIFY2(ids == ref.ids[i], qPrintable(QString("text %1 %2: got %3, transformers %4")
                                                 .arg(i)
                                                 .arg(QString::fromStdString(json(ref.texts[i]).dump()))
                                                 .arg(ids_text(ids), ids_text(ref.ids[i]))));
      tokens += ids.size();
    }
    qInfo("%s: %zu texts, %zu tokens, all equal to transformers' ids", qPrintable(name), ref.texts.size(), tokens);
  }

  void tokenizes_like_sentencepiece_on_the_original_model_data() { encodes_like_transformers_data(); }
  void tokenizes_like_sentencepiece_on_the_original_model() {
    QFETCH(QString, name);
    const Reference ref = transformers_ids(name.toStdString());
    const Tokenizer from_json = Tokenizer::from_tokenizer_json(tokenizer_json_path(name.toStdString()), kFixtureIds);
    const Tokenizer original = Tokenizer::from_file(tokenizer_model_path(name.toStdString()));
    const int32_t unk = original.piece_to_id("<unk>");
    size_t exact_round_trips = 0;
    for (size_t i = 0; i < ref.texts.size(); ++i) {
      const std::string& text = ref.texts[i];
      const auto ids = original.encode(text, SpecialText::Parse);
      QVERIFY2(ids == ref.ids[i], qPrintable(QString("text %1: tokenizer.model gives %2, transformers %3")
                                                 .arg(i)
                                                 .arg(ids_text(ids), ids_text(ref.ids[i]))));
      QCOMPARE(from_json.encode(text, SpecialText::Parse), ids);
      const std::string decoded = from_json.decode(ids);
      QCOMPARE(decoded, original.decode(ids));
      // Without control or unknown tokens (whose text decode() drops or replaces) it is lossless.
      const bool plain = std::none_of(ids.begin(), ids.end(), [&](int32_t id) { return id == unk || original.is_control(id); });
      if (plain) QCOMPARE(decoded, text);
      exact_round_trips += decoded == text;
    }
    qInfo("%s: %zu texts, the same ids and decode() both ways; %zu decode back to the text exactly",
          qPrintable(name), ref.texts.size(), exact_round_trips);
  }

  void pieces_and_types_match_the_original_data() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<int>("vocab_size");
    QTest::newRow("a") << "a" << 515;  // 512 pieces + <bos>, <eos>, <mask> added past them
    QTest::newRow("b") << "b" << 643;
  }
  void pieces_and_types_match_the_original() {
    QFETCH(QString, name);
    QFETCH(int, vocab_size);
    const std::string path = tokenizer_json_path(name.toStdString());
    const Tokenizer from_json = Tokenizer::from_tokenizer_json(path, kFixtureIds);
    const Tokenizer original = Tokenizer::from_file(tokenizer_model_path(name.toStdString()));
    QCOMPARE(from_json.vocab_size(), vocab_size);
    QCOMPARE(original.vocab_size(), vocab_size - 3);
    QCOMPARE(from_json.bos_id(), original.bos_id());
    QCOMPARE(from_json.eos_id(), original.eos_id());
    QCOMPARE(from_json.pad_id(), original.pad_id());
    QCOMPARE(from_json.start_of_turn_id(), original.start_of_turn_id());
    QCOMPARE(from_json.end_of_turn_id(), original.end_of_turn_id());
    QCOMPARE(from_json.piece_to_id("<unk>"), original.piece_to_id("<unk>"));
    const json doc = json::parse(read_file(path));
    int checked = 0;
    for (const auto& [piece, id_value] : doc.at("model").at("vocab").items()) {
      const int32_t id = id_value.get<int32_t>();
      QVERIFY2(original.piece_to_id(piece) == id, piece.c_str());
      QVERIFY2(from_json.piece_to_id(piece) == id, piece.c_str());
      QVERIFY2(from_json.is_control(id) == original.is_control(id), piece.c_str());
      QVERIFY2(from_json.piece_bytes(id) == original.piece_bytes(id), piece.c_str());
      ++checked;
    }
    QCOMPARE(checked, original.vocab_size());
    int added_past = 0;
    for (const auto& token : doc.at("added_tokens")) {
      const int32_t id = token.at("id").get<int32_t>();
      if (id < original.vocab_size()) continue;
      QCOMPARE(from_json.piece_to_id(token.at("content").get<std::string>()), id);
      QCOMPARE(from_json.is_control(id), token.at("special").get<bool>());
      ++added_past;
    }
    QCOMPARE(added_past, 3);
  }

  // Other spellings of the same tokenizer: transformers' ids still.
  void equivalent_files_give_the_same_ids() {
    const std::string metaspace = R"({"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "never", "split": false})";
    const std::vector<std::pair<const char*, std::function<void(json&)>>> cases = {
        {"merges as \"left right\" strings (older files)",
         [](json& d) {
           for (json& m : d["model"]["merges"]) m = m[0].get<std::string>() + " " + m[1].get<std::string>();
         }},
        {"normalizer in a Sequence", [](json& d) { d["normalizer"] = {{"type", "Sequence"}, {"normalizers", {d["normalizer"]}}}; }},
        {"no pre-tokenizer", [](json& d) { d["pre_tokenizer"] = nullptr; }},
        {"Metaspace instead of Replace",
         [&](json& d) { d["normalizer"] = nullptr, d["pre_tokenizer"] = json::parse(metaspace); }},
    };
    const Reference ref = transformers_ids("a");
    QTemporaryDir dir;
    for (const auto& [name, edit] : cases) {
      json doc = json::parse(read_file(tokenizer_json_path("a")));
      edit(doc);
      const Tokenizer tok = Tokenizer::from_tokenizer_json(write_file(dir, "equivalent.json", doc.dump()), kFixtureIds);
      for (size_t i = 0; i < ref.texts.size(); ++i)
        QVERIFY2(tok.encode(ref.texts[i], SpecialText::Parse) == ref.ids[i], qPrintable(QString("%1: text %2").arg(name).arg(i)));
    }
  }

  // Prepend "▁" (Llama-style files) is SentencePiece's dummy prefix: "x" encodes as " x" did.
  // (Text with special tokens is left out: the prefix goes before each piece of text between them.)
  void prepend_is_a_dummy_prefix() {
    json doc = json::parse(read_file(tokenizer_json_path("a")));
    doc["normalizer"] = {{"type", "Sequence"}, {"normalizers", {{{"type", "Prepend"}, {"prepend", "\xE2\x96\x81"}}, doc["normalizer"]}}};
    QTemporaryDir dir;
    const Tokenizer prefixed = Tokenizer::from_tokenizer_json(write_file(dir, "prepend.json", doc.dump()), kFixtureIds);
    const Tokenizer plain = Tokenizer::from_tokenizer_json(tokenizer_json_path("a"), kFixtureIds);
    int compared = 0;
    for (const std::string& text : transformers_ids("a").texts) {
      if (text.empty() || text.find('<') != std::string::npos) continue;
      QCOMPARE(prefixed.encode(text), plain.encode(" " + text));
      ++compared;
    }
    QVERIFY(compared > 4000);
  }

  // A piece that no merge produces, which transformers therefore never outputs. SentencePiece
  // would, were it a normal piece; typed unused, it is split again into the pieces it was formed
  // from. (transformers.js, a port of transformers, gives the same ids as Kiln on these texts.)
  void pieces_no_merge_produces_are_never_output() {
    const Tokenizer full = Tokenizer::from_tokenizer_json(tokenizer_json_path("a"), kFixtureIds);
    const int32_t the = full.piece_to_id("\xE2\x96\x81the"), of = full.piece_to_id("\xE2\x96\x81of");
    QVERIFY(the > 5 && of > 5);
    QTemporaryDir dir;
    const json doc = without_merges_producing({"\xE2\x96\x81the", "\xE2\x96\x81of"});
    const Tokenizer tok = Tokenizer::from_tokenizer_json(write_file(dir, "unreachable.json", doc.dump()), kFixtureIds);
    QCOMPARE(tok.piece_to_id("\xE2\x96\x81the"), the);  // still there, and decodes
    QCOMPARE(tok.piece_bytes(the), std::string(" the"));
    const Reference ref = transformers_ids("a");
    size_t changed = 0;
    for (size_t i = 0; i < ref.texts.size(); ++i) {
      const auto ids = tok.encode(ref.texts[i], SpecialText::Parse);
      QVERIFY2(std::find(ids.begin(), ids.end(), the) == ids.end(), ref.texts[i].c_str());
      QVERIFY2(std::find(ids.begin(), ids.end(), of) == ids.end(), ref.texts[i].c_str());
      QCOMPARE(tok.decode(ids), full.decode(ref.ids[i]));
      const bool used = std::find(ref.ids[i].begin(), ref.ids[i].end(), the) != ref.ids[i].end() ||
                        std::find(ref.ids[i].begin(), ref.ids[i].end(), of) != ref.ids[i].end();
      if (!used) QCOMPARE(ids, ref.ids[i]);  // texts where neither piece arose are unaffected
      changed += used;
    }
    QVERIFY(changed > 1000);  // the two pieces are common, so this tested something
  }

  void bad_input_gives_an_error_naming_the_file_and_key() {
    const std::string fixture = read_file(tokenizer_json_path("a"));
    struct Case {
      const char* name;
      std::function<void(json&)> edit;  // null: the file is not JSON at all
      const char* key;                  // what the message must name
      kiln::SpecialTokenIds ids = kFixtureIds;
    };
    auto vocab_key_of = [](const json& doc, int id) {
      for (const auto& [piece, value] : doc["model"]["vocab"].items())
        if (value == id) return piece;
      return std::string();
    };
    const std::vector<Case> cases = {
        {"unchanged", [](json&) {}, nullptr},
        {"not JSON", nullptr, "not valid JSON"},
        {"Unigram", [](json& d) { d["model"]["type"] = "Unigram"; }, "model.type"},
        {"NFKC", [](json& d) { d["normalizer"] = {{"type", "NFKC"}}; }, "normalizer"},
        {"Lowercase in a sequence",
         [](json& d) { d["normalizer"] = {{"type", "Sequence"}, {"normalizers", {d["normalizer"], {{"type", "Lowercase"}}}}}; },
         "normalizer"},
        {"no space escaping", [](json& d) { d["normalizer"] = nullptr, d["pre_tokenizer"] = nullptr; }, "normalizer"},
        {"Split before escaping", [](json& d) { d["normalizer"] = nullptr; }, "pre_tokenizer"},
        {"ByteLevel", [](json& d) { d["pre_tokenizer"] = {{"type", "ByteLevel"}}; }, "pre_tokenizer"},
        {"lstrip", [](json& d) { d["added_tokens"][4]["lstrip"] = true; }, "added_tokens[4].lstrip"},
        {"added content differs", [](json& d) { d["added_tokens"][4]["content"] = "<start_of_tune>"; }, "added_tokens[4].content"},
        {"merge of unknown pieces", [](json& d) { d["model"]["merges"].push_back({"\xE2\x96\x81zq", "xx"}); }, "model.merges"},
        {"merge result not in vocab",
         [](json& d) { d["model"]["merges"].push_back({"\xE2\x96\x81t", "\xE2\x96\x81t"}); }, "model.merges"},
        {"merge of byte pieces", [](json& d) { d["model"]["merges"].push_back({"<0x41>", "<0x42>"}); }, "model.merges"},
        // Metaspace prepends no "▁" to text that starts with a space; SentencePiece's dummy prefix does.
        {"Metaspace that prepends",
         [](json& d) {
           d["normalizer"] = nullptr;
           d["pre_tokenizer"] = {{"type", "Metaspace"}, {"replacement", "\xE2\x96\x81"}, {"prepend_scheme", "always"}, {"split", false}};
         },
         "pre_tokenizer"},
        {"Metaspace that splits words",  // the vocabulary has "▁▁", which only whole-text BPE can form
         [](json& d) {
           d["pre_tokenizer"] = {{"type", "Metaspace"}, {"replacement", "\xE2\x96\x81"}, {"prepend_scheme", "never"}, {"split", true}};
         },
         "pre_tokenizer.split"},
        // SentencePiece merges every split of a piece into two pieces; transformers only those listed.
        {"a split not listed", [](json& d) { d["model"]["merges"].erase(1); }, "model.merges"},  // ▁ + th -> ▁th
        // "▁the" is built on "▁th", which then no merge produces.
        {"built on an unreachable piece",
         [](json& d) { d = without_merges_producing({"\xE2\x96\x81th"}); }, "model.merges"},
        {"gap in vocab ids", [&](json& d) { d["model"]["vocab"].erase(vocab_key_of(d, 300)); }, "model.vocab"},
        {"duplicate vocab id", [&](json& d) { d["model"]["vocab"][vocab_key_of(d, 300)] = 301; }, "model.vocab"},
        {"no unk_token", [](json& d) { d["model"].erase("unk_token"); }, "model.unk_token"},
        {"dropout", [](json& d) { d["model"]["dropout"] = 0.1; }, "model.dropout"},
        {"vocab not an object", [](json& d) { d["model"]["vocab"] = json::array({1, 2}); }, "model.vocab"},
        {"id of the wrong type", [](json& d) { d["added_tokens"][0]["id"] = "zero"; }, "added_tokens[0].id"},
        {"bos past the vocabulary", [](json&) {}, "bos_token_id", {9999, 1, 0}},
    };
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    for (const Case& c : cases) {
      const std::string path = dir.filePath(QString("%1.json").arg(c.name)).toStdString();
      {
        std::ofstream out(path, std::ios::binary);
        if (c.edit) {
          json doc = json::parse(fixture);
          c.edit(doc);
          out << doc.dump();
        } else {
          out << fixture.substr(0, fixture.size() / 2);  // cut short
        }
      }
      try {
        const Tokenizer tok = Tokenizer::from_tokenizer_json(path, c.ids);
        QVERIFY2(!c.key, qPrintable(QString("no error for ") + c.name));
        QCOMPARE(tok.vocab_size(), 515);
      } catch (const kiln::Error& e) {
        const std::string message = e.what();
        QVERIFY2(c.key, e.what());
        QVERIFY2(message.rfind(path + ": ", 0) == 0, e.what());
        QVERIFY2(message.find(c.key) != std::string::npos, qPrintable(QString("%1: %2").arg(c.key, e.what())));
        QVERIFY2(message.find('\n') == std::string::npos, e.what());
      }
    }
  }
};

QTEST_APPLESS_MAIN(TestTokenizerJson)
#include "test_tokenizer_json.moc"
