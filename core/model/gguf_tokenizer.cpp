// tokenizer.ggml.* arrays -> SentencePieceVocabulary, with llama.cpp's reading of the converter's types.
#include "model/gguf_tokenizer.h"

#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "kiln/types.h"

namespace kiln {
namespace {

bool is_positive_zero(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return bits == 0;
}

}  // namespace

SentencePieceVocabulary read_gguf_vocabulary(const GgufFile& file) {
  const std::string& path = file.path();
  auto model = file.get_string("tokenizer.ggml.model");
  if (!model) throw Error(path + ": no tokenizer in the file (tokenizer.ggml.model is missing)");
  if (*model != "llama")
    throw Error(path + ": tokenizer '" + std::string(*model) + "' is not SentencePiece (expected 'llama')");
  auto tokens = file.get_string_array("tokenizer.ggml.tokens");
  if (!tokens || tokens->empty()) throw Error(path + ": tokenizer.ggml.tokens is missing or empty");
  const size_t n = tokens->size();
  const auto normal = static_cast<int64_t>(PieceType::Normal);
  std::vector<float> scores = file.get_float_array("tokenizer.ggml.scores").value_or(std::vector<float>(n, 0.0f));
  std::vector<int64_t> types = file.get_int_array("tokenizer.ggml.token_type").value_or(std::vector<int64_t>(n, normal));
  if (scores.size() != n || types.size() != n)
    throw Error(path + ": tokenizer arrays differ in length (" + std::to_string(n) + " tokens, " +
                std::to_string(scores.size()) + " scores, " + std::to_string(types.size()) + " types)");

  auto special_id = [&](const char* key) -> int32_t {
    auto id = file.get_uint(key);
    if (!id) return -1;
    if (*id >= n) throw Error(path + ": " + key + " " + std::to_string(*id) + " is not a token of the vocabulary");
    return static_cast<int32_t>(*id);
  };

  SentencePieceVocabulary vocabulary;
  vocabulary.unk_id = special_id("tokenizer.ggml.unknown_token_id");
  vocabulary.bos_id = special_id("tokenizer.ggml.bos_token_id");
  vocabulary.eos_id = special_id("tokenizer.ggml.eos_token_id");
  vocabulary.pad_id = special_id("tokenizer.ggml.padding_token_id");
  vocabulary.pieces.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const std::string_view text = (*tokens)[i];
    const int64_t stored = types[i] == 0 ? normal : types[i];  // 0 is GGUF's "undefined"
    if (stored < normal || stored > static_cast<int64_t>(PieceType::Byte))
      throw Error(path + ": token " + std::to_string(i) + " has unknown token type " + std::to_string(types[i]));
    auto type = static_cast<PieceType>(stored);
    if (vocabulary.unk_id < 0 && type == PieceType::Unknown) vocabulary.unk_id = static_cast<int32_t>(i);
    if (type == PieceType::Normal && text.size() >= 3 && text.front() == '<' && text.back() == '>' &&
        is_positive_zero(scores[i]))
      type = PieceType::UserDefined;  // BPE merges score -0.0 and below; +0.0 marks an added piece
    vocabulary.pieces.push_back({type == PieceType::UserDefined ? escape_spaces(text) : std::string(text),
                                 scores[i], type});
  }
  if (vocabulary.unk_id < 0) throw Error(path + ": the vocabulary has no unknown token, which SentencePiece requires");
  // llama.cpp takes unknown_token_id as the unknown token whatever its type; SentencePiece needs
  // exactly one piece typed so.
  for (size_t i = 0; i < n; ++i) {
    auto& piece = vocabulary.pieces[i];
    if (static_cast<int32_t>(i) == vocabulary.unk_id)
      piece.type = PieceType::Unknown;
    else if (piece.type == PieceType::Unknown)
      piece.type = PieceType::Control;
  }

  // llama.cpp's default for SentencePiece vocabularies is to add the space prefix; Gemma's files say no.
  vocabulary.add_dummy_prefix = file.get_bool("tokenizer.ggml.add_space_prefix").value_or(true);
  vocabulary.remove_extra_whitespaces = file.get_bool("tokenizer.ggml.remove_extra_whitespaces").value_or(false);
  return vocabulary;
}

std::string build_sentencepiece_proto(const GgufFile& file) {
  return serialize_sentencepiece_model(read_gguf_vocabulary(file), file.path());
}

}  // namespace kiln
