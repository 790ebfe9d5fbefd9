// Gemma 3 config and SentencePiece vocabulary -> GGUF keys, as llama.cpp's converter names them.
#include "model/gguf_model_metadata.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "kiln/types.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

std::optional<std::string> read_small_file(const fs::path& path) {
  std::error_code error;
  if (!fs::is_regular_file(path, error)) return std::nullopt;
  if (fs::file_size(path, error) > (64u << 20)) throw Error(path.string() + ": too large for a chat template");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path.string() + ": cannot open");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::optional<std::string> template_in_json(const fs::path& path) {
  auto text = read_small_file(path);
  if (!text) return std::nullopt;
  const auto json = nlohmann::json::parse(*text, nullptr, false);
  if (json.is_discarded()) throw Error(path.string() + ": not valid JSON");
  auto it = json.find("chat_template");
  if (it == json.end() || !it->is_string()) return std::nullopt;  // absent, or a list of named templates
  return it->get<std::string>();
}

}  // namespace

void set_gemma3_metadata(GgufWriter& w, const Gemma3Config& c, std::vector<std::string>& notes) {
  const std::string a = "gemma3.";
  w.set_string("general.architecture", "gemma3");
  w.set_u32(a + "context_length", static_cast<uint32_t>(c.max_position_embeddings));
  w.set_u32(a + "embedding_length", static_cast<uint32_t>(c.hidden_size));
  w.set_u32(a + "block_count", static_cast<uint32_t>(c.num_layers));
  w.set_u32(a + "feed_forward_length", static_cast<uint32_t>(c.intermediate_size));
  w.set_u32(a + "attention.head_count", static_cast<uint32_t>(c.num_heads));
  w.set_u32(a + "attention.head_count_kv", static_cast<uint32_t>(c.num_kv_heads));
  w.set_u32(a + "attention.key_length", static_cast<uint32_t>(c.head_dim));
  w.set_u32(a + "attention.value_length", static_cast<uint32_t>(c.head_dim));
  w.set_f32(a + "attention.layer_norm_rms_epsilon", c.rms_norm_eps);
  w.set_u32(a + "attention.sliding_window", static_cast<uint32_t>(c.sliding_window));
  w.set_f32(a + "rope.freq_base", c.rope_theta);
  w.set_f32(a + "rope.freq_base_swa", c.rope_local_base_freq);
  if (c.rope_scaling_factor != 1.0f) {
    w.set_string(a + "rope.scaling.type", "linear");
    w.set_f32(a + "rope.scaling.factor", c.rope_scaling_factor);
  }
  if (c.final_logit_softcapping != 0) w.set_f32(a + "final_logit_softcapping", c.final_logit_softcapping);

  // llama.cpp assumes 5 local layers to 1 global; spell the layers out only when they differ.
  bool default_pattern = true;
  std::vector<bool> is_local;
  for (int layer = 0; layer < c.num_layers; ++layer) {
    is_local.push_back(!c.layer_is_global[layer]);
    default_pattern = default_pattern && c.layer_is_global[layer] == ((layer + 1) % 6 == 0);
  }
  if (!default_pattern) w.set_bool_array(a + "attention.sliding_window_pattern", is_local);

  // GGUF stores no attention scale: readers use 1/sqrt(hidden/heads) for the 62-layer model and
  // 1/sqrt(head_dim) otherwise, which is query_pre_attn_scalar for every released Gemma 3.
  const float derived = c.num_layers == 62 ? static_cast<float>(c.hidden_size / c.num_heads)
                                           : static_cast<float>(c.head_dim);
  if (c.query_pre_attn_scalar != derived)
    notes.push_back("query_pre_attn_scalar " + std::to_string(c.query_pre_attn_scalar) +
                    " cannot be stored in GGUF: readers of the file will scale attention by 1/sqrt(" +
                    std::to_string(derived) + ") instead");
}

void set_sentencepiece_tokenizer(GgufWriter& w, const SentencePieceVocabulary& v, const Gemma3Config& c) {
  std::vector<std::string> tokens;
  std::vector<float> scores;
  std::vector<int32_t> types;
  tokens.reserve(v.pieces.size());
  scores.reserve(v.pieces.size());
  types.reserve(v.pieces.size());
  for (const VocabularyPiece& p : v.pieces) {
    tokens.push_back(p.text);
    scores.push_back(p.score);
    types.push_back(static_cast<int32_t>(p.type));
  }
  w.set_string("tokenizer.ggml.model", "llama");
  w.set_string("tokenizer.ggml.pre", "default");
  w.set_string_array("tokenizer.ggml.tokens", tokens);
  w.set_f32_array("tokenizer.ggml.scores", scores);
  w.set_i32_array("tokenizer.ggml.token_type", types);
  w.set_u32("tokenizer.ggml.bos_token_id", static_cast<uint32_t>(c.bos_token_id));
  w.set_u32("tokenizer.ggml.eos_token_id", static_cast<uint32_t>(c.eos_token_ids.at(0)));
  if (c.eos_token_ids.size() > 1) w.set_u32("tokenizer.ggml.eot_token_id", static_cast<uint32_t>(c.eos_token_ids[1]));
  if (v.unk_id >= 0) w.set_u32("tokenizer.ggml.unknown_token_id", static_cast<uint32_t>(v.unk_id));
  w.set_u32("tokenizer.ggml.padding_token_id", static_cast<uint32_t>(c.pad_token_id));
  w.set_bool("tokenizer.ggml.add_bos_token", true);
  w.set_bool("tokenizer.ggml.add_eos_token", false);
  w.set_bool("tokenizer.ggml.add_space_prefix", false);
}

std::optional<std::string> read_chat_template(const std::string& folder) {
  const fs::path dir(folder);
  if (auto t = template_in_json(dir / "tokenizer_config.json")) return t;
  if (auto t = read_small_file(dir / "chat_template.jinja")) return t;
  return template_in_json(dir / "chat_template.json");
}

}  // namespace kiln
