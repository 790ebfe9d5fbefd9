// Gemma 3 GGUF -> Checkpoint: key-to-config mapping, tensor renaming, tokenizer.
#include "model/gguf_checkpoint.h"

#include <algorithm>
#include <cctype>
#include <memory>
#include <cmath>
#include <map>
#include <optional>

#include "kiln/types.h"
#include "model/gguf_tokenizer.h"
#include "model/weights.h"

namespace kiln {
namespace {

// Upper bounds that no real model reaches; a value past them is corruption, refused before
// anything is sized by it.
constexpr uint64_t kMaxLayers = 1024;
constexpr uint64_t kMaxDimension = 1u << 20;

class ConfigReader {
 public:
  ConfigReader(const GgufFile& file, std::string arch) : file_(file), prefix_(std::move(arch) + ".") {}

  std::optional<int> integer(const std::string& name, uint64_t max) const {
    std::string key = prefix_ + name;
    auto v = file_.get_uint(key);
    if (!v) return std::nullopt;
    if (*v == 0 || *v > max)
      throw Error(file_.path() + ": " + key + " = " + std::to_string(*v) + " is out of range (1.." + std::to_string(max) + ")");
    return static_cast<int>(*v);
  }
  int required(const std::string& name, uint64_t max) const {
    auto v = integer(name, max);
    if (!v) throw Error(file_.path() + ": key " + prefix_ + name + " is missing");
    return *v;
  }
  std::optional<float> real(const std::string& name) const {
    std::string key = prefix_ + name;
    auto v = file_.get_float(key);
    if (!v) return std::nullopt;
    if (!std::isfinite(*v)) throw Error(file_.path() + ": " + key + " is not a finite number");
    return static_cast<float>(*v);
  }
  std::optional<std::string_view> text(const std::string& name) const { return file_.get_string(prefix_ + name); }
  const std::string& prefix() const { return prefix_; }

