// Builds the Debian package with cpack from this build tree and checks what apt and dpkg will rely
// on: the name, the control fields, the dependencies (libraries and the QML modules the app
// imports) and where the files go. The package it leaves in packageDir() is the fixture of the
// other installer tests.
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QLibraryInfo>
#include <QRegularExpression>
#include <QSet>
#include <QTemporaryDir>
#include <QtTest>

#include "installer_support.h"

using namespace kiln::installer_test;

namespace {

// Module URIs named by `import` lines of QML files ("import QtQuick.Controls as C" -> QtQuick.Controls).
QSet<QString> importedModules(const QString& qmlText) {
  QSet<QString> modules;
  static const QRegularExpression importLine(QStringLiteral(R"(^\s*import\s+([A-Za-z][\w.]*))"),
                                             QRegularExpression::MultilineOption);
  for (auto it = importLine.globalMatch(qmlText); it.hasNext();) modules.insert(it.next().captured(1));
  return modules;
}

// The package owning each path, from one `dpkg -S` call; paths no package owns are left out.
QHash<QString, QString> owningPackages(const QStringList& paths) {
  QHash<QString, QString> owners;
  if (paths.isEmpty()) return owners;
  const ProcessResult r = runProcess(QStringLiteral("dpkg"), QStringList{QStringLiteral("-S")} + paths);
  for (const QString& line : QString::fromUtf8(r.out).split(QLatin1Char('\n'), Qt::SkipEmptyParts)) {
    const qsizetype colon = line.indexOf(QStringLiteral(": "));
    if (colon < 0) continue;
    QString package = line.left(colon);
    package = package.left(package.indexOf(QLatin1Char(':')));  // drop ":amd64"
    owners.insert(line.mid(colon + 2).trimmed(), package);
  }
  return owners;
}

}  // namespace

class InstallerPackage : public QObject {
  Q_OBJECT
  QString deb_;
  QStringList depends_;
  QTemporaryDir extracted_;

 private slots:
  void initTestCase() {
    for (const char* tool : {"dpkg", "dpkg-deb", "dpkg-shlibdeps", "readelf", "ldd"})
      QVERIFY2(!findTool(QString::fromLatin1(tool)).isEmpty(),
               qPrintable(QStringLiteral("%1 is missing: run scripts/install-deps.sh").arg(QLatin1String(tool))));
    QDir(packageDir()).removeRecursively();
    const ProcessResult cpack =
        runProcess(QStringLiteral(KILN_CPACK_COMMAND),
                   {QStringLiteral("--config"), QStringLiteral(KILN_BINARY_DIR "/CPackConfig.cmake"),
                    QStringLiteral("-G"), QStringLiteral("DEB"), QStringLiteral("-B"), packageDir(),
                    // gzip, not the release's xz: 4x faster here, same contents
                    QStringLiteral("-D"), QStringLiteral("CPACK_DEBIAN_COMPRESSION_TYPE=gzip")},
                   QProcessEnvironment::systemEnvironment(), 240000);
    QVERIFY2(cpack.finished && cpack.exitCode == 0,
             qPrintable(QStringLiteral("cpack: ") + cpack.describe() + QString::fromUtf8(cpack.out.right(2000))));
    deb_ = builtPackage();
    QVERIFY2(!deb_.isEmpty(), qPrintable(QStringLiteral("cpack left no single kiln_*.deb in ") + packageDir()));
    depends_ = packageNames(controlField(deb_, QStringLiteral("Depends")));
    QVERIFY(extracted_.isValid());
    const ProcessResult x = runProcess(QStringLiteral("dpkg-deb"), {QStringLiteral("-x"), deb_, extracted_.path()});
    QVERIFY2(x.exitCode == 0, qPrintable(x.describe()));
  }

  // apt and dpkg find packages by their file name convention: name_version_architecture.deb.
  void fileNameFollowsDebianConvention() {
    const ProcessResult arch = runProcess(QStringLiteral("dpkg"), {QStringLiteral("--print-architecture")});
    const QString expected =
        QStringLiteral("kiln_%1_%2.deb")
            .arg(controlField(deb_, QStringLiteral("Version")), QString::fromUtf8(arch.out).trimmed());
    QCOMPARE(QFileInfo(deb_).fileName(), expected);
    QCOMPARE(controlField(deb_, QStringLiteral("Package")), QStringLiteral("kiln"));
    QCOMPARE(controlField(deb_, QStringLiteral("Architecture")), QString::fromUtf8(arch.out).trimmed());
  }

