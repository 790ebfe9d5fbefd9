// The attention kernels against the CPU reference ops (runtime/cpu) on whatever Vulkan device is
// there (lavapipe in CI): qk_norm_rope and attention (batches). Outputs are poisoned with NaN.
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <string>

#include "model/config.h"
#include "quant/convert.h"
#include "runtime/cpu/ops.h"
#include "runtime/vulkan/forward.h"
#include "runtime/vulkan/model_gpu.h"
#include "runtime/vulkan/push_constants.h"
#include "vk_harness.h"

using namespace kiln;
using namespace kiln::test;

class VulkanAttention : public QObject {
  Q_OBJECT
  VkHarness h;

 private slots:
  void qk_norm_rope_data() {
    QTest::addColumn<int>("head_dim");
    QTest::addColumn<bool>("global");
    QTest::addColumn<bool>("f16");
    for (int hd : {16, 128, 256})
      for (bool g : {false, true})
        for (bool f16 : {false, true})
          QTest::newRow(("hd " + std::to_string(hd) + (g ? " global" : " local") + (f16 ? " f16" : " f32")).c_str())
              << hd << g << f16;
  }

  // qk_norm_rope: per-head RMSNorm then RoPE on q in place; k and v into the cache ring.
  void qk_norm_rope() {
    QFETCH(int, head_dim);
    QFETCH(bool, global);
    QFETCH(bool, f16);
    Gemma3Config c;
    c.head_dim = head_dim;
    c.rope_scaling_factor = 8.0f;
    const int heads = 4, kv = 2, n = 3, pos0 = 5, cache_slots = 6, context = 16;  // positions 5, 6, 7 -> cache_slots 5, 0, 1
    const int stride = (heads + 2 * kv) * head_dim;
    const float eps = 1e-6f;
    const std::vector<float> qkv = random_floats(size_t(n) * stride, 4, -3, 3);
    const std::vector<float> norms = random_floats(size_t(2) * head_dim, 5, 0.5f, 1.5f);
    const float base = global ? c.rope_theta : c.rope_local_base_freq;
    const float scaling = global ? c.rope_scaling_factor : 1.0f;

    std::vector<float> q_ref(size_t(n) * heads * head_dim), k_ref(size_t(cache_slots) * kv * head_dim, 0.0f),
        v_ref(k_ref.size(), 0.0f);
    for (int t = 0; t < n; ++t) {
      const float* row = &qkv[size_t(t) * stride];
      float* q = &q_ref[size_t(t) * heads * head_dim];
      std::vector<float> k(row + heads * head_dim, row + (heads + kv) * head_dim);
      for (int hh = 0; hh < heads; ++hh) rms_norm(row + hh * head_dim, norms.data(), head_dim, eps, q + hh * head_dim);
      for (int hh = 0; hh < kv; ++hh) rms_norm(&k[hh * head_dim], norms.data() + head_dim, head_dim, eps, &k[hh * head_dim]);
      rope(q, heads, head_dim, pos0 + t, base, scaling);
      rope(k.data(), kv, head_dim, pos0 + t, base, scaling);
      const int slot = (pos0 + t) % cache_slots;
      for (int i = 0; i < kv * head_dim; ++i) {
        k_ref[size_t(slot) * kv * head_dim + i] = k[i];
        v_ref[size_t(slot) * kv * head_dim + i] = row[(heads + kv) * head_dim + i];
      }
    }

    const std::vector<float> table = vk::rope_table(c, context);
    const vk::BufferSlice qs = h.upload(qkv), ns = h.upload(norms), rs = h.upload(table);
    const size_t cache = k_ref.size();
    const vk::BufferSlice ks = f16 ? h.upload(std::vector<uint16_t>(cache, 0)) : h.upload(std::vector<float>(cache, 0));
    const vk::BufferSlice vs = f16 ? h.upload(std::vector<uint16_t>(cache, 0)) : h.upload(std::vector<float>(cache, 0));
    vk::RopePush p{pos0, heads, kv, uint32_t(head_dim), uint32_t(stride), cache_slots, 0, uint32_t(head_dim),
                   global ? uint32_t(context * head_dim / 2) : 0u, eps};
    h.run(h.pipelines->get(std::string("qk_norm_rope_kv_") + (f16 ? "f16" : "f32"), 5, {64}), {qs, ns, rs, ks, vs}, p,
          n * (heads + kv));

    const std::vector<float> got = h.read(qs, qkv.size());
    std::vector<float> q_got;
    for (int t = 0; t < n; ++t)
      q_got.insert(q_got.end(), got.begin() + size_t(t) * stride, got.begin() + size_t(t) * stride + heads * head_dim);
    auto cache_floats = [&](const vk::BufferSlice& s) {
      if (!f16) return h.read(s, cache);
      std::vector<float> out;
      for (uint16_t v : h.read<uint16_t>(s, cache)) out.push_back(fp16_to_float(v));
      return out;
    };
    const double eq = relative_error(q_got, q_ref);
    const double ek = relative_error(cache_floats(ks), k_ref), ev = relative_error(cache_floats(vs), v_ref);
    const double cache_bound = f16 ? 1e-3 : 1e-6;  // fp16 rounding of the stored keys and values
    QVERIFY2(eq < 1e-6, qPrintable(QString("q %1").arg(eq)));
    QVERIFY2(ek < cache_bound && ev < cache_bound, qPrintable(QString("k %1, v %2").arg(ek).arg(ev)));
  }

