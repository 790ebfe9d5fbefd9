// A GGUF model whose every matrix is IQ4_XS (the K-quant fixture tiny-gemma3-k re-quantized by
// iq4xs_test_model.h; its rows are whole super-blocks) on the Vulkan backend, held as stored (the
// K-quant kernels read it, weights_kquant.glsl): logits against the CPU's fp32 math on the same
// weights dequantized, with fp32 matvecs, int8 dot products under NVIDIA's plan (matvec_i8, staged,
// qin) and int8 prefill tiles (matmul_i8); the device holds the file's bytes.
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "iq4xs_test_model.h"
#include "model/checkpoint.h"
#include "model/gguf_file.h"
#include "model/weights.h"
#include "model_fixture.h"
#include "runtime/cpu/cpu_backend.h"
#include "runtime/vulkan_probe.h"

using namespace kiln;
using namespace kiln::test;

class VulkanModelIq4xs : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  std::string file_;

 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    file_ = (std::filesystem::path(dir_.path().toStdString()) / "tiny-gemma3-k-iq4_xs.gguf").string();
    write_iq4xs_gguf(fixture_dir("gguf/tiny-gemma3-k") + "/tiny-gemma3-k-q4_k_m.gguf", file_);
  }

  void runs_as_stored_data() {
    QTest::addColumn<QString>("plan");
    QTest::newRow("fp32") << "fp32";
    QTest::newRow("int8 dot, nvidia plan") << "int8";
    QTest::newRow("int8 tiles prefill") << "int_dot";
  }
  void runs_as_stored() {
    QFETCH(QString, plan);
    const Checkpoint ck = open_checkpoint(file_);
    auto w = std::make_shared<Gemma3Weights>(load_weights_as_stored(ck.config, *ck.tensors, 2, {}));
    QCOMPARE(w->embed.type, DType::IQ4_XS);
    for (const LayerWeights& l : w->layers)
      for (const Matrix* m : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w_gate, &l.w_up, &l.w_down}) QCOMPARE(m->type, DType::IQ4_XS);
    auto f32 = std::make_shared<Gemma3Weights>(load_weights_held_as(ck.config, *ck.tensors, [](DType) { return DType::F32; }, 2));
    if (plan != "fp32") {
      std::string status;
      const auto devices = list_vulkan_devices(status);
      if (std::none_of(devices.begin(), devices.end(), [](const GpuDevice& d) { return d.integer_dot; }))
        QSKIP("no Vulkan device with integer dot products");
    }
    auto gpu = plan == "int8"      ? vulkan(w, {{"int8_dot", "1"}, {"family", "nvidia"}})
               : plan == "int_dot" ? vulkan(w, {{"family", "other"}, {"prefill", "int_dot"}})
                                   : vulkan(w, {{"family", "other"}});
    if (plan == "int_dot") QCOMPARE(gpu->gpu_plan()->prefill, std::string("int_dot"));
    auto cpu = make_cpu_backend(f32, CpuOptions{64, 2, DType::F16});

    // Device bytes of the matrices against the file's IQ4_XS tensors: 136 bytes a super-block both.
    uint64_t file_bytes = 0;
    for (const GgufTensorInfo& t : GgufFile::open(file_)->tensors())
      if (t.type == uint32_t(GgmlType::IQ4_XS)) file_bytes += t.bytes;
    const double device = counter(*gpu, "weight_bytes");
    std::printf("device %.0f bytes, the file's IQ4_XS tensors %llu\n", device, (unsigned long long)file_bytes);
    QVERIFY2(device <= double(file_bytes) * 1.03, qPrintable(QString("device %1 bytes for %2 in the file").arg(device).arg(file_bytes)));

    const std::vector<int32_t> ids = {2, 351, 10, 90, 17, 300, 5, 100, 42, 7, 200, 600};
    const int vocab = ck.config.vocab_size;
    for (int prefill : plan == "int8" ? std::vector<int>{5} : std::vector<int>{0, 5}) {
      const Agreement a = compare(run(*gpu, ids, prefill, vocab), run(*cpu, ids, prefill, vocab));
      std::printf("%s, prefill %d: vs CPU fp32 %.2e, top-1 %.3f\n", qPrintable(plan), prefill, a.relative_error, a.top1);
      // The bounds of the K-quant model test on the same fixture (test_model_kquant.cpp): the GPU's
      // fp16 KV cache, 4.3-4.7e-4 measured on lavapipe; int8 activations, 2.1-2.3e-2.
      QVERIFY2(a.relative_error < (plan == "fp32" ? 2e-3 : 3e-2), qPrintable(QString("vs CPU %1").arg(a.relative_error)));
      QVERIFY2(a.top1 >= 0.95, qPrintable(QString("top-1 %1").arg(a.top1)));
    }
  }
};

QTEST_GUILESS_MAIN(VulkanModelIq4xs)
#include "test_model_iq4xs.moc"
