// Splits a Markdown message into prose and fenced code blocks, so prose goes to Qt's Markdown
// renderer and code gets its own block (fixed font, copy button). A fence still open at the end
// (an answer streaming in) is a code block too.
#pragma once

#include <QObject>
#include <QQmlEngine>
#include <QString>
#include <QVariantList>
#include <vector>

namespace kiln::gui {

struct MarkdownBlock {
  enum class Kind { Prose, Code };
  Kind kind = Kind::Prose;
  QString text;      // prose: Markdown source; code: the code without fences
  QString language;  // code: the fence's info word ("cpp"), may be empty
  bool closed = true;
};

std::vector<MarkdownBlock> splitMarkdown(const QString& text);

class MarkdownBlocks : public QObject {
  Q_OBJECT
  QML_ELEMENT
  QML_SINGLETON

 public:
  using QObject::QObject;
  // [{kind: "prose" | "code", text, language, closed}]
  Q_INVOKABLE static QVariantList split(const QString& text);
};

}  // namespace kiln::gui
