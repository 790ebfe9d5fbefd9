// config.json -> Gemma3Config. The released multimodal checkpoints leave most text settings out
// and rely on transformers' defaults, so a missing key keeps the struct's default (those defaults).
// Nothing that changes the math is ignored: a key Kiln reads has its value checked, a key known to
// be harmless is listed in config_keys.cpp, and any other key becomes a note.
#include "model/config.h"

#include <cmath>
#include <filesystem>
#include <limits>
#include <optional>
#include <nlohmann/json.hpp>
#include <string_view>

#include "kiln/types.h"
#include "model/config_keys.h"

namespace kiln {
namespace {

using nlohmann::json;

// One JSON object of settings, with the prefix its keys get in error messages ("text_config.").
class Settings {
 public:
  Settings(const json& object, std::string key_prefix, const std::string& file, Gemma3Config& config)
      : object_(object), key_prefix_(std::move(key_prefix)), file_(file), config_(config) {}

  const json& object() const { return object_; }
  const std::string& prefix() const { return key_prefix_; }
  const std::string& file() const { return file_; }

  // Records that `setting` came from `key` of this object.
  void note_origin(const std::string& setting, const std::string& key) const {
    config_.origins[setting] = std::filesystem::path(file_).filename().string() + ": " + key_prefix_ + key;
  }

  // nullptr when the key is missing or null: both mean "use the default".
  const json* find(const char* key) const {
    auto it = object_.find(key);
    if (it == object_.end() || it->is_null()) return nullptr;
    return &*it;
  }

  [[noreturn]] void fail(const std::string& key, const std::string& problem) const {
    throw Error(file_ + ": " + key_prefix_ + key + " " + problem);
  }

  // `setting` names the Gemma3Config field in origins; by default the key itself.
  void read_int(const char* key, int& out, const char* setting = nullptr) const {
    const json* value = find(key);
    if (value == nullptr) return;
    out = to_int(key, *value);
    note_origin(setting ? setting : key, key);
  }

  void read_float(const char* key, float& out, const char* setting = nullptr) const {
    const json* value = find(key);
    if (value == nullptr) return;
    out = to_float(key, *value);
    note_origin(setting ? setting : key, key);
  }

  float to_float(const std::string& key, const json& value) const {
    if (!value.is_number()) fail(key, std::string("must be a number, got ") + value.type_name());
    return value.get<float>();
  }

  // Accepts an int or a list of ints (eos_token_id is a list in the released configs).
  bool read_int_list(const char* key, std::vector<int>& out, const char* setting) const {
    const json* value = find(key);
    if (value == nullptr) return false;
    note_origin(setting, key);
    if (value->is_array()) {
      std::vector<int> ids;
      for (const json& item : *value) ids.push_back(to_int(key, item));
      out = std::move(ids);
    } else {
      out = {to_int(key, *value)};
    }
    return true;
  }

  int to_int(const char* key, const json& value) const {
    if (!value.is_number_integer()) {
      fail(key, std::string("must be an integer, got ") + value.type_name());
    }
    if (value.is_number_unsigned()) {
      if (value.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int>::max())) {
        fail(key, "is out of range (" + value.dump() + ")");
      }
      return static_cast<int>(value.get<uint64_t>());
    }
    const auto number = value.get<int64_t>();
    if (number < std::numeric_limits<int>::min() || number > std::numeric_limits<int>::max()) {
      fail(key, "is out of range (" + value.dump() + ")");
    }
    return static_cast<int>(number);
  }

