// The vision tower on Vulkan (vision_tower_gpu.h). Everything a run needs is decided at load: the
// weights and activation buffers, one descriptor set per dispatch and the list of dispatches; an
// image then uploads its patches, records that list into one command buffer and waits once.
#include "runtime/vulkan/vision_tower_gpu.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

#include "kiln/hardware.h"
#include "kiln/types.h"
#include "runtime/vulkan/device.h"
#include "runtime/vulkan/memory.h"
#include "runtime/vulkan/pipeline.h"
#include "runtime/vulkan/push_constants.h"
#include "runtime/vulkan/sequence.h"

namespace kiln {
namespace {

using vk::VisionAttentionPush;
using vk::VisionMatmulPush;
using vk::VisionNormPush;
using vk::VisionPoolPush;
constexpr uint32_t kBias = vk::kVisionBias, kGelu = vk::kVisionGelu, kAddR = vk::kVisionAddR,
                   kAccumulate = vk::kVisionAccumulate;

constexpr uint32_t kTileTokens = 128, kTileOutputs = 64;  // vision_matmul.comp's workgroup
constexpr uint32_t kWeightStep = 32;    // ... and its K step: weight rows are padded to it
constexpr uint32_t kQueriesPerGroup = 64;  // vision_attention.comp
constexpr int kMaxHeadDim = 128;

uint32_t groups(uint32_t n, uint32_t per) { return (n + per - 1) / per; }

// A weight on the device: n rows of k values, each row zero-padded to k_weight.
struct GpuMatrix {
  vk::BufferSlice w;
  uint32_t n = 0, k = 0, k_weight = 0;
  bool f16 = false;
};

// One dispatch of an image's run, ready to record.
struct Step {
  const vk::Kernel* kernel = nullptr;
  VkDescriptorSet set = VK_NULL_HANDLE;
  std::array<uint8_t, 32> push{};
  uint32_t push_bytes = 0;
  uint32_t groups_x = 1, groups_y = 1;
  const char* op = "";
  int layer = -1;
};

class Tower final : public VulkanVisionEncoder {
 public:
  Tower(SiglipWeights w, const VulkanVisionOptions& options) : config_(w.config) {
    const VisionConfig& c = config_;
    if (c.heads <= 0 || c.hidden % c.heads != 0 || c.hidden / c.heads > kMaxHeadDim)
      throw Error("Vulkan vision tower: head size " + std::to_string(c.hidden / std::max(c.heads, 1)) +
                  " is not supported (at most " + std::to_string(kMaxHeadDim) + ")");
    auto instance = std::make_shared<vk::Instance>();
    const int index = vk::choose_device(instance->devices(), options.device, options.allow_cpu_device);
    device_ = std::make_unique<vk::Device>(instance, index);
    const auto& info = device_->info();
    name_ = info.report.name + (info.cpu_implementation ? ", " + std::string(kSoftwareVulkan) : "");
    weights_ = std::make_unique<vk::MemoryArena>(*device_, vk::MemoryKind::DeviceLocal, 256ull << 20, "vision weights");
    activations_ = std::make_unique<vk::MemoryArena>(*device_, vk::MemoryKind::DeviceLocal, 256ull << 20,
                                                     "vision activations");
    readback_ = std::make_unique<vk::MemoryArena>(*device_, vk::MemoryKind::HostReadback, 16ull << 20, "vision output");
    uploader_ = std::make_unique<vk::Uploader>(*device_, 32ull << 20);
    // Its own pipeline cache beside the text model's (each library saves its file whole).
    std::string cache = vk::PipelineLibrary::default_cache_path(info);
    if (cache.size() > 4) cache.insert(cache.size() - 4, "-vision");
    pipelines_ = std::make_unique<vk::PipelineLibrary>(*device_, cache);
    descriptors_ = std::make_unique<vk::DescriptorAllocator>(*device_);
    allocate_activations();
    record_steps(upload(w));
    uploader_->finish();
    sequence_ = std::make_unique<vk::CommandSequence>(*device_, uint32_t(steps_.size()) + 1);
    pipelines_->save_cache();
  }

  ~Tower() override {
    if (device_) device_->wait_idle();
  }

  const VisionConfig& config() const override { return config_; }
  uint64_t bytes() const override { return weight_bytes_; }
  std::string device_name() const override { return name_; }
  void set_profiling(bool enabled) override { profiling_ = enabled; }
  std::vector<OpTiming> take_profile() override { return sequence_->take_profile(); }

