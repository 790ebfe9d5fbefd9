// Every kernel set's small ops and attention loops (MatmulKernels::ops, op_kernels.h) against the
// portable reference (ops.h), on the sizes Gemma 3 runs: hidden 1152 / 2560 / 5376, head_dim 256 /
// 128, 1 to 4096 keys, F16 and F32 cache rows, with and without softcapping, and the inf / nan
// cases the reference defines. Each set is forced one by one, as CpuOptions::matmul_kernels does.
#include <QtTest>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "cpu_kernel_sets.h"
#include "model/config.h"
#include "quant/convert.h"
#include "runtime/cpu/cpu_backend.h"
#include "runtime/cpu/kv_cache.h"
#include "runtime/cpu/ops.h"
#include "runtime/cpu/thread_pool.h"

using namespace kiln;
using namespace kiln::test;

namespace {

std::vector<float> normal(size_t n, float sigma, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, sigma);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

// Where a reference value is inf or nan, the set's must be the same; elsewhere within
// rel * |ref| + abs. Returns "" or the first element that is not.
QString within(const float* got, const float* ref, size_t n, double rel, double abs, const char* what) {
  for (size_t i = 0; i < n; ++i) {
    const bool same_class = std::isnan(got[i]) == std::isnan(ref[i]) &&
                            (std::isinf(ref[i]) ? got[i] == ref[i] : std::isnan(ref[i]) || std::isfinite(got[i]));
    if (!same_class || (std::isfinite(ref[i]) && std::fabs(double(got[i]) - ref[i]) > rel * std::fabs(ref[i]) + abs))
      return QString("%1 [%2]: %3, reference %4").arg(what).arg(i).arg(got[i], 0, 'g', 9).arg(ref[i], 0, 'g', 9);
  }
  return {};
}

QString bitwise_equal(const float* got, const float* ref, size_t n, const char* what) {
  for (size_t i = 0; i < n; ++i)
    if (std::memcmp(&got[i], &ref[i], sizeof(float)) != 0)
      return QString("%1 [%2]: %3, reference %4").arg(what).arg(i).arg(got[i], 0, 'g', 9).arg(ref[i], 0, 'g', 9);
  return {};
}

// Lengths a loop sees: the model's, and ones leaving every tail a register can.
const int64_t kHidden[] = {1152, 2560, 5376, 256, 128, 1, 7, 17, 1152 + 13};

}  // namespace

class CpuOpKernels : public QObject {
  Q_OBJECT
 private slots:
  // The sets this CPU has, each with ops of its own (a set forced through the options reaches them).
  void every_set_carries_its_ops() {
    for (const MatmulKernels& k : cpu_kernel_sets()) {
      qInfo("%s", k.name);
      const OpKernels& o = k.ops;
      QVERIFY(o.rms_norm && o.scale && o.add_in_place && o.gelu_tanh_mul && o.rope_rotate && o.softmax &&
              o.scale_softcap && o.accumulate_rows);
      const bool portable = std::strcmp(k.name, "portable") == 0;
      QCOMPARE(o.softmax == &softmax, portable);
      QCOMPARE(o.accumulate_rows == &accumulate_rows, portable);
    }
    QCOMPARE(best_matmul_kernels().ops.rms_norm == &rms_norm, !cpu_has_avx2_kernels());
  }

  // Sum of squares in double, as the reference: at most one rounding of the scale apart.
  void rms_norm_matches_the_reference() {
    for (const MatmulKernels& k : cpu_kernel_sets())
      for (int64_t n : kHidden)
        for (float sigma : {1e-3f, 1.0f, 40.0f}) {
          const std::vector<float> x = normal(size_t(n), sigma, uint32_t(n)), w = normal(size_t(n), 0.3f, 7);
          std::vector<float> ref(x.size()), got(x.size()), in_place = x;
          rms_norm(x.data(), w.data(), n, 1e-6f, ref.data());
          k.ops.rms_norm(x.data(), w.data(), n, 1e-6f, got.data());
          k.ops.rms_norm(in_place.data(), w.data(), n, 1e-6f, in_place.data());
          const QString e = within(got.data(), ref.data(), got.size(), 3e-7, 0, k.name);
          QVERIFY2(e.isEmpty(), qPrintable(e));
          QVERIFY2(bitwise_equal(in_place.data(), got.data(), got.size(), "in place").isEmpty(), k.name);
        }
  }

