// A conversation out of the app and back: Markdown to read or share, and Kiln's own JSON (the
// saved format, branches included) that the app imports again.
#pragma once

#include <QCoreApplication>
#include <QString>

#include "conversation.h"

namespace kiln::gui {

class ConversationExport {
  Q_DECLARE_TR_FUNCTIONS(ConversationExport)

 public:
  enum class Format { Markdown, Json };

  // The title, a system prompt if there is one, then each message of the branch on screen under
  // a heading saying who wrote it.
  static QString toMarkdown(const Conversation& conversation);

  // "Title.md" / "Title.json": the title without characters file systems refuse.
  static QString suggestedFileName(const Conversation& conversation, Format format);
  // `path` with the format's extension when it has none of its own (a typed name without ".md").
  static QString withExtension(const QString& path, Format format);

  // Returns the path written ("" on failure, with `error` set).
  static QString write(const Conversation& conversation, const QString& path, Format format, QString& error);
  // Reads a conversation Kiln exported (or saved); "" or what is wrong, naming the file.
  static QString read(const QString& path, Conversation& out);
};

}  // namespace kiln::gui
