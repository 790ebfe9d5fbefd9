// One place for every config.json key Kiln has an answer for. A new transformers release that
// adds a key cannot change results silently: the key is either listed here or reported as a note.
#include "model/config_keys.h"

#include <algorithm>
#include <filesystem>
#include <string_view>

#include "kiln/types.h"

namespace kiln {
namespace {

using nlohmann::json;

// Read by parse_gemma3_config (config.cpp), which checks their values.
constexpr std::string_view kReadKeys[] = {
    "vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
    "num_key_value_heads", "head_dim", "sliding_window", "sliding_window_pattern", "_sliding_window_pattern",
    "max_position_embeddings", "query_pre_attn_scalar", "rms_norm_eps", "rope_theta", "rope_local_base_freq",
    "rope_scaling", "rope_parameters", "layer_types", "hidden_activation", "bos_token_id", "eos_token_id",
    "pad_token_id", "dtype", "torch_dtype", "model_type", "architectures", "text_config",
};

// Present in real configs and without effect on inference: training-only settings, bookkeeping,
// and the vision tower's settings (Kiln runs the text model).
constexpr std::string_view kHarmlessKeys[] = {
    "transformers_version", "_name_or_path", "initializer_range", "attention_dropout", "use_cache",
    "cache_implementation", "output_attentions", "output_hidden_states", "return_dict", "vision_config",
    "boi_token_index", "eoi_token_index", "image_token_index", "mm_tokens_per_image", "processor_class",
    "id2label", "label2id", "torchscript", "tokenizer_class", "chunk_size_feed_forward", "is_encoder_decoder",
};

// Keys whose every value but Gemma 3's would make Kiln compute another model.
struct Guarded {
  std::string_view key;
  bool (*harmless)(const json& value);
  std::string_view why;  // what Kiln would get wrong
};

bool is_null_or(const json& value, bool flag) { return value.is_null() || (value.is_boolean() && value.get<bool>() == flag); }
bool is_null(const json& value) { return value.is_null(); }

constexpr Guarded kGuardedKeys[] = {
    {"attn_logit_softcapping", is_null, "soft-caps attention scores, which Gemma 3 does not and Kiln will not"},
    {"final_logit_softcapping", is_null, "soft-caps the logits, which Gemma 3 does not and Kiln will not"},
    {"use_bidirectional_attention", [](const json& v) { return is_null_or(v, false); },
     "makes attention bidirectional (an embedding model), which Kiln does not compute"},
    {"attention_bias", [](const json& v) { return is_null_or(v, false); }, "adds biases Kiln does not load"},
    {"tie_word_embeddings", [](const json& v) { return is_null_or(v, true); },
     "unties the output projection; Kiln computes the logits with the token embedding"},
    {"partial_rotary_factor", [](const json& v) { return v.is_null() || (v.is_number() && v.get<double>() == 1.0); },
     "rotates only part of each head, which Kiln does not compute"},
    {"hidden_act", [](const json& v) { return v.is_null() || v == "gelu_pytorch_tanh" || v == "gelu_tanh"; },
     "names an activation other than Gemma 3's gelu_pytorch_tanh"},
    {"quantization_config", is_null, "stores the weights quantized in a form Kiln does not read (use the bf16 "
                                     "checkpoint or a GGUF file)"},
};

template <size_t N>
bool listed(const std::string_view (&keys)[N], std::string_view key) {
  return std::find(std::begin(keys), std::end(keys), key) != std::end(keys);
}

}  // namespace

void check_config_keys(const json& settings, const std::string& prefix, const std::string& file,
                       std::vector<std::string>& notes) {
  for (const auto& [key, value] : settings.items()) {
    if (listed(kReadKeys, key) || listed(kHarmlessKeys, key)) continue;
    auto guarded = std::find_if(std::begin(kGuardedKeys), std::end(kGuardedKeys),
                                [&key](const Guarded& g) { return g.key == key; });
    if (guarded != std::end(kGuardedKeys)) {
      if (!guarded->harmless(value))
        throw Error(file + ": " + prefix + key + " is " + value.dump() + ": it " + std::string(guarded->why));
      continue;
    }
    notes.push_back(std::filesystem::path(file).filename().string() + ": " + prefix + key +
                    " is not a setting Kiln knows; it was ignored");
  }
}

}  // namespace kiln