 private:
  const json& object_;
  std::string key_prefix_;
  const std::string& file_;
  Gemma3Config& config_;
};

bool is_gemma3_architecture(const json& root) {
  auto architectures = root.find("architectures");
  if (architectures == root.end() || !architectures->is_array()) return false;
  for (const json& name : *architectures) {
    if (name.is_string() && name.get<std::string>().starts_with("Gemma3")) return true;
  }
  return false;
}

std::string architecture_name(const json& root) {
  auto model_type = root.find("model_type");
  if (model_type != root.end() && model_type->is_string()) return model_type->get<std::string>();
  auto architectures = root.find("architectures");
  if (architectures != root.end() && architectures->is_array() && !architectures->empty() &&
      architectures->front().is_string()) {
    return architectures->front().get<std::string>();
  }
  return "unknown";
}

// One RoPE description: {"rope_type": "default" | "linear", "factor": F, "rope_theta": T}.
// `key` is its place in the file for messages ("rope_scaling", "rope_parameters.full_attention").
// Linear scaling divides positions by `factor`; every other type computes a different model.
struct Rope {
  float factor = 1.0f;
  std::optional<float> theta;
};
Rope read_rope(const Settings& settings, const std::string& key, const json& rope, bool legacy) {
  if (!rope.is_object()) settings.fail(key, std::string("must be an object, got ") + rope.type_name());
  // transformers wrote "type" before 4.45 and "rope_type" since.
  auto type = rope.find("rope_type");
  if (type == rope.end() && legacy) type = rope.find("type");
  if (type == rope.end() || !type->is_string()) settings.fail(key, "has no rope_type string");
  const std::string kind = type->get<std::string>();
  if (kind != "default" && kind != "linear")
    settings.fail(key, "type '" + kind + "' is not supported (Kiln runs default and linear RoPE only)");
  Rope out;
  for (const auto& [name, value] : rope.items()) {
    if (name == "rope_type" || name == "type" || value.is_null()) continue;
    if (name == "rope_theta" && !legacy) {
      out.theta = settings.to_float(key + ".rope_theta", value);
    } else if (name == "factor" && kind == "linear") {
      out.factor = settings.to_float(key + ".factor", value);
    } else if (!(name == "factor" && value.is_number() && value.get<double>() == 1.0)) {
      settings.fail(key, "has '" + name + "', which " + kind + " RoPE does not take (Kiln would compute another model)");
    }
  }
  if (kind == "linear" && rope.find("factor") == rope.end()) settings.fail(key, "linear scaling needs a numeric factor");
  return out;
}

// transformers 4.x: rope_theta and rope_scaling (global layers), rope_local_base_freq (local layers).
void read_legacy_rope(const Settings& settings, Gemma3Config& config) {
  settings.read_float("rope_theta", config.rope_theta);
  settings.read_float("rope_local_base_freq", config.rope_local_base_freq);
  const json* scaling = settings.find("rope_scaling");
  if (scaling == nullptr) return;
  if (!scaling->is_object())
    settings.fail("rope_scaling", std::string("must be an object or null, got ") + scaling->type_name());
  config.rope_scaling_factor = read_rope(settings, "rope_scaling", *scaling, /*legacy=*/true).factor;
  settings.note_origin("rope_scaling_factor", "rope_scaling");
}

// transformers 5: rope_parameters, one entry per layer type. When it is present it decides; a
// 4.x key beside it must say the same, since we cannot know which one the file's author meant.
void read_rope_parameters(const Settings& settings, Gemma3Config& config) {
  const json* parameters = settings.find("rope_parameters");
  if (parameters == nullptr) return read_legacy_rope(settings, config);
  if (!parameters->is_object())
    settings.fail("rope_parameters", std::string("must be an object, got ") + parameters->type_name());
  for (const auto& [name, value] : parameters->items())
    if (name != "full_attention" && name != "sliding_attention")
      settings.fail("rope_parameters", "has '" + name + "'; Gemma 3 has one entry per layer type (full_attention, "
                                       "sliding_attention)");
  auto entry = [&](const char* type) -> Rope {
    auto it = parameters->find(type);
    if (it == parameters->end() || it->is_null()) settings.fail("rope_parameters", std::string("has no ") + type + " entry");
    const std::string key = std::string("rope_parameters.") + type;
    Rope rope = read_rope(settings, key, *it, /*legacy=*/false);
    if (rope.theta) settings.note_origin(type == std::string("full_attention") ? "rope_theta" : "rope_local_base_freq", key + ".rope_theta");
    return rope;
  };
  const Rope global = entry("full_attention");
  const Rope local = entry("sliding_attention");
  if (local.factor != 1.0f)
    settings.fail("rope_parameters.sliding_attention", "scales local layers' positions, which Gemma 3 never does");

  Gemma3Config legacy = config;  // what the 4.x keys alone would say, to compare
  read_legacy_rope(Settings(settings.object(), settings.prefix(), settings.file(), legacy), legacy);
  config.rope_theta = global.theta.value_or(legacy.rope_theta);
  config.rope_local_base_freq = local.theta.value_or(legacy.rope_local_base_freq);
  config.rope_scaling_factor = global.factor;
  if (!global.theta && legacy.origins.count("rope_theta")) config.origins["rope_theta"] = legacy.origins["rope_theta"];
  if (!local.theta && legacy.origins.count("rope_local_base_freq"))
    config.origins["rope_local_base_freq"] = legacy.origins["rope_local_base_freq"];
  config.origins["rope_scaling_factor"] = std::filesystem::path(settings.file()).filename().string() + ": " +
                                         settings.prefix() + "rope_parameters.full_attention";
  auto agree = [&](const char* key, float legacy_value, float value) {
    if (settings.find(key) != nullptr && legacy_value != value)
      settings.fail(key, "is " + std::to_string(legacy_value) + " but rope_parameters says " + std::to_string(value) +
                             " (the file holds two RoPE settings that disagree)");
  };
  agree("rope_theta", legacy.rope_theta, config.rope_theta);
  agree("rope_local_base_freq", legacy.rope_local_base_freq, config.rope_local_base_freq);
  agree("rope_scaling", legacy.rope_scaling_factor, config.rope_scaling_factor);
}

void read_layer_types(const Settings& settings, Gemma3Config& config) {
  const json* types = settings.find("layer_types");
  if (types == nullptr) return;
  if (!types->is_array()) {
    settings.fail("layer_types", std::string("must be a list, got ") + types->type_name());
  }
  if (types->size() != static_cast<size_t>(config.num_layers)) {
    settings.fail("layer_types", "has " + std::to_string(types->size()) + " entries for " +
                                     std::to_string(config.num_layers) + " layers");
  }
  std::vector<bool> is_global;
  for (const json& type : *types) {
    const std::string name = type.is_string() ? type.get<std::string>() : type.dump();
    if (name == "full_attention") {
      is_global.push_back(true);
    } else if (name == "sliding_attention") {
      is_global.push_back(false);
    } else {
      settings.fail("layer_types", "has unknown layer type '" + name + "'");
    }
  }
  config.layer_is_global = std::move(is_global);
  settings.note_origin("layer_types", "layer_types");
}

// transformers 5 writes "dtype", 4.x "torch_dtype": the type the weights were saved in.
void read_dtype(const Settings& settings, Gemma3Config& config) {
  for (const char* key : {"dtype", "torch_dtype"}) {
    const json* value = settings.find(key);
    if (value == nullptr) continue;
    if (!value->is_string()) settings.fail(key, std::string("must be a string, got ") + value->type_name());
    config.dtype = value->get<std::string>();
    settings.note_origin("dtype", key);
    return;
  }
}

void read_activation(const Settings& settings) {
  const json* activation = settings.find("hidden_activation");
  if (activation == nullptr) return;
  const std::string name = activation->is_string() ? activation->get<std::string>() : activation->dump();
  // Gemma 3's MLP is the tanh-approximated GELU; anything else would silently compute a different model.
  if (name != "gelu_pytorch_tanh" && name != "gelu_tanh") {
    settings.fail("hidden_activation", "'" + name + "' is not supported (Gemma 3 uses gelu_pytorch_tanh)");
  }
}

void check_range(const std::string& file, const std::string& key, int64_t value, int64_t low, int64_t high) {
  if (value < low) {
    throw Error(file + ": " + key + " must be at least " + std::to_string(low) + ", got " +
                std::to_string(value));
  }
  if (value > high) {
    throw Error(file + ": " + key + " is " + std::to_string(value) + ", beyond any Gemma 3 model (at most " +
                std::to_string(high) + ")");
  }
}

void check_positive_float(const std::string& file, const std::string& key, float value) {
  if (!std::isfinite(value) || value <= 0) {
    throw Error(file + ": " + key + " must be a positive number, got " + std::to_string(value));
  }
}

}  // namespace

