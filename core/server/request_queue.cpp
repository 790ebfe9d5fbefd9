// Jobs and the fair queue between HTTP threads and the inference thread.
#include "server/request_queue.h"

#include <algorithm>
#include <cstdio>

namespace kiln::server {

InferenceJob::InferenceJob(CompletionRequest request, std::string client_key)
    : request_(std::move(request)), client_key_(std::move(client_key)) {}

void InferenceJob::conclude(const Account& account, RunResult result, const GenerationStats& stats,
                            std::optional<ApiError> failure) {
  account(result);
  finish(stats, std::move(failure));
}

std::optional<Prompt> InferenceJob::admit(Engine& engine, const Account& account) {
  if (stop_.stop_requested()) {
    account({Outcome::Cancelled, 0});
    return std::nullopt;
  }
  const bool chat = request_.endpoint == Endpoint::ChatCompletions;

  // The prompt is counted here, on the engine's thread: only this thread may use the engine.
  const bool images = chat && std::any_of(request_.messages.begin(), request_.messages.end(),
                                          [](const ChatMessage& m) { return !m.images.empty(); });
  try {
    if (chat)
      prompt_ = engine.chat_prompt(request_.messages);
    else
      prompt_.tokens = engine.tokenize(request_.prompt, /*add_bos=*/true, request_.options.parse_special);
  } catch (const std::exception& e) {
    // The engine's word on an image (one it cannot see or use) is about the request, not the server.
    if (images && dynamic_cast<const Error*>(&e)) {
      conclude(account, {Outcome::Refused, 0}, {},
               ApiError(400, std::string("The image cannot be used: ") + e.what(), "invalid_request_error", "messages",
                        "invalid_image"));
      return std::nullopt;
    }
    conclude(account, {Outcome::Failed, 0}, {},
             ApiError(500, std::string("Could not tokenize the prompt: ") + e.what(), "server_error"));
    return std::nullopt;
  }
  const size_t prompt_tokens = prompt_.tokens.size();
  const int context = engine.info().context_length;
  if (prompt_tokens >= static_cast<size_t>(context)) {
    const std::string what = chat ? "messages" : "prompt";
    ApiError too_long(400,
                      "This model's maximum context length is " + std::to_string(context) + " tokens. However, your " +
                          what + " resulted in " + std::to_string(prompt_tokens) +
                          " tokens (at least one token must be left for the reply). Please reduce the length of the " +
                          what + ".",
                      "invalid_request_error", what, "context_length_exceeded");
    conclude(account, {Outcome::Refused, 0}, {}, std::move(too_long));
    return std::nullopt;
  }

  options_ = request_.options;
  const int room = context - static_cast<int>(prompt_tokens);
  // A max_tokens beyond the room left is cut to fit (finish_reason "length"), as llama.cpp does.
  options_.max_tokens = request_.max_tokens > 0 ? std::min(request_.max_tokens, room) : room;
  options_.cancel = stop_.get_token();
  if (options_.logprobs)
    options_.on_logprob = [this](const TokenLogprob& token) {
      std::lock_guard lock(mutex_);
      pending_segment().logprobs.push_back(token);
    };  // the text that follows wakes the HTTP thread
  bool admitted = false;
  {
    std::lock_guard lock(mutex_);
    if (phase_ != Phase::Finished) {  // not cancelled while its prompt was counted
      phase_ = Phase::Running;
      admitted = admitted_ = true;
    }
  }
  if (!admitted) {
    account({Outcome::Cancelled, 0});
    return std::nullopt;
  }
  changed_.notify_all();
  return prompt_;
}

bool InferenceJob::start_choice(Engine& engine, int slot, const Account& account) {
  const int c = next_choice_++;
  {
    std::lock_guard lock(mutex_);
    running_choice_ = c;
  }
  GenerateOptions choice_options = options_;
  // n choices one after another in the same slot, each reproducible from seed + index.
  if (request_.options.sampling.seed) choice_options.sampling.seed = *request_.options.sampling.seed + uint64_t(c);
  auto on_text = [this](std::string_view text) {
    {
      std::lock_guard lock(mutex_);
      pending_segment().text.append(text);
    }
    changed_.notify_all();
    return !stop_.stop_requested();
  };
  try {
    engine.slot_start(slot, prompt_, choice_options, on_text);
    return true;
  } catch (const std::exception& e) {
    conclude(account, {Outcome::Failed, so_far_.generated_tokens}, so_far_,
             ApiError(500, std::string("Generation failed: ") + e.what(), "server_error"));
    return false;
  }
}

bool InferenceJob::choice_ended(Engine& engine, const Engine::SlotResult& result, const Account& account) {
  const GenerationStats& one = result.stats;
  {
    std::lock_guard lock(mutex_);
    choice_reasons_.push_back(one.stop_reason);
  }
  if (next_choice_ == 1) {
    so_far_ = one;  // the prompt once, from the first choice
  } else {
    so_far_.generated_tokens += one.generated_tokens;
    so_far_.stop_reason = one.stop_reason;
    so_far_.decode_tokens_per_s = one.decode_tokens_per_s;
  }
  if (!result.error.empty()) {
    conclude(account, {Outcome::Failed, so_far_.generated_tokens}, so_far_,
             ApiError(500, "Generation failed: " + result.error, "server_error"));
    return false;
  }
  const bool cancelled = stop_.stop_requested() || one.stop_reason == StopReason::Cancelled;
  if (!cancelled && next_choice_ < request_.n) return start_choice(engine, result.slot, account);
  conclude(account,
           {cancelled ? Outcome::Cancelled : Outcome::Completed, so_far_.generated_tokens, so_far_.prompt_tokens,
            so_far_.decode_tokens_per_s},
           so_far_, std::nullopt);
  return false;
}

std::optional<ApiError> InferenceJob::wait_admission() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return admitted_ || phase_ == Phase::Finished; });
  if (admitted_) return std::nullopt;
  if (failure_) return failure_;
  return ApiError(503, "The request was cancelled.", "server_error");
}

