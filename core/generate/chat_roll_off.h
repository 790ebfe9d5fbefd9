// A conversation that outgrows the context: its oldest turns roll off. The system prompt and the
// latest user turn always stay; turns leave from the front, whole (so what is left still starts
// with a user turn, as Gemma's format needs).
#pragma once

#include <cstdint>
#include <vector>

#include "generate/chat_template.h"
#include "kiln/types.h"
#include "tokenizer/tokenizer.h"

namespace kiln {

struct FittedChat {
  std::vector<int32_t> tokens;  // the prompt as the model sees it
  int rolled_off = 0;           // non-system messages left out, from the front
  std::vector<Image> images;    // the kept messages' images, in order
};

// The fewest oldest messages (never fewer than `at_least`) whose removal leaves the prompt plus
// `answer_room` tokens (at most a quarter of the context) within `context`. When even the latest user turn alone leaves less room
// than that, it is taken anyway (the answer gets what is left); when it alone does not fit the
// context at all, that is an Error.
// `images`: as render_chat takes them (a model that sees).
FittedChat fit_chat(const Tokenizer& tokenizer, const std::vector<ChatMessage>& messages, int context,
                    int answer_room, int at_least, const ImageTokens* images = nullptr);

}  // namespace kiln
