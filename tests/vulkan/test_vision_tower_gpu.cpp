// The vision tower on Vulkan: each of its kernels (kernels/vulkan/vision_*.comp) against a CPU
// reference on shapes that are not multiples of their tiles, and the whole encoder against the CPU
// encoder on the tiny vision fixture's exact.png, with F32 and F16 matrices.
#include <QtTest>

#include <cmath>

#include "runtime/vulkan/vision_tower_gpu.h"
#include "test_files.h"
#include "vk_harness.h"
#include "vision/vision_weights.h"
#include "vision_pixels.h"

using namespace kiln;
using namespace kiln::test;

namespace {

const std::string kVision = KILN_TEST_DATA "/vision";

// w's rows on the device as vision_matmul.comp reads them: zero-padded to k_weight values.
vk::BufferSlice padded_weights(VkHarness& h, const Matrix& w, uint32_t k_weight) {
  const size_t element = w.type == DType::F16 ? 2 : 4;
  std::vector<uint8_t> bytes(size_t(w.rows) * k_weight * element, 0);
  for (int64_t r = 0; r < w.rows; ++r) std::memcpy(&bytes[r * k_weight * element], w.row(r), w.cols * element);
  return h.upload(bytes);
}

double gelu_tanh(double v) { return 0.5 * v * (1.0 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v))); }

// max |a - b| / max |b|, infinity for a NaN in a.
double max_relative(const std::vector<float>& a, const std::vector<float>& b) {
  double diff = 0, scale = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    if (!std::isfinite(a[i])) return INFINITY;
    diff = std::max(diff, std::fabs(double(a[i]) - b[i]));
    scale = std::max(scale, std::fabs(double(b[i])));
  }
  return diff / scale;
}

// vision_matmul on m tokens of k values into n outputs with `flags`, against the same product in
// double from the dequantized weights.
double check_matmul(VkHarness& h, DType type, uint32_t m, uint32_t n, uint32_t k, uint32_t flags) {
  const Matrix w = random_matrix(type, n, k, 11 + k);
  const uint32_t k_weight = (k + 31) / 32 * 32;
  const std::vector<float> x = random_floats(size_t(m) * k, 2), bias = random_floats(n, 3);
  const std::vector<float> r = random_floats(size_t(m) * n, 4), y0 = random_floats(size_t(m) * n, 5);
  std::vector<float> expected(size_t(m) * n), row(k);
  for (uint32_t j = 0; j < n; ++j) {
    matrix_row(w, j, row.data());
    for (uint32_t i = 0; i < m; ++i) {
      double v = 0;
      for (uint32_t kk = 0; kk < k; ++kk) v += double(x[i * k + kk]) * row[kk];
      if (flags & vk::kVisionBias) v += bias[j];
      if (flags & vk::kVisionGelu) v = gelu_tanh(v);
      if (flags & vk::kVisionAddR) v += r[i * n + j];
      if (flags & vk::kVisionAccumulate) v += y0[i * n + j];
      expected[i * n + j] = float(v);
    }
  }
  const vk::BufferSlice ws = padded_weights(h, w, k_weight), xs = h.upload(x), bs = h.upload(bias), rs = h.upload(r);
  const vk::BufferSlice ys = (flags & vk::kVisionAccumulate) ? h.upload(y0) : h.poisoned(y0.size());
  const vk::Kernel& kernel = h.pipelines->get(type == DType::F16 ? "vision_matmul_f16" : "vision_matmul_f32", 5);
  h.run(kernel, {ws, xs, bs, rs, ys}, vk::VisionMatmulPush{m, n, k, k_weight, k, n, n, flags}, (n + 63) / 64,
        (m + 127) / 128);
  return max_relative(h.read(ys, expected.size()), expected);
}

// Attention of `tokens` queries over as many keys in `heads` heads of head_dim, read from one
// q|k|v buffer as the tower lays it out, against a softmax in double.
double check_attention(VkHarness& h, uint32_t tokens, uint32_t heads, uint32_t head_dim, uint32_t keys_per_step) {
  const uint32_t width = heads * head_dim, stride = 3 * width;
  const std::vector<float> qkv = random_floats(size_t(tokens) * stride, 7, -2.0f, 2.0f);
  const double scale = 1.0 / std::sqrt(double(head_dim));
  std::vector<float> expected(size_t(tokens) * width);
  std::vector<double> p(tokens);
  for (uint32_t hh = 0; hh < heads; ++hh)
    for (uint32_t t = 0; t < tokens; ++t) {
      double top = -1e300, sum = 0;
      for (uint32_t j = 0; j < tokens; ++j) {
        double s = 0;
        for (uint32_t d = 0; d < head_dim; ++d)
          s += double(qkv[t * stride + hh * head_dim + d]) * qkv[j * stride + width + hh * head_dim + d];
        p[j] = s * scale;
        top = std::max(top, p[j]);
      }
      for (double& v : p) sum += (v = std::exp(v - top));
      for (uint32_t d = 0; d < head_dim; ++d) {
        double o = 0;
        for (uint32_t j = 0; j < tokens; ++j) o += p[j] * qkv[j * stride + 2 * width + hh * head_dim + d];
        expected[t * width + hh * head_dim + d] = float(o / sum);
      }
    }
  const vk::BufferSlice in = h.upload(qkv), out = h.poisoned(expected.size());
  const vk::Kernel& k = h.pipelines->get("vision_attention", 2, {(head_dim + 3) / 4, keys_per_step});
  h.run(k, {in, out}, vk::VisionAttentionPush{tokens, head_dim, stride, width, 2 * width, width, float(scale)},
        (tokens + 63) / 64, heads);
  return max_relative(h.read(out, expected.size()), expected);
}

