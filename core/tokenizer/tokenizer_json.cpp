// tokenizer.json -> SentencePieceVocabulary. transformers' BPE merges the adjacent pair with the
// lowest rank in model.merges, SentencePiece's the pair whose concatenation is the piece with the
// highest score: scoring each piece -(rank of the first merge that produces it) makes them agree.
// A multi-character piece no merge produces is typed unused, which SentencePiece splits again into
// the pieces it was formed from. Whatever else would change ids is refused, naming the key.
#include "tokenizer/tokenizer_json.h"

#include <nlohmann/json.hpp>

#include <map>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "kiln/types.h"

namespace kiln {
namespace {

using json = nlohmann::json;
const json kSpaceValue = std::string(kSpaceMarker);
const json kSpacePattern = {{"String", " "}};

// The file and the key being read, so every error names both.
struct Context {
  const std::string& path;
  std::string key;
  [[noreturn]] void fail(const std::string& problem) const { throw Error(path + ": " + key + ": " + problem); }
};

const json& member(const json& object, const char* name) {  // null when absent
  static const json null;
  const auto it = object.find(name);
  return it == object.end() ? null : *it;
}

const std::string& text(const json& value, const Context& c) {
  if (!value.is_string()) c.fail(value.is_null() ? "missing" : "must be a string, not " + value.dump());
  return value.get_ref<const std::string&>();
}

bool flag(const json& value, const Context& c) {  // absent or null: false
  if (value.is_null()) return false;
  if (!value.is_boolean()) c.fail("must be true or false, not " + value.dump());
  return value.get<bool>();
}

// Piece text as a JSON string: quoted, with newlines and control characters escaped.
std::string quote(std::string_view s) { return json(std::string(s)).dump(-1, ' ', false, json::error_handler_t::replace); }

std::string brief(const json& value) {  // a JSON value, shortened for a message
  const std::string s = value.dump(-1, ' ', false, json::error_handler_t::replace);
  return s.size() > 120 ? s.substr(0, 117) + "..." : s;
}

uint64_t pair_key(int32_t left, int32_t right) { return uint64_t(uint32_t(left)) << 32 | uint32_t(right); }

size_t utf8_length(std::string_view s) {
  size_t n = 0;
  for (unsigned char b : s) n += (b & 0xC0) != 0x80;
  return n;
}

// Exactly "<0xAB>" with upper-case hex digits: the form byte fallback looks up.
bool is_byte_piece(std::string_view p) {
  auto hex = [](char ch) { return (ch >= '0' && ch <= '9') || (ch >= 'A' && ch <= 'F'); };
  return p.size() == 6 && p.substr(0, 3) == "<0x" && hex(p[3]) && hex(p[4]) && p[5] == '>';
}

// What the normalizer and pre-tokenizer amount to in SentencePiece terms.
struct TextSteps {
  bool escapes_spaces = false;  // " " -> "▁", which SentencePiece always does
  bool dummy_prefix = false;    // a "▁" before the text (Prepend)
  bool splits_words = false;    // Metaspace with split: BPE runs on each "▁word" alone
};

void read_normalizer(const json& n, Context& c, TextSteps& steps) {
  if (n.is_null()) return;
  const std::string& type = text(member(n, "type"), c);
  if (type == "Sequence") {
    const json& list = member(n, "normalizers");
    if (!list.is_array()) c.fail("a Sequence without a normalizers list");
    for (const json& item : list) read_normalizer(item, c, steps);
  } else if (type == "Replace" && member(n, "pattern") == kSpacePattern && member(n, "content") == kSpaceValue) {
    steps.escapes_spaces = true;
  } else if (type == "Prepend" && member(n, "prepend") == kSpaceValue) {
    steps.dummy_prefix = true;
  } else {
    // NFKC, Lowercase, Strip, regex replacements... would change the text SentencePiece sees.
    c.fail(quote(type) + " is not supported (only replacing \" \" by \"▁\" and prepending \"▁\"): " + brief(n));
  }
}

void read_pre_tokenizer(const json& p, Context& c, TextSteps& steps) {
  if (p.is_null()) return;
  const std::string& type = text(member(p, "type"), c);
  if (type == "Sequence") {
    const json& list = member(p, "pretokenizers");
    if (!list.is_array()) c.fail("a Sequence without a pretokenizers list");
    for (const json& item : list) read_pre_tokenizer(item, c, steps);
  } else if (type == "Split" && member(p, "pattern") == kSpacePattern &&
             member(p, "behavior") == "MergedWithPrevious" && !flag(member(p, "invert"), c)) {
    // Gemma's: it runs after the normalizer turned every space into "▁", so it splits nothing.
    if (!steps.escapes_spaces) c.fail("splitting on spaces the normalizer has not replaced by \"▁\" is not supported");
  } else if (type == "Metaspace" && member(p, "replacement") == kSpaceValue) {
    steps.escapes_spaces = true;
    // Its "▁" goes only before text not starting with one (and with "first", only before the
    // first piece between added tokens); SentencePiece's dummy prefix goes before all text.
    const json& scheme = member(p, "prepend_scheme");  // older files: add_prefix_space
    if (scheme.is_null() ? flag(member(p, "add_prefix_space"), c) : scheme != "never")
      c.fail("prepending \"▁\" is not supported (only prepend_scheme \"never\"): " + brief(p));
    const json& split = member(p, "split");  // absent in older files, which always split
    steps.splits_words |= split.is_null() || flag(split, c);
  } else {
    c.fail(quote(type) + " is not supported (only Gemma's Split on spaces and Metaspace \"▁\"): " + brief(p));
  }
}

SentencePieceVocabulary read(const json& doc, Context& c, const SpecialTokenIds& ids) {
  if (c.key = "(top level)"; !doc.is_object()) c.fail("not a JSON object");
  const json& model = member(doc, "model");
  if (c.key = "model"; !model.is_object()) c.fail(model.is_null() ? "missing" : "must be an object");
  c.key = "model.type";
  if (const std::string& type = text(member(model, "type"), c); type != "BPE")
    c.fail(quote(type) + " is not supported (only BPE, as Gemma's tokenizers are)");
  c.key = "model.dropout";
  if (const json& d = member(model, "dropout"); !d.is_null() && d != 0)
    c.fail("BPE dropout is not supported (it makes tokenization random)");
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    c.key = std::string("model.") + key;
    if (!member(model, key).is_null()) c.fail("not supported (SentencePiece has no such affix)");
  }
  if (c.key = "model.ignore_merges"; flag(member(model, "ignore_merges"), c))
    c.fail("true is not supported (SentencePiece always applies merges)");
  if (c.key = "model.byte_fallback"; !flag(member(model, "byte_fallback"), c))
    c.fail("must be true (Gemma spells unknown characters as bytes)");

