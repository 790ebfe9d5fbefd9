// Gemma's turn format, rendered straight to token ids:
//   <bos><start_of_turn>user\n{system}\n\n{images}{text}<end_of_turn>\n<start_of_turn>model\n{reply}<end_of_turn>\n...
// ending with an open "<start_of_turn>model\n". Special tokens are inserted as ids.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "kiln/types.h"
#include "tokenizer/tokenizer.h"

namespace kiln {

// The tokens an image becomes in a user turn, as Gemma 3's processor expands the template's
// <start_of_image>: "\n\n", <start_of_image>, `per_image` image tokens, <end_of_image>, "\n\n".
// An image seen in several views (pan-and-scan: the whole, then its crops) reads "Here is the
// original image {view} and here are some crops to help you see better {view} {view}".
struct ImageTokens {
  int32_t begin = -1, end = -1, image = -1;
  int per_image = 0;
  std::function<int(const Image&)> views;  // null: one view each
};

// Messages with images need `images` (a model that sees); without, they are an Error.
std::vector<int32_t> render_chat(const Tokenizer& tokenizer, const std::vector<ChatMessage>& messages,
                                 const ImageTokens* images = nullptr);

}  // namespace kiln
