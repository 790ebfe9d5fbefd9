// A Hugging Face tokenizer.json (the `tokenizers` library's format) read as a SentencePiece BPE
// vocabulary, for model folders that ship tokenizer.json and no tokenizer.model.
#pragma once

#include <cstdint>
#include <string>

#include "tokenizer/sentencepiece_model.h"

namespace kiln {

struct SpecialTokenIds {
  int32_t bos = -1, eos = -1, pad = -1;  // -1: none
};

// Reads model (BPE with byte fallback: vocab, merges), added_tokens (special -> control, others ->
// user-defined), the normalizer and pre-tokenizer Gemma's files use. Anything that would tokenize
// differently from transformers is a kiln::Error naming `path` and the key, never ignored.
SentencePieceVocabulary read_tokenizer_json(const std::string& json_text, const std::string& path,
                                            const SpecialTokenIds& ids);

}  // namespace kiln