  // What apt shows: a summary line, a longer text, a maintainer with an address, section, priority.
  void controlFieldsDescribeThePackage() {
    const QStringList description = controlField(deb_, QStringLiteral("Description")).split(QLatin1Char('\n'));
    QVERIFY2(description.size() >= 3, "the description has no extended text");
    QVERIFY2(description.first().size() <= 80, qPrintable(description.first()));
    QVERIFY(!description.first().startsWith(QStringLiteral("kiln"), Qt::CaseInsensitive));  // no package name
    static const QRegularExpression maintainer(QStringLiteral(R"(^[^<>]+ <[^@<>\s]+@[^@<>\s]+\.[a-z]+>$)"));
    QVERIFY2(maintainer.match(controlField(deb_, QStringLiteral("Maintainer"))).hasMatch(),
             qPrintable(controlField(deb_, QStringLiteral("Maintainer"))));
    QVERIFY(!controlField(deb_, QStringLiteral("Section")).isEmpty());
    QVERIFY(!controlField(deb_, QStringLiteral("Priority")).isEmpty());
    QVERIFY(controlField(deb_, QStringLiteral("Installed-Size")).toLongLong() > 0);
    // Vulkan drivers are recommended, not required: the CPU backend runs without them.
    QVERIFY(
        packageNames(controlField(deb_, QStringLiteral("Recommends"))).contains(QStringLiteral("mesa-vulkan-drivers")));
    QVERIFY(!depends_.contains(QStringLiteral("mesa-vulkan-drivers")));
  }

  // Every shared library the installed programs load directly comes from a package in Depends:
  // dpkg-shlibdeps ran and its result reached the control file.
  void librariesOfTheProgramsAreDependencies() {
    QStringList programs = {extracted_.filePath(QStringLiteral("usr/bin/kiln"))};
#ifdef KILN_EXPECT_DESKTOP
    programs << extracted_.filePath(QStringLiteral("usr/bin/kiln-desktop"));
#endif
    static const QRegularExpression needed(QStringLiteral(R"(\(NEEDED\)\s+Shared library: \[([^\]]+)\])"));
    static const QRegularExpression resolved(QStringLiteral(R"(^\s*(\S+) => (/\S+))"),
                                             QRegularExpression::MultilineOption);
    static const QRegularExpression loader(QStringLiteral(R"(^\s*(/\S+) \()"), QRegularExpression::MultilineOption);
    for (const QString& program : programs) {
      const ProcessResult elf = runProcess(QStringLiteral("readelf"), {QStringLiteral("-d"), program});
      const ProcessResult ldd = runProcess(QStringLiteral("ldd"), {program});
      QVERIFY2(elf.exitCode == 0 && ldd.exitCode == 0, qPrintable(program + QStringLiteral(": ") + ldd.describe()));
      QHash<QString, QString> pathOf;
      for (auto it = resolved.globalMatch(QString::fromUtf8(ldd.out)); it.hasNext();) {
        const auto m = it.next();
        pathOf.insert(m.captured(1), m.captured(2));
      }
      for (auto it = loader.globalMatch(QString::fromUtf8(ldd.out)); it.hasNext();) {
        const QString path = it.next().captured(1);  // the dynamic loader: "/lib64/ld-linux-x86-64.so.2 (0x...)"
        pathOf.insert(QFileInfo(path).fileName(), path);
      }
      QStringList paths;
      for (auto it = needed.globalMatch(QString::fromUtf8(elf.out)); it.hasNext();) {
        const QString soname = it.next().captured(1);
        QVERIFY2(pathOf.contains(soname),
                 qPrintable(program + QStringLiteral(" needs ") + soname + QStringLiteral(", which is not found")));
        // dpkg knows a library under the path its package ships, /lib or /usr/lib (merged /usr).
        const QString path = pathOf.value(soname);
        paths << path << (path.startsWith(QStringLiteral("/usr/")) ? path.mid(4) : QStringLiteral("/usr") + path);
      }
      QVERIFY2(paths.size() >= 4, qPrintable(program + QStringLiteral(" links too few libraries to be a real build")));
      const QHash<QString, QString> owners = owningPackages(paths);
      for (qsizetype i = 0; i < paths.size(); i += 2) {
        const QString package = owners.value(paths[i], owners.value(paths[i + 1]));
        QVERIFY2(!package.isEmpty(), qPrintable(QStringLiteral("no package owns ") + paths[i]));
        QVERIFY2(depends_.contains(package), qPrintable(QStringLiteral("%1 loads %2 from %3, which Depends lacks")
                                                            .arg(QFileInfo(program).fileName(), paths[i], package)));
      }
    }
  }

