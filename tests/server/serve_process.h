// `kiln serve` as a user starts it, for the tests that check the command itself (targets that
// define KILN_CLI_PATH): a free loopback port, the port read from what it prints.
#pragma once

#include <QByteArray>
#include <QElapsedTimer>
#include <QProcess>
#include <QRegularExpression>
#include <QStringList>
#include <string>

namespace kiln::test {

// Starts `kiln serve` for `model` (CPU, F32, a 256-token context, one thread) with `extra` flags and
// returns the port it reports serving on, loopback only; 0 when it did not start within 30 s.
inline int start_serve(QProcess& process, const std::string& model, const QStringList& extra = {}) {
  process.setProgram(KILN_CLI_PATH);
  process.setArguments(QStringList{"serve", "--model", QString::fromStdString(model), "--backend", "cpu", "--precision",
                                   "f32", "--ctx", "256", "--threads", "1", "--port", "0"} + extra);
  process.start();
  if (!process.waitForStarted(10000)) return 0;
  QByteArray out;
  QElapsedTimer timer;
  timer.start();
  const QRegularExpression listening(R"(Serving \S+ at http://127\.0\.0\.1:(\d+)/v1 \(loopback only)");
  while (timer.elapsed() < 30000) {
    process.waitForReadyRead(200);
    out += process.readAllStandardOutput();
    if (auto m = listening.match(QString::fromUtf8(out)); m.hasMatch()) return m.captured(1).toInt();
    if (process.state() == QProcess::NotRunning) break;
  }
  qWarning("kiln serve said: %s %s", out.constData(), process.readAllStandardError().constData());
  return 0;
}

}  // namespace kiln::test
