// The Downloads page's controller on the real download code (libcurl) against a hub stand-in on
// 127.0.0.1: listing with sizes, a download whose progress reaches 100 % and lands where the
// Models page looks, cancel then resume from the part file, the hub's refusals in the user's
// language, tokens from Settings, the environment or the token file, retries shown as attempts,
// a download too big for the disk refused before it starts, the listing's commit pinned for the
// download, and the Hugging Face cache: written in its layout when Settings say so, and reused.
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <random>

#include "app_settings.h"
#include "download_controller.h"
#include "gui_test_support.h"
#include "hub_stand_in.h"
#include "model_library.h"
#include "translator.h"

using kiln::gui::AppSettings;
using kiln::gui::DownloadController;
using kiln::test::HubStandIn;

namespace {

std::string randomBytes(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::string s(n, '\0');
  for (char& c : s) c = char(gen() & 0xff);
  return s;
}

QVariantMap fileNamed(const DownloadController& downloads, const QString& path) {
  for (const QVariant& v : downloads.files())
    if (v.toMap().value("path").toString() == path) return v.toMap();
  return {};
}

QByteArray readAll(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

}  // namespace

class TestDownloadController : public QObject {
  Q_OBJECT
  QTemporaryDir home_;
  HubStandIn hub_;
  std::string weights_;  // 1.5 MiB "model"

  // Lists `repo` and waits; true when it was listed.
  static bool listAndWait(DownloadController& downloads, const QString& repo) {
    QSignalSpy listed(&downloads, &DownloadController::listed);
    QSignalSpy failed(&downloads, &DownloadController::listFailed);
    downloads.list(repo);
    if (!QTest::qWaitFor([&] { return !listed.isEmpty() || !failed.isEmpty(); }, 15000)) qWarning("no answer to the listing in 15 s");
    return !listed.isEmpty();
  }

