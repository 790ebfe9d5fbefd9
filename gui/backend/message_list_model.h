// The messages of the conversation on screen. A view over one Conversation owned by the chat
// controller; every change to that conversation's messages goes through here so QML hears it.
#pragma once

#include <QAbstractListModel>
#include <QQmlEngine>

#include "conversation.h"

namespace kiln::gui {

class MessageListModel : public QAbstractListModel {
  Q_OBJECT
  QML_ELEMENT
  QML_UNCREATABLE("Owned by ChatController")
  Q_PROPERTY(int count READ rowCount NOTIFY countChanged)

 public:
  enum Roles {
    RoleRole = Qt::UserRole + 1,  // "user" or "assistant"
    TextRole,
    StreamingRole,
    HasStatsRole,
    GeneratedTokensRole,
    TimeToFirstTokenRole,
    TokensPerSecondRole,
    StopReasonRole,
    ErrorRole,
    NotesRole,  // QStringList: the engine's notes on this answer
    VariantRole,       // 1-based: which version of this message is on screen
    VariantCountRole,  // how many versions it has (1: no branches)
    RolledOffRole,     // earlier messages the model no longer saw for this answer
    ImagesRole,        // QStringList: file URLs of the message's images (thumbnails)
    ImageNamesRole,    // QStringList: the names they were attached as
  };

  explicit MessageListModel(QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QHash<int, QByteArray> roleNames() const override;

  Conversation* conversation() const { return conversation_; }
  void setConversation(Conversation* conversation);  // nullptr: nothing on screen
  // Where MessageImage::file names live (ConversationStore::imageDirectory()).
  void setImageDirectory(const QString& directory) { imageDirectory_ = directory; }

  void append(const Message& message);
  void appendText(int row, const QString& text);  // the streaming path: only the text role changes
  void changed(int row);                          // anything else about the row changed
  void truncate(int fromRow);                     // drop rows fromRow..end
  void replaceFrom(int fromRow, const QList<Message>& tail);  // rows fromRow..end become `tail`

  Q_INVOKABLE QString textAt(int row) const;

 signals:
  void countChanged();

 private:
  Conversation* conversation_ = nullptr;
  QString imageDirectory_;
};

}  // namespace kiln::gui
