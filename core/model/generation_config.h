// generation_config.json: the end-of-sequence ids and sampling defaults a model was released with.
#pragma once

#include <string>
#include <vector>

#include "kiln/types.h"

namespace kiln {

struct GenerationConfig {
  std::vector<int> eos_token_ids;  // empty: the file names none
  SamplingChoice sampling;         // what the file sets; the rest stays Kiln's
  std::vector<std::string> set_keys;  // the file's keys behind `sampling`, for SettingOrigin
};

// Reads transformers' keys: eos_token_id (an id or a list), temperature, top_k, top_p, min_p,
// repetition_penalty, and do_sample: false means greedy; true means transformers' sampler, so a
// setting the file leaves out takes transformers' default (temperature 1, top_k 50, no top_p,
// min_p or penalty). Without do_sample only the settings given are taken. Keys that only steer transformers'
// own loop (max_length, cache_implementation, ...) are not Kiln's business and are skipped.
// Throws kiln::Error naming the file on invalid JSON, a wrong type or a value out of range.
GenerationConfig parse_generation_config(const std::string& json_text, const std::string& file);

}  // namespace kiln
