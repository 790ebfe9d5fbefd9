// The only code that touches the NPU: one kernel launch through XRT (xrt::device, xrt::xclbin,
// xrt::hw_context, xrt::kernel, xrt::bo). Built only with an XRT that has xrt::hw_context, which
// the amdxdna driver requires (AMD's xdna-driver builds one; Debian's XRT 2.13 has none).
// Not compiled or run on Kiln's development machines: kernels/npu/README.md says how to verify it.
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <vector>

#include "runtime/npu/attention_router.h"
#include "runtime/npu/npu_detect.h"
#include "xrt/experimental/xrt_xclbin.h"
#include "xrt/xrt_bo.h"
#include "xrt/xrt_device.h"
#include "xrt/xrt_hw_context.h"
#include "xrt/xrt_kernel.h"

namespace kiln {
namespace {

// The instruction stream aiecc.py wrote (--npu-insts-name): 32-bit words, little endian.
std::vector<uint32_t> read_instructions(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw Error(path + ": cannot open the NPU instruction stream");
  const std::streamsize size = in.tellg();
  if (size <= 0 || size % 4 != 0 || size > (64 << 20)) throw Error(path + ": not an NPU instruction stream");
  std::vector<uint32_t> words(size_t(size) / 4);
  in.seekg(0);
  in.read(reinterpret_cast<char*>(words.data()), size);
  if (!in) throw Error(path + ": short read");
  return words;
}

// One compiled variant (head size, kv_split) on its own hw_context.
class XrtNpuDevice final : public NpuDevice {
 public:
  XrtNpuDevice(int head_dim, int kv_split, const std::string& dir) : shape_(npu_tile_shape(head_dim, kv_split)) {
    xclbin_path_ = npu_xclbin_path(dir, head_dim, kv_split);
    instructions_ = read_instructions(npu_instructions_path(dir, head_dim, kv_split));
    try {
      device_ = xrt::device(0u);
      xclbin_ = xrt::xclbin(xclbin_path_);
      device_.register_xclbin(xclbin_);
    } catch (const std::exception& e) {
      throw Error(std::string("npu: ") + xclbin_path_ + ": " + e.what());
    }
    open_context();
  }

  // A fresh hw_context on the registered xclbin: the driver loads the design onto the array anew,
  // so whatever a timed-out launch left running is gone. Buffers belong to the old context's
  // kernel groups, so they are made again too.
  void reset() override {
    out_ = kv_ = q_ = instr_ = xrt::bo();
    kernel_ = xrt::kernel();
    context_ = xrt::hw_context();
    open_context();
  }

  std::string name() const override { return "npu"; }
  int kv_split() const { return shape_.kv_split; }

  void run(const NpuJob& job, std::chrono::steady_clock::time_point deadline) override {
    const NpuBufferWords words = npu_launch_words(shape_);
    if (job.plan->shape.head_dim != shape_.head_dim || job.plan->shape.kv_split != shape_.kv_split ||
        job.plan->shape.tiles_per_step != shape_.tiles_per_step || int64_t(job.q_words.size()) < words.q ||
        int64_t(job.kv_words.size()) < words.kv || int64_t(job.out_words.size()) < words.out)
      throw Error("npu: the launch does not match the loaded kernel");
    std::memcpy(q_.map<void*>(), job.q_words.data(), size_t(words.q) * 4);
    std::memcpy(kv_.map<void*>(), job.kv_words.data(), size_t(words.kv) * 4);
    q_.sync(XCL_BO_SYNC_BO_TO_DEVICE);
    kv_.sync(XCL_BO_SYNC_BO_TO_DEVICE);
    constexpr unsigned kOpcode = 3;  // "run the instruction stream" (as mlir-aie's host code uses it)
    xrt::run run = kernel_(kOpcode, instr_, unsigned(instructions_.size()), q_, kv_, out_);
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    const ert_cmd_state state = run.wait(std::max(left, std::chrono::milliseconds(1)));
    if (state == ERT_CMD_STATE_TIMEOUT) {
      run.abort();
      throw NpuTimeout("npu: the attention kernel did not finish in time");
    }
    if (state != ERT_CMD_STATE_COMPLETED)
      throw Error("npu: the attention kernel ended in state " + std::to_string(int(state)));
    out_.sync(XCL_BO_SYNC_BO_FROM_DEVICE);
    std::memcpy(job.out_words.data(), out_.map<const void*>(), size_t(words.out) * 4);
  }

 private:
  void open_context() {
    try {
      context_ = xrt::hw_context(device_, xclbin_.get_uuid());
      kernel_ = xrt::kernel(context_, "MLIR_AIE");
      // Argument 0 is the opcode, 1 and 2 the instruction stream, 3.. the sequence's buffers.
      instr_ = xrt::bo(device_, instructions_.size() * 4, XCL_BO_FLAGS_CACHEABLE, kernel_.group_id(1));
      std::memcpy(instr_.map<void*>(), instructions_.data(), instructions_.size() * 4);
      instr_.sync(XCL_BO_SYNC_BO_TO_DEVICE);
      const NpuBufferWords words = npu_launch_words(shape_);
      q_ = xrt::bo(device_, size_t(words.q) * 4, XRT_BO_FLAGS_HOST_ONLY, kernel_.group_id(3));
      kv_ = xrt::bo(device_, size_t(words.kv) * 4, XRT_BO_FLAGS_HOST_ONLY, kernel_.group_id(4));
      out_ = xrt::bo(device_, size_t(words.out) * 4, XRT_BO_FLAGS_HOST_ONLY, kernel_.group_id(5));
    } catch (const std::exception& e) {
      throw Error(std::string("npu: ") + xclbin_path_ + ": " + e.what());
    }
  }

  NpuTileShape shape_;
  std::string xclbin_path_;
  std::vector<uint32_t> instructions_;
  xrt::device device_;
  xrt::xclbin xclbin_;
  xrt::hw_context context_;
  xrt::kernel kernel_;
  xrt::bo instr_, q_, kv_, out_;
};

// The variants of one head size: the plan's shape says which one a launch needs. The split variant
// (two columns per key chunk) is optional: the scheduler uses it only where its files exist.
class XrtNpuVariants final : public NpuDevice {
 public:
  XrtNpuVariants(int head_dim, const std::string& dir) {
    variants_.push_back(std::make_unique<XrtNpuDevice>(head_dim, 1, dir));
    if (std::filesystem::exists(npu_xclbin_path(dir, head_dim, 2)))
      variants_.push_back(std::make_unique<XrtNpuDevice>(head_dim, 2, dir));
  }
  std::string name() const override { return "npu"; }
  void run(const NpuJob& job, std::chrono::steady_clock::time_point deadline) override {
    for (auto& v : variants_)
      if (v->kv_split() == job.plan->shape.kv_split) return v->run(job, deadline);
    throw Error("npu: the kernel variant with " + std::to_string(job.plan->shape.kv_split) +
                " columns per key chunk is not installed");
  }
  void reset() override {
    for (auto& v : variants_) v->reset();
  }

 private:
  std::vector<std::unique_ptr<XrtNpuDevice>> variants_;
};

}  // namespace

std::unique_ptr<NpuDevice> make_xrt_npu_device(int head_dim, const std::string& kernel_dir) {
  if (!npu_kernel_exists(head_dim))
    throw Error("npu: no kernel is built for head_dim " + std::to_string(head_dim) + " (128 and 256 are)");
  return std::make_unique<XrtNpuVariants>(head_dim, kernel_dir);
}

}  // namespace kiln
