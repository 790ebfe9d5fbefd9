// A Q4_K_M file of a model whose rows are not whole 256-weight super-blocks holds mostly Q5_0,
// llama-quantize's fallback for Q4_K: Gemma 3 1B (hidden 1152) and 270M (640) as people download
// them. Here the bundled demo model (hidden 192, FFN 640) is written so by kiln quantize and run on
// the Vulkan backend with Q5_0 held as stored (the K-quant kernels read it, weights_kquant.glsl):
// the CPU's fp32 math on the same weights dequantized, to rounding, and the file's size on the device;
// and with those matrices re-encoded exactly as Q5_1 (what Q5_K_M files fall back to).
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "model/checkpoint.h"
#include "model/gguf_file.h"
#include "model/gguf_quantize.h"
#include "model/weights.h"
#include "quant/block32_formats.h"
#include "quant/convert.h"
#include "model_fixture.h"
#include "runtime/cpu/cpu_backend.h"
#include "runtime/vulkan_probe.h"

using namespace kiln;
using namespace kiln::test;

namespace {

std::string demo_path() { return std::string(KILN_TEST_DATA) + "/../../resources/models/kiln-demo"; }

uint64_t matrix_bytes(const Gemma3Weights& w) {
  uint64_t total = w.embed.bytes();
  for (const LayerWeights& l : w.layers)
    total += l.wq.bytes() + l.wk.bytes() + l.wv.bytes() + l.wo.bytes() + l.w_gate.bytes() + l.w_up.bytes() + l.w_down.bytes();
  return total;
}

int count_type(const Gemma3Weights& w, DType t) {
  int n = w.embed.type == t;
  for (const LayerWeights& l : w.layers)
    for (const Matrix* m : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w_gate, &l.w_up, &l.w_down}) n += m->type == t;
  return n;
}

// A Q5_0 matrix as Q5_1 with the same values: (q - 16) d = q d + m for m = -16 d, exact in fp16.
Matrix as_q5_1(const Matrix& q5_0) {
  Matrix m;
  m.type = DType::Q5_1;
  m.rows = q5_0.rows;
  m.cols = q5_0.cols;
  m.storage = allocate_aligned(m.bytes());
  const auto* in = reinterpret_cast<const BlockQ5_0*>(q5_0.storage.get());
  auto* out = reinterpret_cast<BlockQ5_1*>(m.storage.get());
  for (size_t b = 0; b < m.bytes() / sizeof(BlockQ5_1); ++b) {
    out[b].d = in[b].d;
    out[b].m = float_to_fp16(-16.0f * fp16_to_float(in[b].d));
    std::memcpy(out[b].qh, in[b].qh, sizeof out[b].qh);
    std::memcpy(out[b].qs, in[b].qs, sizeof out[b].qs);
  }
  return m;
}

}  // namespace

