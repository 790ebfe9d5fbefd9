// Writers for an admitted generation's response: they run on the HTTP thread, pull text from the job
// and notice a client that hung up (then the job is cancelled at once).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "server/metrics.h"
#include "server/openai_protocol.h"
#include "server/request_queue.h"

namespace httplib {
class DataSink;
}

namespace kiln::server {

struct GenerationResponse {
  std::shared_ptr<InferenceJob> job;
  std::shared_ptr<FairQueue> queue;
  ResponseIdentity who;
  std::string request_line;                              // "POST /v1/chat/completions", for the log
  std::function<void(const std::string&)> log;           // may be empty
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  std::shared_ptr<RequestMetrics> metrics;               // may be empty
  bool counted = false;                                  // the outcome went into metrics (once)
  std::vector<std::string> texts;                        // non-streamed: each choice's text
  std::vector<std::vector<TokenLogprob>> choice_logprobs;  // non-streamed: each choice's tokens, when asked
  std::vector<TokenLogprob> logprobs;                    // streamed with tools: the held choice's tokens
  size_t logprob_offset = 0;                             // streamed legacy logprobs: bytes so far
  std::string held_text;                                 // streamed with tools: the answer, until its end
                                                         // shows whether it is a call
};

// One call of httplib's chunked content provider: returns false to drop the connection.
// Server-sent events: role chunk (chat), text chunks, the finish chunk, usage if asked, "data: [DONE]".
bool write_event_stream(GenerationResponse& response, bool& started, httplib::DataSink& sink);
// The whole JSON body once the generation is done; until then only checks that the client is still there.
bool write_json_when_done(GenerationResponse& response, std::string& text, httplib::DataSink& sink);
// After the response is gone, for whatever reason: a job that has not finished is cancelled.
void release_generation(GenerationResponse& response);

}  // namespace kiln::server
