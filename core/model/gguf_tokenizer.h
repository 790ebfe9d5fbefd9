// The tokenizer of a GGUF file: its tokenizer.ggml.* arrays read as llama.cpp means them.
#pragma once

#include <string>

#include "model/gguf_file.h"
#include "tokenizer/sentencepiece_model.h"

namespace kiln {

// The vocabulary as llama.cpp's converter (convert_hf_to_gguf.py) wrote it, given back the meaning
// SentencePiece needs:
//  - the piece tokenizer.ggml.unknown_token_id names is the unknown piece, whatever its stored type
//    (the converter stores Gemma 3's "<unk>" as CONTROL, since tokenizer_config.json marks it special);
//  - USER_DEFINED pieces get their spaces back as "▁" (the converter writes Gemma's whitespace-run
//    pieces "▁▁", "▁▁▁", ... as "  ", "   ", which would never match);
//  - "<...>" NORMAL pieces with a score of +0.0 are user-defined turn markers of files converted
//    without tokenizer_config.json.
// Throws kiln::Error naming the file when the arrays are missing, of different lengths, name an
// unknown type, or the tokenizer is not SentencePiece ("llama").
SentencePieceVocabulary read_gguf_vocabulary(const GgufFile& file);

// serialize_sentencepiece_model(read_gguf_vocabulary(file)).
std::string build_sentencepiece_proto(const GgufFile& file);

}  // namespace kiln
