// A client for OpenAI-compatible chat endpoints (vLLM, SGLang, llama.cpp's server, Ollama, another
// Kiln's `kiln serve`): the model list from GET /v1/models and streamed chat completions from
// POST /v1/chat/completions (server-sent chunks of chat.completion.chunk, then "[DONE]").
// Blocking calls, one request each; stop with GenerateOptions::cancel (the connection is closed).
#pragma once

#include <string>
#include <vector>

#include "kiln/types.h"

namespace kiln::remote {

struct Endpoint {
  std::string base_url;  // as the user typed it: "http://host:8000", "host:8000/v1", ".../v1/"
  std::string api_key;   // "" = no Authorization header
};

// The API root requests go under: a scheme is added when missing (http://), a trailing '/' and a
// pasted "/chat/completions" or "/models" are dropped, and "/v1" is added when the URL has no path.
// Throws RemoteError(BadUrl) for what cannot be an http(s) URL.
std::string api_root(const std::string& base_url);

// What went wrong, in kinds a caller can word for its users; what() is a plain English sentence.
class RemoteError : public Error {
 public:
  enum class Kind {
    BadUrl,        // not an http(s) URL
    Unreachable,   // no connection (refused, unknown host, timed out, TLS failed)
    Unauthorized,  // 401 / 403: the API key is missing or wrong
    NotFound,      // 404: no such path (a wrong base URL) or no such model
    ServerError,   // any other refusal, with the server's own message in detail()
    BadResponse,   // an answer that is not the JSON / event stream the API defines
    EndedEarly,    // the stream stopped before the answer's end (no finish_reason nor [DONE])
  };
  RemoteError(Kind kind, std::string message, long status = 0, std::string detail = {})
      : Error(std::move(message)), kind_(kind), status_(status), detail_(std::move(detail)) {}
  Kind kind() const { return kind_; }
  long status() const { return status_; }            // the HTTP status; 0 when none came
  const std::string& detail() const { return detail_; }  // the server's message or curl's, raw

 private:
  Kind kind_;
  long status_;
  std::string detail_;
};

struct RemoteModel {
  std::string id;        // what requests name in "model"
  std::string owned_by;  // "" when the server does not say
};

// GET <root>/models. Throws RemoteError.
std::vector<RemoteModel> list_models(const Endpoint& endpoint, std::stop_token cancel = {});

// POST <root>/chat/completions with "stream": true, `on_text` getting each piece of the answer.
// The request carries what `options` sets: max_tokens (when below INT_MAX), stop strings and the
// sampling fields chosen (temperature, top_p, seed; top_k, min_p, repeat_penalty as vLLM, llama.cpp,
// SGLang, Ollama and Kiln accept them). Stats come from the stream's usage chunk when the server
// sends one (stream_options.include_usage), else from counting chunks. A stop through
// options.cancel or on_text returning false closes the connection and returns with
// StopReason::Cancelled. Throws RemoteError.
GenerationStats chat(const Endpoint& endpoint, const std::string& model, const std::vector<ChatMessage>& messages,
                     const GenerateOptions& options, const TokenCallback& on_text);

// The body chat() sends, for tests and for logs.
std::string chat_request_body(const std::string& model, const std::vector<ChatMessage>& messages,
                              const GenerateOptions& options);

}  // namespace kiln::remote
