// Tensors of a checkpoint as the files hold them, under canonical names, whatever the file format.
//
// Canonical names (Hugging Face's text-model names without prefixes):
//   embed_tokens.weight, norm.weight,
//   layers.N.{input_layernorm,post_attention_layernorm,pre_feedforward_layernorm,post_feedforward_layernorm}.weight,
//   layers.N.self_attn.{q_proj,k_proj,v_proj,o_proj,q_norm,k_norm}.weight,
//   layers.N.mlp.{gate_proj,up_proj,down_proj}.weight
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "quant/dtype.h"

namespace kiln {

struct TensorView {
  std::string name;            // canonical name
  std::string file;            // the file it lives in, for error messages
  DType dtype = DType::F32;
  std::vector<int64_t> shape;  // outermost first, as the file states it: [rows, cols] for a weight
  const uint8_t* data = nullptr;  // points into a memory-mapped file
  size_t bytes = 0;
};

class TensorSource {
 public:
  virtual ~TensorSource() = default;
  // nullptr when absent.
  virtual const TensorView* find(const std::string& canonical_name) const = 0;
  virtual std::vector<std::string> names() const = 0;
  // GGUF files from llama.cpp store RMSNorm weights as (1 + w); Hugging Face stores w.
  virtual bool norms_include_one() const { return false; }
  // The loader calls this once it holds its own copy of [offset, offset + bytes) of a tensor, so the
  // file's pages stop counting in resident memory (a model is not held twice while it loads).
  // The view stays readable. Sources whose bytes are not a file mapping do nothing.
  virtual void release(const TensorView& /*tensor*/, size_t /*offset*/, size_t /*bytes*/) const {}
};

}  // namespace kiln
