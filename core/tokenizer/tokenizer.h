// SentencePiece tokenizer with Gemma's special tokens read from the model, never hard-coded.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kiln {

class Tokenizer {
 public:
  // Throws kiln::Error naming the file when it is missing or not a SentencePiece model.
  static Tokenizer from_file(const std::string& tokenizer_model_path);
  // From serialized ModelProto bytes (built from GGUF arrays). `origin` names the source in errors.
  static Tokenizer from_serialized_proto(const std::string& bytes, const std::string& origin);

  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;
  ~Tokenizer();

  // Plain text to ids; special-token text ("<start_of_turn>") is not interpreted. No BOS.
  std::vector<int32_t> encode(std::string_view text) const;
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

 private:
  struct Impl;
  explicit Tokenizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace kiln