  c.key = "model.vocab";
  const json& vocab = member(model, "vocab");
  if (!vocab.is_object() || vocab.empty()) c.fail("must be a non-empty object of piece -> id");
  const int64_t n = static_cast<int64_t>(vocab.size());
  std::vector<const std::string*> text_of(n, nullptr);
  std::unordered_map<std::string_view, int32_t> id_of;  // views into `doc`, which outlives them
  id_of.reserve(n);
  for (auto it = vocab.begin(); it != vocab.end(); ++it) {
    if (it.key().empty()) c.fail("has an empty piece");
    if (!it.value().is_number_integer()) c.fail("the id of " + quote(it.key()) + " is not an integer");
    const int64_t id = it.value().get<int64_t>();
    if (id < 0 || id >= n)
      c.fail(quote(it.key()) + " has id " + std::to_string(id) + ", so the ids do not run 0.." +
             std::to_string(n - 1) + " without gaps");
    if (text_of[id]) c.fail("id " + std::to_string(id) + " is given to both " + quote(*text_of[id]) + " and " + quote(it.key()));
    text_of[id] = &it.key();
    id_of.emplace(it.key(), static_cast<int32_t>(id));
  }
  const json& unk = member(model, "unk_token");
  if (c.key = "model.unk_token"; unk.is_null()) c.fail("missing (SentencePiece needs an unknown token)");
  const auto unk_it = id_of.find(text(unk, c));
  if (unk_it == id_of.end()) c.fail(quote(unk.get<std::string>()) + " is not in model.vocab");

