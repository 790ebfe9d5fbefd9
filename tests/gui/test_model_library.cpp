// The Models page's library finds what downloads leave in the user's models folder: Hugging Face
// folders, GGUF files two levels down (OWNER/REPO/x.gguf), and GGUFs a repository keeps in a folder
// per quantization, without vision projectors or the later parts of a split file.
#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

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
};

QTEST_MAIN(TestModelLibrary)
#include "test_model_library.moc"
