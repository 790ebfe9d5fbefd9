// A SentencePiece BPE vocabulary as plain data, and the ModelProto bytes SentencePiece loads.
//
// Vocabularies that do not come as tokenizer.model (a GGUF file's tokenizer.ggml.* arrays, a
// Hugging Face tokenizer.json) are first read into SentencePieceVocabulary by their own reader,
// which applies that format's meaning, and then serialized here. We write the protobuf wire format
// ourselves (a handful of varint / length-delimited fields) because linking libprotobuf next to
// libsentencepiece's embedded copy crashes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kiln {

constexpr std::string_view kSpaceMarker = "\xE2\x96\x81";  // U+2581 "▁": how SentencePiece writes a space

// `text` with each space written as kSpaceMarker (added tokens that formats store with spaces).
std::string escape_spaces(std::string_view text);

// sentencepiece::ModelProto::SentencePiece::Type, same numbers.
enum class PieceType : int { Normal = 1, Unknown = 2, Control = 3, UserDefined = 4, Unused = 5, Byte = 6 };

struct VocabularyPiece {
  std::string text;  // spaces already written as "▁" (U+2581), bytes as "<0xAB>"
  float score = 0;   // BPE: higher merges first
  PieceType type = PieceType::Normal;
};

struct SentencePieceVocabulary {
  std::vector<VocabularyPiece> pieces;  // index = token id
  int32_t unk_id = -1;                  // required; its piece must be of type Unknown
  int32_t bos_id = -1, eos_id = -1, pad_id = -1;  // -1: none
  bool add_dummy_prefix = false;        // Gemma: no
  bool remove_extra_whitespaces = false;
};

// Serialized ModelProto: BPE, byte fallback when any piece is a byte, identity normalization,
// spaces escaped to "▁", digits split (Gemma's trainer settings). A piece text that repeats an
// earlier one keeps its id as an unused placeholder (SentencePiece refuses duplicates), so every
// other id stays where it is. Throws kiln::Error, naming `origin`, on an empty piece or a bad id.
std::string serialize_sentencepiece_model(const SentencePieceVocabulary& vocabulary, const std::string& origin);

// The type of every piece of serialized ModelProto bytes, in id order (SentencePiece's processor
// answers IsControl / IsUnknown / IsByte / IsUnused but not "user-defined"). Pieces without a type
// field are Normal. Reads only what the processor already accepted; stops at a malformed field.
std::vector<PieceType> sentencepiece_piece_types(std::string_view proto);

}  // namespace kiln
