// Hooks the hardware report uses; implemented by the Vulkan and NPU runtimes when they are built.
#pragma once

#include <vector>

#include "kiln/hardware.h"

namespace kiln {

// Lists Vulkan devices (filling usable/refusal); sets status to why none can be listed.
std::vector<GpuDevice> list_vulkan_devices(std::string& status);  // runtime/vulkan
NpuInfo detect_npu();                                              // runtime/npu

}  // namespace kiln
