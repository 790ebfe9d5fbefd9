#include "runtime/vulkan/pipeline.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "kiln/types.h"
#include "kiln_spirv_table.h"
#include "runtime/vulkan/vk_check.h"

namespace kiln::vk {

bool kernel_built(const std::string& name) {
  for (const auto& e : vk_spirv::kTable)
    if (name == e.name) return true;
  return false;
}

std::span<const uint32_t> kernel_spirv(const std::string& name) {
  for (const auto& e : vk_spirv::kTable)
    if (name == e.name) return {e.words, e.count};
  throw Error("Vulkan: no embedded kernel named '" + name + "' (internal error)");
}

StageWait default_stage_wait(const PhysicalDeviceInfo& info) {
  // lavapipe counts every loop iteration of an invocation and switches it off after 65535, so
  // there rounds x idle stay well below that; on an H100 20000 polls are tens of ms.
  return info.cpu_implementation ? StageWait{1000, 1} : StageWait{20000, 32};
}

PipelineLibrary::PipelineLibrary(Device& device, std::string cache_path, std::optional<StageWait> stage_wait,
                                 bool capture_statistics)
    : device_(device), cache_path_(std::move(cache_path)),
      stage_wait_(stage_wait.value_or(default_stage_wait(device.info()))),
      capture_statistics_(capture_statistics && device.info().pipeline_statistics) {
  std::vector<char> data;
  if (!cache_path_.empty()) {
    std::ifstream in(cache_path_, std::ios::binary);
    if (in) data.assign(std::istreambuf_iterator<char>(in), {});
  }
  VkPipelineCacheCreateInfo ci{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  ci.initialDataSize = data.size();
  ci.pInitialData = data.empty() ? nullptr : data.data();
  // A stale or foreign cache file is rejected by the driver's header check; retry empty then.
  if (vkCreatePipelineCache(device.handle(), &ci, nullptr, &cache_) != VK_SUCCESS) {
    ci.initialDataSize = 0;
    ci.pInitialData = nullptr;
    check(vkCreatePipelineCache(device.handle(), &ci, nullptr, &cache_), "creating the pipeline cache");
  }
}

PipelineLibrary::~PipelineLibrary() {
  VkDevice dev = device_.handle();
  for (auto& [name, k] : kernels_) vkDestroyPipeline(dev, k->pipeline, nullptr);
  for (auto& [n, l] : layouts_) {
    vkDestroyPipelineLayout(dev, l.second, nullptr);
    vkDestroyDescriptorSetLayout(dev, l.first, nullptr);
  }
  vkDestroyPipelineCache(dev, cache_, nullptr);
}

std::string PipelineLibrary::default_cache_path(const PhysicalDeviceInfo& info) {
  std::filesystem::path dir;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x)
    dir = std::filesystem::path(x) / "kiln";
  else if (const char* h = std::getenv("HOME"); h && *h)
    dir = std::filesystem::path(h) / ".cache" / "kiln";
  else
    return "";
  char name[96];
  std::snprintf(name, sizeof name, "vulkan-pipelines-%04x-%04x-%08x.bin", info.properties.vendorID,
                info.properties.deviceID, info.properties.driverVersion);
  return (dir / name).string();
}

void PipelineLibrary::save_cache() {
  if (cache_path_.empty()) return;
  size_t size = 0;
  if (vkGetPipelineCacheData(device_.handle(), cache_, &size, nullptr) != VK_SUCCESS || size == 0) return;
  std::vector<char> data(size);
  if (vkGetPipelineCacheData(device_.handle(), cache_, &size, data.data()) != VK_SUCCESS) return;
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(cache_path_).parent_path(), ec);
  const std::string tmp = cache_path_ + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary);
    if (!out) return;
    out.write(data.data(), std::streamsize(size));
    if (!out) return;
  }
  std::filesystem::rename(tmp, cache_path_, ec);  // atomic: a concurrent reader sees old or new
}