 private slots:
  void initTestCase() {
    QVERIFY(home_.isValid());
    kiln::gui::test::useScratchHome(home_);  // downloads land in <scratch>/data/kiln/models
    qputenv("HOME", home_.path().toUtf8());  // no real token file is ever read
    for (const char* name : {"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_TOKEN_PATH", "HF_HOME", "XDG_CACHE_HOME",
                             "HF_ENDPOINT", "KILN_HF_ENDPOINT", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"})
      qunsetenv(name);
    weights_ = randomBytes(3 << 19, 7);
    hub_.repos["kiln-test/tiny-GGUF"] = {{"README.md", "# tiny\n", false}, {"tiny-Q8_0.gguf", weights_, true}};
    hub_.repos[hub_.gated_repo] = {{"gated-Q8_0.gguf", "GGUF gated", true}};
  }

  void listsFilesWithSizes() {
    DownloadController downloads;
    downloads.setRetryWait(0.01);  // retries wait milliseconds here
    downloads.setEndpoint(QString::fromStdString(hub_.base()));
    QVERIFY(DownloadController::available());
    QVERIFY(listAndWait(downloads, "https://huggingface.co/kiln-test/tiny-GGUF"));  // a hub URL works too
    QCOMPARE(downloads.repo(), QStringLiteral("kiln-test/tiny-GGUF"));
    QCOMPARE(downloads.files().size(), 2);
    QCOMPARE(fileNamed(downloads, "tiny-Q8_0.gguf").value("size").toDouble(), double(weights_.size()));
    QCOMPARE(fileNamed(downloads, "tiny-Q8_0.gguf").value("lfs").toBool(), true);
    QCOMPARE(fileNamed(downloads, "README.md").value("size").toDouble(), 7.0);
    QCOMPARE(fileNamed(downloads, "README.md").value("lfs").toBool(), false);
    QCOMPARE(downloads.suggested(), QStringList{"tiny-Q8_0.gguf"});  // the one GGUF, as `kiln pull` takes
    QCOMPARE(downloads.destination(), home_.path() + "/data/kiln/models/kiln-test/tiny-GGUF");
    QVERIFY(!downloads.busy());
  }

  void downloadReachesHundredPercentAndShowsInModels() {
    DownloadController downloads;
    downloads.setRetryWait(0.01);  // retries wait milliseconds here
    downloads.setEndpoint(QString::fromStdString(hub_.base()));
    QVERIFY(listAndWait(downloads, "kiln-test/tiny-GGUF"));
    QList<double> fractions;
    connect(&downloads, &DownloadController::progressChanged, this, [&] { fractions << downloads.totalFraction(); });
    QSignalSpy done(&downloads, &DownloadController::downloaded);
    QSignalSpy failed(&downloads, &DownloadController::downloadFailed);
    downloads.download({"tiny-Q8_0.gguf"});
    QVERIFY(downloads.downloading());
    QVERIFY(QTest::qWaitFor([&] { return !done.isEmpty() || !failed.isEmpty(); }, 20000));
    QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.first().at(1).toString()));
    QCOMPARE(done.first().at(1).toString(), downloads.destination());
    QVERIFY(!downloads.downloading());
    QCOMPARE(downloads.totalFraction(), 1.0);
    QCOMPARE(downloads.fileFraction(), 1.0);
    QVERIFY(std::is_sorted(fractions.begin(), fractions.end()));  // the bar never goes back
    const QString landed = downloads.destination() + "/tiny-Q8_0.gguf";
    QCOMPARE(readAll(landed), QByteArray::fromStdString(weights_));
    QVERIFY(fileNamed(downloads, "tiny-Q8_0.gguf").value("local").toBool());
    QVERIFY(!fileNamed(downloads, "README.md").value("local").toBool());

    // The Models page's library lists it as downloaded.
    kiln::gui::ModelLibrary library;
    bool listed = false;
    for (int row = 0; row < library.rowCount(); ++row) {
      const QModelIndex at = library.index(row);
      if (library.data(at, kiln::gui::ModelLibrary::PathRole).toString() == landed)
        listed = library.data(at, kiln::gui::ModelLibrary::KindRole).toString() == "downloaded";
    }
    QVERIFY2(listed, qPrintable(landed + " is not in the library"));
  }

  void cancelThenResume() {
    const QString repo = "kiln-test/slow-GGUF";
    const std::string big = randomBytes(2 << 20, 9);
    hub_.repos[repo.toStdString()] = {{"slow-Q8_0.gguf", big, true}};
    hub_.chunk_delay_ms = 30;  // 32 chunks of 64 KiB: about a second in all
    DownloadController downloads;
    downloads.setRetryWait(0.01);  // retries wait milliseconds here
    downloads.setEndpoint(QString::fromStdString(hub_.base()));
    QVERIFY(listAndWait(downloads, repo));
    QSignalSpy done(&downloads, &DownloadController::downloaded);
    QSignalSpy failed(&downloads, &DownloadController::downloadFailed);
    downloads.download({"slow-Q8_0.gguf"});
    QVERIFY(QTest::qWaitFor([&] { return downloads.bytesDone() > 0; }, 10000));
    downloads.cancel();
    QVERIFY(QTest::qWaitFor([&] { return !failed.isEmpty() || !done.isEmpty(); }, 10000));
    QVERIFY(done.isEmpty());
    QVERIFY2(failed.first().at(1).toString().contains("cancelled"), qPrintable(failed.first().at(1).toString()));
    QCOMPARE(downloads.lastError(), failed.first().at(1).toString());
    QVERIFY(!downloads.busy());
    const QString part = downloads.destination() + "/slow-Q8_0.gguf.part";
    const qint64 kept = QFileInfo(part).size();
    QVERIFY2(kept > 0 && kept < qint64(big.size()), qPrintable(QString::number(kept)));
    QVERIFY(!QFileInfo::exists(downloads.destination() + "/slow-Q8_0.gguf"));

    hub_.chunk_delay_ms = 0;
    downloads.download({"slow-Q8_0.gguf"});  // the page's "Resume"
    QVERIFY(QTest::qWaitFor([&] { return !done.isEmpty() || failed.size() > 1; }, 20000));
    QCOMPARE(done.size(), 1);
    QVERIFY(downloads.lastError().isEmpty());
    QCOMPARE(downloads.totalFraction(), 1.0);
    QCOMPARE(readAll(downloads.destination() + "/slow-Q8_0.gguf"), QByteArray::fromStdString(big));
    QVERIFY(!QFileInfo::exists(part));
    // The second request asked only for the rest.
    const std::vector<std::string> ranges = hub_.ranges();
    QVERIFY(!ranges.empty());
    QVERIFY2(ranges.back().rfind("bytes=", 0) == 0 && ranges.back() != "bytes=0-", ranges.back().c_str());
  }

