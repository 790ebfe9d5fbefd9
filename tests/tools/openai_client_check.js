#!/usr/bin/env node
// `kiln serve` through the official `openai` npm client: tool calls (plain and streamed), a JSON
// schema over 50 sampled runs at temperature 1, logprobs, and parallel clients at temperature 0
// against the same requests run one at a time. A check against a client Kiln did not write, run
// by hand (tests download nothing, and the client is not a Debian package):
//   npm install --prefix /tmp/openai-client openai
//   kiln serve --port 8099 &
//   NODE_PATH=/tmp/openai-client/node_modules node tests/tools/openai_client_check.js http://127.0.0.1:8099/v1
// Prints one line a check and exits non-zero if any failed.
const OpenAI = require("openai");

const base = process.argv[2] || "http://127.0.0.1:8080/v1";
const client = new OpenAI({ baseURL: base, apiKey: process.env.KILN_API_KEY || "none" });
let failed = 0;
function report(name, ok, detail) {
  console.log(`${ok ? "ok  " : "FAIL"} ${name}${detail ? ": " + detail : ""}`);
  if (!ok) failed++;
}

const weatherTool = {
  type: "function",
  function: {
    name: "get_weather",
    description: "The weather in a city",
    parameters: {
      type: "object",
      properties: { city: { type: "string" }, unit: { type: "string", enum: ["c", "f"] } },
      required: ["city", "unit"],
      additionalProperties: false,
    },
  },
};

// The schema subset the server enforces, checked here independently of its grammar.
const personSchema = {
  type: "object",
  properties: {
    name: { type: "string", minLength: 1, maxLength: 20 },
    age: { type: "integer", minimum: 0, maximum: 120 },
    tags: { type: "array", items: { type: "string", enum: ["a", "b", "c"] }, minItems: 1, maxItems: 3 },
    ok: { type: "boolean" },
  },
  required: ["name", "age", "tags", "ok"],
  additionalProperties: false,
};
function validates(v, s) {
  if (s.enum && !s.enum.includes(v)) return false;
  switch (s.type) {
    case "object":
      if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
      for (const k of s.required || []) if (!(k in v)) return false;
      for (const k of Object.keys(v)) {
        if (!(k in s.properties)) { if (s.additionalProperties === false) return false; continue; }
        if (!validates(v[k], s.properties[k])) return false;
      }
      return true;
    case "array":
      if (!Array.isArray(v)) return false;
      if (s.minItems !== undefined && v.length < s.minItems) return false;
      if (s.maxItems !== undefined && v.length > s.maxItems) return false;
      return v.every((x) => validates(x, s.items));
    case "string":
      if (typeof v !== "string") return false;
      if (s.minLength !== undefined && [...v].length < s.minLength) return false;
      return s.maxLength === undefined || [...v].length <= s.maxLength;
    case "integer":
      if (!Number.isInteger(v)) return false;
    // fallthrough
    case "number":
      if (typeof v !== "number") return false;
      if (s.minimum !== undefined && v < s.minimum) return false;
      return s.maximum === undefined || v <= s.maximum;
    case "boolean":
      return typeof v === "boolean";
    default:
      return true;
  }
}

async function toolCalls() {
  const messages = [{ role: "user", content: "What is the weather in Paris?" }];
  const r = await client.chat.completions.create({ model: "kiln", messages, tools: [weatherTool], tool_choice: "required" });
  const call = r.choices[0].message.tool_calls?.[0];
  let args = null;
  try { args = JSON.parse(call.function.arguments); } catch {}
  report("tool call", r.choices[0].finish_reason === "tool_calls" && call?.type === "function" &&
         call.function.name === "get_weather" && args && validates(args, weatherTool.function.parameters),
         call ? `${call.function.name}(${call.function.arguments})` : JSON.stringify(r.choices[0].message));

  const stream = await client.chat.completions.create({ model: "kiln", messages, tools: [weatherTool], tool_choice: "required", stream: true });
  let name = "", text = "", finish = null;
  for await (const chunk of stream) {
    const d = chunk.choices[0]?.delta;
    for (const tc of d?.tool_calls || []) {
      if (tc.function?.name) name += tc.function.name;
      if (tc.function?.arguments) text += tc.function.arguments;
    }
    if (chunk.choices[0]?.finish_reason) finish = chunk.choices[0].finish_reason;
  }
  let streamed = null;
  try { streamed = JSON.parse(text); } catch {}
  report("tool call, streamed", finish === "tool_calls" && name === "get_weather" && streamed &&
         validates(streamed, weatherTool.function.parameters), `${name}(${text}) finish ${finish}`);
}

async function jsonSchema() {
  let good = 0, first = "";
  for (let i = 0; i < 50; i++) {
    const r = await client.chat.completions.create({
      model: "kiln", temperature: 1, seed: i,
      messages: [{ role: "user", content: "Describe a person as JSON." }],
      response_format: { type: "json_schema", json_schema: { name: "person", schema: personSchema, strict: true } },
    });
    const content = r.choices[0].message.content;
    try { if (validates(JSON.parse(content), personSchema)) good++; else if (!first) first = content; }
    catch { if (!first) first = content; }
  }
  report("json_schema, 50 runs at temperature 1", good === 50, `${good}/50 valid${first ? "; first invalid: " + first : ""}`);
}

async function logprobs() {
  const r = await client.chat.completions.create({ model: "kiln", max_tokens: 8, logprobs: true, top_logprobs: 3,
    messages: [{ role: "user", content: "Say hello." }] });
  const content = r.choices[0].logprobs?.content || [];
  // The sampled token need not be among the most likely three; none can be likelier than the first.
  const ok = content.length > 0 && content.every((t) => typeof t.token === "string" && t.logprob <= 0 &&
    t.top_logprobs.length === 3 && t.top_logprobs[0].logprob >= t.top_logprobs[1].logprob &&
    t.top_logprobs[1].logprob >= t.top_logprobs[2].logprob && t.logprob <= t.top_logprobs[0].logprob + 1e-6);
  report("logprobs with top_logprobs 3", ok, `${content.length} tokens, first ${JSON.stringify(content[0])}`);
}

async function parallel() {
  const prompts = ["Name a colour.", "Count to five.", "Say a word.", "What is two plus two?"];
  const ask = (p) => client.chat.completions.create({ model: "kiln", temperature: 0, max_tokens: 24,
    messages: [{ role: "user", content: p }] }).then((r) => r.choices[0].message.content);
  const alone = [];
  for (const p of prompts) alone.push(await ask(p));
  const together = await Promise.all(prompts.map(ask));
  const same = alone.every((a, i) => a === together[i]);
  report("4 parallel clients at temperature 0 equal the same requests alone", same,
         same ? "" : JSON.stringify({ alone, together }));
}

(async () => {
  for (const check of [toolCalls, jsonSchema, logprobs, parallel]) {
    try { await check(); } catch (e) { report(check.name, false, String(e)); }
  }
  process.exit(failed ? 1 : 0);
})();
