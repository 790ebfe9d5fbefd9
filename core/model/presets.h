// The released Gemma 3 text-model shapes, for benchmarks with synthetic weights.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/config.h"

namespace kiln {

// "gemma3-270m", "gemma3-1b", "gemma3-4b", "gemma3-12b", "gemma3-27b"
std::optional<Gemma3Config> preset_config(const std::string& name);
std::vector<std::string> preset_names();

}  // namespace kiln