InferenceJob::Output InferenceJob::wait_output(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  changed_.wait_for(lock, timeout, [&] { return !pending_.empty() || phase_ == Phase::Finished; });
  Output out;
  if (!pending_.empty()) {
    out.choice = pending_.front().choice;
    out.text = std::move(pending_.front().text);
    out.logprobs = std::move(pending_.front().logprobs);
    pending_.pop_front();
  }
  out.finished = phase_ == Phase::Finished && pending_.empty();
  return out;
}

InferenceJob::Segment& InferenceJob::pending_segment() {
  if (pending_.empty() || pending_.back().choice != running_choice_) pending_.push_back({running_choice_, {}, {}});
  return pending_.back();
}

StopReason InferenceJob::choice_reason(int index) const {
  std::lock_guard lock(mutex_);
  return index >= 0 && size_t(index) < choice_reasons_.size() ? choice_reasons_[size_t(index)] : StopReason::None;
}

GenerationStats InferenceJob::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

std::optional<ApiError> InferenceJob::failure() const {
  std::lock_guard lock(mutex_);
  return failure_;
}

void InferenceJob::cancel(std::optional<ApiError> reason) {
  {
    std::lock_guard lock(mutex_);
    if (phase_ != Phase::Finished) {
      phase_ = Phase::Finished;
      stats_.stop_reason = StopReason::Cancelled;
      failure_ = std::move(reason);
    }
  }
  stop_.request_stop();
  changed_.notify_all();
}

void InferenceJob::finish(const GenerationStats& stats, std::optional<ApiError> failure) {
  {
    std::lock_guard lock(mutex_);
    if (phase_ == Phase::Finished) return;  // cancelled earlier: that verdict stands
    phase_ = Phase::Finished;
    stats_ = stats;
    failure_ = std::move(failure);
  }
  changed_.notify_all();
}

FairQueue::FairQueue(size_t max_waiting, int parallel) : max_waiting_(max_waiting), parallel_(std::max(1, parallel)) {}

void FairQueue::push(std::shared_ptr<InferenceJob> job) {
  std::lock_guard lock(mutex_);
  if (shut_down_) {
    ++counters_.refused;
    throw ApiError(503, "The server is shutting down.", "server_error", {}, "server_shutting_down");
  }
  if (waiting_ >= max_waiting_) {
    ++counters_.refused;
    throw ApiError(503,
                   "The server is overloaded: " + std::to_string(waiting_) +
                       " requests are already waiting. Please retry later.",
                   "server_error", {}, "server_overloaded");
  }
  auto& jobs = by_client_[job->client_key()];
  if (jobs.empty()) turn_order_.push_back(job->client_key());
  jobs.push_back(std::move(job));
  ++waiting_;
}

std::shared_ptr<InferenceJob> FairQueue::pop_locked() {
  if (turn_order_.empty()) return nullptr;
  const std::string key = std::move(turn_order_.front());
  turn_order_.pop_front();
  auto it = by_client_.find(key);
  auto job = std::move(it->second.front());
  it->second.pop_front();
  if (it->second.empty())
    by_client_.erase(it);
  else
    turn_order_.push_back(key);  // this client's next job waits for everyone else's turn
  --waiting_;
  return job;
}

void FairQueue::cancel(const std::shared_ptr<InferenceJob>& job) {
  {
    std::lock_guard lock(mutex_);
    auto it = by_client_.find(job->client_key());
    if (it != by_client_.end()) {
      auto& jobs = it->second;
      if (auto pos = std::find(jobs.begin(), jobs.end(), job); pos != jobs.end()) {
        jobs.erase(pos);
        --waiting_;
        ++counters_.cancelled;
        if (jobs.empty()) {
          by_client_.erase(it);
          turn_order_.erase(std::find(turn_order_.begin(), turn_order_.end(), job->client_key()));
        }
      }
    }
  }
  job->cancel(std::nullopt);
}

