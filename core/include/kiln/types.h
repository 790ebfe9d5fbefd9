// Plain types of the engine API: what callers pass in and get back.
// No JSON, no Qt: the app and the server translate these to their own worlds.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <utility>
#include <vector>

namespace kiln {

// Every failure the engine reports: a one-line message that names the file and the problem.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// How weights are held in memory after loading. Auto: a GGUF file's tensors as the file stores
// them (types Kiln has no kernels for yet, the K-quants, become Q8_0), a Hugging Face folder in Q8_0.
// Q4_K_M and Q6_K: each matrix in the type `kiln quantize --type q4_k_m / q6_k` would write it in
// (llama.cpp's mixes); they run only on backends with K-quant kernels.
enum class Precision { F32, F16, Q8_0, Q4_0, Auto, Q4_K_M, Q6_K };
std::string to_string(Precision p);
std::optional<Precision> parse_precision(std::string_view text);  // "f32", "fp16", "int8", "q4_0", ...

enum class BackendKind { Auto, Cpu, Vulkan };
std::string to_string(BackendKind b);
std::optional<BackendKind> parse_backend(std::string_view text);

// Where attention runs. Auto lets the scheduler decide per phase and layer kind.
enum class AttentionPlacement { Auto, Cpu, Gpu, Npu, NpuEmulator };
std::string to_string(AttentionPlacement a);
std::optional<AttentionPlacement> parse_attention(std::string_view text);

// A picture for a model that sees (ModelInfo::vision): the file's bytes as they were read or sent
// (PNG, JPEG, or WebP); `name` (a file name, "image 1") is what error messages call it.
struct Image {
  std::string name;
  std::string bytes;
};

// How images become the vision tower's input.
struct ImageOptions {
  // A large or elongated image also goes in as crops of it, each its own 256 image tokens, after
  // the whole (Gemma 3's pan-and-scan; off by default, as in transformers).
  bool pan_and_scan = false;
  uint64_t max_bytes = uint64_t(32) << 20;  // larger files are refused before decoding
  uint64_t max_pixels = 50'000'000;         // width * height past this is refused (decompression bombs)
};

struct LoadProgress {
  std::string stage;   // "reading", "quantizing", "uploading", "ready"
  double fraction = 0; // 0..1 within the whole load
};

// Tuning and experiments for the Vulkan backend as key=value pairs (`kiln bench --tune
// stage_flags=0`), over the plan it makes for its device (core/runtime/vulkan/kernel_plan.h lists
// the keys). An unknown key or a bad value is an Error at load.
using VulkanTuning = std::vector<std::pair<std::string, std::string>>;

struct LoadOptions {
  std::string path;                    // Hugging Face folder or .gguf file
  Precision precision = Precision::Auto;
  BackendKind backend = BackendKind::Auto;
  AttentionPlacement attention = AttentionPlacement::Auto;
  int vulkan_device = -1;              // -1: pick the best real GPU
  VulkanTuning vulkan_tuning;          // empty: the device's own plan
  int context_length = 0;              // 0: the model's trained length, as far as memory holds it
                                       // (engine/context_budget.h); negative is an error
  // A context_length past what the model was trained for: an error (Refuse), cut to the trained
  // length (Clamp: the app's setting is a ceiling across models), or taken (Allow: kiln --ctx-force).
  enum class BeyondTraining { Refuse, Clamp, Allow };
  BeyondTraining context_beyond_training = BeyondTraining::Refuse;
  int threads = 0;                     // 0: all cores
  // The CPU backend's kernel set (matmuls, small ops, attention) by name: "portable", "avx2",
  // "avx512_vnni" or "avx512_vnni_bf16", as `kiln info --hardware` names them; "": the fastest this
  // CPU runs. Tests force each set the CPU has.
  std::string cpu_kernels;
  // The vision tower of a GGUF model: llama.cpp's mmproj file. "": a Hugging Face folder's own
  // tower, or for a GGUF file the one mmproj-*.gguf beside it, if there is exactly one.
  std::string mmproj;
  ImageOptions images;
  std::function<void(const LoadProgress&)> on_progress;
  std::stop_token cancel;              // stops a long load between tensors
};

// The settings a generation samples with. The values here are Kiln's own defaults.
struct SamplingParams {
  float temperature = 0.8f;   // <= 0: greedy
  int top_k = 40;             // <= 0: off
  float top_p = 0.95f;        // >= 1: off
  float min_p = 0.05f;        // <= 0: off
  float repeat_penalty = 1.0f;  // 1: off
  int repeat_last_n = 64;
  uint64_t seed = 0;          // 0: random seed
};

// What a caller chose: a user's flags, a request's fields, the app's settings. Anything left
// unset takes the model's default (its generation_config.json), and failing that Kiln's.
struct SamplingChoice {
  std::optional<float> temperature, top_p, min_p, repeat_penalty;
  std::optional<int> top_k, repeat_last_n;
  std::optional<uint64_t> seed;

