#include "model/presets.h"

namespace kiln {
namespace {

struct Preset {
  const char* name;
  int layers, hidden, heads, kv_heads, head_dim, ffn, window, vocab;
  float query_pre_attn_scalar, rope_scaling;
  int max_context;
};

// From the released checkpoints' configs (see docs on Gemma 3 in the shared notes).
constexpr Preset kPresets[] = {
    {"gemma3-270m", 18, 640, 4, 1, 256, 2048, 512, 262144, 256, 1.0f, 32768},
    {"gemma3-1b", 26, 1152, 4, 1, 256, 6912, 512, 262144, 256, 1.0f, 32768},
    {"gemma3-4b", 34, 2560, 8, 4, 256, 10240, 1024, 262208, 256, 8.0f, 131072},
    {"gemma3-12b", 48, 3840, 16, 8, 256, 15360, 1024, 262208, 256, 8.0f, 131072},
    {"gemma3-27b", 62, 5376, 32, 16, 128, 21504, 1024, 262208, 168, 8.0f, 131072},
};

}  // namespace

std::optional<Gemma3Config> preset_config(const std::string& name) {
  for (const Preset& p : kPresets) {
    if (name != p.name) continue;
    Gemma3Config c;
    c.num_layers = p.layers;
    c.hidden_size = p.hidden;
    c.num_heads = p.heads;
    c.num_kv_heads = p.kv_heads;
    c.head_dim = p.head_dim;
    c.intermediate_size = p.ffn;
    c.sliding_window = p.window;
    c.vocab_size = p.vocab;
    c.query_pre_attn_scalar = p.query_pre_attn_scalar;
    c.rope_scaling_factor = p.rope_scaling;
    c.max_position_embeddings = p.max_context;
    c.layer_is_global.clear();
    finalize_config(c, name);
    return c;
  }
  return std::nullopt;
}

std::vector<std::string> preset_names() {
  std::vector<std::string> names;
  for (const Preset& p : kPresets) names.push_back(p.name);
  return names;
}

}  // namespace kiln
