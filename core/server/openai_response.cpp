// OpenAI response bodies and stream chunks out, from the engine's types.
#include "server/openai_protocol.h"

#include <cmath>
#include <nlohmann/json.hpp>

namespace kiln::server {

using nlohmann::json;

namespace {

// JSON has no -inf; OpenAI reports impossible tokens as -9999.
double wire_logprob(float logprob) { return std::isfinite(logprob) ? logprob : -9999.0; }

json byte_values(const std::string& bytes) {
  json out = json::array();
  for (unsigned char c : bytes) out.push_back(int(c));
  return out;
}

json chat_logprobs(const std::vector<TokenLogprob>& tokens) {
  json content = json::array();
  for (const TokenLogprob& t : tokens) {
    json top = json::array();
    for (const TokenAlternative& a : t.top)
      top.push_back({{"token", a.bytes}, {"logprob", wire_logprob(a.logprob)}, {"bytes", byte_values(a.bytes)}});
    content.push_back({{"token", t.bytes},
                       {"logprob", wire_logprob(t.logprob)},
                       {"bytes", byte_values(t.bytes)},
                       {"top_logprobs", std::move(top)}});
  }
  return {{"content", std::move(content)}, {"refusal", nullptr}};
}

// The legacy shape; text_offset counts bytes of the completion's text, from `offset` on.
json legacy_logprobs(const std::vector<TokenLogprob>& tokens, size_t offset) {
  json strings = json::array(), values = json::array(), tops = json::array(), offsets = json::array();
  for (const TokenLogprob& t : tokens) {
    strings.push_back(t.bytes);
    values.push_back(wire_logprob(t.logprob));
    json top = json::object();
    for (const TokenAlternative& a : t.top) top[a.bytes] = wire_logprob(a.logprob);
    tops.push_back(std::move(top));
    offsets.push_back(offset);
    offset += t.bytes.size();
  }
  return {{"tokens", std::move(strings)},
          {"token_logprobs", std::move(values)},
          {"top_logprobs", std::move(tops)},
          {"text_offset", std::move(offsets)}};
}

json logprobs_json(Endpoint endpoint, const std::vector<TokenLogprob>* tokens, size_t offset) {
  if (!tokens) return nullptr;
  return endpoint == Endpoint::ChatCompletions ? chat_logprobs(*tokens) : legacy_logprobs(*tokens, offset);
}

json tool_calls_json(const std::vector<ToolCall>& calls, bool with_index) {
  json out = json::array();
  for (size_t i = 0; i < calls.size(); ++i) {
    json call = {{"id", calls[i].id}, {"type", "function"},
                 {"function", {{"name", calls[i].name}, {"arguments", calls[i].arguments}}}};
    if (with_index) call["index"] = i;
    out.push_back(std::move(call));
  }
  return out;
}

json usage_json(const GenerationStats& stats) {
  return {{"prompt_tokens", stats.prompt_tokens},
          {"completion_tokens", stats.generated_tokens},
          {"total_tokens", stats.prompt_tokens + stats.generated_tokens},
          {"prompt_tokens_details", {{"cached_tokens", stats.cached_prompt_tokens}}}};
}

json envelope(const ResponseIdentity& who, bool chunk) {
  const bool chat = who.endpoint == Endpoint::ChatCompletions;
  return {{"id", who.id},
          {"object", chat ? (chunk ? "chat.completion.chunk" : "chat.completion") : "text_completion"},
          {"created", who.created},
          {"model", who.model},
          {"system_fingerprint", nullptr}};
}

// Text from the model may, in principle, hold broken UTF-8; replace it rather than fail the response.
std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }
std::string sse(const json& j) { return "data: " + dump(j) + "\n\n"; }

json stream_choice(const ResponseIdentity& who, json delta_or_text, const json& finish, json logprobs = nullptr) {
  if (who.endpoint == Endpoint::ChatCompletions)
    return {{"index", who.choice}, {"delta", std::move(delta_or_text)}, {"logprobs", std::move(logprobs)}, {"finish_reason", finish}};
  return {{"index", who.choice}, {"text", std::move(delta_or_text)}, {"logprobs", std::move(logprobs)}, {"finish_reason", finish}};
}

json chunk_with(const ResponseIdentity& who, json choice, bool include_usage) {
  json j = envelope(who, true);
  j["choices"] = json::array({std::move(choice)});
  if (include_usage) j["usage"] = nullptr;  // as OpenAI: null on every chunk but the last
  return j;
}

}  // namespace

