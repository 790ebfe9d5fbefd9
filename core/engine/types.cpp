// Names of the API's enums, as the CLI, the app's settings and the server spell them.
#include <algorithm>
#include <cctype>

#include "kiln/types.h"

namespace kiln {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return out;
}

}  // namespace

std::string to_string(Precision p) {
  switch (p) {
    case Precision::F32: return "f32";
    case Precision::F16: return "f16";
    case Precision::Q8_0: return "q8_0";
    case Precision::Q4_0: return "q4_0";
    case Precision::Auto: return "auto";
    case Precision::Q4_K_M: return "q4_k_m";
    case Precision::Q6_K: return "q6_k";
  }
  return "?";
}

std::optional<Precision> parse_precision(std::string_view text) {
  const std::string s = lower(text);
  if (s == "f32" || s == "fp32" || s == "float32") return Precision::F32;
  if (s == "f16" || s == "fp16" || s == "float16") return Precision::F16;
  if (s == "q8_0" || s == "q8" || s == "int8") return Precision::Q8_0;
  if (s == "q4_0" || s == "q4" || s == "int4") return Precision::Q4_0;
  if (s == "auto" || s == "as-stored") return Precision::Auto;
  if (s == "q4_k_m") return Precision::Q4_K_M;
  if (s == "q6_k") return Precision::Q6_K;
  return std::nullopt;
}

std::string to_string(BackendKind b) {
  switch (b) {
    case BackendKind::Auto: return "auto";
    case BackendKind::Cpu: return "cpu";
    case BackendKind::Vulkan: return "vulkan";
  }
  return "?";
}

std::optional<BackendKind> parse_backend(std::string_view text) {
  const std::string s = lower(text);
  if (s == "auto") return BackendKind::Auto;
  if (s == "cpu") return BackendKind::Cpu;
  if (s == "vulkan" || s == "gpu") return BackendKind::Vulkan;
  return std::nullopt;
}

std::string to_string(AttentionPlacement a) {
  switch (a) {
    case AttentionPlacement::Auto: return "auto";
    case AttentionPlacement::Cpu: return "cpu";
    case AttentionPlacement::Gpu: return "gpu";
    case AttentionPlacement::Npu: return "npu";
    case AttentionPlacement::NpuEmulator: return "npu-emulator";
  }
  return "?";
}

std::optional<AttentionPlacement> parse_attention(std::string_view text) {
  const std::string s = lower(text);
  if (s == "auto") return AttentionPlacement::Auto;
  if (s == "cpu") return AttentionPlacement::Cpu;
  if (s == "gpu") return AttentionPlacement::Gpu;
  if (s == "npu") return AttentionPlacement::Npu;
  if (s == "npu-emulator") return AttentionPlacement::NpuEmulator;
  return std::nullopt;
}

std::string to_string(StopReason r) {
  switch (r) {
    case StopReason::None: return "none";
    case StopReason::EndOfSequence: return "eos";
    case StopReason::EndOfTurn: return "end_of_turn";
    case StopReason::MaxTokens: return "max_tokens";
    case StopReason::StopString: return "stop_string";
    case StopReason::Cancelled: return "cancelled";
    case StopReason::ContextFull: return "context_full";
  }
  return "?";
}

}  // namespace kiln
