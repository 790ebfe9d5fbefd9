// Function calling for Gemma 3, which has no tool tokens. Kiln follows the JSON variant of Google's
// documented prompt for Gemma 3 (ai.google.dev/gemma/docs/capabilities/function-calling), which is
// also what Ollama-style Gemma 3 tool templates build on:
//  - the first user turn starts with an instruction and the function definitions as a JSON list;
//  - the model calls a function by answering only {"name": ..., "parameters": {...}} (a list of them
//    for several calls), optionally in a ``` fence;
//  - results come back in a user turn, each wrapped in ```tool_output fences (the doc's convention).
// An answer that is such an object naming a declared function becomes OpenAI's `tool_calls`.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::server {

struct ToolSpec {
  std::string name, description;
  std::string parameters;  // JSON Schema text ("{}" when the tool declared none)
};

struct ToolCall {
  std::string id;         // "call_…"
  std::string name;
  std::string arguments;  // JSON text of an object
};

// The block put in front of the first user message.
std::string tools_prompt(const std::vector<ToolSpec>& tools);
// How an earlier assistant call is written back into its model turn.
std::string render_tool_call(const std::string& name, const std::string& arguments);
// How a tool's result is written into the user turn that follows.
std::string render_tool_result(const std::string& content);
// A JSON Schema for a forced call: to `name` (or, when empty, any of `tools`). With several candidates
// the parameters are any object: the grammar has no anyOf to tie them to the name.
std::string forced_call_schema(const std::vector<ToolSpec>& tools, const std::string& name);
// The calls in a model's answer, or nullopt when it is plain text.
std::optional<std::vector<ToolCall>> parse_tool_calls(std::string_view text, const std::vector<ToolSpec>& tools);

}  // namespace kiln::server