// The Vulkan encoder's output on exact.png against the CPU encoder's, both with `matrices`.
double gpu_against_cpu(DType matrices) {
  const std::optional<VisionSource> source = find_vision(open_checkpoint_header(kVision), "");
  if (!source) qFatal("the vision fixture has no tower");
  const std::vector<float> pixels = exact_pixels(source->config);
  ThreadPool pool(2);
  const std::vector<float> cpu = VisionEncoder::load(*source, matrices)->encode(pixels, pool);
  const auto gpu = make_vulkan_vision_encoder(load_siglip_weights(*source, matrices), {-1, true});
  const std::vector<float> first = gpu->encode(pixels, pool);
  if (gpu->encode(pixels, pool) != first) return INFINITY;  // a second run recomputes the same
  if (first.size() != cpu.size()) return INFINITY;
  return max_relative(first, cpu);
}

// One layer of Gemma 3 4B's tower at its real widths (patches of 14 pixels: K 588, hidden 1152 in 16
// heads of 72, MLP 4304, projection to 2560) on a 224-pixel image (256 patches pooled to 16 tokens),
// synthetic F16 weights: the Vulkan encoder against the CPU one.
double real_widths_gpu_against_cpu() {
  VisionConfig c;
  c.image_size = 224;
  c.patch_size = 14;
  c.hidden = 1152;
  c.intermediate = 4304;
  c.layers = 1;
  c.heads = 16;
  c.tokens_per_image = 16;
  c.text_hidden = 2560;
  const std::vector<float> pixels = random_floats(3 * size_t(c.image_size) * c.image_size, 9);
  ThreadPool pool(2);
  const std::vector<float> cpu = VisionEncoder::synthetic(c, DType::F16, 77)->encode(pixels, pool);
  const auto gpu = make_vulkan_vision_encoder(synthetic_siglip_weights(c, DType::F16, 77), {-1, true});
  return max_relative(gpu->encode(pixels, pool), cpu);
}

}  // namespace

class VisionTowerGpuTest : public QObject {
  Q_OBJECT

 private slots:
  void matmul_matches_cpu_data() {
    QTest::addColumn<int>("type");
    QTest::addColumn<uint32_t>("m");
    QTest::addColumn<uint32_t>("n");
    QTest::addColumn<uint32_t>("k");
    QTest::addColumn<uint32_t>("flags");
    for (DType t : {DType::F32, DType::F16}) {
      const std::string name = to_string(t);
      QTest::newRow((name + " 67x93x75 bias gelu").c_str()) << int(t) << 67u << 93u << 75u << (vk::kVisionBias | vk::kVisionGelu);
      QTest::newRow((name + " 130x70x588 bias + r").c_str()) << int(t) << 130u << 70u << 588u << (vk::kVisionBias | vk::kVisionAddR);
      QTest::newRow((name + " 5x40x430 bias, residual").c_str()) << int(t) << 5u << 40u << 430u
                                                                  << (vk::kVisionBias | vk::kVisionAccumulate);
      QTest::newRow((name + " 64x64x32 plain").c_str()) << int(t) << 64u << 64u << 32u << 0u;
      QTest::newRow((name + " 300x130x64 bias").c_str()) << int(t) << 300u << 130u << 64u << vk::kVisionBias;
    }
  }
  void matmul_matches_cpu() {
    QFETCH(int, type);
    QFETCH(uint32_t, m);
    QFETCH(uint32_t, n);
    QFETCH(uint32_t, k);
    QFETCH(uint32_t, flags);
    VkHarness h;
    const double error = check_matmul(h, DType(type), m, n, k, flags);
    QVERIFY2(error < 1e-5, qPrintable(QString("relative error %1").arg(error)));
  }

