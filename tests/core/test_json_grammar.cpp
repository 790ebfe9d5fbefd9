// The JSON-schema matcher: whole documents accepted or refused, prefixes that can or cannot go on,
// every supported keyword, and a clear error for each unsupported one.
#include <QtTest>
#include <functional>
#include <limits>

#include "generate/constrained_pick.h"
#include "grammar/json_matcher.h"
#include "kiln/types.h"

using kiln::grammar::JsonMatcher;
using kiln::grammar::JsonSchema;

namespace {

std::shared_ptr<const JsonSchema> schema(const std::string& text) { return JsonSchema::compile(text); }

// The whole document is accepted and ends the matcher's grammar.
bool whole(const std::shared_ptr<const JsonSchema>& s, const std::string& doc) {
  JsonMatcher m(s);
  return m.feed(doc) && m.complete();
}
// The text is accepted as the start of a document (not necessarily complete).
bool prefix(const std::shared_ptr<const JsonSchema>& s, const std::string& text) {
  JsonMatcher m(s);
  return m.feed(text);
}

std::string error_of(const std::string& text) {
  try {
    JsonSchema::compile(text);
  } catch (const kiln::Error& e) {
    return e.what();
  }
  return {};
}

}  // namespace

void grammar_mask_check(const std::vector<std::string>& pieces, const std::function<bool(int32_t)>& is_end) {
  const float kRefused = -std::numeric_limits<float>::infinity();
  JsonMatcher m(JsonSchema::any_object());
  std::vector<float> logits(pieces.size(), 1.0f);
  kiln::mask_refused(logits, m, pieces, is_end);
  // At the start only an object may begin: "{", "{\"" and "{}"; not the end, text, a space or "[".
  const std::vector<float> expected = {kRefused, 1, kRefused, 1, kRefused, kRefused, 1, kRefused, kRefused};
  QCOMPARE(logits, expected);
  // The sampler's favourite ("x") is refused: the pick falls back to the mask and draws an allowed token.
  std::vector<float> favour_x(pieces.size(), 0.0f);
  favour_x[4] = 10.0f;
  kiln::SamplingParams greedy;
  greedy.temperature = 0;
  kiln::Sampler sampler(greedy);
  std::vector<float> scratch;
  kiln::ConstrainedPickStats stats;
  const int32_t picked = kiln::pick_constrained(sampler, favour_x, {}, m, pieces, is_end, scratch, &stats);
  QCOMPARE(picked, 1);  // the first allowed token at equal logits
  QCOMPARE(stats.full_masks, uint64_t(1));
  // Once the document is complete only the end token remains.
  QVERIFY(m.feed("{}"));
  std::fill(logits.begin(), logits.end(), 1.0f);
  kiln::mask_refused(logits, m, pieces, is_end);
  QCOMPARE(logits[0], 1.0f);
  for (size_t i = 1; i < logits.size(); ++i) QCOMPARE(logits[i], kRefused);
  // The sampler's choice is kept when it is allowed: one check, no mask.
  favour_x.assign(pieces.size(), 0.0f);
  favour_x[0] = 5.0f;
  QCOMPARE(kiln::pick_constrained(sampler, favour_x, {}, m, pieces, is_end, scratch, &stats), 0);
  QCOMPARE(stats.full_masks, uint64_t(1));
}

// The checks, one function a slot (kept outside the class: moc cannot read some of these raw strings).
void any_object_takes_any_json_object_body() {
  const auto s = JsonSchema::any_object();
  QVERIFY(whole(s, R"({})"));
  QVERIFY(whole(s, R"({"a": [1, -2.5e3, "x\n\u00e9", true, false, null, {"b": {}}]})"));
  QVERIFY(whole(s, "{\n  \"k\" : \"\xC3\xA9\xE2\x82\xAC\"\n}"));
  QVERIFY(!prefix(s, "[1]"));          // an object, not an array
  QVERIFY(!prefix(s, "\"x\""));
  QVERIFY(!prefix(s, "{\"a\": tru "));  // broken literal
  QVERIFY(!prefix(s, "{\"a\": 01"));    // leading zero
  QVERIFY(!prefix(s, "{\"a\": \"\x01"));  // raw control character
  QVERIFY(!prefix(s, "{\"a\": \"\\q"));   // unknown escape
  QVERIFY(!prefix(s, "{\"a\": \"\\ud800"));  // lone surrogate
  QVERIFY(!prefix(s, "{\"a\": \"\xC0\xAF"));  // overlong UTF-8
  QVERIFY(!prefix(s, "{} x"));              // nothing after the document
  QVERIFY(prefix(s, "{\"a\": [1, {\"b\""));
  QVERIFY(!whole(s, "{\"a\": [1"));         // a prefix is not complete
}


