// Switches the interface language at run time: installs the compiled translation embedded
// under :/i18n and asks the QML engine to re-evaluate every qsTr().
#pragma once

#include <QObject>
#include <QQmlEngine>
#include <QTranslator>
#include <memory>

namespace kiln::gui {

class Translator : public QObject {
  Q_OBJECT
  QML_ELEMENT
  Q_PROPERTY(QString language READ language WRITE setLanguage NOTIFY languageChanged)  // "en", "de"

 public:
  explicit Translator(QObject* parent = nullptr);
  ~Translator() override;

  QString language() const { return language_; }
  void setLanguage(const QString& language);

  // Installs the translation for `language` into the application; false when there is none.
  bool install(const QString& language);

 signals:
  void languageChanged();

 private:
  QString language_;
  std::unique_ptr<QTranslator> translator_;
};

}  // namespace kiln::gui
