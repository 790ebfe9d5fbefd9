#include "engine_facts.h"

#include <QFileInfo>
#include <QVariantList>

#include "engine_wording.h"

namespace kiln::gui {

namespace {

QString str(const std::string& s) { return QString::fromStdString(s); }
// QML numbers are doubles: byte counts up to 2^53 stay exact.
double num(uint64_t v) { return static_cast<double>(v); }
// A float setting as the double it was written as (0.95f is 0.949999988... as a double).
double setting(float v) { return QString::number(v).toDouble(); }

QString precisionName(kiln::Precision p) {
  switch (p) {
    case kiln::Precision::F32: return QStringLiteral("fp32");
    case kiln::Precision::F16: return QStringLiteral("fp16");
    case kiln::Precision::Q8_0: return QStringLiteral("int8");
    case kiln::Precision::Q4_0: return QStringLiteral("int4");
    case kiln::Precision::Auto: return QStringLiteral("auto");
    case kiln::Precision::Q4_K_M: return QStringLiteral("q4_k_m");
    case kiln::Precision::Q6_K: return QStringLiteral("q6_k");
  }
  return {};
}

QString displayName(const std::string& path) {
  QFileInfo file(str(path));
  return file.isDir() || file.suffix().isEmpty() ? file.fileName() : file.completeBaseName();
}

}  // namespace

QVariantMap modelInfoToMap(const kiln::ModelInfo& info) {
  QStringList notes;  // as the app says them: translated, no command-line flags
  for (const auto& note : info.notes) notes << EngineWording::text(note);
  const kiln::SamplingParams& d = info.sampling_defaults;
  const QVariantMap samplingDefaults{
      {"temperature", setting(d.temperature)}, {"topK", d.top_k},
      {"topP", setting(d.top_p)},              {"minP", setting(d.min_p)},
      {"repeatPenalty", setting(d.repeat_penalty)},
  };
  QStringList storedTypes;  // "Q4_K × 38"
  for (const auto& [type, count] : info.stored_types) storedTypes << QStringLiteral("%1 × %2").arg(str(type)).arg(count);
  QVariantList origins;
  for (const kiln::SettingOrigin& s : info.settings)
    origins << QVariantMap{{"name", str(s.name)}, {"value", str(s.value)}, {"origin", str(s.origin)}};
  return {
      {"path", str(info.path)},
      {"name", displayName(info.path)},
      {"architecture", str(info.architecture)},
      {"sourceFormat", str(info.source_format)},
      {"storedTypes", storedTypes.join(QStringLiteral(", "))},  // a GGUF's own quantization, tensors of each type
      {"parameters", num(info.parameter_count)},
      {"layers", info.layers},
      {"hidden", info.hidden},
      {"heads", info.heads},
      {"kvHeads", info.kv_heads},
      {"headDim", info.head_dim},
      {"ffn", info.ffn},
      {"vocab", info.vocab},
      {"slidingWindow", info.sliding_window},
      {"globalLayers", info.global_layers},
      {"maxContext", info.max_context},
      {"contextLength", info.context_length},
      {"precision", precisionName(info.precision)},
      {"backend", str(info.backend)},                        // the engine's words: "cpu (2 threads)"
      {"runsOn", EngineWording::device(info.backend)},        // the app's: "CPU, 2 threads"
      {"softwareVulkan", EngineWording::softwareVulkan(info.backend)},
      {"weightBytes", num(info.weight_bytes)},
      {"kvCacheBytes", num(info.kv_cache_bytes)},
      {"bytesFp32", num(info.bytes_f32)},
      {"bytesFp16", num(info.bytes_f16)},
      {"bytesInt8", num(info.bytes_q8_0)},
      {"bytesInt4", num(info.bytes_q4_0)},
      {"bytesAsStored", num(info.bytes_as_stored)},  // 0 for a folder
      {"notes", notes},
      {"vision", info.vision},                   // sees images (a vision tower, or a GGUF's mmproj)
      {"imageTokens", info.image_tokens},
      {"visionSource", str(info.vision_source)},
      {"samplingDefaults", samplingDefaults},  // what an answer uses for a setting left unset
      {"settingOrigins", origins},             // [{name, value, origin}]: where each setting came from
  };
}

QVariantMap hardwareInfoToMap(const kiln::HardwareInfo& info) {
  QVariantList gpus;
  for (const auto& gpu : info.gpus) {
    QVariantList heaps;
    for (const auto& heap : gpu.heaps) heaps << QVariantMap{{"size", num(heap.size)}, {"deviceLocal", heap.device_local}};
    QStringList features;
    if (gpu.fp16) features << QStringLiteral("fp16");
    if (gpu.int8) features << QStringLiteral("int8");
    if (gpu.storage16) features << EngineWording::tr("16-bit storage");
    if (gpu.storage8) features << EngineWording::tr("8-bit storage");
    if (gpu.integer_dot)
      features << (gpu.integer_dot_fast ? EngineWording::tr("integer dot product (hardware)")
                                        : EngineWording::tr("integer dot product (emulated)"));
    if (gpu.cooperative_matrix) features << EngineWording::tr("cooperative matrix");
    gpus << QVariantMap{
        {"index", gpu.index},
        {"name", str(gpu.name)},
        {"type", str(gpu.type)},
        {"driver", str(gpu.driver)},
        {"apiVersion", str(gpu.api_version)},
        {"heaps", heaps},
        {"usable", gpu.usable},
        {"refusal", gpu.usable ? QString() : EngineWording::refusal(gpu.type, gpu.refusal)},
        {"software", gpu.type == "cpu"},  // lavapipe, SwiftShader: runs only when chosen by hand
        {"features", features},
        {"subgroupSize", gpu.subgroup_size},
        {"maxStorageBufferRange", num(gpu.max_storage_buffer_range)},
    };
  }
  return {
      {"cpuModel", str(info.cpu_model)},
      {"cpuCores", info.cpu_cores},
      {"ramTotal", num(info.ram_total)},
      {"ramAvailable", num(info.ram_available)},
      {"gpus", gpus},
      {"vulkanStatus", EngineWording::text(info.vulkan_status)},
      {"npu", QVariantMap{{"present", info.npu.present},
                          {"reason", EngineWording::text(info.npu.reason)},
                          {"devicePath", str(info.npu.device_path)},
                          {"generation", str(info.npu.generation)},
                          {"xrtVersion", str(info.npu.xrt_version)}}},
  };
}

QVariantMap statsToMap(const kiln::GenerationStats& stats) {
  return {
      {"promptTokens", stats.prompt_tokens},
      {"cachedPromptTokens", stats.cached_prompt_tokens},
      {"generatedTokens", stats.generated_tokens},
      {"timeToFirstTokenMs", stats.time_to_first_token_ms},
      {"prefillTokensPerSecond", stats.prefill_tokens_per_s},
      {"decodeTokensPerSecond", stats.decode_tokens_per_s},
      {"totalMs", stats.total_ms},
      {"stopReason", str(kiln::to_string(stats.stop_reason))},
  };
}

std::optional<kiln::Precision> precisionFromSetting(const QString& name) {
  if (name == QLatin1String("fp16")) return kiln::Precision::F16;
  if (name == QLatin1String("int8")) return kiln::Precision::Q8_0;
  if (name == QLatin1String("int4")) return kiln::Precision::Q4_0;
  if (name == QLatin1String("fp32")) return kiln::Precision::F32;
  if (name == QLatin1String("auto")) return kiln::Precision::Auto;
  return std::nullopt;
}

std::optional<kiln::BackendKind> backendFromSetting(const QString& name) {
  if (name == QLatin1String("auto")) return kiln::BackendKind::Auto;
  if (name == QLatin1String("vulkan")) return kiln::BackendKind::Vulkan;
  if (name == QLatin1String("cpu")) return kiln::BackendKind::Cpu;
  return std::nullopt;
}

std::optional<kiln::AttentionPlacement> attentionFromSetting(const QString& name, kiln::BackendKind backend) {
  if (name == QLatin1String("auto")) return kiln::AttentionPlacement::Auto;
  if (name == QLatin1String("on")) return kiln::AttentionPlacement::Npu;
  if (name == QLatin1String("off"))  // the backend's own device (the engine notes it if the GPU is not used)
    return backend == kiln::BackendKind::Cpu ? kiln::AttentionPlacement::Cpu : kiln::AttentionPlacement::Gpu;
  return std::nullopt;
}

}  // namespace kiln::gui