  // Downloads `paths` of the listed repository and waits; "" on success, else the error shown.
  static QString downloadAndWait(DownloadController& downloads, const QStringList& paths) {
    QSignalSpy done(&downloads, &DownloadController::downloaded);
    QSignalSpy failed(&downloads, &DownloadController::downloadFailed);
    downloads.download(paths);
    if (!QTest::qWaitFor([&] { return !done.isEmpty() || !failed.isEmpty(); }, 20000)) return "no answer in 20 s";
    return failed.isEmpty() ? QString() : failed.first().at(1).toString();
  }

  void gatedRepositoryNamesTheLicencePage() {
    DownloadController downloads;
    downloads.setRetryWait(0.01);  // retries wait milliseconds here
    downloads.setEndpoint(QString::fromStdString(hub_.base()));
    QVERIFY(listAndWait(downloads, QString::fromStdString(hub_.gated_repo)));  // listing a gated repo is public
    const QString message = downloadAndWait(downloads, {"gated-Q8_0.gguf"});
    QVERIFY2(message.contains("accept the licence at https://huggingface.co/google/gemma-gated"), qPrintable(message));
    QVERIFY2(message.contains("Settings → Downloads"), qPrintable(message));
    QVERIFY(!message.contains('\n'));
    QCOMPARE(downloads.lastError(), message);
    QVERIFY(!QFileInfo::exists(downloads.destination() + "/gated-Q8_0.gguf.part"));  // no empty part left

    // A typo is not a licence problem, and in German it says so in German.
    kiln::gui::Translator translator;
    translator.setLanguage("de");
    QSignalSpy failed(&downloads, &DownloadController::listFailed);
    QVERIFY(!listAndWait(downloads, "google/gemma-gatde"));
    const QString typo = failed.first().at(1).toString();
    QVERIFY2(typo.contains("wurde nicht gefunden") && typo.contains("google/gemma-gatde"), qPrintable(typo));
    QVERIFY(listAndWait(downloads, QString::fromStdString(hub_.gated_repo)));
    const QString gated = downloadAndWait(downloads, {"gated-Q8_0.gguf"});
    QVERIFY2(gated.contains("Lizenz") && gated.contains("https://huggingface.co/google/gemma-gated"), qPrintable(gated));
    translator.setLanguage("en");
  }

