#include "grammar/json_schema.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

#include "kiln/types.h"

namespace kiln::grammar {

using nlohmann::json;

namespace {

constexpr int kMaxSchemaDepth = 24;
constexpr size_t kMaxProperties = 64;  // the matcher keeps the keys seen in one 64-bit mask

// Keywords that change nothing a matcher must enforce.
const std::set<std::string> kIgnored = {"title", "description", "$schema", "$id", "default", "examples", "$comment"};

Error bad(const std::string& where, const std::string& what) {
  return Error("response_format json_schema" + (where.empty() ? std::string() : " at " + where) + ": " + what);
}

int64_t count_of(const json& value, const std::string& where, const char* key) {
  if (!value.is_number_integer() || value.get<int64_t>() < 0)
    throw bad(where, std::string("'") + key + "' must be a non-negative integer");
  return value.get<int64_t>();
}

double number_of(const json& value, const std::string& where, const char* key) {
  if (!value.is_number()) throw bad(where, std::string("'") + key + "' must be a number");
  return value.get<double>();
}

class Compiler {
 public:
  explicit Compiler(JsonSchema& out) : out_(out) {}

  int compile(const json& schema, const std::string& where, int depth) {
    if (depth > kMaxSchemaDepth) throw bad(where, "nests deeper than " + std::to_string(kMaxSchemaDepth) + " levels");
    if (schema.is_boolean()) {
      if (schema.get<bool>()) return JsonSchema::kAny;
      throw bad(where, "the schema 'false' accepts nothing");
    }
    if (!schema.is_object()) throw bad(where, "a schema must be an object");
    SchemaNode node;
    for (auto it = schema.begin(); it != schema.end(); ++it) {
      static const std::set<std::string> known = {"type", "properties", "required", "additionalProperties", "items",
                                                  "enum", "const", "minimum", "maximum", "minLength", "maxLength",
                                                  "minItems", "maxItems"};
      if (!known.count(it.key()) && !kIgnored.count(it.key()))
        throw bad(where, "unsupported keyword '" + it.key() + "'");
    }
    // enum / const: the values themselves, whatever else is said.
    if (schema.contains("enum") || schema.contains("const")) {
      node.type = SchemaNode::Type::Literals;
      if (schema.contains("const")) node.literals.push_back(schema["const"].dump());
      if (schema.contains("enum")) {
        const json& values = schema["enum"];
        if (!values.is_array() || values.empty()) throw bad(where, "'enum' must be a non-empty array");
        for (const json& v : values) node.literals.push_back(v.dump());
      }
      return add(std::move(node));
    }
    std::string type;
    if (schema.contains("type")) {
      if (!schema["type"].is_string()) throw bad(where, "unsupported keyword 'type' with a list of types");
      type = schema["type"].get<std::string>();
    } else if (schema.contains("properties") || schema.contains("additionalProperties") || schema.contains("required")) {
      type = "object";
    } else if (schema.contains("items") || schema.contains("minItems") || schema.contains("maxItems")) {
      type = "array";
    } else if (schema.contains("minLength") || schema.contains("maxLength")) {
      type = "string";
    } else if (schema.contains("minimum") || schema.contains("maximum")) {
      type = "number";
    } else {
      return JsonSchema::kAny;
    }
    if (type == "boolean") return JsonSchema::kBoolean;
    if (type == "null") return JsonSchema::kNull;
    if (type == "object") return object(schema, where, depth, std::move(node));
    if (type == "array") {
      node.type = SchemaNode::Type::Array;
      if (schema.contains("items")) node.items = compile(schema["items"], where + ".items", depth + 1);
      if (schema.contains("minItems")) node.min_items = count_of(schema["minItems"], where, "minItems");
      if (schema.contains("maxItems")) node.max_items = count_of(schema["maxItems"], where, "maxItems");
      if (node.max_items >= 0 && node.max_items < node.min_items) throw bad(where, "'maxItems' is below 'minItems'");
      return add(std::move(node));
    }
    if (type == "string") {
      node.type = SchemaNode::Type::String;
      if (schema.contains("minLength")) node.min_length = count_of(schema["minLength"], where, "minLength");
      if (schema.contains("maxLength")) node.max_length = count_of(schema["maxLength"], where, "maxLength");
      if (node.max_length >= 0 && node.max_length < node.min_length) throw bad(where, "'maxLength' is below 'minLength'");
      return add(std::move(node));
    }
    if (type == "integer" || type == "number") {
      node.type = type == "integer" ? SchemaNode::Type::Integer : SchemaNode::Type::Number;
      if (schema.contains("minimum")) node.minimum = number_of(schema["minimum"], where, "minimum");
      if (schema.contains("maximum")) node.maximum = number_of(schema["maximum"], where, "maximum");
      if (node.type == SchemaNode::Type::Integer) {  // an integer range: its integer end points
        if (node.minimum) node.minimum = std::ceil(*node.minimum);
        if (node.maximum) node.maximum = std::floor(*node.maximum);
      }
      if (node.minimum && node.maximum && *node.maximum < *node.minimum)
        throw bad(where, "'maximum' is below 'minimum'");
      return add(std::move(node));
    }
    throw bad(where, "unsupported type '" + type + "'");
  }

