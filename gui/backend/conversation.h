// A conversation as the app keeps and saves it. Plain values: the chat controller owns them on
// the GUI thread; the engine sees copies translated to kiln::ChatMessage.
#pragma once

#include <QDateTime>
#include <QList>
#include <QString>
#include <QStringList>
#include <vector>

namespace kiln::gui {

struct MessageStats {
  int promptTokens = 0;
  int generatedTokens = 0;
  double timeToFirstTokenMs = 0;
  double tokensPerSecond = 0;  // decode speed
  double totalMs = 0;
  QString stopReason;          // the engine's name ("end_of_turn", "cancelled", ...)
  QStringList notes;           // what changed during the answer (e.g. NPU attention fell back to the CPU)
  int rolledOff = 0;           // earlier messages the model no longer saw: the conversation outgrew the context
};

// A picture attached to a user message: its bytes live in the store's image folder
// (ConversationStore::imageDirectory()) under `file`, named by their SHA-256, so versions and
// copies of a message share one file.
struct MessageImage {
  QString name;  // the file name it was attached from ("cat.png"): what errors and exports call it
  QString file;  // "<sha256>.png" in the image folder
};

struct Message {
  enum class Role { User, Assistant };
  Role role = Role::User;
  QString text;
  QList<MessageImage> images;  // user messages: shown to the model before the text
  bool hasStats = false;
  MessageStats stats;          // assistant messages, once the answer is complete
  QString error;               // why the answer stopped short, when it failed
  bool streaming = false;      // the answer is still arriving (never saved)
  // Branches: the other versions of this message (the answers before a regenerate, the question
  // before an edit), each with the messages that followed it then, in the order they were made.
  // The version on screen is this message and what follows it in the conversation; `variant` is
  // its place among all versions (0-based; the app shows variant + 1 of others.size() + 1).
  std::vector<std::vector<Message>> others;
  int variant = 0;

  int variantCount() const { return static_cast<int>(others.size()) + 1; }
};

struct Conversation {
  QString id;                  // also the file name: <id>.json
  QString title;
  QString systemPrompt;
  QDateTime created, updated;
  QList<Message> messages;
  // Messages (as the engine counts them) that rolled off the front of the context at the last
  // answer; the next answer starts there too, so the engine reuses its cache. Reset on an edit or
  // a branch switch.
  int rolledOff = 0;
};

}  // namespace kiln::gui
