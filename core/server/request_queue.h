// The hand-over between HTTP threads and the one inference thread.
//
// An HTTP thread parses a request into an InferenceJob and pushes it into the FairQueue, then waits on
// the job. The inference thread (whoever owns the Engine) calls FairQueue::serve(engine), which gives
// waiting jobs (round-robin over clients) the engine's free slots and steps every busy slot together
// (Engine::step_slots) until none is busy; jobs that arrive meanwhile join between steps (continuous
// batching). The job's text flows back through the job. HTTP threads never touch the Engine; the
// inference thread never touches a socket.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "kiln/engine.h"
#include "server/openai_protocol.h"

namespace kiln::server {

class InferenceJob {
 public:
  InferenceJob(CompletionRequest request, std::string client_key);

  const CompletionRequest& request() const { return request_; }
  const std::string& client_key() const { return client_key_; }

  // ---- inference thread ----
  enum class Outcome { Completed, Cancelled, Refused, Failed };
  struct RunResult {
    Outcome outcome = Outcome::Completed;
    int generated_tokens = 0;
    int prompt_tokens = 0;             // as the response's usage reports them
    double decode_tokens_per_s = 0;
  };
  using Account = std::function<void(const RunResult&)>;
  // Counts the prompt and refuses one that does not fit the context. Returns the prompt (tokens, and
  // the images whose embeddings fill its image-token runs),
  // or nullopt when the job ended here (refused, failed, or cancelled while it waited). `account`
  // sees the outcome just before the client is told, so counters are up to date when a client reads them.
  std::optional<Prompt> admit(Engine& engine, const Account& account);
  // Starts the next choice in `slot` (free). false: it ended at once (failed), accounted.
  bool start_choice(Engine& engine, int slot, const Account& account);
  // The slot's generation ended: the next choice starts in the same slot (true: the slot stays busy),
  // or the job is concluded (false: the slot is free).
  bool choice_ended(Engine& engine, const Engine::SlotResult& result, const Account& account);

  // ---- HTTP threads ----
  // Blocks until the job was admitted (returns nullopt) or refused (returns why).
  std::optional<ApiError> wait_admission();
  struct Output {
    int choice = 0;    // which of the request's n choices the text belongs to (they come in order)
    std::string text;  // everything generated since the last call
    std::vector<TokenLogprob> logprobs;  // the tokens since the last call, when the request asked
    bool finished = false;
  };
  // Waits up to `timeout` for more text or the end.
  Output wait_output(std::chrono::milliseconds timeout);
  // Once finished: why it ended, and the failure (engine error, shutdown) when there was one.
  GenerationStats stats() const;  // n > 1: the prompt once, the generated tokens of every choice
  // Why choice `index` ended (None while it runs or when it never ran).
  StopReason choice_reason(int index) const;
  std::optional<ApiError> failure() const;

  // Any thread: stop now. The job is finished at once with `reason` (nullopt: the client left);
  // the engine notices through the stop token and returns within a token.
  void cancel(std::optional<ApiError> reason);
  bool cancelled() const { return stop_.stop_requested(); }

 private:
  enum class Phase { Queued, Running, Finished };
  void finish(const GenerationStats& stats, std::optional<ApiError> failure);
  void conclude(const Account& account, RunResult result, const GenerationStats& stats,
                std::optional<ApiError> failure);

  const CompletionRequest request_;
  const std::string client_key_;
  std::stop_source stop_;
  // Inference thread only: the prompt, the options every choice starts from, and the stats so far.
  Prompt prompt_;
  GenerateOptions options_;
  GenerationStats so_far_;
  int next_choice_ = 0;

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  Phase phase_ = Phase::Queued;
  bool admitted_ = false;
  struct Segment {  // produced for one choice, not yet taken by the HTTP thread
    int choice = 0;
    std::string text;
    std::vector<TokenLogprob> logprobs;
  };
  Segment& pending_segment();  // the running choice's, under mutex_
  std::deque<Segment> pending_;
  int running_choice_ = 0;
  std::vector<StopReason> choice_reasons_;
  GenerationStats stats_;
  std::optional<ApiError> failure_;
};

struct QueueCounters {
  size_t waiting = 0;
  size_t running = 0;             // busy slots
  size_t slot_count = 0;          // the engine's slots (0 until the first request is served)
  uint64_t completed = 0;         // ran to the end (stop, length)
  uint64_t cancelled = 0;         // client left or server stopped
  uint64_t refused = 0;           // prompt too long, queue full, or shutting down
  uint64_t failed = 0;            // the engine threw
  uint64_t generated_tokens = 0;  // over all requests, cancelled ones included
  uint64_t prompt_tokens = 0;     // of the generations that ran, cancelled ones included
  double last_decode_tokens_per_s = 0;  // of the last generation that completed
};

class FairQueue {
 public:
  // parallel: the slots asked of the engine (Engine::open_slots; it may give fewer).
  FairQueue(size_t max_waiting, int parallel = 1);

  // HTTP thread. Throws ApiError 503 when max_waiting jobs already wait or the queue was shut down.
  void push(std::shared_ptr<InferenceJob> job);
  // Any thread: the client left. A waiting job leaves the queue at once; a running one is stopped.
  void cancel(const std::shared_ptr<InferenceJob>& job);

  // Inference thread: gives waiting jobs free slots (round-robin over client keys, first come first
  // served within one client; each to the free slot whose cache holds the longest prefix of its
  // prompt) and steps the busy slots until none is busy, admitting jobs that arrive between steps.
  // Returns false when there was nothing to do.
  bool serve(Engine& engine);

  // Refuses every waiting job with 503, stops the running one, and refuses later pushes.
  void shutdown();
  QueueCounters counters() const;

 private:
  std::shared_ptr<InferenceJob> pop_locked();
  void open_slots(Engine& engine);
  // Gives waiting jobs the free slots.
  void admit_waiting(Engine& engine);
  InferenceJob::Account account_for(int slot);
  bool any_busy() const;

  const size_t max_waiting_;
  const int parallel_;
  bool slots_opened_ = false;        // inference thread
  std::vector<uint64_t> slot_used_;  // inference thread: when each slot last took a job (ties go to the oldest)
  uint64_t use_clock_ = 0;
  mutable std::mutex mutex_;
  bool shut_down_ = false;
  size_t waiting_ = 0;
  std::map<std::string, std::deque<std::shared_ptr<InferenceJob>>> by_client_;
  std::deque<std::string> turn_order_;  // client keys with waiting jobs, next to serve first
  std::vector<std::shared_ptr<InferenceJob>> slots_;  // [engine slots]: the job in each, null when free
  QueueCounters counters_;
};

}  // namespace kiln::server
