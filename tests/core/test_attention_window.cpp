// The sliding window and the KV ring, checked where they can go wrong: the boundary position, a
// batch longer than the window, decode after the ring wrapped, and RoPE's rotation itself.
#include <QtTest>
#include <cmath>

#include "model/config.h"
#include "runtime/cpu/cpu_backend.h"
#include "runtime/cpu/matmul_kernels.h"
#include "runtime/cpu/ops.h"

using namespace kiln;

namespace {

// One local and one global layer, one head of dim 2, window 4.
Gemma3Config tiny_config() {
  Gemma3Config c;
  c.num_layers = 2;
  c.num_heads = 1;
  c.num_kv_heads = 1;
  c.head_dim = 2;
  c.hidden_size = 2;
  c.sliding_window = 4;
  c.query_pre_attn_scalar = 2;
  c.layer_is_global = {false, true};
  return c;
}

// With q = 0 every visible key gets the same weight, so the output is the mean of the visible
// values. Value j is (j, 1): the output's first element is the mean visible position.
void run_positions(const Gemma3Config& c, KvCache& cache, ThreadPool& pool, int layer, int64_t pos, int n,
                   std::vector<double>& mean_position) {
  std::vector<float> q(n * 2, 0.0f), k(n * 2, 0.0f), v(n * 2), att(n * 2);
  for (int t = 0; t < n; ++t) {
    v[t * 2] = float(pos + t);
    v[t * 2 + 1] = 1.0f;
  }
  attention_batch(best_matmul_kernels(), c, layer, cache, q.data(), k.data(), v.data(), pos, n, att.data(), pool);
  store_kv(c, layer, cache, k.data(), v.data(), pos, n);
  for (int t = 0; t < n; ++t) mean_position.push_back(att[t * 2]);
}

double expected_mean(int64_t p, int window, bool global) {
  const int64_t lo = global ? 0 : std::max<int64_t>(0, p - window + 1);
  return double(lo + p) / 2.0;
}

}  // namespace

class AttentionWindow : public QObject {
  Q_OBJECT
 private slots:
  void window_includes_exactly_the_last_w_positions_data() {
    QTest::addColumn<int>("first_batch");
    QTest::addRow("all at once (batch longer than the window)") << 13;
    QTest::addRow("one at a time (ring wraps three times)") << 1;
    QTest::addRow("batch of window - 1, then decode") << 3;
    QTest::addRow("batch of window + 1, then decode") << 5;
  }
  void window_includes_exactly_the_last_w_positions() {
    QFETCH(int, first_batch);
    const Gemma3Config c = tiny_config();
    ThreadPool pool(2);
    for (DType element : {DType::F32, DType::F16}) {
      KvCache cache(c, 32, element);
      QCOMPARE(cache.slot_count(0), 4);   // local: a ring of the window
      QCOMPARE(cache.slot_count(1), 32);  // global: the whole context
      for (int layer : {0, 1}) {
        std::vector<double> means;
        run_positions(c, cache, pool, layer, 0, first_batch, means);
        for (int64_t p = first_batch; p < 13; ++p) run_positions(c, cache, pool, layer, p, 1, means);
        for (int64_t p = 0; p < 13; ++p)
          QVERIFY2(std::abs(means[p] - expected_mean(p, 4, layer == 1)) < 1e-2,
                   qPrintable(QString("layer %1 position %2: %3").arg(layer).arg(p).arg(means[p])));
      }
    }
  }

  // An image's tokens see the rest of their image after them; before them the window still bounds
  // them on the local layer, where the image (6 positions) is longer than the window (4), as in
  // transformers 5 ((causal or same image) and window). Tokens outside it keep their causal window.
  void image_span_is_seen_ahead_within_the_window() {
    const Gemma3Config c = tiny_config();
    ThreadPool pool(2);
    const BidirectionalSpan span{5, 6};  // positions 5..10 of a batch of 14 at position 2
    const int64_t pos = 2;
    const int n = 14;
    for (int layer : {0, 1}) {
      KvCache cache(c, 32, DType::F32);
      std::vector<double> before;
      run_positions(c, cache, pool, layer, 0, 2, before);
      std::vector<float> q(n * 2, 0.0f), k(n * 2, 0.0f), v(n * 2), att(n * 2);
      for (int t = 0; t < n; ++t) {
        v[t * 2] = float(pos + t);
        v[t * 2 + 1] = 1.0f;
      }
      attention_batch(best_matmul_kernels(), c, layer, cache, q.data(), k.data(), v.data(), pos, n, att.data(), pool,
                      std::span<const BidirectionalSpan>(&span, 1));
      for (int t = 0; t < n; ++t) {
        const int64_t p = pos + t;
        const bool inside = p >= span.first && p < span.first + span.count;
        int64_t lo = layer == 1 ? 0 : std::max<int64_t>(0, p - 3), hi = p;
        if (inside) hi = span.first + span.count - 1;
        QVERIFY2(std::abs(att[t * 2] - double(lo + hi) / 2.0) < 1e-3,
                 qPrintable(QString("layer %1 position %2: %3, expected %4").arg(layer).arg(p).arg(att[t * 2])
                                .arg(double(lo + hi) / 2.0)));
      }
    }
  }

  // RoPE rotates pair (i, i + d/2) by pos * base^(-2i/d): check against the formula directly.
  void rope_rotates_half_pairs() {
    const int d = 8;
    const float base = 10000.0f;
    std::vector<float> x(d), original(d);
    for (int i = 0; i < d; ++i) original[i] = x[i] = float(i + 1) * 0.25f;
    rope(x.data(), 1, d, 7, base, 1.0f);
    for (int i = 0; i < d / 2; ++i) {
      const double angle = 7.0 * std::pow(double(base), -2.0 * i / d);
      const double a = original[i], b = original[i + d / 2];
      QVERIFY(std::abs(x[i] - (a * std::cos(angle) - b * std::sin(angle))) < 1e-5);
      QVERIFY(std::abs(x[i + d / 2] - (b * std::cos(angle) + a * std::sin(angle))) < 1e-5);
    }
    // Linear scaling by 8 at position 56 equals no scaling at position 7.
    std::vector<float> scaled = original;
    rope(scaled.data(), 1, d, 56, base, 8.0f);
    for (int i = 0; i < d; ++i) QVERIFY(std::abs(scaled[i] - x[i]) < 1e-5);
    // Position 0 is the identity.
    std::vector<float> zero = original;
    rope(zero.data(), 1, d, 0, base, 1.0f);
    QCOMPARE(zero, original);
  }

  void rms_norm_uses_the_given_multiplier() {
    const float x[4] = {1, -2, 3, -4};
    const float w[4] = {1, 1, 2, 0.5f};  // already 1 + w
    float out[4];
    rms_norm(x, w, 4, 0.0f, out);
    const double rms = std::sqrt((1 + 4 + 9 + 16) / 4.0);
    for (int i = 0; i < 4; ++i) QVERIFY(std::abs(out[i] - x[i] / rms * w[i]) < 1e-6);
  }
};

QTEST_APPLESS_MAIN(AttentionWindow)
#include "test_attention_window.moc"
