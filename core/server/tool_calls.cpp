#include "server/tool_calls.h"

#include <atomic>
#include <nlohmann/json.hpp>

namespace kiln::server {

using nlohmann::json;

namespace {

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// "```json\n…\n```" or "```tool_code\n…\n```" around the call: the body.
std::string_view unfence(std::string_view s) {
  s = trim(s);
  if (s.size() < 6 || s.substr(0, 3) != "```" || s.substr(s.size() - 3) != "```") return s;
  s = s.substr(3, s.size() - 6);
  const size_t line = s.find('\n');
  if (line != std::string_view::npos && s.substr(0, line).find_first_of("{[") == std::string_view::npos)
    s.remove_prefix(line + 1);  // the fence's language tag
  return trim(s);
}

std::string next_call_id() {
  static std::atomic<uint64_t> counter{0};
  char id[32];
  std::snprintf(id, sizeof id, "call_%016llx", static_cast<unsigned long long>(++counter * 0x9E3779B97F4A7C15ull));
  return id;
}

}  // namespace

std::string tools_prompt(const std::vector<ToolSpec>& tools) {
  json list = json::array();
  for (const ToolSpec& t : tools) {
    json entry = {{"name", t.name}};
    if (!t.description.empty()) entry["description"] = t.description;
    entry["parameters"] = json::parse(t.parameters);
    list.push_back(std::move(entry));
  }
  return "You have access to functions. If you decide to invoke any of the function(s), you MUST put it in "
         "the format of\n{\"name\": function name, \"parameters\": dictionary of argument name and its value}\n"
         "You SHOULD NOT include any other text in the response if you call a function\n" +
         list.dump(2) + "\n\n";
}

std::string render_tool_call(const std::string& name, const std::string& arguments) {
  json args = json::object();
  try {
    args = json::parse(arguments.empty() ? "{}" : arguments);
  } catch (const json::exception&) {
    args = arguments;  // kept as the client sent it
  }
  return dump({{"name", name}, {"parameters", args}});
}

std::string render_tool_result(const std::string& content) { return "```tool_output\n" + content + "\n```"; }

std::string forced_call_schema(const std::vector<ToolSpec>& tools, const std::string& name) {
  json names = json::array();
  json parameters = {{"type", "object"}};
  for (const ToolSpec& t : tools)
    if (name.empty() || t.name == name) names.push_back(t.name);
  for (const ToolSpec& t : tools)  // one candidate: its own parameters (no anyOf to choose by name)
    if (names.size() == 1 && t.name == names[0].get<std::string>()) parameters = json::parse(t.parameters);
  if (parameters.is_object() && parameters.empty()) parameters = {{"type", "object"}};
  return dump({{"type", "object"},
               {"properties", {{"name", {{"enum", names}}}, {"parameters", parameters}}},
               {"required", {"name", "parameters"}},
               {"additionalProperties", false}});
}

std::optional<std::vector<ToolCall>> parse_tool_calls(std::string_view text, const std::vector<ToolSpec>& tools) {
  const std::string_view body = unfence(text);
  if (body.empty() || (body.front() != '{' && body.front() != '[')) return std::nullopt;
  json doc;
  try {
    doc = json::parse(body.begin(), body.end());
  } catch (const json::exception&) {
    return std::nullopt;
  }
  if (doc.is_object()) doc = json::array({doc});
  if (!doc.is_array() || doc.empty()) return std::nullopt;
  std::vector<ToolCall> calls;
  for (const json& call : doc) {
    if (!call.is_object() || !call.contains("name") || !call["name"].is_string()) return std::nullopt;
    const std::string name = call["name"].get<std::string>();
    bool declared = false;
    for (const ToolSpec& t : tools) declared = declared || t.name == name;
    if (!declared) return std::nullopt;
    const json& args = call.contains("parameters") ? call["parameters"] : call.contains("arguments") ? call["arguments"] : json::object();
    if (!args.is_object()) return std::nullopt;
    calls.push_back({next_call_id(), name, dump(args)});
  }
  return calls;
}

}  // namespace kiln::server
