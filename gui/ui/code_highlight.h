// A small highlighter for code in answers: keywords, strings, comments and numbers, for the
// languages chat answers mostly hold (C-like, Python, shell, JavaScript, Rust, Go, SQL, JSON...).
// Not a parser: a line-by-line scan that is right for ordinary code and harmless when it is not.
#pragma once

#include <QString>

namespace kiln::gui {

struct CodeColours {
  QString keyword, string, comment, number;  // CSS colours ("#c2581a")
};

// `code` as rich text (HTML, everything escaped) in a <pre>, the tokens coloured.
QString highlightCode(const QString& code, const QString& language, const CodeColours& colours);

}  // namespace kiln::gui
