// OpenAI request bodies in, validated and in the engine's terms (nlohmann-json stays inside the
// server's protocol files: this one and openai_response.cpp).
#include "server/openai_protocol.h"

#include <cmath>
#include <limits>
#include <optional>
#include <nlohmann/json.hpp>

#include "grammar/json_schema.h"
#include "server/content_parts.h"

namespace kiln::server {

using nlohmann::json;

ApiError::ApiError(int status, std::string message, std::string type, std::string param, std::string code)
    : std::runtime_error(std::move(message)),
      status_(status), type_(std::move(type)), param_(std::move(param)), code_(std::move(code)) {}

namespace {

// Deeper nesting than any real request needs; refusing it keeps a hostile body from costing
// hundreds of megabytes of nested json nodes.
constexpr int kMaxJsonDepth = 32;
constexpr size_t kMaxStopStrings = 4;  // as OpenAI
constexpr int kMaxChoices = 16;        // n: each choice is a whole generation, one after another

struct TooDeep {};

ApiError invalid(const std::string& param, const std::string& message) {
  return ApiError(400, message, "invalid_request_error", param);
}

json parse_json(std::string_view body) {
  if (body.empty()) throw ApiError(400, "The request body is empty; expected a JSON object.");
  try {
    json::parser_callback_t limit_depth = [](int depth, json::parse_event_t, json&) {
      if (depth > kMaxJsonDepth) throw TooDeep{};
      return true;
    };
    json doc = json::parse(body.begin(), body.end(), limit_depth);
    if (!doc.is_object()) throw ApiError(400, "The request body must be a JSON object.");
    return doc;
  } catch (const TooDeep&) {
    throw ApiError(400, "The request body nests JSON deeper than " + std::to_string(kMaxJsonDepth) + " levels.");
  } catch (const json::parse_error& e) {
    // nlohmann's message starts with "[json.exception.parse_error.101] "; the rest says where and why.
    std::string what = e.what();
    if (auto pos = what.find("] "); pos != std::string::npos) what = what.substr(pos + 2);
    throw ApiError(400, "The request body is not valid JSON: " + what);
  } catch (const json::exception& e) {  // a number past double's range ({"temperature": 1e999}), say
    std::string what = e.what();
    if (auto pos = what.find("] "); pos != std::string::npos) what = what.substr(pos + 2);
    throw ApiError(400, "The request body cannot be read: " + what);
  }
}

// A field that is absent or null counts as not given.
const json* field(const json& doc, const char* name) {
  auto it = doc.find(name);
  if (it == doc.end() || it->is_null()) return nullptr;
  return &*it;
}

// A float field within [lo, hi]; nullopt when the request leaves it out.
std::optional<float> number_in(const json& doc, const char* name, double lo, double hi) {
  const json* v = field(doc, name);
  if (!v) return std::nullopt;
  if (!v->is_number()) throw invalid(name, std::string("'") + name + "' must be a number.");
  double x = v->get<double>();
  if (!(x >= lo && x <= hi))
    throw invalid(name, std::string("'") + name + "' must be between " + json(lo).dump() + " and " +
                            json(hi).dump() + "; got " + v->dump() + ".");
  return static_cast<float>(x);
}

// Integers may arrive as 5 or 5.0; anything else with a fraction is refused.
std::optional<int64_t> integer(const json& doc, const char* name) {
  const json* v = field(doc, name);
  if (!v) return std::nullopt;
  if (v->is_number_integer()) return v->get<int64_t>();
  if (v->is_number_float()) {
    double x = v->get<double>();
    if (std::floor(x) == x && std::fabs(x) < 9.0e15) return static_cast<int64_t>(x);
  }
  throw invalid(name, std::string("'") + name + "' must be an integer.");
}

bool boolean(const json& doc, const char* name, bool fallback) {
  const json* v = field(doc, name);
  if (!v) return fallback;
  if (!v->is_boolean()) throw invalid(name, std::string("'") + name + "' must be true or false.");
  return v->get<bool>();
}

std::string string_field(const json& doc, const char* name) {
  const json* v = field(doc, name);
  if (!v) return {};
  if (!v->is_string()) throw invalid(name, std::string("'") + name + "' must be a string.");
  return v->get<std::string>();
}

Role parse_role(const json& message, const std::string& where) {
  const json* role = field(message, "role");
  if (!role || !role->is_string()) throw invalid(where + ".role", "Each message needs a 'role' string.");
  const std::string r = role->get<std::string>();
  if (r == "system" || r == "developer") return Role::System;  // OpenAI treats "developer" as the new "system"
  if (r == "user") return Role::User;
  if (r == "assistant") return Role::Assistant;
  if (r == "tool") return Role::User;  // a tool's result reaches Gemma in a user turn (tool_calls.h)
  throw invalid(where + ".role", "Unsupported role '" + r + "'; Kiln serves the roles system, user, assistant and tool.");
}

std::vector<ChatMessage> parse_messages(const json& doc, const ImageIntake& intake) {
  const json* messages = field(doc, "messages");
  if (!messages) throw invalid("messages", "'messages' is required.");
  if (!messages->is_array() || messages->empty())
    throw invalid("messages", "'messages' must be a non-empty array.");
  std::vector<ChatMessage> out;
  out.reserve(messages->size());
  bool after_tool = false;  // the message before was a tool's result
  for (size_t i = 0; i < messages->size(); ++i) {
    const std::string where = "messages[" + std::to_string(i) + "]";
    const json& m = (*messages)[i];
    if (!m.is_object()) throw invalid(where, "Each message must be an object.");
    const Role role = parse_role(m, where);
    const json* content_field = field(m, "content");
    MessageContent parsed = content_field ? parse_message_content(*content_field, where, intake) : MessageContent{};
    std::string content = std::move(parsed.text);
    const bool tool_result = string_field(m, "role") == "tool";
    // Gemma 3 sees images in user turns only (its chat format has no place for them elsewhere).
    if (!parsed.images.empty() && (role != Role::User || tool_result))
      throw invalid(parsed.images.front().name, "Images go in user messages only; " + where + " is a '" +
                                                    string_field(m, "role") + "' message.");
    if (tool_result) content = render_tool_result(content);
    if (const json* calls = field(m, "tool_calls"); calls && role == Role::Assistant) {
      if (!calls->is_array()) throw invalid(where + ".tool_calls", "'tool_calls' must be an array.");
      for (size_t c = 0; c < calls->size(); ++c) {
        const json& call = (*calls)[c];
        const json* function = call.is_object() ? field(call, "function") : nullptr;
        if (!function || !function->is_object() || string_field(*function, "name").empty())
          throw invalid(where + ".tool_calls[" + std::to_string(c) + "]", "Each tool call needs a function with a name.");
        content += (content.empty() ? "" : "\n") +
                   render_tool_call(string_field(*function, "name"), string_field(*function, "arguments"));
      }
    }
    // Tool results, and a user message after them, share one user turn: Gemma's turns alternate.
    const bool joins = role == Role::User && !out.empty() && out.back().role == Role::User && (tool_result || after_tool);
    after_tool = tool_result;
    if (joins) {
      out.back().content += "\n" + content;
      for (Image& image : parsed.images) out.back().images.push_back(std::move(image));
      continue;
    }
    out.push_back({role, std::move(content), std::move(parsed.images)});
  }
  return out;
}

// `tools` and `tool_choice`. The tool definitions go in front of the first user message.
void parse_tools(const json& doc, CompletionRequest& request) {
  const json* tools = field(doc, "tools");
  const json* choice = field(doc, "tool_choice");
  if (!tools) {
    if (choice && !(choice->is_string() && (choice->get<std::string>() == "none" || choice->get<std::string>() == "auto")))
      throw invalid("tool_choice", "'tool_choice' needs 'tools'.");
    return;
  }
  if (request.endpoint != Endpoint::ChatCompletions) throw invalid("tools", "'tools' is for /v1/chat/completions.");
  if (!tools->is_array()) throw invalid("tools", "'tools' must be an array.");
  if (tools->empty()) return;  // as no tools
  std::vector<ToolSpec> specs;
  for (size_t i = 0; i < tools->size(); ++i) {
    const std::string where = "tools[" + std::to_string(i) + "]";
    const json& tool = (*tools)[i];
    if (!tool.is_object() || string_field(tool, "type") != "function")
      throw invalid(where + ".type", "Each tool must be {\"type\": \"function\", \"function\": {...}}.");
    const json* function = field(tool, "function");
    if (!function || !function->is_object() || string_field(*function, "name").empty())
      throw invalid(where + ".function.name", "Each function needs a 'name'.");
    const json* parameters = field(*function, "parameters");
    if (parameters && !parameters->is_object())
      throw invalid(where + ".function.parameters", "'parameters' must be a JSON Schema object.");
    specs.push_back({string_field(*function, "name"), string_field(*function, "description"),
                     parameters ? parameters->dump() : "{}"});
  }
  std::string forced;  // the function a call must name; "*" any
  if (choice) {
    if (choice->is_string()) {
      const std::string c = choice->get<std::string>();
      if (c == "none") return;  // tools declared, none offered
      if (c == "required") forced = "*";
      else if (c != "auto") throw invalid("tool_choice", "'tool_choice' must be 'none', 'auto', 'required' or a function.");
    } else {
      const json* function = choice->is_object() ? field(*choice, "function") : nullptr;
      forced = function && function->is_object() ? string_field(*function, "name") : "";
      bool declared = false;
      for (const ToolSpec& t : specs) declared = declared || t.name == forced;
      if (!declared) throw invalid("tool_choice", "'tool_choice' must name a function declared in 'tools'.");
    }
  }
  request.tools = std::move(specs);
  for (ChatMessage& m : request.messages)
    if (m.role == Role::User) {
      m.content = tools_prompt(request.tools) + m.content;
      break;
    }
  if (forced.empty()) return;
  request.options.format = GenerateOptions::Format::JsonSchema;
  request.options.json_schema = forced_call_schema(request.tools, forced == "*" ? "" : forced);
  try {
    grammar::JsonSchema::compile(request.options.json_schema);
  } catch (const Error& e) {
    throw invalid("tools", std::string("The forced call's parameters cannot be enforced: ") + e.what());
  }
}

std::string parse_prompt(const json& doc) {
  const json* prompt = field(doc, "prompt");
  if (!prompt) throw invalid("prompt", "'prompt' is required.");
  if (prompt->is_string()) return prompt->get<std::string>();
  if (prompt->is_array() && prompt->size() == 1 && (*prompt)[0].is_string()) return (*prompt)[0].get<std::string>();
  throw invalid("prompt", "'prompt' must be a string (or an array of exactly one string).");
}

std::vector<std::string> parse_stop(const json& doc) {
  const json* stop = field(doc, "stop");
  if (!stop) return {};
  std::vector<std::string> out;
  auto add = [&](const json& s) {
    if (!s.is_string()) throw invalid("stop", "'stop' must be a string or an array of strings.");
    if (!s.get_ref<const std::string&>().empty()) out.push_back(s.get<std::string>());  // "" could never match
  };
  if (stop->is_array()) {
    if (stop->size() > kMaxStopStrings)
      throw invalid("stop", "'stop' takes at most " + std::to_string(kMaxStopStrings) + " strings.");
    for (const json& s : *stop) add(s);
  } else {
    add(*stop);
  }
  return out;
}

void refuse_unsupported(const json& doc, Endpoint endpoint) {
  if (endpoint == Endpoint::Completions) {
    if (boolean(doc, "echo", false)) throw invalid("echo", "'echo' is not supported by this server.");
    if (!string_field(doc, "suffix").empty()) throw invalid("suffix", "'suffix' is not supported by this server.");
  }
}

// Chat: `logprobs` true/false and `top_logprobs` 0..20 (which needs logprobs on, as OpenAI says).
// Completions (legacy): `logprobs` an integer 0..5, the number of alternatives; null is off.
void parse_logprobs(const json& doc, Endpoint endpoint, GenerateOptions& options) {
  if (endpoint == Endpoint::ChatCompletions) {
    options.logprobs = boolean(doc, "logprobs", false);
    if (auto top = integer(doc, "top_logprobs")) {
      if (*top < 0 || *top > 20) throw invalid("top_logprobs", "'top_logprobs' must be between 0 and 20.");
      if (!options.logprobs) throw invalid("top_logprobs", "'top_logprobs' needs 'logprobs' set to true.");
      options.top_logprobs = static_cast<int>(*top);
    }
    return;
  }
  if (const json* lp = field(doc, "logprobs"); lp && lp->is_boolean())
    throw invalid("logprobs", "'logprobs' on /v1/completions is an integer between 0 and 5.");
  if (auto top = integer(doc, "logprobs")) {
    if (*top < 0 || *top > 5) throw invalid("logprobs", "'logprobs' must be between 0 and 5.");
    options.logprobs = true;
    options.top_logprobs = static_cast<int>(*top);
  }
}

// {"type": "text" | "json_object" | "json_schema", "json_schema": {"name", "schema", "strict"}}.
// A schema is compiled here, so one the grammar cannot enforce is a 400 naming the keyword.
void parse_response_format(const json& doc, GenerateOptions& options) {
  const json* format = field(doc, "response_format");
  if (!format) return;
  if (!format->is_object()) throw invalid("response_format", "'response_format' must be an object.");
  const std::string type = string_field(*format, "type");
  if (type == "text") return;
  if (type == "json_object") {
    options.format = GenerateOptions::Format::JsonObject;
    return;
  }
  if (type != "json_schema")
    throw invalid("response_format.type", "'response_format.type' must be 'text', 'json_object' or 'json_schema'.");
  const json* spec = field(*format, "json_schema");
  if (!spec || !spec->is_object())
    throw invalid("response_format.json_schema", "'response_format.json_schema' must be an object with a 'schema'.");
  const json* schema = field(*spec, "schema");
  if (!schema || !(schema->is_object() || schema->is_boolean()))
    throw invalid("response_format.json_schema.schema", "'response_format.json_schema.schema' must be a JSON Schema object.");
  options.format = GenerateOptions::Format::JsonSchema;
  options.json_schema = schema->dump();
  try {
    grammar::JsonSchema::compile(options.json_schema);
  } catch (const Error& e) {
    throw invalid("response_format.json_schema.schema", e.what());
  }
}

}  // namespace

CompletionRequest parse_completion_request(Endpoint endpoint, std::string_view body, const ImageIntake& images) {
  const json doc = parse_json(body);
  CompletionRequest request;
  request.endpoint = endpoint;
  if (const json* model = field(doc, "model"); model && !model->is_string())
    throw invalid("model", "'model' must be a string.");
  refuse_unsupported(doc, endpoint);

  if (endpoint == Endpoint::ChatCompletions)
    request.messages = parse_messages(doc, images);
  else
    request.prompt = parse_prompt(doc);

  request.stream = boolean(doc, "stream", false);
  if (const json* so = field(doc, "stream_options")) {
    if (!so->is_object()) throw invalid("stream_options", "'stream_options' must be an object.");
    request.include_usage = boolean(*so, "include_usage", false);
  }

  // max_completion_tokens is OpenAI's newer name for max_tokens; either may come.
  std::optional<int64_t> max_tokens = integer(doc, "max_completion_tokens");
  const char* max_name = "max_completion_tokens";
  if (!max_tokens) { max_tokens = integer(doc, "max_tokens"); max_name = "max_tokens"; }
  if (max_tokens) {
    if (*max_tokens < 1) throw invalid(max_name, std::string("'") + max_name + "' must be at least 1.");
    request.max_tokens = static_cast<int>(std::min<int64_t>(*max_tokens, std::numeric_limits<int>::max()));
  } else if (endpoint == Endpoint::Completions) {
    request.max_tokens = 16;  // OpenAI's default for the legacy completions endpoint
  }

  SamplingChoice& s = request.options.sampling;  // fields not given take the model's defaults
  s.temperature = number_in(doc, "temperature", 0.0, 2.0);
  s.top_p = number_in(doc, "top_p", 0.0, 1.0);
  s.min_p = number_in(doc, "min_p", 0.0, 1.0);
  s.repeat_penalty = number_in(doc, "repeat_penalty", 0.01, 10.0);
  if (auto top_k = integer(doc, "top_k")) {
    if (*top_k < 0 || *top_k > 1'000'000) throw invalid("top_k", "'top_k' must be between 0 and 1000000.");
    s.top_k = static_cast<int>(*top_k);
  }
  if (auto seed = integer(doc, "seed")) {
    // The engine reads seed 0 as "random"; a client that asks for seed 0 wants it fixed.
    s.seed = *seed == 0 ? 0x5EEDull : static_cast<uint64_t>(*seed);
  }
  request.options.stop = parse_stop(doc);
  parse_logprobs(doc, endpoint, request.options);
  parse_response_format(doc, request.options);
  parse_tools(doc, request);
  request.user = string_field(doc, "user");
  if (auto n = integer(doc, "n")) {
    if (*n < 1 || *n > kMaxChoices) throw invalid("n", "'n' must be between 1 and " + std::to_string(kMaxChoices) + ".");
    request.n = static_cast<int>(*n);
  }
  return request;
}

}  // namespace kiln::server
