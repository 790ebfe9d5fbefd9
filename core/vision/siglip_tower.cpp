// The SigLIP tower's forward pass and Gemma 3's projector on the CPU, as transformers computes
// SiglipVisionModel and Gemma3MultiModalProjector:
//   x = patches . W_patch^T + b + position            [patches][hidden]
//   per layer: x += out(attention(LN1(x)));  x += fc2(gelu_tanh(fc1(LN2(x))))
//   x = post LN(x); average pooling of the patch grid; RMSNorm (1 + w); . projection
#include <algorithm>
#include <cmath>

#include "kiln/types.h"
#include "runtime/cpu/fast_exp.h"
#include "runtime/cpu/matmul.h"
#include "runtime/cpu/ops.h"
#include "vision/siglip_attention.h"
#include "vision/vision_weights.h"

namespace kiln {
namespace {

constexpr int64_t kRowGrain = 16;  // rows a thread takes at a time in the element-wise steps

// out[r] = (x[r] - mean) / sqrt(variance + eps) * weight + bias, for each of `rows` rows.
void layer_norm(const float* x, int64_t rows, int64_t n, const std::vector<float>& weight,
                const std::vector<float>& bias, float eps, float* out, ThreadPool& pool) {
  pool.parallel_for(rows, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const float* in = x + r * n;
      double sum = 0;
      for (int64_t i = 0; i < n; ++i) sum += in[i];
      const float mean = static_cast<float>(sum / double(n));
      double squares = 0;
      for (int64_t i = 0; i < n; ++i) squares += double(in[i] - mean) * double(in[i] - mean);
      const float inv = 1.0f / std::sqrt(static_cast<float>(squares / double(n)) + eps);
      float* o = out + r * n;
      for (int64_t i = 0; i < n; ++i) o[i] = (in[i] - mean) * inv * weight[i] + bias[i];
    }
  }, kRowGrain);
}

void add_bias(float* x, int64_t rows, const std::vector<float>& bias, ThreadPool& pool) {
  const int64_t n = static_cast<int64_t>(bias.size());
  pool.parallel_for(rows, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      float* row = x + r * n;
      for (int64_t i = 0; i < n; ++i) row[i] += bias[i];
    }
  }, kRowGrain);
}

// x += y + bias: a residual connection after a biased projection.
void add_residual(float* x, const float* y, int64_t rows, const std::vector<float>& bias, ThreadPool& pool) {
  const int64_t n = static_cast<int64_t>(bias.size());
  pool.parallel_for(rows, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      float* row = x + r * n;
      const float* add = y + r * n;
      for (int64_t i = 0; i < n; ++i) row[i] += add[i] + bias[i];
    }
  }, kRowGrain);
}

// x = gelu_tanh(x + bias) = v / (1 + e^(-2u)), u = sqrt(2 / pi) (v + 0.044715 v^3).
void bias_gelu(float* x, int64_t rows, const std::vector<float>& bias, ThreadPool& pool) {
  const int64_t n = static_cast<int64_t>(bias.size());
  constexpr float kSqrt2OverPi = 0.7978845608028654f;
  pool.parallel_for(rows, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      float* row = x + r * n;
      for (int64_t i = 0; i < n; ++i) {
        const float v = row[i] + bias[i];
        const float u = kSqrt2OverPi * (v + 0.044715f * v * v * v);
        row[i] = v / (1.0f + exp_clamped(-2.0f * u));
      }
    }
  }, kRowGrain);
}

class SiglipEncoder final : public VisionEncoder {
 public:
  explicit SiglipEncoder(SiglipWeights weights) : w_(std::move(weights)) {}

  const VisionConfig& config() const override { return w_.config; }
  uint64_t bytes() const override { return w_.bytes(); }

  std::vector<float> encode(std::span<const float> pixels, ThreadPool& pool) const override {
    const VisionConfig& c = w_.config;
    const int64_t size = c.image_size;
    if (static_cast<int64_t>(pixels.size()) != 3 * size * size)
      throw Error("vision tower: " + std::to_string(pixels.size()) + " pixel values, the tower takes 3 x " +
                  std::to_string(size) + " x " + std::to_string(size));
    const int64_t grid = size / c.patch_size, patches = grid * grid, h = c.hidden;
    std::vector<float> x = embed_patches(pixels, pool);  // [patches][hidden]
    Buffers b(patches, h, c.intermediate);
    for (const SiglipLayer& layer : w_.layers) run_layer(layer, x, b, pool);
    layer_norm(x.data(), patches, h, w_.post_norm_weight, w_.post_norm_bias, c.layer_norm_eps, b.normed.data(), pool);
    return project(b.normed, pool);
  }

 private:
  struct Buffers {
    Buffers(int64_t patches, int64_t hidden, int64_t intermediate)
        : normed(patches * hidden), q(patches * hidden), k(siglip_key_rows(patches) * hidden, 0.0f),
          v(patches * hidden), attended(patches * hidden), mlp(patches * intermediate) {}
    std::vector<float> normed, q, k, v, attended;  // [patches][hidden] (k: padded rows stay zero)
    std::vector<float> mlp;                        // [patches][intermediate]
  };

