// Parallel generation through the engine's slots on a real (tiny) model: several sequences decoded
// in one forward pass a step give each the text it gets alone, a slot may join while others decode,
// a follow-up prompt reuses its slot's cache, and a cancelled slot is free at the next step.
#include <QtTest>

#include <random>
#include <set>

#include "fixture_reference.h"
#include "kiln/hardware.h"
#include "kiln/engine.h"

using namespace kiln;
using namespace kiln::test;

namespace {

std::unique_ptr<Engine> load(Precision p = Precision::F32, int context = 256, BackendKind backend = BackendKind::Cpu) {
  LoadOptions o;
  o.path = fixture_dir("tiny-gemma3-a");
  o.precision = p;
  o.backend = backend;
  o.context_length = context;
  o.threads = 2;
  return Engine::load(o);
}

// Settings that make the tiny model's text varied (its greedy text is mostly newlines), so that a
// mix-up between slots shows.
GenerateOptions varied(uint64_t seed, int max_tokens) {
  GenerateOptions g;
  g.sampling = SamplingChoice::exactly({1.5f, 0, 1.0f, 0.0f, 1.5f, 64, seed});
  g.max_tokens = max_tokens;
  return g;
}

GenerateOptions greedy(int max_tokens) {
  GenerateOptions g;
  g.sampling.temperature = 0;
  g.max_tokens = max_tokens;
  return g;
}

// A generation's text, and the model's log-probability of each token it generated: these show a
// wrong key or value even where the tiny model's text would not.
struct Output {
  std::string text;
  std::vector<float> logprobs;
  GenerationStats stats;
};

GenerateOptions traced(GenerateOptions g, Output& out) {
  g.logprobs = true;
  g.on_logprob = [&out](const TokenLogprob& t) { out.logprobs.push_back(t.logprob); };
  return g;
}

Output alone(Engine& e, const std::string& prompt, const GenerateOptions& g) {
  Output out;
  e.reset();
  out.stats = e.generate(prompt, traced(g, out), [&](std::string_view t) {
    out.text += t;
    return true;
  });
  return out;
}

// Same text; log-probabilities equal, but for float rounding where the float matrix kernels for n
// tokens sum in another order than the one for a token alone (F32: within 6e-6 here; a slot reading
// another's cache differs by 1e-5 and more). The integer kernels of Q8_0 / Q4_0 give the same bits.
void compare(const Output& got, const Output& expected, float tolerance = 2e-5f) {
  QCOMPARE(got.text, expected.text);
  QCOMPARE(got.logprobs.size(), expected.logprobs.size());
  float worst = 0;
  for (size_t t = 0; t < got.logprobs.size(); ++t) worst = std::max(worst, std::abs(got.logprobs[t] - expected.logprobs[t]));
  qInfo("log-probabilities of %zu tokens differ by at most %g", got.logprobs.size(), double(worst));
  QVERIFY2(worst <= tolerance, qPrintable(QString::number(worst)));
}

struct Job {
  std::string prompt;
  GenerateOptions options;
  int join_at_step = 0;  // step_slots() calls before it starts
};

// Runs the jobs in slots 0.. (job i in slot i), starting each at its step; returns each one's text
// and stats.
std::vector<Output> in_slots(Engine& e, const std::vector<Job>& jobs) {
  std::vector<Output> out(jobs.size());
  std::vector<bool> started(jobs.size(), false), done(jobs.size(), false);
  for (int step = 0; std::count(done.begin(), done.end(), true) < int(jobs.size()); ++step) {
    for (size_t i = 0; i < jobs.size(); ++i)
      if (!started[i] && jobs[i].join_at_step <= step) {
        started[i] = true;
        e.slot_start(int(i), e.tokenize(jobs[i].prompt, true), traced(jobs[i].options, out[i]), [&out, i](std::string_view t) {
          out[i].text += t;
          return true;
        });
      }
    for (const Engine::SlotResult& r : e.step_slots()) {
      if (!r.error.empty()) qFatal("slot %d failed: %s", r.slot, r.error.c_str());
      out[size_t(r.slot)].stats = r.stats;
      done[size_t(r.slot)] = true;
    }
    if (step > 10000) qFatal("the slots never finished");
  }
  return out;
}

}  // namespace

class EngineSlotsTest : public QObject {
  Q_OBJECT

