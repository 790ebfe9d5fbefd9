// What this machine offers, read from Linux's /proc files, plus the Vulkan and NPU runtimes'
// own probes when they are built in.
#include "kiln/hardware.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "runtime/vulkan_probe.h"

namespace kiln {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// The value after "key:" on the first line of `path` that starts with `key`.
std::optional<std::string> proc_field(const char* path, std::string_view key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::string_view view(line);
    const size_t colon = view.find(':');
    if (colon == std::string_view::npos || trim(view.substr(0, colon)) != key) continue;
    return std::string(trim(view.substr(colon + 1)));
  }
  return std::nullopt;
}

// "16318236 kB" -> bytes; 0 when absent or unreadable.
uint64_t proc_kib_field(const char* path, std::string_view key) {
  const auto value = proc_field(path, key);
  if (!value) return 0;
  uint64_t kib = 0;
  const auto [end, error] = std::from_chars(value->data(), value->data() + value->size(), kib);
  if (error != std::errc()) return 0;
  return kib * 1024;
}

std::string cpu_model_name() {
  // x86 says "model name"; many ARM kernels only say "Hardware" or "Processor".
  for (const char* key : {"model name", "Hardware", "Processor", "cpu model"})
    if (auto name = proc_field("/proc/cpuinfo", key); name && !name->empty()) return *name;
  return "unknown CPU";
}

int logical_cores() {
  if (const unsigned n = std::thread::hardware_concurrency(); n > 0) return static_cast<int>(n);
  int count = 0;  // hardware_concurrency may answer 0: count the processors listed instead
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("processor", 0) == 0) ++count;
  return count > 0 ? count : 1;
}

}  // namespace

uint64_t resident_memory_bytes() { return proc_kib_field("/proc/self/status", "VmRSS"); }
uint64_t available_memory_bytes() { return proc_kib_field("/proc/meminfo", "MemAvailable"); }

uint64_t peak_resident_memory_bytes() {
  // The kernel updates its high-water mark lazily (when memory is unmapped), so the peak is at
  // least what is resident right now.
  const uint64_t high_water = proc_kib_field("/proc/self/status", "VmHWM");
  return std::max(high_water, resident_memory_bytes());
}

HardwareInfo probe_hardware() {
  HardwareInfo info;
  info.cpu_model = cpu_model_name();
  info.cpu_cores = logical_cores();
  info.ram_total = proc_kib_field("/proc/meminfo", "MemTotal");
  info.ram_available = proc_kib_field("/proc/meminfo", "MemAvailable");
#ifdef KILN_HAVE_VULKAN
  info.gpus = list_vulkan_devices(info.vulkan_status);
#else
  info.vulkan_status = "Kiln was built without Vulkan";
#endif
#ifdef KILN_HAVE_NPU
  info.npu = detect_npu();
#else
  info.npu.present = false;
  info.npu.reason = "Kiln was built without NPU support";
#endif
  return info;
}

}  // namespace kiln
