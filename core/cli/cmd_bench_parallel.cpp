// kiln bench --parallel 1,2,4,8: aggregate decode speed of N generations decoded together in the
// engine's slots (what `kiln serve --parallel` does between HTTP and the model), against one alone.
#include <chrono>
#include <cstdio>
#include <random>

#include "cli/bench_parallel.h"

namespace kiln::cli {
namespace {

// The ops' time a step, summed over layers, longest first (stderr, beside the figures).
void print_step_profile(int clients, int steps, const std::vector<OpTiming>& profile) {
  const std::vector<std::pair<std::string, double>> per_op = time_per_op(profile);
  double total = 0;
  for (const auto& p : per_op) total += p.second;
  std::fprintf(stderr, "%d clients, ms a step (%d steps): total %.3f\n", clients, steps, total / 1000.0 / steps);
  for (const auto& [op, us] : per_op) std::fprintf(stderr, "  %-24s %8.3f\n", op.c_str(), us / 1000.0 / steps);
}

}  // namespace

void run_parallel_bench(const ModelFlags& model, const std::vector<int>& counts, int prompt_tokens, int gen,
                        bool json, bool profile) {
  std::unique_ptr<Engine> engine = load_engine(model, /*quiet=*/true);
  const ModelInfo& info = engine->info();
  int most = 1;
  for (int n : counts) {
    if (n < 1 || n > 64) throw Error("--parallel: counts are 1 to 64, got " + std::to_string(n));
    most = std::max(most, n);
  }
  const int slots = engine->open_slots(most);
  if (slots < most) std::fprintf(stderr, "note: the %s backend gives %d slot(s); larger counts take turns\n",
                                 info.backend.c_str(), slots);
  std::mt19937 rng(42);
  std::uniform_int_distribution<int32_t> pick(3, info.vocab - 1);
  double single = 0;
  if (json) std::printf("[");
  for (size_t c = 0; c < counts.size(); ++c) {
    const int n = counts[c];
    engine->reset();
    // Each client its own random prompt and seed; sampled (not greedy) so that random weights do
    // not settle on an end token.
    for (int i = 0; i < std::min(n, slots); ++i) {
      std::vector<int32_t> prompt(static_cast<size_t>(prompt_tokens));
      for (int32_t& t : prompt) t = pick(rng);
      GenerateOptions o;
      o.sampling.temperature = 1.0f;
      o.sampling.seed = uint64_t(1000 + i);
      o.max_tokens = gen;
      engine->slot_start(i, prompt, o, nullptr);
    }
    // The prompts go in 128 tokens a step (Engine::step_slots) before any decoding; those steps are
    // not timed (with n x prompt <= 128, one step holds them all and no token is sampled in it).
    uint64_t generated = 0;
    for (int i = 0; i < (std::min(n, slots) * prompt_tokens + 127) / 128; ++i)
      for (const Engine::SlotResult& r : engine->step_slots()) generated += uint64_t(r.stats.generated_tokens);
    engine->set_profiling(profile);
    engine->take_profile();  // not the prompts'
    int steps = 0;
    const auto t0 = std::chrono::steady_clock::now();
    for (bool busy = true; busy; ++steps) {
      for (const Engine::SlotResult& r : engine->step_slots()) {
        if (!r.error.empty()) throw Error("slot " + std::to_string(r.slot) + ": " + r.error);
        generated += uint64_t(r.stats.generated_tokens);
      }
      busy = false;
      for (int i = 0; i < slots; ++i) busy = busy || engine->slot_busy(i);
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double tps = double(generated) / seconds;
    if (profile) {
      print_step_profile(n, steps, engine->take_profile());
      engine->set_profiling(false);
    }
    if (n == 1) single = tps;
    if (json)
      std::printf("%s{\"clients\": %d, \"slots\": %d, \"generated\": %llu, \"steps\": %d, \"seconds\": %.3f, "
                  "\"aggregate_decode_tokens_per_s\": %.3f}",
                  c ? ", " : "", n, std::min(n, slots), (unsigned long long)generated, steps, seconds, tps);
    else
      std::printf("%2d clients: %8.2f tokens/s together (%6.2f each, %llu tokens in %d steps)%s\n", n, tps, tps / n,
                  (unsigned long long)generated, steps,
                  single > 0 && n > 1 ? (" " + std::to_string(tps / single).substr(0, 4) + "x one alone").c_str() : "");
  }
  if (json) std::printf("]\n");
}

void run_prefix_bench(const ModelFlags& model, int prefix_tokens, int prompt_tokens) {
  std::unique_ptr<Engine> engine = load_engine(model, /*quiet=*/true);
  std::mt19937 rng(7);
  std::uniform_int_distribution<int32_t> pick(3, engine->info().vocab - 1);
  std::vector<int32_t> prefix(static_cast<size_t>(prefix_tokens));
  for (int32_t& t : prefix) t = pick(rng);
  // Time to the first token of prefix + a question of `prompt_tokens`: cold, then again with another
  // question after the same prefix (only the new question is prefilled), in slot 0.
  auto first_token_ms = [&](int& cached) {
    std::vector<int32_t> prompt = prefix;
    for (int i = 0; i < prompt_tokens; ++i) prompt.push_back(pick(rng));
    GenerateOptions o;
    o.sampling.temperature = 0;
    o.max_tokens = 1;
    engine->slot_start(0, prompt, o, nullptr);
    GenerationStats stats;
    while (engine->slot_busy(0))
      for (const Engine::SlotResult& r : engine->step_slots()) stats = r.stats;
    cached = stats.cached_prompt_tokens;
    return stats.time_to_first_token_ms;
  };
  int cold_cached = 0, warm_cached = 0;
  const double cold = first_token_ms(cold_cached);
  const double warm = first_token_ms(warm_cached);
  std::printf("time to first token after a %d-token shared prefix + %d new tokens: cold %.1f ms (%d cached), "
              "following request %.1f ms (%d cached), %.1fx faster\n",
              prefix_tokens, prompt_tokens, cold, cold_cached, warm, warm_cached, warm > 0 ? cold / warm : 0.0);
}

}  // namespace kiln::cli
