#include "generate/chat_roll_off.h"

#include <algorithm>
#include <string>

#include "generate/chat_template.h"

namespace kiln {

namespace {

// `messages` without the first `drop` non-system ones, and without any assistant turn that would
// then come first (a chat resumes with a question).
std::vector<ChatMessage> without_oldest(const std::vector<ChatMessage>& messages, int drop, int& dropped) {
  std::vector<ChatMessage> kept;
  dropped = 0;
  bool started = false;
  for (const ChatMessage& m : messages) {
    if (m.role == Role::System) {
      kept.push_back(m);
      continue;
    }
    if (!started && (dropped < drop || m.role == Role::Assistant)) {
      ++dropped;
      continue;
    }
    started = true;
    kept.push_back(m);
  }
  return kept;
}

}  // namespace

FittedChat fit_chat(const Tokenizer& tokenizer, const std::vector<ChatMessage>& messages, int context,
                    int answer_room, int at_least, const ImageTokens* images) {
  // The latest user turn is the last that may go: everything before it can roll off.
  int droppable = 0, seen = 0;
  for (const ChatMessage& m : messages) {
    if (m.role == Role::System) continue;
    ++seen;
    if (m.role == Role::User) droppable = seen - 1;
  }
  const int room = std::clamp(answer_room, 0, context / 4);
  FittedChat best;
  for (int drop = std::clamp(at_least, 0, droppable);; ++drop) {
    int dropped = 0;
    std::vector<ChatMessage> kept = without_oldest(messages, drop, dropped);
    if (dropped > droppable) break;  // only assistant turns follow the last question: keep it
    FittedChat fitted{render_chat(tokenizer, kept, images), dropped, {}};
    for (const ChatMessage& m : kept) fitted.images.insert(fitted.images.end(), m.images.begin(), m.images.end());
    const bool fits = int(fitted.tokens.size()) + room <= context;
    if (fits || best.tokens.empty() || fitted.tokens.size() < best.tokens.size()) best = std::move(fitted);
    if (fits || drop >= droppable) break;
    drop = std::max(drop, dropped);  // the loop's ++ goes past the turns already skipped
  }
  if (int(best.tokens.size()) >= context)
    throw Error("the latest message alone has " + std::to_string(best.tokens.size()) +
                " tokens with the system prompt; the context holds " + std::to_string(context));
  return best;
}

}  // namespace kiln
