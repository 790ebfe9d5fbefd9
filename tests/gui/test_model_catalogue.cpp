// The catalogue of released Gemma 3 models: what it knows without a network (every size, IT and
// QAT, memory at each precision, what fits), that offline it keeps the list and says the hub
// cannot be reached, and that a hub (a loopback stand-in) replaces estimates with real sizes.
#include <QSignalSpy>
#include <QTest>

#include "hub_stand_in.h"
#include "model_catalogue.h"

using kiln::gui::ModelCatalogue;

namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

int rowOf(const ModelCatalogue& catalogue, const QString& repo) {
  for (int i = 0; i < catalogue.rowCount(); ++i)
    if (catalogue.index(i).data(ModelCatalogue::RepoRole).toString() == repo) return i;
  return -1;
}

QVariant at(const ModelCatalogue& catalogue, const QString& repo, int role) {
  return catalogue.index(rowOf(catalogue, repo)).data(role);
}

}  // namespace

class TestModelCatalogue : public QObject {
  Q_OBJECT

 private slots:
  void knowsTheReleasedModelsOffline() {
    ModelCatalogue catalogue;
    QStringList names;
    for (int i = 0; i < catalogue.rowCount(); ++i) names << catalogue.index(i).data(ModelCatalogue::NameRole).toString();
    for (const char* size : {"270M", "1B", "4B", "12B", "27B"}) {
      QVERIFY2(names.contains(QStringLiteral("Gemma 3 %1 IT").arg(size)), qPrintable(names.join(", ")));
      QVERIFY2(names.contains(QStringLiteral("Gemma 3 %1 IT QAT").arg(size)), qPrintable(names.join(", ")));
    }
    QVERIFY(rowOf(catalogue, "google/gemma-3-27b-it-qat-q4_0-gguf") >= 0);
    QVERIFY(rowOf(catalogue, "ggml-org/gemma-3-4b-it-GGUF") >= 0);

    // FP16 weights are two bytes a parameter: the sizes in the names, within the embedding's share.
    const std::pair<const char*, double> parameters[] = {{"270m", 0.27e9}, {"1b", 1.0e9}, {"4b", 3.9e9}, {"12b", 11.8e9}, {"27b", 27e9}};
    for (const auto& [size, count] : parameters) {
      const QVariantMap memory = at(catalogue, QStringLiteral("google/gemma-3-%1-it").arg(size), ModelCatalogue::MemoryRole).toMap();
      const double fp16 = memory["fp16"].toDouble();
      QVERIFY2(fp16 > 1.8 * count && fp16 < 2.2 * count, qPrintable(QStringLiteral("%1: %2").arg(size).arg(fp16)));
      QVERIFY(memory["fp32"].toDouble() > fp16 && memory["int8"].toDouble() < 0.6 * fp16 &&
              memory["int4"].toDouble() < memory["int8"].toDouble());
    }
  }

  void saysWhatFitsThisMachine() {
    ModelCatalogue catalogue;
    catalogue.setMemoryBytes(8 * kGiB);
    auto fits = [&](const char* repo, const char* precision) {
      return at(catalogue, repo, ModelCatalogue::FitsRole).toMap()[precision].toBool();
    };
    QVERIFY(fits("google/gemma-3-1b-it", "fp32"));
    QVERIFY(fits("google/gemma-3-4b-it", "int4"));
    QVERIFY(!fits("google/gemma-3-4b-it", "fp32"));  // 15 GiB
    QVERIFY(!fits("google/gemma-3-27b-it-qat-q4_0-gguf", "auto"));
    catalogue.setMemoryBytes(64 * kGiB);
    QVERIFY(fits("google/gemma-3-27b-it-qat-q4_0-gguf", "auto"));
  }

  void offlineItKeepsTheListAndSaysTheHubCannotBeReached() {
    ModelCatalogue catalogue;
    catalogue.setEndpoint("http://127.0.0.1:9");  // discard: nothing answers
    const int rows = catalogue.rowCount();
    catalogue.refresh();
    QCOMPARE(catalogue.hubState(), QStringLiteral("checking"));
    QTRY_COMPARE_WITH_TIMEOUT(catalogue.hubState(), QStringLiteral("unreachable"), 20000);
    QVERIFY2(catalogue.hubMessage().contains("cannot be reached") && catalogue.hubMessage().contains("127.0.0.1:9"),
             qPrintable(catalogue.hubMessage()));
    QCOMPARE(catalogue.rowCount(), rows);
    QVERIFY(at(catalogue, "google/gemma-3-1b-it", ModelCatalogue::DownloadBytesRole).toDouble() > 0);  // the estimate
    QVERIFY(!at(catalogue, "google/gemma-3-1b-it", ModelCatalogue::SizeKnownRole).toBool());
  }

  void aHubGivesTheRealSizes() {
    kiln::test::HubStandIn hub;
    hub.repos["google/gemma-3-1b-it-qat-q4_0-gguf"] = {{"README.md", "# QAT", false}, {"gemma-3-1b-it-q4_0.gguf", "GGUF", true, 1005000000}};
    hub.repos["google/gemma-3-270m-it"] = {{"config.json", "{}", false}, {"model.safetensors", "x", true, 536223056}};
    ModelCatalogue catalogue;
    catalogue.setEndpoint(QString::fromStdString(hub.base()));
    catalogue.refresh();
    QTRY_COMPARE_WITH_TIMEOUT(catalogue.hubState(), QStringLiteral("reachable"), 20000);
    QCOMPARE(at(catalogue, "google/gemma-3-1b-it-qat-q4_0-gguf", ModelCatalogue::DownloadBytesRole).toDouble(), 1005000000.0);
    QVERIFY(at(catalogue, "google/gemma-3-1b-it-qat-q4_0-gguf", ModelCatalogue::SizeKnownRole).toBool());
    QCOMPARE(at(catalogue, "google/gemma-3-270m-it", ModelCatalogue::DownloadBytesRole).toDouble(), 536223056.0);
    QVERIFY(!at(catalogue, "google/gemma-3-4b-it", ModelCatalogue::SizeKnownRole).toBool());  // not on this hub
  }
};

QTEST_GUILESS_MAIN(TestModelCatalogue)
#include "test_model_catalogue.moc"
