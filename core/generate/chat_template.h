// Gemma's turn format, rendered straight to token ids:
//   <bos><start_of_turn>user\n{system}\n\n{text}<end_of_turn>\n<start_of_turn>model\n{reply}<end_of_turn>\n...
// ending with an open "<start_of_turn>model\n". Special tokens are inserted as ids.
#pragma once

#include <cstdint>
#include <vector>

#include "kiln/types.h"
#include "tokenizer/tokenizer.h"

namespace kiln {

std::vector<int32_t> render_chat(const Tokenizer& tokenizer, const std::vector<ChatMessage>& messages);

}  // namespace kiln
