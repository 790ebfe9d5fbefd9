// Opening a model: a Hugging Face folder (config.json + model.safetensors or a sharded index)
// or, later, a GGUF file. Every problem is a kiln::Error naming the file.
#pragma once

#include <memory>
#include <string>

#include "model/config.h"
#include "model/generation_config.h"
#include "model/tensor_source.h"
#include "tokenizer/tokenizer.h"

namespace kiln {

struct Checkpoint {
  std::string path;            // what the user gave
  std::string format;          // "safetensors" or "gguf"
  Gemma3Config config;          // eos_token_ids include generation_config.json's
  GenerationConfig generation;  // generation_config.json, when the folder has one
  std::unique_ptr<TensorSource> tensors;
  // tokenizer.model, or tokenizer.json when the folder has no tokenizer.model ("" for GGUF)
  std::string tokenizer_path;
  std::string tokenizer_proto;  // serialized SentencePiece ModelProto when embedded (GGUF)
  // GGUF: each storage type in the file ("Q4_K") and how many tensors hold it, in file order.
  std::vector<std::pair<std::string, int>> stored_types;
  uint64_t bytes_as_stored = 0;  // GGUF: the weights held as Precision::Auto holds them
};

// Reads config and tensor headers, maps the weight files (no copy). Throws kiln::Error.
Checkpoint open_checkpoint(const std::string& path);

// Only the config and tokenizer location: cheap, for `kiln info` and the app's model page.
Checkpoint open_checkpoint_header(const std::string& path);

// The checkpoint's tokenizer, whichever form it came in. Throws kiln::Error naming the file.
Tokenizer open_tokenizer(const Checkpoint& checkpoint);

}  // namespace kiln