  std::vector<float> encode(std::span<const float> pixels, ThreadPool& pool) const override {
    const VisionConfig& c = config_;
    const int64_t size = c.image_size, p = c.patch_size, grid = size / p, flat = 3 * p * p;
    if (static_cast<int64_t>(pixels.size()) != 3 * size * size)
      throw Error("vision tower: " + std::to_string(pixels.size()) + " pixel values, the tower takes 3 x " +
                  std::to_string(size) + " x " + std::to_string(size));
    // Each patch flattened in the patch weight's (channel, y, x) order: the convolution as a product.
    std::vector<float> flattened(static_cast<size_t>(grid * grid * flat));
    pool.parallel_for(grid * grid, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const int64_t row = i / grid, col = i % grid;
        for (int64_t ch = 0; ch < 3; ++ch)
          for (int64_t y = 0; y < p; ++y) {
            const float* line = pixels.data() + (ch * size + row * p + y) * size + col * p;
            std::copy(line, line + p, flattened.data() + i * flat + (ch * p + y) * p);
          }
      }
    });
    uploader_->write(patches_, 0, flattened.data(), flattened.size() * sizeof(float));
    uploader_->finish();
    sequence_->begin(profiling_);
    for (const Step& s : steps_) {
      sequence_->dispatch(*s.kernel, s.set, s.push.data(), s.push_bytes, s.groups_x, s.groups_y, 1, s.op, s.layer);
      sequence_->barrier();
    }
    const size_t out_floats = size_t(c.tokens_per_image) * c.text_hidden;
    sequence_->copy_to_host(out_, 0, out_host_, 0, out_floats * sizeof(float));
    sequence_->submit_and_wait();
    std::vector<float> out(out_floats);
    std::memcpy(out.data(), out_host_.mapped, out_floats * sizeof(float));
    return out;
  }

 private:
  struct GpuLayer {
    vk::BufferSlice norm1_w, norm1_b, norm2_w, norm2_b;  // [hidden]
    GpuMatrix qkv;                                       // [3 hidden][hidden]: q, k, v rows stacked
    vk::BufferSlice qkv_bias;                            // [3 hidden]
    GpuMatrix out, fc1, fc2;
    vk::BufferSlice out_bias, fc1_bias, fc2_bias;
  };
  struct GpuWeights {
    GpuMatrix patch;  // [hidden][3 p p]
    vk::BufferSlice patch_bias, position;
    std::vector<GpuLayer> layers;
    vk::BufferSlice post_w, post_b, soft_norm;
    GpuMatrix projection;  // [text_hidden][hidden]
  };

  vk::BufferSlice upload_floats(const std::vector<float>& v) {
    const vk::BufferSlice s = weights_->allocate(v.size() * sizeof(float));
    uploader_->write(s, 0, v.data(), v.size() * sizeof(float));
    weight_bytes_ += v.size() * sizeof(float);
    return s;
  }
  vk::BufferSlice upload_floats(const std::vector<float>& a, const std::vector<float>& b, const std::vector<float>& c) {
    std::vector<float> all(a);
    all.insert(all.end(), b.begin(), b.end());
    all.insert(all.end(), c.begin(), c.end());
    return upload_floats(all);
  }

  // The rows of `parts` (same type and width) one under the other, each padded with zeros to a
  // multiple of the kernel's K step. Frees each part's host storage once it is staged.
  GpuMatrix upload_matrix(std::initializer_list<Matrix*> parts) {
    const Matrix& first = **parts.begin();
    if (first.type != DType::F16 && first.type != DType::F32)
      throw Error(std::string("Vulkan vision tower: matrices in ") + to_string(first.type) + " are not supported");
    GpuMatrix g;
    g.f16 = first.type == DType::F16;
    g.k = uint32_t(first.cols);
    g.k_weight = groups(g.k, kWeightStep) * kWeightStep;
    for (const Matrix* m : parts) g.n += uint32_t(m->rows);
    const size_t element = g.f16 ? 2 : 4, row_out = g.k_weight * element, row_in = g.k * element;
    g.w = weights_->allocate(size_t(g.n) * row_out);
    weight_bytes_ += size_t(g.n) * row_out;
    std::vector<uint8_t> padded;
    size_t at = 0;
    for (Matrix* m : parts) {
      padded.assign(size_t(m->rows) * row_out, 0);
      for (int64_t r = 0; r < m->rows; ++r) std::memcpy(padded.data() + r * row_out, m->row(r), row_in);
      uploader_->write(g.w, at, padded.data(), padded.size());
      at += padded.size();
      m->storage.reset();
    }
    return g;
  }