Gemma3Config parse_gemma3_config(const std::string& json_text, const std::string& file) {
  json root;
  try {
    root = json::parse(json_text);
  } catch (const json::parse_error& error) {
    throw Error(file + ": not valid JSON (at byte " + std::to_string(error.byte) + ")");
  } catch (const json::exception& error) {  // a number past double range, say
    throw Error(file + ": not valid JSON (" + std::string(error.what()) + ")");
  }
  if (!root.is_object()) throw Error(file + ": not a JSON object");

  const std::string model_type = architecture_name(root);
  const bool known_type = model_type == "gemma3" || model_type == "gemma3_text";
  if (!known_type && !is_gemma3_architecture(root)) {
    throw Error(file + ": unsupported architecture '" + model_type + "' (Kiln runs Gemma 3)");
  }

  Gemma3Config config;
  const json empty_object = json::object();
  const json* text_settings = &root;
  auto text_config = root.find("text_config");
  const bool has_text_config = text_config != root.end() && !text_config->is_null();
  config.nested_layout = model_type == "gemma3" || (model_type != "gemma3_text" && has_text_config);
  if (config.nested_layout) {
    if (has_text_config && !text_config->is_object()) {
      throw Error(file + ": text_config must be an object, got " + std::string(text_config->type_name()));
    }
    text_settings = has_text_config ? &*text_config : &empty_object;
  }
  const Settings text(*text_settings, config.nested_layout ? "text_config." : "", file, config);
  check_config_keys(*text_settings, text.prefix(), file, config.notes);
  if (config.nested_layout) check_config_keys(root, "", file, config.notes);

  text.read_int("vocab_size", config.vocab_size);
  text.read_int("hidden_size", config.hidden_size);
  text.read_int("intermediate_size", config.intermediate_size);
  text.read_int("num_hidden_layers", config.num_layers, "num_layers");
  text.read_int("num_attention_heads", config.num_heads, "num_heads");
  text.read_int("num_key_value_heads", config.num_kv_heads, "num_kv_heads");
  text.read_int("head_dim", config.head_dim);
  text.read_int("sliding_window", config.sliding_window);
  text.read_int("_sliding_window_pattern", config.sliding_window_pattern, "sliding_window_pattern");  // newer
  text.read_int("sliding_window_pattern", config.sliding_window_pattern);
  text.read_int("max_position_embeddings", config.max_position_embeddings);
  text.read_float("query_pre_attn_scalar", config.query_pre_attn_scalar);
  text.read_float("rms_norm_eps", config.rms_norm_eps);
  read_rope_parameters(text, config);
  read_activation(text);
  read_dtype(text, config);
  if (config.nested_layout && config.dtype.empty()) read_dtype(Settings(root, "", file, config), config);

  // Token ids: the multimodal configs state them at the top level (eos [1, 106]) and leave
  // text_config's at the text model's defaults, so the top level wins there.
  auto read_token_ids = [&config](const Settings& settings) {
    settings.read_int("bos_token_id", config.bos_token_id);
    settings.read_int("pad_token_id", config.pad_token_id);
    settings.read_int_list("eos_token_id", config.eos_token_ids, "eos_token_ids");
  };
  read_token_ids(text);
  if (config.nested_layout) read_token_ids(Settings(root, "", file, config));

  if (config.num_layers > 0) read_layer_types(text, config);
  finalize_config(config, file);
  return config;
}

