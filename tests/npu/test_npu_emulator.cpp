// The NPU emulator: its arithmetic pieces against exact math, known answers, agreement with the
// CPU's float attention at bf16 precision on odd shapes, determinism, and the whole model on the
// fixtures through `--attention npu-emulator` within 2e-2 relative error and >= 98 % top-1.
#include <QtTest>
#include <cstring>

#include "fixture_backend.h"
#include "fixture_reference.h"
#include "kiln/engine.h"
#include "npu_test_support.h"
#include "runtime/cpu/matmul_kernels.h"
#include "runtime/npu/npu_attention.h"
#include "runtime/npu/npu_emulator.h"
#include "runtime/npu/npu_kernel_math.h"

using namespace kiln;
using namespace kiln::test;

namespace {

std::vector<float> npu_attention(AttentionCase& a, ThreadPool& pool, std::optional<NpuTileShape> shape = {}) {
  std::vector<float> att(a.q.size(), NAN);
  NpuAttention(make_npu_emulator(pool), pool, shape)
      .run(a.config, a.layer, *a.cache, a.q.data(), a.k.data(), a.v.data(), a.pos, a.n, att.data(),
           std::chrono::steady_clock::now() + std::chrono::seconds(60));
  return att;
}

std::vector<float> cpu_attention(AttentionCase& a, ThreadPool& pool) {
  std::vector<float> att(a.q.size());
  attention_batch(best_matmul_kernels(), a.config, a.layer, *a.cache, a.q.data(), a.k.data(), a.v.data(), a.pos, a.n,
                  att.data(), pool);
  return att;
}

}  // namespace

class NpuEmulator : public QObject {
  Q_OBJECT
 private slots:
  void exp2_is_accurate_to_bf16() {
    double worst = 0;
    for (int i = 0; i <= 126000; ++i) {
      const float x = -float(i) / 1000.0f;
      const double rel = std::fabs(npu_math::exp2_kernel(x) / std::exp2(double(x)) - 1.0);
      worst = std::max(worst, rel);
    }
    qInfo("exp2_kernel: largest relative error %.3g on [-126, 0]", worst);
    QVERIFY(worst < 3e-3);  // bf16 arguments; P is rounded to bf16 (3.9e-3) afterwards anyway
    QCOMPARE(npu_math::round_bf16(npu_math::exp2_kernel(0.0f)), 1.0f);
    QCOMPARE(npu_math::round_bf16(npu_math::exp2_kernel(-3.0f)), 0.125f);
    QCOMPARE(npu_math::exp2_kernel(-126.5f), 0.0f);
    QCOMPARE(npu_math::exp2_kernel(-INFINITY), 0.0f);
    // c3 is a bf16 operand on the NPU: it must need no rounding, or the two compilers might differ.
    QCOMPARE(npu_math::round_bf16(kiln_npu::kExp2C3), kiln_npu::kExp2C3);
  }

  void power_of_two_scaling_is_exact() {
    QCOMPARE(npu_math::scale_down_pow2(3.0f, 2), 0.75f);
    QCOMPARE(npu_math::scale_down_pow2(-1.5f, 1), -0.75f);
    QCOMPARE(npu_math::scale_down_pow2(1.0f, 126), std::ldexp(1.0f, -126));
    QCOMPARE(npu_math::scale_down_pow2(1.0f, 127), 0.0f);  // would be subnormal: flushed
    QCOMPARE(npu_math::scale_down_pow2(0.0f, 5), 0.0f);
    QCOMPARE(npu_math::round_bf16(1.0f + 1.0f / 512), 1.0f);          // tie to even
    QCOMPARE(npu_math::round_bf16(1.0f + 3.0f / 512), 1.0f + 4.0f / 512);
  }

