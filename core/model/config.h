// Gemma 3 text-model hyper-parameters, from config.json (flat or nested) or GGUF keys.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kiln {

struct Gemma3Config {
  int vocab_size = 262208;
  int hidden_size = 2304;
  int intermediate_size = 9216;
  int num_layers = 26;
  int num_heads = 8;
  int num_kv_heads = 4;
  int head_dim = 256;
  int sliding_window = 4096;
  int sliding_window_pattern = 6;       // every 6th layer is global
  int max_position_embeddings = 131072;
  float query_pre_attn_scalar = 256;    // scores are scaled by query_pre_attn_scalar^-0.5
  float rms_norm_eps = 1e-6f;
  float rope_theta = 1000000.0f;        // global layers
  float rope_local_base_freq = 10000.0f;  // local layers
  float rope_scaling_factor = 1.0f;     // linear scaling on global layers (position / factor)
  float final_logit_softcapping = 0;    // 0: none (Gemma 3 has none)
  float attn_logit_softcapping = 0;
  int bos_token_id = 2;
  int pad_token_id = 0;
  std::vector<int> eos_token_ids{1};
  std::vector<bool> layer_is_global;    // one per layer, from layer_types or the pattern
  bool nested_layout = false;           // multimodal checkpoint: weights under language_model.
  std::string dtype;                    // the checkpoint's stored type ("bfloat16"); informational

  // Where each setting came from, by the setting's name above: "config.json: text_config.rope_theta",
  // "GGUF: gemma3.rope.freq_base", "generation_config.json: eos_token_id". A setting not listed
  // kept its default (transformers' Gemma3TextConfig defaults).
  std::map<std::string, std::string> origins;
  std::vector<std::string> notes;       // keys Kiln does not know, one line each (not errors)

  bool is_global(int layer) const { return layer_is_global[layer]; }
  // Positions a layer's KV cache must hold for a context of ctx tokens.
  int kv_positions(int layer, int ctx) const {
    return is_global(layer) ? ctx : (sliding_window < ctx ? sliding_window : ctx);
  }
  uint64_t parameter_count() const;  // text model, tied embedding counted once
};

// Parses config.json text, in transformers 4.x's layout (rope_theta, rope_local_base_freq,
// rope_scaling) or 5's (rope_parameters per layer type). `file` names the file in error messages.
// Applies the library's defaults for missing keys; throws kiln::Error on a wrong type, an
// impossible value, an unknown architecture, or any setting that would change the forward pass in
// a way Kiln does not compute (another RoPE type, soft-capping, bidirectional attention, ...).
// Keys it does not know become notes.
Gemma3Config parse_gemma3_config(const std::string& json_text, const std::string& file);

// Fills layer_is_global from the pattern when it is empty, then checks every value is sane.
void finalize_config(Gemma3Config& config, const std::string& file);

}  // namespace kiln