  void settingsTokenOpensGatedRepository() {
    AppSettings settings;  // in the scratch config folder
    DownloadController downloads;
    downloads.setRetryWait(0.01);  // retries wait milliseconds here
    downloads.setEndpoint(QString::fromStdString(hub_.base()));
    downloads.setSettings(&settings);
    settings.setHfToken("hf_wrong");
    QSignalSpy failed(&downloads, &DownloadController::listFailed);
    QVERIFY(!listAndWait(downloads, QString::fromStdString(hub_.gated_repo)));  // the real hub refuses bad tokens everywhere
    QVERIFY2(failed.first().at(1).toString().contains("Your token (from the app's settings) is invalid or expired"),
             qPrintable(failed.first().at(1).toString()));
    QCOMPARE(downloads.tokenSource(), QStringLiteral("the app's settings"));

    settings.setHfToken(QString::fromStdString(hub_.pending_token));
    QVERIFY(listAndWait(downloads, QString::fromStdString(hub_.gated_repo)));
    const QString pending = downloadAndWait(downloads, {"gated-Q8_0.gguf"});
    QVERIFY2(pending.contains("access request for google/gemma-gated is pending"), qPrintable(pending));

    settings.setHfToken(QString::fromStdString(hub_.good_token));
    QCOMPARE(AppSettings().hfToken(), QString::fromStdString(hub_.good_token));  // saved
    QVERIFY(listAndWait(downloads, QString::fromStdString(hub_.gated_repo)));
    QCOMPARE(downloads.files().size(), 1);
    QCOMPARE(downloadAndWait(downloads, {"gated-Q8_0.gguf"}), QString());
    QVERIFY(downloads.lastError().isEmpty());
    QFile::remove(downloads.destination() + "/gated-Q8_0.gguf");

    // An empty field leaves HF_TOKEN from the environment in charge...
    settings.setHfToken("");
    qputenv("HF_TOKEN", (hub_.good_token + "\n").c_str());
    QVERIFY(listAndWait(downloads, QString::fromStdString(hub_.gated_repo)));
    QCOMPARE(downloads.tokenSource(), QStringLiteral("HF_TOKEN"));
    QCOMPARE(downloadAndWait(downloads, {"gated-Q8_0.gguf"}), QString());
    qunsetenv("HF_TOKEN");
    QFile::remove(downloads.destination() + "/gated-Q8_0.gguf");

    // ...and without it, the token file `hf auth login` wrote, as a desktop-launched app needs.
    QDir().mkpath(home_.path() + "/.cache/huggingface");
    const QString tokenFile = home_.path() + "/.cache/huggingface/token";
    QFile file(tokenFile);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(QByteArray::fromStdString(hub_.good_token) + "\n");
    file.close();
    QVERIFY(listAndWait(downloads, QString::fromStdString(hub_.gated_repo)));
    QCOMPARE(downloads.tokenSource(), tokenFile);
    QCOMPARE(downloadAndWait(downloads, {"gated-Q8_0.gguf"}), QString());
    QFile::remove(tokenFile);
    QVERIFY(listAndWait(downloads, "kiln-test/tiny-GGUF"));
    QCOMPARE(downloads.tokenSource(), QString());  // none: public models only
  }

  // Each of the hub's refusals, told apart and said in German, with a token from Settings.
  void everyRefusalInGerman() {
    AppSettings settings;
    DownloadController downloads;
    downloads.setRetryWait(0.01);
    downloads.setEndpoint(QString::fromStdString(hub_.base()));
    downloads.setSettings(&settings);
    kiln::gui::Translator translator;
    translator.setLanguage("de");
    const QString gated = QString::fromStdString(hub_.gated_repo);
    auto refusalFor = [&](const QString& token) {
      settings.setHfToken(token);
      QSignalSpy failed(&downloads, &DownloadController::listFailed);
      if (!listAndWait(downloads, gated)) return failed.isEmpty() ? QString() : failed.first().at(1).toString();
      QFile::remove(downloads.destination() + "/gated-Q8_0.gguf");  // an earlier test's copy would be trusted
      return downloadAndWait(downloads, {"gated-Q8_0.gguf"});
    };
    const QString invalid = refusalFor("hf_stale");
    QVERIFY2(invalid.contains("ist ungültig oder abgelaufen") && !invalid.contains("hf_stale"), qPrintable(invalid));
    const QString licence = refusalFor("hf_no_licence");
    QVERIFY2(licence.contains("Akzeptieren Sie die Lizenz unter https://huggingface.co/google/gemma-gated mit dem Konto Ihres Tokens"),
             qPrintable(licence));
    const QString pending = refusalFor("hf_pending");
    QVERIFY2(pending.contains("Zugriffsanfrage für google/gemma-gated ist noch offen"), qPrintable(pending));
    const QString fine = refusalFor("hf_fine_grained");
    QVERIFY2(fine.contains("Diesem feingranularen Token") && fine.contains("public gated repositories"), qPrintable(fine));
    settings.setHfToken(QString::fromStdString(hub_.good_token));
    QSignalSpy failed(&downloads, &DownloadController::listFailed);
    QVERIFY(!listAndWait(downloads, "google/gemma-gatde"));  // with a token, a typo is a 404
    QVERIFY2(failed.first().at(1).toString().contains("wurde nicht gefunden oder ist für das Konto Ihres Tokens"),
             qPrintable(failed.first().at(1).toString()));
    settings.setHfToken("");
    translator.setLanguage("en");
  }

