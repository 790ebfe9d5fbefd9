// Conversations on disk: one JSON file per conversation in the user's data folder.
// Writes go through QSaveFile (write a temporary, then rename) and the folder is synced after the
// rename, so a crash, a kill or a power cut in the middle of a save leaves the previous version
// whole. Where the system leaves the temporary behind (a file system without O_TMPFILE), the next
// start finishes the save when the temporary is a whole conversation newer than its file, and
// removes it otherwise. A damaged file (not JSON) is moved aside to NAME.corrupt and reported once;
// a whole file this version cannot read is reported and left for the version that can. Every other
// conversation still loads.
#pragma once

#include <QCoreApplication>
#include <QJsonObject>
#include <QList>
#include <QSet>
#include <QString>
#include <QStringList>

#include "conversation.h"

namespace kiln::gui {

class ConversationStore {
  Q_DECLARE_TR_FUNCTIONS(ConversationStore)

 public:
  // Files bigger than this are refused instead of read: no conversation is that long.
  static constexpr qint64 kMaxFileBytes = 32ll << 20;

  explicit ConversationStore(QString directory);

  // The default place: <AppDataLocation>/conversations (XDG_DATA_HOME moves it, as tests do).
  static QString defaultDirectory();
  static QString newId();

  struct LoadResult {
    QList<Conversation> conversations;
    QStringList errors;  // one line per file that could not be read: "<path>: <problem>"
  };
  LoadResult loadAll() const;

  // Returns "" on success, else one line naming the file and the problem.
  QString save(const Conversation& conversation) const;
  QString remove(const QString& id) const;

  QString directory() const { return directory_; }
  QString pathFor(const QString& id) const;

  // Images of messages: <directory>/images/<sha256>.<suffix>, written once (a crash mid-write
  // leaves no half file under the name). Returns the file name for MessageImage::file, or "" with
  // `error` naming the problem.
  QString saveImage(const QByteArray& bytes, const QString& suffix, QString* error) const;
  QString imageDirectory() const;
  QString imagePath(const QString& file) const;  // "" for a name that is not a plain file name
  // Deletes the image files no conversation uses any more (`used`: every MessageImage::file of the
  // conversations kept), so a deleted conversation's pictures go with it. "" or the first problem.
  QString pruneImages(const QSet<QString>& used) const;

 private:
  QString directory_;
};

QJsonObject conversationToJson(const Conversation& conversation);
// Fills `out` from `json`; returns "" or what is wrong (without the file name).
QString conversationFromJson(const QJsonObject& json, Conversation& out);

}  // namespace kiln::gui