 private:
  const GgufFile& file_;
  std::string prefix_;
};

std::optional<int64_t> token_id(const GgufFile& file, const std::vector<std::string_view>& tokens, const char* key,
                                std::initializer_list<std::string_view> pieces) {
  if (auto id = file.get_uint(key)) {
    if (!tokens.empty() && *id >= tokens.size())
      throw Error(file.path() + ": " + key + " " + std::to_string(*id) + " is not a token of the vocabulary");
    return static_cast<int64_t>(*id);
  }
  for (std::string_view piece : pieces) {
    auto it = std::find(tokens.begin(), tokens.end(), piece);
    if (it != tokens.end()) return it - tokens.begin();
  }
  return std::nullopt;
}

// GGUF name suffix (after "blk.N.") -> canonical suffix (after "layers.N.").
const std::map<std::string, std::string, std::less<>>& layer_names() {
  static const std::map<std::string, std::string, std::less<>> names = {
      {"attn_norm.weight", "input_layernorm.weight"},
      {"post_attention_norm.weight", "post_attention_layernorm.weight"},
      {"ffn_norm.weight", "pre_feedforward_layernorm.weight"},
      {"post_ffw_norm.weight", "post_feedforward_layernorm.weight"},
      {"attn_q.weight", "self_attn.q_proj.weight"},
      {"attn_k.weight", "self_attn.k_proj.weight"},
      {"attn_v.weight", "self_attn.v_proj.weight"},
      {"attn_output.weight", "self_attn.o_proj.weight"},
      {"attn_q_norm.weight", "self_attn.q_norm.weight"},
      {"attn_k_norm.weight", "self_attn.k_norm.weight"},
      {"ffn_gate.weight", "mlp.gate_proj.weight"},
      {"ffn_up.weight", "mlp.up_proj.weight"},
      {"ffn_down.weight", "mlp.down_proj.weight"},
  };
  return names;
}

// Canonical name of a GGUF tensor, or "" for tensors Kiln does not use (vision, rope tables).
std::string canonical_name(const GgufFile& file, const std::string& name, int layers) {
  if (name == "token_embd.weight") return "embed_tokens.weight";
  if (name == "output_norm.weight") return "norm.weight";
  if (name == "output.weight") return "lm_head.weight";  // Gemma ties it; present only in odd files
  if (name.rfind("blk.", 0) != 0) return "";
  size_t dot = name.find('.', 4);
  if (dot == std::string::npos || dot == 4) return "";
  std::string index = name.substr(4, dot - 4);
  if (!std::all_of(index.begin(), index.end(), [](unsigned char c) { return std::isdigit(c); }) || index.size() > 6)
    return "";
  int layer = std::stoi(index);
  auto it = layer_names().find(std::string_view(name).substr(dot + 1));
  if (it == layer_names().end()) return "";
  if (layer >= layers)
    throw Error(file.path() + ": tensor '" + name + "' belongs to layer " + index + " but the model has " +
                std::to_string(layers) + " layers");
  return "layers." + std::to_string(layer) + "." + it->second;
}

std::optional<DType> dtype_of(uint32_t ggml_type) {
  switch (static_cast<GgmlType>(ggml_type)) {
    case GgmlType::F32: return DType::F32;
    case GgmlType::F16: return DType::F16;
    case GgmlType::BF16: return DType::BF16;
    case GgmlType::Q8_0: return DType::Q8_0;
    case GgmlType::Q4_0: return DType::Q4_0;
    case GgmlType::Q2_K: return DType::Q2_K;
    case GgmlType::Q3_K: return DType::Q3_K;
    case GgmlType::Q4_K: return DType::Q4_K;
    case GgmlType::Q5_K: return DType::Q5_K;
    case GgmlType::Q6_K: return DType::Q6_K;
    case GgmlType::Q4_1: return DType::Q4_1;
    case GgmlType::Q5_0: return DType::Q5_0;
    case GgmlType::Q5_1: return DType::Q5_1;
    case GgmlType::IQ4_NL: return DType::IQ4_NL;
    case GgmlType::IQ4_XS: return DType::IQ4_XS;
    default: return std::nullopt;
  }
}

class GgufTensorSource final : public TensorSource {
 public:
  GgufTensorSource(std::shared_ptr<const GgufFile> file, int layers) : file_(std::move(file)) {
    for (const GgufTensorInfo& info : file_->tensors()) {
      std::string name = canonical_name(*file_, info.name, layers);
      if (name.empty()) continue;
      auto dtype = dtype_of(info.type);
      if (!dtype) {
        const char* type = ggml_type_name(info.type);
        throw Error(file_->path() + ": tensor '" + info.name + "' is stored as " + (type ? type : "?") +
                    ", which Kiln cannot load (it reads F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, IQ4_XS and Q2_K to Q6_K)");
      }
      TensorView view;
      view.name = name;
      view.file = file_->path();
      view.dtype = *dtype;
      // GGUF lists the innermost dimension first; drop outer dimensions of 1, then reverse to
      // [rows, cols] as safetensors states it.
      std::vector<uint64_t> dims = info.dims;
      while (dims.size() > 1 && dims.back() == 1) dims.pop_back();
      for (auto d = dims.rbegin(); d != dims.rend(); ++d) view.shape.push_back(static_cast<int64_t>(*d));
      view.data = info.data;
      view.bytes = info.bytes;
      views_.emplace(name, std::move(view));
    }
  }

  const TensorView* find(const std::string& canonical) const override {
    auto it = views_.find(canonical);
    return it == views_.end() ? nullptr : &it->second;
  }
  std::vector<std::string> names() const override {
    std::vector<std::string> out;
    for (const auto& [name, view] : views_) out.push_back(name);
    return out;
  }
  // llama.cpp's converter stores Gemma's RMSNorm weights as 1 + w.
  bool norms_include_one() const override { return true; }
  void release(const TensorView& t, size_t offset, size_t bytes) const override {
    file_->release(t.data + offset, std::min(bytes, t.bytes - std::min(offset, t.bytes)));
  }