  // The stride-p convolution as a product: each patch flattened in the weight's (channel, y, x) order.
  std::vector<float> embed_patches(std::span<const float> pixels, ThreadPool& pool) const {
    const VisionConfig& c = w_.config;
    const int64_t p = c.patch_size, size = c.image_size, grid = size / p, patches = grid * grid;
    const int64_t flat = 3 * p * p;
    std::vector<float> flattened(static_cast<size_t>(patches * flat));
    pool.parallel_for(patches, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const int64_t row = i / grid, col = i % grid;
        float* out = flattened.data() + i * flat;
        for (int64_t ch = 0; ch < 3; ++ch)
          for (int64_t y = 0; y < p; ++y) {
            const float* line = pixels.data() + (ch * size + row * p + y) * size + col * p;
            std::copy(line, line + p, out + (ch * p + y) * p);
          }
      }
    }, kRowGrain);
    std::vector<float> x(static_cast<size_t>(patches * c.hidden));
    matmul(w_.patch, flattened.data(), patches, x.data(), pool);
    add_residual(x.data(), w_.position.data(), patches, w_.patch_bias, pool);
    return x;
  }

  void run_layer(const SiglipLayer& l, std::vector<float>& x, Buffers& b, ThreadPool& pool) const {
    const VisionConfig& c = w_.config;
    const int64_t patches = static_cast<int64_t>(x.size()) / c.hidden, h = c.hidden;
    layer_norm(x.data(), patches, h, l.norm1_weight, l.norm1_bias, c.layer_norm_eps, b.normed.data(), pool);
    matmul(l.q, b.normed.data(), patches, b.q.data(), pool);
    matmul(l.k, b.normed.data(), patches, b.k.data(), pool);
    matmul(l.v, b.normed.data(), patches, b.v.data(), pool);
    add_bias(b.q.data(), patches, l.q_bias, pool);
    add_bias(b.k.data(), patches, l.k_bias, pool);
    add_bias(b.v.data(), patches, l.v_bias, pool);
    siglip_attention(b.q.data(), b.k.data(), b.v.data(), patches, c.heads, c.hidden / c.heads, b.attended.data(), pool);
    matmul(l.out, b.attended.data(), patches, b.normed.data(), pool);
    add_residual(x.data(), b.normed.data(), patches, l.out_bias, pool);

    layer_norm(x.data(), patches, h, l.norm2_weight, l.norm2_bias, c.layer_norm_eps, b.normed.data(), pool);
    matmul(l.fc1, b.normed.data(), patches, b.mlp.data(), pool);
    bias_gelu(b.mlp.data(), patches, l.fc1_bias, pool);
    matmul(l.fc2, b.mlp.data(), patches, b.normed.data(), pool);
    add_residual(x.data(), b.normed.data(), patches, l.fc2_bias, pool);
  }

  // Average pooling of the grid (row-major patches) to tokens_per_image cells, row-major, then the
  // soft-embedding RMSNorm and the projection to the text model's width.
  std::vector<float> project(const std::vector<float>& x, ThreadPool& pool) const {
    const VisionConfig& c = w_.config;
    const int64_t grid = c.image_size / c.patch_size, h = c.hidden;
    const int64_t side = std::lround(std::sqrt(double(c.tokens_per_image)));
    const int64_t kernel = grid / side, tokens = side * side;
    std::vector<float> pooled(static_cast<size_t>(tokens * h), 0.0f);
    const float inv_area = 1.0f / static_cast<float>(kernel * kernel);
    pool.parallel_for(tokens, [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) {
        float* out = pooled.data() + t * h;
        const int64_t row0 = (t / side) * kernel, col0 = (t % side) * kernel;
        for (int64_t y = 0; y < kernel; ++y)
          for (int64_t xx = 0; xx < kernel; ++xx) {
            const float* in = x.data() + ((row0 + y) * grid + col0 + xx) * h;
            for (int64_t i = 0; i < h; ++i) out[i] += in[i];
          }
        for (int64_t i = 0; i < h; ++i) out[i] *= inv_area;
        rms_norm(out, w_.soft_norm.data(), h, c.layer_norm_eps, out);
      }
    });
    std::vector<float> result(static_cast<size_t>(tokens * c.text_hidden));
    matmul(w_.projection, pooled.data(), tokens, result.data(), pool);
    return result;
  }

  SiglipWeights w_;
};

}  // namespace

std::unique_ptr<VisionEncoder> VisionEncoder::load(const VisionSource& source, DType matrices) {
  return std::make_unique<SiglipEncoder>(load_siglip_weights(source, matrices));
}

std::unique_ptr<VisionEncoder> VisionEncoder::synthetic(const VisionConfig& config, DType matrices, uint64_t seed) {
  return std::make_unique<SiglipEncoder>(synthetic_siglip_weights(config, matrices, seed));
}

}  // namespace kiln
