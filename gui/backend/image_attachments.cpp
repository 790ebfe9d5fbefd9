#include "image_attachments.h"

#include <QFile>
#include <QFileInfo>
#include <QImageReader>

namespace kiln::gui {

namespace {

// The format the file's bytes announce (not its name): "png", "jpeg", "webp", or "" for others.
QString imageFormat(const QString& path) {
  QImageReader reader(path);
  reader.setDecideFormatFromContent(true);
  const QString format = QString::fromLatin1(reader.format()).toLower();
  if (format == QLatin1String("png") || format == QLatin1String("webp")) return format;
  if (format == QLatin1String("jpeg") || format == QLatin1String("jpg")) return QStringLiteral("jpeg");
  // Qt may lack a WebP plugin; the engine's decoder reads WebP by itself.
  QFile file(path);
  if (file.open(QIODevice::ReadOnly)) {
    const QByteArray head = file.read(12);
    if (head.size() == 12 && head.startsWith("RIFF") && head.mid(8, 4) == "WEBP") return QStringLiteral("webp");
  }
  return {};
}

}  // namespace

QString ImageAttachments::check(const QString& path) {
  const QFileInfo info(path);
  const QString name = info.fileName().isEmpty() ? path : info.fileName();
  if (!info.exists()) return tr("%1: the file does not exist").arg(path);
  if (!info.isFile()) return tr("%1: not a file").arg(path);
  if (!info.isReadable()) return tr("%1: the file cannot be read").arg(path);
  if (info.size() == 0) return tr("%1: the file is empty").arg(name);
  if (info.size() > kMaxBytes)
    return tr("%1: the image is larger than %2 MiB").arg(name).arg(kMaxBytes >> 20);
  if (imageFormat(path).isEmpty()) return tr("%1: not a PNG, JPEG or WebP image").arg(name);
  return {};
}

QString ImageAttachments::store(const QStringList& paths, const ConversationStore& store, QList<MessageImage>& out) {
  for (const QString& path : paths) {
    if (const QString problem = check(path); !problem.isEmpty()) return problem;
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) return tr("%1: the file cannot be read (%2)").arg(path, file.errorString());
    const QByteArray bytes = file.readAll();
    QString error;
    const QString stored = store.saveImage(bytes, imageFormat(path) == QLatin1String("jpeg") ? QStringLiteral("jpg")
                                                                                            : imageFormat(path), &error);
    if (stored.isEmpty()) return error;
    out << MessageImage{QFileInfo(path).fileName(), stored};
  }
  return {};
}

std::vector<kiln::Image> ImageAttachments::forEngine(const QList<MessageImage>& images, const ConversationStore& store) {
  std::vector<kiln::Image> out;
  for (const MessageImage& image : images) {
    kiln::Image one;
    one.name = image.name.toStdString();
    QFile file(store.imagePath(image.file));
    if (file.open(QIODevice::ReadOnly)) one.bytes = file.readAll().toStdString();
    out.push_back(std::move(one));
  }
  return out;
}

}  // namespace kiln::gui
