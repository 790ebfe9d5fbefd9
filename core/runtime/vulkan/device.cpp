#include "runtime/vulkan/device.h"

#include <algorithm>
#include <cstring>

#include "kiln/types.h"
#include "runtime/vulkan/coopmat_khr.h"
#include "runtime/vulkan/vk_check.h"

namespace kiln::vk {
namespace {

std::string version_text(uint32_t v) {
  return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v)) + "." +
         std::to_string(VK_API_VERSION_PATCH(v));
}

const char* type_name(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated";
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "cpu";
    default: return "other";
  }
}

bool has_extension(VkPhysicalDevice pd, const char* name) {
  uint32_t n = 0;
  vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, nullptr);
  std::vector<VkExtensionProperties> ext(n);
  vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, ext.data());
  for (const auto& e : ext)
    if (std::strcmp(e.extensionName, name) == 0) return true;
  return false;
}

// Whether the driver lists the cooperative-matrix shape matmul_coop.comp is written for.
bool has_coop_shape_f16(VkInstance instance, VkPhysicalDevice pd) {
  auto list = reinterpret_cast<PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesNV>(
      vkGetInstanceProcAddr(instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesNV"));
  if (!list) return false;
  uint32_t n = 0;
  list(pd, &n, nullptr);
  std::vector<VkCooperativeMatrixPropertiesNV> shapes(n, {VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV});
  list(pd, &n, shapes.data());
  for (const auto& s : shapes)
    if (s.MSize == 16 && s.NSize == 16 && s.KSize == 16 && s.AType == VK_COMPONENT_TYPE_FLOAT16_NV &&
        s.BType == VK_COMPONENT_TYPE_FLOAT16_NV && s.CType == VK_COMPONENT_TYPE_FLOAT32_NV &&
        s.DType == VK_COMPONENT_TYPE_FLOAT32_NV && s.scope == VK_SCOPE_SUBGROUP_NV)
      return true;
  return false;
}

// The KHR shapes: fp16 x fp16 -> fp32 16x16x16 at subgroup scope (what matmul_coop.comp is written
// for; RDNA3 and NVIDIA list it), or failing that whether only an fp16-accumulating one exists.
struct KhrShapes {
  bool f32_acc = false, f16_acc = false;
};
KhrShapes khr_coop_shapes(VkInstance instance, VkPhysicalDevice pd) {
  KhrShapes found;
  auto list = reinterpret_cast<PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR>(
      vkGetInstanceProcAddr(instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR"));
  if (!list) return found;
  uint32_t n = 0;
  if (list(pd, &n, nullptr) != VK_SUCCESS) return found;
  std::vector<VkCooperativeMatrixPropertiesKHR> shapes(n, {VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR});
  if (list(pd, &n, shapes.data()) != VK_SUCCESS) return found;
  for (const auto& s : shapes) {
    if (s.MSize != 16 || s.NSize != 16 || s.KSize != 16 || s.scope != VK_SCOPE_SUBGROUP_KHR ||
        s.AType != VK_COMPONENT_TYPE_FLOAT16_KHR || s.BType != VK_COMPONENT_TYPE_FLOAT16_KHR || s.saturatingAccumulation)
      continue;
    if (s.CType == VK_COMPONENT_TYPE_FLOAT32_KHR && s.ResultType == VK_COMPONENT_TYPE_FLOAT32_KHR) found.f32_acc = true;
    if (s.CType == VK_COMPONENT_TYPE_FLOAT16_KHR && s.ResultType == VK_COMPONENT_TYPE_FLOAT16_KHR) found.f16_acc = true;
  }
  return found;
}

// Reads limits, features, queues and memory of one device and decides whether Kiln can use it.
PhysicalDeviceInfo probe(VkInstance instance, VkPhysicalDevice pd, int index) {
  PhysicalDeviceInfo d;
  d.handle = pd;
  vkGetPhysicalDeviceProperties(pd, &d.properties);
  vkGetPhysicalDeviceMemoryProperties(pd, &d.memory);
  const uint32_t api = d.properties.apiVersion;
  const bool v11 = api >= VK_API_VERSION_1_1, v12 = api >= VK_API_VERSION_1_2, v13 = api >= VK_API_VERSION_1_3;

  GpuDevice& r = d.report;
  r.index = index;
  r.name = d.properties.deviceName;
  r.type = type_name(d.properties.deviceType);
  r.api_version = version_text(api);
  r.driver = std::to_string(d.properties.driverVersion);
  r.max_storage_buffer_range = d.properties.limits.maxStorageBufferRange;
  d.cpu_implementation = d.properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
  for (uint32_t i = 0; i < d.memory.memoryHeapCount; ++i)
    r.heaps.push_back({d.memory.memoryHeaps[i].size, (d.memory.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) != 0});
  d.max_memory_allocation = 1ull << 30;
  d.max_buffer_size = 1ull << 30;

  uint32_t subgroup_ops = 0, subgroup_stages = 0;
  if (v11) {
    VkPhysicalDeviceSubgroupProperties sub{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
    VkPhysicalDeviceMaintenance3Properties m3{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES};
    VkPhysicalDeviceDriverProperties drv{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
    VkPhysicalDeviceMaintenance4Properties m4{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_4_PROPERTIES};
    VkPhysicalDeviceShaderIntegerDotProductProperties idot_props{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_PROPERTIES};
    const bool has_idot = has_extension(pd, VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME);
    VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
    void** tail = &p2.pNext;  // appends a structure to the query chain
    auto chain = [&tail](auto& s) { *tail = &s; tail = &s.pNext; };
    chain(sub);
    chain(m3);
    if (v12) chain(drv);
    if (v13) chain(m4);
    if (has_idot) chain(idot_props);
    VkPhysicalDeviceSubgroupSizeControlProperties ssc_props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES};
    const bool has_ssc = has_extension(pd, VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME);
    if (has_ssc) chain(ssc_props);
    vkGetPhysicalDeviceProperties2(pd, &p2);
    d.subgroup_size = sub.subgroupSize;
    subgroup_ops = sub.supportedOperations;
    subgroup_stages = sub.supportedStages;
    d.subgroup_shuffle = (sub.supportedOperations & VK_SUBGROUP_FEATURE_SHUFFLE_BIT) &&
                         (sub.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT);
    d.max_memory_allocation = m3.maxMemoryAllocationSize;
    d.max_buffer_size = v13 ? m4.maxBufferSize : m3.maxMemoryAllocationSize;
    if (v12) r.driver = std::string(drv.driverName) + " " + drv.driverInfo;
    if (v12) d.driver_id = drv.driverID;

    VkPhysicalDevice16BitStorageFeatures s16{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
    VkPhysicalDevice8BitStorageFeatures s8{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES};
    VkPhysicalDeviceShaderFloat16Int8Features f16i8{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES};
    VkPhysicalDeviceShaderIntegerDotProductFeatures idot{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES};
    VkPhysicalDeviceBufferDeviceAddressFeatures bda{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_BUFFER_DEVICE_ADDRESS_FEATURES};
    if (v12) {
      s16.pNext = &s8;
      s8.pNext = &f16i8;
      f16i8.pNext = &bda;
      if (has_idot) bda.pNext = &idot;
    }
    VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    f2.pNext = &s16;
    // Cooperative matrices (prefill on tensor cores): their shaders use the Vulkan memory model.
    VkPhysicalDeviceCooperativeMatrixFeaturesNV coop{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
    VkPhysicalDeviceVulkanMemoryModelFeatures vmm{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES};
    const bool coop_ext = v12 && has_extension(pd, VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
    if (coop_ext) {
      coop.pNext = &vmm;
      vmm.pNext = f2.pNext;
      f2.pNext = &coop;
    }
    VkPhysicalDeviceCooperativeMatrixFeaturesKHR coop_khr{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR};
    const bool coop_khr_ext = v12 && has_extension(pd, VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME);
    if (coop_khr_ext) {
      coop_khr.pNext = f2.pNext;
      f2.pNext = &coop_khr;
      if (!coop_ext) {  // the memory model's structure, unless NV's branch chained it already
        vmm.pNext = f2.pNext;
        f2.pNext = &vmm;
      }
    }
    VkPhysicalDeviceSubgroupSizeControlFeatures ssc{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES};
    if (has_ssc) {
      ssc.pNext = f2.pNext;
      f2.pNext = &ssc;
    }
    VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR pep{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
    const bool has_pep = has_extension(pd, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
    if (has_pep) {
      pep.pNext = f2.pNext;
      f2.pNext = &pep;
    }
    vkGetPhysicalDeviceFeatures2(pd, &f2);
    d.pipeline_statistics = has_pep && pep.pipelineExecutableInfo;
    r.storage16 = s16.storageBuffer16BitAccess;
    r.storage8 = s8.storageBuffer8BitAccess;
    r.fp16 = f16i8.shaderFloat16;
    d.fp16_math = v12 && f16i8.shaderFloat16;
    r.int8 = f16i8.shaderInt8;
    r.integer_dot = idot.shaderIntegerDotProduct;
    d.int8_dot = v12 && has_idot && idot.shaderIntegerDotProduct;
    d.int8_dot_fast = d.int8_dot && idot_props.integerDotProduct4x8BitPackedSignedAccelerated;
    r.integer_dot_fast = d.int8_dot_fast;
    d.coop_matrix_f16 = coop_ext && coop.cooperativeMatrix && vmm.vulkanMemoryModel && d.fp16_math &&
                        sub.subgroupSize == 32 && has_coop_shape_f16(instance, pd);
    // KHR: subgroups of 32, by default or asked for per pipeline (RDNA3 runs wave64 unless asked).
    const bool can_ask_32 = has_ssc && ssc.subgroupSizeControl && ssc_props.minSubgroupSize <= 32 &&
                            ssc_props.maxSubgroupSize >= 32 &&
                            (ssc_props.requiredSubgroupSizeStages & VK_SHADER_STAGE_COMPUTE_BIT);
    if (coop_khr_ext && coop_khr.cooperativeMatrix && vmm.vulkanMemoryModel && d.fp16_math &&
        (sub.subgroupSize == 32 || can_ask_32)) {
      const KhrShapes shapes = khr_coop_shapes(instance, pd);
      d.coop_khr_f16 = shapes.f32_acc;
      d.coop_khr_f16_acc_only = !shapes.f32_acc && shapes.f16_acc;
      d.coop_khr_f16_sums = shapes.f32_acc && shapes.f16_acc;
      if (d.coop_khr_f16 && sub.subgroupSize != 32) {
        d.coop_khr_subgroup_size = 32;
        d.full_subgroups = ssc.computeFullSubgroups;
      }
    }
    r.cooperative_matrix = d.coop_matrix_f16 || d.coop_khr_f16;
    d.device_address = v12 && bda.bufferDeviceAddress;
  }
  r.subgroup_size = int(d.subgroup_size);

  uint32_t nq = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, nullptr);
  std::vector<VkQueueFamilyProperties> families(nq);
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, families.data());
  for (uint32_t i = 0; i < nq; ++i) {
    if (!(families[i].queueFlags & VK_QUEUE_COMPUTE_BIT)) continue;
    // Prefer the family with timestamps (profiling), then the first.
    if (d.compute_family == UINT32_MAX || (d.timestamp_valid_bits == 0 && families[i].timestampValidBits > 0)) {
      d.compute_family = i;
      d.timestamp_valid_bits = families[i].timestampValidBits;
    }
  }

  for (uint32_t i = 0; i < d.memory.memoryTypeCount; ++i) {
    const auto f = d.memory.memoryTypes[i].propertyFlags;
    if ((f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) && (f & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) &&
        (d.properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU || d.cpu_implementation))
      d.unified_memory = true;
  }

  const auto& lim = d.properties.limits;
  const uint32_t needed_ops = VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_ARITHMETIC_BIT;
  if (!v11)
    d.hard_refusal = "Vulkan " + r.api_version + " (Kiln needs 1.1 or newer)";
  else if (!d.device_address)  // the decode kernels reach the stage counters through an address
    d.hard_refusal = "no buffer device addresses (Vulkan 1.2 bufferDeviceAddress)";
  else if (d.compute_family == UINT32_MAX)
    d.hard_refusal = "no compute queue";
  else if (!(subgroup_stages & VK_SHADER_STAGE_COMPUTE_BIT) || (subgroup_ops & needed_ops) != needed_ops)
    d.hard_refusal = "no subgroup arithmetic in compute shaders";
  else if (d.subgroup_size < 4)
    d.hard_refusal = "subgroup size " + std::to_string(d.subgroup_size) + " (Kiln needs at least 4)";
  else if (lim.maxComputeWorkGroupInvocations < 256 || lim.maxComputeWorkGroupSize[0] < 256)
    d.hard_refusal = "workgroups of 256 invocations not supported";
  else if (lim.maxComputeSharedMemorySize < 20 * 1024)
    d.hard_refusal = "only " + std::to_string(lim.maxComputeSharedMemorySize) + " bytes of shared memory";
  else if (lim.maxPushConstantsSize < 128)
    d.hard_refusal = "push constants under 128 bytes";
  else if (lim.maxPerStageDescriptorStorageBuffers < 10 || lim.maxDescriptorSetStorageBuffers < 10)
    d.hard_refusal = "fewer than 10 storage buffers a shader";
  if (!d.hard_refusal.empty()) {
    r.refusal = d.hard_refusal;
  } else if (d.cpu_implementation) {
    r.refusal = "a CPU implementation of Vulkan: slower than Kiln's own CPU path, used only when asked for (--device " +
                std::to_string(index) + ")";
  } else {
    r.usable = true;
  }
  return d;
}

int rank(const PhysicalDeviceInfo& d) {
  switch (d.properties.deviceType) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 4;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 3;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return 0;
    default: return 1;
  }
}

uint64_t device_local_bytes(const PhysicalDeviceInfo& d) {
  uint64_t best = 0;
  for (const auto& h : d.report.heaps)
    if (h.device_local) best = std::max(best, h.size);
  return best;
}

}  // namespace

Instance::Instance() {
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "kiln";
  app.pEngineName = "kiln";
  app.apiVersion = VK_API_VERSION_1_2;
  VkInstanceCreateInfo ci{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ci.pApplicationInfo = &app;
  const VkResult res = vkCreateInstance(&ci, nullptr, &instance_);
  if (res != VK_SUCCESS) {
    instance_ = VK_NULL_HANDLE;
    check(res, "creating the Vulkan instance");
  }
  uint32_t n = 0;
  vkEnumeratePhysicalDevices(instance_, &n, nullptr);
  std::vector<VkPhysicalDevice> handles(n);
  vkEnumeratePhysicalDevices(instance_, &n, handles.data());
  for (uint32_t i = 0; i < n; ++i) devices_.push_back(probe(instance_, handles[i], int(i)));
}

Instance::~Instance() {
  if (instance_) vkDestroyInstance(instance_, nullptr);
}

int choose_device(const std::vector<PhysicalDeviceInfo>& devices, int requested, bool allow_cpu) {
  if (devices.empty()) throw Error("Vulkan: no device found (no GPU driver installed?)");
  if (requested >= 0) {
    if (requested >= int(devices.size()))
      throw Error("Vulkan: there is no device " + std::to_string(requested) + " (" + std::to_string(devices.size()) +
                  " found)");
    const auto& d = devices[requested];
    if (!d.hard_refusal.empty())
      throw Error("Vulkan: device " + std::to_string(requested) + " (" + d.report.name + ") cannot run Kiln: " +
                  d.hard_refusal);
    return requested;
  }
  int best = -1;
  for (const auto& d : devices) {
    if (!d.hard_refusal.empty() || (d.cpu_implementation && !allow_cpu)) continue;
    if (best < 0 || rank(d) > rank(devices[best]) ||
        (rank(d) == rank(devices[best]) && device_local_bytes(d) > device_local_bytes(devices[best])))
      best = d.report.index;
  }
  if (best >= 0) return best;
  std::string why;
  for (const auto& d : devices)
    why += (why.empty() ? "" : "; ") + std::to_string(d.report.index) + " " + d.report.name + ": " + d.report.refusal;
  throw Error("Vulkan: no usable device (" + why + ")");
}

Device::Device(std::shared_ptr<Instance> instance, int index) : instance_(std::move(instance)) {
  info_ = instance_->devices().at(index);
  const float priority = 1.0f;
  VkDeviceQueueCreateInfo q{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  q.queueFamilyIndex = info_.compute_family;
  q.queueCount = 1;
  q.pQueuePriorities = &priority;
  VkDeviceCreateInfo ci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  // Optional features, chained (front first) when the device has them.
  void* features = nullptr;
  std::vector<const char*> extensions;
  VkPhysicalDeviceShaderIntegerDotProductFeatures idot{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES};
  idot.shaderIntegerDotProduct = VK_TRUE;
  if (info_.int8_dot) {
    idot.pNext = features;
    features = &idot;
    extensions.push_back(VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME);
  }
  VkPhysicalDeviceShaderFloat16Int8Features f16{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES};
  f16.shaderFloat16 = VK_TRUE;
  if (info_.fp16_math) {
    f16.pNext = features;
    features = &f16;
  }
  VkPhysicalDeviceBufferDeviceAddressFeatures bda{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_BUFFER_DEVICE_ADDRESS_FEATURES};
  bda.bufferDeviceAddress = VK_TRUE;
  if (info_.device_address) {
    bda.pNext = features;
    features = &bda;
  }
  // Tensor-core prefill: the extension, its feature and the memory model its shaders declare.
  VkPhysicalDeviceCooperativeMatrixFeaturesNV coop{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
  VkPhysicalDeviceVulkanMemoryModelFeatures vmm{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES};
  if (info_.coop_matrix_f16) {
    extensions.push_back(VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
    coop.cooperativeMatrix = VK_TRUE;
    vmm.vulkanMemoryModel = VK_TRUE;
    vmm.pNext = features;
    coop.pNext = &vmm;
    features = &coop;
  }
  VkPhysicalDeviceCooperativeMatrixFeaturesKHR coop_khr{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR};
  VkPhysicalDeviceSubgroupSizeControlFeatures ssc{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES};
  if (info_.coop_khr_f16) {
    extensions.push_back(VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME);
    coop_khr.cooperativeMatrix = VK_TRUE;
    coop_khr.pNext = features;
    features = &coop_khr;
    if (!info_.coop_matrix_f16) {  // the memory model, unless NV's branch enabled it
      vmm.vulkanMemoryModel = VK_TRUE;
      vmm.pNext = features;
      features = &vmm;
    }
    if (info_.coop_khr_subgroup_size) {  // pipelines ask for subgroups of 32 (pipeline.cpp)
      extensions.push_back(VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME);
      ssc.subgroupSizeControl = VK_TRUE;
      ssc.computeFullSubgroups = info_.full_subgroups;
      ssc.pNext = features;
      features = &ssc;
    }
  }
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR pep{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
  if (info_.pipeline_statistics) {
    extensions.push_back(VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
    pep.pipelineExecutableInfo = VK_TRUE;
    pep.pNext = features;
    features = &pep;
  }
  ci.pNext = features;
  ci.enabledExtensionCount = uint32_t(extensions.size());
  ci.ppEnabledExtensionNames = extensions.data();
  ci.queueCreateInfoCount = 1;
  ci.pQueueCreateInfos = &q;
  check(vkCreateDevice(info_.handle, &ci, nullptr, &device_), "creating the logical device on " + info_.report.name);
  vkGetDeviceQueue(device_, info_.compute_family, 0, &queue_);
}

Device::~Device() {
  if (device_) {
    vkDeviceWaitIdle(device_);
    vkDestroyDevice(device_, nullptr);
  }
}

uint32_t Device::find_memory_type(uint32_t type_bits, VkMemoryPropertyFlags required,
                                  VkMemoryPropertyFlags preferred) const {
  uint32_t fallback = UINT32_MAX;
  for (uint32_t i = 0; i < info_.memory.memoryTypeCount; ++i) {
    if (!(type_bits & (1u << i))) continue;
    const auto f = info_.memory.memoryTypes[i].propertyFlags;
    if ((f & required) != required) continue;
    if ((f & preferred) == preferred) return i;
    if (fallback == UINT32_MAX) fallback = i;
  }
  return fallback;
}

void Device::wait_idle() const { vkDeviceWaitIdle(device_); }

}  // namespace kiln::vk
