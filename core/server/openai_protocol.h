// The OpenAI wire format: request bodies in, response bodies and stream chunks out.
// Its two sources (openai_request.cpp, openai_response.cpp) are the only places that know JSON;
// everything they hand back is in the engine's own types.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kiln/types.h"
#include "server/content_parts.h"
#include "server/tool_calls.h"

namespace kiln::server {

// An error as OpenAI reports it: {"error": {"message", "type", "param", "code"}} with an HTTP status.
class ApiError : public std::runtime_error {
 public:
  ApiError(int status, std::string message, std::string type = "invalid_request_error",
           std::string param = {}, std::string code = {});
  int status() const { return status_; }
  const std::string& type() const { return type_; }
  const std::string& param() const { return param_; }  // "" is sent as null
  const std::string& code() const { return code_; }    // "" is sent as null

 private:
  int status_;
  std::string type_, param_, code_;
};

enum class Endpoint { ChatCompletions, Completions };

// A validated generation request, in engine terms.
struct CompletionRequest {
  Endpoint endpoint = Endpoint::ChatCompletions;
  std::vector<ChatMessage> messages;   // chat: in order, at least one
  std::string prompt;                  // completions: the raw prompt (the engine adds BOS)
  GenerateOptions options;             // `cancel` is filled in by the queue
  int max_tokens = 0;                  // 0: as many as the context leaves room for
  bool stream = false;
  bool include_usage = false;          // stream_options.include_usage
  std::string user;                    // OpenAI's `user` field: the client key for fair queueing
  int n = 1;                           // choices, generated one after another (choice i: seed + i)
  // Functions offered to the model (`tools`, unless tool_choice is "none"): the answer is checked
  // for a call. A forced call (tool_choice "required" or a named function) sets options.format.
  std::vector<ToolSpec> tools;
  // options.logprobs / options.top_logprobs: chat's `logprobs` + `top_logprobs` (0..20), or the
  // legacy completions' integer `logprobs` (0..5).
};

// Parses and validates a request body. Throws ApiError (400) naming the offending field in `param`.
// Unknown fields are ignored, as OpenAI's own server does; the `model` name is not checked.
// Chat messages' image_url parts become ChatMessage::images as `images` says (content_parts.h).
CompletionRequest parse_completion_request(Endpoint endpoint, std::string_view body, const ImageIntake& images = {});

// What every response of one request shares.
struct ResponseIdentity {
  Endpoint endpoint = Endpoint::ChatCompletions;
  std::string id;       // "chatcmpl-…" or "cmpl-…"
  int64_t created = 0;  // unix seconds
  std::string model;    // the served model's id
  int choice = 0;       // streaming: the choice (of n) the next chunk belongs to
};

// One of a response's n choices, whole.
struct ChoiceOutput {
  std::string text;
  StopReason reason = StopReason::None;
  const std::vector<TokenLogprob>* logprobs = nullptr;  // as completion_body takes them
  const std::vector<ToolCall>* calls = nullptr;
};

// "stop" (end of turn, end of sequence, a stop string) or "length" (max_tokens, context full).
std::string finish_reason(StopReason reason);

std::string error_body(const ApiError& error);
// The whole non-streaming response: chat.completion or text_completion, with usage.
// `logprobs`: the generated tokens' log-probabilities when the request asked for them, else nullptr
// (sent as null). Chat gives OpenAI's {"content": [{token, logprob, bytes, top_logprobs}]}, completions
// the legacy {tokens, token_logprobs, top_logprobs, text_offset}.
// `calls`: the answer was a function call (content null, tool_calls, finish_reason "tool_calls").
std::string completion_body(const ResponseIdentity& who, const std::string& text, const GenerationStats& stats,
                            const std::vector<TokenLogprob>* logprobs = nullptr,
                            const std::vector<ToolCall>* calls = nullptr);
// `sees_images`: "capabilities" lists "vision" (the model takes image_url parts).
std::string models_body(const std::string& model_id, int64_t created, bool sees_images = false);
// GET /health: {"status": "ok", "model": …, then each counter by name}.
std::string health_body(const std::string& model_id, const std::vector<std::pair<std::string, uint64_t>>& counters);
std::string model_body(const std::string& model_id, int64_t created, bool sees_images = false);

// The same for n choices, in order; `usage`: the prompt once, the completion tokens of them all.
std::string completion_body(const ResponseIdentity& who, const std::vector<ChoiceOutput>& choices,
                            const GenerationStats& usage);

// Server-sent events, each a complete "data: …\n\n" frame.
std::string sse_role_chunk(const ResponseIdentity& who, bool include_usage);  // chat only: role first
// `logprobs` as for completion_body, for the tokens since the last chunk; `text_offset` is where
// this chunk's text starts in the whole completion (the legacy shape counts from there).
std::string sse_text_chunk(const ResponseIdentity& who, std::string_view text, bool include_usage,
                           const std::vector<TokenLogprob>* logprobs = nullptr, size_t text_offset = 0);
std::string sse_finish_chunk(const ResponseIdentity& who, StopReason reason, bool include_usage,
                             bool tool_calls = false);
// The calls, one delta each with the whole arguments (index, id, type, function name and arguments).
std::string sse_tool_calls_chunk(const ResponseIdentity& who, const std::vector<ToolCall>& calls, bool include_usage);
std::string sse_usage_chunk(const ResponseIdentity& who, const GenerationStats& stats);  // choices: []
std::string sse_error(const ApiError& error);
inline constexpr std::string_view kSseDone = "data: [DONE]\n\n";

}  // namespace kiln::server