  // inf makes the scale 0 (so inf * 0 = nan there, 0 elsewhere); nan makes every element nan.
  void rms_norm_keeps_the_references_inf_and_nan() {
    for (const MatmulKernels& k : cpu_kernel_sets())
      for (float bad : {INFINITY, -INFINITY, NAN}) {
        std::vector<float> x = normal(1152, 1.0f, 3), w(1152, 1.0f), ref(1152), got(1152);
        x[700] = bad;
        rms_norm(x.data(), w.data(), 1152, 1e-6f, ref.data());
        k.ops.rms_norm(x.data(), w.data(), 1152, 1e-6f, got.data());
        QVERIFY(std::isnan(ref[700]));
        const QString e = within(got.data(), ref.data(), got.size(), 0, 0, k.name);
        QVERIFY2(e.isEmpty(), qPrintable(e));
      }
  }

  // One multiply or add an element: the same bits.
  void scale_and_add_are_exact() {
    for (const MatmulKernels& k : cpu_kernel_sets())
      for (int64_t n : kHidden) {
        const std::vector<float> x = normal(size_t(n), 2.0f, 11), y = normal(size_t(n), 2.0f, 12);
        std::vector<float> ref = x, got = x;
        scale(ref.data(), n, 33.94f);
        k.ops.scale(got.data(), n, 33.94f);
        QVERIFY2(bitwise_equal(got.data(), ref.data(), got.size(), "scale").isEmpty(), k.name);
        add_in_place(ref.data(), y.data(), n);
        k.ops.add_in_place(got.data(), y.data(), n);
        QVERIFY2(bitwise_equal(got.data(), ref.data(), got.size(), "add").isEmpty(), k.name);
      }
  }

  // The reference's exp polynomial, with fused multiply-adds: within a few roundings everywhere,
  // the clamped ends and inf / nan included.
  void gelu_tanh_mul_matches_the_reference() {
    for (const MatmulKernels& k : cpu_kernel_sets())
      for (int64_t n : {int64_t(6912), int64_t(10240), int64_t(21504), int64_t(6912 * 3 + 7), int64_t(5)}) {
        std::vector<float> gate = normal(size_t(n), 3.0f, uint32_t(n)), up = normal(size_t(n), 1.0f, 5);
        const float extremes[] = {-60.0f, 60.0f, -1e30f, 1e30f, INFINITY, -INFINITY, NAN, 0.0f, -0.0f, 1e-30f};
        for (size_t i = 0; i < std::size(extremes) && i * 3 < gate.size(); ++i)
          gate[gate.size() - 1 - i * 3] = extremes[i];
        std::vector<float> ref(gate.size()), got(gate.size());
        gelu_tanh_mul(gate.data(), up.data(), n, ref.data());
        k.ops.gelu_tanh_mul(gate.data(), up.data(), n, got.data());
        const QString e = within(got.data(), ref.data(), got.size(), 1e-6, 1e-37, k.name);
        QVERIFY2(e.isEmpty(), qPrintable(e));
      }
  }

  // rope = rope_angles + the set's rotation, bit for bit apart from rounding order: within an ulp
  // of the pair's magnitude, at the positions and bases Gemma 3 uses.
  void rope_rotation_matches_the_reference() {
    struct Shape { int head_dim, heads; };
    for (const MatmulKernels& k : cpu_kernel_sets())
      for (Shape s : {Shape{256, 4}, Shape{256, 1}, Shape{128, 32}, Shape{128, 16}, Shape{72, 2}, Shape{2, 1}})
        for (int64_t pos : {int64_t(0), int64_t(1), int64_t(511), int64_t(4095), int64_t(131071)})
          for (float base : {10000.0f, 1000000.0f}) {
            const float scaling = base > 10000.0f ? 8.0f : 1.0f;
            const std::vector<float> x = normal(size_t(s.head_dim) * s.heads, 1.5f, uint32_t(pos + s.head_dim));
            std::vector<float> ref = x, got = x;
            rope(ref.data(), s.heads, s.head_dim, pos, base, scaling);
            std::vector<float> cos(size_t(s.head_dim / 2)), sin(cos.size());
            rope_angles(s.head_dim, pos, base, scaling, cos.data(), sin.data());
            k.ops.rope_rotate(got.data(), s.heads, s.head_dim, cos.data(), sin.data());
            const int half = s.head_dim / 2;
            for (size_t i = 0; i < x.size(); ++i) {
              const size_t pair = i % s.head_dim < size_t(half) ? i + half : i - half;
              const double bound = 0x1p-23 * (std::fabs(x[i]) + std::fabs(x[pair]));
              QVERIFY2(std::fabs(double(got[i]) - ref[i]) <= bound,
                       qPrintable(QString("%1 dim %2 pos %3 [%4]: %5 vs %6").arg(k.name).arg(s.head_dim).arg(pos)
                                      .arg(i).arg(got[i]).arg(ref[i])));
            }
          }
  }

