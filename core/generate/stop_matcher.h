// Stop strings across token boundaries: text is released only once it cannot be the start of a
// stop string, and a stop string is never released.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kiln {

class StopMatcher {
 public:
  explicit StopMatcher(std::vector<std::string> stops);
  // Feeds new text; returns what may be shown now. Sets stopped() when a stop string completed
  // (the text before it is still returned).
  std::string feed(std::string_view text);
  // At the end of generation: whatever was held back (never part of a stop string).
  std::string flush();
  bool stopped() const { return stopped_; }

 private:
  std::vector<std::string> stops_;
  std::string pending_;
  bool stopped_ = false;
};

// Joins the bytes of token pieces into whole UTF-8 characters: a character split over
// several byte-fallback tokens is released once complete.
class Utf8Stream {
 public:
  std::string feed(std::string_view bytes);
  std::string flush();  // incomplete trailing bytes become U+FFFD

 private:
  std::string pending_;
};

}  // namespace kiln
