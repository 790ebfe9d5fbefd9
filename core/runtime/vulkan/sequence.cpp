#include "runtime/vulkan/sequence.h"

#include "runtime/vulkan/vk_check.h"

#include <algorithm>
#include <cstdio>
#include <utility>
#include <cstring>
#include <string_view>

namespace kiln::vk {

CommandSequence::CommandSequence(Device& device, uint32_t max_dispatches, SequenceOptions options)
    : device_(device), fence_poll_(options.fence_poll), barrier_before_(std::move(options.barrier_before)) {
  VkDevice dev = device.handle();
  VkCommandPoolCreateInfo pi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pi.queueFamilyIndex = device.queue_family();
  check(vkCreateCommandPool(dev, &pi, nullptr, &pool_), "creating a command pool");
  VkCommandBuffer cmds[kFrames];
  VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  ai.commandPool = pool_;
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = kFrames;
  check(vkAllocateCommandBuffers(dev, &ai, cmds), "allocating command buffers");
  const bool timestamps = device.info().timestamp_valid_bits > 0 && device.limits().timestampPeriod > 0;
  max_queries_ = max_dispatches + 1;
  max_stages_ = max_dispatches + 2;
  counters_arena_ = std::make_unique<MemoryArena>(device, MemoryKind::DeviceLocal, 64 * 1024, "stage flags", true);
  counters_ = counters_arena_->allocate(VkDeviceSize(max_stages_ + 2) * kStageLineBytes);
  counters_address_ = counters_arena_->device_address(counters_);
  readback_arena_ = std::make_unique<MemoryArena>(device, MemoryKind::HostReadback, 4096, "stage flag results");
  readback_ = readback_arena_->allocate(kFrames * 16);
  for (int i = 0; i < kFrames; ++i) {
    Frame& f = frames_[i];
    f.cmd = cmds[i];
    VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    check(vkCreateFence(dev, &fi, nullptr, &f.fence), "creating a fence");
    if (timestamps) {
      VkQueryPoolCreateInfo qi{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
      qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
      qi.queryCount = max_queries_;
      check(vkCreateQueryPool(dev, &qi, nullptr, &f.query_pool), "creating a timestamp query pool");
    }
  }
}

CommandSequence::~CommandSequence() {
  VkDevice dev = device_.handle();
  for (Frame& f : frames_) {
    if (f.state == State::InFlight) vkWaitForFences(dev, 1, &f.fence, VK_TRUE, UINT64_MAX);
    if (f.state == State::Recording) vkEndCommandBuffer(f.cmd);
    if (f.query_pool) vkDestroyQueryPool(dev, f.query_pool, nullptr);
    vkDestroyFence(dev, f.fence, nullptr);
  }
  vkDestroyCommandPool(dev, pool_, nullptr);
}

int CommandSequence::begin(bool profile, bool stage_flags) {
  recording_ = -1;
  for (int i = 0; i < kFrames && recording_ < 0; ++i)
    if (frames_[i].state == State::Free) recording_ = i;
  if (recording_ < 0) throw Error("Vulkan: no free command frame (internal error)");
  Frame& f = rec();
  check(vkResetCommandBuffer(f.cmd, 0), "resetting a command buffer");
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  check(vkBeginCommandBuffer(f.cmd, &bi), "recording commands");
  f.state = State::Recording;
  f.dispatches = 0;
  f.labels.clear();
  f.profiling = profile && f.query_pool;
  f.stage_flags = stage_flags;
  f.abandoned = false;
  stage_ = 1;
  stage_groups_ = wait_groups_ = 0;
  if (f.stage_flags) {  // the counters start at zero, after the previous frame is done with them
    VkMemoryBarrier before{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    before.srcAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
    before.dstAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    vkCmdPipelineBarrier(f.cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &before, 0,
                         nullptr, 0, nullptr);
    vkCmdFillBuffer(f.cmd, counters_.buffer, counters_.offset, counters_.size, 0);
  }
  // Uploads (transfer) and earlier frames (compute) happen before anything read here.
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
  vkCmdPipelineBarrier(f.cmd, VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                       VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &mb, 0, nullptr, 0, nullptr);
  if (f.profiling) {
    vkCmdResetQueryPool(f.cmd, f.query_pool, 0, max_queries_);
    vkCmdWriteTimestamp(f.cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, f.query_pool, 0);
  }
  return recording_;
}

namespace {
// Every shader write before it is visible to every shader read and write after it.
void compute_barrier(VkCommandBuffer cmd) {
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
  vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &mb, 0,
                       nullptr, 0, nullptr);
}
}  // namespace

void CommandSequence::dispatch(const Kernel& kernel, VkDescriptorSet set, const void* push, uint32_t push_bytes,
                               uint32_t groups_x, uint32_t groups_y, uint32_t groups_z, const char* op, int layer) {
  if (groups_x == 0 || groups_y == 0 || groups_z == 0) return;
  Frame& f = rec();
  if (f.stage_flags && listed(barrier_before_, op)) compute_barrier(f.cmd);  // measurement: starts after the rest
  vkCmdBindPipeline(f.cmd, VK_PIPELINE_BIND_POINT_COMPUTE, kernel.pipeline);
  vkCmdBindDescriptorSets(f.cmd, VK_PIPELINE_BIND_POINT_COMPUTE, kernel.layout, 0, 1, &set, 0, nullptr);
  if (push_bytes) vkCmdPushConstants(f.cmd, kernel.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes, push);
  if (f.stage_flags && !kernel.stage_flags)
    throw Error("Vulkan: " + kernel.name + " cannot run in a frame with stage flags (internal error)");
  if (kernel.stage_flags) {  // stage 0 tells the kernel that barriers order this frame
    StagePush sp;
    if (f.stage_flags) sp = {counters_address_, stage_, wait_groups_};
    vkCmdPushConstants(f.cmd, kernel.layout, VK_SHADER_STAGE_COMPUTE_BIT, kStagePushOffset, sizeof sp, &sp);
    stage_groups_ += groups_x * groups_y * groups_z;
  }
  vkCmdDispatch(f.cmd, groups_x, groups_y, groups_z);
  ++f.dispatches;
  if (f.profiling && f.labels.size() + 1 < max_queries_) {
    vkCmdWriteTimestamp(f.cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, f.query_pool, uint32_t(f.labels.size() + 1));
    f.labels.push_back({op, layer});
  }
}

bool CommandSequence::listed(const std::string& list, const char* op) {
  const std::string_view names(list), name(op);
  for (size_t begin = 0; begin < names.size();) {
    const size_t end = std::min(names.find(',', begin), names.size());
    if (names.substr(begin, end - begin) == name) return true;
    begin = end + 1;
  }
  return false;
}

void CommandSequence::barrier() {
  if (rec().stage_flags) {  // the next dispatches wait for this stage's workgroups instead
    if (stage_groups_ == 0) return;
    wait_groups_ = stage_groups_;
    stage_groups_ = 0;
    if (give_up_once_ && stage_ == 1) {
      ++wait_groups_;
      give_up_once_ = false;
    }
    if (++stage_ >= max_stages_) throw Error("Vulkan: more stages than the frame's counters hold (internal error)");
    return;
  }
  compute_barrier(rec().cmd);
}

void CommandSequence::copy_to_host(const BufferSlice& src, VkDeviceSize src_offset, const BufferSlice& dst,
                                   VkDeviceSize dst_offset, VkDeviceSize bytes) {
  VkCommandBuffer cmd = rec().cmd;
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
  vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &mb, 0, nullptr,
                       0, nullptr);
  VkBufferCopy region{src.offset + src_offset, dst.offset + dst_offset, bytes};
  vkCmdCopyBuffer(cmd, src.buffer, dst.buffer, 1, &region);
  VkMemoryBarrier hb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  hb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
  hb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &hb, 0, nullptr, 0,
                       nullptr);
}

