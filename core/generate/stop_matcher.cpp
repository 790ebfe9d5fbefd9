// Streaming helpers between token pieces and the text a user sees.
#include "generate/stop_matcher.h"

#include <algorithm>

namespace kiln {

namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

bool is_continuation(unsigned char b) { return (b & 0xC0) == 0x80; }

// The well-formed UTF-8 sequences (Unicode Table 3-7): length for a lead byte, and the range the
// second byte must fall in (narrower after E0, ED, F0, F4 to rule out overlongs and surrogates).
struct LeadRule {
  size_t length = 0;  // 0: not a lead byte
  unsigned char second_low = 0x80, second_high = 0xBF;
};

LeadRule rule_for(unsigned char lead) {
  if (lead < 0x80) return {1};
  if (lead >= 0xC2 && lead <= 0xDF) return {2};
  if (lead == 0xE0) return {3, 0xA0, 0xBF};
  if (lead == 0xED) return {3, 0x80, 0x9F};
  if (lead >= 0xE1 && lead <= 0xEF) return {3};
  if (lead == 0xF0) return {4, 0x90, 0xBF};
  if (lead >= 0xF1 && lead <= 0xF3) return {4};
  if (lead == 0xF4) return {4, 0x80, 0x8F};
  return {0};
}

}  // namespace

StopMatcher::StopMatcher(std::vector<std::string> stops) {
  for (auto& s : stops)
    if (!s.empty()) stops_.push_back(std::move(s));  // an empty stop string would match anywhere
}

std::string StopMatcher::feed(std::string_view text) {
  if (stopped_) return {};
  pending_.append(text);

  // The earliest complete stop string ends the stream; the text before it is still shown.
  size_t first_stop = std::string::npos;
  for (const auto& stop : stops_) first_stop = std::min(first_stop, pending_.find(stop));
  if (first_stop != std::string::npos) {
    stopped_ = true;
    std::string shown = pending_.substr(0, first_stop);
    pending_.clear();
    return shown;
  }

  // Hold back the longest suffix that could still grow into a stop string. Everything released
  // earlier was checked the same way, so no stop string can start in text already shown.
  size_t hold = 0;
  for (const auto& stop : stops_) {
    const size_t longest = std::min(stop.size() - 1, pending_.size());
    for (size_t len = longest; len > hold; --len) {
      if (std::string_view(pending_).substr(pending_.size() - len) ==
          std::string_view(stop).substr(0, len)) {
        hold = len;
        break;
      }
    }
  }
  std::string shown = pending_.substr(0, pending_.size() - hold);
  pending_.erase(0, pending_.size() - hold);
  return shown;
}

std::string StopMatcher::flush() {
  std::string rest;
  rest.swap(pending_);
  return rest;
}

std::string Utf8Stream::feed(std::string_view bytes) {
  pending_.append(bytes);
  std::string out;
  size_t i = 0;
  while (i < pending_.size()) {
    const auto lead = static_cast<unsigned char>(pending_[i]);
    const LeadRule rule = rule_for(lead);
    if (rule.length == 1) {
      out.push_back(pending_[i++]);
      continue;
    }
    if (rule.length == 0) {  // a stray continuation byte or an impossible lead byte
      out.append(kReplacement);
      ++i;
      continue;
    }
    // Walk the continuation bytes; stop at the first one that does not fit.
    size_t have = 1;
    bool broken = false;
    while (have < rule.length && i + have < pending_.size()) {
      const auto b = static_cast<unsigned char>(pending_[i + have]);
      const bool fits = have == 1 ? (b >= rule.second_low && b <= rule.second_high) : is_continuation(b);
      if (!fits) {
        broken = true;
        break;
      }
      ++have;
    }
    if (broken) {  // the maximal valid prefix becomes one U+FFFD; the offending byte is re-read
      out.append(kReplacement);
      i += have;
    } else if (have == rule.length) {
      out.append(pending_, i, have);
      i += have;
    } else {
      break;  // a valid but incomplete character at the end: wait for more bytes
    }
  }
  pending_.erase(0, i);
  return out;
}

std::string Utf8Stream::flush() {
  if (pending_.empty()) return {};
  pending_.clear();
  return std::string(kReplacement);  // only ever one incomplete character is held
}

}  // namespace kiln