 private slots:
  void slots_decoded_together_give_each_its_text_alone_data() {
    QTest::addColumn<int>("precision");
    QTest::newRow("f32") << int(Precision::F32);
    QTest::newRow("q8_0") << int(Precision::Q8_0);
    QTest::newRow("q4_0") << int(Precision::Q4_0);
  }
  void slots_decoded_together_give_each_its_text_alone() {
    QFETCH(int, precision);
    auto e = load(Precision(precision));
    QCOMPARE(e->open_slots(4), 4);
    QCOMPARE(e->slot_count(), 4);
    const std::vector<Job> jobs = {{"The first question", varied(11, 24), 0},
                                   {"Something else entirely, longer than the first one", varied(22, 30), 0},
                                   {"The first question", greedy(20), 0},
                                   {"Short", varied(44, 16), 0}};
    const auto together = in_slots(*e, jobs);
    std::set<std::string> distinct;
    for (size_t i = 0; i < jobs.size(); ++i) {
      const Output expected = alone(*e, jobs[i].prompt, jobs[i].options);
      compare(together[i], expected, Precision(precision) == Precision::F32 ? 2e-5f : 0.0f);
      QVERIFY(together[i].stats.generated_tokens > 0);
      distinct.insert(expected.text);
    }
    QVERIFY(distinct.size() >= 3);  // the texts differ, so a mix-up between slots would show
  }

  // The same on Vulkan (lavapipe here): a step's tokens go through the matrices as one batch
  // (Backend::forward_sequences), attention per slot on its own cache. Its decode sums each token
  // in the same order alone and together (the fp32 decode of this plan): the same log-probabilities.
  void slots_on_vulkan_give_each_its_text_alone_data() {
    QTest::addColumn<int>("precision");
    QTest::newRow("f32") << int(Precision::F32);
    QTest::newRow("q4_0") << int(Precision::Q4_0);
  }
  void slots_on_vulkan_give_each_its_text_alone() {
#ifndef KILN_HAVE_VULKAN
    QSKIP("built without Vulkan");
#else
    QFETCH(int, precision);
    auto e = load(Precision(precision), 256, BackendKind::Vulkan);
    if (e->info().backend.rfind("vulkan", 0) != 0) QSKIP("no Vulkan device (not even lavapipe)");
    QCOMPARE(e->open_slots(4), 4);
    const std::vector<Job> jobs = {{"The first question", varied(11, 24), 0},
                                   {"Something else entirely, longer than the first one", varied(22, 30), 0},
                                   {"The first question", greedy(20), 0},
                                   {"Joined at step five", varied(44, 16), 5}};
    const auto together = in_slots(*e, jobs);
    std::set<std::string> distinct;
    for (size_t i = 0; i < jobs.size(); ++i) {
      const Output expected = alone(*e, jobs[i].prompt, jobs[i].options);
      compare(together[i], expected, 0.0f);
      distinct.insert(expected.text);
    }
    QVERIFY(distinct.size() >= 3);
#endif
  }

  void a_slot_joins_while_others_decode() {
    auto e = load();
    QCOMPARE(e->open_slots(3), 3);
    const std::vector<Job> jobs = {{"Joined first", varied(5, 40), 0},
                                   {"Joined at step seven", varied(6, 20), 7},
                                   {"Joined at step twelve", greedy(12), 12}};
    const auto together = in_slots(*e, jobs);
    for (size_t i = 0; i < jobs.size(); ++i) compare(together[i], alone(*e, jobs[i].prompt, jobs[i].options));
  }

  void a_long_prompt_goes_in_by_chunks_while_others_decode() {
    // A 300-token prompt takes three steps of prefill (128 tokens a step); the slot already
    // decoding gets a token at each of them instead of waiting for the whole prompt.
    auto e = load(Precision::F32, 512);
    QCOMPARE(e->open_slots(2), 2);
    int decoded = 0;
    e->slot_start(0, e->tokenize("Already talking", true), greedy(100), [&](std::string_view) { ++decoded; return true; });
    for (int i = 0; i < 3; ++i) e->step_slots();
    std::string long_prompt;
    for (int i = 0; i < 60; ++i) long_prompt += "word" + std::to_string(i) + " ";
    std::vector<int32_t> tokens = e->tokenize(long_prompt, true);
    QVERIFY(tokens.size() > 256);
    Output late;
    e->slot_start(1, tokens, traced(varied(9, 12), late), [&](std::string_view t) { late.text += t; return true; });
    const int before = decoded;
    int steps_to_first = 0;
    while (late.logprobs.empty()) {
      e->step_slots();
      ++steps_to_first;
    }
    QCOMPARE(steps_to_first, int((tokens.size() + 127) / 128) + 1);
    QVERIFY2(decoded - before >= steps_to_first - 1, qPrintable(QString::number(decoded - before)));
    while (e->slot_busy(1))
      for (const auto& r : e->step_slots())
        if (r.slot == 1) late.stats = r.stats;
    while (e->slot_busy(0)) e->step_slots();  // generate() shares slot 0
    compare(late, alone(*e, long_prompt, varied(9, 12)));
    QCOMPARE(late.stats.prompt_tokens, int(tokens.size()));
  }