void CommandSequence::barrier_to_host() {
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(rec().cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0,
                       nullptr, 0, nullptr);
}

void CommandSequence::end() {
  Frame& f = rec();
  if (f.stage_flags) {  // the abandoned word, for wait()
    VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
    mb.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
    vkCmdPipelineBarrier(f.cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &mb, 0,
                         nullptr, 0, nullptr);
    const VkBufferCopy region{counters_.offset, readback_.offset + 16 * VkDeviceSize(recording_), 4};
    vkCmdCopyBuffer(f.cmd, counters_.buffer, readback_.buffer, 1, &region);
    VkMemoryBarrier hb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    hb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    hb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    vkCmdPipelineBarrier(f.cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &hb, 0, nullptr, 0,
                         nullptr);
  }
  check(vkEndCommandBuffer(rec().cmd), "recording commands");
  rec().state = State::Ready;
  recording_ = -1;
}

void CommandSequence::submit(int frame) {
  Frame& f = frames_[frame];
  if (f.state != State::Ready) throw Error("Vulkan: submitting a frame that is not ready (internal error)");
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &f.cmd;
  f.queued = false;
  for (const Frame& other : frames_) f.queued |= other.state == State::InFlight;
  check(vkQueueSubmit(device_.queue(), 1, &si, f.fence), "submitting work");
  f.submitted = std::chrono::steady_clock::now();
  ++device_.counters().submits;
  f.state = State::InFlight;
}

