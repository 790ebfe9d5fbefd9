// The Models page's library finds what downloads leave in the user's models folder: Hugging Face
// folders, GGUF files two levels down (OWNER/REPO/x.gguf), and GGUFs a repository keeps in a folder
// per quantization, without vision projectors or the later parts of a split file; and the models
// other tools left in the Hugging Face cache (snapshot links to blobs), each listed once.
#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>
#include <filesystem>

#include "gui_test_support.h"
#include "model_library.h"

using namespace kiln::gui;

namespace {

void touch(const QString& path) {
  QDir().mkpath(QFileInfo(path).absolutePath());
  QFile f(path);
  QVERIFY(f.open(QIODevice::WriteOnly));
  f.write("GGUF");
}

}  // namespace

class TestModelLibrary : public QObject {
  Q_OBJECT
 private slots:
  void findsDownloadsWhereTheyLand() {
    QTemporaryDir home;
    test::useScratchHome(home);
    const QString models = home.path() + "/data/kiln/models";
    touch(models + "/org/tiny-GGUF/tiny-Q8_0.gguf");
    touch(models + "/org/tiny-GGUF/mmproj-tiny-F16.gguf");
    touch(models + "/org/big-GGUF/Q4_K_M/big-Q4_K_M-00001-of-00002.gguf");
    touch(models + "/org/big-GGUF/Q4_K_M/big-Q4_K_M-00002-of-00002.gguf");
    touch(models + "/org/big-GGUF/BF16/deeper/big-BF16.gguf");
    touch(models + "/org/folder-model/config.json");

    ModelLibrary library;
    QStringList downloaded;
    for (int row = 0; row < library.rowCount(); ++row) {
      const QModelIndex at = library.index(row);
      if (library.data(at, ModelLibrary::KindRole).toString() == "downloaded")
        downloaded << QDir(models).relativeFilePath(library.data(at, ModelLibrary::PathRole).toString());
    }
    downloaded.sort();
    QCOMPARE(downloaded, QStringList({"org/big-GGUF/BF16/deeper/big-BF16.gguf", "org/big-GGUF/Q4_K_M/big-Q4_K_M-00001-of-00002.gguf",
                                      "org/folder-model", "org/tiny-GGUF/tiny-Q8_0.gguf"}));
  }

  void findsModelsInTheHuggingFaceCache() {
#ifndef KILN_HAVE_DOWNLOAD
    QSKIP("this build has no downloader, so no Hugging Face cache lookup");
#endif
    QTemporaryDir home;
    test::useScratchHome(home);
    qputenv("HOME", home.path().toUtf8());
    const QString cache = home.path() + "/hf";
    qputenv("HF_HUB_CACHE", cache.toUtf8());
    namespace fs = std::filesystem;
    const QString commit(40, 'a'), old(40, 'b');
    // A GGUF repository as huggingface_hub or llama.cpp leaves it: a quantization in a subfolder,
    // a vision projector, and refs/main naming the current snapshot (an older one stays behind).
    const QString gguf = cache + "/models--org--tiny-GGUF";
    touch(gguf + "/blobs/1111");
    touch(gguf + "/blobs/2222");
    QDir().mkpath(gguf + "/snapshots/" + commit + "/Q4_K_M");
    fs::create_symlink("../../../blobs/1111", (gguf + "/snapshots/" + commit + "/Q4_K_M/tiny-Q4_K_M.gguf").toStdString());
    fs::create_symlink("../../blobs/2222", (gguf + "/snapshots/" + commit + "/mmproj-tiny-F16.gguf").toStdString());
    touch(gguf + "/snapshots/" + old + "/tiny-old.gguf");
    touch(gguf + "/refs/main");
    QFile ref(gguf + "/refs/main");
    QVERIFY(ref.open(QIODevice::WriteOnly));
    ref.write(commit.toUtf8());
    ref.close();
    touch(cache + "/models--org--folder-model/snapshots/" + commit + "/config.json");
    // A Kiln download hard-linked from the cache is listed once, as a download.
    const QString blob = cache + "/models--org--linked-GGUF/blobs/3333";
    touch(blob);
    QDir().mkpath(cache + "/models--org--linked-GGUF/snapshots/" + commit);
    fs::create_symlink("../../blobs/3333", (cache + "/models--org--linked-GGUF/snapshots/" + commit + "/linked.gguf").toStdString());
    const QString models = home.path() + "/data/kiln/models";
    QDir().mkpath(models + "/org/linked-GGUF");
    fs::create_hard_link(blob.toStdString(), (models + "/org/linked-GGUF/linked.gguf").toStdString());

    ModelLibrary library;
    QStringList cached, downloaded;
    for (int row = 0; row < library.rowCount(); ++row) {
      const QModelIndex at = library.index(row);
      const QString kind = library.data(at, ModelLibrary::KindRole).toString();
      const QString entry = library.data(at, ModelLibrary::NameRole).toString() + " " +
                            QDir(cache).relativeFilePath(library.data(at, ModelLibrary::PathRole).toString());
      if (kind == "hf-cache") cached << entry;
      if (kind == "downloaded") downloaded << entry;
    }
    cached.sort();
    QCOMPARE(cached, QStringList({"org/folder-model models--org--folder-model/snapshots/" + commit,
                                  "tiny-Q4_K_M models--org--tiny-GGUF/snapshots/" + commit + "/Q4_K_M/tiny-Q4_K_M.gguf"}));
    QCOMPARE(downloaded.size(), 1);
    qunsetenv("HF_HUB_CACHE");
  }
};

QTEST_MAIN(TestModelLibrary)
#include "test_model_library.moc"
