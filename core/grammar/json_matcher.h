// A pushdown matcher over bytes for JSON that satisfies a JsonSchema: feed it the output as it is
// generated; it refuses, at the first byte, any text that cannot be continued into a valid document.
// Copying is cheap (a few frames), so a candidate token is tried on a copy.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "grammar/json_schema.h"

namespace kiln::grammar {

class JsonMatcher {
 public:
  explicit JsonMatcher(std::shared_ptr<const JsonSchema> schema);

  // Feeds bytes; false (and the matcher left in an unspecified state) when one is refused.
  bool feed(std::string_view bytes);
  // Whether the bytes would be accepted (the matcher is unchanged).
  bool accepts(std::string_view bytes) const;
  // Whether the text so far is a whole valid document (the generation may end here).
  bool complete() const;
  // Whether anything more than the end may follow.
  bool can_continue() const;

  // Whitespace between tokens, as pretty printers write it and llama.cpp's JSON grammar allows:
  // nothing, one space, or one line break (\n or \r\n) then at most kMaxIndent spaces or tabs;
  // none around the document. A weak model favouring whitespace otherwise pads every gap and
  // spends max_tokens before the value ends.
  static constexpr int kMaxIndent = 20;
  static constexpr int kMaxDepth = 32;
  static constexpr int kMaxIntegerDigits = 15, kMaxFractionDigits = 15, kMaxExponentDigits = 3;

 private:
  enum class Step { Consumed, Finished, NotMine, Refused };  // Finished: consumed and the value ended
  struct Frame {
    int node = 0;
    uint8_t kind = 0;   // what the frame parses (FrameKind in the .cpp)
    uint8_t phase = 0;
    int64_t count = 0;  // items, characters, or properties seen
    uint64_t seen = 0;  // object: the listed properties seen (bit per property)
    int value_node = 0; // object: the node of the current key's value
    // string scanning: \u hex digits left, UTF-8 continuation bytes left, escape pending
    uint8_t hex_left = 0, utf8_left = 0;
    bool escape = false;
    int digits = 0;     // number: digits in the current part
    std::string text;   // literal / key / number text so far
  };

  bool feed_byte(uint8_t c);
  Step step(Frame& f, uint8_t c);
  bool start_value(int node, uint8_t c);  // pushes the frame for a value starting with c
  Step scan_string(Frame& f, uint8_t c, bool& closed, bool& new_char) const;
  Step literal_step(Frame& f, uint8_t c) const;
  Step number_step(Frame& f, uint8_t c) const;
  bool number_viable(const Frame& f) const;
  bool number_ends_well(const Frame& f) const;
  bool object_key_viable(const Frame& f) const;
  bool object_all_required(const Frame& f) const;
  bool object_has_more_keys(const Frame& f) const;
  bool whitespace(uint8_t c);

  std::shared_ptr<const JsonSchema> schema_;
  std::vector<Frame> stack_;  // stack_[0]: the document itself
  int whitespace_run_ = 0, indent_ = 0;  // bytes of this run, and of it after its line break
  bool newline_in_run_ = false, last_was_cr_ = false;
};

}  // namespace kiln::grammar
