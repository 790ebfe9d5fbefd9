// A conversation as the app keeps and saves it. Plain values: the chat controller owns them on
// the GUI thread; the engine sees copies translated to kiln::ChatMessage.
#pragma once

#include <QDateTime>
#include <QList>
#include <QString>
#include <QStringList>

namespace kiln::gui {

struct MessageStats {
  int promptTokens = 0;
  int generatedTokens = 0;
  double timeToFirstTokenMs = 0;
  double tokensPerSecond = 0;  // decode speed
  double totalMs = 0;
  QString stopReason;          // the engine's name ("end_of_turn", "cancelled", ...)
  QStringList notes;           // what changed during the answer (e.g. NPU attention fell back to the CPU)
};

struct Message {
  enum class Role { User, Assistant };
  Role role = Role::User;
  QString text;
  bool hasStats = false;
  MessageStats stats;          // assistant messages, once the answer is complete
  QString error;               // why the answer stopped short, when it failed
  bool streaming = false;      // the answer is still arriving (never saved)
};

struct Conversation {
  QString id;                  // also the file name: <id>.json
  QString title;
  QString systemPrompt;
  QDateTime created, updated;
  QList<Message> messages;
};

}  // namespace kiln::gui