  GpuWeights upload(SiglipWeights& w) {
    GpuWeights g;
    g.patch = upload_matrix({&w.patch});
    g.patch_bias = upload_floats(w.patch_bias);
    g.position = upload_floats(w.position);
    for (SiglipLayer& l : w.layers) {
      GpuLayer gl;
      gl.norm1_w = upload_floats(l.norm1_weight);
      gl.norm1_b = upload_floats(l.norm1_bias);
      gl.norm2_w = upload_floats(l.norm2_weight);
      gl.norm2_b = upload_floats(l.norm2_bias);
      gl.qkv = upload_matrix({&l.q, &l.k, &l.v});
      gl.qkv_bias = upload_floats(l.q_bias, l.k_bias, l.v_bias);
      gl.out = upload_matrix({&l.out});
      gl.out_bias = upload_floats(l.out_bias);
      gl.fc1 = upload_matrix({&l.fc1});
      gl.fc1_bias = upload_floats(l.fc1_bias);
      gl.fc2 = upload_matrix({&l.fc2});
      gl.fc2_bias = upload_floats(l.fc2_bias);
      g.layers.push_back(gl);
    }
    g.post_w = upload_floats(w.post_norm_weight);
    g.post_b = upload_floats(w.post_norm_bias);
    g.soft_norm = upload_floats(w.soft_norm);
    g.projection = upload_matrix({&w.projection});
    return g;
  }

  uint32_t patches() const {
    const uint32_t grid = uint32_t(config_.image_size / config_.patch_size);
    return grid * grid;
  }

  void allocate_activations() {
    const VisionConfig& c = config_;
    const size_t n = patches(), h = size_t(c.hidden), f = sizeof(float);
    patches_ = activations_->allocate(n * 3 * c.patch_size * c.patch_size * f);
    x_ = activations_->allocate(n * h * f);
    normed_ = activations_->allocate(n * h * f);
    qkv_ = activations_->allocate(n * 3 * h * f);
    attended_ = activations_->allocate(n * h * f);
    mlp_ = activations_->allocate(n * size_t(c.intermediate) * f);
    pooled_ = activations_->allocate(size_t(c.tokens_per_image) * h * f);
    out_ = activations_->allocate(size_t(c.tokens_per_image) * c.text_hidden * f);
    out_host_ = readback_->allocate(size_t(c.tokens_per_image) * c.text_hidden * f);
    unused_ = activations_->allocate(16);
  }

  template <typename Push>
  void add_step(const vk::Kernel& kernel, std::initializer_list<vk::BufferSlice> buffers, const Push& push,
                uint32_t gx, uint32_t gy, const char* op, int layer) {
    static_assert(sizeof(Push) <= sizeof(Step::push));
    const uint32_t limit_x = device_->limits().maxComputeWorkGroupCount[0];
    const uint32_t limit_y = device_->limits().maxComputeWorkGroupCount[1];
    if (gx > limit_x || gy > limit_y)
      throw Error(std::string("Vulkan vision tower: ") + op + " needs more workgroups than the device allows");
    Step s;
    s.kernel = &kernel;
    const std::vector<vk::BufferSlice> b(buffers);
    s.set = descriptors_->allocate(kernel, b);
    std::memcpy(s.push.data(), &push, sizeof push);
    s.push_bytes = sizeof push;
    s.groups_x = gx;
    s.groups_y = gy;
    s.op = op;
    s.layer = layer;
    steps_.push_back(s);
  }

  // y[m][n] (row stride y_stride) = x[m] . W[n] with the epilogue `flags`; bias and r may be unused_.
  void matmul(const GpuMatrix& w, const vk::BufferSlice& x, uint32_t m, const vk::BufferSlice& bias,
              const vk::BufferSlice& r, const vk::BufferSlice& y, uint32_t flags, const char* op, int layer) {
    const vk::Kernel& k = pipelines_->get(w.f16 ? "vision_matmul_f16" : "vision_matmul_f32", 5);
    const VisionMatmulPush push{m, w.n, w.k, w.k_weight, w.k, w.n, w.n, flags};
    add_step(k, {w.w, x, bias, r, y}, push, groups(w.n, kTileOutputs), groups(m, kTileTokens), op, layer);
  }

  void layer_norm(const vk::BufferSlice& x, const vk::BufferSlice& weight, const vk::BufferSlice& bias,
                  const vk::BufferSlice& y, const char* op, int layer) {
    const VisionNormPush push{uint32_t(config_.hidden), config_.layer_norm_eps};
    add_step(pipelines_->get("vision_layer_norm", 4), {x, weight, bias, y}, push, patches(), 1, op, layer);
  }

