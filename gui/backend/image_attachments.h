// Images the user attaches to a message: checked when attached (a readable PNG, JPEG or WebP file
// within the size limit), copied into the conversation store when sent, and read back from there
// for the engine each time the conversation is answered.
#pragma once

#include <QCoreApplication>
#include <QList>
#include <QString>
#include <vector>

#include "conversation.h"
#include "conversation_store.h"
#include "kiln/types.h"

namespace kiln::gui {

class ImageAttachments {
  Q_DECLARE_TR_FUNCTIONS(ImageAttachments)

 public:
  // Larger files are refused when attached (the engine's own limit, ImageOptions::max_bytes).
  static constexpr qint64 kMaxBytes = qint64(kiln::ImageOptions{}.max_bytes);

  // "" when `path` is an image the app can attach, else why not (naming the file).
  static QString check(const QString& path);
  // Copies each file into the store's image folder; "" or the first problem (naming the file).
  static QString store(const QStringList& paths, const ConversationStore& store, QList<MessageImage>& out);
  // The message's images with their bytes, for kiln::ChatMessage::images. A file gone from the
  // store becomes an image with no bytes, which the engine refuses naming it.
  static std::vector<kiln::Image> forEngine(const QList<MessageImage>& images, const ConversationStore& store);
};

}  // namespace kiln::gui