  void a_follow_up_reuses_its_slots_cache() {
    auto e = load();
    QCOMPARE(e->open_slots(2), 2);
    const auto first = in_slots(*e, {{"A conversation starts here", greedy(1), 0}});
    const std::vector<int32_t> first_prompt = e->tokenize("A conversation starts here", true);
    QCOMPARE(first[0].stats.cached_prompt_tokens, 0);
    // The follow-up extends the first prompt: slot 0 holds its tokens, slot 1 nothing.
    const std::vector<int32_t> follow_up = e->tokenize("A conversation starts here and goes on", true);
    QVERIFY(follow_up.size() > first_prompt.size());
    QVERIFY(std::equal(first_prompt.begin(), first_prompt.end(), follow_up.begin()));
    QCOMPARE(e->slot_reuse(0, follow_up), int(first_prompt.size()));
    QCOMPARE(e->slot_reuse(1, follow_up), 0);
    std::string text;
    e->slot_start(0, follow_up, greedy(6), [&](std::string_view t) { text += t; return true; });
    GenerationStats stats;
    while (e->slot_busy(0))
      for (const auto& r : e->step_slots()) stats = r.stats;
    QCOMPARE(stats.prompt_tokens, int(follow_up.size()));
    QCOMPARE(stats.cached_prompt_tokens, int(first_prompt.size()));
    QCOMPARE(text, alone(*e, "A conversation starts here and goes on", greedy(6)).text);
  }

  void going_back_past_the_cache_end_keeps_the_prefix_before_data() {
    QTest::addColumn<int>("backend");
    QTest::addColumn<int>("context");
    QTest::addColumn<int>("prefix");     // random tokens after the first words, before generating
    QTest::addColumn<int>("length");     // tokens generated after them
    QTest::addColumn<QList<int>>("backs");  // how far the follow-ups go back
    QTest::addColumn<int>("limit");      // how far the cache can go back (Backend::rewind_limit)
    // The CPU's local rings hold 128 spare positions (back 129 at most); Vulkan's hold max_batch - 1 + window
    // positions (519 at a context of 1024), so 570 prompt tokens wrap them and going back 511 is the most.
    QTest::newRow("cpu") << int(BackendKind::Cpu) << 512 << 0 << 250 << QList<int>{40, 200} << 129;
    QTest::newRow("vulkan") << int(BackendKind::Vulkan) << 1024 << 570 << 100 << QList<int>{40, 511, 560} << 511;
  }
  void going_back_past_the_cache_end_keeps_the_prefix_before() {
    // The tiny model's window is 8: the held tokens wrap its local rings. A prompt that diverges
    // fewer positions before the cache end than the rings' spare positions keeps the prefix; one
    // that diverges further back starts over; both give the log-probabilities a fresh engine gives.
    QFETCH(int, backend);
    QFETCH(int, context);
    QFETCH(int, prefix);
    QFETCH(int, length);
    QFETCH(QList<int>, backs);
    QFETCH(int, limit);
    auto e = load(Precision::F32, context, BackendKind(backend));
    if (BackendKind(backend) == BackendKind::Vulkan && e->info().backend.rfind("vulkan", 0) != 0)
      QSKIP("no Vulkan device (not even lavapipe)");
    auto fresh = load(Precision::F32, context, BackendKind(backend));
    QCOMPARE(e->open_slots(2), 2);
    const std::vector<int32_t> tail = e->tokenize(" and then something else", false);
    for (int back : backs) {
      std::vector<int32_t> held = e->tokenize("The first conversation", true);
      std::mt19937 rng(5);
      std::uniform_int_distribution<int32_t> pick(3, e->info().vocab - 1);
      for (int i = 0; i < prefix; ++i) held.push_back(pick(rng));
      GenerateOptions record = varied(3, length);  // varied tokens: stale keys would differ from the right ones
      record.logprobs = true;
      record.on_logprob = [&](const TokenLogprob& t) { held.push_back(t.id); };
      e->reset();
      e->slot_start(1, held, record, nullptr);
      while (e->slot_busy(1)) e->step_slots();
      QCOMPARE(e->slot_cached_tokens(1), int(held.size()));

      std::vector<int32_t> prompt(held.begin(), held.end() - back);
      prompt.insert(prompt.end(), tail.begin(), tail.end());
      const int kept = back <= limit ? int(held.size()) - back : 0;
      QCOMPARE(e->slot_reuse(1, prompt), kept);
      // The model's log-probabilities of each generated token show any stale key or value.
      std::vector<float> got, expected;
      GenerateOptions traced = greedy(16);
      traced.logprobs = true;
      traced.on_logprob = [&](const TokenLogprob& t) { got.push_back(t.logprob); };
      e->slot_start(1, prompt, traced, nullptr);
      GenerationStats stats;
      while (e->slot_busy(1))
        for (const auto& r : e->step_slots()) stats = r.stats;
      QCOMPARE(stats.cached_prompt_tokens, kept);
      traced.on_logprob = [&](const TokenLogprob& t) { expected.push_back(t.logprob); };
      fresh->reset();
      fresh->slot_start(0, prompt, traced, nullptr);
      while (fresh->slot_busy(0)) fresh->step_slots();
      QCOMPARE(got.size(), expected.size());
      float worst = 0;
      for (size_t t = 0; t < got.size(); ++t) worst = std::max(worst, std::abs(got[t] - expected[t]));
      qInfo("back %d: %zu tokens, log-probabilities differ by at most %g", back, got.size(), double(worst));
      QVERIFY2(worst < 1e-6f, qPrintable(QString("log-probabilities differ by %1").arg(worst)));
    }
  }

