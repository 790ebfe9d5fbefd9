// Protobuf wire encoding of sentencepiece::ModelProto, just the fields SentencePiece reads.
#include "tokenizer/sentencepiece_model.h"

#include <cstring>
#include <string_view>
#include <unordered_set>

#include "kiln/types.h"

namespace kiln {
namespace {

// Field numbers of sentencepiece_model.proto (0.1.x).
enum ModelField { kPieces = 1, kTrainerSpec = 2, kNormalizerSpec = 3 };
enum PieceField { kPiece = 1, kScore = 2, kType = 3 };
enum TrainerField {
  kModelType = 3, kVocabSize = 4, kSplitDigits = 25, kAllowWhitespaceOnlyPieces = 26, kByteFallback = 35,
  kUnkId = 40, kBosId = 41, kEosId = 42, kPadId = 43, kUnkPiece = 45, kBosPiece = 46, kEosPiece = 47, kPadPiece = 48,
};
enum NormalizerField { kName = 1, kAddDummyPrefix = 3, kRemoveExtraWhitespaces = 4, kEscapeWhitespaces = 5 };
constexpr int kModelTypeBpe = 2;

void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}
void put_tag(std::string& out, int field, int wire) { put_varint(out, (static_cast<uint64_t>(field) << 3) | wire); }
void put_uint(std::string& out, int field, uint64_t v) {
  put_tag(out, field, 0);
  put_varint(out, v);
}
void put_bytes(std::string& out, int field, std::string_view bytes) {
  put_tag(out, field, 2);
  put_varint(out, bytes.size());
  out.append(bytes);
}
void put_float(std::string& out, int field, float f) {
  put_tag(out, field, 5);
  char b[4];
  std::memcpy(b, &f, 4);  // protobuf fixed32 is little-endian, as is every machine we build for
  out.append(b, 4);
}

}  // namespace

std::string escape_spaces(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == ' ')
      out.append(kSpaceMarker);
    else
      out.push_back(c);
  }
  return out;
}

std::string serialize_sentencepiece_model(const SentencePieceVocabulary& vocabulary, const std::string& origin) {
  const auto& pieces = vocabulary.pieces;
  const int64_t n = static_cast<int64_t>(pieces.size());
  if (n == 0) throw Error(origin + ": the vocabulary is empty");
  auto check_id = [&](const char* what, int32_t id, bool required) {
    if (id < 0 && !required) return;
    if (id < 0 || id >= n)
      throw Error(origin + ": " + what + " id " + std::to_string(id) + " is not a token of the vocabulary (" +
                  std::to_string(n) + " tokens)");
  };
  check_id("unknown token", vocabulary.unk_id, true);
  check_id("BOS", vocabulary.bos_id, false);
  check_id("EOS", vocabulary.eos_id, false);
  check_id("padding", vocabulary.pad_id, false);
  if (pieces[vocabulary.unk_id].type != PieceType::Unknown)
    throw Error(origin + ": the unknown token '" + pieces[vocabulary.unk_id].text + "' is not typed as unknown");

  std::string out;
  out.reserve(pieces.size() * 24);
  bool has_bytes = false;
  std::unordered_set<std::string_view> seen;
  seen.reserve(pieces.size());
  for (int64_t i = 0; i < n; ++i) {
    std::string_view text = pieces[i].text;
    PieceType type = pieces[i].type;
    if (text.empty()) throw Error(origin + ": token " + std::to_string(i) + " is empty");
    if (type == PieceType::Unknown && i != vocabulary.unk_id)
      throw Error(origin + ": token " + std::to_string(i) + " is a second unknown token");
    std::string renamed;
    if (!seen.insert(text).second) {
      renamed = "<kiln-duplicate-" + std::to_string(i) + ">";
      text = renamed;
      type = PieceType::Unused;
    }
    has_bytes |= type == PieceType::Byte;
    std::string entry;
    put_bytes(entry, kPiece, text);
    put_float(entry, kScore, pieces[i].score);
    put_uint(entry, kType, static_cast<uint64_t>(type));
    put_bytes(out, kPieces, entry);
  }

  std::string trainer;
  put_uint(trainer, kModelType, kModelTypeBpe);
  put_uint(trainer, kVocabSize, static_cast<uint64_t>(n));
  put_uint(trainer, kSplitDigits, 1);  // Gemma splits digits
  put_uint(trainer, kAllowWhitespaceOnlyPieces, 1);
  put_uint(trainer, kByteFallback, has_bytes ? 1 : 0);
  // SentencePiece finds its special ids by piece text, so name the pieces this vocabulary uses.
  const std::pair<int, int> special_fields[] = {{kUnkId, kUnkPiece}, {kBosId, kBosPiece}, {kEosId, kEosPiece}, {kPadId, kPadPiece}};
  const int32_t special_ids[] = {vocabulary.unk_id, vocabulary.bos_id, vocabulary.eos_id, vocabulary.pad_id};
  for (int k = 0; k < 4; ++k) {
    const int32_t id = special_ids[k];
    if (id < 0) continue;
    put_uint(trainer, special_fields[k].first, static_cast<uint64_t>(id));
    put_bytes(trainer, special_fields[k].second, pieces[id].text);
  }
  put_bytes(out, kTrainerSpec, trainer);

  std::string normalizer;
  put_bytes(normalizer, kName, "identity");
  put_uint(normalizer, kAddDummyPrefix, vocabulary.add_dummy_prefix ? 1 : 0);
  put_uint(normalizer, kRemoveExtraWhitespaces, vocabulary.remove_extra_whitespaces ? 1 : 0);
  put_uint(normalizer, kEscapeWhitespaces, 1);
  put_bytes(out, kNormalizerSpec, normalizer);
  return out;
}

