#include "engine/local_engine.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <optional>

#include "engine/generation.h"
#include "generate/chat_roll_off.h"
#include "generate/chat_template.h"
#include "generate/logprobs.h"

namespace kiln {
namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

LocalEngine::LocalEngine(ModelInfo info, Gemma3Config config, Tokenizer tokenizer, std::unique_ptr<Backend> backend,
                         std::unique_ptr<VisionSession> vision)
    : info_(std::move(info)),
      config_(std::move(config)),
      tokenizer_(std::move(tokenizer)),
      backend_(std::move(backend)),
      vision_(std::move(vision)),
      slots_(1) {
  slots_[0].logits.resize(size_t(config_.vocab_size));
  if (vision_) {
    const VisionConfig& v = vision_->config();
    image_tokens_ = {v.boi_token, v.eoi_token, v.image_token, v.tokens_per_image,
                     [eyes = vision_.get()](const Image& image) { return eyes->views(image); }};
  }
}

LocalEngine::~LocalEngine() = default;

std::vector<int32_t> LocalEngine::tokenize(const std::string& text, bool add_bos, bool parse_special) const {
  std::vector<int32_t> ids = tokenizer_.encode(text, parse_special ? SpecialText::Parse : SpecialText::Literal);
  if (add_bos && (ids.empty() || ids.front() != tokenizer_.bos_id())) ids.insert(ids.begin(), tokenizer_.bos_id());
  for (int32_t id : ids)
    if (id < 0 || id >= config_.vocab_size)
      throw Error(tokenizer_.origin() + ": token " + std::to_string(id) + " of the prompt is outside the model's "
                  "vocabulary of " + std::to_string(config_.vocab_size));
  return ids;
}

std::string LocalEngine::detokenize(std::span<const int32_t> ids) const { return tokenizer_.decode(ids); }

Prompt LocalEngine::chat_prompt(const std::vector<ChatMessage>& messages) const {
  Prompt prompt{{}, {}};
  for (const ChatMessage& m : messages) prompt.images.insert(prompt.images.end(), m.images.begin(), m.images.end());
  if (!prompt.images.empty() && !vision_) throw cannot_see();
  prompt.tokens = render_chat(tokenizer_, messages, image_tokens());
  return prompt;
}

void LocalEngine::set_profiling(bool enabled) {
  profiling_ = enabled;
  backend_->set_profiling(enabled);
}

std::vector<OpTiming> LocalEngine::take_profile() { return backend_->take_profile(); }

GenerationStats LocalEngine::generate(const std::string& prompt, const GenerateOptions& options,
                                      const TokenCallback& on_text) {
  return run(Prompt{tokenize(prompt, true, options.parse_special), {}}, options, on_text);
}

GenerationStats LocalEngine::chat(const std::vector<ChatMessage>& messages, const GenerateOptions& options,
                                  const TokenCallback& on_text) {
  if (!options.roll_off_old_turns) return run(chat_prompt(messages), options, on_text);
  for (const ChatMessage& m : messages)
    if (!m.images.empty() && !vision_) throw cannot_see();
  FittedChat fitted = fit_chat(tokenizer_, messages, backend_->context_length(), options.max_tokens,
                               options.roll_off_at_least, image_tokens());
  GenerationStats stats = run(Prompt{std::move(fitted.tokens), std::move(fitted.images)}, options, on_text);
  stats.rolled_off_messages = fitted.rolled_off;
  return stats;
}

namespace {

// How many leading prompt tokens a cache holding `cached` can keep. Local layers keep a ring of
// recent positions, so the cache can step back `rewind` positions (Backend::rewind_limit) but no
// further: a cache that holds more past the common prefix starts over.
// `match_limit`: positions from there on differ whatever their ids say (an image run holding
// another image).
size_t reusable_prefix(const std::vector<int32_t>& cached, std::span<const int32_t> prompt, int rewind,
                       size_t match_limit = SIZE_MAX) {
  if (prompt.empty()) return 0;
  size_t keep = 0;
  while (keep < cached.size() && keep < prompt.size() && keep < match_limit && cached[keep] == prompt[keep]) ++keep;
  if (keep == prompt.size()) --keep;  // the last prompt token must be fed again for its logits
  const size_t limit = size_t(std::max(1, rewind));
  // Two tokens where the cache can go back that far: the last prompt position then goes through the
  // batched matrix kernels as in a cold prefill (one token alone takes the decode kernels, which
  // round F32 differently), so a repeated request gets the same logits to the bit.
  if (keep > 0 && keep + 1 == prompt.size() && cached.size() + 1 <= keep + limit) --keep;
  if (cached.size() > keep + limit) keep = 0;
  return keep;
}

// The spans of `runs` from position `from` on, for Backend::forward_embedded.
std::vector<Backend::EmbeddingSpan> spans_of(const std::vector<ImageRun>& runs, size_t from, size_t to = SIZE_MAX) {
  std::vector<Backend::EmbeddingSpan> spans;
  for (const ImageRun& r : runs)
    if (size_t(r.pos) >= from && size_t(r.pos) < to) spans.push_back({r.pos, r.count, r.rows->data()});
  return spans;
}

// Runs' keys without their embeddings (what a slot remembers of the images in its cache).
std::vector<ImageRun> keys_only(std::vector<ImageRun> runs) {
  for (ImageRun& r : runs) r.rows.reset();
  return runs;
}

}  // namespace

Error LocalEngine::cannot_see() const {
  const std::string how = info_.source_format == "gguf" ? ": it has no vision tower (give its mmproj file with --mmproj)"
                                                        : ": it has no vision tower";
  return Error(info_.path + " cannot see images" + how);
}

std::vector<ImageRun> LocalEngine::image_runs(const Prompt& prompt) const {
  if (vision_) return vision_->runs_of(prompt);
  if (!prompt.images.empty()) throw cannot_see();
  return {};
}

size_t LocalEngine::reusable(const Slot& s, const std::vector<int32_t>& tokens, const std::vector<ImageRun>& runs) const {
  size_t limit = SIZE_MAX;
  for (const ImageRun& r : runs) {
    const auto same = std::find_if(s.images.begin(), s.images.end(), [&](const ImageRun& c) { return c.pos == r.pos; });
    if (same == s.images.end() || same->key != r.key) {
      limit = size_t(r.pos);
      break;
    }
  }
  size_t keep = reusable_prefix(s.cached, tokens, backend_->rewind_limit(), limit);
  for (const ImageRun& r : runs)  // an image goes in whole
    if (size_t(r.pos) < keep && keep < size_t(r.pos + r.count)) keep = size_t(r.pos);
  return keep;
}

void LocalEngine::embed_runs(std::vector<ImageRun>& runs, const std::vector<Image>& images, size_t from,
                             VisionSession::Spent& spent) {
  for (size_t i = 0; i < runs.size(); ++i)
    if (size_t(runs[i].pos) >= from) vision_->embed(runs[i], images[size_t(runs[i].image)], spent);
  info_.notes.insert(info_.notes.end(), spent.notes.begin(), spent.notes.end());  // the model's, from now on
}

int LocalEngine::prefill(int slot, const std::vector<int32_t>& prompt, std::vector<ImageRun> runs) {
  if (prompt.empty()) throw Error("the prompt has no tokens");
  Slot& s = slots_[size_t(slot)];
  const size_t keep = reusable(s, prompt, runs);
  s.cached.resize(keep);
  std::erase_if(s.images, [&](const ImageRun& r) { return size_t(r.pos) >= keep; });
  std::span<const int32_t> rest(prompt.data() + keep, prompt.size() - keep);
  try {
    backend_->forward_embedded(slot, rest, int(keep), spans_of(runs, keep), false, s.logits.data());
  } catch (...) {
    s.cached.clear();  // the cache may hold part of the batch
    s.images.clear();
    throw;
  }
  s.cached = prompt;
  s.images = keys_only(std::move(runs));
  s.last_used = ++use_clock_;
  return int(keep);
}

const std::vector<std::string>& LocalEngine::token_pieces() {
  if (pieces_.empty()) {
    pieces_.reserve(size_t(config_.vocab_size));
    for (int32_t id = 0; id < config_.vocab_size; ++id)
      pieces_.push_back(id < tokenizer_.vocab_size() ? tokenizer_.piece_bytes(id) : std::string());
  }
  return pieces_;
}

TokenLogprob LocalEngine::token_logprob(const std::vector<float>& logits, int32_t id, int top_count) const {
  const LogSoftmax log_softmax(logits);
  TokenLogprob t{id, tokenizer_.piece_bytes(id), log_softmax.of(id), {}};
  for (const auto& [alt, logprob] : log_softmax.top(std::clamp(top_count, 0, 20)))
    t.top.push_back({alt, tokenizer_.piece_bytes(alt), logprob});
  return t;
}

void LocalEngine::mask_unspeakable(std::vector<float>& logits) const {
  for (size_t v = size_t(std::max(0, tokenizer_.vocab_size())); v < logits.size(); ++v)
    logits[v] = -std::numeric_limits<float>::infinity();
}

bool LocalEngine::is_end_token(int32_t id, StopReason& reason) const {
  if (id == tokenizer_.end_of_turn_id()) {
    reason = StopReason::EndOfTurn;
    return true;
  }
  if (id == tokenizer_.eos_id() ||
      std::find(config_.eos_token_ids.begin(), config_.eos_token_ids.end(), id) != config_.eos_token_ids.end()) {
    reason = StopReason::EndOfSequence;
    return true;
  }
  return false;
}

void LocalEngine::check_prompt(const std::vector<int32_t>& prompt) const {
  const int ctx = backend_->context_length();
  if (int(prompt.size()) >= ctx)
    throw Error("the prompt has " + std::to_string(prompt.size()) + " tokens; the context holds " +
                std::to_string(ctx));
}

void LocalEngine::refuse_if_serving() const {
  if (slots_[0].run) throw Error("the engine's first slot is busy with a parallel generation");
}

void LocalEngine::reset() {
  for (Slot& s : slots_)
    if (!s.run) {
      s.cached.clear();
      s.images.clear();
    }
}

GenerationStats LocalEngine::run(const Prompt& whole, const GenerateOptions& options, const TokenCallback& on_text) {
  refuse_if_serving();
  const std::vector<int32_t>& prompt = whole.tokens;
  check_prompt(prompt);
  std::vector<ImageRun> runs = image_runs(whole);
  const auto start = Clock::now();
  if (profiling_) backend_->take_profile();  // drop timings from earlier calls
  Generation generation(*this, options, on_text, start);
  VisionSession::Spent spent;
  if (!runs.empty()) embed_runs(runs, whole.images, reusable(slots_[0], prompt, runs), spent);
  generation.encoded_images(spent.encoded, spent.ms, spent.notes);
  generation.prefilled(int(prompt.size()), prefill(0, prompt, std::move(runs)));

  Slot& s = slots_[0];
  const int ctx = backend_->context_length();
  std::optional<int32_t> picked;
  while (const std::optional<int32_t> next = generation.next(s.logits, s.cached, picked, ctx)) {
    const std::span<const int32_t> fed(&*next, 1);
    picked = generation.device_pick() ? backend_->forward_argmax(fed, int(s.cached.size())) : std::nullopt;
    // A device pick past the tokenizer (never for a trained model): the step again, for the logits.
    if (!picked || !speakable(*picked)) {
      backend_->forward(fed, int(s.cached.size()), false, s.logits.data());
      picked.reset();
    }
    s.cached.push_back(*next);
  }
  GenerationStats stats = generation.finish();
  if (profiling_) stats.profile = backend_->take_profile();
  stats.notes = backend_->take_notes();
  return stats;
}

int LocalEngine::open_slots(int count) {
  count = std::max(1, count);
  for (size_t i = size_t(count); i < slots_.size(); ++i)
    if (slots_[i].run) throw Error("slot " + std::to_string(i) + " is busy; it cannot be dropped");
  const int made = backend_->set_sequences(count);
  slots_.resize(size_t(made));
  for (Slot& s : slots_) s.logits.resize(size_t(config_.vocab_size));
  info_.kv_cache_bytes = backend_->kv_cache_bytes();
  return made;
}

bool LocalEngine::slot_busy(int slot) const {
  return slot >= 0 && size_t(slot) < slots_.size() && slots_[size_t(slot)].run != nullptr;
}

int LocalEngine::slot_reuse(int slot, const Prompt& whole) const {
  if (slot < 0 || size_t(slot) >= slots_.size()) return 0;
  std::vector<ImageRun> runs;
  try {
    runs = image_runs(whole);
  } catch (const Error&) {
    return 0;  // slot_start will say why
  }
  return int(reusable(slots_[size_t(slot)], whole.tokens, runs));
}

void LocalEngine::slot_start(int slot, const Prompt& whole, const GenerateOptions& options, TokenCallback on_text) {
  const std::vector<int32_t>& prompt = whole.tokens;
  if (slot < 0 || size_t(slot) >= slots_.size())
    throw Error("slot " + std::to_string(slot) + " does not exist; there are " + std::to_string(slots_.size()));
  if (slots_[size_t(slot)].run) throw Error("slot " + std::to_string(slot) + " is busy");
  check_prompt(prompt);
  if (prompt.empty()) throw Error("the prompt has no tokens");
  Slot& s = slots_[size_t(slot)];
  const auto start = Clock::now();
  std::vector<ImageRun> runs = image_runs(whole);
  const size_t keep = reusable(s, prompt, runs);
  VisionSession::Spent spent;
  if (!runs.empty()) embed_runs(runs, whole.images, keep, spent);  // a bad image fails here, the slot free
  s.run = std::make_unique<Generation>(*this, options, std::move(on_text), start);
  s.run->encoded_images(spent.encoded, spent.ms, spent.notes);
  // The cache is cut back to the reused prefix only when the first chunk goes in (prefill_step),
  // so a generation cancelled before that leaves the slot's record and its cache in agreement.
  s.prompt = prompt;
  s.prompt_images = std::move(runs);
  s.prompt_reused = int(keep);
  s.prompt_fed = size_t(s.prompt_reused);
  s.last_used = ++use_clock_;
}

bool LocalEngine::prefill_step(int slot, size_t budget) {
  Slot& s = slots_[size_t(slot)];
  if (s.prompt_fed == size_t(s.prompt_reused)) {
    s.cached.resize(s.prompt_fed);
    std::erase_if(s.images, [&](const ImageRun& r) { return size_t(r.pos) >= s.prompt_fed; });
  }
  size_t end = s.prompt_fed + std::min(budget, s.prompt.size() - s.prompt_fed);
  for (const ImageRun& r : s.prompt_images)  // an image goes in whole, in one chunk
    if (size_t(r.pos) < end && size_t(r.pos + r.count) > end)
      end = size_t(r.pos) > s.prompt_fed ? size_t(r.pos) : size_t(r.pos + r.count);
  const std::span<const int32_t> chunk(s.prompt.data() + s.prompt_fed, end - s.prompt_fed);
  backend_->forward_embedded(slot, chunk, int(s.prompt_fed), spans_of(s.prompt_images, s.prompt_fed, end), false,
                             s.logits.data());
  s.cached.insert(s.cached.end(), chunk.begin(), chunk.end());
  for (const ImageRun& r : s.prompt_images)
    if (size_t(r.pos) >= s.prompt_fed && size_t(r.pos) < end) s.images.push_back({r.pos, r.count, r.image, r.view, r.key, nullptr});
  s.prompt_fed = end;
  if (s.prompt_fed < s.prompt.size()) return false;
  s.run->prefilled(int(s.prompt.size()), s.prompt_reused);
  s.prompt.clear();
  s.prompt_images.clear();
  return true;
}

std::vector<Engine::SlotResult> LocalEngine::step_slots() {
  std::vector<SlotResult> ended;
  std::vector<Backend::SequenceToken> items;
  const int ctx = backend_->context_length();
  auto end_slot = [&](int i, std::string error) {
    Slot& s = slots_[size_t(i)];
    s.prompt.clear();
    s.prompt_images.clear();
    SlotResult r{i, {}, std::move(error)};
    try {
      r.stats = s.run->finish();
    } catch (const std::exception& e) {
      if (r.error.empty()) r.error = e.what();
    }
    s.run.reset();
    s.last_used = ++use_clock_;
    ended.push_back(std::move(r));
  };
  // Starting slots take up to kPrefillChunk prompt tokens a step, in slot order; their first token
  // is sampled at the step after their prompt is in.
  size_t budget = kPrefillChunk;
  std::vector<bool> prefilling(slots_.size(), false);
  for (size_t i = 0; i < slots_.size(); ++i) {
    Slot& s = slots_[i];
    if (!s.run || s.prompt.empty()) continue;
    prefilling[i] = true;
    if (s.run->cancelled()) {
      end_slot(int(i), {});
      continue;
    }
    if (budget == 0) continue;
    const size_t before = s.prompt_fed;
    try {
      prefill_step(int(i), budget);
    } catch (const std::exception& e) {
      s.cached.clear();  // the cache may hold part of the chunk
      s.images.clear();
      end_slot(int(i), e.what());
      continue;
    }
    budget -= std::min(budget, s.prompt_fed - before);
  }
  for (size_t i = 0; i < slots_.size(); ++i) {
    Slot& s = slots_[i];
    if (!s.run || prefilling[i]) continue;
    try {
      if (const std::optional<int32_t> next = s.run->next(s.logits, s.cached, std::nullopt, ctx))
        items.push_back({int(i), *next, int(s.cached.size())});
      else
        end_slot(int(i), {});
    } catch (const std::exception& e) {  // this generation alone failed (e.g. all logits NaN)
      end_slot(int(i), e.what());
    }
  }
  if (items.empty()) return ended;
  const size_t vocab = size_t(config_.vocab_size);
  try {
    if (items.size() == 1) {
      const Backend::SequenceToken& one = items[0];
      backend_->forward_sequence(one.sequence, std::span<const int32_t>(&one.token, 1), one.pos, false,
                                 slots_[size_t(one.sequence)].logits.data());
    } else {
      step_logits_.resize(items.size() * vocab);
      backend_->forward_sequences(items, int(vocab), step_logits_.data());
      for (size_t i = 0; i < items.size(); ++i)
        std::copy_n(step_logits_.begin() + ptrdiff_t(i * vocab), vocab, slots_[size_t(items[i].sequence)].logits.begin());
    }
  } catch (const std::exception& e) {  // the pass failed for all of them; their caches start over
    for (const Backend::SequenceToken& item : items) {
      slots_[size_t(item.sequence)].cached.clear();
      slots_[size_t(item.sequence)].images.clear();
      end_slot(item.sequence, e.what());
    }
    return ended;
  }
  for (const Backend::SequenceToken& item : items) slots_[size_t(item.sequence)].cached.push_back(item.token);
  return ended;
}

std::vector<std::vector<float>> LocalEngine::logits(const Prompt& prompt, int prefill_count, int first_row) {
  const std::span<const int32_t> tokens = prompt.tokens;
  const int n = int(tokens.size());
  if (n == 0) return {};
  if (prefill_count <= 0 || prefill_count > n) prefill_count = n;
  first_row = std::clamp(first_row, 0, n - 1);
  const int vocab = config_.vocab_size;
  refuse_if_serving();
  std::vector<ImageRun> runs = image_runs(prompt);
  VisionSession::Spent spent;
  if (!runs.empty()) embed_runs(runs, prompt.images, 0, spent);
  // A batch ends where no image is cut in two: before the image it would cut, or after it where
  // the image starts the batch.
  auto batch_end = [&](int from, int end) {
    for (const ImageRun& r : runs)
      if (r.pos < end && r.pos + r.count > end) end = r.pos > from ? r.pos : r.pos + r.count;
    return end;
  };
  prefill_count = batch_end(0, prefill_count);
  Slot& s = slots_[0];
  std::vector<float>& last = s.logits;  // the last position's row
  s.cached.clear();
  s.images.clear();
  auto feed = [&](int pos, int len, bool all, float* out) {
    backend_->forward_embedded(0, tokens.subspan(size_t(pos), size_t(len)), pos,
                               spans_of(runs, size_t(pos), size_t(pos + len)), all, out);
  };
  std::vector<std::vector<float>> rows;
  // The prefill batch. Positions before first_row need no logits; the rest come in slices so that
  // only one slice of all-position logits exists at a time.
  constexpr int kRowsPerSlice = 64;
  int pos = 0;
  if (first_row >= prefill_count) {
    feed(0, prefill_count, false, last.data());
    pos = prefill_count;
  } else if (const int skip = batch_end(0, first_row); skip > 0) {
    feed(0, skip, false, last.data());
    pos = skip;
  }
  std::vector<float> slice;
  auto keep_rows = [&](int from, int len) {
    for (int t = 0; t < len; ++t)
      if (from + t >= first_row)
        rows.emplace_back(slice.begin() + size_t(t) * vocab, slice.begin() + size_t(t + 1) * vocab);
  };
  while (pos < prefill_count) {
    const int len = batch_end(pos, pos == 0 ? prefill_count : std::min(prefill_count, pos + kRowsPerSlice)) - pos;
    slice.resize(size_t(len) * vocab);
    feed(pos, len, true, slice.data());
    keep_rows(pos, len);
    pos += len;
  }
  // The rest a token at a time; an image goes in whole.
  while (pos < n) {
    const int len = batch_end(pos, pos + 1) - pos;
    slice.resize(size_t(len) * vocab);
    feed(pos, len, true, slice.data());
    keep_rows(pos, len);
    pos += len;
  }
  s.cached.assign(tokens.begin(), tokens.end());
  s.images = keys_only(std::move(runs));
  if (!rows.empty()) last = rows.back();
  return rows;
}

}  // namespace kiln