std::string finish_reason(StopReason reason) {
  switch (reason) {
    case StopReason::MaxTokens:
    case StopReason::ContextFull: return "length";
    default: return "stop";
  }
}

std::string error_body(const ApiError& error) {
  auto or_null = [](const std::string& s) { return s.empty() ? json(nullptr) : json(s); };
  return dump({{"error",
                {{"message", error.what()},
                 {"type", error.type()},
                 {"param", or_null(error.param())},
                 {"code", or_null(error.code())}}}});
}

std::string completion_body(const ResponseIdentity& who, const std::string& text, const GenerationStats& stats,
                            const std::vector<TokenLogprob>* logprobs, const std::vector<ToolCall>* calls) {
  return completion_body(who, {{text, stats.stop_reason, logprobs, calls}}, stats);
}

std::string completion_body(const ResponseIdentity& who, const std::vector<ChoiceOutput>& choices,
                            const GenerationStats& usage) {
  json j = envelope(who, false);
  j["choices"] = json::array();
  for (size_t i = 0; i < choices.size(); ++i) {
    const ChoiceOutput& c = choices[i];
    const std::string reason = c.calls ? "tool_calls" : finish_reason(c.reason);
    if (who.endpoint == Endpoint::ChatCompletions) {
      json message = {{"role", "assistant"}, {"content", c.calls ? json(nullptr) : json(c.text)}, {"refusal", nullptr}};
      if (c.calls) message["tool_calls"] = tool_calls_json(*c.calls, false);
      j["choices"].push_back({{"index", i},
                              {"message", std::move(message)},
                              {"logprobs", logprobs_json(who.endpoint, c.logprobs, 0)},
                              {"finish_reason", reason}});
    } else {
      j["choices"].push_back(
          {{"index", i}, {"text", c.text}, {"logprobs", logprobs_json(who.endpoint, c.logprobs, 0)}, {"finish_reason", reason}});
    }
  }
  j["usage"] = usage_json(usage);
  return dump(j);
}

std::string model_body(const std::string& model_id, int64_t created, bool sees_images) {
  // "capabilities" is Kiln's (and Ollama's) hint; OpenAI clients ignore fields they do not know.
  json capabilities = json::array({"completion", "chat"});
  if (sees_images) capabilities.push_back("vision");
  return dump({{"id", model_id}, {"object", "model"}, {"created", created}, {"owned_by", "kiln"},
               {"capabilities", capabilities}});
}

std::string models_body(const std::string& model_id, int64_t created, bool sees_images) {
  return dump({{"object", "list"}, {"data", json::array({json::parse(model_body(model_id, created, sees_images))})}});
}

std::string health_body(const std::string& model_id, const std::vector<std::pair<std::string, uint64_t>>& counters) {
  json j = {{"status", "ok"}, {"model", model_id}};
  for (const auto& [name, value] : counters) j[name] = value;
  return dump(j);
}

std::string sse_role_chunk(const ResponseIdentity& who, bool include_usage) {
  return sse(chunk_with(who, stream_choice(who, {{"role", "assistant"}, {"content", ""}}, nullptr), include_usage));
}

std::string sse_text_chunk(const ResponseIdentity& who, std::string_view text, bool include_usage,
                           const std::vector<TokenLogprob>* logprobs, size_t text_offset) {
  json piece = who.endpoint == Endpoint::ChatCompletions ? json{{"content", std::string(text)}} : json(std::string(text));
  return sse(chunk_with(who, stream_choice(who, std::move(piece), nullptr, logprobs_json(who.endpoint, logprobs, text_offset)),
                        include_usage));
}

std::string sse_finish_chunk(const ResponseIdentity& who, StopReason reason, bool include_usage, bool tool_calls) {
  json empty = who.endpoint == Endpoint::ChatCompletions ? json::object() : json("");
  return sse(chunk_with(who, stream_choice(who, std::move(empty), tool_calls ? "tool_calls" : finish_reason(reason)),
                        include_usage));
}

std::string sse_tool_calls_chunk(const ResponseIdentity& who, const std::vector<ToolCall>& calls, bool include_usage) {
  return sse(chunk_with(who, stream_choice(who, {{"tool_calls", tool_calls_json(calls, true)}}, nullptr), include_usage));
}

std::string sse_usage_chunk(const ResponseIdentity& who, const GenerationStats& stats) {
  json j = envelope(who, true);
  j["choices"] = json::array();
  j["usage"] = usage_json(stats);
  return sse(j);
}

std::string sse_error(const ApiError& error) { return "data: " + error_body(error) + "\n\n"; }

}  // namespace kiln::server
