// Constrained JSON output's cost per generated token on a Gemma-sized (262,144-entry) vocabulary:
// the full mask (every token's bytes walked through the matcher) in the states a document passes
// through, and the one-check path (the sampler's draw accepted at once). The vocabulary is built
// from the test corpus's words, with and without a leading space, cut into 1-12 byte pieces, plus
// the 256 single bytes: the mix of lengths and first bytes a SentencePiece vocabulary has.
#include <benchmark/benchmark.h>

#include <fstream>
#include <random>
#include <set>
#include <sstream>

#include "generate/constrained_pick.h"
#include "grammar/json_matcher.h"
#include "kiln/engine.h"

namespace {

using namespace kiln;

std::vector<std::string> synthetic_vocabulary() {
  std::ifstream in(std::string(KILN_TEST_DATA) + "/fixtures/tokenizer-corpus.txt");
  std::stringstream text;
  text << in.rdbuf();
  std::set<std::string> pieces;
  for (int b = 0; b < 256; ++b) pieces.insert(std::string(1, char(b)));
  for (const char* p : {"{", "}", "\":", "\",", "\": \"", "\n", "  ", "    ", "[\"", "\"]", "true", "false", "null"})
    pieces.insert(p);
  const std::string corpus = text.str();
  std::mt19937 rng(1);
  while (pieces.size() < 262144) {
    const size_t at = rng() % corpus.size();
    const size_t length = 1 + rng() % 12;
    std::string piece = corpus.substr(at, length);
    if (rng() % 2) piece = " " + piece;
    pieces.insert(piece);
  }
  return {pieces.begin(), pieces.end()};
}

const std::vector<std::string>& vocabulary() {
  static const std::vector<std::string> v = synthetic_vocabulary();
  return v;
}

const char* kSchema = R"({"type":"object","properties":{"name":{"type":"string","maxLength":40},
  "age":{"type":"integer","minimum":0,"maximum":120},"tags":{"type":"array","items":{"type":"string"}}},
  "required":["name","age"],"additionalProperties":false})";

// Each state: the document so far.
const char* kStates[] = {"", "{", "{\"name\": \"Ada Lovel", "{\"name\": \"Ada\", \"age\": 3", "{\"name\": \"Ada\", \"age\": 36, \"tags\": ["};

void BM_full_mask(benchmark::State& state) {
  const auto schema = grammar::JsonSchema::compile(kSchema);
  grammar::JsonMatcher matcher(schema);
  matcher.feed(kStates[state.range(0)]);
  const auto& pieces = vocabulary();
  std::vector<float> logits(pieces.size(), 0.0f);
  const auto is_end = [](int32_t) { return false; };
  for (auto _ : state) {
    std::fill(logits.begin(), logits.end(), 0.0f);
    mask_refused(logits, matcher, pieces, is_end);
    benchmark::DoNotOptimize(logits.data());
  }
  state.SetLabel(std::string("after '") + kStates[state.range(0)] + "'");
}
BENCHMARK(BM_full_mask)->DenseRange(0, 4)->Unit(benchmark::kMillisecond);

// The common step: sample over 262k logits, check the one token drawn.
void BM_pick_accepted_at_once(benchmark::State& state) {
  const auto schema = grammar::JsonSchema::compile(kSchema);
  grammar::JsonMatcher matcher(schema);
  matcher.feed(kStates[2]);
  const auto& pieces = vocabulary();
  std::vector<float> logits(pieces.size());
  std::mt19937 rng(3);
  std::normal_distribution<float> noise(0, 2);
  for (float& x : logits) x = noise(rng);
  SamplingParams params;
  params.temperature = 1.0f;
  params.seed = 9;
  Sampler sampler(params);
  std::vector<float> scratch;
  ConstrainedPickStats stats;
  const std::vector<int32_t> history;
  for (auto _ : state)
    benchmark::DoNotOptimize(pick_constrained(sampler, logits, history, matcher, pieces,
                                              [](int32_t) { return false; }, scratch, &stats));
  state.counters["full_masks_per_step"] = double(stats.full_masks) / double(stats.steps);
}
BENCHMARK(BM_pick_accepted_at_once)->Unit(benchmark::kMillisecond);

// End to end on the bundled demo model (4,096 tokens, CPU F32): ms per generated token, plain
// text against the schema above (arg 1). Same prompt, seed and temperature 1.
void BM_demo_model_per_token(benchmark::State& state) {
  static std::unique_ptr<Engine> engine = [] {
    LoadOptions load;
    load.path = std::string(KILN_TEST_DATA) + "/../../resources/models/kiln-demo";
    load.precision = Precision::F32;
    load.backend = BackendKind::Cpu;
    load.context_length = 512;
    load.threads = 1;
    return Engine::load(load);
  }();
  GenerateOptions options;
  options.sampling.temperature = 1.0f;
  options.sampling.seed = 11;
  options.max_tokens = 64;
  if (state.range(0)) {
    options.format = GenerateOptions::Format::JsonSchema;
    options.json_schema = kSchema;
  }
  double ms = 0;
  int tokens = 0;
  for (auto _ : state) {
    engine->reset();
    const GenerationStats stats = engine->chat({{Role::User, "A person as JSON."}}, options, nullptr);
    ms += stats.total_ms;
    tokens += stats.generated_tokens;
  }
  state.counters["ms_per_token"] = tokens ? ms / tokens : 0;
  state.SetLabel(state.range(0) ? "json_schema" : "text");
}
BENCHMARK(BM_demo_model_per_token)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