  void attention_data() {
    QTest::addColumn<int>("heads");
    QTest::addColumn<int>("kv_heads");
    QTest::addColumn<int>("head_dim");
    QTest::addColumn<int>("tokens");
    QTest::addColumn<int>("pos0");
    QTest::addColumn<int>("window");  // 0: global
    QTest::addColumn<int>("cache_slots");
    QTest::addColumn<bool>("f16");
    QTest::newRow("global prefill, GQA 4:2, hd 16") << 4 << 2 << 16 << 7 << 20 << 0 << 64 << false;
    QTest::newRow("local prefill across the ring, hd 32") << 6 << 2 << 32 << 5 << 30 << 8 << 12 << true;
    QTest::newRow("prefill from 0, 70 keys (two tiles)") << 2 << 1 << 128 << 70 << 0 << 0 << 128 << true;
    QTest::newRow("one token, 1000 keys, hd 128") << 4 << 1 << 128 << 1 << 999 << 0 << 1024 << true;
    QTest::newRow("one token local, window 512, hd 256") << 2 << 1 << 256 << 1 << 1500 << 512 << 512 << false;
    QTest::newRow("one token at position 3") << 4 << 2 << 16 << 1 << 3 << 0 << 16 << false;
  }

  // attention (batches, keys already in the cache) against attend_one over the same cache rows.
  void attention() {
    QFETCH(int, heads);
    QFETCH(int, kv_heads);
    QFETCH(int, head_dim);
    QFETCH(int, tokens);
    QFETCH(int, pos0);
    QFETCH(int, window);
    QFETCH(int, cache_slots);
    QFETCH(bool, f16);
    const int D = head_dim, stride = (heads + 2 * kv_heads) * D;
    const float scale_factor = 1.0f / std::sqrt(24.0f);
    const std::vector<float> qkv = random_floats(size_t(tokens) * stride, 7, -2, 2);
    std::vector<float> k = random_floats(size_t(cache_slots) * kv_heads * D, 8, -2, 2);
    std::vector<float> v = random_floats(k.size(), 9);
    std::vector<uint16_t> k16, v16;
    if (f16)
      for (size_t i = 0; i < k.size(); ++i) {
        k16.push_back(float_to_fp16(k[i]));
        v16.push_back(float_to_fp16(v[i]));
        k[i] = fp16_to_float(k16.back());  // the reference sees what the cache holds
        v[i] = fp16_to_float(v16.back());
      }

    std::vector<float> expected(size_t(tokens) * heads * D), scores(size_t(pos0 + tokens));
    for (int t = 0; t < tokens; ++t)
      for (int hh = 0; hh < heads; ++hh) {
        const int p = pos0 + t, kvh = hh / (heads / kv_heads);
        const int lo = window ? std::max(0, p - window + 1) : 0;
        std::vector<const float*> keys, values;
        for (int j = lo; j <= p; ++j) {
          keys.push_back(&k[(size_t(j % cache_slots) * kv_heads + kvh) * D]);
          values.push_back(&v[(size_t(j % cache_slots) * kv_heads + kvh) * D]);
        }
        attend_one(&qkv[size_t(t) * stride + hh * D], keys.data(), values.data(), int64_t(keys.size()), D, scale_factor,
                   scores.data(), &expected[(size_t(t) * heads + hh) * D]);
      }

    const vk::BufferSlice qs = h.upload(qkv), ks = f16 ? h.upload(k16) : h.upload(k),
                          vs = f16 ? h.upload(v16) : h.upload(v), out = h.poisoned(expected.size());
    vk::AttentionPush ap{uint32_t(pos0), uint32_t(heads), uint32_t(kv_heads), uint32_t(D), uint32_t(stride),
                         uint32_t(heads * D), uint32_t(cache_slots), uint32_t(window), scale_factor, 0.0f};
    h.run(h.pipelines->get(std::string("attention_kv_") + (f16 ? "f16" : "f32"), 4, {64}), {qs, ks, vs, out}, ap,
          uint32_t(tokens * heads));
    const double err = relative_error(h.read(out, expected.size()), expected);
    QVERIFY2(err < 1e-5, qPrintable(QString("relative error %1").arg(err)));
  }
};

QTEST_GUILESS_MAIN(VulkanAttention)
#include "test_attention.moc"