 private:
  int object(const json& schema, const std::string& where, int depth, SchemaNode node) {
    node.type = SchemaNode::Type::Object;
    if (schema.contains("properties")) {
      const json& properties = schema["properties"];
      if (!properties.is_object()) throw bad(where, "'properties' must be an object");
      if (properties.size() > kMaxProperties)
        throw bad(where, "more than " + std::to_string(kMaxProperties) + " properties");
      for (auto it = properties.begin(); it != properties.end(); ++it) {
        node.property_names.push_back(it.key());
        node.property_nodes.push_back(compile(it.value(), where + ".properties." + it.key(), depth + 1));
      }
    }
    node.required.assign(node.property_names.size(), false);
    if (schema.contains("required")) {
      if (!schema["required"].is_array()) throw bad(where, "'required' must be an array of property names");
      for (const json& name : schema["required"]) {
        auto at = name.is_string() ? std::find(node.property_names.begin(), node.property_names.end(), name.get<std::string>())
                                   : node.property_names.end();
        if (at == node.property_names.end())
          throw bad(where, "'required' names " + name.dump() + ", which is not among the properties");
        node.required[static_cast<size_t>(at - node.property_names.begin())] = true;
      }
    }
    if (schema.contains("additionalProperties")) {
      const json& extra = schema["additionalProperties"];
      if (!(extra.is_boolean() && !extra.get<bool>()))
        node.additional = compile(extra, where + ".additionalProperties", depth + 1);
    } else if (node.property_names.empty()) {
      node.additional = JsonSchema::kAny;  // {"type": "object"} alone: any object
    }
    return add(std::move(node));
  }

  int add(SchemaNode node) {
    out_.nodes_.push_back(std::move(node));
    return static_cast<int>(out_.nodes_.size()) - 1;
  }

  JsonSchema& out_;
};

}  // namespace

JsonSchema::JsonSchema() {
  nodes_.resize(7);
  nodes_[kAny].type = SchemaNode::Type::Any;
  nodes_[kAnyObject].type = SchemaNode::Type::Object;
  nodes_[kAnyObject].additional = kAny;
  nodes_[kAnyArray].type = SchemaNode::Type::Array;
  nodes_[kAnyString].type = SchemaNode::Type::String;
  nodes_[kAnyNumber].type = SchemaNode::Type::Number;
  nodes_[kBoolean].type = SchemaNode::Type::Literals;
  nodes_[kBoolean].literals = {"false", "true"};
  nodes_[kNull].type = SchemaNode::Type::Literals;
  nodes_[kNull].literals = {"null"};
}

std::shared_ptr<const JsonSchema> JsonSchema::compile(std::string_view schema_json) {
  json doc;
  try {
    doc = json::parse(schema_json.begin(), schema_json.end());
  } catch (const json::exception& e) {
    throw bad("", std::string("not valid JSON: ") + e.what());
  }
  auto schema = std::make_shared<JsonSchema>();
  schema->root_ = Compiler(*schema).compile(doc, "#", 0);
  return schema;
}

std::shared_ptr<const JsonSchema> JsonSchema::any_object() {
  auto schema = std::make_shared<JsonSchema>();
  schema->root_ = kAnyObject;
  return schema;
}

}  // namespace kiln::grammar
