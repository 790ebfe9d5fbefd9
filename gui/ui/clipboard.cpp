#include "clipboard.h"

#include <QClipboard>
#include <QGuiApplication>

namespace kiln::gui {

void Clipboard::copy(const QString& text) { QGuiApplication::clipboard()->setText(text); }

QString Clipboard::text() { return QGuiApplication::clipboard()->text(); }

}  // namespace kiln::gui
