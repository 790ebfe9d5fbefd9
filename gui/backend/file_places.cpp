#include "file_places.h"

#include <QDir>
#include <QFileInfo>
#include <QUrl>

namespace kiln::gui {

QString FilePlaces::home() { return QDir::homePath(); }

bool FilePlaces::isFolder(const QString& path) { return !path.isEmpty() && QFileInfo(path).isDir(); }

QString FilePlaces::expand(const QString& typed) {
  QString path = typed.trimmed();
  if (path.startsWith(QLatin1String("file:"))) path = QUrl(path).toLocalFile();
  if (path == QLatin1String("~") || path.startsWith(QLatin1String("~/"))) path = QDir::homePath() + path.mid(1);
  return path.isEmpty() ? path : QDir::cleanPath(path);
}

}  // namespace kiln::gui
