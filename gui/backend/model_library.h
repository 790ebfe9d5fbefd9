// The models the user can pick without browsing: the bundled default, the ones `kiln pull`
// downloaded into the user's model folder, the ones in the Hugging Face cache (other tools'
// downloads, or Kiln's with the shared layout), and recently opened ones.
#pragma once

#include <QAbstractListModel>
#include <QPointer>
#include <QQmlEngine>

#include "app_settings.h"

namespace kiln::gui {

class ModelLibrary : public QAbstractListModel {
  Q_OBJECT
  QML_ELEMENT
  Q_PROPERTY(kiln::gui::AppSettings* settings READ settings WRITE setSettings NOTIFY settingsChanged)
  Q_PROPERTY(QString defaultModelPath READ defaultModelPath NOTIFY refreshed)
  Q_PROPERTY(QString userModelsDir READ userModelsDir CONSTANT)
  Q_PROPERTY(int count READ rowCount NOTIFY refreshed)

 public:
  enum Roles { NameRole = Qt::UserRole + 1, PathRole, KindRole, ExistsRole };

  struct Entry {
    QString name, path;
    QString kind;  // "bundled", "downloaded", "hf-cache", "recent"
    bool exists = true;
  };

  explicit ModelLibrary(QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QHash<int, QByteArray> roleNames() const override;

  AppSettings* settings() const { return settings_; }
  void setSettings(AppSettings* settings);
  QString defaultModelPath() const { return defaultModelPath_; }
  QString userModelsDir() const { return userModelsDir_; }

  Q_INVOKABLE void refresh();
  // A path from a file dialog's URL (or a path already).
  Q_INVOKABLE static QString toLocalPath(const QString& urlOrPath);
  // Whether `path` looks like something the engine opens: a folder with config.json or a .gguf file.
  Q_INVOKABLE static bool looksLikeModel(const QString& path);

 signals:
  void settingsChanged();
  void refreshed();

 private:
  QPointer<AppSettings> settings_;
  QList<Entry> entries_;
  QStringList listedRecent_;  // the settings' recent list this listing was made from
  QString defaultModelPath_, userModelsDir_;
};

}  // namespace kiln::gui
