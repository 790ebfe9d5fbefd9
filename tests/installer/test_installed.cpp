// Installs the package built by test_installer_package into a scratch root (dpkg-deb -x, no root
// needed), runs the installed programs on the installed model as a user would, checks the menu
// entry, icons and metadata point at what is installed, then removes it all.
#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLibraryInfo>
#include <QRegularExpression>
#include <QSettings>
#include <QTemporaryDir>
#include <QtTest>

#include "installer_support.h"
#include "tokenizer/tokenizer.h"

using namespace kiln::installer_test;

namespace {

QByteArray sha256Of(const QString& path) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) return {};
  QCryptographicHash hash(QCryptographicHash::Sha256);
  hash.addData(&file);
  return hash.result();
}

// How much of an image is not its most common colour, and how many colours it has: a blank or
// single-colour picture has a share near 0 and a handful of colours.
struct ImageVariety {
  double nonBackgroundShare = 0;
  int colours = 0;
};
ImageVariety varietyOf(const QImage& image) {
  QHash<QRgb, qint64> counts;
  const QImage argb = image.convertToFormat(QImage::Format_ARGB32);
  for (int y = 0; y < argb.height(); ++y) {
    const auto* row = reinterpret_cast<const QRgb*>(argb.constScanLine(y));
    for (int x = 0; x < argb.width(); ++x) ++counts[row[x]];
  }
  qint64 most = 0;
  for (qint64 n : counts) most = std::max(most, n);
  const double pixels = double(argb.width()) * argb.height();
  return {pixels > 0 ? 1.0 - double(most) / pixels : 0.0, int(counts.size())};
}

}  // namespace

class InstallerInstalled : public QObject {
  Q_OBJECT
  QString deb_;
  QTemporaryDir scratch_;  // root/ (the installed files) and home/ (the user's files)
  QString root_;
  QProcessEnvironment env_;

  QString installed(const QString& path) const { return root_ + path; }
  ProcessResult kiln(const QStringList& args, int timeoutMs = 60000) const {
    return runProcess(installed(QStringLiteral("/usr/bin/kiln")), args, env_, timeoutMs);
  }

