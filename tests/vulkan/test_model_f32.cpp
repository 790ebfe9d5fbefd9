// The whole Gemma 3 forward pass on the Vulkan backend in F32 against Hugging Face's logits for the
// tiny fixtures, along the prefill and decode paths, with weights in one or in many bindings.
#include <QtTest>

#include <algorithm>

#include "model_fixture.h"

using namespace kiln;
using namespace kiln::test;

class VulkanModelF32 : public QObject {
  Q_OBJECT
 private slots:
  void f32_matches_reference_data() {
    QTest::addColumn<QString>("fixture");
    QTest::addColumn<int>("prefill");
    QTest::addColumn<int>("matvec_max_tokens");  // 0: the plan's
    for (const char* f : {"tiny-gemma3-a", "tiny-gemma3-b"})
      for (int k : {0, 1, 5, 17})
        QTest::newRow((std::string(f) + " prefill " + std::to_string(k)).c_str()) << QString(f) << k << 0;
    // A batch of 9 tokens of one sequence through the items kernels' widest pass, as GPUs take
    // batches of up to 16 tokens (lavapipe's plan keeps them on tiles: KernelPlan::matvec_max_tokens).
    for (const char* f : {"tiny-gemma3-a", "tiny-gemma3-b"})
      QTest::newRow((std::string(f) + " prefill 9, items kernels").c_str()) << QString(f) << 9 << 16;
  }

  // F32 within 1e-4 of transformers at every position, batched or through the cache (both
  // fixtures' cases cross their sliding windows of 8 and 16).
  void f32_matches_reference() {
    QFETCH(QString, fixture);
    QFETCH(int, prefill);
    QFETCH(int, matvec_max_tokens);
    const std::string name = fixture.toStdString();
    const Reference ref = read_reference(fixture_dir(name.c_str()) + "/reference.json");
    auto w = load_fixture(name, DType::F32);
    auto b = matvec_max_tokens ? vulkan(w, {{"matvec_max_tokens", std::to_string(matvec_max_tokens)}}) : vulkan(w);
    for (const ReferenceCase& c : ref.cases) {
      const Agreement a = compare(run(*b, c.ids, prefill, w->config.vocab_size), c.logits);
      QVERIFY2(a.relative_error < 1e-4, qPrintable(QString("relative error %1").arg(a.relative_error)));
      QCOMPARE(a.top1, 1.0);
    }
  }

  // Weights split over several bindings (as the 262144-row embedding must be on lavapipe) and
  // uploaded through the staging buffer give the same logits.
  void chunked_weights_through_staging() {
    const Reference ref = read_reference(fixture_dir("tiny-gemma3-a") + "/reference.json");
    auto w = load_fixture("tiny-gemma3-a", DType::F32);
    // Fixture a: 512 x 64 f32 embedding -> 8 chunks.
    auto b = vulkan(w, {{"max_chunk_bytes", "16384"}, {"force_staging", "1"}});
    for (int prefill : {0, 4}) {
      const Agreement a = compare(run(*b, ref.cases[0].ids, prefill, w->config.vocab_size), ref.cases[0].logits);
      QVERIFY2(a.relative_error < 1e-4, qPrintable(QString("relative error %1").arg(a.relative_error)));
    }
  }

  // Decode with each head's keys split over several workgroups (16 keys a split: 2 or 3 splits
  // on global layers in these cases), merged by the last split inside the one attention dispatch.
  void decode_with_split_keys() {
    for (const char* f : {"tiny-gemma3-a", "tiny-gemma3-b"}) {
      const Reference ref = read_reference(fixture_dir(f) + "/reference.json");
      auto w = load_fixture(f, DType::F32);
      auto b = vulkan(w, {{"attention_split", "16"}});
      for (const ReferenceCase& c : ref.cases) {
        QVERIFY(c.ids.size() > 16);  // several splits
        const Agreement a = compare(run(*b, c.ids, 1, w->config.vocab_size), c.logits);
        QVERIFY2(a.relative_error < 1e-4, qPrintable(QString("%1: relative error %2").arg(f).arg(a.relative_error)));
        QCOMPARE(a.top1, 1.0);
      }
    }
  }
};

QTEST_GUILESS_MAIN(VulkanModelF32)
#include "test_model_f32.moc"
