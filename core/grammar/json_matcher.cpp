#include "grammar/json_matcher.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace kiln::grammar {

namespace {

enum FrameKind : uint8_t { kDocument, kObject, kArray, kString, kNumber, kLiteral };

bool is_space(uint8_t c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }
bool is_digit(uint8_t c) { return c >= '0' && c <= '9'; }
bool is_hex(uint8_t c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// Number phases: where in '-'? int ('.' frac)? ([eE] [+-]? exp)? the text stands.
enum NumberPhase : uint8_t { kStart, kAfterMinus, kIntDigits, kLeadingZero, kAfterDot, kFracDigits, kAfterE,
                             kAfterESign, kExpDigits };
bool number_terminal(uint8_t phase) {
  return phase == kIntDigits || phase == kLeadingZero || phase == kFracDigits || phase == kExpDigits;
}

}  // namespace

JsonMatcher::JsonMatcher(std::shared_ptr<const JsonSchema> schema) : schema_(std::move(schema)) {
  Frame document;
  document.kind = kDocument;
  document.node = schema_->root();
  stack_.push_back(std::move(document));
}

bool JsonMatcher::feed(std::string_view bytes) {
  for (char c : bytes)
    if (!feed_byte(static_cast<uint8_t>(c))) return false;
  return true;
}

bool JsonMatcher::accepts(std::string_view bytes) const {
  JsonMatcher copy = *this;
  return copy.feed(bytes);
}

bool JsonMatcher::feed_byte(uint8_t c) {
  if (!is_space(c)) {
    whitespace_run_ = indent_ = 0;
    newline_in_run_ = last_was_cr_ = false;
  }
  while (!stack_.empty()) {
    switch (step(stack_.back(), c)) {
      case Step::Consumed: return true;
      case Step::Finished: stack_.pop_back(); return true;
      case Step::NotMine: stack_.pop_back(); continue;  // the value ended just before c
      case Step::Refused: return false;
    }
  }
  return false;
}

bool JsonMatcher::whitespace(uint8_t c) {
  const int before = whitespace_run_++;
  if (c == '\r') {  // only as the start of \r\n
    if (before != 0) return false;
    last_was_cr_ = true;
    return true;
  }
  if (c == '\n') {
    if (newline_in_run_ || (before != 0 && !last_was_cr_)) return false;
    newline_in_run_ = true;
    last_was_cr_ = false;
    return true;
  }
  if (last_was_cr_) return false;                      // \r not followed by \n
  if (!newline_in_run_) return c == ' ' && before == 0;  // one space on a line
  return ++indent_ <= kMaxIndent;                      // indentation after the line break
}

bool JsonMatcher::complete() const {
  if (stack_.size() == 1) return stack_[0].phase == 1;
  if (stack_.size() != 2) return false;
  const Frame& top = stack_[1];  // a bare top-level number or literal ends where the text ends
  if (top.kind == kNumber) return number_terminal(top.phase) && number_ends_well(top);
  if (top.kind == kLiteral) {
    const auto& literals = schema_->node(top.node).literals;
    return std::find(literals.begin(), literals.end(), top.text) != literals.end();
  }
  return false;
}

bool JsonMatcher::can_continue() const { return !(stack_.size() == 1 && stack_[0].phase == 1); }

bool JsonMatcher::start_value(int node_index, uint8_t c) {
  if (static_cast<int>(stack_.size()) > kMaxDepth) return false;
  const SchemaNode& node = schema_->node(node_index);
  Frame f;
  f.node = node_index;
  switch (node.type) {
    case SchemaNode::Type::Any: {
      int as = -1;
      if (c == '{') as = JsonSchema::kAnyObject;
      else if (c == '[') as = JsonSchema::kAnyArray;
      else if (c == '"') as = JsonSchema::kAnyString;
      else if (c == '-' || is_digit(c)) as = JsonSchema::kAnyNumber;
      else if (c == 't' || c == 'f') as = JsonSchema::kBoolean;
      else if (c == 'n') as = JsonSchema::kNull;
      return as >= 0 && start_value(as, c);
    }
    case SchemaNode::Type::Object:
      if (c != '{') return false;
      f.kind = kObject;
      break;
    case SchemaNode::Type::Array:
      if (c != '[') return false;
      f.kind = kArray;
      break;
    case SchemaNode::Type::String:
      if (c != '"') return false;
      f.kind = kString;
      break;
    case SchemaNode::Type::Integer:
    case SchemaNode::Type::Number:
      f.kind = kNumber;
      if (number_step(f, c) != Step::Consumed) return false;
      break;
    case SchemaNode::Type::Literals:
      f.kind = kLiteral;
      if (literal_step(f, c) == Step::Refused) return false;
      break;
  }
  stack_.push_back(std::move(f));
  return true;
}

JsonMatcher::Step JsonMatcher::scan_string(Frame& f, uint8_t c, bool& closed, bool& new_char) const {
  closed = new_char = false;
  if (f.hex_left > 0) {
    if (!is_hex(c)) return Step::Refused;
    // \uD800-\uDFFF alone is not a character; strict parsers refuse it, so it is never written.
    if (f.hex_left == 3 && (f.digits == 'd' || f.digits == 'D') && !(c >= '0' && c <= '7')) return Step::Refused;
    if (f.hex_left == 4) f.digits = c;
    --f.hex_left;
    return Step::Consumed;
  }
  if (f.escape) {
    f.escape = false;
    if (c == 'u') {
      f.hex_left = 4;
      return Step::Consumed;
    }
    static constexpr std::string_view kEscapes = "\"\\/bfnrt";
    return kEscapes.find(static_cast<char>(c)) != std::string_view::npos ? Step::Consumed : Step::Refused;
  }
  if (f.utf8_left > 0) {
    // The first continuation byte of E0/ED/F0/F4 is narrower (no overlong forms, no surrogates).
    uint8_t lo = 0x80, hi = 0xBF;
    if (f.digits == 0xE0) lo = 0xA0;
    else if (f.digits == 0xED) hi = 0x9F;
    else if (f.digits == 0xF0) lo = 0x90;
    else if (f.digits == 0xF4) hi = 0x8F;
    if (c < lo || c > hi) return Step::Refused;
    f.digits = 0;
    --f.utf8_left;
    return Step::Consumed;
  }
  if (c == '"') {
    closed = true;
    return Step::Consumed;
  }
  new_char = true;
  if (c == '\\') {
    f.escape = true;
  } else if (c < 0x20) {
    return Step::Refused;
  } else if (c >= 0x80) {
    if (c >= 0xC2 && c <= 0xDF) f.utf8_left = 1;
    else if (c >= 0xE0 && c <= 0xEF) f.utf8_left = 2;
    else if (c >= 0xF0 && c <= 0xF4) f.utf8_left = 3;
    else return Step::Refused;
    f.digits = c;
  }
  return Step::Consumed;
}

JsonMatcher::Step JsonMatcher::literal_step(Frame& f, uint8_t c) const {
  const auto& literals = schema_->node(f.node).literals;
  std::string next = f.text;
  next.push_back(static_cast<char>(c));
  bool prefix = false, longer = false;
  for (const std::string& l : literals)
    if (l.compare(0, next.size(), next) == 0) {
      prefix = true;
      longer = longer || l.size() > next.size();
    }
  if (prefix) {
    f.text = std::move(next);
    return longer ? Step::Consumed : Step::Finished;
  }
  const bool whole = std::find(literals.begin(), literals.end(), f.text) != literals.end();
  return whole ? Step::NotMine : Step::Refused;
}

bool JsonMatcher::number_viable(const Frame& f) const {
  const SchemaNode& node = schema_->node(f.node);
  if (!node.minimum && !node.maximum) return true;
  const bool integer = node.type == SchemaNode::Type::Integer;
  const bool negative = !f.text.empty() && f.text[0] == '-';
  // Whether magnitudes [lo, hi] (or [lo, hi) where more digits can only approach hi) reach the bounds.
  const auto overlaps_as = [&](double lo, double hi, bool open) {
    if (negative)  // values [-hi, -lo] or (-hi, -lo]
      return (!node.maximum || (open ? -hi < *node.maximum : -hi <= *node.maximum)) &&
             (!node.minimum || -lo >= *node.minimum);
    return (!node.maximum || lo <= *node.maximum) && (!node.minimum || (open ? hi > *node.minimum : hi >= *node.minimum));
  };
  const auto overlaps = [&](double lo, double hi) { return overlaps_as(lo, hi, !integer); };
  const std::string_view digits = std::string_view(f.text).substr(negative ? 1 : 0);
  switch (f.phase) {
    case kStart:
    case kAfterMinus: return overlaps_as(0, std::numeric_limits<double>::infinity(), false);
    case kLeadingZero: return overlaps(0, integer ? 0 : 1);
    case kIntDigits: {
      const double d = std::strtod(std::string(digits).c_str(), nullptr);
      double scale = 1;
      for (int k = 0; f.digits + k <= kMaxIntegerDigits; ++k, scale *= 10)
        if (overlaps(d * scale, integer ? d * scale + scale - 1 : (d + 1) * scale)) return true;
      return false;
    }
    case kAfterDot:
    case kFracDigits: {
      const double v = std::strtod(std::string(digits).c_str(), nullptr);
      const int fraction = f.phase == kAfterDot ? 0 : f.digits;
      return overlaps(v, v + std::pow(10.0, -fraction));
    }
    default: return false;  // exponents are refused when bounds are set
  }
}

bool JsonMatcher::number_ends_well(const Frame& f) const {
  const SchemaNode& node = schema_->node(f.node);
  const double v = std::strtod(f.text.c_str(), nullptr);
  return (!node.minimum || v >= *node.minimum) && (!node.maximum || v <= *node.maximum);
}

JsonMatcher::Step JsonMatcher::number_step(Frame& f, uint8_t c) const {
  const SchemaNode& node = schema_->node(f.node);
  const bool integer = node.type == SchemaNode::Type::Integer;
  const bool bounded = node.minimum || node.maximum;
  const uint8_t before = f.phase;
  const int digits_before = f.digits;
  auto to = [&](uint8_t phase, int digits) {
    f.phase = phase;
    f.digits = digits;
  };
  switch (f.phase) {
    case kStart:
    case kAfterMinus:
      if (c == '-' && f.phase == kStart) to(kAfterMinus, 0);
      else if (c == '0') to(kLeadingZero, 1);
      else if (is_digit(c)) to(kIntDigits, 1);
      else return Step::Refused;
      break;
    case kIntDigits:
    case kLeadingZero:
    case kFracDigits:
    case kExpDigits: {
      const int cap = f.phase == kFracDigits ? kMaxFractionDigits : f.phase == kExpDigits ? kMaxExponentDigits
                                                                                        : kMaxIntegerDigits;
      if (is_digit(c) && f.phase != kLeadingZero) {
        if (f.digits >= cap) return Step::Refused;
        ++f.digits;
      } else if (c == '.' && !integer && (f.phase == kIntDigits || f.phase == kLeadingZero)) {
        to(kAfterDot, 0);
      } else if ((c == 'e' || c == 'E') && !integer && !bounded && f.phase != kExpDigits) {
        to(kAfterE, 0);
      } else {
        return number_ends_well(f) ? Step::NotMine : Step::Refused;
      }
      break;
    }
    case kAfterDot:
      if (!is_digit(c)) return Step::Refused;
      to(kFracDigits, 1);
      break;
    case kAfterE:
      if (c == '+' || c == '-') to(kAfterESign, 0);
      else if (is_digit(c)) to(kExpDigits, 1);
      else return Step::Refused;
      break;
    case kAfterESign:
      if (!is_digit(c)) return Step::Refused;
      to(kExpDigits, 1);
      break;
    default: return Step::Refused;
  }
  f.text.push_back(static_cast<char>(c));
  if (!number_viable(f)) {
    f.text.pop_back();
    f.phase = before;
    f.digits = digits_before;
    return Step::Refused;
  }
  return Step::Consumed;
}

bool JsonMatcher::object_key_viable(const Frame& f) const {
  const SchemaNode& node = schema_->node(f.node);
  for (size_t i = 0; i < node.property_names.size(); ++i)
    if (!(f.seen >> i & 1) && node.property_names[i].compare(0, f.text.size(), f.text) == 0) return true;
  return false;
}

bool JsonMatcher::object_all_required(const Frame& f) const {
  const SchemaNode& node = schema_->node(f.node);
  for (size_t i = 0; i < node.required.size(); ++i)
    if (node.required[i] && !(f.seen >> i & 1)) return false;
  return true;
}

bool JsonMatcher::object_has_more_keys(const Frame& f) const {
  const SchemaNode& node = schema_->node(f.node);
  return node.additional >= 0 || f.seen != (node.property_names.size() >= 64 ? ~0ull : (1ull << node.property_names.size()) - 1);
}

JsonMatcher::Step JsonMatcher::step(Frame& f, uint8_t c) {
  const bool space = is_space(c);
  if (space && f.kind != kString && f.kind != kNumber && f.kind != kLiteral && !(f.kind == kObject && f.phase == 1)) {
    if (f.kind == kDocument) return Step::Refused;  // the document is the whole output: no space around it
    return whitespace(c) ? Step::Consumed : Step::Refused;
  }
  switch (f.kind) {
    case kDocument:
      if (f.phase == 1) return Step::Refused;
      f.phase = 1;
      return start_value(f.node, c) ? Step::Consumed : Step::Refused;
    case kString: {
      bool closed = false, new_char = false;
      if (scan_string(f, c, closed, new_char) == Step::Refused) return Step::Refused;
      const SchemaNode& node = schema_->node(f.node);
      if (closed) return f.count >= node.min_length ? Step::Finished : Step::Refused;
      if (new_char && node.max_length >= 0 && ++f.count > node.max_length) return Step::Refused;
      if (new_char && node.max_length < 0) ++f.count;
      return Step::Consumed;
    }
    case kNumber: return number_step(f, c);
    case kLiteral: return literal_step(f, c);
    case kArray: {
      const SchemaNode& node = schema_->node(f.node);
      if (f.phase == 1) {
        if (c == ',' && (node.max_items < 0 || f.count < node.max_items)) return f.phase = 2, Step::Consumed;
        if (c == ']' && f.count >= node.min_items) return Step::Finished;
        return Step::Refused;
      }
      if (f.phase == 0 && c == ']') return node.min_items == 0 ? Step::Finished : Step::Refused;
      if (node.max_items == 0) return Step::Refused;
      f.phase = 1;
      ++f.count;
      return start_value(node.items, c) ? Step::Consumed : Step::Refused;
    }
    case kObject: {
      const SchemaNode& node = schema_->node(f.node);
      switch (f.phase) {
        case 0:
        case 5:
          if (c == '"' && object_has_more_keys(f)) {
            f.phase = 1;
            f.text.clear();
            return Step::Consumed;
          }
          if (c == '}' && f.phase == 0) return object_all_required(f) ? Step::Finished : Step::Refused;
          return Step::Refused;
        case 1: {  // in a key
          bool closed = false, new_char = false;
          if (node.additional < 0 && c == '\\') return Step::Refused;  // listed names are matched as written
          if (scan_string(f, c, closed, new_char) == Step::Refused) return Step::Refused;
          if (!closed) {
            f.text.push_back(static_cast<char>(c));
            return node.additional >= 0 || object_key_viable(f) ? Step::Consumed : Step::Refused;
          }
          for (size_t i = 0; i < node.property_names.size(); ++i)
            if (node.property_names[i] == f.text) {
              if (f.seen >> i & 1) return Step::Refused;  // a key twice
              f.seen |= 1ull << i;
              f.value_node = node.property_nodes[i];
              f.phase = 2;
              return Step::Consumed;
            }
          if (node.additional < 0) return Step::Refused;
          f.value_node = node.additional;
          f.phase = 2;
          return Step::Consumed;
        }
        case 2:
          if (c != ':') return Step::Refused;
          f.phase = 3;
          return Step::Consumed;
        case 3:
          f.phase = 4;
          return start_value(f.value_node, c) ? Step::Consumed : Step::Refused;
        case 4:
          if (c == ',' && object_has_more_keys(f)) return f.phase = 5, Step::Consumed;
          if (c == '}') return object_all_required(f) ? Step::Finished : Step::Refused;
          return Step::Refused;
      }
      return Step::Refused;
    }
  }
  return Step::Refused;
}

}  // namespace kiln::grammar
