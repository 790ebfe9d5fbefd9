// A Gemma 3 GGUF file (as llama.cpp's converter writes it) opened as a kiln::Checkpoint:
// config from the gemma3.* keys, tensors under canonical names, tokenizer as ModelProto bytes.
#pragma once

#include <optional>
#include <string>

#include "model/checkpoint.h"
#include "model/gguf_file.h"
#include "quant/dtype.h"

namespace kiln {

// Hyper-parameters from the gemma3.* and tokenizer.ggml.* keys. What GGUF does not store is
// derived as llama.cpp derives it: the 5 local : 1 global layer pattern, and the attention scale
// 1/sqrt(hidden/heads) for the 62-layer (27B) model, 1/sqrt(head_dim) for every other size.
Gemma3Config gemma3_config_from_gguf(const GgufFile& file);

// The GGUF (llama.cpp) name of a canonical tensor name ("layers.3.mlp.down_proj.weight" ->
// "blk.3.ffn_down.weight"); "" for a name GGUF's gemma3 layout does not have.
std::string gguf_tensor_name(const std::string& canonical);

// The DType holding a GGML storage type as stored; nullopt for a type Kiln cannot read.
std::optional<DType> ggml_dtype(uint32_t ggml_type);

// Maps the file; config, tokenizer_proto and, unless header_only (for `kiln info` and the app's
// model list), the tensors under canonical names (norms_include_one() is true). Throws kiln::Error.
Checkpoint open_gguf_checkpoint(const std::string& path, bool header_only = false);

}  // namespace kiln
