// The whole model with prefill on int8 tiles (KernelPlan prefill int_dot: quantize_i8 + matmul_i8_*),
// Q8_0 and Q4_0 weights: within the CPU path's bounds of Hugging Face's logits and next to the CPU
// backend on the same weights, in one matrix chunk or many. The plan of GPUs with integer dots in
// hardware and no tensor cores; the key forces it on lavapipe (emulated dots) and on GPUs with
// tensor cores.
#include <QtTest>

#include <algorithm>

#include "runtime/cpu/cpu_backend.h"
#include "runtime/vulkan_probe.h"
#include "model_fixture.h"

using namespace kiln;
using namespace kiln::test;

class VulkanModelIntDot : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    std::string status;
    const auto devices = list_vulkan_devices(status);
    if (std::none_of(devices.begin(), devices.end(), [](const GpuDevice& d) { return d.integer_dot; }))
      QSKIP("no Vulkan device with integer dot products");
  }

  void within_bounds_data() {
    QTest::addColumn<QString>("fixture");
    QTest::addColumn<int>("type");
    QTest::addColumn<double>("max_relative_error");  // the CPU path's bounds (tests/core/test_forward_fixtures)
    QTest::addColumn<double>("min_top1");
    QTest::addColumn<QString>("chunk_bytes");  // max_chunk_bytes: matrices in chunks of a few rows ("": one)
    for (const char* f : {"tiny-gemma3-a", "tiny-gemma3-b"})
      for (const char* chunks : {"", "4096"}) {
        const std::string s = std::string(f) + (*chunks ? ", in chunks" : "");
        QTest::newRow((s + " q8_0").c_str()) << QString(f) << int(DType::Q8_0) << 2e-2 << 0.97 << QString(chunks);
        QTest::newRow((s + " q4_0").c_str()) << QString(f) << int(DType::Q4_0) << 1.6e-1 << 0.9 << QString(chunks);
      }
  }

  // Every position's logits, the whole prompt as one batch and as a batch then decode steps (fp16 KV
  // cache): within the reference bounds, no worse than the CPU backend by more than the int8
  // activations' own ~1e-2 (as the int8 decode kernels), and close to its numbers.
  void within_bounds() {
    QFETCH(QString, fixture);
    QFETCH(int, type);
    QFETCH(double, max_relative_error);
    QFETCH(double, min_top1);
    QFETCH(QString, chunk_bytes);
    const std::string name = fixture.toStdString();
    const Reference ref = read_reference(fixture_dir(name.c_str()) + "/reference.json");
    auto w = load_fixture(name, DType(type));
    VulkanTuning tuning{{"prefill", "int_dot"}};
    // In chunks, decode on int8 dots too (int8 activations from their producers, where the device
    // has subgroup shuffles): gate_up's groups of 8 int8 outputs must not straddle its chunks.
    if (!chunk_bytes.isEmpty()) tuning.insert(tuning.end(), {{"max_chunk_bytes", chunk_bytes.toStdString()}, {"int8_dot", "1"}});
    auto gpu = vulkan(w, tuning);
    QCOMPARE(gpu->gpu_plan()->prefill, std::string("int_dot"));
    auto cpu = make_cpu_backend(w, CpuOptions{64, 2, DType::F16});
    const int vocab = w->config.vocab_size;
    for (const ReferenceCase& c : ref.cases)
      for (int prefill : {0, 9}) {
        const auto ours = run(*gpu, c.ids, prefill, vocab);
        const auto theirs = run(*cpu, c.ids, prefill, vocab);
        const Agreement a = compare(ours, c.logits), cpu_a = compare(theirs, c.logits), vs_cpu = compare(ours, theirs);
        QVERIFY2(a.relative_error < max_relative_error, qPrintable(QString("relative error %1").arg(a.relative_error)));
        QVERIFY2(a.top1 >= min_top1, qPrintable(QString("top-1 %1").arg(a.top1)));
        QVERIFY2(vs_cpu.relative_error < 2e-2, qPrintable(QString("vs CPU %1").arg(vs_cpu.relative_error)));
        QVERIFY2(a.relative_error < cpu_a.relative_error + 8e-3,
                 qPrintable(QString("%1 vs the CPU's %2").arg(a.relative_error).arg(cpu_a.relative_error)));
      }
  }

  // The batch ran on the int8 tiles: a quantize_i8 pass before each matrix of every layer and the
  // logits, none in a decode step; F16 weights keep the fp32 tiles under the same key.
  void batches_take_the_int8_tiles() {
    auto w = load_fixture("tiny-gemma3-b", DType::Q4_0);
    auto gpu = vulkan(w, {{"prefill", "int_dot"}});
    // Past the items kernels' 16 tokens (KernelPlan::matvec_max_tokens): a batch for the tiles.
    std::vector<int32_t> ids{2};
    for (int32_t t = 1; t <= 19; ++t) ids.push_back(10 * t);
    std::vector<float> logits(size_t(ids.size()) * w->config.vocab_size);
    auto quantize_calls = [&] {
      uint64_t calls = 0;
      for (const OpTiming& t : gpu->take_profile()) calls += t.op == "quantize_i8" ? t.calls : 0;
      return calls;
    };
    gpu->set_profiling(true);
    gpu->forward(ids, 0, true, logits.data());
    QCOMPARE(quantize_calls(), uint64_t(4 * w->config.num_layers + 1));
    gpu->forward(std::span(ids).first(1), int(ids.size()), false, logits.data());
    QCOMPARE(quantize_calls(), uint64_t(0));
    auto f16 = vulkan(load_fixture("tiny-gemma3-b", DType::F16), {{"prefill", "int_dot"}});
    QCOMPARE(f16->gpu_plan()->prefill, std::string("fp32"));
  }
};

QTEST_GUILESS_MAIN(VulkanModelIntDot)
#include "test_model_int_dot.moc"
