// Gemma 3's chat format, straight to ids. Gemma has no system role: system text goes in front of
// the next user turn, separated by a blank line (what the released chat template does).
#include "generate/chat_template.h"

namespace kiln {

namespace {

void append(std::vector<int32_t>& ids, const std::vector<int32_t>& more) {
  ids.insert(ids.end(), more.begin(), more.end());
}

}  // namespace

std::vector<int32_t> render_chat(const Tokenizer& tokenizer, const std::vector<ChatMessage>& messages) {
  const int32_t start_of_turn = tokenizer.start_of_turn_id();
  const int32_t end_of_turn = tokenizer.end_of_turn_id();
  if (start_of_turn < 0 || end_of_turn < 0)
    throw Error(tokenizer.origin() + ": tokenizer has no " +
                (start_of_turn < 0 ? "<start_of_turn>" : "<end_of_turn>") +
                " token, so it cannot hold a Gemma chat");

  std::vector<int32_t> ids;
  if (tokenizer.bos_id() >= 0) ids.push_back(tokenizer.bos_id());
  const std::vector<int32_t> newline = tokenizer.encode("\n");
  auto add_turn = [&](std::string_view role, const std::string& text) {
    ids.push_back(start_of_turn);
    append(ids, tokenizer.encode(std::string(role) + "\n" + text));
    ids.push_back(end_of_turn);
    append(ids, newline);
  };

  std::string system;  // system text waiting for the next user turn
  bool has_system = false;
  for (const auto& message : messages) {
    switch (message.role) {
      case Role::System:
        // Consecutive system messages join, paragraph by paragraph.
        system += (has_system ? "\n\n" : "") + message.content;
        has_system = true;
        break;
      case Role::User:
        add_turn("user", has_system ? system + "\n\n" + message.content : message.content);
        system.clear();
        has_system = false;
        break;
      case Role::Assistant:
        // System text with no user turn to carry it still reaches the model as a user turn.
        if (has_system) add_turn("user", system);
        system.clear();
        has_system = false;
        add_turn("model", message.content);
        break;
    }
  }
  if (has_system) add_turn("user", system);

  ids.push_back(start_of_turn);
  append(ids, tokenizer.encode("model\n"));
  return ids;
}

}  // namespace kiln
