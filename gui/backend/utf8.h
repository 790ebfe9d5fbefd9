// The engine streams raw bytes: a multi-byte UTF-8 character may be split across two tokens
// (byte-fallback pieces), so text is only handed to Qt once a character is complete.
#pragma once

#include <cstddef>
#include <string_view>

namespace kiln::gui {

// Length of the longest prefix of `bytes` that does not end inside a UTF-8 character.
// Invalid sequences count as complete: QString shows them as U+FFFD instead of holding them back.
inline std::size_t completeUtf8Prefix(std::string_view bytes) {
  const std::size_t size = bytes.size();
  // Walk back over at most three continuation bytes to the lead byte of the last character.
  for (std::size_t back = 1; back <= 4 && back <= size; ++back) {
    const auto byte = static_cast<unsigned char>(bytes[size - back]);
    if ((byte & 0xC0) == 0x80) continue;  // continuation byte
    std::size_t needed = 1;
    if ((byte & 0xE0) == 0xC0) needed = 2;
    else if ((byte & 0xF0) == 0xE0) needed = 3;
    else if ((byte & 0xF8) == 0xF0) needed = 4;
    return back >= needed ? size : size - back;
  }
  return size;
}

}  // namespace kiln::gui