InferenceJob::Account FairQueue::account_for(int slot) {
  return [this, slot](const InferenceJob::RunResult& result) {
    std::lock_guard lock(mutex_);
    if (slot >= 0 && size_t(slot) < slots_.size()) slots_[size_t(slot)].reset();
    counters_.generated_tokens += static_cast<uint64_t>(std::max(0, result.generated_tokens));
    counters_.prompt_tokens += static_cast<uint64_t>(std::max(0, result.prompt_tokens));
    if (result.outcome == InferenceJob::Outcome::Completed) counters_.last_decode_tokens_per_s = result.decode_tokens_per_s;
    switch (result.outcome) {
      case InferenceJob::Outcome::Completed: ++counters_.completed; break;
      case InferenceJob::Outcome::Cancelled: ++counters_.cancelled; break;
      case InferenceJob::Outcome::Refused: ++counters_.refused; break;
      case InferenceJob::Outcome::Failed: ++counters_.failed; break;
    }
  };
}

void FairQueue::open_slots(Engine& engine) {
  if (slots_opened_) return;
  slots_opened_ = true;
  int made = 1;
  bool refused = false;
  try {
    made = engine.open_slots(parallel_);
  } catch (const std::exception& e) {
    refused = true;
    // Not enough memory for every slot's cache: serve with what the engine already has.
    std::fprintf(stderr, "kiln serve: %d parallel slots do not fit (%s); serving with %d\n", parallel_, e.what(),
                 engine.slot_count());
    made = engine.slot_count();
  }
  if (!refused && made < parallel_)
    std::fprintf(stderr, "kiln serve: %s decodes %d sequence(s) at a time: %d of %d parallel slots; the rest wait\n",
                 engine.info().backend.c_str(), made, made, parallel_);
  std::lock_guard lock(mutex_);
  slots_.resize(size_t(std::max(1, made)));
  slot_used_.assign(slots_.size(), 0);
}

bool FairQueue::any_busy() const {
  std::lock_guard lock(mutex_);
  return std::any_of(slots_.begin(), slots_.end(), [](const auto& job) { return job != nullptr; });
}

void FairQueue::admit_waiting(Engine& engine) {
  for (;;) {
    std::shared_ptr<InferenceJob> job;
    std::vector<int> free;
    {
      std::lock_guard lock(mutex_);
      for (size_t i = 0; i < slots_.size(); ++i)
        if (!slots_[i] && !engine.slot_busy(int(i))) free.push_back(int(i));
      if (free.empty()) return;
      job = pop_locked();
      if (!job) return;
    }
    // Counted and refused (too long, cancelled meanwhile) without a slot: accounted as no slot's.
    const std::optional<Prompt> prompt = job->admit(engine, account_for(-1));
    if (!prompt) continue;
    // The free slot whose cache reuses the most of the prompt, where the prompt continues what that
    // slot holds (it reuses at least half of it): every chat shares its first few tokens, and
    // reusing those is not worth another conversation's cache. Else the slot idle longest.
    int best = -1, best_reuse = 0;
    for (int slot : free) {
      const int reuse = engine.slot_reuse(slot, *prompt);
      if (reuse > best_reuse && 2 * reuse >= engine.slot_cached_tokens(slot)) {
        best = slot;
        best_reuse = reuse;
      }
    }
    if (best < 0) {
      best = free.front();
      for (int slot : free)
        if (slot_used_[size_t(slot)] < slot_used_[size_t(best)]) best = slot;
    }
    slot_used_[size_t(best)] = ++use_clock_;
    {
      std::lock_guard lock(mutex_);
      slots_[size_t(best)] = job;
    }
    job->start_choice(engine, best, account_for(best));  // a failure frees the slot through its account
  }
}

bool FairQueue::serve(Engine& engine) {
  open_slots(engine);
  admit_waiting(engine);
  if (!any_busy()) return false;
  while (any_busy()) {
    const std::vector<Engine::SlotResult> ended = engine.step_slots();
    for (const Engine::SlotResult& result : ended) {
      std::shared_ptr<InferenceJob> job;
      {
        std::lock_guard lock(mutex_);
        if (result.slot >= 0 && size_t(result.slot) < slots_.size()) job = slots_[size_t(result.slot)];
      }
      if (job) job->choice_ended(engine, result, account_for(result.slot));
    }
    // Continuous batching: requests that arrived during the step join while others still decode.
    // Once every slot is free this task returns; a request still waiting has a task of its own.
    if (any_busy()) admit_waiting(engine);
  }
  return true;
}

void FairQueue::shutdown() {
  std::vector<std::shared_ptr<InferenceJob>> dropped;
  std::vector<std::shared_ptr<InferenceJob>> running;
  {
    std::lock_guard lock(mutex_);
    shut_down_ = true;
    while (auto job = pop_locked()) dropped.push_back(std::move(job));
    counters_.refused += dropped.size();
    running = slots_;
  }
  const ApiError stopping(503, "The server is shutting down.", "server_error", {}, "server_shutting_down");
  for (auto& job : dropped) job->cancel(stopping);
  for (auto& job : running)
    if (job) job->cancel(stopping);
}

QueueCounters FairQueue::counters() const {
  std::lock_guard lock(mutex_);
  QueueCounters c = counters_;
  c.waiting = waiting_;
  c.running = size_t(std::count_if(slots_.begin(), slots_.end(), [](const auto& job) { return job != nullptr; }));
  c.slot_count = slots_.size();
  return c;
}

}  // namespace kiln::server