  // QML modules load at run time, out of dpkg-shlibdeps' sight: each one the app's QML imports, and
  // each one those modules import in turn (their qmldir), must come from a package in Depends.
  void qmlModulesTheAppImportsAreDependencies() {
#ifndef KILN_EXPECT_DESKTOP
    QSKIP("kiln-desktop is not built in this tree (no Qt Quick)");
#endif
    QSet<QString> pending;
    QDirIterator qml(sourceDir() + QStringLiteral("/gui"), {QStringLiteral("*.qml")}, QDir::Files,
                     QDirIterator::Subdirectories);
    while (qml.hasNext()) {
      QFile file(qml.next());
      QVERIFY(file.open(QIODevice::ReadOnly));
      pending.unite(importedModules(QString::fromUtf8(file.readAll())));
    }
    QVERIFY2(pending.contains(QStringLiteral("QtQuick")), "found no QML imports in gui/");
    const QString importsDir = QLibraryInfo::path(QLibraryInfo::QmlImportsPath);
    static const QRegularExpression requiredImport(QStringLiteral(R"(^(?:import|depends)\s+([A-Za-z][\w.]*))"),
                                                   QRegularExpression::MultilineOption);
    QSet<QString> seen;
    QStringList qmldirs;
    while (!pending.isEmpty()) {
      const QString uri = *pending.begin();
      pending.erase(pending.begin());
      if (seen.contains(uri) || uri == QStringLiteral("Kiln") || uri.startsWith(QStringLiteral("Kiln.")))
        continue;  // the app's own modules are compiled into kiln-desktop
      seen.insert(uri);
      const QString qmldir = importsDir + QLatin1Char('/') + QString(uri).replace(QLatin1Char('.'), QLatin1Char('/')) +
                             QStringLiteral("/qmldir");
      QFile file(qmldir);
      QVERIFY2(file.open(QIODevice::ReadOnly),
               qPrintable(QStringLiteral("QML module %1 is not installed here (%2)").arg(uri, qmldir)));
      qmldirs << qmldir;
      for (auto it = requiredImport.globalMatch(QString::fromUtf8(file.readAll())); it.hasNext();)
        pending.insert(it.next().captured(1));  // "optional import" lines do not match: those may be absent
    }
    const QHash<QString, QString> owners = owningPackages(qmldirs);
    for (const QString& qmldir : qmldirs) {
      const QString package = owners.value(qmldir);
      QVERIFY2(!package.isEmpty(), qPrintable(QStringLiteral("no package owns ") + qmldir));
      QVERIFY2(depends_.contains(package),
               qPrintable(QStringLiteral("Depends lacks %1 (for %2)").arg(package, qmldir)));
    }
  }

  // A misspelt name in the hand-written lists would make the package uninstallable: every name is
  // installed here (scripts/install-deps.sh) or known to apt.
  void everyRelationNamesARealPackage() {
    const QStringList relations = depends_ + packageNames(controlField(deb_, QStringLiteral("Recommends")));
    QSet<QString> known;
    const ProcessResult installed = runProcess(
        QStringLiteral("dpkg-query"), QStringList{QStringLiteral("-W"), QStringLiteral("-f=${Package}\n")} + relations);
    for (const QString& line : QString::fromUtf8(installed.out).split(QLatin1Char('\n'), Qt::SkipEmptyParts))
      known.insert(line.trimmed());
    QStringList rest;
    for (const QString& name : relations)
      if (!known.contains(name)) rest << name;
    if (!rest.isEmpty()) {  // one apt-cache call: each takes a second or more
      const ProcessResult apt = runProcess(
          QStringLiteral("apt-cache"), QStringList{QStringLiteral("show"), QStringLiteral("--no-all-versions")} + rest);
      for (const QString& line : QString::fromUtf8(apt.out).split(QLatin1Char('\n')))
        if (line.startsWith(QStringLiteral("Package: "))) known.insert(line.mid(9).trimmed());
    }
    for (const QString& name : relations)
      QVERIFY2(known.contains(name), qPrintable(name + QStringLiteral(" is neither installed nor known to apt")));
  }