  c.key = "model.merges";
  const json& merges = member(model, "merges");
  if (!merges.is_array()) c.fail(merges.is_null() ? "missing" : "must be a list");
  // Ranks become float scores, exact below 2^24.
  if (merges.size() >= (size_t{1} << 24)) c.fail("too many merges (" + std::to_string(merges.size()) + ")");
  std::vector<int64_t> first_rank(n, -1);
  std::unordered_set<uint64_t> pairs;  // the listed (left, right) id pairs
  pairs.reserve(merges.size());
  std::string joined;
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const json& m = merges[rank];
    auto what = [&](const std::string& problem) { return "merge " + std::to_string(rank) + " " + brief(m) + problem; };
    std::string_view left, right;
    if (m.is_string()) {  // older files: "left right"
      const std::string_view s = m.get_ref<const std::string&>();
      const size_t space = s.find(' ');
      if (space == s.npos || s.find(' ', space + 1) != s.npos) c.fail(what(" is not two pieces and a space"));
      left = s.substr(0, space), right = s.substr(space + 1);
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
      left = m[0].get_ref<const std::string&>(), right = m[1].get_ref<const std::string&>();
    } else {
      c.fail(what(" is neither \"left right\" nor [left, right]"));
    }
    joined.assign(left).append(right);
    int32_t part_ids[3], k = 0;  // left, right, result
    for (std::string_view part : {left, right, std::string_view(joined)}) {
      const auto it = id_of.find(part);  // transformers refuses a piece outside the vocabulary too
      if (it == id_of.end()) c.fail(what(" needs " + quote(part) + ", which is not in model.vocab"));
      if (is_byte_piece(part)) c.fail(what(" involves the byte piece " + quote(part)));  // SentencePiece never merges those
      part_ids[k++] = it->second;
    }
    pairs.insert(pair_key(part_ids[0], part_ids[1]));
    if (first_rank[part_ids[2]] < 0) first_rank[part_ids[2]] = static_cast<int64_t>(rank);
  }

  // Below every merge result: an unused piece that SentencePiece forms anyway is then formed
  // last, when no real merge is left around it.
  const float lowest = -static_cast<float>(merges.size());
  SentencePieceVocabulary out;
  out.pieces.resize(n);
  int bytes = 0;
  for (int64_t id = 0; id < n; ++id) {
    VocabularyPiece& p = out.pieces[id];
    p.text = *text_of[id];
    p.score = first_rank[id] >= 0 ? -static_cast<float>(first_rank[id]) : lowest;
    if (is_byte_piece(p.text)) p.type = PieceType::Byte, ++bytes;
    else if (first_rank[id] < 0 && utf8_length(p.text) > 1) p.type = PieceType::Unused;
  }
  c.key = "model.vocab";
  if (bytes != 256) c.fail("has " + std::to_string(bytes) + " of the 256 byte pieces <0x00>..<0xFF> byte fallback needs");
  out.unk_id = unk_it->second;
  out.pieces[out.unk_id].type = PieceType::Unknown;

  c.key = "added_tokens";
  const json& added = member(doc, "added_tokens");
  if (!added.is_null() && !added.is_array()) c.fail("must be a list");
  std::map<int64_t, VocabularyPiece> beyond;  // added tokens past model.vocab, by id
  for (size_t i = 0; i < added.size(); ++i) {
    const json& t = added[i];
    const std::string at = "added_tokens[" + std::to_string(i) + "]";
    if (c.key = at; !t.is_object()) c.fail("must be an object");
    for (const char* key : {"lstrip", "rstrip", "single_word"}) {
      c.key = at + "." + key;
      if (flag(member(t, key), c)) c.fail("true is not supported (it changes where the token matches)");
    }
    c.key = at + ".content";
    const std::string& content = text(member(t, "content"), c);
    if (content.empty()) c.fail("is empty");
    const json& id_value = member(t, "id");
    c.key = at + ".id";
    if (!id_value.is_number_integer() || id_value.get<int64_t>() < 0) c.fail("must be a token id, not " + brief(id_value));
    const int64_t id = id_value.get<int64_t>();
    c.key = at + ".special";
    const bool special = flag(member(t, "special"), c);
    // Special tokens are never matched inside text by SentencePiece (Kiln parses their text on
    // request); the others are, in the normalized text, where spaces are "▁".
    VocabularyPiece piece{special ? content : escape_spaces(content), lowest,
                          special ? PieceType::Control : PieceType::UserDefined};
    if (id < n) {
      c.key = at + ".content";
      if (*text_of[id] != content)
        c.fail(quote(content) + " is not model.vocab's piece " + quote(*text_of[id]) + " of id " + std::to_string(id));
      if (id != out.unk_id) out.pieces[id].text = piece.text, out.pieces[id].type = piece.type;
      continue;
    }
    if (id > n + (1 << 16)) c.fail(std::to_string(id) + " is far past the vocabulary (" + std::to_string(n) + " pieces)");
    if (!beyond.emplace(id, piece).second) c.fail(std::to_string(id) + " is given to two added tokens");
  }
  // Past the vocabulary, as transformers' own conversion puts <image_soft_token>, <bos>, ...
  for (int64_t id = n; !beyond.empty() && id <= beyond.rbegin()->first; ++id) {
    const auto it = beyond.find(id);
    const VocabularyPiece gap{"<kiln-gap-" + std::to_string(id) + ">", lowest, PieceType::Unused};
    out.pieces.push_back(it != beyond.end() ? it->second : gap);
  }