namespace {

// Protobuf wire format: a key varint (field << 3 | wire type), then a varint (type 0), 8 bytes (1),
// a length and that many bytes (2) or 4 bytes (5).
bool read_varint(std::string_view& in, uint64_t& value) {
  value = 0;
  for (int shift = 0; shift < 64 && !in.empty(); shift += 7) {
    const auto byte = static_cast<uint8_t>(in.front());
    in.remove_prefix(1);
    value |= uint64_t(byte & 0x7f) << shift;
    if (!(byte & 0x80)) return true;
  }
  return false;
}

// Reads one field; `bytes` gets a length-delimited field's contents. False at the end or on junk.
bool read_field(std::string_view& in, uint64_t& field, uint64_t& wire, uint64_t& number, std::string_view& bytes) {
  uint64_t key = 0;
  if (in.empty() || !read_varint(in, key)) return false;
  field = key >> 3;
  wire = key & 7;
  switch (wire) {
    case 0: return read_varint(in, number);
    case 1:
    case 5: {
      const size_t n = wire == 1 ? 8 : 4;
      if (in.size() < n) return false;
      in.remove_prefix(n);
      return true;
    }
    case 2: {
      uint64_t length = 0;
      if (!read_varint(in, length) || length > in.size()) return false;
      bytes = in.substr(0, length);
      in.remove_prefix(length);
      return true;
    }
    default: return false;
  }
}

}  // namespace

std::vector<PieceType> sentencepiece_piece_types(std::string_view proto) {
  std::vector<PieceType> types;
  uint64_t field = 0, wire = 0, number = 0;
  std::string_view bytes;
  while (read_field(proto, field, wire, number, bytes)) {
    if (field != 1 || wire != 2) continue;  // ModelProto.pieces = 1
    PieceType type = PieceType::Normal;
    std::string_view piece = bytes;
    while (read_field(piece, field, wire, number, bytes))
      if (field == 3 && wire == 0 && number >= 1 && number <= 6) type = static_cast<PieceType>(number);  // SentencePiece.type = 3
    types.push_back(type);
  }
  return types;
}

}  // namespace kiln