  // Softmax over 1 .. 4096 scores: exp's polynomial instead of std::exp, the sum in double as there.
  void softmax_matches_the_reference() {
    for (const MatmulKernels& k : cpu_kernel_sets())
      for (int64_t n : {1, 2, 7, 8, 15, 16, 17, 100, 512, 1000, 4096})
        for (float sigma : {1.0f, 10.0f, 60.0f}) {
          const std::vector<float> x = normal(size_t(n), sigma, uint32_t(n * 3));
          std::vector<float> ref = x, got = x;
          softmax(ref.data(), n);
          k.ops.softmax(got.data(), n);
          const QString e = within(got.data(), ref.data(), got.size(), 1e-6, 1e-37, k.name);
          QVERIFY2(e.isEmpty(), qPrintable(e));
        }
  }

  // -inf (a masked key) gets exactly 0; +inf or nan anywhere, or every key -inf, makes all nan.
  void softmax_keeps_the_references_inf_and_nan() {
    struct Case { std::vector<int> at; float value; };
    const Case cases[] = {{{3, 40, 99}, -INFINITY}, {{50}, INFINITY}, {{0}, NAN}, {{77}, NAN}};
    for (const MatmulKernels& k : cpu_kernel_sets()) {
      for (const Case& c : cases) {
        std::vector<float> x = normal(100, 3.0f, 9);
        for (int i : c.at) x[size_t(i)] = c.value;
        std::vector<float> ref = x, got = x;
        softmax(ref.data(), 100);
        k.ops.softmax(got.data(), 100);
        if (c.value == -INFINITY)
          for (int i : c.at) QCOMPARE(got[size_t(i)], 0.0f);
        else
          QVERIFY(std::isnan(ref[1]) && std::isnan(ref[99]));
        const QString e = within(got.data(), ref.data(), got.size(), 1e-6, 1e-37, k.name);
        QVERIFY2(e.isEmpty(), qPrintable(e));
      }
      std::vector<float> all(20, -INFINITY);
      k.ops.softmax(all.data(), 20);
      for (float v : all) QVERIFY2(std::isnan(v), k.name);
    }
  }

  // Scores times 1/sqrt(query_pre_attn_scalar), softcapped or not, and final logits capped (factor 1).
  // Without a cap: one multiply, the same bits. With one: tanh through exp, within 4e-7 * cap
  // (measured 2.3e-7: an ulp of tanh near 1 and the rounding of cap * tanh).
  void scale_softcap_matches_the_reference() {
    for (const MatmulKernels& k : cpu_kernel_sets())
      for (int64_t n : {int64_t(1), int64_t(9), int64_t(100), int64_t(4096), int64_t(262144 + 5)})
        for (float cap : {0.0f, 50.0f, 30.0f}) {
          const float factor = cap == 30.0f ? 1.0f : 0.0625f;
          std::vector<float> x = normal(size_t(n), 400.0f, uint32_t(n));
          const float extremes[] = {INFINITY, -INFINITY, NAN, 0.0f, 1e-3f, -1e-3f};
          for (size_t i = 0; i < std::size(extremes) && i < x.size(); ++i) x[x.size() - 1 - i] = extremes[i];
          std::vector<float> ref = x, got = x;
          scale_softcap(ref.data(), n, factor, cap);
          k.ops.scale_softcap(got.data(), n, factor, cap);
          const QString e = cap > 0 ? within(got.data(), ref.data(), got.size(), 0, 4e-7 * cap, k.name)
                                    : bitwise_equal(got.data(), ref.data(), got.size(), k.name);
          QVERIFY2(e.isEmpty(), qPrintable(e));
        }
  }