void finalize_config(Gemma3Config& config, const std::string& file) {
  const std::string prefix = config.nested_layout ? "text_config." : "";
  check_range(file, prefix + "vocab_size", config.vocab_size, 1, 1 << 22);
  check_range(file, prefix + "hidden_size", config.hidden_size, 1, 1 << 16);
  check_range(file, prefix + "intermediate_size", config.intermediate_size, 1, 1 << 20);
  check_range(file, prefix + "num_hidden_layers", config.num_layers, 1, 1024);
  check_range(file, prefix + "num_attention_heads", config.num_heads, 1, 1024);
  check_range(file, prefix + "num_key_value_heads", config.num_kv_heads, 1, 1024);
  check_range(file, prefix + "head_dim", config.head_dim, 1, 4096);
  check_range(file, prefix + "sliding_window", config.sliding_window, 1, 1 << 24);
  check_range(file, prefix + "sliding_window_pattern", config.sliding_window_pattern, 1, 1024);
  check_range(file, prefix + "max_position_embeddings", config.max_position_embeddings, 1, 1 << 24);
  if (config.num_heads % config.num_kv_heads != 0) {
    throw Error(file + ": " + prefix + "num_attention_heads (" + std::to_string(config.num_heads) +
                ") is not a multiple of num_key_value_heads (" + std::to_string(config.num_kv_heads) + ")");
  }
  check_positive_float(file, prefix + "query_pre_attn_scalar", config.query_pre_attn_scalar);
  check_positive_float(file, prefix + "rms_norm_eps", config.rms_norm_eps);
  check_positive_float(file, prefix + "rope_theta", config.rope_theta);
  check_positive_float(file, prefix + "rope_local_base_freq", config.rope_local_base_freq);
  check_positive_float(file, prefix + "rope_scaling.factor", config.rope_scaling_factor);
  for (auto [key, cap] : {std::pair{"final_logit_softcapping", config.final_logit_softcapping},
                          std::pair{"attn_logit_softcapping", config.attn_logit_softcapping}}) {
    if (!std::isfinite(cap) || cap < 0) {
      throw Error(file + ": " + prefix + key + " must be null or a positive number");
    }
  }
  auto check_token = [&](const char* key, int id) {
    if (id < 0 || id >= config.vocab_size) {
      throw Error(file + ": " + key + " " + std::to_string(id) + " is outside the vocabulary of " +
                  std::to_string(config.vocab_size));
    }
  };
  check_token("bos_token_id", config.bos_token_id);
  check_token("pad_token_id", config.pad_token_id);
  if (config.eos_token_ids.empty()) throw Error(file + ": eos_token_id is an empty list");
  for (int id : config.eos_token_ids) check_token("eos_token_id", id);

  if (config.layer_is_global.empty()) {
    // transformers' rule: every sliding_window_pattern-th layer (1-based) attends globally.
    if (auto it = config.origins.find("sliding_window_pattern"); it != config.origins.end())
      config.origins["layer_types"] = it->second;
    for (int layer = 0; layer < config.num_layers; ++layer) {
      config.layer_is_global.push_back((layer + 1) % config.sliding_window_pattern == 0);
    }
  }
  if (config.layer_is_global.size() != static_cast<size_t>(config.num_layers)) {
    throw Error(file + ": " + prefix + "layer_types has " + std::to_string(config.layer_is_global.size()) +
                " entries for " + std::to_string(config.num_layers) + " layers");
  }
}

uint64_t Gemma3Config::parameter_count() const {
  const uint64_t hidden = static_cast<uint64_t>(hidden_size);
  const uint64_t q_width = static_cast<uint64_t>(num_heads) * head_dim;
  const uint64_t kv_width = static_cast<uint64_t>(num_kv_heads) * head_dim;
  const uint64_t per_layer = hidden * q_width * 2            // q_proj, o_proj
                             + hidden * kv_width * 2         // k_proj, v_proj
                             + hidden * intermediate_size * 3  // gate, up, down
                             + hidden * 4                    // four RMSNorms
                             + static_cast<uint64_t>(head_dim) * 2;  // q_norm, k_norm
  const uint64_t embedding = static_cast<uint64_t>(vocab_size) * hidden;  // tied: counted once
  return embedding + per_layer * num_layers + hidden;  // + final norm
}

}  // namespace kiln
