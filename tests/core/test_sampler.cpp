// The sampler: reproducible with a seed, greedy when it should be, never drawing a token that
// top-p or min-p excluded, penalizing repeats, and quick on a Gemma-sized vocabulary.
#include <QtTest>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <new>
#include <random>
#include <set>

#include "generate/sampler.h"

// Counts heap allocations, so the test can hold the sampler to "no allocation per call".
static std::atomic<long> g_allocations{0};
void* operator new(std::size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size ? size : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

using kiln::Sampler;
using kiln::SamplingParams;

namespace {

constexpr size_t kGemmaVocab = 262144;

SamplingParams plain(float temperature, uint64_t seed) {
  SamplingParams p;
  p.temperature = temperature;
  p.top_k = 0;
  p.top_p = 1.0f;
  p.min_p = 0.0f;
  p.repeat_penalty = 1.0f;
  p.seed = seed;
  return p;
}

std::vector<float> logits_of_probabilities(const std::vector<double>& probabilities) {
  std::vector<float> logits;
  for (double p : probabilities) logits.push_back(static_cast<float>(std::log(p)));
  return logits;
}

// Draws `n` tokens from fresh copies of `logits` and counts each id.
std::map<int32_t, int> histogram(Sampler& sampler, const std::vector<float>& logits, int n) {
  std::map<int32_t, int> counts;
  for (int i = 0; i < n; ++i) {
    std::vector<float> copy = logits;
    ++counts[sampler.sample(copy, {})];
  }
  return counts;
}

std::vector<float> random_logits(size_t vocab, uint32_t seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::vector<float> logits(vocab);
  for (auto& l : logits) l = normal(gen);
  return logits;
}

}  // namespace

class TestSampler : public QObject {
  Q_OBJECT

 private slots:
  void same_seed_same_tokens_different_seed_different_tokens() {
    const auto logits = random_logits(1000, 7);
    auto draw = [&](uint64_t seed) {
      Sampler s(plain(1.0f, seed));
      std::vector<int32_t> out;
      for (int i = 0; i < 200; ++i) {
        auto copy = logits;
        out.push_back(s.sample(copy, out));
      }
      return out;
    };
    QCOMPARE(draw(42), draw(42));
    QVERIFY(draw(42) != draw(43));
    // Seed 0 picks a random seed and reports it, so a run can be replayed.
    Sampler random_one(plain(1.0f, 0));
    QVERIFY(random_one.seed() != 0);
    QCOMPARE(Sampler(plain(1.0f, 0)).seed() == random_one.seed(), false);
  }

  void top_k_one_is_argmax_at_any_temperature() {
    for (uint32_t trial = 0; trial < 4; ++trial) {
      const auto logits = random_logits(kGemmaVocab, 100 + trial);
      const int32_t best = int32_t(std::max_element(logits.begin(), logits.end()) - logits.begin());
      QCOMPARE(kiln::argmax(logits), best);
      for (float temperature : {0.0f, 0.1f, 1.0f, 5.0f, 1000.0f}) {
        SamplingParams p = plain(temperature, 1 + trial);
        p.top_k = 1;
        Sampler s(p);
        for (int i = 0; i < 3; ++i) {
          auto copy = logits;
          QCOMPARE(s.sample(copy, {}), best);
        }
      }
    }
  }

  // What a backend may pick on its device instead (Backend::forward_argmax): greedy with no
  // penalty that changes a logit, and nothing else.
  void plain_argmax_is_greedy_without_a_penalty() {
    SamplingParams p;
    p.temperature = 0;
    p.repeat_penalty = 1.0f;
    QVERIFY(Sampler(p).is_plain_argmax());
    p.repeat_penalty = 1.1f;
    QVERIFY(!Sampler(p).is_plain_argmax());
    p.repeat_last_n = 0;  // a penalty over no tokens
    QVERIFY(Sampler(p).is_plain_argmax());
    p.repeat_last_n = 64;
    p.repeat_penalty = 0.0f;  // off, as sample() treats it
    QVERIFY(Sampler(p).is_plain_argmax());
    p.repeat_penalty = 1.0f;
    p.temperature = 0.7f;
    p.top_k = 1;
    QVERIFY(!Sampler(p).is_plain_argmax());  // the same token, but drawn (and a draw moves the seed)
  }

  void argmax_takes_the_lowest_index_on_ties() {
    const std::vector<float> logits{1.0f, 3.0f, 2.0f, 3.0f};
    QCOMPARE(kiln::argmax(logits), 1);
    std::vector<float> lanes(37, -5.0f);  // ties in different lanes and in the tail
    lanes[29] = lanes[13] = lanes[36] = -1.0f;
    QCOMPARE(kiln::argmax(lanes), 13);
  }

  // NaN never wins; all-negative and tail positions are found; nothing but NaN gives -1, and -inf
  // everywhere gives the first index that is not NaN.
  void argmax_skips_nan_and_finds_any_position() {
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    std::vector<float> v(19, -7.0f);
    v[0] = nan;
    v[18] = -2.0f;  // past the last whole group of 8
    QCOMPARE(kiln::argmax(v), 18);
    v[5] = nan;
    v[6] = -1.5f;
    QCOMPARE(kiln::argmax(v), 6);
    QCOMPARE(kiln::argmax(std::vector<float>(10, nan)), -1);
    QCOMPARE(kiln::argmax(std::vector<float>{nan, -inf, -inf}), 1);
    QCOMPARE(kiln::argmax(std::vector<float>{}), -1);
  }

  // Statistical bound for the exclusion tests: every excluded set below holds at least 5 % of the
  // probability mass, so a sampler that leaked it would show an excluded token in 20000 draws
  // with probability 1 - 0.95^20000 (a miss chance near e^-1000). Frequencies of the kept tokens
  // are checked within 5 standard deviations (sqrt(p(1-p)/n) <= 0.0036 at n = 20000).
  void top_p_never_draws_an_excluded_token() {
    // Mass 0.50, 0.30, 0.15 reaches 0.95 >= 0.9 at the third token; 0.05 in the tail is cut.
    const std::vector<double> probs{0.30, 0.0125, 0.50, 0.0125, 0.15, 0.0125, 0.0125};
    SamplingParams p = plain(1.0f, 11);
    p.top_p = 0.9f;
    Sampler s(p);
    const int n = 20000;
    const auto counts = histogram(s, logits_of_probabilities(probs), n);
    for (const auto& [id, count] : counts)
      QVERIFY2(id == 0 || id == 2 || id == 4, qPrintable(QString("drew excluded token %1").arg(id)));
    const double kept = 0.95, tolerance = 5 * 0.0036;
    QVERIFY(std::abs(counts.at(2) / double(n) - 0.50 / kept) < tolerance);
    QVERIFY(std::abs(counts.at(0) / double(n) - 0.30 / kept) < tolerance);
    QVERIFY(std::abs(counts.at(4) / double(n) - 0.15 / kept) < tolerance);
  }

  void min_p_never_draws_an_excluded_token() {
    // min_p 0.1 of the top 0.40 drops everything below 0.04: the 0.03 and 0.02 tokens.
    const std::vector<double> probs{0.05, 0.40, 0.03, 0.30, 0.02, 0.20};
    SamplingParams p = plain(1.0f, 12);
    p.min_p = 0.1f;
    Sampler s(p);
    const int n = 20000;
    const auto counts = histogram(s, logits_of_probabilities(probs), n);
    for (const auto& [id, count] : counts)
      QVERIFY2(id != 2 && id != 4, qPrintable(QString("drew excluded token %1").arg(id)));
    QCOMPARE(counts.size(), size_t(4));
    QVERIFY(std::abs(counts.at(1) / double(n) - 0.40 / 0.95) < 5 * 0.0036);
  }

  void top_p_on_a_full_vocabulary_keeps_exactly_the_smallest_set() {
    // 120 tokens share nearly all the mass equally (1/120 each), scattered over a Gemma-sized
    // vocabulary. top_p 0.495 needs 60 of them (59/120 = 0.492 falls short); ties go to the lower
    // id, so the kept set is the 60 lowest ids. Every one of them should show up: each is
    // expected 25 times in 1500 draws, and missing any has probability below 60 e^-25 = 1e-9.
    std::vector<float> logits(kGemmaVocab, -30.0f);
    std::vector<int32_t> heavy;
    for (int i = 0; i < 120; ++i) heavy.push_back(int32_t((7 + 811ull * i * i) % kGemmaVocab));
    std::sort(heavy.begin(), heavy.end());
    heavy.erase(std::unique(heavy.begin(), heavy.end()), heavy.end());
    QCOMPARE(heavy.size(), size_t(120));
    for (int32_t id : heavy) logits[size_t(id)] = 5.0f;
    const std::set<int32_t> allowed(heavy.begin(), heavy.begin() + 60);

    SamplingParams p = plain(1.0f, 13);
    p.top_p = 0.495f;
    Sampler s(p);
    const auto counts = histogram(s, logits, 1500);
    for (const auto& [id, count] : counts)
      QVERIFY2(allowed.count(id), qPrintable(QString("drew excluded token %1").arg(id)));
    QCOMPARE(counts.size(), allowed.size());
  }

  void top_p_on_a_spread_distribution_matches_a_plain_sort() {
    // Logits spread over many orders of magnitude; the nucleus is computed here the slow, obvious
    // way (double softmax, full sort, running sum) and every draw must fall inside it.
    const auto logits = random_logits(4096, 21);
    std::vector<std::pair<double, int32_t>> ranked;
    const double top = *std::max_element(logits.begin(), logits.end());
    double total = 0;
    for (size_t i = 0; i < logits.size(); ++i) {
      ranked.emplace_back(std::exp(double(logits[i]) - top), int32_t(i));
      total += ranked.back().first;
    }
    std::sort(ranked.begin(), ranked.end(), [](auto& a, auto& b) { return a.first > b.first; });
    std::set<int32_t> nucleus;
    double mass = 0;
    for (const auto& [weight, id] : ranked) {
      if (mass >= 0.9 * total) {
        QVERIFY2(mass - 0.9 * total > 1e-4 * total, "the cut sits too close to call");
        break;
      }
      mass += weight;
      nucleus.insert(id);
    }
    QVERIFY(nucleus.size() > 20);  // wide enough to span several factor-of-two bands
    SamplingParams p = plain(1.0f, 22);
    p.top_p = 0.9f;
    Sampler s(p);
    const auto counts = histogram(s, logits, 5000);
    for (const auto& [id, count] : counts)
      QVERIFY2(nucleus.count(id), qPrintable(QString("drew token %1 outside the nucleus").arg(id)));
  }

  void top_k_keeps_only_the_k_best() {
    // 5 tokens of equal top weight, k = 3: only ids 10, 20, 30 (lowest ids win the tie).
    std::vector<float> logits(kGemmaVocab, 0.0f);
    for (int32_t id : {50, 10, 40, 30, 20}) logits[size_t(id)] = 20.0f;
    SamplingParams p = plain(1.0f, 14);
    p.top_k = 3;
    Sampler s(p);
    const auto counts = histogram(s, logits, 300);  // a token of the three missing: 3 (2/3)^300
    QCOMPARE(counts.size(), size_t(3));
    QVERIFY(counts.count(10) && counts.count(20) && counts.count(30));
    // The same across the vocabulary (the sampler skips blocks of logits that cannot enter).
    std::vector<float> spread(kGemmaVocab, 0.0f);
    for (int32_t id : {70000, 130, 200000, 64, 262000}) spread[size_t(id)] = 20.0f;
    const auto far = histogram(s, spread, 300);
    QCOMPARE(far.size(), size_t(3));
    QVERIFY(far.count(64) && far.count(130) && far.count(70000));
  }

  void repetition_penalty_changes_the_winner() {
    SamplingParams p = plain(0.0f, 1);
    p.repeat_penalty = 1.3f;
    p.repeat_last_n = 3;
    Sampler greedy(p);
    // Positive logits are divided: 2.0 / 1.3 = 1.54 falls below 1.9.
    std::vector<float> positive{2.0f, 1.9f, 0.5f};
    const std::vector<int32_t> history{0};
    QCOMPARE(greedy.sample(positive, history), 1);
    // Negative logits are multiplied: -1.0 * 1.3 = -1.3 falls below -1.2.
    std::vector<float> negative{-1.0f, -1.2f, -5.0f};
    QCOMPARE(greedy.sample(negative, history), 1);
    // A token repeated many times is penalized once, and only inside the window of 3.
    std::vector<float> again{2.0f, 1.9f, 1.5f};
    const std::vector<int32_t> long_ago{0, 2, 2, 2};
    QCOMPARE(greedy.sample(again, long_ago), 0);
    std::vector<float> once{2.0f, 1.9f, 1.5f};
    const std::vector<int32_t> repeated{1, 2, 2, 2, 1, 1, 1};
    QCOMPARE(greedy.sample(once, repeated), 0);
    QVERIFY(std::abs(once[1] - 1.9f / 1.3f) < 1e-6f);
  }

  void fast_and_allocation_free_on_a_gemma_vocabulary() {
    const auto logits = random_logits(kGemmaVocab, 5);
    const std::vector<int32_t> history(64, 17);
    struct Case { const char* name; SamplingParams params; };
    SamplingParams defaults;  // top-k 40, top-p 0.95, min-p 0.05, temperature 0.8
    defaults.seed = 3;
    defaults.repeat_penalty = 1.1f;
    SamplingParams no_top_k = defaults;
    no_top_k.top_k = 0;
    SamplingParams full = plain(1.0f, 3);
    full.top_p = 0.9f;  // no top-k and no min-p: the widest top-p
    for (const Case& c : {Case{"defaults", defaults}, Case{"top-p+min-p", no_top_k}, Case{"top-p only", full}}) {
      Sampler s(c.params);
      std::vector<float> work = logits;
      s.sample(work, history);  // the first call may size the buffers
      const int calls = 20;
      double total_ms = 0;
      long allocations = 0;
      for (int i = 0; i < calls; ++i) {
        std::copy(logits.begin(), logits.end(), work.begin());
        const long before = g_allocations.load();
        const auto start = std::chrono::steady_clock::now();
        s.sample(work, history);
        total_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        allocations += g_allocations.load() - before;
      }
      qInfo("%s: %.2f ms per sample over %zu logits", c.name, total_ms / calls, kGemmaVocab);
      QCOMPARE(allocations, 0L);
      // Generous for a loaded 2-core machine: a full sort would take several times longer.
      QVERIFY2(total_ms / calls < 40.0, c.name);
    }
  }

  void nan_logits_are_skipped_and_empty_logits_are_an_error() {
    std::vector<float> logits{std::nanf(""), 1.0f, std::nanf("")};
    Sampler s(plain(1.0f, 9));
    QCOMPARE(s.sample(logits, {}), 1);
    std::vector<float> none;
    QVERIFY_THROWS_EXCEPTION(kiln::Error, s.sample(none, {}));
  }
};

QTEST_APPLESS_MAIN(TestSampler)
#include "test_sampler.moc"
