// The metadata of a Gemma 3 GGUF file, written the way llama.cpp's convert_hf_to_gguf.py writes it
// (gguf-py's key names), so the file loads in llama.cpp and in Kiln (model/gguf_checkpoint.h reads
// these keys back).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/config.h"
#include "model/gguf_writer.h"
#include "tokenizer/sentencepiece_model.h"

namespace kiln {

// general.architecture and the gemma3.* hyper-parameters. What GGUF cannot say (an attention scale
// other than the one llama.cpp derives) becomes a line in `notes`.
void set_gemma3_metadata(GgufWriter& writer, const Gemma3Config& config, std::vector<std::string>& notes);

// tokenizer.ggml.*: model "llama" (SentencePiece), tokens / scores / token types (SentencePiece's
// type numbers are llama.cpp's), special ids from the config (BOS, first EOS, padding; a second
// EOS as the end-of-turn id), BOS added, no space prefix (Gemma's tokenizer adds none).
void set_sentencepiece_tokenizer(GgufWriter& writer, const SentencePieceVocabulary& vocabulary,
                                 const Gemma3Config& config);

// The chat template a Hugging Face folder carries: tokenizer_config.json's "chat_template",
// chat_template.jinja or chat_template.json; nullopt when it has none. Throws kiln::Error on a
// file that is there but not readable JSON.
std::optional<std::string> read_chat_template(const std::string& folder);

}  // namespace kiln