  // Every field chosen, as `params` has it.
  static SamplingChoice exactly(const SamplingParams& p) {
    return {p.temperature, p.top_p, p.min_p, p.repeat_penalty, p.top_k, p.repeat_last_n, p.seed};
  }

  // These choices over `defaults`.
  SamplingParams over(const SamplingParams& defaults) const {
    return {temperature.value_or(defaults.temperature), top_k.value_or(defaults.top_k),
            top_p.value_or(defaults.top_p),             min_p.value_or(defaults.min_p),
            repeat_penalty.value_or(defaults.repeat_penalty), repeat_last_n.value_or(defaults.repeat_last_n),
            seed.value_or(defaults.seed)};
  }
};

// Where one of a model's settings came from, for `kiln info` and the app's model page.
struct SettingOrigin {
  std::string name;    // "rope_theta", "eos_token_ids", "temperature"
  std::string value;   // as text: "1000000", "[1, 106]"
  std::string origin;  // "config.json: text_config.rope_parameters.full_attention.rope_theta",
                       // "generation_config.json: top_k", "default"
};

struct ModelInfo {
  std::string path;
  std::string architecture;            // "gemma3"
  std::string source_format;           // "safetensors" or "gguf"
  uint64_t parameter_count = 0;
  int layers = 0, hidden = 0, heads = 0, kv_heads = 0, head_dim = 0, ffn = 0;
  int vocab = 0, sliding_window = 0, global_layers = 0;
  int max_context = 0;                 // what the model was trained for
  int context_length = 0;              // what this load allocated
  Precision precision = Precision::F32;
  std::string backend;                 // "cpu", "vulkan (device name)"
  uint64_t weight_bytes = 0;           // bytes of weights held for the chosen precision
  uint64_t kv_cache_bytes = 0;
  uint64_t bytes_f32 = 0, bytes_f16 = 0, bytes_q8_0 = 0, bytes_q4_0 = 0;  // what each precision would take
  uint64_t bytes_as_stored = 0;        // Precision::Auto on a GGUF (0 for a folder, where Auto is Q8_0)
  std::vector<std::string> notes;      // e.g. tensors kept in F16 because rows are not a block multiple
  // Kiln's sampling defaults with the model's own (generation_config.json) over them: what a
  // generation uses for every setting its caller leaves unset.
  SamplingParams sampling_defaults;
  std::vector<SettingOrigin> settings;  // where each setting came from
  // Images: the model has a vision tower (its weights load on the first image, so text-only use
  // costs nothing for them). image_tokens: the soft tokens one image becomes (mm_tokens_per_image);
  // image_size: the tower's square input; vision_source: where the tower comes from (the folder, or
  // the mmproj file).
  bool vision = false;
  int image_tokens = 0, image_size = 0;
  std::string vision_source;
  // GGUF: the file's own quantization, each storage type and how many tensors hold it
  // ({"Q4_K", 169}, {"Q6_K", 28}, {"F32", 73}); empty for Hugging Face folders.
  std::vector<std::pair<std::string, int>> stored_types;
};


enum class StopReason { None, EndOfSequence, EndOfTurn, MaxTokens, StopString, Cancelled, ContextFull };
std::string to_string(StopReason r);

// One generated token with its log-probability, and the likeliest alternatives at that step.
// The log-probabilities are the model's log-softmax over the whole vocabulary at temperature 1,
// before the repetition penalty, temperature, top-k, top-p and min-p (what OpenAI reports): they
// describe the model, not the sampler's settings.
struct TokenAlternative {
  int32_t id = -1;
  std::string bytes;   // the token's text as raw bytes (may be part of a UTF-8 character)
  float logprob = 0;
};
struct TokenLogprob {
  int32_t id = -1;
  std::string bytes;
  float logprob = 0;
  std::vector<TokenAlternative> top;   // best first, GenerateOptions::top_logprobs of them
};
// Called once per generated token (end tokens excluded) when GenerateOptions::logprobs is set,
// before that token's text reaches the TokenCallback.
using LogprobCallback = std::function<void(const TokenLogprob& token)>;

struct GenerateOptions {
  SamplingChoice sampling;             // unset fields: ModelInfo::sampling_defaults
  int max_tokens = 512;
  std::vector<std::string> stop;       // stop strings: never part of the returned text
  std::stop_token cancel;              // request_stop() from any thread ends the generation
  // generate() only: special-token text in the raw prompt ("<start_of_turn>", "<bos>") becomes
  // the token, as in llama.cpp and transformers. Chat message content never does.
  bool parse_special = true;
  // Per-token log-probabilities (TokenLogprob) go to on_logprob; top_logprobs alternatives each
  // (0..20). Set, the sampler reads the logits on the host even for greedy decoding.
  bool logprobs = false;
  int top_logprobs = 0;
  LogprobCallback on_logprob;
  // Constrained output: every token whose text cannot continue a valid JSON document is masked
  // before sampling, so the text (if not cut short by max_tokens) parses, and for JsonSchema
  // validates against `json_schema` (the subset core/grammar/json_schema.h lists; anything else is
  // an Error naming the keyword). The generation ends once the document is complete.
  enum class Format { Text, JsonObject, JsonSchema };
  Format format = Format::Text;
  std::string json_schema;
  // chat() only: a conversation that no longer fits the context with room for the answer
  // (max_tokens, at most a quarter of the context) loses its oldest turns; the system prompt and
  // the latest user turn stay. GenerationStats::rolled_off_messages says how many went. At least
  // `roll_off_at_least` go: pass the previous answer's count, so the prompt starts where the cached
  // one did and the KV cache is reused until more must go.
  bool roll_off_old_turns = false;
  int roll_off_at_least = 0;
};

enum class Role { System, User, Assistant };
struct ChatMessage {
  Role role = Role::User;
  std::string content;
  // User turns: shown to the model before the text, in order, each as <start_of_image>, the image
  // tokens and <end_of_image> between blank lines (Gemma 3's chat format).
  std::vector<Image> images;
};

// Token ids and the images whose embeddings fill its runs of the image token (ModelInfo::
// image_tokens ids of Gemma's image_token_index each), one image per run, in order.
struct Prompt {
  std::vector<int32_t> tokens;
  std::vector<Image> images;
};

// Time spent in one kind of operation during the last generation.
struct OpTiming {
  std::string op;       // "matmul", "attention", "rms_norm", ...
  int layer = -1;       // -1: outside the layers
  double micros = 0;
  uint64_t calls = 0;
  std::string device;   // "cpu", "gpu", "npu"
};

struct GenerationStats {
  int prompt_tokens = 0;
  int cached_prompt_tokens = 0;        // prompt tokens reused from the KV cache
  int rolled_off_messages = 0;         // chat messages left out to fit the context (roll_off_old_turns)
  int generated_tokens = 0;
  double time_to_first_token_ms = 0;
  double prefill_tokens_per_s = 0;
  double decode_tokens_per_s = 0;
  double total_ms = 0;
  int images_encoded = 0;              // images run through the vision tower (not found in its cache)
  double image_encode_ms = 0;          // their time, part of time_to_first_token_ms
  StopReason stop_reason = StopReason::None;
  std::vector<double> token_times_ms;  // when each generated token arrived, from the start
  std::vector<OpTiming> profile;       // empty unless profiling was enabled
  std::vector<std::string> notes;      // what changed during this generation (e.g. NPU fell back to CPU)
};

// Called once per piece of text as it is generated. Return false to stop.
using TokenCallback = std::function<bool(std::string_view text)>;

}  // namespace kiln
