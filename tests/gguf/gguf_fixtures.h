// Paths of the GGUF fixtures (llama.cpp's converter and quantizer output) and their twins.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

namespace kiln::test {

inline std::string fixtures() { return std::string(KILN_TEST_DATA) + "/fixtures"; }
// name: "a" or "b" (kind "f16", "q8_0", "q4_0") or "k" (kind "q4_k_m", "q3_k_m")
inline std::string gguf_path(const std::string& name, const std::string& kind) {
  return fixtures() + "/gguf/tiny-gemma3-" + name + "/tiny-gemma3-" + name + "-" + kind + ".gguf";
}
inline std::string llama_logits_path(const std::string& name, const std::string& kind) {
  return fixtures() + "/gguf/tiny-gemma3-" + name + "/tiny-gemma3-" + name + "-" + kind + ".llama-logits.json";
}
// The same checkpoint in Hugging Face layout (config.json, model.safetensors, tokenizer.model).
inline std::string folder_path(const std::string& name) { return fixtures() + "/tiny-gemma3-" + name; }

inline std::string read_file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace kiln::test
