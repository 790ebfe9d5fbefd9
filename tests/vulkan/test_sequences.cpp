// Several sequences on the Vulkan backend (the server's slots): a decode step of several sequences
// at once (forward_sequences: one batch through matvec_items_*, attention per item on its own
// cache) gives each sequence the logits it gets alone, at different positions, one of them past a
// local layer's ring; sequences come and go without touching sequence 0's cache; a step checks its
// items; and more sequences than memory holds are refused before anything is allocated.
#include <QtTest>

#include <algorithm>
#include <random>

#include "model/checkpoint.h"
#include "model/weights.h"
#include "runtime/vulkan/kquant_layout.h"
#include "runtime/vulkan_probe.h"
#include "model_fixture.h"

using namespace kiln;
using namespace kiln::test;

namespace {

// At this context the local rings hold window + max_batch - 1 = window + 511 positions: a
// sequence longer than that writes over its ring's start.
constexpr int kContext = 1024;

// A fixture's weights: safetensors in `type`, or a GGUF's K-quants as the GPU holds them (Q4_K_M:
// q|k|v stacks that mix Q4_K and Q6_K).
std::shared_ptr<const Gemma3Weights> weights_of(const QString& fixture, int type) {
  if (!fixture.endsWith(".gguf")) return load_fixture(fixture.toStdString(), DType(type));
  const Checkpoint ck = open_checkpoint(fixture_dir(fixture.toStdString().c_str()));
  auto held = [](DType stored) { return vk::gpu_kquant(stored) ? stored : held_type_for_stored(stored); };
  return std::make_shared<Gemma3Weights>(load_weights_held_as(ck.config, *ck.tensors, held, 2));
}

std::vector<int32_t> random_tokens(int n, int vocab, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> pick(3, vocab - 1);
  std::vector<int32_t> t(static_cast<size_t>(n));
  for (int32_t& x : t) x = pick(rng);
  return t;
}

struct Stream {
  std::vector<int32_t> prompt, decoded;  // decoded: the tokens of the steps after the prompt
};

// Each stream alone in sequence 0 of its own backend: the prompt as one batch, then a token a
// step. Row k: the logits of decode step k.
std::vector<std::vector<float>> alone(Backend& b, const Stream& s, int vocab) {
  std::vector<float> row(static_cast<size_t>(vocab));
  b.forward(s.prompt, 0, false, row.data());
  std::vector<std::vector<float>> rows;
  for (size_t k = 0; k < s.decoded.size(); ++k) {
    b.forward(std::span(s.decoded).subspan(k, 1), int(s.prompt.size() + k), false, row.data());
    rows.push_back(row);
  }
  return rows;
}

double worst_difference(const std::vector<float>& a, const std::vector<float>& b) {
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, double(std::abs(a[i] - b[i])));
  return worst;
}

bool has_int8_device() {
  std::string status;
  const auto devices = list_vulkan_devices(status);
  return std::any_of(devices.begin(), devices.end(), [](const GpuDevice& d) { return d.integer_dot; });
}

}  // namespace

