// SentencePiece tokenizer with Gemma's special tokens read from the model, never hard-coded.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/sentencepiece_model.h"
#include "tokenizer/tokenizer_json.h"

namespace kiln {

// What encode() does with the text of a special token ("<start_of_turn>", "<bos>") found in its input.
enum class SpecialText {
  Literal,  // kept as text: chat content, so a user cannot open or close a turn
  Parse,    // becomes the token: raw prompts, as llama.cpp, transformers and SentencePiece parse them
};

class Tokenizer {
 public:
  // Throws kiln::Error naming the file when it is missing or not a SentencePiece model.
  static Tokenizer from_file(const std::string& tokenizer_model_path);
  // From serialized ModelProto bytes (built from GGUF arrays). `origin` names the source in errors.
  static Tokenizer from_serialized_proto(const std::string& bytes, const std::string& origin);
  static Tokenizer from_vocabulary(const SentencePieceVocabulary& vocabulary, const std::string& origin);
  // A Hugging Face tokenizer.json (BPE with byte fallback). Its BOS/EOS/padding ids come from the
  // model's config.json, which is what the model was trained with.
  static Tokenizer from_tokenizer_json(const std::string& path, const SpecialTokenIds& ids);

  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;
  ~Tokenizer();

  // Text to ids, no BOS. Control pieces, the unknown piece and the turn markers are the special
  // tokens whose text `special` decides on; other user-defined pieces always match whole.
  std::vector<int32_t> encode(std::string_view text, SpecialText special = SpecialText::Literal) const;
  std::string decode(std::span<const int32_t> ids) const;
  // The bytes one id contributes to the text: "▁" becomes a space, <0xAB> becomes the byte 0xAB,
  // control tokens give "". Concatenating pieces of a sequence gives decode() of it.
  std::string piece_bytes(int32_t id) const;

  int vocab_size() const;
  int32_t bos_id() const;
  int32_t eos_id() const;
  int32_t pad_id() const;
  int32_t start_of_turn_id() const;  // -1 when the model has none
  int32_t end_of_turn_id() const;    // -1 when the model has none
  bool is_control(int32_t id) const;
  int32_t piece_to_id(std::string_view piece) const;  // -1 when unknown
  const std::string& origin() const;                  // the file (or source) it was loaded from
  // Every piece with its score and type, and the special ids, as the model holds them (for
  // writing the vocabulary into another format, e.g. a GGUF file's tokenizer.ggml.* arrays).
  SentencePieceVocabulary vocabulary() const;

 private:
  struct Impl;
  explicit Tokenizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace kiln
