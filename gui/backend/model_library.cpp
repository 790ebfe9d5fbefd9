#include "model_library.h"

#include <QDir>
#include <QDirIterator>
#include <QFileInfo>
#include <QRegularExpression>
#include <QUrl>

#include "kiln/engine.h"

namespace kiln::gui {

namespace {

// The model files among the GGUFs under `folder`, sorted: not a vision projector (mmproj-*), and
// of a file split in parts (NAME-00001-of-00003.gguf) only the first, which names the model.
QStringList ggufModelsUnder(const QString& folder) {
  static const QRegularExpression laterPart(QStringLiteral("-000*([2-9]|[1-9][0-9]+)-of-[0-9]+\\.gguf$"),
                                            QRegularExpression::CaseInsensitiveOption);
  QStringList found;
  QDirIterator it(folder, {QStringLiteral("*.gguf"), QStringLiteral("*.GGUF")}, QDir::Files, QDirIterator::Subdirectories);
  while (it.hasNext()) {
    const QFileInfo file(it.next());
    if (file.fileName().startsWith(QLatin1String("mmproj"), Qt::CaseInsensitive)) continue;
    if (laterPart.match(file.fileName()).hasMatch()) continue;
    found << file.absoluteFilePath();
  }
  found.sort();
  return found;
}

QString nameOf(const QString& path) {
  const QFileInfo info(path);
  return info.isDir() ? info.fileName() : info.completeBaseName();
}

}  // namespace

ModelLibrary::ModelLibrary(QObject* parent)
    : QAbstractListModel(parent), userModelsDir_(QString::fromStdString(kiln::user_models_dir())) {
  refresh();
}

int ModelLibrary::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : static_cast<int>(entries_.size()); }

QVariant ModelLibrary::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount()) return {};
  const Entry& e = entries_.at(index.row());
  switch (role) {
    case NameRole: return e.name;
    case PathRole: return e.path;
    case KindRole: return e.kind;
    case ExistsRole: return e.exists;
    default: return {};
  }
}

QHash<int, QByteArray> ModelLibrary::roleNames() const {
  return {{NameRole, "name"}, {PathRole, "path"}, {KindRole, "kind"}, {ExistsRole, "exists"}};
}

void ModelLibrary::setSettings(AppSettings* settings) {
  if (settings_ == settings) return;
  if (settings_) disconnect(settings_, nullptr, this, nullptr);
  settings_ = settings;
  if (settings_)  // settings change often (window size...): rescan only when the recent list did
    connect(settings_, &AppSettings::changed, this, [this] {
      if (settings_->recentModels() != listedRecent_) refresh();
    });
  refresh();
  emit settingsChanged();
}

bool ModelLibrary::looksLikeModel(const QString& path) {
  const QFileInfo info(path);
  if (info.isDir()) return QFileInfo::exists(QDir(path).filePath(QStringLiteral("config.json")));
  return info.isFile() && info.suffix().compare(QLatin1String("gguf"), Qt::CaseInsensitive) == 0;
}

QString ModelLibrary::toLocalPath(const QString& urlOrPath) {
  const QUrl url(urlOrPath);
  return url.isLocalFile() ? url.toLocalFile() : urlOrPath;
}

void ModelLibrary::refresh() {
  beginResetModel();
  entries_.clear();
  QStringList seen;
  defaultModelPath_ = QString::fromStdString(kiln::default_model_path());
  if (!defaultModelPath_.isEmpty()) {
    entries_.append({nameOf(defaultModelPath_), defaultModelPath_, QStringLiteral("bundled"), true});
    seen << QFileInfo(defaultModelPath_).absoluteFilePath();
  }
  // Downloads: each model is a folder (Hugging Face layout) or a .gguf file, possibly one level down.
  const QDir models(userModelsDir_);
  for (const QFileInfo& item : models.entryInfoList(QDir::Dirs | QDir::Files | QDir::NoDotAndDotDot, QDir::Name)) {
    // Downloads land in OWNER/REPO/, so a GGUF file sits two levels down (OWNER/REPO/x.gguf), or
    // further where a repository keeps each quantization in a folder (OWNER/REPO/Q4_K_M/x.gguf).
    QStringList candidates{item.absoluteFilePath()};
    if (item.isDir() && !looksLikeModel(item.absoluteFilePath()))
      for (const QFileInfo& inner : QDir(item.absoluteFilePath()).entryInfoList(QDir::Dirs | QDir::Files | QDir::NoDotAndDotDot, QDir::Name)) {
        candidates << inner.absoluteFilePath();
        if (inner.isDir() && !looksLikeModel(inner.absoluteFilePath()))
          candidates << ggufModelsUnder(inner.absoluteFilePath());
      }
    for (const QString& path : candidates)
      if (looksLikeModel(path) && !seen.contains(path)) {
        entries_.append({nameOf(path), path, QStringLiteral("downloaded"), true});
        seen << path;
      }
  }
  listedRecent_ = settings_ ? settings_->recentModels() : QStringList();
  for (const QString& path : listedRecent_)
    if (!seen.contains(QFileInfo(path).absoluteFilePath()))
      entries_.append({nameOf(path), path, QStringLiteral("recent"), QFileInfo::exists(path)});
  endResetModel();
  emit refreshed();
}

}  // namespace kiln::gui
