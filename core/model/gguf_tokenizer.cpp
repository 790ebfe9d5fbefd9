// Protobuf wire encoding of sentencepiece::ModelProto, just the fields SentencePiece reads.
#include "model/gguf_tokenizer.h"

#include <cstdint>
#include <cstring>
#include <string_view>
#include <unordered_set>
#include <vector>

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
enum PieceType { kNormal = 1, kUnknown = 2, kControl = 3, kUserDefined = 4, kUnused = 5, kByte = 6 };
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

bool is_positive_zero(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return bits == 0;
}

}  // namespace

std::string build_sentencepiece_proto(const GgufFile& file) {
  const std::string& path = file.path();
  auto model = file.get_string("tokenizer.ggml.model");
  if (!model) throw Error(path + ": no tokenizer in the file (tokenizer.ggml.model is missing)");
  if (*model != "llama")
    throw Error(path + ": tokenizer '" + std::string(*model) + "' is not SentencePiece (expected 'llama')");
  auto tokens = file.get_string_array("tokenizer.ggml.tokens");
  if (!tokens || tokens->empty()) throw Error(path + ": tokenizer.ggml.tokens is missing or empty");
  const size_t n = tokens->size();
  std::vector<float> scores = file.get_float_array("tokenizer.ggml.scores").value_or(std::vector<float>(n, 0.0f));
  std::vector<int64_t> types = file.get_int_array("tokenizer.ggml.token_type").value_or(std::vector<int64_t>(n, kNormal));
  if (scores.size() != n || types.size() != n)
    throw Error(path + ": tokenizer arrays differ in length (" + std::to_string(n) + " tokens, " +
                std::to_string(scores.size()) + " scores, " + std::to_string(types.size()) + " types)");

  auto special_id = [&](const char* key, int64_t fallback) -> int64_t {
    auto id = file.get_uint(key);
    if (!id) return fallback;
    if (*id >= n) throw Error(path + ": " + key + " " + std::to_string(*id) + " is not a token of the vocabulary");
    return static_cast<int64_t>(*id);
  };

  std::string out;
  out.reserve(n * 24);
  int64_t unk_id = -1;
  bool has_bytes = false;
  std::unordered_set<std::string_view> seen;
  seen.reserve(n);
  std::string renamed;
  for (size_t i = 0; i < n; ++i) {
    std::string_view piece = (*tokens)[i];
    if (piece.empty()) throw Error(path + ": token " + std::to_string(i) + " is empty");
    int64_t type = types[i] == 0 ? int64_t{kNormal} : types[i];  // 0 is GGUF's "undefined"
    if (type < kNormal || type > kByte)
      throw Error(path + ": token " + std::to_string(i) + " has unknown token type " + std::to_string(types[i]));
    // SentencePiece refuses a vocabulary with a piece twice; a repeated one keeps its id as an
    // unused placeholder (never produced by encoding), so every other id stays where it is.
    if (!seen.insert(piece).second) {
      renamed = "<kiln-duplicate-" + std::to_string(i) + ">";
      piece = renamed;
      type = kUnused;
    }
    // llama.cpp's converter writes SentencePiece's user-defined pieces ("<start_of_turn>" in a model
    // without tokenizer_config.json) as normal tokens. They keep their score of +0.0, which no BPE
    // merge has (the first merge scores -0.0), so "<...>" pieces with +0.0 get their type back: that
    // keeps them matched whole in text, as the original tokenizer.model does.
    if (type == kNormal && piece.size() >= 3 && piece.front() == '<' && piece.back() == '>' &&
        is_positive_zero(scores[i]))
      type = kUserDefined;
    if (type == kUnknown && unk_id < 0) unk_id = static_cast<int64_t>(i);
    has_bytes |= type == kByte;
    std::string entry;
    put_bytes(entry, kPiece, piece);
    put_float(entry, kScore, scores[i]);
    put_uint(entry, kType, static_cast<uint64_t>(type));
    put_bytes(out, kPieces, entry);
  }
  if (unk_id < 0) unk_id = special_id("tokenizer.ggml.unknown_token_id", -1);
  if (unk_id < 0) throw Error(path + ": the vocabulary has no unknown token, which SentencePiece requires");

  const int64_t bos = special_id("tokenizer.ggml.bos_token_id", -1);
  const int64_t eos = special_id("tokenizer.ggml.eos_token_id", -1);
  const int64_t pad = special_id("tokenizer.ggml.padding_token_id", -1);
  std::string trainer;
  put_uint(trainer, kModelType, kModelTypeBpe);
  put_uint(trainer, kVocabSize, n);
  put_uint(trainer, kSplitDigits, 1);                 // Gemma splits digits
  put_uint(trainer, kAllowWhitespaceOnlyPieces, 1);
  put_uint(trainer, kByteFallback, has_bytes ? 1 : 0);
  // SentencePiece finds its special ids by piece text, so name the pieces this vocabulary uses.
  put_uint(trainer, kUnkId, static_cast<uint64_t>(unk_id));
  put_bytes(trainer, kUnkPiece, (*tokens)[unk_id]);
  if (bos >= 0) {
    put_uint(trainer, kBosId, static_cast<uint64_t>(bos));
    put_bytes(trainer, kBosPiece, (*tokens)[bos]);
  }
  if (eos >= 0) {
    put_uint(trainer, kEosId, static_cast<uint64_t>(eos));
    put_bytes(trainer, kEosPiece, (*tokens)[eos]);
  }
  if (pad >= 0) {
    put_uint(trainer, kPadId, static_cast<uint64_t>(pad));
    put_bytes(trainer, kPadPiece, (*tokens)[pad]);
  }
  put_bytes(out, kTrainerSpec, trainer);

  // llama.cpp's default for SentencePiece vocabularies is to add the space prefix; Gemma's files say no.
  const bool dummy_prefix = file.get_bool("tokenizer.ggml.add_space_prefix").value_or(true);
  const bool remove_spaces = file.get_bool("tokenizer.ggml.remove_extra_whitespaces").value_or(false);
  std::string normalizer;
  put_bytes(normalizer, kName, "identity");
  put_uint(normalizer, kAddDummyPrefix, dummy_prefix ? 1 : 0);
  put_uint(normalizer, kRemoveExtraWhitespaces, remove_spaces ? 1 : 0);
  put_uint(normalizer, kEscapeWhitespaces, 1);
  put_bytes(out, kNormalizerSpec, normalizer);
  return out;
}

}  // namespace kiln
