// The Chat page's logic: conversations (new, select, rename, delete, search), sending, streaming
// the answer into the right conversation, stop, regenerate, edit-and-resend, and saving.
// Lives on the GUI thread; it reaches the engine only through EngineController.
#pragma once

#include <QObject>
#include <QPointer>
#include <QQmlEngine>
#include <QTimer>
#include <QUrl>
#include <memory>
#include <vector>

#include "app_settings.h"
#include "conversation_list_model.h"
#include "conversation_store.h"
#include "engine_controller.h"
#include "message_list_model.h"

namespace kiln::gui {

class ChatController : public QObject {
  Q_OBJECT
  QML_ELEMENT
  Q_PROPERTY(kiln::gui::EngineController* engine READ engine WRITE setEngine NOTIFY engineChanged)
  Q_PROPERTY(kiln::gui::AppSettings* settings READ settings WRITE setSettings NOTIFY settingsChanged)
  Q_PROPERTY(kiln::gui::ConversationListModel* conversations READ conversations CONSTANT)
  Q_PROPERTY(kiln::gui::MessageListModel* messages READ messages CONSTANT)
  Q_PROPERTY(QString currentId READ currentId NOTIFY currentChanged)
  Q_PROPERTY(QString currentTitle READ currentTitle NOTIFY currentChanged)
  Q_PROPERTY(QString systemPrompt READ systemPrompt WRITE setSystemPrompt NOTIFY currentChanged)
  Q_PROPERTY(bool generating READ generating NOTIFY generatingChanged)
  Q_PROPERTY(QStringList storageErrors READ storageErrors NOTIFY storageErrorsChanged)
  Q_PROPERTY(QString lastError READ lastError NOTIFY lastErrorChanged)
  Q_PROPERTY(QString storageDirectory READ storageDirectory CONSTANT)
  // Images waiting for the next message, as file URLs for thumbnails (attachImage adds them).
  Q_PROPERTY(QStringList pendingImages READ pendingImages NOTIFY pendingImagesChanged)

 public:
  // Reads the saved conversations from ConversationStore::defaultDirectory().
  explicit ChatController(QObject* parent = nullptr);
  ChatController(const QString& directory, QObject* parent);
  ~ChatController() override;

  EngineController* engine() const { return engine_; }
  void setEngine(EngineController* engine);
  AppSettings* settings() const { return settings_; }
  void setSettings(AppSettings* settings);
  ConversationListModel* conversations() const { return conversations_; }
  MessageListModel* messages() const { return messages_; }
  QString currentId() const;
  QString currentTitle() const;
  QString systemPrompt() const;
  void setSystemPrompt(const QString& prompt);
  bool generating() const { return active_.id != 0; }
  QStringList storageErrors() const { return storageErrors_; }
  QString lastError() const { return lastError_; }
  QString storageDirectory() const { return store_.directory(); }
  QStringList pendingImages() const;

  // Starts an empty conversation (saved once it has content) and shows it; returns its id.
  Q_INVOKABLE QString newConversation();
  Q_INVOKABLE void select(const QString& id);
  Q_INVOKABLE void rename(const QString& id, const QString& title);
  Q_INVOKABLE void remove(const QString& id);
  // An image file (a path or a file URL, as a file dialog or a drop gives it) for the next message.
  // false (and lastError saying why, naming the file) when it is no PNG, JPEG or WebP file that
  // can be read, or the loaded model cannot see images (the Composer disables attaching then too).
  Q_INVOKABLE bool attachImage(const QVariant& file);
  Q_INVOKABLE void removePendingImage(int index);
  // Each returns false (and sets lastError) when it cannot start an answer now.
  // send: the text with the pending images (either may be empty, not both).
  Q_INVOKABLE bool send(const QString& text);
  Q_INVOKABLE bool regenerate();
  // Both keep what they replace as another version of that message (a branch).
  Q_INVOKABLE bool editAndResend(int row, const QString& text);
  // Shows version `variant` (1-based, as on screen) of the message at `row`, with what followed it.
  Q_INVOKABLE bool switchVariant(int row, int variant);
  Q_INVOKABLE void stop();
  // Export of the conversation on screen; format "markdown" or "json". `file`: a path or a file
  // URL (as a Save dialog gives it); the format's extension is added when the name has none.
  // Returns the path written, or "" with lastError saying why not.
  Q_INVOKABLE QString exportCurrent(const QVariant& file, const QString& format);
  Q_INVOKABLE QString suggestedFileName(const QString& format) const;
  // The suggested name in the user's documents folder, as a file URL for a Save dialog.
  Q_INVOKABLE QUrl suggestedExportFile(const QString& format) const;
  Q_INVOKABLE static QUrl folderOf(const QUrl& file);
  // Reads a conversation Kiln exported as JSON, adds it as a new conversation and shows it.
  // Returns its id, or "" with lastError saying why not.
  Q_INVOKABLE QString importFrom(const QVariant& file);
  Q_INVOKABLE void dismissStorageErrors();

 signals:
  void engineChanged();
  void settingsChanged();
  void currentChanged();
  void generatingChanged();
  void storageErrorsChanged();
  void lastErrorChanged();
  void pendingImagesChanged();
  void answerFinished(const QString& conversationId, const QVariantMap& stats);
  void answerFailed(const QString& conversationId, const QString& message);

 private:
  struct ActiveAnswer {
    quint64 id = 0;            // the engine's generation id; 0: none
    QString conversationId;    // where the text goes, even if another conversation is on screen
  };

  Conversation* find(const QString& id) const;
  Conversation* current() const { return messages_->conversation(); }
  // `answer`: the message the answer streams into (it may carry earlier versions of itself).
  bool startAnswer(Conversation& conversation, Message answer = {});
  // The conversation as the engine takes it: system prompt, then alternating user / model turns.
  std::vector<kiln::ChatMessage> historyFor(const Conversation& conversation) const;
  void onText(const QString& text);
  void flushPendingText();
  void finishAnswer(quint64 id, const kiln::GenerationStats* stats, const QString& error);
  void touchAndSave(Conversation& conversation);
  void setLastError(const QString& message);
  void addStorageError(const QString& message);
  // Every image file the conversations (all their versions) use.
  QSet<QString> imagesInUse() const;
  // Whether an answer can start now; sets lastError to why not.
  bool readyToAnswer();

  ConversationStore store_;
  std::vector<std::unique_ptr<Conversation>> all_;
  ConversationListModel* conversations_;
  MessageListModel* messages_;
  QPointer<EngineController> engine_;
  QPointer<AppSettings> settings_;
  ActiveAnswer active_;
  // Streamed text waiting to be shown: the first piece goes on screen at once, later ones at most
  // every kFlushMs, so a fast model doesn't re-lay-out the whole answer for every token.
  static constexpr int kFlushMs = 40;
  QString pendingText_;
  QTimer flushTimer_;
  QStringList pendingImages_;  // local paths
  QStringList storageErrors_;
  QString lastError_;
};

}  // namespace kiln::gui
