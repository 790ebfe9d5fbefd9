// The attention kernels against the CPU reference ops (runtime/cpu) on whatever Vulkan device is
// there (lavapipe in CI): qk_norm_rope and attention (batches), and attention_decode, which does a
// single-token step's norm, RoPE, cache write, split keys and their merge in one dispatch. Outputs
// and the cache slots a step must not read are poisoned with NaN.
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <cstring>
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

namespace {

// softmax(scale * q.k_j, capped) over keys, times values; in double.
void attend_reference(const float* q, const std::vector<const float*>& keys, const std::vector<const float*>& values,
                      int D, float scale, float softcap, float* out) {
  std::vector<double> s(keys.size());
  double m = -1e300;
  for (size_t j = 0; j < keys.size(); ++j) {
    double dot = 0;
    for (int d = 0; d < D; ++d) dot += double(q[d]) * keys[j][d];
    s[j] = softcap > 0 ? softcap * std::tanh(dot * scale / softcap) : dot * scale;
    m = std::max(m, s[j]);
  }
  double sum = 0;
  for (double& v : s) sum += (v = std::exp(v - m));
  for (int d = 0; d < D; ++d) {
    double acc = 0;
    for (size_t j = 0; j < keys.size(); ++j) acc += s[j] * values[j][d];
    out[d] = float(acc / sum);
  }
}

}  // namespace

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
    // attention_prefill's blocks of queries: partial blocks, windows inside a block, keys in
    // several tiles of 64, head_dim 256 (two output pairs an invocation).
    QTest::newRow("prefill 40 tokens from 0, GQA 4:2, hd 128") << 4 << 2 << 128 << 40 << 0 << 0 << 64 << true;
    QTest::newRow("prefill 37 tokens, window 20 across the ring, hd 256") << 2 << 1 << 256 << 37 << 50 << 20 << 60
                                                                           << false;
    QTest::newRow("prefill 100 tokens at 90, window 64, f16") << 2 << 2 << 64 << 100 << 90 << 64 << 170 << true;
    QTest::newRow("prefill 33 tokens at 150, global, hd 256") << 2 << 1 << 256 << 33 << 150 << 0 << 200 << true;
  }

  // attention.comp (a workgroup a query) and attention_prefill.comp (a workgroup a block of
  // queries), batches with the keys already in the cache, against attend_one over the same rows.
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
                          vs = f16 ? h.upload(v16) : h.upload(v);
    vk::AttentionPush ap{uint32_t(pos0), uint32_t(heads), uint32_t(kv_heads), uint32_t(D), uint32_t(stride),
                         uint32_t(heads * D), uint32_t(cache_slots), uint32_t(window), scale_factor, 0.0f,
                         uint32_t(tokens)};
    for (int qb : {0, 4, 8, 16}) {  // 0: attention.comp
      const vk::BufferSlice out = h.poisoned(expected.size());
      const uint32_t blocks = qb ? (tokens + qb - 1) / qb : tokens;
      const std::string kernel =
          (qb ? "attention_prefill_q" + std::to_string(qb) + "_kv_" : std::string("attention_kv_")) + (f16 ? "f16" : "f32");
      h.run(h.pipelines->get(kernel, 4, {64}), {qs, ks, vs, out}, ap, blocks * uint32_t(heads));
      const double err = relative_error(h.read(out, expected.size()), expected);
      QVERIFY2(err < 1e-5, qPrintable(QString("%1: relative error %2").arg(kernel.c_str()).arg(err)));
    }
  }

  // Values written as int8 blocks (per 32: 8 words of int8, then 4 fp32 scales, one for each 8).
  std::vector<float> int8_blocks(const vk::BufferSlice& s, size_t count) {
    const std::vector<uint32_t> words = h.read<uint32_t>(s, count / 32 * 12);
    std::vector<float> out(count);
    for (size_t i = 0; i < count; ++i) {
      const uint32_t* b = &words[i / 32 * 12];
      float scale;
      std::memcpy(&scale, &b[8 + (i % 32) / 8], 4);
      out[i] = float(int8_t(uint8_t(b[(i % 32) / 4] >> (8 * (i % 4))))) * scale;
    }
    return out;
  }

  void decode_attention_data() {
    QTest::addColumn<int>("heads");
    QTest::addColumn<int>("kv_heads");
    QTest::addColumn<int>("head_dim");
    QTest::addColumn<int>("pos");  // of the first of two steps
    QTest::addColumn<int>("window");  // 0: global
    QTest::addColumn<int>("cache_slots");
    QTest::addColumn<bool>("f16");
    QTest::addColumn<float>("softcap");
    QTest::addColumn<int>("splits");  // of the first step, at 16 keys a split
    QTest::addColumn<bool>("int8_out");  // attention_decode_qout_*: the output rounded to int8 per 8
    for (bool q : {false, true}) {
      const std::string o = q ? ", int8 output" : "";
      auto row = [&](const char* name) -> QTestData& { return QTest::newRow((name + o).c_str()); };
      row("global, GQA 4:2, hd 128, 8 splits, f16") << 4 << 2 << 128 << 127 << 0 << 160 << true << 0.0f << 8 << q;
      // The second step's 41st split holds only the newest key: no cached key at all.
      row("global, GQA 2:1, hd 64, 40 splits, f32") << 2 << 1 << 64 << 639 << 0 << 700 << false << 0.0f << 40 << q;
      row("local ring wrap, window 48, GQA 6:2, hd 32, f16") << 6 << 2 << 32 << 230 << 48 << 52 << true << 0.0f << 3 << q;
      row("local ring wrap, window 100, hd 256, softcap, f32") << 2 << 2 << 256 << 300 << 100 << 104 << false << 5.0f
                                                              << 7 << q;
      row("one split from position 0, GQA 4:1, hd 16") << 4 << 1 << 16 << 0 << 0 << 16 << false << 0.0f << 1 << q;
      row("one split, local ring wrap, window 8, f16") << 4 << 2 << 16 << 12 << 8 << 10 << true << 0.0f << 1 << q;
    }
  }

  // attention_decode against the reference (norm + RoPE of q and the new k, then attention over
  // the window): two steps (pos, pos + 1) recorded back to back with one barrier, as decode runs
  // them. The second reads the key the first wrote and reuses the split counters, which must be
  // zero again afterwards. Both new positions' cache slots start as NaN, so a step that read its
  // own key or value from memory instead of shared memory fails.
  void decode_attention() {
    QFETCH(int, heads);
    QFETCH(int, kv_heads);
    QFETCH(int, head_dim);
    QFETCH(int, pos);
    QFETCH(int, window);
    QFETCH(int, cache_slots);
    QFETCH(bool, f16);
    QFETCH(float, softcap);
    QFETCH(int, splits);
    QFETCH(bool, int8_out);
    const int D = head_dim, kvh = kv_heads, stride = (heads + 2 * kvh) * D, context = pos + 2;
    const size_t row_floats = size_t(kvh) * D;  // one cache slot
    const float scale = 1.0f / std::sqrt(24.0f), eps = 1e-6f;
    Gemma3Config c;
    c.head_dim = D;
    c.rope_scaling_factor = 8.0f;
    const float base = window ? c.rope_local_base_freq : c.rope_theta;
    const float scaling = window ? 1.0f : c.rope_scaling_factor;
    auto as_cached = [&](float x) { return f16 ? fp16_to_float(float_to_fp16(x)) : x; };

    // [slots][kv_heads][D] as the reference sees it; the device gets the same values.
    std::vector<float> k_ref = random_floats(size_t(cache_slots) * row_floats, 21, -2, 2);
    std::vector<float> v_ref = random_floats(k_ref.size(), 22);
    for (size_t i = 0; i < k_ref.size(); ++i) {
      k_ref[i] = as_cached(k_ref[i]);
      v_ref[i] = as_cached(v_ref[i]);
    }
    const int new_slot[2] = {pos % cache_slots, (pos + 1) % cache_slots};
    for (int s : new_slot)
      for (size_t i = 0; i < row_floats; ++i) k_ref[s * row_floats + i] = v_ref[s * row_floats + i] = std::nanf("");
    auto to_device = [&](const std::vector<float>& x) {
      if (!f16) return h.upload(x);
      std::vector<uint16_t> halves;
      for (float f : x) halves.push_back(float_to_fp16(f));
      return h.upload(halves);
    };
    const vk::BufferSlice ks = to_device(k_ref), vs = to_device(v_ref);
    const std::vector<float> k_before = k_ref, v_before = v_ref;

    const std::vector<float> norms = random_floats(size_t(2) * D, 23, 0.5f, 1.5f);  // q_norm, then k_norm
    const vk::BufferSlice ns = h.upload(norms), rs = h.upload(vk::rope_table(c, context));
    const vk::BufferSlice arrivals = h.upload(std::vector<uint32_t>(size_t(heads), 0));
    vk::KernelPlan plan;
    plan.attention_keys_per_split = 16;

    std::vector<std::vector<float>> expected(2, std::vector<float>(size_t(heads) * D));
    std::vector<vk::BufferSlice> qkv_rows, outs;
    std::vector<vk::DecodeAttentionPush> pushes;
    size_t partial_floats = 0;
    for (int step = 0; step < 2; ++step) {
      const int p = pos + step, lo = window ? std::max(0, p - window + 1) : 0;
      const std::vector<float> row = random_floats(size_t(stride), 30 + step, -3, 3);
      for (int g = 0; g < kvh; ++g) {  // the new key and value, into the reference's cache
        std::vector<float> k(D);
        rms_norm(&row[size_t(heads + g) * D], norms.data() + D, D, eps, k.data());
        rope(k.data(), 1, D, p, base, scaling);
        for (int d = 0; d < D; ++d) {
          k_ref[new_slot[step] * row_floats + size_t(g) * D + d] = as_cached(k[d]);
          v_ref[new_slot[step] * row_floats + size_t(g) * D + d] = as_cached(row[size_t(heads + kvh + g) * D + d]);
        }
      }
      for (int hh = 0; hh < heads; ++hh) {
        std::vector<float> q(D);
        rms_norm(&row[size_t(hh) * D], norms.data(), D, eps, q.data());
        rope(q.data(), 1, D, p, base, scaling);
        const int g = hh / (heads / kvh);
        std::vector<const float*> keys, values;
        for (int j = lo; j <= p; ++j) {
          keys.push_back(&k_ref[size_t(j % cache_slots) * row_floats + size_t(g) * D]);
          values.push_back(&v_ref[size_t(j % cache_slots) * row_floats + size_t(g) * D]);
        }
        attend_reference(q.data(), keys, values, D, scale, softcap, &expected[step][size_t(hh) * D]);
      }
      const vk::AttentionSplit split = vk::decode_attention_split(uint32_t(p - lo + 1), plan);
      if (step == 0) QCOMPARE(int(split.splits), splits);
      partial_floats = std::max(partial_floats, size_t(heads) * split.splits * (D + 2));
      pushes.push_back({uint32_t(p), uint32_t(heads), uint32_t(kvh), uint32_t(D), uint32_t(cache_slots),
                        uint32_t(window), split.splits, split.keys_per_split, 0, uint32_t(D),
                        window ? 0u : uint32_t(context * D / 2), scale, softcap, eps});
      qkv_rows.push_back(h.upload(row));
      outs.push_back(h.poisoned(size_t(heads) * D));
    }

    const vk::BufferSlice partials = h.poisoned(partial_floats);
    const vk::Kernel& k = h.pipelines->get(
        std::string(int8_out ? "attention_decode_qout_kv_" : "attention_decode_kv_") + (f16 ? "f16" : "f32"), 10, {64});
    h.seq->begin(false);
    for (int step = 0; step < 2; ++step) {
      VkDescriptorSet set =
          h.descriptors->allocate(k, std::vector{qkv_rows[step], ks, vs, outs[step], partials, arrivals, ns, rs, ks, vs});
      h.seq->dispatch(k, set, &pushes[step], sizeof pushes[step], uint32_t(heads) * pushes[step].splits, 1, 1, "test", -1);
      h.seq->barrier();
    }
    h.seq->submit_and_wait();

    for (int step = 0; step < 2; ++step) {
      const double err = relative_error(int8_out ? int8_blocks(outs[step], expected[step].size())
                                                 : h.read(outs[step], expected[step].size()),
                                        expected[step]);
      // Int8 with a scale for each 8 values: ~1/254 of their largest, relative rms ~3e-3.
      const double bound = int8_out ? 1e-2 : 1e-5;
      QVERIFY2(err < bound, qPrintable(QString("step %1: relative error %2").arg(step).arg(err)));
    }
    // The new slots hold the new keys and values; every other slot is as it was.
    auto cache_floats = [&](const vk::BufferSlice& s) {
      if (!f16) return h.read(s, k_ref.size());
      std::vector<float> out;
      for (uint16_t v : h.read<uint16_t>(s, k_ref.size())) out.push_back(fp16_to_float(v));
      return out;
    };
    const std::vector<float> k_got = cache_floats(ks), v_got = cache_floats(vs);
    std::vector<float> new_got, new_ref;
    for (size_t i = 0; i < k_ref.size(); ++i) {
      const int slot = int(i / row_floats);
      if (slot == new_slot[0] || slot == new_slot[1]) {
        new_got.insert(new_got.end(), {k_got[i], v_got[i]});
        new_ref.insert(new_ref.end(), {k_ref[i], v_ref[i]});
      } else if (k_got[i] != k_before[i] || v_got[i] != v_before[i]) {
        QFAIL(qPrintable(QString("cache slot %1 changed").arg(slot)));
      }
    }
    const double err_new = relative_error(new_got, new_ref);
    QVERIFY2(err_new < (f16 ? 1e-3 : 1e-6), qPrintable(QString("new keys and values: %1").arg(err_new)));
    const std::vector<uint32_t> counts = h.read<uint32_t>(arrivals, size_t(heads));
    QVERIFY2(std::all_of(counts.begin(), counts.end(), [](uint32_t n) { return n == 0; }),
             "split counters are not back to zero");
  }
};

QTEST_GUILESS_MAIN(VulkanAttention)
#include "test_attention.moc"
