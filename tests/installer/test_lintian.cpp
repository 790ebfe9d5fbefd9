// lintian, Debian's package checker, on the package built by test_installer_package: no errors and
// no warnings. Informational tags are printed, not failed on; installer/README.md says why each
// one that shows up on a test build is left.
#include <QRegularExpression>
#include <QtTest>

#include "installer_support.h"

using namespace kiln::installer_test;

class InstallerLintian : public QObject {
  Q_OBJECT

 private slots:
  void lintianFindsNoErrorsOrWarnings() {
    const QString lintian = findTool(QStringLiteral("lintian"));
    QVERIFY2(!lintian.isEmpty(), "lintian is missing: run scripts/install-deps.sh");
    const QString deb = builtPackage();
    QVERIFY2(!deb.isEmpty(), "no package: run test_installer_package first (ctest does, as a fixture)");
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("LC_ALL"), QStringLiteral("C.UTF-8"));
    // --no-cfg: the checks of this Debian release, not a user's ~/.config/lintian/lintianrc.
    const ProcessResult r = runProcess(
        lintian, {QStringLiteral("--no-cfg"), QStringLiteral("--display-level"), QStringLiteral(">=info"), deb}, env,
        180000);
    QVERIFY2(r.finished, "lintian did not finish");
    const QString report = QString::fromUtf8(r.out);
    if (!report.trimmed().isEmpty()) qInfo("lintian:\n%s", qPrintable(report.trimmed()));
    // Exit 0 or 2 ("policy violations found"); anything else means lintian itself failed.
    QVERIFY2(r.exitCode == 0 || r.exitCode == 2, qPrintable(r.describe()));
    static const QRegularExpression tagLine(QStringLiteral(R"(^([EW]): kiln[^:]*: (\S+))"),
                                            QRegularExpression::MultilineOption);
    QStringList errors, warnings;
    for (auto it = tagLine.globalMatch(report); it.hasNext();) {
      const auto m = it.next();
      (m.captured(1) == QStringLiteral("E") ? errors : warnings) << m.captured(2);
    }
    QVERIFY2(errors.isEmpty(), qPrintable(QStringLiteral("lintian errors: ") + errors.join(QStringLiteral(", "))));
    QVERIFY2(warnings.isEmpty(),
             qPrintable(QStringLiteral("lintian warnings: ") + warnings.join(QStringLiteral(", "))));
  }
};

QTEST_GUILESS_MAIN(InstallerLintian)
#include "test_lintian.moc"
