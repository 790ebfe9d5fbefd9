#include "format.h"

#include <QLocale>
#include <cmath>

namespace kiln::gui {

namespace {
// The default locale follows the interface language (the Translator sets it).
QLocale uiLocale() { return QLocale(); }
}  // namespace

QString Format::bytes(double count) {
  return uiLocale().formattedDataSize(static_cast<qint64>(count), count >= 1024.0 * 1024 * 1024 ? 2 : 1,
                                      QLocale::DataSizeIecFormat);
}

QString Format::count(double value) {
  static const char* const suffixes[] = {"", " k", " M", " B", " T"};
  int step = 0;
  while (std::abs(value) >= 1000 && step < 4) {
    value /= 1000;
    ++step;
  }
  return uiLocale().toString(value, 'f', step == 0 || value >= 100 ? 0 : 1) + QLatin1String(suffixes[step]);
}

QString Format::milliseconds(double ms) {
  if (ms < 1000) return uiLocale().toString(ms, 'f', ms < 10 ? 1 : 0) + QStringLiteral(" ms");
  return uiLocale().toString(ms / 1000, 'f', 1) + QStringLiteral(" s");
}

QString Format::number(double value, int decimals) { return uiLocale().toString(value, 'f', decimals); }

}  // namespace kiln::gui