class VulkanSequences : public QObject {
  Q_OBJECT
 private slots:
  void a_step_of_several_sequences_gives_each_its_logits_alone_data() {
    QTest::addColumn<QString>("fixture");
    QTest::addColumn<int>("type");
    QTest::addColumn<bool>("int8_dot");
    QTest::addColumn<bool>("nvidia_plan");
    QTest::addColumn<bool>("unstaged");
    // Alone and together the fp32 decode sums in the same order: the same bits. Int8 decode rounds
    // activations where they are made alone (int8 activations, a scale for each 8) and before the
    // matrix together (a scale for each 16): close, not equal. Alone without the staged and
    // quantized-activation kernels (staged=0 qact=0), matvec_i8_* rounds as the step's quantize_i8
    // does and sums in the same order: the same bits again.
    const QString a = "tiny-gemma3-a", k = "gguf/tiny-gemma3-k/tiny-gemma3-k-q4_k_m.gguf";
    QTest::newRow("f32") << a << int(DType::F32) << false << false << false;
    QTest::newRow("q8_0") << a << int(DType::Q8_0) << false << false << false;
    QTest::newRow("q4_0") << a << int(DType::Q4_0) << false << false << false;
    QTest::newRow("q4_0 int8 dot") << a << int(DType::Q4_0) << true << false << false;
    QTest::newRow("q8_0 int8 dot, nvidia plan") << a << int(DType::Q8_0) << true << true << false;
    QTest::newRow("q4_k_m") << k << 0 << false << false << false;
    QTest::newRow("q4_k_m int8 dot, nvidia plan") << k << 0 << true << true << false;
    QTest::newRow("q4_0 int8 dot, unstaged") << a << int(DType::Q4_0) << true << false << true;
    QTest::newRow("q8_0 int8 dot, unstaged") << a << int(DType::Q8_0) << true << false << true;
    QTest::newRow("q4_k_m int8 dot, unstaged") << k << 0 << true << false << true;
  }
  void a_step_of_several_sequences_gives_each_its_logits_alone() {
    QFETCH(QString, fixture);
    QFETCH(int, type);
    QFETCH(bool, int8_dot);
    QFETCH(bool, nvidia_plan);
    QFETCH(bool, unstaged);
    if (int8_dot && !has_int8_device()) QSKIP("no Vulkan device with integer dot products");
    auto w = weights_of(fixture, type);
    const int vocab = w->config.vocab_size;
    VulkanTuning tuning = {{"int8_dot", int8_dot ? "1" : "0"}, {"family", nvidia_plan ? "nvidia" : "other"}};
    if (unstaged) tuning.insert(tuning.end(), {{"staged", "0"}, {"qact", "0"}});
    const bool exact = !int8_dot || unstaged;
    auto reference = vulkan(w, tuning, kContext);
    auto together = vulkan(w, tuning, kContext);
    QCOMPARE(together->sequences(), 1);
    QCOMPARE(together->set_sequences(4), 4);
    QCOMPARE(together->sequences(), 4);
    QVERIFY(counter(*together, "max_step_items") >= 4);

    // Prompts of 5, 4 past the window, 1 and 11 past the ring, then 6 steps.
    const int window = w->config.sliding_window, ring = window + std::min(512, kContext) - 1;
    const int lengths[4] = {5, window + 4, 1, ring + 11};
    std::vector<Stream> streams;
    for (int s = 0; s < 4; ++s)
      streams.push_back({random_tokens(lengths[s], vocab, 100 + s), random_tokens(6, vocab, 200 + s)});
    std::vector<std::vector<std::vector<float>>> expected;
    for (const Stream& s : streams) expected.push_back(alone(*reference, s, vocab));

    std::vector<float> row(static_cast<size_t>(vocab));
    for (int s = 0; s < 4; ++s) together->forward_sequence(s, streams[size_t(s)].prompt, 0, false, row.data());
    // Steps of all four in changing orders, then of three (sequence 2 waits a step).
    const std::vector<std::vector<int>> orders = {{0, 1, 2, 3}, {3, 2, 1, 0}, {1, 3, 0, 2}, {2, 0, 3, 1}};
    std::vector<size_t> step(4, 0);
    double worst = 0;
    auto run_step = [&](const std::vector<int>& order) {
      std::vector<Backend::SequenceToken> items;
      for (int s : order) {
        const Stream& st = streams[size_t(s)];
        items.push_back({s, st.decoded[step[size_t(s)]], int(st.prompt.size() + step[size_t(s)])});
      }
      std::vector<float> logits(items.size() * size_t(vocab));
      together->forward_sequences(items, vocab, logits.data());
      for (size_t i = 0; i < items.size(); ++i) {
        const int s = items[i].sequence;
        const std::vector<float> got(logits.begin() + ptrdiff_t(i * vocab), logits.begin() + ptrdiff_t((i + 1) * vocab));
        const std::vector<float>& want = expected[size_t(s)][step[size_t(s)]];
        const Agreement a = compare(std::vector<std::vector<float>>{got}, {want});
        worst = std::max(worst, worst_difference(got, want));
        if (!exact) {  // two roundings of the activations to 8 bits: the bound of test_model_kquant's
          QVERIFY2(a.relative_error < 5e-2, qPrintable(QString("sequence %1: %2").arg(s).arg(a.relative_error)));
        } else {
          QVERIFY2(got == want, qPrintable(QString("sequence %1 step %2 differs by %3")
                                               .arg(s).arg(step[size_t(s)]).arg(worst_difference(got, want))));
        }
        ++step[size_t(s)];
      }
    };
    for (const auto& order : orders) {
      run_step(order);
      if (QTest::currentTestFailed()) return;
    }
    run_step({0, 1, 3});
    if (QTest::currentTestFailed()) return;
    QCOMPARE(counter(*together, "sequence_steps"), 5.0);
    qInfo("largest difference from each sequence alone: %g", worst);
    // Sequence 2 alone, its next step (the one-item path).
    const Stream& two = streams[2];
    together->forward_sequence(2, std::span(two.decoded).subspan(4, 1), int(two.prompt.size() + 4), false, row.data());
    if (!exact) QVERIFY(compare(std::vector<std::vector<float>>{row}, {expected[2][4]}).relative_error < 5e-2);
    else QVERIFY(row == expected[2][4]);
  }