  // SentencePiece merges any two adjacent pieces whose concatenation is a piece; transformers only
  // the listed pairs, and never a piece that no merge produces (an unused piece SentencePiece
  // forms is split again at the end, harmless unless another piece was built on it). Refuse
  // vocabularies where the two would differ; transformers' conversions of SentencePiece models
  // list every split.
  c.key = "model.merges";
  auto mergeable = [&](PieceType t) { return t == PieceType::Normal || t == PieceType::Unused; };
  for (int64_t id = 0; id < n; ++id) {
    if (first_rank[id] < 0 || out.pieces[id].type != PieceType::Normal) continue;
    const std::string_view p = *text_of[id];
    for (size_t cut = 1; cut < p.size(); ++cut) {
      if ((static_cast<unsigned char>(p[cut]) & 0xC0) == 0x80) continue;  // inside a character
      const auto l = id_of.find(p.substr(0, cut));
      if (l == id_of.end() || !mergeable(out.pieces[l->second].type)) continue;
      const auto r = id_of.find(p.substr(cut));
      if (r == id_of.end() || !mergeable(out.pieces[r->second].type)) continue;
      if (!pairs.count(pair_key(l->second, r->second)))
        c.fail("does not list " + quote(l->first) + " + " + quote(r->first) + " -> " + quote(p) +
               ", which SentencePiece would merge");
      for (const auto& half : {l, r})
        if (out.pieces[half->second].type == PieceType::Unused)
          c.fail(quote(p) + " is built on " + quote(half->first) + ", which no merge produces");
    }
  }

  TextSteps steps;
  c.key = "normalizer";
  read_normalizer(member(doc, "normalizer"), c, steps);
  c.key = "pre_tokenizer";
  read_pre_tokenizer(member(doc, "pre_tokenizer"), c, steps);
  if (c.key = "normalizer"; !steps.escapes_spaces) c.fail("does not replace \" \" by \"▁\", which SentencePiece always does");
  if (steps.splits_words) {
    // Splitting before every "▁" changes nothing unless a piece holds a "▁" after its start.
    c.key = "pre_tokenizer.split";
    for (const auto& p : out.pieces)
      if (p.type != PieceType::Control && p.text.find(kSpaceMarker, 1) != std::string::npos)
        c.fail("true is not supported with pieces such as " + quote(p.text) + ", which span a \"▁\"");
  }
  out.add_dummy_prefix = steps.dummy_prefix;

  // A decoder, post-processor, truncation or padding does not change ids; BOS is Kiln's job.
  const int64_t total = static_cast<int64_t>(out.pieces.size());
  const std::pair<const char*, int32_t> specials[] = {
      {"bos_token_id", ids.bos}, {"eos_token_id", ids.eos}, {"pad_token_id", ids.pad}};
  for (const auto& [name, id] : specials)
    if (id < -1 || id >= total)
      throw Error(c.path + ": the model's " + name + " " + std::to_string(id) + " is not a token of this vocabulary (" +
                  std::to_string(total) + " tokens)");
  out.bos_id = ids.bos, out.eos_id = ids.eos, out.pad_id = ids.pad;
  return out;
}

}  // namespace

SentencePieceVocabulary read_tokenizer_json(const std::string& json_text, const std::string& path,
                                            const SpecialTokenIds& ids) {
  json doc;
  try {
    doc = json::parse(json_text);
  } catch (const json::exception& e) {
    throw Error(path + ": not a tokenizer.json (not valid JSON: " + std::string(e.what()) + ")");
  }
  Context c{path, {}};
  try {
    return read(doc, c, ids);
  } catch (const json::exception& e) {  // a type we did not check: still name the key
    c.fail(e.what());
  }
}

}  // namespace kiln
