// Finding the Ryzen AI NPU: the amdxdna driver's /dev/accel/accel* nodes, their PCI identity in
// sysfs, the XRT Kiln was built with and the compiled kernels. detect_npu() (declared in
// runtime/vulkan_probe.h) fills kiln::NpuInfo from the real system; the pieces are here for tests.
#pragma once

#include <string>

#include "kiln/hardware.h"

namespace kiln {

// Facts fixed when Kiln was built.
struct NpuBuildInfo {
  std::string xrt_version;        // "" when no XRT headers were found
  bool xrt_has_hw_context = false;  // the NPU dispatch (xrt_npu_device.cpp) is compiled in
};
NpuBuildInfo npu_build_info();

// Where the compiled kernels live: $KILN_NPU_KERNELS when set, else <data dir>/npu.
std::string npu_kernel_dir();
// The kernel files for one head size: attention_d<D>.xclbin and attention_d<D>.insts.bin; the
// variant where two columns share a key chunk (kv_split 2) is attention_d<D>_s2.*.
std::string npu_xclbin_path(const std::string& dir, int head_dim, int kv_split = 1);
std::string npu_instructions_path(const std::string& dir, int head_dim, int kv_split = 1);

// "XDNA (Phoenix / Hawk Point), npu1" and the like, from the PCI device and revision ids.
std::string npu_generation(unsigned device_id, unsigned revision);
bool npu_is_phoenix(unsigned device_id);

struct NpuProbeRoots {
  std::string dev = "/dev";
  std::string sys = "/sys";
};

// NpuInfo::present: an NPU driven by amdxdna is there. NpuInfo::reason: empty when Kiln can run
// attention on it, else the first thing in the way (driver, permissions, XRT, kernels).
NpuInfo detect_npu_at(const NpuProbeRoots& roots, const NpuBuildInfo& build, const std::string& kernel_dir);

inline bool npu_usable(const NpuInfo& info) { return info.present && info.reason.empty(); }

}  // namespace kiln
