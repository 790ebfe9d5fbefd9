#include "translator.h"

#include <QCoreApplication>
#include <QLocale>

namespace kiln::gui {

Translator::Translator(QObject* parent) : QObject(parent) {}

Translator::~Translator() {
  if (translator_) QCoreApplication::removeTranslator(translator_.get());
}

bool Translator::install(const QString& language) {
  if (translator_) {
    QCoreApplication::removeTranslator(translator_.get());
    translator_.reset();
  }
  auto translator = std::make_unique<QTranslator>();
  if (!translator->load(QStringLiteral(":/i18n/kiln_%1.qm").arg(language))) return false;
  QCoreApplication::installTranslator(translator.get());
  translator_ = std::move(translator);
  return true;
}

void Translator::setLanguage(const QString& language) {
  if (language_ == language) return;
  language_ = language;
  QLocale::setDefault(QLocale(language));  // numbers and sizes follow the interface language
  if (!install(language) && language != QLatin1String("en"))
    qWarning("Translator: no translation for \"%s\"", qPrintable(language));
  if (QQmlEngine* engine = qmlEngine(this)) engine->retranslate();
  emit languageChanged();
}

}  // namespace kiln::gui
