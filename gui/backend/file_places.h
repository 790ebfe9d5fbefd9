// What the model picker asks of the file system: whether a typed path is a folder, and the home
// folder that "~" stands for.
#pragma once

#include <QObject>
#include <QQmlEngine>

namespace kiln::gui {

class FilePlaces : public QObject {
  Q_OBJECT
  QML_ELEMENT
  QML_SINGLETON

 public:
  using QObject::QObject;
  Q_INVOKABLE static QString home();
  Q_INVOKABLE static bool isFolder(const QString& path);
  // A typed path as the engine takes it: "~/x" under home, "file://" URLs as paths, no trailing "/".
  Q_INVOKABLE static QString expand(const QString& typed);
};

}  // namespace kiln::gui
