// Turning Vulkan results into kiln::Error with a one-line message.
#pragma once

#include <vulkan/vulkan.h>

#include <string>

namespace kiln::vk {

const char* result_name(VkResult r);

// Throws kiln::Error("Vulkan: <what> failed (<VK_ERROR_...>)") unless r is VK_SUCCESS.
void check(VkResult r, const std::string& what);

}  // namespace kiln::vk
