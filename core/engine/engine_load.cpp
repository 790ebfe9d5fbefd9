// Engine::load: checkpoint -> weights in the chosen precision -> a backend -> a ready engine.
#include <algorithm>
#include <cstdio>
#include <thread>

#include "engine/backend_factory.h"
#include "engine/context_budget.h"
#include "engine/local_engine.h"
#include "engine/vision_session.h"
#include "kiln/hardware.h"
#include "model/checkpoint.h"
#include "model/presets.h"
#include "model/weights.h"
#include "runtime/cpu/cpu_backend.h"
#include "runtime/cpu/matmul_kernels.h"
#ifdef KILN_HAVE_VULKAN
#include "runtime/vulkan_backend.h"
#endif

namespace kiln {
namespace {

// `automatic`: the length when the caller leaves it to the engine (context_budget.h).
int context_for(const LoadOptions& options, const Gemma3Config& c, const std::function<int()>& automatic) {
  if (options.context_length < 0)
    throw Error("the context length must be a positive number of tokens, got " + std::to_string(options.context_length));
  const int trained = c.max_position_embeddings;
  using Beyond = LoadOptions::BeyondTraining;
  if (options.context_length > trained && options.context_beyond_training == Beyond::Clamp) return trained;
  if (options.context_length > trained && options.context_beyond_training == Beyond::Refuse)
    throw Error("a context of " + std::to_string(options.context_length) + " tokens is more than the " +
                std::to_string(trained) + " the model was trained for (--ctx-force allows it)");
  constexpr int kMaxContext = 1 << 24;  // positions are int32 everywhere; far past any Gemma 3
  if (options.context_length > kMaxContext)
    throw Error("a context of " + std::to_string(options.context_length) + " tokens is more than Kiln holds (" +
                std::to_string(kMaxContext) + ")");
  return std::max(16, options.context_length > 0 ? options.context_length : automatic());
}

std::string number_text(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

// Every setting that shapes the model's output, with its value and where it came from.
std::vector<SettingOrigin> setting_origins(const Checkpoint& ck) {
  const Gemma3Config& c = ck.config;
  std::vector<SettingOrigin> out;
  auto add = [&](const char* name, std::string value) {
    auto it = c.origins.find(name);
    out.push_back({name, std::move(value), it == c.origins.end() ? "default" : it->second});
  };
  std::string eos;
  for (int id : c.eos_token_ids) eos += (eos.empty() ? "" : ", ") + std::to_string(id);
  const int global = int(std::count(c.layer_is_global.begin(), c.layer_is_global.end(), true));
  add("vocab_size", std::to_string(c.vocab_size));
  add("hidden_size", std::to_string(c.hidden_size));
  add("intermediate_size", std::to_string(c.intermediate_size));
  add("num_layers", std::to_string(c.num_layers));
  add("num_heads", std::to_string(c.num_heads));
  add("num_kv_heads", std::to_string(c.num_kv_heads));
  add("head_dim", std::to_string(c.head_dim));
  add("layer_types", std::to_string(global) + " global, " + std::to_string(c.num_layers - global) + " sliding");
  add("sliding_window", std::to_string(c.sliding_window));
  add("max_position_embeddings", std::to_string(c.max_position_embeddings));
  add("query_pre_attn_scalar", number_text(c.query_pre_attn_scalar));
  add("rms_norm_eps", number_text(c.rms_norm_eps));
  add("rope_theta", number_text(c.rope_theta));
  add("rope_local_base_freq", number_text(c.rope_local_base_freq));
  add("rope_scaling_factor", number_text(c.rope_scaling_factor));
  add("bos_token_id", std::to_string(c.bos_token_id));
  add("eos_token_ids", "[" + eos + "]");
  if (!c.dtype.empty()) add("dtype", c.dtype);

  // Sampling: the model's generation_config.json over Kiln's own defaults.
  const SamplingParams d = ck.generation.sampling.over(SamplingParams{});
  const auto& keys = ck.generation.set_keys;
  auto given = [&keys](const char* key) { return std::find(keys.begin(), keys.end(), key) != keys.end(); };
  auto sampling = [&](const char* name, const char* key, std::string value) {
    out.push_back({name, std::move(value),
                   given(key)           ? std::string("generation_config.json: ") + key
                   : given("do_sample") ? "generation_config.json: do_sample (transformers' default)"
                                        : "Kiln default"});
  };
  sampling("temperature", "temperature", number_text(d.temperature));
  sampling("top_k", "top_k", std::to_string(d.top_k));
  sampling("top_p", "top_p", number_text(d.top_p));
  sampling("min_p", "min_p", number_text(d.min_p));
  sampling("repeat_penalty", "repetition_penalty", number_text(d.repeat_penalty));
  return out;
}

ModelInfo describe(const Checkpoint& ck) {
  const Gemma3Config& c = ck.config;
  ModelInfo info;
  info.path = ck.path;
  info.architecture = "gemma3";
  info.source_format = ck.format;
  info.parameter_count = c.parameter_count();
  info.layers = c.num_layers;
  info.hidden = c.hidden_size;
  info.heads = c.num_heads;
  info.kv_heads = c.num_kv_heads;
  info.head_dim = c.head_dim;
  info.ffn = c.intermediate_size;
  info.vocab = c.vocab_size;
  info.sliding_window = c.sliding_window;
  info.global_layers = int(std::count(c.layer_is_global.begin(), c.layer_is_global.end(), true));
  info.max_context = c.max_position_embeddings;
  info.bytes_f32 = weight_bytes_for(c, DType::F32);
  info.bytes_f16 = weight_bytes_for(c, DType::F16);
  info.bytes_q8_0 = weight_bytes_for(c, DType::Q8_0);
  info.bytes_q4_0 = weight_bytes_for(c, DType::Q4_0);
  info.notes = c.notes;
  info.sampling_defaults = ck.generation.sampling.over(SamplingParams{});
  info.settings = setting_origins(ck);
  info.stored_types = ck.stored_types;
  info.bytes_as_stored = ck.bytes_as_stored;
  return info;
}

}  // namespace

DType dtype_of(Precision p) {
  switch (p) {
    case Precision::F32: return DType::F32;
    case Precision::F16: return DType::F16;
    case Precision::Q8_0: return DType::Q8_0;
    case Precision::Q4_0: return DType::Q4_0;
    case Precision::Auto: return DType::Q8_0;  // what Auto means where nothing is stored (folders, synthetic)
    case Precision::Q4_K_M: return DType::Q4_K;  // most matrices; the mix gives some Q6_K
    case Precision::Q6_K: return DType::Q6_K;
  }
  return DType::F32;
}

Gemma3Weights load_checkpoint_weights(const Checkpoint& ck, Precision precision, int threads,
                                      const std::function<void(int, int)>& progress, std::stop_token cancel) {
  if (precision == Precision::Auto && ck.format == "gguf")
    return load_weights_as_stored(ck.config, *ck.tensors, threads, progress, cancel);
  if (precision == Precision::Q4_K_M || precision == Precision::Q6_K)
    return load_weights_with_mix(ck.config, *ck.tensors, precision == Precision::Q6_K ? QuantMix::Q6_K : QuantMix::Q4_K_M,
                                 threads, progress, cancel);
  return load_weights(ck.config, *ck.tensors, dtype_of(precision), threads, progress, cancel);
}

void check_backend_options(const LoadOptions& options) {
#ifdef KILN_HAVE_VULKAN
  check_vulkan_tuning(options.vulkan_tuning);
#else
  (void)options;
#endif
}

std::unique_ptr<Backend> create_backend(std::shared_ptr<Gemma3Weights> weights, const LoadOptions& options,
                                        int context, DType kv_element, std::vector<std::string>& notes,
                                        const std::function<Gemma3Weights()>& reload) {
  // A bad tuning key is the caller's mistake, not a reason to fall back to the CPU.
  check_backend_options(options);
#ifdef KILN_HAVE_VULKAN
  if (options.backend != BackendKind::Cpu) {
    VulkanOptions vk;
    vk.device = options.vulkan_device;
    vk.allow_cpu_device = options.backend == BackendKind::Vulkan;  // lavapipe only when asked for
    vk.context_length = context;
    vk.f16_kv = kv_element == DType::F16;
    vk.tuning = options.vulkan_tuning;
    try {
      auto backend = reload ? make_vulkan_backend_releasing(weights, vk) : make_vulkan_backend(weights, vk);
      if (options.attention != AttentionPlacement::Auto && options.attention != AttentionPlacement::Gpu)
        notes.push_back("the Vulkan backend keeps attention on the GPU; --attention " + to_string(options.attention) +
                        " applies to the CPU backend (--backend cpu)");
      return backend;
    } catch (const Error& e) {
      notes.push_back(std::string("Vulkan not used: ") + e.what() + "; running on the CPU");
      if (reload && !weights->embed.storage) weights = std::make_shared<Gemma3Weights>(reload());
    }
  }
#else
  if (options.backend == BackendKind::Vulkan)
    notes.push_back("Kiln was built without Vulkan; running on the CPU");
  if (!options.vulkan_tuning.empty()) notes.push_back("Kiln was built without Vulkan; the Vulkan tuning is ignored");
#endif
  // The KV cache lives in RAM here: refuse a context that cannot fit before allocating it (a huge
  // --ctx took 10 GB and a minute before anything said no).
  const uint64_t kv = kv_cache_bytes_for(weights->config, context, kv_element);
  if (const uint64_t available = available_memory_bytes(); available > 0 && kv > available)
    throw Error("a context of " + std::to_string(context) + " tokens needs " + std::to_string(kv >> 20) +
                " MiB of KV cache but only " + std::to_string(available >> 20) + " MiB of memory is available");
  CpuOptions cpu;
  cpu.context_length = context;
  cpu.threads = options.threads;
  cpu.kv_element = kv_element;
  cpu.attention = options.attention;
  if (!options.cpu_kernels.empty())
    cpu.matmul_kernels = std::make_shared<const MatmulKernels>(matmul_kernels_named(options.cpu_kernels));
  auto backend = make_cpu_backend(std::move(weights), cpu);
  for (std::string& note : backend->take_notes()) notes.push_back(std::move(note));  // where attention runs, and why
  return backend;
}

namespace {
// The tokenizer's pieces must all be rows of the embedding.
void check_vocabulary(const Checkpoint& ck, const Tokenizer& tokenizer) {
  if (tokenizer.vocab_size() > ck.config.vocab_size)
    throw Error(ck.path + ": the tokenizer has " + std::to_string(tokenizer.vocab_size()) +
                " pieces but the model's vocabulary is " + std::to_string(ck.config.vocab_size));
}
}  // namespace

ModelInfo Engine::check(const std::string& given) {
  const std::string path = given.empty() ? default_model_path() : given;
  if (path.empty()) throw Error("no model given and no bundled default model is installed");
  Checkpoint ck = open_checkpoint(path);
  const Tokenizer tokenizer = open_tokenizer(ck);
  check_vocabulary(ck, tokenizer);
  check_weight_tensors(ck.config, *ck.tensors);
  ModelInfo info = describe(ck);
  describe_vision(info, vision_for(ck, tokenizer, ""));
  return info;
}

std::vector<std::string> released_models() { return preset_names(); }

ModelInfo released_model_info(const std::string& name) {
  const std::optional<Gemma3Config> config = preset_config(name);
  if (!config) throw Error("no released model is called '" + name + "'");
  Checkpoint ck;
  ck.path = name;
  ck.format = "preset";
  ck.config = *config;
  return describe(ck);
}

ModelInfo Engine::inspect(const std::string& path) {
  Checkpoint ck = open_checkpoint_header(path.empty() ? default_model_path() : path);
  ModelInfo info = describe(ck);
  try {
    describe_vision(info, find_vision(ck, ""));
  } catch (const Error& e) {
    info.notes.push_back(std::string("no vision: ") + e.what());
  }
  return info;
}

std::unique_ptr<Engine> Engine::load(const LoadOptions& options) {
  const std::string path = options.path.empty() ? default_model_path() : options.path;
  if (path.empty()) throw Error("no model given and no bundled default model is installed");
  check_backend_options(options);  // before minutes of reading weights
  auto report = [&](const char* stage, double fraction) {
    if (options.on_progress) options.on_progress({stage, fraction});
  };
  report("reading", 0.0);
  Checkpoint ck = open_checkpoint(path);
  Tokenizer tokenizer = open_tokenizer(ck);
  check_vocabulary(ck, tokenizer);
  // The tower is found (and a wrong mmproj refused) now; its weights load with the first image.
  std::optional<VisionSource> vision = vision_for(ck, tokenizer, options.mmproj);
  const DType kv_element = options.precision == Precision::F32 ? DType::F32 : DType::F16;
  std::string context_note;
  const int context = context_for(options, ck.config, [&] {  // before any weight is read
    const ContextBudget budget = context_budget_for(options);
    const uint64_t weights = options.precision == Precision::Auto && ck.format == "gguf"
                                 ? ck.bytes_as_stored
                                 : weight_bytes_for(ck.config, dtype_of(options.precision));
    const int chosen = default_context(ck.config, weights, kv_element, budget);
    if (chosen < ck.config.max_position_embeddings && budget.memory_bytes > 0)
      context_note = "the context is " + std::to_string(chosen) + " tokens, not the " +
                     std::to_string(ck.config.max_position_embeddings) + " the model was trained for: what fits in " +
                     budget.where + " beside the weights";
    return chosen;
  });
  report("reading", 0.05);

  auto weights = std::make_shared<Gemma3Weights>(load_checkpoint_weights(
      ck, options.precision, options.threads,
      [&](int done, int total) { report("quantizing", 0.05 + 0.85 * done / total); }, options.cancel));

  ModelInfo info = describe(ck);
  info.precision = options.precision;
  info.weight_bytes = weights->bytes();
  info.notes.insert(info.notes.end(), weights->notes.begin(), weights->notes.end());
  info.context_length = context;
  if (!context_note.empty()) info.notes.push_back(context_note);

  report("uploading", 0.9);
  // The mapping stays until the backend exists (its pages were released as they were read): a
  // Vulkan upload that fails half way reads the weights again for the CPU.
  auto reload = [&] { return load_checkpoint_weights(ck, options.precision, options.threads, {}, options.cancel); };
  std::unique_ptr<Backend> backend = create_backend(weights, options, context, kv_element, info.notes, reload);
  weights.reset();  // the backend keeps what it needs
  ck.tensors.reset();
  info.backend = backend->name();
  info.kv_cache_bytes = backend->kv_cache_bytes();
  describe_vision(info, vision);
  std::unique_ptr<VisionSession> eyes;
  if (vision) {  // F32 for exact runs; else F16, as mmproj files hold the tower
    // The tower goes where the text model went: on its Vulkan device (asked for the same way).
    VisionPlacement placement;
    placement.vulkan = backend->gpu_plan().has_value();  // only a GPU backend has a plan
    placement.vulkan_device = options.vulkan_device;
    placement.allow_cpu_device = options.backend == BackendKind::Vulkan;
    eyes = std::make_unique<VisionSession>(std::move(*vision), options.images,
                                           options.precision == Precision::F32 ? DType::F32 : DType::F16,
                                           options.threads, placement);
  }
  report("ready", 1.0);
  return std::make_unique<LocalEngine>(std::move(info), ck.config, std::move(tokenizer), std::move(backend),
                                       std::move(eyes));
}

}  // namespace kiln
