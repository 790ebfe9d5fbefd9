#include "installer_support.h"

#include <QDir>
#include <QFileInfo>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>

namespace kiln::installer_test {

QString ProcessResult::describe() const {
  if (!started) return QStringLiteral("could not start");
  QString text = finished ? QStringLiteral("exit code %1").arg(exitCode) : QStringLiteral("killed at the time limit");
  const QByteArray tail = err.right(2000).trimmed();
  if (!tail.isEmpty()) text += QStringLiteral("; stderr: ") + QString::fromUtf8(tail);
  return text;
}

ProcessResult runProcess(const QString& program, const QStringList& args, const QProcessEnvironment& env,
                         int timeoutMs) {
  ProcessResult result;
  QProcess process;
  process.setProcessEnvironment(env);
  process.start(program, args);
  result.started = process.waitForStarted(10000);
  if (!result.started) return result;
  process.closeWriteChannel();  // nothing reads stdin; `kiln chat` would otherwise wait
  result.finished = process.waitForFinished(timeoutMs);
  if (!result.finished) {
    process.kill();
    process.waitForFinished(5000);
  }
  result.exitCode = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
  result.out = process.readAllStandardOutput();
  result.err = process.readAllStandardError();
  return result;
}

QString findTool(const QString& name) { return QStandardPaths::findExecutable(name); }

QString packageDir() { return QStringLiteral(KILN_BINARY_DIR "/installer-test/package"); }

QString builtPackage() {
  const QStringList debs = QDir(packageDir()).entryList({QStringLiteral("kiln_*.deb")}, QDir::Files);
  return debs.size() == 1 ? QDir(packageDir()).filePath(debs.first()) : QString();
}

QString sourceDir() { return QFileInfo(QStringLiteral(KILN_TEST_DATA "/../..")).canonicalFilePath(); }

QString controlField(const QString& deb, const QString& field) {
  const ProcessResult r = runProcess(QStringLiteral("dpkg-deb"), {QStringLiteral("--field"), deb, field});
  return r.exitCode == 0 ? QString::fromUtf8(r.out).trimmed() : QString();
}

QStringList packageNames(const QString& relationField) {
  QStringList names;
  static const QRegularExpression separators(QStringLiteral("[,|]"));
  for (QString part : relationField.split(separators, Qt::SkipEmptyParts)) {
    part = part.trimmed();
    part = part.left(part.indexOf(QLatin1Char('('))).trimmed();  // drop "(>= 6.4)"
    part = part.left(part.indexOf(QLatin1Char(':'))).trimmed();  // drop ":any"
    if (!part.isEmpty()) names << part;
  }
  return names;
}

}  // namespace kiln::installer_test
