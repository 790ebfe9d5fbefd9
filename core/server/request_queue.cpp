// Jobs and the fair queue between HTTP threads and the inference thread.
#include "server/request_queue.h"

#include <algorithm>

namespace kiln::server {

InferenceJob::InferenceJob(CompletionRequest request, std::string client_key)
    : request_(std::move(request)), client_key_(std::move(client_key)) {}

void InferenceJob::conclude(const std::function<void(const RunResult&)>& account, RunResult result,
                            const GenerationStats& stats, std::optional<ApiError> failure) {
  account(result);
  finish(stats, std::move(failure));
}

void InferenceJob::run(Engine& engine, const std::function<void(const RunResult&)>& account) {
  if (stop_.stop_requested()) return account({Outcome::Cancelled, 0});
  const bool chat = request_.endpoint == Endpoint::ChatCompletions;

  // The prompt is counted here, on the engine's thread: only this thread may use the engine.
  size_t prompt_tokens = 0;
  try {
    prompt_tokens = chat ? engine.chat_tokens(request_.messages).size()
                         : engine.tokenize(request_.prompt, /*add_bos=*/true).size();
  } catch (const std::exception& e) {
    return conclude(account, {Outcome::Failed, 0}, {},
                    ApiError(500, std::string("Could not tokenize the prompt: ") + e.what(), "server_error"));
  }
  const int context = engine.info().context_length;
  if (prompt_tokens >= static_cast<size_t>(context)) {
    const std::string what = chat ? "messages" : "prompt";
    ApiError too_long(400,
                      "This model's maximum context length is " + std::to_string(context) + " tokens. However, your " +
                          what + " resulted in " + std::to_string(prompt_tokens) +
                          " tokens (at least one token must be left for the reply). Please reduce the length of the " +
                          what + ".",
                      "invalid_request_error", what, "context_length_exceeded");
    return conclude(account, {Outcome::Refused, 0}, {}, std::move(too_long));
  }

  GenerateOptions options = request_.options;
  const int room = context - static_cast<int>(prompt_tokens);
  // A max_tokens beyond the room left is cut to fit (finish_reason "length"), as llama.cpp does.
  options.max_tokens = request_.max_tokens > 0 ? std::min(request_.max_tokens, room) : room;
  options.cancel = stop_.get_token();
  bool admitted = false;
  {
    std::lock_guard lock(mutex_);
    if (phase_ != Phase::Finished) {  // not cancelled while its prompt was counted
      phase_ = Phase::Running;
      admitted = admitted_ = true;
    }
  }
  if (!admitted) return account({Outcome::Cancelled, 0});
  changed_.notify_all();

  auto on_text = [this](std::string_view text) {
    {
      std::lock_guard lock(mutex_);
      pending_segment().text.append(text);
    }
    changed_.notify_all();
    return !stop_.stop_requested();
  };
  if (options.logprobs)
    options.on_logprob = [this](const TokenLogprob& token) {
      std::lock_guard lock(mutex_);
      pending_segment().logprobs.push_back(token);
    };  // the text that follows wakes the HTTP thread
  try {
    // n choices one after another; the prompt stays in the KV cache, so only the first prefills it.
    GenerationStats stats;
    for (int c = 0; c < request_.n; ++c) {
      {
        std::lock_guard lock(mutex_);
        running_choice_ = c;
      }
      GenerateOptions choice_options = options;
      if (request_.options.sampling.seed) choice_options.sampling.seed = *request_.options.sampling.seed + uint64_t(c);
      const GenerationStats one = chat ? engine.chat(request_.messages, choice_options, on_text)
                                       : engine.generate(request_.prompt, choice_options, on_text);
      {
        std::lock_guard lock(mutex_);
        choice_reasons_.push_back(one.stop_reason);
      }
      if (c == 0) {
        stats = one;
      } else {
        stats.generated_tokens += one.generated_tokens;
        stats.stop_reason = one.stop_reason;
        stats.decode_tokens_per_s = one.decode_tokens_per_s;
      }
      if (stop_.stop_requested() || one.stop_reason == StopReason::Cancelled) break;
    }
    const bool cancelled = stop_.stop_requested() || stats.stop_reason == StopReason::Cancelled;
    return conclude(account,
                    {cancelled ? Outcome::Cancelled : Outcome::Completed, stats.generated_tokens, stats.prompt_tokens,
                     stats.decode_tokens_per_s},
                    stats, std::nullopt);
  } catch (const std::exception& e) {
    return conclude(account, {Outcome::Failed, 0}, {},
                    ApiError(500, std::string("Generation failed: ") + e.what(), "server_error"));
  }
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

FairQueue::FairQueue(size_t max_waiting) : max_waiting_(max_waiting) {}

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

bool FairQueue::run_next(Engine& engine) {
  std::shared_ptr<InferenceJob> job;
  {
    std::lock_guard lock(mutex_);
    job = pop_locked();
    if (!job) return false;
    running_ = job;
  }
  job->run(engine, [&](const InferenceJob::RunResult& result) {
    std::lock_guard lock(mutex_);
    running_.reset();
    counters_.generated_tokens += static_cast<uint64_t>(std::max(0, result.generated_tokens));
    counters_.prompt_tokens += static_cast<uint64_t>(std::max(0, result.prompt_tokens));
    if (result.outcome == InferenceJob::Outcome::Completed) counters_.last_decode_tokens_per_s = result.decode_tokens_per_s;
    switch (result.outcome) {
      case InferenceJob::Outcome::Completed: ++counters_.completed; break;
      case InferenceJob::Outcome::Cancelled: ++counters_.cancelled; break;
      case InferenceJob::Outcome::Refused: ++counters_.refused; break;
      case InferenceJob::Outcome::Failed: ++counters_.failed; break;
    }
  });
  return true;
}

void FairQueue::shutdown() {
  std::vector<std::shared_ptr<InferenceJob>> dropped;
  std::shared_ptr<InferenceJob> running;
  {
    std::lock_guard lock(mutex_);
    shut_down_ = true;
    while (auto job = pop_locked()) dropped.push_back(std::move(job));
    counters_.refused += dropped.size();
    running = running_;
  }
  const ApiError stopping(503, "The server is shutting down.", "server_error", {}, "server_shutting_down");
  for (auto& job : dropped) job->cancel(stopping);
  if (running) running->cancel(stopping);
}

QueueCounters FairQueue::counters() const {
  std::lock_guard lock(mutex_);
  QueueCounters c = counters_;
  c.waiting = waiting_;
  c.running = running_ ? 1 : 0;
  return c;
}

}  // namespace kiln::server