  void retriesShowTheirAttempts() {
    const QString repo = "kiln-test/flaky-GGUF";
    hub_.repos[repo.toStdString()] = {{"flaky-Q8_0.gguf", randomBytes(100000, 11), true}};
    DownloadController downloads;
    downloads.setRetryWait(0.01);  // retries wait milliseconds here
    downloads.setEndpoint(QString::fromStdString(hub_.base()));
    QVERIFY(listAndWait(downloads, repo));
    int highest = 0;
    QStringList notes;
    connect(&downloads, &DownloadController::progressChanged, this, [&] {
      highest = std::max(highest, downloads.attempt());
      if (!downloads.retryMessage().isEmpty()) notes << downloads.retryMessage();
    });
    hub_.fail_next = {{503, "0"}, {503, "0"}};
    QCOMPARE(downloadAndWait(downloads, {"flaky-Q8_0.gguf"}), QString());
    QCOMPARE(highest, 3);
    QVERIFY2(!notes.isEmpty() && notes.first().contains("HTTP 503") && notes.last().contains("attempt 3 of 5"),
             qPrintable(notes.join(" | ")));
    QVERIFY(downloads.retryMessage().isEmpty());  // gone once it is done
  }

  void tooBigForTheDiskIsRefusedFirst() {
    const QString repo = "kiln-test/huge-GGUF";
    hub_.repos[repo.toStdString()] = {{"huge-Q8_0.gguf", "tiny", true, 1e15}};  // the listing claims a petabyte
    DownloadController downloads;
    downloads.setRetryWait(0.01);  // retries wait milliseconds here
    downloads.setEndpoint(QString::fromStdString(hub_.base()));
    QVERIFY(listAndWait(downloads, repo));
    const size_t requests = hub_.ranges().size();
    const QString message = downloadAndWait(downloads, {"huge-Q8_0.gguf"});
    QVERIFY2(message.startsWith("Not enough free space in " + downloads.destination() + ": the download needs 1"),
             qPrintable(message));
    QCOMPARE(hub_.ranges().size(), requests);  // nothing was fetched
    QVERIFY(!QFileInfo::exists(downloads.destination() + "/huge-Q8_0.gguf.part"));
  }

  // The listing names its commit; a push to main before "Download" does not change what comes.
  void downloadComesFromTheListedCommit() {
    const std::string repo = "kiln-test/moving-GGUF";
    const std::string first = randomBytes(70000, 21), second = randomBytes(70000, 22);
    hub_.repos[repo] = {{"moving-Q8_0.gguf", first, true}};
    DownloadController downloads;
    downloads.setRetryWait(0.01);
    downloads.setEndpoint(QString::fromStdString(hub_.base()));
    QVERIFY(listAndWait(downloads, QString::fromStdString(repo)));
    QCOMPARE(downloads.commit(), QString::fromStdString(hub_.head(repo)));
    hub_.push(repo, {{"moving-Q8_0.gguf", second, true}});
    QCOMPARE(downloadAndWait(downloads, {"moving-Q8_0.gguf"}), QString());
    QCOMPARE(readAll(downloads.destination() + "/moving-Q8_0.gguf"), QByteArray::fromStdString(first));
  }

