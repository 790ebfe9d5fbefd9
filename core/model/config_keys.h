// The keys of a Gemma 3 config.json that Kiln knows, and what it does with the rest.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kiln {

// Checks one settings object of config.json (the top level, or text_config of a multimodal
// layout; `prefix` is "" or "text_config."). A key that would change the forward pass in a way
// Kiln does not compute (bidirectional attention, soft-capping, biases, untied output weights,
// quantized storage, ...) is a kiln::Error naming the file and the key, unless it holds the value
// Gemma 3 has. A key Kiln neither reads nor lists as harmless adds a one-line note to `notes`.
void check_config_keys(const nlohmann::json& settings, const std::string& prefix, const std::string& file,
                       std::vector<std::string>& notes);

}  // namespace kiln
