#include "model_library.h"

#include <QDir>
#include <QDirIterator>
#include <QFileInfo>
#include <QRegularExpression>
#include <QUrl>

#include <algorithm>
#include <filesystem>

#include "kiln/engine.h"
#ifdef KILN_HAVE_DOWNLOAD
#include "download/hf_cache.h"
#endif

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

// The snapshot folders of the Hugging Face cache worth listing: for each models--OWNER--REPO, the
// commit refs/main names when it is there, else every snapshot. Pairs of (OWNER/REPO, folder).
QList<QPair<QString, QString>> hfCacheSnapshots() {
  QList<QPair<QString, QString>> found;
#ifdef KILN_HAVE_DOWNLOAD
  for (const std::string& cache : kiln::hf_hub_cache_dirs()) {
    const QDir root(QString::fromStdString(cache));
    for (const QString& entry : root.entryList({QStringLiteral("models--*--*")}, QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name)) {
      const QString repo = entry.mid(8).replace(QLatin1String("--"), QLatin1String("/"));
      const QDir repoDir(root.filePath(entry));
      QFile ref(repoDir.filePath(QStringLiteral("refs/main")));
      const QString main = ref.open(QIODevice::ReadOnly) ? QString::fromUtf8(ref.readAll()).trimmed() : QString();
      const QDir snapshots(repoDir.filePath(QStringLiteral("snapshots")));
      if (!main.isEmpty() && snapshots.exists(main)) {
        found.append({repo, snapshots.filePath(main)});
        continue;
      }
      for (const QString& commit : snapshots.entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name))
        found.append({repo, snapshots.filePath(commit)});
    }
  }
#endif
  return found;
}

// The same file under two names (a download hard-linked from the cache, or a symlink to it).
bool sameFile(const QString& a, const QString& b) {
  std::error_code ec;
  return std::filesystem::equivalent(a.toStdString(), b.toStdString(), ec) && !ec;
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
  // Models other tools fetched into the Hugging Face cache: a model folder, or its GGUF files at
  // any depth of the snapshot; a file already listed under another name is left out.
  const QStringList downloaded = seen;
  for (const auto& [repo, snapshot] : hfCacheSnapshots()) {
    if (looksLikeModel(snapshot)) {
      if (!seen.contains(snapshot)) entries_.append({repo, snapshot, QStringLiteral("hf-cache"), true});
      seen << snapshot;
      continue;
    }
    for (const QString& path : ggufModelsUnder(snapshot)) {
      if (seen.contains(path) || std::any_of(downloaded.begin(), downloaded.end(), [&](const QString& d) { return sameFile(d, path); }))
        continue;
      entries_.append({nameOf(path), path, QStringLiteral("hf-cache"), true});
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
