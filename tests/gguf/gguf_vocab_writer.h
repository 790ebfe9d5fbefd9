// Writes the tokenizer part of a GGUF file (v3, no tensors) the way llama.cpp's converter lays
// out a SentencePiece vocabulary, so tests can build the vocabularies real files carry.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::test {

struct GgufVocab {
  std::vector<std::string> tokens;
  std::vector<float> scores;
  std::vector<int32_t> types;  // llama.cpp's token types: 1 normal, 2 unknown, 3 control, 4 user-defined, 6 byte
  uint32_t unknown_id = 3, bos_id = 2, eos_id = 1, padding_id = 0;
};

inline std::string gguf_vocab_bytes(const GgufVocab& v) {
  std::string out;
  auto raw = [&out](const void* p, size_t n) { out.append(static_cast<const char*>(p), n); };
  auto u32 = [&](uint32_t x) { raw(&x, 4); };
  auto u64 = [&](uint64_t x) { raw(&x, 8); };
  auto str = [&](const std::string& s) {
    u64(s.size());
    out += s;
  };
  enum : uint32_t { kU32 = 4, kI32 = 5, kF32 = 6, kBool = 7, kString = 8, kArray = 9 };
  out += "GGUF";
  u32(3);
  u64(0);  // tensors
  u64(9);  // key-value pairs
  str("tokenizer.ggml.model"), u32(kString), str("llama");
  str("tokenizer.ggml.tokens"), u32(kArray), u32(kString), u64(v.tokens.size());
  for (const auto& t : v.tokens) str(t);
  str("tokenizer.ggml.scores"), u32(kArray), u32(kF32), u64(v.scores.size());
  for (float s : v.scores) raw(&s, 4);
  str("tokenizer.ggml.token_type"), u32(kArray), u32(kI32), u64(v.types.size());
  for (int32_t t : v.types) raw(&t, 4);
  str("tokenizer.ggml.unknown_token_id"), u32(kU32), u32(v.unknown_id);
  str("tokenizer.ggml.bos_token_id"), u32(kU32), u32(v.bos_id);
  str("tokenizer.ggml.eos_token_id"), u32(kU32), u32(v.eos_id);
  str("tokenizer.ggml.padding_token_id"), u32(kU32), u32(v.padding_id);
  str("tokenizer.ggml.add_space_prefix"), u32(kBool), out.push_back(0);
  out.resize((out.size() + 31) / 32 * 32, '\0');  // the data section starts aligned
  return out;
}

}  // namespace kiln::test
