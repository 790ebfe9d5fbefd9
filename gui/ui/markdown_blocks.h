// Splits a Markdown message into prose, quotes, tables and fenced code blocks: prose goes to
// Qt's Markdown renderer, and the rest get blocks of their own that Qt's renderer draws poorly (a
// quote with a bar beside it, a table with quiet rules, code in a fixed font with highlighting and
// a copy button). A fence still open at the end (an answer streaming in) is a code block too.
#pragma once

#include <QObject>
#include <QQmlEngine>
#include <QString>
#include <QVariantList>
#include <vector>

namespace kiln::gui {

struct MarkdownBlock {
  enum class Kind { Prose, Code, Quote, Table };
  Kind kind = Kind::Prose;
  QString text;      // prose: Markdown source; code: the code without fences; quote: its Markdown without "> "
  QString language;  // code: the fence's info word ("cpp"), may be empty
  bool closed = true;
  QList<QStringList> rows;  // table: the header row first, then the body; cells as Markdown
};

std::vector<MarkdownBlock> splitMarkdown(const QString& text);

// Prose as people write chat messages: a single line break is a line break (CommonMark would
// join the lines into one paragraph, so verse and addresses would run together).
QString keepLineBreaks(const QString& markdown);

class MarkdownBlocks : public QObject {
  Q_OBJECT
  QML_ELEMENT
  QML_SINGLETON

 public:
  using QObject::QObject;
  // [{kind: "prose" | "code" | "quote" | "table", text, language, closed, rows}]; prose and
  // quote text with its single line breaks kept (keepLineBreaks).
  Q_INVOKABLE static QVariantList split(const QString& text);
  // Code as rich text with keywords, strings, comments and numbers in the colours given
  // ({keyword, string, comment, number}); see code_highlight.h.
  Q_INVOKABLE static QString highlight(const QString& code, const QString& language, const QVariantMap& colours);
};

}  // namespace kiln::gui