  void layer_norm_matches_cpu() {
    VkHarness h;
    const uint32_t rows = 37, cols = 300;
    const std::vector<float> x = random_floats(size_t(rows) * cols, 1, -3.0f, 5.0f);
    const std::vector<float> w = random_floats(cols, 2, 0.5f, 1.5f), b = random_floats(cols, 3);
    const float eps = 1e-6f;
    std::vector<float> expected(x.size());
    for (uint32_t r = 0; r < rows; ++r) {
      double mean = 0, var = 0;
      for (uint32_t i = 0; i < cols; ++i) mean += x[r * cols + i];
      mean /= cols;
      for (uint32_t i = 0; i < cols; ++i) var += (x[r * cols + i] - mean) * (x[r * cols + i] - mean);
      const double inv = 1.0 / std::sqrt(var / cols + eps);
      for (uint32_t i = 0; i < cols; ++i) expected[r * cols + i] = float((x[r * cols + i] - mean) * inv * w[i] + b[i]);
    }
    const vk::BufferSlice xs = h.upload(x), ws = h.upload(w), bs = h.upload(b), ys = h.poisoned(x.size());
    h.run(h.pipelines->get("vision_layer_norm", 4), {xs, ws, bs, ys}, vk::VisionNormPush{cols, eps}, rows);
    const double error = max_relative(h.read(ys, expected.size()), expected);
    QVERIFY2(error < 1e-5, qPrintable(QString("relative error %1").arg(error)));
  }

  void attention_matches_cpu_data() {
    QTest::addColumn<uint32_t>("tokens");
    QTest::addColumn<uint32_t>("heads");
    QTest::addColumn<uint32_t>("head_dim");
    QTest::addColumn<uint32_t>("keys_per_step");
    QTest::newRow("301 tokens, 3 heads of 16") << 301u << 3u << 16u << 64u;
    QTest::newRow("259 tokens, 2 heads of 72") << 259u << 2u << 72u << 16u;
    QTest::newRow("70 tokens, 1 head of 70") << 70u << 1u << 70u << 32u;  // a head_dim not of 4
    QTest::newRow("130 tokens, 2 heads of 20") << 130u << 2u << 20u << 8u;  // an odd number of vec4
  }
  void attention_matches_cpu() {
    QFETCH(uint32_t, tokens);
    QFETCH(uint32_t, heads);
    QFETCH(uint32_t, head_dim);
    QFETCH(uint32_t, keys_per_step);
    VkHarness h;
    const double error = check_attention(h, tokens, heads, head_dim, keys_per_step);
    QVERIFY2(error < 1e-5, qPrintable(QString("relative error %1").arg(error)));
  }

  // 10 x 10 patches pooled 2 x 2 into 5 x 5 tokens, then RMSNorm.
  void pool_norm_matches_cpu() {
    VkHarness h;
    const uint32_t grid = 10, side = 5, kernel = 2, hidden = 300;
    const std::vector<float> x = random_floats(size_t(grid) * grid * hidden, 4), w = random_floats(hidden, 5, 0.5f, 1.5f);
    const float eps = 1e-6f;
    std::vector<float> expected(size_t(side) * side * hidden);
    for (uint32_t t = 0; t < side * side; ++t) {
      std::vector<double> p(hidden, 0.0);
      double sq = 0;
      for (uint32_t i = 0; i < hidden; ++i) {
        for (uint32_t dy = 0; dy < kernel; ++dy)
          for (uint32_t dx = 0; dx < kernel; ++dx)
            p[i] += x[(((t / side) * kernel + dy) * grid + (t % side) * kernel + dx) * hidden + i];
        p[i] /= kernel * kernel;
        sq += p[i] * p[i];
      }
      const double inv = 1.0 / std::sqrt(sq / hidden + eps);
      for (uint32_t i = 0; i < hidden; ++i) expected[t * hidden + i] = float(p[i] * inv * w[i]);
    }
    const vk::BufferSlice xs = h.upload(x), ws = h.upload(w), ys = h.poisoned(expected.size());
    h.run(h.pipelines->get("vision_pool_norm", 3), {xs, ws, ys}, vk::VisionPoolPush{hidden, grid, side, kernel, eps},
          side * side);
    const double error = max_relative(h.read(ys, expected.size()), expected);
    QVERIFY2(error < 1e-5, qPrintable(QString("relative error %1").arg(error)));
  }

  void encoder_matches_cpu_f32() {
    const double error = gpu_against_cpu(DType::F32);
    qInfo("F32: relative error %g", error);
    QVERIFY2(error < 1e-4, qPrintable(QString("relative error %1").arg(error)));
  }
  void encoder_matches_cpu_f16() {
    const double error = gpu_against_cpu(DType::F16);
    qInfo("F16: relative error %g", error);
    QVERIFY2(error < 2e-3, qPrintable(QString("relative error %1").arg(error)));
  }
  void real_widths_match_cpu() {
    const double error = real_widths_gpu_against_cpu();
    qInfo("4B widths, one layer: relative error %g", error);
    QVERIFY2(error < 2e-3, qPrintable(QString("relative error %1").arg(error)));
  }
};

QTEST_GUILESS_MAIN(VisionTowerGpuTest)
#include "test_vision_tower_gpu.moc"