  void attention(int layer) {
    const uint32_t hd = uint32_t(config_.hidden / config_.heads), d4 = groups(hd, 4), h = uint32_t(config_.hidden);
    // Keys staged a step: 32 (head_dim 72: 18 KiB of tiles, so that several workgroups share an
    // SM's memory: the grid has only tokens / 64 x heads of them), fewer where memory is short.
    uint32_t keys = 32;
    while (keys > 8 && 2 * keys * d4 * 16 > device_->limits().maxComputeSharedMemorySize) keys /= 2;
    const VisionAttentionPush push{patches(), hd, 3 * h, h, 2 * h, h, 1.0f / std::sqrt(float(hd))};
    add_step(pipelines_->get("vision_attention", 2, {d4, keys}), {qkv_, attended_}, push,
             groups(patches(), kQueriesPerGroup), uint32_t(config_.heads), "attention", layer);
  }

  void record_steps(const GpuWeights& g) {
    const VisionConfig& c = config_;
    const uint32_t n = patches();
    matmul(g.patch, patches_, n, g.patch_bias, g.position, x_, kBias | kAddR, "patch_embed", -1);
    for (size_t i = 0; i < g.layers.size(); ++i) {
      const GpuLayer& l = g.layers[i];
      const int layer = int(i);
      layer_norm(x_, l.norm1_w, l.norm1_b, normed_, "layer_norm1", layer);
      matmul(l.qkv, normed_, n, l.qkv_bias, unused_, qkv_, kBias, "qkv", layer);
      attention(layer);
      matmul(l.out, attended_, n, l.out_bias, unused_, x_, kBias | kAccumulate, "out", layer);
      layer_norm(x_, l.norm2_w, l.norm2_b, normed_, "layer_norm2", layer);
      matmul(l.fc1, normed_, n, l.fc1_bias, unused_, mlp_, kBias | kGelu, "fc1", layer);
      matmul(l.fc2, mlp_, n, l.fc2_bias, unused_, x_, kBias | kAccumulate, "fc2", layer);
    }
    layer_norm(x_, g.post_w, g.post_b, normed_, "post_layer_norm", -1);
    const uint32_t grid = uint32_t(c.image_size / c.patch_size);
    const uint32_t side = uint32_t(std::lround(std::sqrt(double(c.tokens_per_image))));
    if (side == 0 || side * side != uint32_t(c.tokens_per_image) || grid % side != 0)
      throw Error("Vulkan vision tower: " + std::to_string(c.tokens_per_image) + " tokens do not pool a " +
                  std::to_string(grid) + " x " + std::to_string(grid) + " grid");
    const VisionPoolPush pool{uint32_t(c.hidden), grid, side, grid / side, c.layer_norm_eps};
    add_step(pipelines_->get("vision_pool_norm", 3), {normed_, g.soft_norm, pooled_}, pool, side * side, 1, "pool_norm",
             -1);
    matmul(g.projection, pooled_, side * side, unused_, unused_, out_, 0, "projection", -1);
  }

  VisionConfig config_;
  std::unique_ptr<vk::Device> device_;
  std::unique_ptr<vk::MemoryArena> weights_, activations_, readback_;
  std::unique_ptr<vk::Uploader> uploader_;
  std::unique_ptr<vk::PipelineLibrary> pipelines_;
  std::unique_ptr<vk::DescriptorAllocator> descriptors_;
  std::unique_ptr<vk::CommandSequence> sequence_;
  std::string name_;
  uint64_t weight_bytes_ = 0;
  bool profiling_ = false;
  // Activations ([patches] rows unless said): the flattened patches [3 p p], x and its norm
  // [hidden], q|k|v [3 hidden], the attention's output [hidden], the MLP's [intermediate]; the
  // pooled tokens [tokens_per_image][hidden] and the output [tokens_per_image][text_hidden].
  vk::BufferSlice patches_, x_, normed_, qkv_, attended_, mlp_, pooled_, out_, out_host_;
  vk::BufferSlice unused_;  // bound where a kernel's optional input is switched off
  std::vector<Step> steps_;
};

}  // namespace

std::unique_ptr<VulkanVisionEncoder> make_vulkan_vision_encoder(SiglipWeights weights,
                                                                const VulkanVisionOptions& options) {
  return std::make_unique<Tower>(std::move(weights), options);
}

}  // namespace kiln
