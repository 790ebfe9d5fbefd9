#include "runtime/npu/npu_detect.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <vector>

#include "runtime/vulkan_probe.h"

namespace kiln {

namespace fs = std::filesystem;

NpuBuildInfo npu_build_info() {
  NpuBuildInfo b;
#ifdef KILN_XRT_VERSION
  b.xrt_version = KILN_XRT_VERSION;
#endif
#ifdef KILN_HAVE_XRT_NPU
  b.xrt_has_hw_context = true;
#endif
  return b;
}

std::string npu_kernel_dir() {
  if (const char* env = std::getenv("KILN_NPU_KERNELS"); env && *env) return env;
#ifdef KILN_DATA_DIR
  return std::string(KILN_DATA_DIR) + "/npu";
#else
  return "/usr/share/kiln/npu";
#endif
}

namespace {
std::string npu_kernel_stem(const std::string& dir, int head_dim, int kv_split) {
  return dir + "/attention_d" + std::to_string(head_dim) + (kv_split > 1 ? "_s" + std::to_string(kv_split) : "");
}
}  // namespace

std::string npu_xclbin_path(const std::string& dir, int head_dim, int kv_split) {
  return npu_kernel_stem(dir, head_dim, kv_split) + ".xclbin";
}
std::string npu_instructions_path(const std::string& dir, int head_dim, int kv_split) {
  return npu_kernel_stem(dir, head_dim, kv_split) + ".insts.bin";
}

bool npu_is_phoenix(unsigned device_id) { return device_id == 0x1502; }

std::string npu_generation(unsigned device_id, unsigned revision) {
  // The amdxdna driver's (device, revision) table.
  if (device_id == 0x1502) return "XDNA (Phoenix / Hawk Point), npu1";
  if (device_id == 0x17f0) {
    switch (revision) {
      case 0x00: return "XDNA2, npu2";
      case 0x10: return "XDNA2 (Strix), npu4";
      case 0x11: return "XDNA2 (Krackan), npu5";
      case 0x20: return "XDNA2, npu6";
      default: break;
    }
    return "XDNA2 (revision " + std::to_string(revision) + ")";
  }
  if (device_id == 0x17f1 || device_id == 0x17f3 || device_id == 0x1b0a || device_id == 0x1b0c) return "AMD NPU, npu3";
  char hex[16];
  std::snprintf(hex, sizeof hex, "0x%04x", device_id);
  return std::string("unknown AMD NPU (PCI device ") + hex + ")";
}

namespace {

// The first line of a sysfs file, or "" when unreadable.
std::string read_line(const fs::path& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

unsigned read_hex(const fs::path& path) {
  const std::string text = read_line(path);
  return text.empty() ? 0u : unsigned(std::strtoul(text.c_str(), nullptr, 16));
}

std::vector<std::string> accel_nodes(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().filename().string().rfind("accel", 0) == 0) names.push_back(it->path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

NpuInfo detect_npu_at(const NpuProbeRoots& roots, const NpuBuildInfo& build, const std::string& kernel_dir) {
  NpuInfo info;
  info.xrt_version = build.xrt_version;
  const fs::path dev_dir = fs::path(roots.dev) / "accel";
  const std::vector<std::string> nodes = accel_nodes(dev_dir);
  if (nodes.empty()) {
    info.reason = "no " + dev_dir.string() +
                  " device: no NPU driver is loaded (Ryzen AI NPUs need the amdxdna driver, Linux 6.14 or later)";
    return info;
  }
  std::string other;
  for (const std::string& node : nodes) {
    const fs::path sys_dev = fs::path(roots.sys) / "class" / "accel" / node / "device";
    std::error_code ec;
    const std::string driver = fs::read_symlink(sys_dev / "driver", ec).filename().string();
    if (driver != "amdxdna") {
      if (other.empty()) other = (dev_dir / node).string() + " is driven by '" + (driver.empty() ? "?" : driver) + "'";
      continue;
    }
    info.present = true;
    info.device_path = (dev_dir / node).string();
    const unsigned device_id = read_hex(sys_dev / "device");
    info.generation = npu_generation(device_id, read_hex(sys_dev / "revision"));
    if (!npu_is_phoenix(device_id))
      info.reason = "the attention kernel is built for the Phoenix NPU (npu1), not " + info.generation;
    else if (::access(info.device_path.c_str(), R_OK | W_OK) != 0)
      info.reason = "cannot open " + info.device_path + " (add your user to the group that owns it, usually 'render')";
    else if (build.xrt_version.empty())
      info.reason = "Kiln was built without XRT (the NPU needs the XRT built with AMD's xdna-driver)";
    else if (!build.xrt_has_hw_context)
      info.reason = "Kiln was built with XRT " + build.xrt_version +
                    ", which has no xrt::hw_context (the NPU needs the XRT built with AMD's xdna-driver)";
    else if (!fs::exists(npu_xclbin_path(kernel_dir, 128)) && !fs::exists(npu_xclbin_path(kernel_dir, 256)))
      info.reason = "the NPU kernels are not installed (no " + npu_xclbin_path(kernel_dir, 256) +
                    "; kernels/npu/README.md says how to build them)";
    return info;
  }
  info.reason = other + ", not amdxdna: no Ryzen AI NPU";
  return info;
}

NpuInfo detect_npu() { return detect_npu_at(NpuProbeRoots{}, npu_build_info(), npu_kernel_dir()); }

}  // namespace kiln