  // Scores of exactly 0, -1, -2 in log2 units give weights 1, 1/2, 1/4: the output is a known mix of
  // the values. The local layer's window of 2 drops the oldest key.
  void known_answer_data() {
    QTest::addColumn<bool>("global");
    QTest::newRow("global: keys 0, 1, 2") << true;
    QTest::newRow("local, window 2: keys 1, 2") << false;
  }
  void known_answer() {
    QFETCH(bool, global);
    AttentionCase a = make_case(1, 1, 8, 2, global, 0, 1, DType::F32, 1);
    a.cache = std::make_unique<KvCache>(a.config, 3, DType::F32);
    a.pos = 2;
    const float prescale = float(double(1.0f / std::sqrt(a.config.query_pre_attn_scalar)) * double(kiln_npu::kLog2e));
    std::vector<float> k(8, 0.0f), v(8, 0.0f);
    const float values[3] = {8.0f, 4.0f, 3.0f};
    for (int p = 0; p < 3; ++p) {
      std::fill(k.begin(), k.end(), 0.0f);
      std::fill(v.begin(), v.end(), 0.0f);
      k[0] = float(2 - p);  // with q = -1: the score of key p is p - 2
      v[3] = values[p];
      if (p < 2) {
        store_kv(a.config, a.layer, *a.cache, k.data(), v.data(), p, 1);
      } else {
        a.k = k;
        a.v = v;
      }
    }
    a.q.assign(8, 0.0f);
    a.q[0] = -1.0f / prescale;  // rounds to exactly -1 in bf16 after the prescale
    ThreadPool pool(1);
    const std::vector<float> att = npu_attention(a, pool);
    const float expected = global ? (values[0] * 0.25f + values[1] * 0.5f + values[2]) / 1.75f
                                  : (values[1] * 0.5f + values[2]) / 1.5f;
    QCOMPARE(att[3], expected);
    QCOMPARE(att[0], 0.0f);
  }

  void agrees_with_cpu_attention_data() {
    QTest::addColumn<int>("heads");
    QTest::addColumn<int>("kv_heads");
    QTest::addColumn<int>("head_dim");
    QTest::addColumn<int>("window");
    QTest::addColumn<bool>("global");
    QTest::addColumn<int>("pos");
    QTest::addColumn<int>("n");
    QTest::addColumn<bool>("small_tiles");
    QTest::newRow("decode, 27B-like heads, D=128, local, ring wrapped") << 4 << 2 << 128 << 64 << false << 200 << 1
                                                                      << false;
    QTest::newRow("decode, D=256, global at 700 (2 chunks)") << 4 << 1 << 256 << 64 << true << 700 << 1 << false;
    QTest::newRow("prefill 37, GQA 3, D=32, local") << 6 << 2 << 32 << 16 << false << 9 << 37 << false;
    QTest::newRow("prefill 37, GQA 3, D=32, local, small tiles") << 6 << 2 << 32 << 16 << false << 9 << 37 << true;
    QTest::newRow("prefill 19, group 8, D=16, global, small tiles") << 8 << 1 << 16 << 8 << true << 30 << 19 << true;
    QTest::newRow("prefill 5 at 0, no GQA, D=16") << 2 << 2 << 16 << 8 << false << 0 << 5 << false;
  }
  void agrees_with_cpu_attention() {
    QFETCH(int, heads);
    QFETCH(int, kv_heads);
    QFETCH(int, head_dim);
    QFETCH(int, window);
    QFETCH(bool, global);
    QFETCH(int, pos);
    QFETCH(int, n);
    QFETCH(bool, small_tiles);
    AttentionCase a = make_case(heads, kv_heads, head_dim, window, global, pos, n, DType::F16, 3);
    ThreadPool pool(2);
    std::optional<NpuTileShape> shape;
    if (small_tiles) shape = NpuTileShape{head_dim, 4, 8, 2, 1, 1};
    const std::vector<float> npu = npu_attention(a, pool, shape);
    const std::vector<float> cpu = cpu_attention(a, pool);
    const double err = relative_error(npu, cpu);
    qInfo("relative error against float attention: %.3g", err);
    QVERIFY2(err < 1e-2, qPrintable(QString("relative error %1").arg(err)));
  }

  // Compute tiles run in parallel; the result must not depend on how they are scheduled.
  void deterministic_across_threads() {
    AttentionCase a = make_case(6, 2, 32, 16, false, 40, 23, DType::F32, 11);
    ThreadPool one(1), two(2);
    const NpuTileShape shape{32, 4, 8, 2, 1, 1};
    const std::vector<float> x = npu_attention(a, one, shape), y = npu_attention(a, two, shape);
    QVERIFY(std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0);
  }

