#include "runtime/vulkan/memory.h"

#include <algorithm>
#include <cstring>

#include "kiln/types.h"
#include "runtime/vulkan/vk_check.h"

namespace kiln::vk {
namespace {

constexpr VkDeviceSize align_up(VkDeviceSize v, VkDeviceSize a) { return (v + a - 1) / a * a; }

std::string mib(uint64_t bytes) { return std::to_string((bytes + (1 << 20) - 1) >> 20) + " MiB"; }

void memory_flags(MemoryKind kind, VkMemoryPropertyFlags& required, VkMemoryPropertyFlags& preferred) {
  switch (kind) {
    case MemoryKind::DeviceLocal:
      required = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
      preferred = 0;
      break;
    case MemoryKind::DeviceMappable:
      required = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                 VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
      preferred = 0;
      break;
    case MemoryKind::HostUpload:
      required = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
      preferred = 0;
      break;
    case MemoryKind::HostReadback:
      required = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
      preferred = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
      break;
  }
}

}  // namespace

MemoryArena::MemoryArena(Device& device, MemoryKind kind, VkDeviceSize block_bytes, std::string purpose,
                         bool device_address)
    : device_(device), kind_(kind), device_address_(device_address), purpose_(std::move(purpose)) {
  max_block_ = std::min<VkDeviceSize>(device.info().max_memory_allocation, device.info().max_buffer_size);
  block_bytes_ = std::min(block_bytes, max_block_);
  alignment_ = std::max<VkDeviceSize>(device.limits().minStorageBufferOffsetAlignment, 256);
}

MemoryArena::~MemoryArena() {
  for (Block& b : blocks_) {
    if (b.mapped) vkUnmapMemory(device_.handle(), b.memory);
    vkDestroyBuffer(device_.handle(), b.buffer, nullptr);
    vkFreeMemory(device_.handle(), b.memory, nullptr);
  }
}

MemoryArena::Block& MemoryArena::new_block(VkDeviceSize at_least) {
  const VkDeviceSize size = std::max(block_bytes_, at_least);
  if (size > max_block_)
    throw Error("Vulkan: " + purpose_ + " needs a buffer of " + mib(size) + ", over the device's limit of " +
                mib(max_block_));
  VkDevice dev = device_.handle();
  Block b;
  b.size = size;
  VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bi.size = size;
  bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  if (device_address_) bi.usage |= VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;
  bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  check(vkCreateBuffer(dev, &bi, nullptr, &b.buffer), "creating a buffer for " + purpose_);
  ++device_.counters().buffers_created;
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(dev, b.buffer, &req);
  VkMemoryPropertyFlags required = 0, preferred = 0;
  memory_flags(kind_, required, preferred);
  const uint32_t type = device_.find_memory_type(req.memoryTypeBits, required, preferred);
  if (type == UINT32_MAX) {
    vkDestroyBuffer(dev, b.buffer, nullptr);
    throw Error("Vulkan: the device has no suitable memory type for " + purpose_);
  }
  VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  ai.allocationSize = req.size;
  ai.memoryTypeIndex = type;
  VkMemoryAllocateFlagsInfo flags{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO};
  flags.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
  if (device_address_) ai.pNext = &flags;
  const VkResult res = vkAllocateMemory(dev, &ai, nullptr, &b.memory);
  ++device_.counters().memory_allocations;
  if (res != VK_SUCCESS) {
    vkDestroyBuffer(dev, b.buffer, nullptr);
    if (res == VK_ERROR_OUT_OF_DEVICE_MEMORY || res == VK_ERROR_OUT_OF_HOST_MEMORY)
      throw Error("Vulkan: out of GPU memory allocating " + mib(req.size) + " for " + purpose_ + " on " +
                  device_.info().report.name + " (" + mib(allocated_) + " already held for it)");
    check(res, "allocating memory for " + purpose_);
  }
  allocated_ += req.size;
  check(vkBindBufferMemory(dev, b.buffer, b.memory, 0), "binding memory for " + purpose_);
  if (kind_ != MemoryKind::DeviceLocal) {
    void* p = nullptr;
    check(vkMapMemory(dev, b.memory, 0, VK_WHOLE_SIZE, 0, &p), "mapping memory for " + purpose_);
    b.mapped = static_cast<uint8_t*>(p);
  }
  blocks_.push_back(b);
  return blocks_.back();
}

BufferSlice MemoryArena::allocate(VkDeviceSize bytes) {
  const VkDeviceSize size = align_up(std::max<VkDeviceSize>(bytes, 16), 16);
  Block* chosen = nullptr;
  for (Block& b : blocks_)
    if (align_up(b.used, alignment_) + size <= b.size) {
      chosen = &b;
      break;
    }
  if (!chosen) chosen = &new_block(size);
  const VkDeviceSize offset = align_up(chosen->used, alignment_);
  chosen->used = offset + size;
  return BufferSlice{chosen->buffer, offset, size, chosen->mapped ? chosen->mapped + offset : nullptr};
}

VkDeviceAddress MemoryArena::device_address(const BufferSlice& slice) const {
  if (!device_address_) throw Error("Vulkan: " + purpose_ + " has no device addresses (internal error)");
  VkBufferDeviceAddressInfo info{VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO};
  info.buffer = slice.buffer;
  return vkGetBufferDeviceAddress(device_.handle(), &info) + slice.offset;
}

Uploader::Uploader(Device& device, VkDeviceSize staging_bytes)
    : device_(device), staging_(device, MemoryKind::HostUpload, staging_bytes, "the upload staging buffer") {
  VkCommandPoolCreateInfo pi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pi.queueFamilyIndex = device.queue_family();
  check(vkCreateCommandPool(device.handle(), &pi, nullptr, &pool_), "creating the upload command pool");
  VkCommandBuffer cmds[2];
  VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  ai.commandPool = pool_;
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 2;
  check(vkAllocateCommandBuffers(device.handle(), &ai, cmds), "allocating upload command buffers");
  // The staging buffer is allocated lazily: integrated GPUs never need it.
  for (int i = 0; i < 2; ++i) {
    halves_[i].cmd = cmds[i];
    VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    check(vkCreateFence(device.handle(), &fi, nullptr, &halves_[i].fence), "creating an upload fence");
  }
}

Uploader::~Uploader() {
  try {
    finish();
  } catch (...) {
  }
  for (Half& h : halves_) vkDestroyFence(device_.handle(), h.fence, nullptr);
  vkDestroyCommandPool(device_.handle(), pool_, nullptr);
}

void Uploader::begin(Half& h) {
  if (h.in_flight) {
    check(vkWaitForFences(device_.handle(), 1, &h.fence, VK_TRUE, UINT64_MAX), "waiting for an upload");
    check(vkResetFences(device_.handle(), 1, &h.fence), "resetting an upload fence");
    h.in_flight = false;
  }
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  check(vkBeginCommandBuffer(h.cmd, &bi), "recording an upload");
  h.used = 0;
  h.recording = true;
}

void Uploader::submit(Half& h) {
  if (!h.recording) return;
  check(vkEndCommandBuffer(h.cmd), "recording an upload");
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &h.cmd;
  check(vkQueueSubmit(device_.queue(), 1, &si, h.fence), "submitting an upload");
  ++device_.counters().submits;
  h.recording = false;
  h.in_flight = true;
}

void Uploader::write(const BufferSlice& dst, VkDeviceSize offset, const void* data, size_t bytes) {
  if (offset + bytes > dst.size) throw Error("Vulkan: upload past the end of its buffer (internal error)");
  if (dst.mapped) {
    std::memcpy(dst.mapped + offset, data, bytes);
    return;
  }
  if (!buffer_.buffer) {
    buffer_ = staging_.allocate(staging_.max_block_bytes() < (64u << 20) ? staging_.max_block_bytes() : (64u << 20));
    const VkDeviceSize half = buffer_.size / 2 / 256 * 256;
    halves_[0].base = 0;
    halves_[1].base = half;
  }
  const VkDeviceSize half_size = halves_[1].base;
  const uint8_t* src = static_cast<const uint8_t*>(data);
  while (bytes > 0) {
    Half& h = halves_[current_];
    if (!h.recording) begin(h);
    const VkDeviceSize room = half_size - h.used;
    const VkDeviceSize piece = std::min<VkDeviceSize>(room, bytes);
    std::memcpy(buffer_.mapped + h.base + h.used, src, piece);
    VkBufferCopy region{buffer_.offset + h.base + h.used, dst.offset + offset, piece};
    vkCmdCopyBuffer(h.cmd, buffer_.buffer, dst.buffer, 1, &region);
    h.used += align_up(piece, 16);
    staged_ += piece;
    src += piece;
    offset += piece;
    bytes -= piece;
    if (h.used + 16 > half_size) {
      submit(h);
      current_ ^= 1;
    }
  }
}

void Uploader::finish() {
  for (Half& h : halves_) submit(h);
  for (Half& h : halves_)
    if (h.in_flight) {
      check(vkWaitForFences(device_.handle(), 1, &h.fence, VK_TRUE, UINT64_MAX), "waiting for an upload");
      check(vkResetFences(device_.handle(), 1, &h.fence), "resetting an upload fence");
      h.in_flight = false;
    }
}

}  // namespace kiln::vk
