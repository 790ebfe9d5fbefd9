// Shared by the installer tests: running the Debian tools, and where the package under test lies.
// test_installer_package builds the .deb once (a ctest fixture); the other tests read it.
#pragma once

#include <QByteArray>
#include <QProcessEnvironment>
#include <QString>
#include <QStringList>

namespace kiln::installer_test {

struct ProcessResult {
  bool started = false;
  bool finished = false;  // false: killed at the time limit
  int exitCode = -1;
  QByteArray out, err;
  QString describe() const;  // exit status and the tail of stderr, for failure messages
};

// Runs `program args` to completion (or kills it after timeoutMs).
ProcessResult runProcess(const QString& program, const QStringList& args,
                         const QProcessEnvironment& env = QProcessEnvironment::systemEnvironment(),
                         int timeoutMs = 120000);

// The full path of a tool on PATH, or "" (the test then fails and names scripts/install-deps.sh).
QString findTool(const QString& name);

QString packageDir();    // <build>/installer-test/package: cpack's output
QString builtPackage();  // the one kiln_*.deb in packageDir(), or ""
QString sourceDir();     // the repository root

// One control field of a .deb (dpkg-deb --field), trimmed; "" when absent.
QString controlField(const QString& deb, const QString& field);
// The package names a Depends-style field names, alternatives included, without versions.
QStringList packageNames(const QString& relationField);

}  // namespace kiln::installer_test