  // Bad packing is an error, not a crash.
  void bad_descriptor_is_an_error() {
    const NpuTileShape shape = kiln_npu::kShapeD128;
    std::vector<int32_t> q(size_t(kiln_npu::q_object_words(shape)), 0), out(size_t(kiln_npu::out_object_words(shape)));
    std::vector<int32_t> kv(size_t(kiln_npu::kv_object_words(shape)) * shape.tiles_per_step, 0);
    QVERIFY_THROWS_EXCEPTION(Error, emulate_npu_step(shape, q.data(), kv.data(), out.data()));
    q[kiln_npu::kDescMagic] = kiln_npu::kDescriptorMagic;
    q[kiln_npu::kDescGroup] = 1;
    q[kiln_npu::kDescTilesValid] = shape.tiles_per_step + 1;
    QVERIFY_THROWS_EXCEPTION(Error, emulate_npu_step(shape, q.data(), kv.data(), out.data()));
  }

  // The acceptance bound of the whole model: bf16 attention inputs cost some precision.
  void fixtures_through_the_engine_data() {
    QTest::addColumn<QString>("fixture");
    QTest::addColumn<int>("prefill");
    for (const char* f : {"tiny-gemma3-a", "tiny-gemma3-b"})
      for (int k : {0, 5})
        QTest::newRow((std::string(f) + " prefill " + std::to_string(k)).c_str()) << QString(f) << k;
  }
  void fixtures_through_the_engine() {
    QFETCH(QString, fixture);
    QFETCH(int, prefill);
    const std::string name = fixture.toStdString();
    LoadOptions o;
    o.path = fixture_dir(name.c_str());
    o.precision = Precision::F32;
    o.backend = BackendKind::Cpu;
    o.attention = AttentionPlacement::NpuEmulator;
    o.context_length = 128;
    o.threads = 2;
    auto engine = Engine::load(o);
    QVERIFY2(engine->info().backend.find("npu-emulator") != std::string::npos, engine->info().backend.c_str());
    const Reference ref = read_reference(fixture_dir(name.c_str()) + "/reference.json");
    for (const ReferenceCase& c : ref.cases) {
      const Agreement a = compare(engine->logits(c.ids, prefill), c.logits);
      qInfo("%s prefill %d: relative error %.3g, top-1 %.3f, KL %.3g", name.c_str(), prefill, a.relative_error, a.top1,
            a.kl);
      QVERIFY2(a.relative_error < 2e-2, qPrintable(QString("relative error %1").arg(a.relative_error)));
      QVERIFY2(a.top1 >= 0.98, qPrintable(QString("top-1 %1").arg(a.top1)));
    }
  }

  // The same with tiles so small that every case needs many key chunks and launches.
  void fixtures_with_small_tiles() {
    for (const char* f : {"tiny-gemma3-a", "tiny-gemma3-b"}) {
      auto weights = fixture_weights(f);
      const int D = weights->config.head_dim, vocab = weights->config.vocab_size;
      AttentionRouting routing;
      routing.tile_shape = NpuTileShape{D, 4, 8, 2, 1, 1};
      auto backend = fixture_backend(weights, AttentionPlacement::NpuEmulator, routing, DType::F16);
      const Reference ref = read_reference(fixture_dir(f) + "/reference.json");
      for (const ReferenceCase& c : ref.cases) {
        const Agreement a = compare(backend_logits(*backend, c.ids, vocab, 3), c.logits);
        QVERIFY2(a.relative_error < 2e-2, qPrintable(QString("%1: relative error %2").arg(f).arg(a.relative_error)));
        QVERIFY2(a.top1 >= 0.98, qPrintable(QString("%1: top-1 %2").arg(f).arg(a.top1)));
      }
      QVERIFY(backend->take_notes().empty());
    }
  }

  // Profiles name the device that ran attention.
  void profile_names_the_emulator() {
    LoadOptions o;
    o.path = fixture_dir("tiny-gemma3-a");
    o.precision = Precision::F32;
    o.backend = BackendKind::Cpu;
    o.attention = AttentionPlacement::NpuEmulator;
    o.context_length = 64;
    o.threads = 2;
    auto engine = Engine::load(o);
    engine->set_profiling(true);
    GenerateOptions g;
    g.sampling.temperature = 0;
    g.max_tokens = 4;
    const GenerationStats s = engine->generate("the licence", g, [](std::string_view) { return true; });
    int on_emulator = 0;
    for (const OpTiming& t : s.profile)
      if (t.op == "attention") {
        QCOMPARE(t.device, std::string("npu-emulator"));
        ++on_emulator;
      }
    QCOMPARE(on_emulator, 6);  // one entry per layer
  }
};

QTEST_APPLESS_MAIN(NpuEmulator)
#include "test_npu_emulator.moc"