  void a_cancelled_slot_is_free_at_the_next_step() {
    auto e = load();
    QCOMPARE(e->open_slots(2), 2);
    std::stop_source stop;
    GenerateOptions cancellable = greedy(200);
    cancellable.cancel = stop.get_token();
    e->slot_start(0, e->tokenize("Long one", true), cancellable, nullptr);
    e->slot_start(1, e->tokenize("Other one", true), greedy(200), nullptr);
    QVERIFY(e->step_slots().empty());
    // Slot 0 is busy: the single-sequence calls that share its cache refuse.
    QVERIFY_THROWS_EXCEPTION(Error, e->generate("x", greedy(2), nullptr));
    stop.request_stop();
    const auto ended = e->step_slots();
    QCOMPARE(ended.size(), size_t(1));
    QCOMPARE(ended[0].slot, 0);
    QCOMPARE(ended[0].stats.stop_reason, StopReason::Cancelled);
    QVERIFY(!e->slot_busy(0));
    QVERIFY(e->slot_busy(1));
    // Slots beyond a smaller count cannot be dropped while busy.
    QVERIFY_THROWS_EXCEPTION(Error, e->open_slots(1));
  }

  void a_prompt_that_does_not_fit_leaves_the_slot_free() {
    auto e = load(Precision::F32, 32);
    QCOMPARE(e->open_slots(2), 2);
    std::vector<int32_t> too_long(40, e->tokenize("a", false).at(0));
    QVERIFY_THROWS_EXCEPTION(Error, e->slot_start(1, too_long, greedy(2), nullptr));
    QVERIFY(!e->slot_busy(1));
  }

  // Opening slots for a long context takes address space, not memory: a slot's cache pages come
  // as its conversation fills them (8 server slots of a 1B model at 131k tokens would otherwise
  // hold 4.6 GB from the first request on).
  void open_slots_cost_memory_only_as_they_fill() {
    LoadOptions o;
    o.path = fixture_dir("tiny-gemma3-a");
    o.precision = Precision::F32;
    o.context_length = 1 << 20;  // 256 MiB of cache a slot in fp32
    o.context_beyond_training = LoadOptions::BeyondTraining::Allow;
    o.threads = 2;
    auto e = Engine::load(o);
    const uint64_t per_slot = e->info().kv_cache_bytes;
    QVERIFY(per_slot >= (uint64_t(100) << 20));
    const uint64_t before = resident_memory_bytes();
    QCOMPARE(e->open_slots(8), 8);
    const uint64_t grown = resident_memory_bytes() - std::min(before, resident_memory_bytes());
    QVERIFY2(grown < per_slot, qPrintable(QString("resident memory grew by %1 MiB for 7 slots of %2 MiB")
                                              .arg(grown >> 20).arg(per_slot >> 20)));
    // And they work: a short generation in the last slot.
    e->slot_start(7, e->tokenize("a", true), greedy(3), nullptr);
    int generated = 0;
    while (e->slot_busy(7))
      for (const Engine::SlotResult& r : e->step_slots()) generated += r.stats.generated_tokens;
    QCOMPARE(generated, 3);
  }
};

QTEST_GUILESS_MAIN(EngineSlotsTest)
#include "test_engine_slots.moc"
