// Helpers the tests share: whole files in and out, the message of an expected kiln::Error, and the
// real `kiln` binary run as a user runs it.
#pragma once

#include <QByteArray>
#include <QFile>
#include <QProcess>
#include <QString>
#include <QStringList>
#include <string>

#include "kiln/types.h"

namespace kiln::test {

inline QByteArray read_file(const QString& path) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) qFatal("cannot read %s", qPrintable(path));
  return file.readAll();
}
inline QByteArray read_file(const std::string& path) { return read_file(QString::fromStdString(path)); }

inline void write_file(const QString& path, const QByteArray& bytes) {
  QFile file(path);
  if (!file.open(QIODevice::WriteOnly) || file.write(bytes) != bytes.size()) qFatal("cannot write %s", qPrintable(path));
}

// The message of the kiln::Error that `action` throws, or "" when it throws none.
template <typename Action>
QString error_of(Action&& action) {
  try {
    action();
  } catch (const kiln::Error& error) {
    return QString::fromStdString(error.what());
  }
  return {};
}

struct CliRun {
  int code;
  QByteArray out, err;
};

// build/core/cli/kiln with `args`, waited for (a hang is a failure of the whole test).
inline CliRun kiln_cli(const QStringList& args, int timeout_ms = 120000) {
  QProcess p;
  p.start(QString(KILN_BINARY_DIR) + "/core/cli/kiln", args);
  if (!p.waitForFinished(timeout_ms)) qFatal("kiln did not finish");
  return {p.exitCode(), p.readAllStandardOutput(), p.readAllStandardError()};
}

}  // namespace kiln::test
