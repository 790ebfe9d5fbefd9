// Random tower weights of a real shape, for `kiln bench --image`: the same work as real ones.
#include <cmath>

#include "kiln/types.h"
#include "quant/convert.h"
#include "vision/vision_weights.h"

namespace kiln {
namespace {

// Deterministic uniform values in [-scale, scale) (splitmix64).
class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed) {}
  float next(float scale) {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return scale * (static_cast<float>(z >> 40) * (2.0f / 16777216.0f) - 1.0f);
  }
  std::vector<float> values(int64_t n, float center, float scale) {
    std::vector<float> v(static_cast<size_t>(n));
    for (float& x : v) x = center + next(scale);
    return v;
  }
  Matrix matrix(DType type, int64_t rows, int64_t cols) {
    Matrix m;
    m.type = type;
    m.rows = rows;
    m.cols = cols;
    m.storage = allocate_aligned(m.bytes());
    const float scale = std::sqrt(3.0f / static_cast<float>(cols));  // unit variance out for unit variance in
    std::vector<float> line(static_cast<size_t>(cols));
    for (int64_t r = 0; r < rows; ++r) {
      for (float& x : line) x = next(scale);
      quantize_row(type, line.data(), cols, m.row(r));
    }
    return m;
  }

 private:
  uint64_t state_;
};

}  // namespace

SiglipWeights synthetic_siglip_weights(const VisionConfig& c, DType matrices, uint64_t seed) {
  check_vision_matrix_type(matrices);
  Random random(seed);
  const int64_t h = c.hidden, p = c.patch_size, grid = c.image_size / c.patch_size;
  SiglipWeights w;
  w.config = c;
  w.patch = random.matrix(DType::F32, h, 3 * p * p);
  w.patch_bias = random.values(h, 0, 0.1f);
  w.position = random.values(grid * grid * h, 0, 0.5f);
  for (int l = 0; l < c.layers; ++l) {
    SiglipLayer layer;
    layer.norm1_weight = random.values(h, 1, 0.1f);
    layer.norm1_bias = random.values(h, 0, 0.1f);
    layer.norm2_weight = random.values(h, 1, 0.1f);
    layer.norm2_bias = random.values(h, 0, 0.1f);
    layer.q = random.matrix(matrices, h, h);
    layer.k = random.matrix(matrices, h, h);
    layer.v = random.matrix(matrices, h, h);
    layer.out = random.matrix(matrices, h, h);
    layer.q_bias = random.values(h, 0, 0.1f);
    layer.k_bias = random.values(h, 0, 0.1f);
    layer.v_bias = random.values(h, 0, 0.1f);
    layer.out_bias = random.values(h, 0, 0.1f);
    layer.fc1 = random.matrix(matrices, c.intermediate, h);
    layer.fc1_bias = random.values(c.intermediate, 0, 0.1f);
    layer.fc2 = random.matrix(matrices, h, c.intermediate);
    layer.fc2_bias = random.values(h, 0, 0.1f);
    w.layers.push_back(std::move(layer));
  }
  w.post_norm_weight = random.values(h, 1, 0.1f);
  w.post_norm_bias = random.values(h, 0, 0.1f);
  w.soft_norm = random.values(h, 1, 0.1f);
  w.projection = random.matrix(matrices, c.text_hidden, h);
  return w;
}

}  // namespace kiln