  // Attention's weighted sum of value rows, F16 rows converted inside the loop: rows of a cache
  // (stride: all kv heads), 1 .. 4096 of them, weights from a softmax, added to what out held.
  // Fused multiply-adds round differently: within 1e-6 of the sum of |w v| (measured 1.9e-7).
  void accumulate_rows_matches_the_reference() {
    for (const MatmulKernels& k : cpu_kernel_sets())
      for (DType type : {DType::F16, DType::F32})
        for (int D : {256, 128, 72})
          for (int64_t count : {1, 3, 64, 1000, 4096}) {
            const int kv_heads = D == 128 ? 4 : 1;
            const size_t row = size_t(kv_heads) * D, elem = type == DType::F16 ? 2 : 4;
            const std::vector<float> values = normal(size_t(count) * row, 1.0f, uint32_t(count + D));
            std::vector<uint8_t> rows(values.size() * elem);
            for (size_t i = 0; i < values.size(); ++i) {
              if (type == DType::F16) {
                const uint16_t h = float_to_fp16(values[i]);
                std::memcpy(&rows[i * 2], &h, 2);
              } else {
                std::memcpy(&rows[i * 4], &values[i], 4);
              }
            }
            std::vector<float> w = normal(size_t(count), 3.0f, 21);
            softmax(w.data(), count);
            const std::vector<float> start = normal(size_t(D), 0.1f, 22);
            const uint8_t* head = rows.data() + (kv_heads - 1) * size_t(D) * elem;  // the last kv head
            std::vector<float> ref = start, got = start;
            accumulate_rows(head, row * elem, type, count, w.data(), D, ref.data());
            k.ops.accumulate_rows(head, row * elem, type, count, w.data(), D, got.data());
            for (int d = 0; d < D; ++d) {
              double magnitude = std::fabs(start[size_t(d)]);
              for (int64_t j = 0; j < count; ++j)
                magnitude += std::fabs(w[size_t(j)] * values[j * row + (kv_heads - 1) * D + d]);
              QVERIFY2(std::fabs(double(got[size_t(d)]) - ref[size_t(d)]) <= 1e-6 * magnitude,
                       qPrintable(QString("%1 %2 dim %3, %4 rows [%5]: %6 vs %7").arg(k.name).arg(to_string(type))
                                      .arg(D).arg(count).arg(d).arg(got[size_t(d)]).arg(ref[size_t(d)])));
            }
          }
  }

  // attention_batch with each set (its dot products, softcap, softmax and value sums) against the
  // portable set: the 1B shape (4 heads, 1 kv head, dim 256) and a 27B-like one (8 heads, 4 kv heads,
  // dim 128), a local and a global layer, F16 and F32 caches, 4095 cached positions, one decode token
  // and a batch of 3. Within 5e-6 of the output's largest magnitude (measured: at most 2e-6; the
  // sets' score dot products round differently too).
  void attention_matches_the_portable_set() {
    struct Shape { int heads, kv_heads, head_dim; };
    const MatmulKernels portable = portable_matmul_kernels();
    ThreadPool pool(2);
    for (Shape s : {Shape{4, 1, 256}, Shape{8, 4, 128}})
      for (DType element : {DType::F16, DType::F32})
        for (float cap : {0.0f, 50.0f}) {
          Gemma3Config c;
          c.num_layers = 2;
          c.num_heads = s.heads;
          c.num_kv_heads = s.kv_heads;
          c.head_dim = s.head_dim;
          c.hidden_size = s.heads * s.head_dim;
          c.sliding_window = 512;
          c.query_pre_attn_scalar = float(s.head_dim);
          c.attn_logit_softcapping = cap;
          c.layer_is_global = {false, true};
          const int64_t kv_dim = int64_t(s.kv_heads) * s.head_dim, q_dim = int64_t(s.heads) * s.head_dim;
          const int64_t cached = 4095;
          KvCache cache(c, 4200, element);
          for (int layer : {0, 1}) {
            // Keys and values of unit scale, queries large enough that some scores reach the cap.
            const std::vector<float> k = normal(size_t(cached * kv_dim), 1.0f, 31), v = normal(k.size(), 1.0f, 32);
            store_kv(c, layer, cache, k.data(), v.data(), 0, int(cached));
          }
          for (int n : {1, 3}) {
            const std::vector<float> q = normal(size_t(n * q_dim), 4.0f, uint32_t(n)),
                                     k = normal(size_t(n * kv_dim), 1.0f, 33), v = normal(k.size(), 1.0f, 34);
            for (int layer : {0, 1}) {
              std::vector<float> ref(size_t(n * q_dim));
              attention_batch(portable, c, layer, cache, q.data(), k.data(), v.data(), cached, n, ref.data(), pool);
              float largest = 0;
              for (float x : ref) largest = std::max(largest, std::fabs(x));
              for (const MatmulKernels& set : cpu_kernel_sets()) {
                std::vector<float> got(ref.size());
                attention_batch(set, c, layer, cache, q.data(), k.data(), v.data(), cached, n, got.data(), pool);
                const QString e = within(got.data(), ref.data(), got.size(), 0, 5e-6 * largest, set.name);
                QVERIFY2(e.isEmpty(), qPrintable(QString("dim %1 %2 cap %3 layer %4 n %5: ").arg(s.head_dim)
                                                     .arg(to_string(element)).arg(cap).arg(layer).arg(n) + e));
              }
            }
          }
        }
  }
};

QTEST_APPLESS_MAIN(CpuOpKernels)
#include "test_cpu_op_kernels.moc"
