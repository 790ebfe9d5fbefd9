// Copy buttons need the system clipboard, which QML cannot reach on its own.
#pragma once

#include <QObject>
#include <QQmlEngine>

namespace kiln::gui {

class Clipboard : public QObject {
  Q_OBJECT
  QML_ELEMENT
  QML_SINGLETON

 public:
  using QObject::QObject;
  Q_INVOKABLE static void copy(const QString& text);
  Q_INVOKABLE static QString text();
};

}  // namespace kiln::gui