 private slots:
  void initTestCase() {
    deb_ = builtPackage();
    QVERIFY2(!deb_.isEmpty(), "no package: run test_installer_package first (ctest does, as a fixture)");
    QVERIFY(scratch_.isValid());
    root_ = scratch_.filePath(QStringLiteral("root"));
    const ProcessResult x = runProcess(QStringLiteral("dpkg-deb"), {QStringLiteral("-x"), deb_, root_});
    QVERIFY2(x.exitCode == 0, qPrintable(QStringLiteral("dpkg-deb -x: ") + x.describe()));
    // A fresh user: no settings, conversations or remembered model from whoever runs the tests.
    const QString home = scratch_.filePath(QStringLiteral("home"));
    for (const char* dir : {"", "/.config", "/.local/share", "/.cache", "/run"})
      QVERIFY(QDir().mkpath(home + QLatin1String(dir)));
    QFile::setPermissions(home + QStringLiteral("/run"), QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
    env_ = QProcessEnvironment::systemEnvironment();
    env_.insert(QStringLiteral("HOME"), home);
    env_.insert(QStringLiteral("XDG_CONFIG_HOME"), home + QStringLiteral("/.config"));
    env_.insert(QStringLiteral("XDG_DATA_HOME"), home + QStringLiteral("/.local/share"));
    env_.insert(QStringLiteral("XDG_CACHE_HOME"), home + QStringLiteral("/.cache"));
    env_.insert(QStringLiteral("XDG_RUNTIME_DIR"), home + QStringLiteral("/run"));
    env_.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    // The programs were built for /usr; in the scratch root the bundled model is found through this.
    env_.insert(QStringLiteral("KILN_DEFAULT_MODEL"), installed(QStringLiteral("/usr/share/kiln/models/kiln-demo")));
  }

  // The installed model is byte for byte the one the repository bundles.
  void installedModelIsTheBundledModel() {
    const QDir bundled(sourceDir() + QStringLiteral("/resources/models/kiln-demo"));
    const QStringList files = bundled.entryList(QDir::Files);
    QVERIFY2(files.contains(QStringLiteral("model.safetensors")), qPrintable(bundled.path()));
    for (const QString& name : files) {
      const QString copy = installed(QStringLiteral("/usr/share/kiln/models/kiln-demo/") + name);
      QVERIFY2(QFile::exists(copy), qPrintable(copy + QStringLiteral(" is missing")));
      QVERIFY2(sha256Of(copy) == sha256Of(bundled.filePath(name)), qPrintable(copy + QStringLiteral(" differs")));
    }
  }

  void versionIsThePackageVersion() {
    const ProcessResult r = kiln({QStringLiteral("--version")});
    QVERIFY2(r.exitCode == 0, qPrintable(r.describe()));
    QCOMPARE(QString::fromUtf8(r.out).trimmed(),
             QStringLiteral("kiln ") + controlField(deb_, QStringLiteral("Version")));
  }

  // `kiln run` as a user types it (plus a seed, so that a failure can be repeated): the bundled model
  // answers with words. It may end its answer early (end of text), so only a few are required.
  void runAnswersWithTheInstalledModel() {
    const ProcessResult r = kiln({QStringLiteral("run"), QStringLiteral("And God said"), QStringLiteral("-n"),
                                  QStringLiteral("24"), QStringLiteral("--seed"), QStringLiteral("1")});
    QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
    const QString text = QString::fromUtf8(r.out).trimmed();
    qInfo("kiln run: %s", qPrintable(text));
    static const QRegularExpression word(QStringLiteral(R"(\b[A-Za-z]{2,}\b)"));
    QVERIFY2(text.count(word) >= 2, qPrintable(text));
  }

  // Greedy decoding with the installed program and model gives transformers' continuation
  // (tests/data/demo-reference.json), up to the first near-tie in transformers' logits.
  void greedyRunMatchesTransformers() {
    QFile file(QStringLiteral(KILN_TEST_DATA "/demo-reference.json"));
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QJsonObject greedy = QJsonDocument::fromJson(file.readAll()).object()[QStringLiteral("greedy")].toObject();
    const QJsonArray tokens = greedy[QStringLiteral("new_tokens")].toArray();
    const QJsonArray margins = greedy[QStringLiteral("top2_margins")].toArray();
    std::vector<int32_t> trusted;
    while (trusted.size() < size_t(tokens.size()) && margins[qsizetype(trusted.size())].toDouble() > 0.02)
      trusted.push_back(tokens[qsizetype(trusted.size())].toInt());
    QVERIFY(trusted.size() >= 10);
    const auto tokenizer = kiln::Tokenizer::from_file(
        installed(QStringLiteral("/usr/share/kiln/models/kiln-demo/tokenizer.model")).toStdString());
    const QString want = QString::fromStdString(tokenizer.decode(trusted));
    const ProcessResult r =
        kiln({QStringLiteral("run"), greedy[QStringLiteral("prompt")].toString(), QStringLiteral("--temperature"),
              QStringLiteral("0"), QStringLiteral("--precision"), QStringLiteral("f32"), QStringLiteral("--backend"),
              QStringLiteral("cpu"), QStringLiteral("-n"), QString::number(trusted.size())});
    QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
    const QString got = QString::fromUtf8(r.out);
    QVERIFY2(got.startsWith(want), qPrintable(QStringLiteral("got: %1\nwant: %2").arg(got, want)));
  }

  // Every program has a man page, and kiln's page covers every command `kiln --help` lists.
  void manPagesCoverThePrograms() {
    for (const QString& program : QDir(installed(QStringLiteral("/usr/bin"))).entryList(QDir::Files))
      QVERIFY2(QFile::exists(installed(QStringLiteral("/usr/share/man/man1/%1.1.gz").arg(program))),
               qPrintable(program + QStringLiteral(" has no man page")));
    const ProcessResult help = kiln({QStringLiteral("--help")});
    const ProcessResult page =
        runProcess(QStringLiteral("zcat"), {installed(QStringLiteral("/usr/share/man/man1/kiln.1.gz"))});
    QVERIFY2(page.exitCode == 0, qPrintable(page.describe()));
    const QString helpText = QString::fromUtf8(help.out);
    const qsizetype subcommands = helpText.indexOf(QStringLiteral("SUBCOMMANDS:"), 0, Qt::CaseInsensitive);
    QVERIFY2(subcommands >= 0, qPrintable(helpText));
    static const QRegularExpression commandLine(QStringLiteral(R"(^\s{2}([a-z][a-z-]*)\s)"),
                                                QRegularExpression::MultilineOption);
    int commands = 0;
    for (auto it = commandLine.globalMatch(helpText.mid(subcommands)); it.hasNext(); ++commands) {
      const QString command = it.next().captured(1);
      QVERIFY2(page.out.contains(".SS " + command.toUtf8()),
               qPrintable(QStringLiteral("kiln.1 lacks the command ") + command));
    }
    QVERIFY2(commands >= 3, qPrintable(helpText));
#ifdef KILN_EXPECT_DESKTOP
    // kiln-desktop's page covers every option its --help lists.
    const ProcessResult desktopHelp = runProcess(installed(QStringLiteral("/usr/bin/kiln-desktop")), {QStringLiteral("--help")}, env_);
    const ProcessResult desktopPage =
        runProcess(QStringLiteral("zcat"), {installed(QStringLiteral("/usr/share/man/man1/kiln-desktop.1.gz"))});
    QVERIFY2(desktopHelp.exitCode == 0 && desktopPage.exitCode == 0, qPrintable(desktopHelp.describe()));
    static const QRegularExpression longOption(QStringLiteral(R"(^\s+(?:-\w, )?--([a-z][a-z-]*))"),
                                               QRegularExpression::MultilineOption);
    int options = 0;
    for (auto it = longOption.globalMatch(QString::fromUtf8(desktopHelp.out)); it.hasNext(); ++options) {
      const QString option = it.next().captured(1);
      const QByteArray roff = "\\-\\-" + option.toUtf8().replace("-", "\\-");  // --help-all is \-\-help\-all
      QVERIFY2(desktopPage.out.contains(roff), qPrintable(QStringLiteral("kiln-desktop.1 lacks --") + option));
    }
    QVERIFY2(options >= 5, qPrintable(QString::fromUtf8(desktopHelp.out)));
#endif
  }

  // The menu entry starts an installed program and names an installed icon, and the AppStream
  // metadata points at that entry.
  void menuEntryPointsAtInstalledFiles() {
#ifndef KILN_EXPECT_DESKTOP
    QSKIP("kiln-desktop is not built in this tree (no Qt Quick)");
#endif
    const QString desktopFile = installed(QStringLiteral("/usr/share/applications/kiln-desktop.desktop"));
    QSettings entry(desktopFile, QSettings::IniFormat);
    entry.beginGroup(QStringLiteral("Desktop Entry"));
    const QString exec = entry.value(QStringLiteral("Exec")).toString().section(QLatin1Char(' '), 0, 0);
    QVERIFY2(QFileInfo(installed(QStringLiteral("/usr/bin/") + exec)).isExecutable(), qPrintable(exec));
    const QString icon = entry.value(QStringLiteral("Icon")).toString();
    QVERIFY(QFile::exists(installed(QStringLiteral("/usr/share/icons/hicolor/scalable/apps/%1.svg").arg(icon))));
    const ProcessResult validate = runProcess(QStringLiteral("desktop-file-validate"), {desktopFile});
    QVERIFY2(validate.exitCode == 0 && validate.out.isEmpty(),
             qPrintable(QString::fromUtf8(validate.out) + validate.describe()));

    const QString metainfo = installed(QStringLiteral("/usr/share/metainfo/" KILN_APPSTREAM_ID ".metainfo.xml"));
    QFile xml(metainfo);
    QVERIFY(xml.open(QIODevice::ReadOnly));
    const QByteArray text = xml.readAll();
    QVERIFY(text.contains("<id>" KILN_APPSTREAM_ID "</id>"));
    QVERIFY(text.contains("<launchable type=\"desktop-id\">kiln-desktop.desktop</launchable>"));
    QVERIFY(text.contains("<release version=\"" + controlField(deb_, QStringLiteral("Version")).toUtf8() + "\""));
    const ProcessResult appstream =
        runProcess(QStringLiteral("appstreamcli"), {QStringLiteral("validate"), QStringLiteral("--no-net"), metainfo});
    QVERIFY2(appstream.exitCode == 0, qPrintable(QString::fromUtf8(appstream.out) + appstream.describe()));
  }

  // Each PNG size is the size its folder says, and shows the mark (not empty, not a filled square).
  void iconsHaveTheirSizes() {
#ifndef KILN_EXPECT_DESKTOP
    QSKIP("kiln-desktop is not built in this tree (no Qt Quick)");
#endif
    for (int size : {16, 24, 32, 48, 64, 128, 256, 512}) {
      const QImage image(installed(QStringLiteral("/usr/share/icons/hicolor/%1x%1/apps/kiln-desktop.png").arg(size)));
      QCOMPARE(image.size(), QSize(size, size));
      int opaque = 0;
      for (int y = 0; y < size; ++y)
        for (int x = 0; x < size; ++x) opaque += qAlpha(image.pixel(x, y)) > 128;
      const double share = double(opaque) / (size * size);
      QVERIFY2(share > 0.3 && share < 0.95, qPrintable(QStringLiteral("%1 px: %2 opaque").arg(size).arg(share)));
      if (size >= 48) QVERIFY(varietyOf(image).colours > 50);
    }
  }

  // The installed app, started as from the menu but offscreen, opens the bundled model, answers a
  // message and shows it; its screenshot is a real window, not a blank one. Every QML module it
  // loads comes from a package in Depends.
  void desktopAppShowsItsWindow() {
#ifndef KILN_EXPECT_DESKTOP
    QSKIP("kiln-desktop is not built in this tree (no Qt Quick)");
#endif
    // A user who set "Max tokens" to 48 in Settings: keeps the answer short on a busy machine.
    {
      QSettings settings(env_.value(QStringLiteral("XDG_CONFIG_HOME")) + QStringLiteral("/kiln/kiln-desktop.conf"),
                         QSettings::IniFormat);
      settings.setValue(QStringLiteral("sampling/max_tokens"), 48);
    }
    const QString shot = scratch_.filePath(QStringLiteral("window.png"));
    const QString prompt = QStringLiteral("And the light");
    QProcessEnvironment env = env_;
    env.insert(QStringLiteral("QML_IMPORT_TRACE"), QStringLiteral("1"));
    const ProcessResult r =
        runProcess(installed(QStringLiteral("/usr/bin/kiln-desktop")),
                   {QStringLiteral("--prompt"), prompt, QStringLiteral("--screenshot"), shot, QStringLiteral("--quit")},
                   env, 120000);
    const QString out = QString::fromUtf8(r.out);
    QVERIFY2(r.finished && r.exitCode == 0, qPrintable(out.right(2000) + r.describe()));
    QVERIFY2(out.contains(QStringLiteral("kiln-desktop: loaded kiln-demo")), qPrintable(out.right(2000)));
    QVERIFY2(out.contains(QStringLiteral("kiln-desktop: visible-text ") + prompt), qPrintable(out.right(2000)));
    QVERIFY2(out.contains(QStringLiteral("kiln-desktop: screenshot ") + shot), qPrintable(out.right(2000)));
    static const QRegularExpression answer(QStringLiteral(R"(kiln-desktop: answer (\{.*\}))"));
    const auto stats = QJsonDocument::fromJson(answer.match(out).captured(1).toUtf8()).object();
    const int generated = stats[QStringLiteral("generatedTokens")].toInt();
    QVERIFY2(
        generated >= 1 && generated <= 48,
        qPrintable(QStringLiteral("the answer has %1 tokens; the user's max_tokens setting is 48").arg(generated)));

    const QImage image(shot);
    QVERIFY2(!image.isNull(), qPrintable(shot));
    QVERIFY2(image.width() >= 900 && image.height() >= 580,
             qPrintable(QStringLiteral("%1x%2").arg(image.width()).arg(image.height())));
    const ImageVariety variety = varietyOf(image);
    qInfo("window %dx%d: %.1f %% off the background colour, %d colours", image.width(), image.height(),
          100 * variety.nonBackgroundShare, variety.colours);
    QVERIFY2(variety.nonBackgroundShare > 0.05 && variety.colours > 30, "the window looks blank");
    // A copy for people to look at, outside the scratch root that is removed.
    QFile::remove(QStringLiteral(KILN_BINARY_DIR "/installer-test/installed-window.png"));
    QFile::copy(shot, QStringLiteral(KILN_BINARY_DIR "/installer-test/installed-window.png"));

    // QML_IMPORT_TRACE names each module's qmldir as it is imported.
    const QString qmlRoot = QLibraryInfo::path(QLibraryInfo::QmlImportsPath);
    static const QRegularExpression moduleDir(QRegularExpression::escape(qmlRoot) +
                                              QStringLiteral(R"((/[\w/.]+)/qmldir)"));
    QSet<QString> qmldirs;
    for (auto it = moduleDir.globalMatch(QString::fromUtf8(r.err)); it.hasNext();) {
      const QString qmldir = qmlRoot + it.next().captured(1) + QStringLiteral("/qmldir");
      if (QFile::exists(qmldir)) qmldirs.insert(qmldir);
    }
    QVERIFY2(qmldirs.size() >= 3, qPrintable(QStringLiteral("QML_IMPORT_TRACE named too few modules: ") +
                                             QString::fromUtf8(r.err.left(2000))));
    const QStringList depends = packageNames(controlField(deb_, QStringLiteral("Depends")));
    const QStringList paths(qmldirs.cbegin(), qmldirs.cend());
    const ProcessResult owners = runProcess(QStringLiteral("dpkg"), QStringList{QStringLiteral("-S")} + paths);
    for (const QString& line : QString::fromUtf8(owners.out).split(QLatin1Char('\n'), Qt::SkipEmptyParts)) {
      const QString package = line.section(QLatin1Char(':'), 0, 0);
      QVERIFY2(depends.contains(package),
               qPrintable(QStringLiteral("the app loaded %1, but Depends lacks it").arg(line)));
    }
    QVERIFY2(owners.exitCode == 0,
             qPrintable(QStringLiteral("a loaded QML module belongs to no package: ") + owners.describe()));
  }

  // The compiled translations come with the app: in German the navigation reads German.
  void desktopAppSpeaksGerman() {
#ifndef KILN_EXPECT_DESKTOP
    QSKIP("kiln-desktop is not built in this tree (no Qt Quick)");
#endif
    const QString shot = scratch_.filePath(QStringLiteral("window-de.png"));
    const ProcessResult r =
        runProcess(installed(QStringLiteral("/usr/bin/kiln-desktop")),
                   {QStringLiteral("--language"), QStringLiteral("de"), QStringLiteral("--page"),
                    QStringLiteral("settings"), QStringLiteral("--screenshot"), shot, QStringLiteral("--quit")},
                   env_, 60000);
    const QString out = QString::fromUtf8(r.out);
    QVERIFY2(r.finished && r.exitCode == 0, qPrintable(out.right(2000) + r.describe()));
    QVERIFY2(out.contains(QStringLiteral("kiln-desktop: visible-text Einstellungen")), qPrintable(out.right(3000)));
    QVERIFY2(!out.contains(QStringLiteral("kiln-desktop: visible-text Settings\n")), qPrintable(out.right(3000)));
  }

  // Removing the scratch root removes every installed file.
  void cleanupTestCase() {
    if (root_.isEmpty()) return;
    QVERIFY(QDir(root_).removeRecursively());
    QVERIFY(!QFileInfo::exists(installed(QStringLiteral("/usr/bin/kiln"))));
  }
};

QTEST_GUILESS_MAIN(InstallerInstalled)
#include "test_installed.moc"
