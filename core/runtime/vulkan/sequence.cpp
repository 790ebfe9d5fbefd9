#include "runtime/vulkan/sequence.h"

#include "runtime/vulkan/vk_check.h"

namespace kiln::vk {

CommandSequence::CommandSequence(Device& device, uint32_t max_dispatches) : device_(device) {
  VkDevice dev = device.handle();
  VkCommandPoolCreateInfo pi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pi.queueFamilyIndex = device.queue_family();
  check(vkCreateCommandPool(dev, &pi, nullptr, &pool_), "creating a command pool");
  VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  ai.commandPool = pool_;
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 1;
  check(vkAllocateCommandBuffers(dev, &ai, &cmd_), "allocating a command buffer");
  VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  check(vkCreateFence(dev, &fi, nullptr, &fence_), "creating a fence");
  if (device.info().timestamp_valid_bits > 0 && device.limits().timestampPeriod > 0) {
    max_queries_ = max_dispatches + 1;
    VkQueryPoolCreateInfo qi{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
    qi.queryCount = max_queries_;
    check(vkCreateQueryPool(dev, &qi, nullptr, &query_pool_), "creating a timestamp query pool");
  }
}

CommandSequence::~CommandSequence() {
  VkDevice dev = device_.handle();
  if (recording_) vkEndCommandBuffer(cmd_);
  if (query_pool_) vkDestroyQueryPool(dev, query_pool_, nullptr);
  vkDestroyFence(dev, fence_, nullptr);
  vkDestroyCommandPool(dev, pool_, nullptr);
}

void CommandSequence::begin(bool profile) {
  check(vkResetCommandBuffer(cmd_, 0), "resetting the command buffer");
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  check(vkBeginCommandBuffer(cmd_, &bi), "recording commands");
  recording_ = true;
  dispatches_ = 0;
  labels_.clear();
  profiling_ = profile && query_pool_;
  // Uploads (transfer) and earlier forward calls (compute) happen before anything read here.
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
  vkCmdPipelineBarrier(cmd_, VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                       VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &mb, 0, nullptr, 0, nullptr);
  if (profiling_) {
    vkCmdResetQueryPool(cmd_, query_pool_, 0, max_queries_);
    vkCmdWriteTimestamp(cmd_, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, query_pool_, 0);
  }
}

void CommandSequence::dispatch(const Kernel& kernel, VkDescriptorSet set, const void* push, uint32_t push_bytes,
                               uint32_t groups_x, uint32_t groups_y, uint32_t groups_z, const char* op, int layer) {
  if (groups_x == 0 || groups_y == 0 || groups_z == 0) return;
  vkCmdBindPipeline(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, kernel.pipeline);
  vkCmdBindDescriptorSets(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, kernel.layout, 0, 1, &set, 0, nullptr);
  if (push_bytes) vkCmdPushConstants(cmd_, kernel.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes, push);
  vkCmdDispatch(cmd_, groups_x, groups_y, groups_z);
  ++dispatches_;
  if (profiling_ && labels_.size() + 1 < max_queries_) {
    vkCmdWriteTimestamp(cmd_, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, query_pool_, uint32_t(labels_.size() + 1));
    labels_.push_back({op, layer});
  }
}

void CommandSequence::barrier() {
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
  vkCmdPipelineBarrier(cmd_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &mb, 0,
                       nullptr, 0, nullptr);
}

void CommandSequence::copy_to_host(const BufferSlice& src, VkDeviceSize src_offset, const BufferSlice& dst,
                                   VkDeviceSize dst_offset, VkDeviceSize bytes) {
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
  vkCmdPipelineBarrier(cmd_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &mb, 0,
                       nullptr, 0, nullptr);
  VkBufferCopy region{src.offset + src_offset, dst.offset + dst_offset, bytes};
  vkCmdCopyBuffer(cmd_, src.buffer, dst.buffer, 1, &region);
  VkMemoryBarrier hb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  hb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
  hb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(cmd_, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &hb, 0, nullptr, 0,
                       nullptr);
}

void CommandSequence::submit_and_wait() {
  check(vkEndCommandBuffer(cmd_), "recording commands");
  recording_ = false;
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cmd_;
  check(vkQueueSubmit(device_.queue(), 1, &si, fence_), "submitting work");
  ++device_.counters().submits;
  check(vkWaitForFences(device_.handle(), 1, &fence_, VK_TRUE, UINT64_MAX), "waiting for the GPU");
  check(vkResetFences(device_.handle(), 1, &fence_), "resetting a fence");

  if (!profiling_ || labels_.empty()) return;
  std::vector<uint64_t> stamps(labels_.size() + 1);
  check(vkGetQueryPoolResults(device_.handle(), query_pool_, 0, uint32_t(stamps.size()), stamps.size() * 8,
                              stamps.data(), 8, VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
        "reading timestamps");
  const uint32_t bits = device_.info().timestamp_valid_bits;
  const uint64_t mask = bits >= 64 ? ~0ull : ((1ull << bits) - 1);
  const double ns_per_tick = device_.limits().timestampPeriod;
  for (size_t i = 0; i < labels_.size(); ++i) {
    const uint64_t ticks = (stamps[i + 1] - stamps[i]) & mask;
    OpTiming& t = totals_[{labels_[i].op, labels_[i].layer}];
    t.op = labels_[i].op;
    t.layer = labels_[i].layer;
    t.device = "gpu";
    t.micros += double(ticks) * ns_per_tick / 1000.0;
    ++t.calls;
  }
}

std::vector<OpTiming> CommandSequence::take_profile() {
  std::vector<OpTiming> out;
  out.reserve(totals_.size());
  for (auto& [key, t] : totals_) out.push_back(t);
  totals_.clear();
  return out;
}

}  // namespace kiln::vk
