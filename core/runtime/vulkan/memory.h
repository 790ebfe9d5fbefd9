// Device memory: large blocks allocated once and carved into buffer slices (no allocation per
// tensor, none after load), and the uploader that fills device-local slices through one reusable
// staging buffer (or writes mapped memory directly on integrated GPUs and CPU devices).
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/vulkan/device.h"

namespace kiln::vk {

// A range of a VkBuffer: what one descriptor binding sees.
struct BufferSlice {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceSize offset = 0;
  VkDeviceSize size = 0;
  uint8_t* mapped = nullptr;  // host address of offset 0 when the memory is mapped
};

enum class MemoryKind {
  DeviceLocal,     // fastest for the GPU; filled through staging
  DeviceMappable,  // device-local and host-visible (integrated GPUs, CPU devices): written in place
  HostUpload,      // host-visible, coherent: staging and per-call inputs
  HostReadback,    // host-visible, cached when possible: results the CPU reads
};

class MemoryArena {
 public:
  // block_bytes: size of each VkDeviceMemory block (clamped to the device's allocation limits).
  // device_address: shaders may reach its buffers through device_address() (the device must
  // have PhysicalDeviceInfo::device_address).
  MemoryArena(Device& device, MemoryKind kind, VkDeviceSize block_bytes, std::string purpose,
              bool device_address = false);
  ~MemoryArena();
  MemoryArena(const MemoryArena&) = delete;
  MemoryArena& operator=(const MemoryArena&) = delete;

  // A slice of at least `bytes` (rounded up to 16), aligned for storage-buffer descriptors.
  // Throws kiln::Error (naming the purpose and the size) when the device is out of memory.
  BufferSlice allocate(VkDeviceSize bytes);

  MemoryKind kind() const { return kind_; }
  // The GPU address of a slice of a device_address arena.
  VkDeviceAddress device_address(const BufferSlice& slice) const;
  uint64_t bytes_allocated() const { return allocated_; }  // device memory held by the blocks
  VkDeviceSize max_block_bytes() const { return max_block_; }

 private:
  struct Block {
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    VkDeviceSize size = 0, used = 0;
    uint8_t* mapped = nullptr;
  };
  Block& new_block(VkDeviceSize at_least);

  Device& device_;
  MemoryKind kind_;
  bool device_address_ = false;
  VkDeviceSize block_bytes_, max_block_, alignment_;
  std::string purpose_;
  std::vector<Block> blocks_;
  uint64_t allocated_ = 0;
};

// Copies host data into slices. Mapped slices are written directly; device-local ones go through
// a staging buffer of two halves, so one half is filled while the other is copied.
class Uploader {
 public:
  Uploader(Device& device, VkDeviceSize staging_bytes);
  ~Uploader();
  Uploader(const Uploader&) = delete;
  Uploader& operator=(const Uploader&) = delete;

  // dst must be at least offset + bytes long.
  void write(const BufferSlice& dst, VkDeviceSize offset, const void* data, size_t bytes);
  // Waits until every write has reached the device.
  void finish();
  uint64_t bytes_staged() const { return staged_; }

 private:
  struct Half {
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    VkFence fence = VK_NULL_HANDLE;
    VkDeviceSize base = 0, used = 0;
    bool recording = false, in_flight = false;
  };
  void begin(Half& h);
  void submit(Half& h);

  Device& device_;
  MemoryArena staging_;
  BufferSlice buffer_;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  Half halves_[2];
  int current_ = 0;
  uint64_t staged_ = 0;
};

}  // namespace kiln::vk