  // Settings → the shared layout: the file lands in the Hugging Face cache, the Models page lists
  // it from there, and a later download into Kiln's folder links it instead of fetching it.
  void theHuggingFaceCacheIsWrittenAndReused() {
    const QString cache = home_.path() + "/hf-cache";
    qputenv("HF_HUB_CACHE", cache.toUtf8());
    const std::string repo = "kiln-test/shared-GGUF", bytes = randomBytes(90000, 31);
    hub_.repos[repo] = {{"shared-Q8_0.gguf", bytes, true}};
    AppSettings settings;
    settings.setHubSharedCache(true);
    DownloadController downloads;
    downloads.setRetryWait(0.01);
    downloads.setEndpoint(QString::fromStdString(hub_.base()));
    downloads.setSettings(&settings);
    QVERIFY(listAndWait(downloads, QString::fromStdString(repo)));
    QVERIFY(downloads.sharedCache());
    const QString snapshot = cache + "/models--kiln-test--shared-GGUF/snapshots/" + downloads.commit();
    QCOMPARE(downloads.destination(), snapshot);
    QCOMPARE(downloadAndWait(downloads, {"shared-Q8_0.gguf"}), QString());
    QCOMPARE(readAll(snapshot + "/shared-Q8_0.gguf"), QByteArray::fromStdString(bytes));
    QVERIFY(QFileInfo(snapshot + "/shared-Q8_0.gguf").isSymLink());  // to ../../blobs/<sha256>
    QVERIFY(fileNamed(downloads, "shared-Q8_0.gguf").value("local").toBool());
    kiln::gui::ModelLibrary library;
    QStringList cached;
    for (int row = 0; row < library.rowCount(); ++row)
      if (library.data(library.index(row), kiln::gui::ModelLibrary::KindRole).toString() == "hf-cache")
        cached << library.data(library.index(row), kiln::gui::ModelLibrary::PathRole).toString();
    QCOMPARE(cached, QStringList{snapshot + "/shared-Q8_0.gguf"});

    settings.setHubSharedCache(false);
    const size_t fetched = hub_.ranges().size();
    QVERIFY(listAndWait(downloads, QString::fromStdString(repo)));
    QVERIFY(!downloads.sharedCache());
    bool checked = false;  // the page says it is checking the cached copy, not downloading it
    connect(&downloads, &DownloadController::progressChanged, this, [&] { checked |= downloads.verifying(); });
    QCOMPARE(downloadAndWait(downloads, {"shared-Q8_0.gguf"}), QString());
    QVERIFY(checked);
    QVERIFY(!downloads.verifying());
    QCOMPARE(downloads.reusedFiles(), 1);
    QCOMPARE(hub_.ranges().size(), fetched);  // nothing fetched again
    QCOMPARE(readAll(downloads.destination() + "/shared-Q8_0.gguf"), QByteArray::fromStdString(bytes));
    qunsetenv("HF_HUB_CACHE");
  }

  void badReferenceIsOneLine() {
    DownloadController downloads;
    downloads.setRetryWait(0.01);  // retries wait milliseconds here
    downloads.setEndpoint(QString::fromStdString(hub_.base()));
    QSignalSpy failed(&downloads, &DownloadController::listFailed);
    QVERIFY(!listAndWait(downloads, "../etc"));
    QVERIFY(!downloads.lastError().isEmpty());
    QVERIFY(!downloads.lastError().contains('\n'));
    QVERIFY(!downloads.busy());
  }
};

QTEST_GUILESS_MAIN(TestDownloadController)
#include "test_download_controller.moc"