  void fewer_sequences_keep_sequence_zero_and_more_start_empty() {
    auto w = load_fixture("tiny-gemma3-a", DType::F32);
    const int vocab = w->config.vocab_size;
    auto reference = vulkan(w);
    auto b = vulkan(w);
    const Stream s{random_tokens(9, vocab, 7), random_tokens(3, vocab, 8)};
    const auto expected = alone(*reference, s, vocab);
    std::vector<float> row(static_cast<size_t>(vocab));
    QCOMPARE(b->set_sequences(3), 3);
    const uint64_t three = b->kv_cache_bytes();
    b->forward_sequence(0, s.prompt, 0, false, row.data());
    b->forward_sequence(2, s.prompt, 0, false, row.data());
    QCOMPARE(b->set_sequences(1), 1);
    QCOMPARE(b->kv_cache_bytes() * 3, three);
    b->forward_sequence(0, std::span(s.decoded).first(1), int(s.prompt.size()), false, row.data());
    QVERIFY(row == expected[0]);
    QCOMPARE(b->set_sequences(2), 2);
    // The new sequence 1 is empty: it starts at 0, not where an earlier one stood.
    QVERIFY_THROWS_EXCEPTION(Error, b->forward_sequence(1, std::span(s.decoded).first(1), 9, false, row.data()));
    b->forward_sequence(1, s.prompt, 0, false, row.data());
    std::vector<Backend::SequenceToken> items = {{0, s.decoded[1], 10}, {1, s.decoded[0], 9}};
    std::vector<float> logits(2 * size_t(vocab));
    b->forward_sequences(items, vocab, logits.data());
    QVERIFY(std::equal(expected[1].begin(), expected[1].end(), logits.begin()));
    QVERIFY(std::equal(expected[0].begin(), expected[0].end(), logits.begin() + vocab));
  }

  // 17 items: more than a recording takes (16, or the plan's step_items), so several recordings,
  // none of a single item (4, 4, 4, 3, 2 for step_items=4). Decode in fp32 on the portable plan,
  // as the first test's "q8_0" row, where a step gives each sequence the bits it gets alone on
  // every device, not only where that is the default (lavapipe; on an H100 the default rounds
  // activations to int8: close, not equal).
  void more_items_than_a_recording_takes_go_in_several_data() {
    QTest::addColumn<QString>("step_items");
    QTest::addColumn<int>("per_recording");
    QTest::addColumn<int>("recordings");
    QTest::newRow("default") << QString() << 16 << 2;
    QTest::newRow("step_items=4") << QString("4") << 4 << 5;
  }
  void more_items_than_a_recording_takes_go_in_several() {
    QFETCH(QString, step_items);
    QFETCH(int, per_recording);
    QFETCH(int, recordings);
    auto w = load_fixture("tiny-gemma3-a", DType::Q8_0);
    const int vocab = w->config.vocab_size, n = 17;
    const VulkanTuning fp32 = {{"int8_dot", "0"}, {"family", "other"}};
    VulkanTuning tuning = fp32;
    if (!step_items.isEmpty()) tuning.push_back({"step_items", step_items.toStdString()});
    auto reference = vulkan(w, fp32);
    auto b = vulkan(w, tuning);
    QCOMPARE(b->set_sequences(n), n);
    QCOMPARE(counter(*b, "max_step_items"), double(per_recording));
    std::vector<Backend::SequenceToken> items;
    std::vector<std::vector<float>> expected;
    std::vector<float> row(static_cast<size_t>(vocab));
    for (int s = 0; s < n; ++s) {
      const Stream st{random_tokens(2 + s % 3, vocab, 300 + s), random_tokens(1, vocab, 400 + s)};
      b->forward_sequence(s, st.prompt, 0, false, row.data());
      expected.push_back(alone(*reference, st, vocab)[0]);
      items.push_back({s, st.decoded[0], int(st.prompt.size())});
    }
    std::vector<float> logits(size_t(n) * vocab);
    b->forward_sequences(items, vocab, logits.data());
    QCOMPARE(counter(*b, "sequence_steps"), double(recordings));
    for (int s = 0; s < n; ++s)
      QVERIFY2(std::equal(expected[size_t(s)].begin(), expected[size_t(s)].end(), logits.begin() + ptrdiff_t(s) * vocab),
               qPrintable(QString("sequence %1").arg(s)));
  }