void whitespace_runs_are_capped_body() {
  const auto s = JsonSchema::any_object();
  // Nothing, one space, or a line break and at most kMaxIndent spaces or tabs, as llama.cpp's
  // JSON grammar allows.
  QVERIFY(prefix(s, "{\n" + std::string(JsonMatcher::kMaxIndent, ' ')));
  QVERIFY(!prefix(s, "{\n" + std::string(JsonMatcher::kMaxIndent + 1, ' ')));
  QVERIFY(prefix(s, "{\r\n\t\t\"a\" : 1,\n  \"b\":2"));
  QVERIFY(!prefix(s, "{  "));       // two spaces on a line
  QVERIFY(!prefix(s, "{\t"));       // a tab without a line break
  QVERIFY(!prefix(s, "{ \n"));      // a space before the line break
  QVERIFY(!prefix(s, "{\r "));      // \r alone
  QVERIFY(!prefix(s, "{\n\n"));     // one line break a run
  QVERIFY(!prefix(s, " {"));       // nothing around the document
  QVERIFY(!prefix(s, "{}\n"));
}


void object_properties_required_and_additional_body() {
  const auto s = schema(R"({"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"}},"required":["name"],"additionalProperties":false})");
  QVERIFY(whole(s, R"({"name":"Ada","age":36})"));
  QVERIFY(whole(s, R"({"age":36,"name":"Ada"})"));  // any order
  QVERIFY(whole(s, R"({"name":"Ada"})"));
  QVERIFY(!prefix(s, R"({"age":36})" ));              // '}' before the required name
  QVERIFY(prefix(s, R"({"age":36)"));
  QVERIFY(!prefix(s, R"({"nick")"));                  // no such property
  QVERIFY(prefix(s, R"({"na)"));
  QVERIFY(!prefix(s, R"({"name":"a","name")"));       // a key twice
  QVERIFY(!prefix(s, R"({"name":"a","age":1,)"));     // no key left for a comma
  QVERIFY(!prefix(s, R"({"name":5)"));                // wrong type
  QVERIFY(!prefix(s, R"({"age":1.5)"));               // integer has no fraction
  // additionalProperties as a schema: other keys take that schema's values.
  const auto extra = schema(R"({"type":"object","properties":{"a":{"type":"integer"}},"additionalProperties":{"type":"boolean"}})");
  QVERIFY(whole(extra, R"({"a":1,"zzz":true})"));
  QVERIFY(!prefix(extra, R"({"zzz":1)"));
  // No additionalProperties and listed properties: only those (stricter than JSON Schema, on purpose).
  const auto listed = schema(R"({"properties":{"a":{"type":"null"}}})");
  QVERIFY(whole(listed, R"({"a":null})"));
  QVERIFY(!prefix(listed, R"({"b")"));
}


void arrays_items_min_and_max_body() {
  const auto s = schema(R"({"type":"array","items":{"type":"integer"},"minItems":1,"maxItems":3})");
  QVERIFY(whole(s, "[1]"));
  QVERIFY(whole(s, "[1, 2, 3]"));
  QVERIFY(!prefix(s, "[]"));
  QVERIFY(!prefix(s, "[1,2,3,"));
  QVERIFY(!prefix(s, "[\"a\""));
  QVERIFY(whole(schema(R"({"type":"array"})"), R"([1,"a",[null]])"));
}


void strings_min_and_max_length_in_characters_body() {
  const auto s = schema(R"({"type":"string","minLength":2,"maxLength":3})");
  QVERIFY(whole(s, R"("ab")"));
  QVERIFY(whole(s, "\"\xC3\xA9\xC3\xA9\xC3\xA9\""));  // three characters, six bytes
  QVERIFY(whole(s, R"("a\nb")"));                    // an escape is one character
  QVERIFY(!prefix(s, R"("a")"));
  QVERIFY(!prefix(s, R"("abcd)"));
}


void integer_and_number_bounds_body() {
  const auto i = schema(R"({"type":"integer","minimum":-5,"maximum":120})");
  QVERIFY(whole(i, "120"));
  QVERIFY(whole(i, "-5"));
  QVERIFY(whole(i, "0"));
  QVERIFY(!prefix(i, "121"));
  QVERIFY(!prefix(i, "-6"));
  QVERIFY(!prefix(i, "1000"));
  QVERIFY(prefix(i, "12"));  // may become 120 or stay 12
  QVERIFY(!prefix(i, "1e2"));
  const auto n = schema(R"({"type":"number","minimum":0.5,"maximum":2})");
  QVERIFY(whole(n, "0.5"));
  QVERIFY(whole(n, "2"));
  QVERIFY(whole(n, "1.75"));
  QVERIFY(!prefix(n, "-"));
  QVERIFY(!prefix(n, "0.4"));
  QVERIFY(!prefix(n, "2.1"));
  QVERIFY(!whole(n, "0"));        // 0 is below 0.5 (it may still become 0.5)
  QVERIFY(prefix(n, "0"));
  // Digit caps keep a number from running on.
  QVERIFY(!prefix(schema(R"({"type":"integer"})"), std::string(JsonMatcher::kMaxIntegerDigits + 1, '7')));
}


void enum_const_boolean_null_body() {
  const auto e = schema(R"({"enum":["red","green",7,null,{"a":1}]})");
  QVERIFY(whole(e, R"("red")"));
  QVERIFY(whole(e, "7"));
  QVERIFY(whole(e, "null"));
  QVERIFY(whole(e, R"({"a":1})"));
  QVERIFY(!prefix(e, R"("blue")"));
  QVERIFY(!prefix(e, "8"));
  const auto c = schema(R"({"type":"object","properties":{"v":{"const":"x"}},"required":["v"]})");
  QVERIFY(whole(c, R"({"v":"x"})"));
  QVERIFY(!prefix(c, R"({"v":"y)"));
  QVERIFY(whole(schema(R"({"type":"boolean"})"), "false"));
  QVERIFY(!prefix(schema(R"({"type":"boolean"})"), "nul"));
  QVERIFY(whole(schema(R"({"type":"null"})"), "null"));
}


void nesting_body() {
  const auto s = schema(R"({"type":"object","properties":{"people":{"type":"array","maxItems":2,"items":{"type":"object","properties":{"name":{"type":"string","maxLength":4},"tags":{"type":"array","items":{"enum":["a","b"]}}},"required":["name","tags"],"additionalProperties":false}}},"required":["people"],"additionalProperties":false})");
  QVERIFY(whole(s, R"({"people":[{"name":"Ada","tags":["a","b"]},{"tags":[],"name":"Bo"}]})"));
  QVERIFY(!prefix(s, R"({"people":[{"name":"Ada","tags":["c")"));
  QVERIFY(!prefix(s, R"({"people":[{"name":"Adele")"));
  QVERIFY(!prefix(s, R"({"people":[{"name":"A"})"));  // tags required
}


void accepts_leaves_the_matcher_unchanged_body() {
  JsonMatcher m(JsonSchema::any_object());
  QVERIFY(m.accepts("{\"a\""));
  QVERIFY(!m.accepts("]"));
  QVERIFY(m.feed("{"));
  QVERIFY(m.accepts("}"));
  QVERIFY(!m.complete());
  QVERIFY(m.can_continue());
  QVERIFY(m.feed("}"));
  QVERIFY(m.complete());
  QVERIFY(!m.can_continue());
}


void unsupported_keywords_are_named_body() {
  QVERIFY(error_of(R"({"type":"string","pattern":"^a"})").find("'pattern'") != std::string::npos);
  QVERIFY(error_of(R"({"anyOf":[{"type":"string"}]})").find("'anyOf'") != std::string::npos);
  QVERIFY(error_of(R"({"type":"object","properties":{"a":{"$ref":"#/x"}}})").find("'$ref'") != std::string::npos);
  QVERIFY(error_of(R"({"type":["string","null"]})").find("'type'") != std::string::npos);
  QVERIFY(error_of(R"({"type":"object","required":["x"]})").find("x") != std::string::npos);
  QVERIFY(error_of("{not json").find("not valid JSON") != std::string::npos);
  QVERIFY(error_of(R"({"type":"string","title":"ok","description":"ok"})").empty());
}

void masking_keeps_only_tokens_that_continue_body() {
  // Vocabulary: id 0 is the end token (no bytes), the rest pieces of text.
  const std::vector<std::string> pieces = {"", "{", "}", "{\"", "x", " {", "{}", "[", "\"a\":1}"};
  const auto is_end = [](int32_t id) { return id == 0; };
  grammar_mask_check(pieces, is_end);
}

class TestJsonGrammar : public QObject {
  Q_OBJECT

 private slots:
  void any_object_takes_any_json_object() { any_object_takes_any_json_object_body(); }
  void whitespace_runs_are_capped() { whitespace_runs_are_capped_body(); }
  void object_properties_required_and_additional() { object_properties_required_and_additional_body(); }
  void arrays_items_min_and_max() { arrays_items_min_and_max_body(); }
  void strings_min_and_max_length_in_characters() { strings_min_and_max_length_in_characters_body(); }
  void integer_and_number_bounds() { integer_and_number_bounds_body(); }
  void enum_const_boolean_null() { enum_const_boolean_null_body(); }
  void nesting() { nesting_body(); }
  void accepts_leaves_the_matcher_unchanged() { accepts_leaves_the_matcher_unchanged_body(); }
  void unsupported_keywords_are_named() { unsupported_keywords_are_named_body(); }
  void masking_keeps_only_tokens_that_continue() { masking_keeps_only_tokens_that_continue_body(); }
};

QTEST_APPLESS_MAIN(TestJsonGrammar)
#include "test_json_grammar.moc"
