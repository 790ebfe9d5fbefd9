// list_vulkan_devices for the hardware report: every device with what it offers, the plan a load
// would make for it and, when Kiln would not use it on its own, why.
#include "kiln/types.h"
#include "runtime/vulkan/device.h"
#include "runtime/vulkan/kernel_plan.h"
#include "runtime/vulkan_probe.h"

namespace kiln {

std::vector<GpuDevice> list_vulkan_devices(std::string& status) {
  status.clear();
  std::vector<GpuDevice> out;
  try {
    vk::Instance instance;
    for (const auto& d : instance.devices()) {
      out.push_back(d.report);
      if (d.hard_refusal.empty()) out.back().plan = vk::plan_for(d).summary();  // what a load would get
    }
    if (out.empty()) status = "Vulkan works but found no device (no GPU driver installed?)";
  } catch (const Error& e) {
    status = e.what();
  }
  return out;
}

}  // namespace kiln
