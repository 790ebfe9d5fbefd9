// The backend objects every GPU test and benchmark starts from: a device (the chosen index, or the
// best one), device-local and readback memory, a staging uploader, pipelines without a disk cache,
// descriptor sets and a command sequence. Shared by vk_harness.h (Qt tests) and bench_harness.h.
#pragma once

#include <memory>

#include "runtime/vulkan/device.h"
#include "runtime/vulkan/memory.h"
#include "runtime/vulkan/pipeline.h"
#include "runtime/vulkan/sequence.h"

namespace kiln::test {

struct GpuSizes {
  VkDeviceSize arena_block, readback_block, staging;
  uint32_t max_dispatches;  // timestamps one recording can hold
};

struct GpuContext {
  std::shared_ptr<vk::Instance> instance = std::make_shared<vk::Instance>();
  std::unique_ptr<vk::Device> device;
  std::unique_ptr<vk::MemoryArena> arena, readback;
  std::unique_ptr<vk::Uploader> uploader;
  std::unique_ptr<vk::PipelineLibrary> pipelines;
  std::unique_ptr<vk::DescriptorAllocator> descriptors;
  std::unique_ptr<vk::CommandSequence> seq;

  // Device-local memory even on lavapipe, so uploads go through the staging path there too.
  GpuContext(int device_index, const GpuSizes& sizes) {
    device = std::make_unique<vk::Device>(instance, vk::choose_device(instance->devices(), device_index, true));
    arena = std::make_unique<vk::MemoryArena>(*device, vk::MemoryKind::DeviceLocal, sizes.arena_block, "GPU buffers");
    readback = std::make_unique<vk::MemoryArena>(*device, vk::MemoryKind::HostReadback, sizes.readback_block, "readback");
    uploader = std::make_unique<vk::Uploader>(*device, sizes.staging);
    pipelines = std::make_unique<vk::PipelineLibrary>(*device, "");
    descriptors = std::make_unique<vk::DescriptorAllocator>(*device);
    seq = std::make_unique<vk::CommandSequence>(*device, sizes.max_dispatches);
  }
};

}  // namespace kiln::test