class VulkanModelQ5_0 : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  std::string file_;

 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    QuantizeOptions o;
    o.input = demo_path();
    o.output = (std::filesystem::path(dir_.path().toStdString()) / "demo-q4_k_m.gguf").string();
    o.mix = QuantMix::Q4_K_M;
    o.threads = 2;
    quantize_model(o);
    file_ = o.output;
  }

  void runs_as_stored_data() {
    // Decode with int8 activations (matvec_i8_*) under NVIDIA's plan (stage flags, int8 activations
    // from their producers), else the portable plan with fp32 matvecs.
    QTest::addColumn<bool>("int8_nvidia");
    // Q5_1 (Q5_K_M files' fallback): the Q5_0 matrices re-encoded exactly, the same reference.
    QTest::addColumn<bool>("q5_1");
    QTest::addColumn<bool>("int_dot_prefill");  // prefill on int8 tiles (matmul_i8_*)
    for (bool q5_1 : {false, true}) {
      const std::string f = q5_1 ? "q5_1, " : "";
      QTest::newRow((f + "fp32").c_str()) << false << q5_1 << false;
      QTest::newRow((f + "int8 dot, nvidia plan").c_str()) << true << q5_1 << false;
    }
    QTest::newRow("int8 tiles prefill") << false << false << true;
  }
  void runs_as_stored() {
    QFETCH(bool, int8_nvidia);
    QFETCH(bool, q5_1);
    QFETCH(bool, int_dot_prefill);
    const Checkpoint ck = open_checkpoint(file_);
    auto w = std::make_shared<Gemma3Weights>(load_weights_as_stored(ck.config, *ck.tensors, 2, {}));
    const int q5_0 = count_type(*w, DType::Q5_0);
    QVERIFY2(q5_0 >= 4 * ck.config.num_layers, qPrintable(QString("%1 matrices in Q5_0").arg(q5_0)));
    if (q5_1) {
      for (LayerWeights& l : w->layers)
        for (Matrix* m : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w_gate, &l.w_up, &l.w_down})
          if (m->type == DType::Q5_0) *m = as_q5_1(*m);
      QCOMPARE(count_type(*w, DType::Q5_1), q5_0);
    }
    auto f32 = std::make_shared<Gemma3Weights>(load_weights_held_as(ck.config, *ck.tensors, [](DType) { return DType::F32; }, 2));
    if (int8_nvidia || int_dot_prefill) {
      std::string status;
      const auto devices = list_vulkan_devices(status);
      if (std::none_of(devices.begin(), devices.end(), [](const GpuDevice& d) { return d.integer_dot; }))
        QSKIP("no Vulkan device with integer dot products");
    }
    auto gpu = int8_nvidia       ? vulkan(w, {{"int8_dot", "1"}, {"family", "nvidia"}})
               : int_dot_prefill ? vulkan(w, {{"family", "other"}, {"prefill", "int_dot"}})
                                 : vulkan(w, {{"family", "other"}});
    if (int_dot_prefill) QCOMPARE(gpu->gpu_plan()->prefill, std::string("int_dot"));
    auto cpu = make_cpu_backend(f32, CpuOptions{64, 2, DType::F16});

    // Device bytes of the matrices against their bytes in the file (Q5_0: 22 bytes a block both).
    uint64_t file_bytes = 0;
    for (const GgufTensorInfo& t : GgufFile::open(file_)->tensors()) file_bytes += t.bytes;
    const double device = counter(*gpu, "weight_bytes"), matrices = double(matrix_bytes(*w));
    std::printf("device %.0f bytes, the matrices held %.0f (%+.2f %%), all the file's tensors %llu\n", device, matrices,
                100.0 * (device / matrices - 1.0), (unsigned long long)file_bytes);
    QVERIFY2(device <= matrices * 1.03, qPrintable(QString("device %1 bytes for %2 on the host").arg(device).arg(matrices)));
    if (!q5_1) QVERIFY(device <= double(file_bytes) * 1.1);

    const std::vector<int32_t> ids = {2, 651, 1802, 90, 17, 300, 5, 1000, 42, 7, 2048, 3000};
    const int vocab = ck.config.vocab_size;
    for (int prefill : int8_nvidia ? std::vector<int>{5} : std::vector<int>{0, 5}) {
      const Agreement a = compare(run(*gpu, ids, prefill, vocab), run(*cpu, ids, prefill, vocab));
      std::printf("prefill %d%s: vs CPU fp32 %.2e, top-1 %.3f\n", prefill,
                  int8_nvidia ? " int8" : int_dot_prefill ? " int8 tiles" : "", a.relative_error,
                  a.top1);
      // The GPU's fp16 KV cache: 4-6e-5 measured on lavapipe; int8 activations: 2.8e-3.
      const bool int8 = int8_nvidia || int_dot_prefill;
      QVERIFY2(a.relative_error < (int8 ? 1e-2 : 5e-4), qPrintable(QString("vs CPU %1").arg(a.relative_error)));
    }
  }
};

QTEST_GUILESS_MAIN(VulkanModelQ5_0)
#include "test_model_q5_0.moc"
