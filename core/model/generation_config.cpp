// generation_config.json -> GenerationConfig.
#include "model/generation_config.h"

#include <cstdio>
#include <nlohmann/json.hpp>

namespace kiln {

GenerationConfig parse_generation_config(const std::string& json_text, const std::string& file) {
  using nlohmann::json;
  json root;
  try {
    root = json::parse(json_text);
  } catch (const json::exception& error) {
    throw Error(file + ": not valid JSON (" + std::string(error.what()) + ")");
  }
  if (!root.is_object()) throw Error(file + ": not a JSON object");

  GenerationConfig config;
  auto value = [&](const char* key) -> const json* {
    auto it = root.find(key);
    return it == root.end() || it->is_null() ? nullptr : &*it;
  };
  auto id = [&](const json& v) -> int {
    if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > (1 << 24))
      throw Error(file + ": eos_token_id must be a token id or a list of them, got " + v.dump());
    return static_cast<int>(v.get<int64_t>());
  };
  if (const json* eos = value("eos_token_id")) {
    if (eos->is_array()) {
      for (const json& item : *eos) config.eos_token_ids.push_back(id(item));
    } else {
      config.eos_token_ids.push_back(id(*eos));
    }
  }
  auto text = [](double x) {
    char out[32];
    std::snprintf(out, sizeof out, "%g", x);
    return std::string(out);
  };
  auto number = [&](const char* key, double low, double high) -> std::optional<double> {
    const json* v = value(key);
    if (v == nullptr) return std::nullopt;
    if (!v->is_number() || v->get<double>() < low || v->get<double>() > high)
      throw Error(file + ": " + key + " must be a number from " + text(low) + " to " + text(high) + ", got " + v->dump());
    config.set_keys.push_back(key);
    return v->get<double>();
  };
  SamplingChoice& s = config.sampling;
  if (auto t = number("temperature", 0, 100)) s.temperature = static_cast<float>(*t);
  if (auto k = number("top_k", 0, 1 << 24)) s.top_k = static_cast<int>(*k);
  if (auto p = number("top_p", 0, 1)) s.top_p = static_cast<float>(*p);
  if (auto p = number("min_p", 0, 1)) s.min_p = static_cast<float>(*p);
  if (auto r = number("repetition_penalty", 0.01, 100)) s.repeat_penalty = static_cast<float>(*r);
  if (const json* sample = value("do_sample")) {
    if (!sample->is_boolean()) throw Error(file + ": do_sample must be true or false, got " + sample->dump());
    config.set_keys.push_back("do_sample");
    if (!sample->get<bool>()) {
      s.temperature = 0.0f;  // transformers decodes greedily and uses none of the settings above
    } else {
      // The file then describes transformers' whole sampler: what it leaves out is transformers'
      // default, not Kiln's (Gemma 3's file gives top_k 64 and top_p 0.95 at temperature 1, min_p off).
      if (!s.temperature) s.temperature = 1.0f;
      if (!s.top_k) s.top_k = 50;
      if (!s.top_p) s.top_p = 1.0f;
      if (!s.min_p) s.min_p = 0.0f;
      if (!s.repeat_penalty) s.repeat_penalty = 1.0f;
    }
  }
  return config;
}

}  // namespace kiln