VkDescriptorSetLayout PipelineLibrary::set_layout(uint32_t bindings) {
  auto it = layouts_.find(bindings);
  if (it != layouts_.end()) return it->second.first;
  std::vector<VkDescriptorSetLayoutBinding> b(bindings);
  for (uint32_t i = 0; i < bindings; ++i)
    b[i] = {i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
  VkDescriptorSetLayoutCreateInfo li{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  li.bindingCount = bindings;
  li.pBindings = b.data();
  VkDescriptorSetLayout set = VK_NULL_HANDLE;
  check(vkCreateDescriptorSetLayout(device_.handle(), &li, nullptr, &set), "creating a descriptor set layout");
  VkPushConstantRange pc{VK_SHADER_STAGE_COMPUTE_BIT, 0, kPushConstantBytes};
  VkPipelineLayoutCreateInfo pi{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  pi.setLayoutCount = 1;
  pi.pSetLayouts = &set;
  pi.pushConstantRangeCount = 1;
  pi.pPushConstantRanges = &pc;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  check(vkCreatePipelineLayout(device_.handle(), &pi, nullptr, &layout), "creating a pipeline layout");
  layouts_[bindings] = {set, layout};
  return set;
}

namespace {
// The kernels whose sources include stage_flags.glsl: every kernel a one-token step dispatches.
bool takes_stage_push(const std::string& spirv_name) {
  for (const char* prefix : {"matvec_", "embed_", "add_norm", "attention_decode_", "argmax"})
    if (spirv_name.rfind(prefix, 0) == 0) return true;
  return false;
}

// A pipeline's key: the kernel's name and its specialization constants, e.g. "matvec_q4_0/128/8/64".
std::string kernel_key(const std::string& spirv_name, const std::vector<uint32_t>& spec) {
  std::string key = spirv_name;
  for (uint32_t s : spec) {
    key += '/';
    key += std::to_string(s);
  }
  return key;
}
}  // namespace

const Kernel& PipelineLibrary::get(const std::string& spirv_name, uint32_t bindings, std::vector<uint32_t> spec) {
  ++device_.counters().pipeline_lookups;
  if (auto it = kernels_.find(kernel_key(spirv_name, spec)); it != kernels_.end()) return *it->second;
  return get(spirv_name, kernel_spirv(spirv_name), bindings, std::move(spec));
}

const Kernel& PipelineLibrary::get(const std::string& spirv_name, std::span<const uint32_t> words, uint32_t bindings,
                                   std::vector<uint32_t> spec) {
  const std::string key = kernel_key(spirv_name, spec);
  if (auto it = kernels_.find(key); it != kernels_.end()) return *it->second;

  auto k = std::make_unique<Kernel>();
  k->name = key;
  k->bindings = bindings;
  k->stage_flags = takes_stage_push(spirv_name);
  k->set_layout = set_layout(bindings);
  k->layout = layouts_[bindings].second;

  VkShaderModuleCreateInfo mi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  mi.codeSize = words.size() * 4;
  mi.pCode = words.data();
  VkShaderModule module = VK_NULL_HANDLE;
  check(vkCreateShaderModule(device_.handle(), &mi, nullptr, &module), "creating shader module " + spirv_name);

  std::vector<VkSpecializationMapEntry> entries(spec.size());
  for (uint32_t i = 0; i < spec.size(); ++i) entries[i] = {i, i * 4, 4};
  if (k->stage_flags) {  // stage_flags.glsl's wait: rounds and the idle between polls
    for (uint32_t id : {kStageSpinRoundsId, kStageBackoffId}) {
      entries.push_back({id, uint32_t(spec.size() * 4), 4});
      spec.push_back(id == kStageSpinRoundsId ? stage_wait_.spin_rounds : stage_wait_.backoff);
    }
  }
  VkSpecializationInfo si{uint32_t(entries.size()), entries.data(), spec.size() * 4, spec.data()};
  VkComputePipelineCreateInfo ci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  ci.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
  ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  ci.stage.module = module;
  ci.stage.pName = "main";
  ci.stage.pSpecializationInfo = spec.empty() ? nullptr : &si;
  // The KHR cooperative-matrix kernels are written for subgroups of 32 (gl_SubgroupID tiles, the
  // accumulator's write-out); on a device whose default differs (RDNA3: 64) they ask for it.
  VkPipelineShaderStageRequiredSubgroupSizeCreateInfo required{
      VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO};
  const bool khr = spirv_name.rfind("matmul_coop_khr_", 0) == 0 || spirv_name.rfind("attention_prefill_khr_", 0) == 0;
  if (khr && device_.info().coop_khr_subgroup_size) {
    required.requiredSubgroupSize = device_.info().coop_khr_subgroup_size;
    ci.stage.pNext = &required;
    if (device_.info().full_subgroups) ci.stage.flags |= VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT;
  }
  ci.layout = k->layout;
  if (capture_statistics_) ci.flags |= VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
  const VkResult res = vkCreateComputePipelines(device_.handle(), cache_, 1, &ci, nullptr, &k->pipeline);
  ++device_.counters().pipelines_created;
  vkDestroyShaderModule(device_.handle(), module, nullptr);
  check(res, "creating pipeline " + key);
  return *kernels_.emplace(key, std::move(k)).first->second;
}

std::vector<std::pair<std::string, std::string>> PipelineLibrary::statistics(const Kernel& kernel) const {
  std::vector<std::pair<std::string, std::string>> out;
  if (!capture_statistics_) return out;
  auto get_stats = reinterpret_cast<PFN_vkGetPipelineExecutableStatisticsKHR>(
      vkGetDeviceProcAddr(device_.handle(), "vkGetPipelineExecutableStatisticsKHR"));
  VkPipelineExecutableInfoKHR exe{VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR};
  exe.pipeline = kernel.pipeline;
  uint32_t n = 0;
  check(get_stats(device_.handle(), &exe, &n, nullptr), "reading the statistics of " + kernel.name);
  std::vector<VkPipelineExecutableStatisticKHR> stats(n, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR});
  check(get_stats(device_.handle(), &exe, &n, stats.data()), "reading the statistics of " + kernel.name);
  for (const auto& s : stats) {
    std::string v;
    switch (s.format) {
      case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR: v = s.value.b32 ? "true" : "false"; break;
      case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR: v = std::to_string(s.value.i64); break;
      case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR: v = std::to_string(s.value.u64); break;
      case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_FLOAT64_KHR: v = std::to_string(s.value.f64); break;
      default: v = "?";
    }
    out.emplace_back(s.name, v);
  }
  return out;
}

DescriptorAllocator::DescriptorAllocator(Device& device) : device_(device) {}

DescriptorAllocator::~DescriptorAllocator() {
  for (VkDescriptorPool p : pools_) vkDestroyDescriptorPool(device_.handle(), p, nullptr);
}

VkDescriptorSet DescriptorAllocator::allocate(const Kernel& kernel, std::span<const BufferSlice> buffers) {
  constexpr uint32_t kSetsPerPool = 512, kMaxBindings = 10;  // attention_decode binds 10
  if (buffers.size() != kernel.bindings || kernel.bindings > kMaxBindings)
    throw Error("Vulkan: kernel " + kernel.name + " given " + std::to_string(buffers.size()) + " buffers (internal error)");
  if (left_in_pool_ == 0) {
    VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, kSetsPerPool * kMaxBindings};
    VkDescriptorPoolCreateInfo pi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    pi.maxSets = kSetsPerPool;
    pi.poolSizeCount = 1;
    pi.pPoolSizes = &size;
    VkDescriptorPool pool = VK_NULL_HANDLE;
    check(vkCreateDescriptorPool(device_.handle(), &pi, nullptr, &pool), "creating a descriptor pool");
    pools_.push_back(pool);
    left_in_pool_ = kSetsPerPool;
  }
  VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  ai.descriptorPool = pools_.back();
  ai.descriptorSetCount = 1;
  ai.pSetLayouts = &kernel.set_layout;
  VkDescriptorSet set = VK_NULL_HANDLE;
  check(vkAllocateDescriptorSets(device_.handle(), &ai, &set), "allocating a descriptor set");
  --left_in_pool_;
  ++device_.counters().descriptor_sets_allocated;

  VkDescriptorBufferInfo infos[kMaxBindings];
  VkWriteDescriptorSet writes[kMaxBindings];
  for (uint32_t i = 0; i < kernel.bindings; ++i) {
    infos[i] = {buffers[i].buffer, buffers[i].offset, buffers[i].size};
    writes[i] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    writes[i].dstSet = set;
    writes[i].dstBinding = i;
    writes[i].descriptorCount = 1;
    writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[i].pBufferInfo = &infos[i];
  }
  vkUpdateDescriptorSets(device_.handle(), kernel.bindings, writes, 0, nullptr);
  return set;
}

}  // namespace kiln::vk
