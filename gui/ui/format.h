// Numbers as people read them, in the interface's language: "1.5 GiB", "268 M", "12.3 tokens/s".
#pragma once

#include <QObject>
#include <QQmlEngine>

namespace kiln::gui {

class Format : public QObject {
  Q_OBJECT
  QML_ELEMENT
  QML_SINGLETON

 public:
  using QObject::QObject;
  Q_INVOKABLE static QString bytes(double count);
  Q_INVOKABLE static QString count(double value);       // 1.2 k, 268 M, 27.0 B
  Q_INVOKABLE static QString milliseconds(double ms);   // 840 ms, 2.4 s
  Q_INVOKABLE static QString number(double value, int decimals);
};

}  // namespace kiln::gui
