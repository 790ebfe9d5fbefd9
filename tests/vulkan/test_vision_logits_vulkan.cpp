// Gemma 3 seeing an image with the model on Vulkan: `kiln logits --backend vulkan --image` on the
// tiny vision fixture's exact.png against transformers' logits (tests/data/vision/reference.json),
// the tower running on the same device as the text model (no note that it fell back to the CPU).
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

#include "fixture_reference.h"
#include "test_files.h"

using namespace kiln::test;

namespace {

const QString kVision = QString(KILN_TEST_DATA) + "/vision";

std::vector<std::vector<float>> rows_of(const QJsonArray& array) {
  std::vector<std::vector<float>> rows;
  for (const QJsonValue& row : array) {
    std::vector<float> r;
    for (const QJsonValue& x : row.toArray()) r.push_back(float(x.toDouble()));
    rows.push_back(std::move(r));
  }
  return rows;
}

}  // namespace

class VisionLogitsVulkan : public QObject {
  Q_OBJECT
 private slots:
  void exact_image_matches_transformers_on_vulkan() {
    QJsonObject exact;
    for (const QJsonValue& v : QJsonDocument::fromJson(read_file(kVision + "/reference.json")).object()["cases"].toArray())
      if (v.toObject()["image"].toString() == "exact.png") exact = v.toObject();
    QVERIFY(!exact.isEmpty());
    QStringList ids;
    for (const QJsonValue& id : exact["input_ids"].toArray()) ids << QString::number(id.toInt());
    const auto expected = rows_of(exact["logits"].toArray());

    const CliRun r = kiln_cli({"logits", "--backend", "vulkan", "--model", kVision, "--image", kVision + "/exact.png",
                               "--tokens", ids.join(',')});
    QVERIFY2(r.code == 0, r.err.constData());
    QVERIFY2(!r.err.contains("vision tower runs on the CPU"), r.err.constData());
    const auto rows = rows_of(QJsonDocument::fromJson(r.out).object()["logits"].toArray());
    QCOMPARE(rows.size(), expected.size());
    const Agreement a = compare(rows, expected);
    qInfo("relative error %g, top-1 %g", a.relative_error, a.top1);
    QVERIFY2(a.relative_error < 1e-3, qPrintable(QString("relative error %1").arg(a.relative_error)));
  }
};

QTEST_GUILESS_MAIN(VisionLogitsVulkan)
#include "test_vision_logits_vulkan.moc"
