// Gemma 3 weights as the engine holds them after loading: matrices in the chosen precision,
// norm weights as float32 multipliers with the "1 +" already added.
#pragma once

#include <functional>
#include <stop_token>
#include <string>
#include <vector>

#include "model/config.h"
#include "model/quant_mix.h"
#include "model/tensor_source.h"
#include "quant/matrix.h"

namespace kiln {

struct LayerWeights {
  std::vector<float> input_norm;      // [hidden]    1 + w
  std::vector<float> post_attn_norm;  // [hidden]
  std::vector<float> pre_ffn_norm;    // [hidden]
  std::vector<float> post_ffn_norm;   // [hidden]
  std::vector<float> q_norm;          // [head_dim]
  std::vector<float> k_norm;          // [head_dim]
  Matrix wq;     // [heads * head_dim, hidden]
  Matrix wk;     // [kv_heads * head_dim, hidden]
  Matrix wv;     // [kv_heads * head_dim, hidden]
  Matrix wo;     // [hidden, heads * head_dim]
  Matrix w_gate; // [ffn, hidden]
  Matrix w_up;   // [ffn, hidden]
  Matrix w_down; // [hidden, ffn]
};

struct Gemma3Weights {
  Gemma3Config config;
  Matrix embed;                   // [vocab, hidden], also the output projection (tied)
  std::vector<float> final_norm;  // [hidden]
  std::vector<LayerWeights> layers;
  std::vector<std::string> notes; // what loading decided, e.g. tensors kept in F16

  uint64_t bytes() const;         // bytes of all weights held
};

// The tied embedding is also the output projection, the tensor most sensitive to rounding: with
// Q4_0 it is held in Q8_0, as llama.cpp's Q4_0 files hold it.
DType embedding_type_for(DType precision);

// Converts every tensor of `source` to `precision` (DType F32, F16, Q8_0 or Q4_0), checking each
// shape against the config. Threads quantize in parallel; progress(done, total) reports tensors.
// Throws kiln::Error naming the file and tensor on a missing tensor or a wrong shape.
Gemma3Weights load_weights(const Gemma3Config& config, const TensorSource& source, DType precision,
                           int threads, const std::function<void(int done, int total)>& progress,
                           std::stop_token cancel = {});

// Each matrix in the type `kiln quantize --type <mix>` gives it (model/quant_mix.h, fallbacks
// included), quantized by the same code: the weights equal those of the file it would write.
Gemma3Weights load_weights_with_mix(const Gemma3Config& config, const TensorSource& source, QuantMix mix,
                                    int threads, const std::function<void(int done, int total)>& progress,
                                    std::stop_token cancel = {});

// Keeps each matrix in the type its file stores it in (F32, F16, Q8_0, Q4_0, the K-quants Q2_K ...
// Q6_K, IQ4_XS and GGUF's other 32-weight formats Q4_1, Q5_0, Q5_1, IQ4_NL: the CPU and Vulkan run
// them all):
// a GGUF file runs at its own size. BF16 becomes F16; a note says so.
// The type a matrix stored as `stored` is held in by load_weights_as_stored.
DType held_type_for_stored(DType stored);
Gemma3Weights load_weights_as_stored(const Gemma3Config& config, const TensorSource& source, int threads,
                                     const std::function<void(int done, int total)>& progress,
                                     std::stop_token cancel = {});
// As load_weights_as_stored with the type of each matrix chosen by held_for(its stored type), e.g.
// the K-quants kept as stored for a backend with kernels for them (Vulkan: runtime/vulkan/kquant_layout.h).
Gemma3Weights load_weights_held_as(const Gemma3Config& config, const TensorSource& source,
                                   const std::function<DType(DType stored)>& held_for, int threads);

// Every tensor load_weights reads is there with the config's shape and the bytes that shape needs,
// without reading any weight: a wrong or mismatched file is refused before a working model is let
// go. Throws kiln::Error naming the file and tensor.
void check_weight_tensors(const Gemma3Config& config, const TensorSource& source);

// Random weights of the real shapes (for benchmarks of models whose weights are not here).
Gemma3Weights synthetic_weights(const Gemma3Config& config, DType precision, uint64_t seed, int threads);

// Bytes the weights would take in a precision, computed from the config alone.
uint64_t weight_bytes_for(const Gemma3Config& config, DType precision);

}  // namespace kiln
