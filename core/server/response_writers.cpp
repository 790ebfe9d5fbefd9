// Streaming and non-streaming response bodies for generations.
#include "server/response_writers.h"

#include <httplib.h>

#include <cstdio>

namespace kiln::server {

namespace {

// How often a writer with nothing to send checks that its client is still connected.
constexpr std::chrono::milliseconds kPollInterval{50};

bool send(httplib::DataSink& sink, const std::string& data) {
  return data.empty() || sink.write(data.data(), data.size());  // an empty write would end the body
}

void log_finished(const GenerationResponse& r, const GenerationStats& stats, const std::optional<ApiError>& failure) {
  if (!r.log) return;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - r.started).count();
  char line[320];
  if (failure) {
    std::snprintf(line, sizeof line, "%s: ended with error %d after %.2f s: %s", r.request_line.c_str(),
                  failure->status(), seconds, failure->what());
  } else {
    std::snprintf(line, sizeof line,
                  "%s 200: %d prompt tokens (%d cached), %d generated in %.2f s (%.1f tokens/s), finish %s",
                  r.request_line.c_str(), stats.prompt_tokens, stats.cached_prompt_tokens, stats.generated_tokens,
                  seconds, stats.decode_tokens_per_s, finish_reason(stats.stop_reason).c_str());
  }
  r.log(line);
}

// Counts the request once. Called before the body's end goes out, so a client that reads /metrics
// after its answer always finds it counted.
void count_outcome(GenerationResponse& r, std::optional<RequestOutcome> outcome = std::nullopt) {
  if (r.counted || !r.metrics) return;
  r.counted = true;
  if (!outcome) {
    const bool cancelled = r.job->stats().stop_reason == StopReason::Cancelled;
    outcome = r.job->failure() ? RequestOutcome::Error : cancelled ? RequestOutcome::Cancelled : RequestOutcome::Ok;
  }
  r.metrics->count(r.who.endpoint, *outcome);
}

bool client_left(GenerationResponse& r) {
  r.queue->cancel(r.job);
  count_outcome(r, RequestOutcome::Cancelled);
  if (r.log) r.log(r.request_line + ": the client hung up; generation stopped");
  return false;
}

}  // namespace

namespace {

// Streaming, choice by choice: what ends the current choice (its held answer if tools were offered,
// then its finish chunk) and opens the next (its role chunk).
std::string close_stream_choice(GenerationResponse& r, bool usage) {
  std::string out;
  const std::vector<ToolSpec>& tools = r.job->request().tools;
  bool called = false;
  if (!tools.empty()) {  // a call or text: known only at the end of the choice
    if (auto calls = parse_tool_calls(r.held_text, tools)) {
      out += sse_tool_calls_chunk(r.who, *calls, usage);
      called = true;
    } else if (!r.held_text.empty() || !r.logprobs.empty()) {
      out += sse_text_chunk(r.who, r.held_text, usage, r.job->request().options.logprobs ? &r.logprobs : nullptr,
                            r.logprob_offset);
    }
    r.held_text.clear();
    r.logprobs.clear();
  }
  out += sse_finish_chunk(r.who, r.job->choice_reason(r.who.choice), usage, called);
  r.logprob_offset = 0;
  return out;
}

}  // namespace

bool write_event_stream(GenerationResponse& r, bool& started, httplib::DataSink& sink) {
  const bool chat = r.who.endpoint == Endpoint::ChatCompletions;
  const bool usage = r.job->request().include_usage;
  if (!sink.is_writable()) return client_left(r);
  if (!started) {
    started = true;
    r.who.choice = 0;
    if (chat && !send(sink, sse_role_chunk(r.who, usage))) return client_left(r);
  }
  InferenceJob::Output out = r.job->wait_output(kPollInterval);
  const std::optional<ApiError> failure = out.finished ? r.job->failure() : std::nullopt;
  // Choices come in order: text for a later one means the ones before it have ended.
  const auto advance_to = [&](int choice) {
    std::string chunks;
    while (r.who.choice < choice) {
      chunks += close_stream_choice(r, usage);
      ++r.who.choice;
      if (chat) chunks += sse_role_chunk(r.who, usage);
    }
    return chunks;
  };
  if ((!out.text.empty() || !out.logprobs.empty()) && !send(sink, advance_to(out.choice))) return client_left(r);

  const bool logprobs = r.job->request().options.logprobs;
  if (!r.job->request().tools.empty()) {
    r.held_text += out.text;
    r.logprobs.insert(r.logprobs.end(), out.logprobs.begin(), out.logprobs.end());
  } else if (!out.text.empty() || !out.logprobs.empty()) {
    const std::string chunk =
        sse_text_chunk(r.who, out.text, usage, logprobs ? &out.logprobs : nullptr, r.logprob_offset);
    for (const TokenLogprob& t : out.logprobs) r.logprob_offset += t.bytes.size();
    if (!send(sink, chunk)) return client_left(r);
  }
  if (!out.finished) return true;

  const GenerationStats stats = r.job->stats();
  std::string tail;
  if (failure) {
    tail = sse_error(*failure);
  } else {
    tail = advance_to(r.job->request().n - 1) + close_stream_choice(r, usage);
    if (usage) tail += sse_usage_chunk(r.who, stats);
  }
  tail += kSseDone;
  count_outcome(r);
  if (!send(sink, tail)) return client_left(r);
  sink.done();
  log_finished(r, stats, failure);
  return true;
}

bool write_json_when_done(GenerationResponse& r, std::string& text, httplib::DataSink& sink) {
  if (!sink.is_writable()) return client_left(r);
  InferenceJob::Output out = r.job->wait_output(kPollInterval);
  const size_t n = static_cast<size_t>(r.job->request().n);
  if (r.texts.size() < n) {
    r.texts.resize(n);
    r.choice_logprobs.resize(n);
  }
  const size_t c = std::min(static_cast<size_t>(out.choice), n - 1);
  r.texts[c] += out.text;
  r.choice_logprobs[c].insert(r.choice_logprobs[c].end(), std::make_move_iterator(out.logprobs.begin()),
                              std::make_move_iterator(out.logprobs.end()));
  if (!out.finished) return true;
  text = r.texts[0];
  const GenerationStats stats = r.job->stats();
  const std::optional<ApiError> failure = r.job->failure();
  // The status (200) went out at admission; a failure after it (the engine threw, the server is
  // stopping) can only be reported in the body, in OpenAI's error shape.
  const CompletionRequest& request = r.job->request();
  std::vector<std::optional<std::vector<ToolCall>>> calls(n);
  std::vector<ChoiceOutput> choices;
  for (size_t i = 0; i < n; ++i) {
    if (!request.tools.empty()) calls[i] = parse_tool_calls(r.texts[i], request.tools);
    choices.push_back({r.texts[i], r.job->choice_reason(int(i)), request.options.logprobs ? &r.choice_logprobs[i] : nullptr,
                       calls[i] ? &*calls[i] : nullptr});
  }
  const std::string body = failure ? error_body(*failure) : completion_body(r.who, choices, stats);
  count_outcome(r);
  if (!send(sink, body)) return client_left(r);
  sink.done();
  log_finished(r, stats, failure);
  return true;
}

void release_generation(GenerationResponse& r) {
  // Idempotent: a finished job ignores it, a waiting or running one stops now.
  r.queue->cancel(r.job);
  count_outcome(r);  // a response that ended without its writer finishing (connection dropped)
}

}  // namespace kiln::server
