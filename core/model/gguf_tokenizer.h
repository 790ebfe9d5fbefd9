// A SentencePiece model rebuilt from a GGUF file's tokenizer.ggml.* arrays.
//
// GGUF carries the vocabulary as three parallel arrays (pieces, scores, token types) instead of
// the protobuf. We serialize a ModelProto ourselves (a handful of varint / length-delimited fields)
// because linking libprotobuf next to libsentencepiece's embedded copy crashes.
#pragma once

#include <string>

#include "model/gguf_file.h"

namespace kiln {

// Serialized sentencepiece::ModelProto bytes: BPE, byte fallback, identity normalization, the
// dummy prefix as tokenizer.ggml.add_space_prefix says. Throws kiln::Error naming the file when the
// arrays are missing, of different lengths, or the tokenizer is not SentencePiece ("llama").
std::string build_sentencepiece_proto(const GgufFile& file);

}  // namespace kiln