  void a_step_checks_its_items() {
    auto w = load_fixture("tiny-gemma3-a", DType::Q8_0);
    const int vocab = w->config.vocab_size;
    auto b = vulkan(w);
    QCOMPARE(b->set_sequences(2), 2);
    std::vector<float> logits(3 * size_t(vocab));
    const std::vector<int32_t> prompt = random_tokens(4, vocab, 1);
    b->forward_sequence(0, prompt, 0, false, logits.data());
    b->forward_sequence(1, prompt, 0, false, logits.data());
    using Items = std::vector<Backend::SequenceToken>;
    const Items twice = {{0, 5, 4}, {0, 6, 5}}, missing = {{0, 5, 4}, {2, 5, 4}}, gap = {{0, 5, 4}, {1, 5, 6}},
                bad_token = {{0, 5, 4}, {1, vocab, 4}};
    for (const Items& items : {twice, missing, gap, bad_token})
      QVERIFY_THROWS_EXCEPTION(Error, b->forward_sequences(items, vocab, logits.data()));
    QVERIFY_THROWS_EXCEPTION(Error, b->forward_sequence(2, prompt, 0, false, logits.data()));
    // Nothing ran: both still follow position 4.
    b->forward_sequences(Items{{0, 5, 4}, {1, 6, 4}}, vocab, logits.data());
  }

  void more_sequences_than_memory_holds_are_refused_before_allocating() {
    auto w = load_fixture("tiny-gemma3-a", DType::Q8_0);
    auto b = vulkan(w);
    QCOMPARE(b->set_sequences(2), 2);
    // A million caches of ~50 KiB: tens of GB, more than this machine's memory.
    try {
      b->set_sequences(1000000);
      QFAIL("a million sequences were made");
    } catch (const Error& e) {
      const std::string what = e.what();
      qInfo("%s", what.c_str());
      QVERIFY2(what.find("1000000 sequences need") != std::string::npos && what.find("MiB free") != std::string::npos,
               what.c_str());
    }
    QCOMPARE(b->sequences(), 2);
    std::vector<float> row(static_cast<size_t>(w->config.vocab_size));
    b->forward_sequence(1, random_tokens(3, w->config.vocab_size, 2), 0, false, row.data());
  }

  // What a step records: one attention dispatch an item, everything else once for all items.
  void a_step_records_each_matrix_once_for_all_items() {
    auto w = load_fixture("tiny-gemma3-a", DType::Q4_0);
    const int vocab = w->config.vocab_size, layers = w->config.num_layers;
    auto b = vulkan(w);
    QCOMPARE(b->set_sequences(4), 4);
    std::vector<float> logits(4 * size_t(vocab));
    for (int s = 0; s < 4; ++s) b->forward_sequence(s, random_tokens(3, vocab, 30 + s), 0, false, logits.data());
    std::vector<int> filled(4, 3);
    auto dispatches = [&](int n) {
      std::vector<Backend::SequenceToken> items;
      for (int s = 0; s < n; ++s) items.push_back({s, 7, filled[size_t(s)]++});
      b->forward_sequences(items, vocab, logits.data());
      return counter(*b, "dispatches_last_call");
    };
    const double one = dispatches(1), two = dispatches(2), four = dispatches(4);
    qInfo("dispatches of a step: 1 item %g (the one-token path), 2 items %g, 4 items %g", one, two, four);
    QCOMPARE(four - two, 2.0 * layers);
  }
};

QTEST_GUILESS_MAIN(VulkanSequences)
#include "test_sequences.moc"
