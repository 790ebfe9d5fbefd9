// A JSON Schema compiled for constrained decoding: the subset a byte matcher can enforce while the
// text is being written (core/grammar/json_matcher.h walks it).
//
// Supported: type (object, array, string, integer, number, boolean, null), properties, required,
// additionalProperties (false, true or a schema), items, enum, const, minimum/maximum,
// minLength/maxLength, minItems/maxItems, nesting; title/description/$schema/default/examples are
// read and ignored. Any other keyword is an Error naming it, so a schema is never half-enforced.
//
// Stricter than JSON Schema in two places, so that the model is steered rather than left to ramble:
// an object without additionalProperties takes only its listed properties (as llama.cpp's grammar
// converter does), and numbers have at most 15 integer and 15 fraction digits (no exponent when a
// minimum or maximum is set). Every output the matcher accepts still validates against the schema.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::grammar {

struct SchemaNode {
  enum class Type { Any, Object, Array, String, Integer, Number, Literals };
  Type type = Type::Any;
  // Object: the listed properties in schema order, their node indices, which are required, and the
  // node for any other key (-1: none allowed).
  std::vector<std::string> property_names;
  std::vector<int> property_nodes;
  std::vector<bool> required;
  int additional = -1;
  // Array
  int items = 0;  // node index (0: any value)
  int64_t min_items = 0, max_items = -1;
  // String: length in Unicode characters
  int64_t min_length = 0, max_length = -1;
  // Integer / Number
  std::optional<double> minimum, maximum;
  // Literals (enum, const, boolean, null): each value as compact JSON text
  std::vector<std::string> literals;
};

class JsonSchema {
 public:
  // `schema_json`: a JSON Schema document. Throws kiln::Error("... unsupported keyword 'x' ...").
  static std::shared_ptr<const JsonSchema> compile(std::string_view schema_json);
  // Any JSON object (OpenAI's response_format json_object).
  static std::shared_ptr<const JsonSchema> any_object();

  const SchemaNode& node(int index) const { return nodes_[static_cast<size_t>(index)]; }
  int root() const { return root_; }
  // Built-in nodes every schema has.
  static constexpr int kAny = 0, kAnyObject = 1, kAnyArray = 2, kAnyString = 3, kAnyNumber = 4, kBoolean = 5,
                       kNull = 6;

  JsonSchema();  // the built-in nodes only; use compile()
  std::vector<SchemaNode> nodes_;
  int root_ = kAny;
};

}  // namespace kiln::grammar