void CommandSequence::discard(int frame) {
  if (frames_[frame].state == State::Ready) frames_[frame].state = State::Free;
}

void CommandSequence::wait(int frame) {
  Frame& f = frames_[frame];
  if (f.state != State::InFlight) return;
  // A thread asleep in vkWaitForFences wakes some time after the GPU is done, and during decode the
  // GPU then idles until the next token is submitted. So sleep until shortly before a frame like
  // this one is due (the last one's time), and poll the fence from there.
  using Clock = std::chrono::steady_clock;
  auto it = frame_micros_.find(f.dispatches);
  bool done = false;
  if (fence_poll_ && !f.queued && it != frame_micros_.end()) {
    constexpr double kMarginMicros = 300;
    const double left = it->second - std::chrono::duration<double, std::micro>(Clock::now() - f.submitted).count();
    if (left > kMarginMicros) {
      const VkResult r = vkWaitForFences(device_.handle(), 1, &f.fence, VK_TRUE, uint64_t((left - kMarginMicros) * 1000));
      if (r != VK_TIMEOUT) check(r, "waiting for the GPU");
      done = r == VK_SUCCESS;
    }
    const Clock::time_point poll_until = Clock::now() + std::chrono::milliseconds(2);
    while (!done && Clock::now() < poll_until) {
      const VkResult r = vkGetFenceStatus(device_.handle(), f.fence);
      if (r != VK_NOT_READY) check(r, "waiting for the GPU");
      done = r == VK_SUCCESS;
    }
  }
  if (!done) check(vkWaitForFences(device_.handle(), 1, &f.fence, VK_TRUE, UINT64_MAX), "waiting for the GPU");
  if (!f.queued)  // a queued frame's time since submit includes the wait for the one before
    frame_micros_[f.dispatches] = std::chrono::duration<double, std::micro>(Clock::now() - f.submitted).count();
  check(vkResetFences(device_.handle(), 1, &f.fence), "resetting a fence");
  f.state = State::Free;
  if (f.stage_flags) {
    uint32_t word = 0;
    std::memcpy(&word, readback_.mapped + 16 * frame, 4);
    f.abandoned = word != 0;
  }
  if (!f.profiling || f.labels.empty()) return;
  std::vector<uint64_t> stamps(f.labels.size() + 1);
  check(vkGetQueryPoolResults(device_.handle(), f.query_pool, 0, uint32_t(stamps.size()), stamps.size() * 8,
                              stamps.data(), 8, VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
        "reading timestamps");
  const uint32_t bits = device_.info().timestamp_valid_bits;
  const uint64_t mask = bits >= 64 ? ~0ull : ((1ull << bits) - 1);
  const double ns_per_tick = device_.limits().timestampPeriod;
  for (size_t i = 0; i < f.labels.size(); ++i) {
    const uint64_t ticks = (stamps[i + 1] - stamps[i]) & mask;
    OpTiming& t = totals_[{f.labels[i].op, f.labels[i].layer}];
    t.op = f.labels[i].op;
    t.layer = f.labels[i].layer;
    t.device = "gpu";
    t.micros += double(ticks) * ns_per_tick / 1000.0;
    ++t.calls;
  }
}


void CommandSequence::submit_and_wait() {
  const int frame = recording_;
  end();
  submit(frame);
  wait(frame);
}

std::vector<OpTiming> CommandSequence::take_profile() {
  std::vector<OpTiming> out;
  out.reserve(totals_.size());
  for (auto& [key, t] : totals_) out.push_back(t);
  totals_.clear();
  return out;
}

}  // namespace kiln::vk
