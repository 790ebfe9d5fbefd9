// Gemma 3's chat format, straight to ids, rule for rule as the released chat_template (in the
// models' tokenizer_config.json) renders it:
//  - <bos>, then each turn as "<start_of_turn>{user|model}\n{content | trim}<end_of_turn>\n", then
//    "<start_of_turn>model\n";
//  - a system message first is not a turn: its text and a blank line go in front of the first
//    turn's (trimmed) content;
//  - turns alternate user / model, starting with user; anything else is an error, as the template
//    raises one.
// Kiln is more lenient than the template on purpose in three cases, each a chat the template would
// refuse or lose, and which the app and API clients do send: consecutive system messages join,
// paragraph by paragraph; a system message after the first turn goes in front of the next user
// turn (the template would render a "system" turn Gemma was never trained on, or raise); and a
// system message with no user turn after it becomes a user turn of its own (the template drops it,
// or refuses the chat).
#include "generate/chat_template.h"

#include <string_view>

namespace kiln {

namespace {

void append(std::vector<int32_t>& ids, const std::vector<int32_t>& more) {
  ids.insert(ids.end(), more.begin(), more.end());
}

// Length of the whitespace character at the start of `s` as Python's str.isspace() (which Jinja's
// trim uses) counts it, or 0.
size_t whitespace_length(std::string_view s) {
  const auto byte = [&s](size_t i) { return static_cast<unsigned char>(s[i]); };
  if (s.empty()) return 0;
  if (byte(0) == ' ' || (byte(0) >= 0x09 && byte(0) <= 0x0D) || (byte(0) >= 0x1C && byte(0) <= 0x1F)) return 1;
  if (s.size() >= 2 && byte(0) == 0xC2 && (byte(1) == 0x85 || byte(1) == 0xA0)) return 2;  // U+0085, U+00A0
  if (s.size() < 3) return 0;
  const uint32_t c = (uint32_t(byte(0) & 0x0F) << 12) | (uint32_t(byte(1) & 0x3F) << 6) | (byte(2) & 0x3F);
  if ((byte(0) & 0xF0) != 0xE0) return 0;
  const bool space = c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
                     c == 0x205F || c == 0x3000;
  return space ? 3 : 0;
}

// Jinja's `trim`: whitespace off both ends.
std::string_view trim(std::string_view s) {
  while (size_t n = whitespace_length(s)) s.remove_prefix(n);
  // From the end: find the last position that does not start a whitespace run reaching the end.
  size_t end = 0;
  for (size_t i = 0; i < s.size();) {
    const size_t n = whitespace_length(s.substr(i));
    if (n == 0) {
      // One UTF-8 character (or a stray byte) that is not whitespace.
      const unsigned char lead = static_cast<unsigned char>(s[i]);
      i += lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
      end = std::min(i, s.size());
    } else {
      i += n;
    }
  }
  return s.substr(0, end);
}

const char* role_name(Role role) {
  switch (role) {
    case Role::System: return "system";
    case Role::User: return "user";
    case Role::Assistant: return "assistant";
  }
  return "?";
}

}  // namespace

std::vector<int32_t> render_chat(const Tokenizer& tokenizer, const std::vector<ChatMessage>& messages,
                                 const ImageTokens* images) {
  const int32_t start_of_turn = tokenizer.start_of_turn_id();
  const int32_t end_of_turn = tokenizer.end_of_turn_id();
  if (start_of_turn < 0 || end_of_turn < 0)
    throw Error(tokenizer.origin() + ": tokenizer has no " +
                (start_of_turn < 0 ? "<start_of_turn>" : "<end_of_turn>") +
                " token, so it cannot hold a Gemma chat");

  std::vector<int32_t> ids;
  if (tokenizer.bos_id() >= 0) ids.push_back(tokenizer.bos_id());
  const std::vector<int32_t> newline = tokenizer.encode("\n");
  // `prefix` is system text, kept as written (the template does not trim it). The turn's images
  // come before its text, each between blank lines; the text around them is tokenized as one
  // piece, as the processor's expanded prompt is.
  auto add_turn = [&](std::string_view role, const std::string& prefix, std::string_view content,
                      const std::vector<Image>& turn_images = {}) {
    ids.push_back(start_of_turn);
    std::string text = std::string(role) + "\n" + prefix;
    auto add_view = [&] {
      append(ids, tokenizer.encode(text + "\n\n"));
      ids.push_back(images->begin);
      ids.insert(ids.end(), size_t(images->per_image), images->image);
      ids.push_back(images->end);
      text = "\n\n";
    };
    for (const Image& image : turn_images) {
      const int views = images->views ? images->views(image) : 1;
      if (views <= 1) {
        add_view();
        continue;
      }
      text += "Here is the original image ";
      add_view();
      text += " and here are some crops to help you see better ";
      for (int v = 1; v < views; ++v) {
        if (v > 1) text += " ";
        add_view();
      }
    }
    append(ids, tokenizer.encode(text + std::string(trim(content))));
    ids.push_back(end_of_turn);
    append(ids, newline);
  };

  std::string system;  // system text waiting for the next user turn
  bool has_system = false;
  Role expected = Role::User;  // turns alternate, starting with the user
  for (size_t i = 0; i < messages.size(); ++i) {
    const ChatMessage& message = messages[i];
    if (!message.images.empty() && message.role != Role::User)
      throw Error("message " + std::to_string(i + 1) + " is " + role_name(message.role) +
                  " with an image; only user turns hold images");
    if (!message.images.empty() && !images)
      throw Error("this model cannot see images (message " + std::to_string(i + 1) + " has " +
                  std::to_string(message.images.size()) + ")");
    if (!message.images.empty() && (images->begin < 0 || images->end < 0))
      throw Error(tokenizer.origin() + ": the tokenizer has no <start_of_image> / <end_of_image> token, so images "
                  "cannot go into a chat (kiln logits --image still takes them)");
    if (message.role == Role::System) {
      system += (has_system ? "\n\n" : "") + message.content;
      has_system = true;
      continue;
    }
    if (has_system && message.role == Role::Assistant && expected == Role::User) {
      // System text with no user turn to carry it reaches the model as a user turn (lenient).
      add_turn("user", "", system);
      system.clear();
      has_system = false;
      expected = Role::Assistant;
    }
    if (message.role != expected)
      throw Error(std::string("chat roles must alternate user/assistant/user/... starting with user; message ") +
                  std::to_string(i + 1) + " is " + role_name(message.role) + " where " + role_name(expected) +
                  " was expected");
    if (message.role == Role::User) {
      add_turn("user", has_system ? system + "\n\n" : "", message.content, message.images);
      system.clear();
      has_system = false;
      expected = Role::Assistant;
    } else {
      add_turn("model", "", message.content);
      expected = Role::User;
    }
  }
  if (has_system) {
    if (expected != Role::User)
      throw Error("chat roles must alternate: the system message after the last user turn has no turn to join");
    add_turn("user", "", system);
  }

  ids.push_back(start_of_turn);
  append(ids, tokenizer.encode("model\n"));
  return ids;
}

}  // namespace kiln
