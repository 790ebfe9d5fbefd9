// Text from model files on its way to a terminal.
#pragma once

#include <string>
#include <string_view>

namespace kiln {

// `text` with every control character (C0, DEL, C1) written as \xNN, so a name read from a model
// file ("general.architecture": "\x1b]0;pwned\a") cannot move the cursor, retitle the window or
// break a one-line message. Other UTF-8 passes unchanged.
std::string printable(std::string_view text);

}  // namespace kiln