 private:
  std::shared_ptr<const GgufFile> file_;  // keeps the mapping alive as long as the views
  std::map<std::string, TensorView> views_;
};

}  // namespace

std::optional<DType> ggml_dtype(uint32_t ggml_type) { return dtype_of(ggml_type); }

std::string gguf_tensor_name(const std::string& canonical) {
  if (canonical == "embed_tokens.weight") return "token_embd.weight";
  if (canonical == "norm.weight") return "output_norm.weight";
  if (canonical == "lm_head.weight") return "output.weight";
  if (canonical.rfind("layers.", 0) != 0) return "";
  const size_t dot = canonical.find('.', 7);
  if (dot == std::string::npos) return "";
  const std::string_view suffix = std::string_view(canonical).substr(dot + 1);
  for (const auto& [gguf, hub] : layer_names())
    if (hub == suffix) return "blk." + canonical.substr(7, dot - 7) + "." + gguf;
  return "";
}

Gemma3Config gemma3_config_from_gguf(const GgufFile& file) {
  const std::string& path = file.path();
  auto arch = file.get_string("general.architecture");
  if (!arch) throw Error(path + ": general.architecture is missing");
  if (*arch != "gemma3")
    throw Error(path + ": architecture '" + std::string(*arch) + "' is not Gemma 3 (Kiln runs gemma3 models)");
  ConfigReader keys(file, std::string(*arch));

  Gemma3Config c;
  c.num_layers = keys.required("block_count", kMaxLayers);
  c.hidden_size = keys.required("embedding_length", kMaxDimension);
  c.intermediate_size = keys.required("feed_forward_length", kMaxDimension * 4);
  c.num_heads = keys.required("attention.head_count", 4096);
  c.num_kv_heads = keys.integer("attention.head_count_kv", 4096).value_or(c.num_heads);
  c.head_dim = keys.integer("attention.key_length", 65536).value_or(c.hidden_size / c.num_heads);
  if (auto v = keys.integer("attention.value_length", 65536); v && *v != c.head_dim)
    throw Error(path + ": key and value head sizes differ (" + std::to_string(c.head_dim) + " and " +
                std::to_string(*v) + "), which Gemma 3 never does");
  c.sliding_window = keys.required("attention.sliding_window", 1u << 24);
  c.max_position_embeddings = keys.integer("context_length", 1u << 24).value_or(c.max_position_embeddings);
  c.rms_norm_eps = keys.real("attention.layer_norm_rms_epsilon").value_or(1e-6f);
  c.rope_theta = keys.real("rope.freq_base").value_or(1000000.0f);
  c.rope_local_base_freq = keys.real("rope.freq_base_swa").value_or(10000.0f);
  c.final_logit_softcapping = keys.real("final_logit_softcapping").value_or(0.0f);
  c.attn_logit_softcapping = keys.real("attn_logit_softcapping").value_or(0.0f);

  // RoPE scaling of the global layers: only linear exists in Gemma 3.
  std::optional<float> factor = keys.real("rope.scaling.factor");
  if (!factor) factor = keys.real("rope.scale_linear");
  std::string scaling(keys.text("rope.scaling.type").value_or(factor ? "linear" : "none"));
  if (scaling == "linear") {
    c.rope_scaling_factor = factor.value_or(1.0f);
    if (c.rope_scaling_factor <= 0) throw Error(path + ": rope scaling factor must be positive");
  } else if (scaling != "none") {
    throw Error(path + ": RoPE scaling '" + scaling + "' is not supported (Gemma 3 uses linear)");
  }

  // Not stored in GGUF: llama.cpp scales scores by 1/sqrt(hidden/heads) (integer division) for
  // the 62-layer 27B model and by 1/sqrt(head_dim) otherwise. Expressed as query_pre_attn_scalar.
  c.query_pre_attn_scalar = c.num_layers == 62 ? static_cast<float>(c.hidden_size / c.num_heads)
                                               : static_cast<float>(c.head_dim);

  // llama.cpp fixes gemma3's pattern at 5 local : 1 global; newer files may spell it out per layer.
  c.sliding_window_pattern = 6;
  if (const GgufValue* swa = file.find(keys.prefix() + "attention.sliding_window_pattern")) {
    if (swa->type == GgufType::Array) {
      auto flags = file.get_int_array(keys.prefix() + "attention.sliding_window_pattern");
      if (flags->size() != static_cast<size_t>(c.num_layers))
        throw Error(path + ": attention.sliding_window_pattern has " + std::to_string(flags->size()) +
                    " entries for " + std::to_string(c.num_layers) + " layers");
      for (int64_t is_local : *flags) c.layer_is_global.push_back(is_local == 0);
    } else {
      c.sliding_window_pattern = keys.required("attention.sliding_window_pattern", kMaxLayers);
    }
  }

  // Vocabulary size is the embedding's row count (GGUF: dims[1]).
  std::vector<std::string_view> tokens = file.get_string_array("tokenizer.ggml.tokens").value_or(std::vector<std::string_view>{});
  if (const GgufTensorInfo* embed = file.find_tensor("token_embd.weight"); embed && embed->dims.size() >= 2)
    c.vocab_size = static_cast<int>(std::min<uint64_t>(embed->dims[1], 1u << 30));
  else if (!tokens.empty())
    c.vocab_size = static_cast<int>(tokens.size());
  else
    throw Error(path + ": neither token_embd.weight nor tokenizer.ggml.tokens tells the vocabulary size");

  c.bos_token_id = static_cast<int>(token_id(file, tokens, "tokenizer.ggml.bos_token_id", {"<bos>", "<s>"}).value_or(2));
  c.pad_token_id = static_cast<int>(token_id(file, tokens, "tokenizer.ggml.padding_token_id", {"<pad>"}).value_or(0));
  // Gemma's generation ends at EOS or at <end_of_turn>; its config.json lists both.
  c.eos_token_ids.clear();
  c.eos_token_ids.push_back(static_cast<int>(token_id(file, tokens, "tokenizer.ggml.eos_token_id", {"<eos>", "</s>"}).value_or(1)));
  if (auto eot = token_id(file, tokens, "tokenizer.ggml.eot_token_id", {"<end_of_turn>"}); eot && *eot != c.eos_token_ids[0])
    c.eos_token_ids.push_back(static_cast<int>(*eot));
  c.nested_layout = false;
  finalize_config(c, path);

  // Where each setting came from (kiln info); what is not stored follows llama.cpp's gemma3 rules.
  const std::pair<const char*, const char*> stored[] = {
      {"num_layers", "block_count"}, {"hidden_size", "embedding_length"}, {"intermediate_size", "feed_forward_length"},
      {"num_heads", "attention.head_count"}, {"num_kv_heads", "attention.head_count_kv"},
      {"head_dim", "attention.key_length"}, {"sliding_window", "attention.sliding_window"},
      {"max_position_embeddings", "context_length"}, {"rms_norm_eps", "attention.layer_norm_rms_epsilon"},
      {"rope_theta", "rope.freq_base"}, {"rope_local_base_freq", "rope.freq_base_swa"},
      {"rope_scaling_factor", "rope.scaling.factor"}, {"layer_types", "attention.sliding_window_pattern"}};
  for (const auto& [setting, key] : stored)
    if (file.find(keys.prefix() + key)) c.origins[setting] = "GGUF: " + keys.prefix() + key;
  c.origins["query_pre_attn_scalar"] = "llama.cpp's rule for gemma3 (GGUF does not store it)";
  c.origins["vocab_size"] = "GGUF: token_embd.weight rows";
  c.origins["eos_token_ids"] = "GGUF: tokenizer.ggml.eos_token_id and eot_token_id";
  c.origins["bos_token_id"] = "GGUF: tokenizer.ggml.bos_token_id";
  return c;
}

Checkpoint open_gguf_checkpoint(const std::string& path, bool header_only) {
  std::shared_ptr<const GgufFile> file = GgufFile::open(path);
  Checkpoint c;
  c.path = path;
  c.format = "gguf";
  c.config = gemma3_config_from_gguf(*file);
  c.tokenizer_proto = build_sentencepiece_proto(*file);
  for (const GgufTensorInfo& t : file->tensors()) {
    if (auto stored = dtype_of(t.type); stored && !t.dims.empty()) {
      uint64_t rows = 1;
      for (size_t d = 1; d < t.dims.size(); ++d) rows *= t.dims[d];
      const DType held = rows > 1 ? held_type_for_stored(*stored) : DType::F32;  // vectors: norms, in F32
      c.bytes_as_stored += rows * row_bytes(held, int64_t(t.dims[0]));
    }
    const char* name = ggml_type_name(t.type);
    const std::string type = name ? name : "type " + std::to_string(t.type);
    auto it = std::find_if(c.stored_types.begin(), c.stored_types.end(), [&](const auto& p) { return p.first == type; });
    if (it == c.stored_types.end())
      c.stored_types.push_back({type, 1});
    else
      ++it->second;
  }
  if (!header_only) c.tensors = std::make_unique<GgufTensorSource>(file, c.config.num_layers);
  return c;
}

}  // namespace kiln