  // Files land where the system looks for them, with Debian's modes and owner, and nothing of the
  // build (libraries, headers, tests, tools) comes along.
  void filesAreWhereTheSystemLooks() {
    const ProcessResult listing = runProcess(QStringLiteral("dpkg-deb"), {QStringLiteral("--contents"), deb_});
    QVERIFY2(listing.exitCode == 0, qPrintable(listing.describe()));
    QHash<QString, QString> modeOf;  // "./usr/bin/kiln" -> "-rwxr-xr-x"
    for (const QString& line : QString::fromUtf8(listing.out).split(QLatin1Char('\n'), Qt::SkipEmptyParts)) {
      const QStringList cols = line.split(QLatin1Char(' '), Qt::SkipEmptyParts);
      QVERIFY(cols.size() >= 6);
      QCOMPARE(cols[1], QStringLiteral("root/root"));
      QString path = cols[5];
      if (path.endsWith(QLatin1Char('/'))) continue;
      QVERIFY2(path.startsWith(QStringLiteral("./usr/")) && !path.startsWith(QStringLiteral("./usr/local/")),
               qPrintable(path));
      QVERIFY2(!path.endsWith(QStringLiteral(".a")) && !path.endsWith(QStringLiteral(".h")) &&
                   !path.contains(QStringLiteral("/include/")),
               qPrintable(path));
      const bool executable = path.startsWith(QStringLiteral("./usr/bin/"));
      QCOMPARE(cols[0], executable ? QStringLiteral("-rwxr-xr-x") : QStringLiteral("-rw-r--r--"));
      modeOf.insert(path.mid(1), cols[0]);
    }
    QStringList expected = {
        QStringLiteral("/usr/bin/kiln"),
        QStringLiteral("/usr/share/kiln/models/kiln-demo/config.json"),
        QStringLiteral("/usr/share/kiln/models/kiln-demo/generation_config.json"),
        QStringLiteral("/usr/share/kiln/models/kiln-demo/model.safetensors"),
        QStringLiteral("/usr/share/kiln/models/kiln-demo/tokenizer.model"),
        QStringLiteral("/usr/share/doc/kiln/copyright"),
        QStringLiteral("/usr/share/doc/kiln/changelog.gz"),
        QStringLiteral("/usr/share/man/man1/kiln.1.gz"),
    };
#ifdef KILN_EXPECT_DESKTOP
    expected << QStringLiteral("/usr/bin/kiln-desktop") << QStringLiteral("/usr/share/man/man1/kiln-desktop.1.gz")
             << QStringLiteral("/usr/share/applications/kiln-desktop.desktop")
             << QStringLiteral("/usr/share/metainfo/" KILN_APPSTREAM_ID ".metainfo.xml")
             << QStringLiteral("/usr/share/icons/hicolor/scalable/apps/kiln-desktop.svg");
    for (int size : {16, 24, 32, 48, 64, 128, 256, 512})
      expected << QStringLiteral("/usr/share/icons/hicolor/%1x%1/apps/kiln-desktop.png").arg(size);
#endif
    for (const QString& path : expected)
      QVERIFY2(modeOf.contains(path), qPrintable(path + QStringLiteral(" is not in the package")));
    // Only the two programs go to /usr/bin (no test or build tool).
    for (auto it = modeOf.cbegin(); it != modeOf.cend(); ++it)
      if (it.key().startsWith(QStringLiteral("/usr/bin/")))
        QVERIFY2(expected.contains(it.key()), qPrintable(it.key() + QStringLiteral(" should not be installed")));
  }
};

QTEST_GUILESS_MAIN(InstallerPackage)
#include "test_package.moc"
