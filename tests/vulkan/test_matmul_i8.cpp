// The int8 prefill tiles (quantize_i8 + matmul_i8_*, KernelPlan prefill int_dot) against the CPU
// reference matmul on the same Q8_0/Q4_0/Q5_0/IQ4_NL weights. The kernel rounds each group of a 32-block of
// activations (vk::kQuantizeGroups of them) to int8 with a scale of its own; its error is that rounding's and no more: next to the CPU on the rounded
// activations it agrees to fp32 rounding, and its distance to the CPU on the exact activations is
// the rounding's own. Runs wherever the device has integer dot products (lavapipe in CI).
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include "quant/block32_formats.h"
#include "quant/convert.h"
#include "quant/iq4_xs.h"
#include "runtime/cpu/matmul.h"
#include "runtime/cpu/ops.h"
#include "runtime/cpu/thread_pool.h"
#include "runtime/vulkan/forward.h"
#include "runtime/vulkan/kernel_plan.h"
#include "runtime/vulkan/model_gpu.h"
#include "runtime/vulkan/push_constants.h"
#include "runtime/vulkan/weight_layout.h"
#include "vk_harness.h"

using namespace kiln;
using namespace kiln::test;

namespace {

// What quantize_i8.comp makes of a 32-block: for each group, scale max|x| / 127 and
// q = x / scale rounded to nearest.
constexpr int kGroups = int(vk::kQuantizeGroups), kGroupSize = 32 / kGroups;
struct RoundedBlock {
  int8_t q[32];
  float scale[kGroups];
};
RoundedBlock round_block(const float* x) {
  RoundedBlock b;
  for (int g = 0; g < kGroups; ++g) {
    float amax = 0;
    for (int i = kGroupSize * g; i < kGroupSize * (g + 1); ++i) amax = std::max(amax, std::fabs(x[i]));
    const float inv = amax > 0 ? 127.0f / amax : 0.0f;
    b.scale[g] = amax / 127.0f;
    for (int i = kGroupSize * g; i < kGroupSize * (g + 1); ++i) b.q[i] = int8_t(std::nearbyint(x[i] * inv));
  }
  return b;
}

// The activations as the kernel sees them: every block rounded and scaled back.
std::vector<float> rounded(const std::vector<float>& x) {
  std::vector<float> r(x.size());
  for (size_t at = 0; at < x.size(); at += 32) {
    const RoundedBlock b = round_block(&x[at]);
    for (int i = 0; i < 32; ++i) r[at + i] = float(b.q[i]) * b.scale[i / kGroupSize];
  }
  return r;
}

// Uniform in [-1, 1), times `scale`, with every 7th element an outlier 40 times larger (a block's
// scale follows its largest element; the rest of the block loses precision, not the next block).
std::vector<float> activations(size_t n, uint64_t seed, float scale, bool outliers) {
  std::vector<float> x = random_floats(n, seed);
  for (size_t i = 0; i < n; ++i) x[i] *= scale * (outliers && i % 7 == 3 ? 40.0f : 1.0f);
  return x;
}

const char* suffix(DType t) {
  switch (t) {
    case DType::Q8_0: return "q8_0";
    case DType::Q4_0: return "q4_0";
    case DType::Q5_0: return "q5_0";
    case DType::IQ4_XS: return "iq4_xs";
    default: return "iq4_nl";
  }
}

// random_matrix's weights; IQ4_NL and IQ4_XS, which Kiln reads but does not write, as random bytes
// (every grid value, every 6-bit sub-block scale) with scales that give weights of the same size.
Matrix weights(DType t, int64_t rows, int64_t cols, uint64_t seed) {
  if (t != DType::IQ4_NL && t != DType::IQ4_XS) return random_matrix(t, rows, cols, seed);
  Matrix m;
  m.type = t;
  m.rows = rows;
  m.cols = cols;
  m.storage = allocate_aligned(m.bytes());
  std::mt19937_64 rng(seed);
  for (size_t i = 0; i < m.bytes(); ++i) m.storage.get()[i] = uint8_t(rng());
  const bool xs = t == DType::IQ4_XS;  // d times sub-block scales of up to 32
  std::uniform_real_distribution<float> scale(0.5f / 127.0f / (xs ? 32.0f : 1.0f), 1.0f / 127.0f / (xs ? 32.0f : 1.0f));
  for (size_t b = 0; b < m.bytes(); b += xs ? sizeof(BlockIQ4_XS) : sizeof(BlockIQ4_NL)) {
    const uint16_t d = float_to_fp16(scale(rng));
    std::memcpy(m.storage.get() + b, &d, 2);
  }
  return m;
}

}  // namespace

class VulkanMatmulI8 : public QObject {
  Q_OBJECT
  VkHarness h;
  ThreadPool pool{2};

  // y = W x for tokens of x on the GPU through quantize_i8 and matmul_i8 (GLU: W's rows are a's and
  // b's interleaved, as the model uploads gate and up), in chunks of chunk_rows rows (0: one).
  std::vector<float> gpu(const Matrix& a, const Matrix* b, const std::vector<float>& x, int tokens, int chunk_rows) {
    const bool glu = b != nullptr;
    const int64_t rows = a.rows, cols = a.cols, dev_rows = glu ? 2 * rows : rows;
    auto row_ptr = [&](int64_t r) { return glu ? (r % 2 ? b->row(r / 2) : a.row(r / 2)) : a.row(r); };
    const uint64_t limit = chunk_rows ? uint64_t(chunk_rows) * vk::layout_weight_bytes(a.type, 1, cols) : ~0ull;
    const vk::DeviceMatrix dm = vk::upload_matrix(*h.arena, *h.uploader, a.type, dev_rows, cols, row_ptr, limit, 64);
    h.uploader->finish();
    last_chunks = dm.chunks.size();

    // The input sits at an offset inside a wider row, as the logits' last row does.
    const uint32_t x_offset = 8, x_stride = uint32_t(cols) + 4;
    std::vector<float> padded(size_t(x_offset) + size_t(tokens) * x_stride, 1e30f);
    for (int t = 0; t < tokens; ++t)
      std::copy_n(&x[size_t(t) * cols], cols, &padded[x_offset + size_t(t) * x_stride]);
    const uint32_t nb = uint32_t(cols / 32);
    const vk::BufferSlice xs = h.upload(padded), ys = h.poisoned(size_t(tokens) * rows);
    last_xq = h.poisoned(size_t(tokens) * nb * vk::kQuantizedBlockBytes / 4);
    const vk::Kernel& quantize = h.pipelines->get("quantize_i8", 2);
    const vk::Kernel& k = h.pipelines->get(vk::matmul_i8_kernel_name(a.type, glu), 4);
    const VkDescriptorSet qset = h.descriptors->allocate(quantize, std::vector{xs, last_xq});
    std::vector<VkDescriptorSet> sets;
    for (const auto& c : dm.chunks) sets.push_back(h.descriptors->allocate(k, std::vector{c.weights, c.scales, last_xq, ys}));
    h.seq->begin(false);
    vk::record_quantize(*h.seq, quantize, qset, tokens, nb, x_offset, x_stride, -1);
    vk::record_matrix(*h.seq, k, dm.chunks, dm.cols, sets,
                      vk::MatrixCall{glu, true, tokens, x_offset, x_stride, uint32_t(rows), vk::kMatmulTile}, {},
                      65535, "test", -1);
    h.seq->submit_and_wait();
    return h.read(ys, size_t(tokens) * rows);
  }
  vk::BufferSlice last_xq;  // the last gpu() call's int8 activations
  size_t last_chunks = 0;   // and the chunks its matrix took

  // Block blk of the last gpu() call's int8 activations, as quantize_i8 wrote them (its layout).
  struct GpuBlock {
    int q[32];
    float scale[kGroups], sum_x[kGroups];
  };
  static GpuBlock gpu_block(const std::vector<uint32_t>& words, int blocks, int blk) {
    GpuBlock g;
    for (int i = 0; i < 32; ++i) g.q[i] = int8_t(words[size_t(blk) * 8 + i / 4] >> (8 * (i % 4)));
    std::memcpy(g.scale, &words[size_t(blocks) * 8 + kGroups * size_t(blk)], sizeof g.scale);
    std::memcpy(g.sum_x, &words[size_t(blocks) * (8 + kGroups) + kGroups * size_t(blk)], sizeof g.sum_x);
    return g;
  }
  std::vector<uint32_t> last_words(int tokens, int cols) {
    return h.read<uint32_t>(last_xq, size_t(tokens) * size_t(cols / 32) * vk::kQuantizedBlockBytes / 4);
  }

  // The last gpu() call's activations as quantize_i8 rounded them (q times its group's scale);
  // differ: how many of its int8 differ from the CPU's round_block, far: how many by more than one.
  std::vector<float> gpu_rounded(const std::vector<float>& x, int tokens, int cols, int& differ, int& far) {
    const int blocks = tokens * (cols / 32);
    const std::vector<uint32_t> words = last_words(tokens, cols);
    std::vector<float> r(x.size());
    differ = far = 0;
    for (int blk = 0; blk < blocks; ++blk) {
      const GpuBlock g = gpu_block(words, blocks, blk);
      const RoundedBlock cpu = round_block(&x[size_t(blk) * 32]);
      for (int i = 0; i < 32; ++i) {
        differ += g.q[i] != cpu.q[i];
        far += std::abs(g.q[i] - cpu.q[i]) > 1;
        r[size_t(blk) * 32 + i] = float(g.q[i]) * g.scale[i / kGroupSize];
      }
    }
    return r;
  }

  std::vector<float> cpu(const Matrix& a, const Matrix* b, const std::vector<float>& x, int tokens) {
    std::vector<float> ya(size_t(tokens) * a.rows);
    matmul_float_activations(a, x.data(), tokens, ya.data(), pool);
    if (!b) return ya;
    std::vector<float> yb(ya.size()), out(ya.size());
    matmul_float_activations(*b, x.data(), tokens, yb.data(), pool);
    gelu_tanh_mul(ya.data(), yb.data(), int64_t(ya.size()), out.data());
    return out;
  }

 private slots:
  void initTestCase() {
    if (!h.device->info().int8_dot) QSKIP("the device has no integer dot products");
  }

  void matrix_data() {
    QTest::addColumn<int>("type");
    QTest::addColumn<bool>("glu");
    QTest::addColumn<int>("rows");
    QTest::addColumn<int>("cols");
    QTest::addColumn<int>("tokens");
    QTest::addColumn<int>("chunk_rows");
    for (DType t : {DType::Q8_0, DType::Q4_0, DType::Q5_0, DType::IQ4_NL, DType::IQ4_XS})
      for (bool glu : {false, true}) {
        const std::string s = std::string(suffix(t)) + (glu ? " glu" : "");
        // IQ4_XS rows are whole 256-weight super-blocks: 8 times each row length below (long rows: 2304).
        auto row = [&](const char* what, int rows, int cols, int tokens, int chunk) {
          const int c = t == DType::IQ4_XS ? std::min(8 * cols, 2304) : cols;
          QTest::newRow((s + " " + what).c_str()) << int(t) << glu << rows << c << tokens << chunk;
        };
        // Token counts around the 64-token tile, odd row counts, an odd number of blocks a row
        // (the last step of two blocks half empty), long rows, several chunks.
        row("1 token", 77, 96, 1, 0);
        row("5 tokens", 64, 160, 5, 0);
        row("63 tokens, odd rows", 129, 96, 63, 0);
        row("64 tokens", 64, 64, 64, 0);
        row("65 tokens, 3 blocks a row", 201, 96, 65, 0);
        row("130 tokens, long rows", 130, 2240, 130, 0);
        row("37 tokens in chunks", 330, 96, 37, 128);
      }
  }

  void matrix() {
    QFETCH(int, type);
    QFETCH(bool, glu);
    QFETCH(int, rows);
    QFETCH(int, cols);
    QFETCH(int, tokens);
    QFETCH(int, chunk_rows);
    const DType t = DType(type);
    const Matrix a = weights(t, rows, cols, 11 + rows), b = weights(t, rows, cols, 97 + cols);
    const Matrix* up = glu ? &b : nullptr;
    // Uniform activations, Gemma's large ones (the MLP reaches thousands), and outliers.
    for (auto [scale, outliers] : {std::pair{1.0f, false}, std::pair{3000.0f, false}, std::pair{1.0f, true}}) {
      const std::vector<float> x = activations(size_t(tokens) * cols, 5 + tokens, scale, outliers);
      const std::vector<float> ours = gpu(a, up, x, tokens, chunk_rows);
      if (chunk_rows) QVERIFY(last_chunks >= 3);
      const std::vector<float> exact = cpu(a, up, x, tokens), of_rounded = cpu(a, up, rounded(x), tokens);
      const QString what = QString(" (scale %1%2)").arg(scale).arg(outliers ? ", outliers" : "");
      // The GPU rounds as the CPU does, but for ties and divisions rounded the other way (Vulkan
      // allows a division 2.5 ULP: an H100 flips a few per thousand where lavapipe flips none);
      // its sums are the CPU's on the activations as it rounded them, up to fp32 rounding.
      int differ = 0, far = 0;
      const std::vector<float> as_rounded = gpu_rounded(x, tokens, cols, differ, far);
      QVERIFY2(far == 0, qPrintable(QString("%1 int8 activations more than one step from the CPU's").arg(far) + what));
      QVERIFY2(differ <= int(x.size()) / 100, qPrintable(QString("%1 of %2 int8 activations differ from the CPU's")
                                                            .arg(differ).arg(x.size()) + what));
      const double vs_rounded = relative_error(ours, cpu(a, up, as_rounded, tokens));
      QVERIFY2(vs_rounded < 2e-5, qPrintable(QString("vs the rounded activations %1").arg(vs_rounded) + what));
      // So its distance to the exact product is the rounding's: max|x| / 254 an element (max over
      // its group), under 1/254 relative for uniform inputs, a little more through GELU's slope.
      const double rounding = relative_error(of_rounded, exact), err = relative_error(ours, exact);
      QVERIFY2(err < rounding + 2e-5, qPrintable(QString("error %1, rounding %2").arg(err).arg(rounding) + what));
      QVERIFY2(rounding < (outliers ? 4e-2 : 1e-2), qPrintable(QString("rounding %1").arg(rounding) + what));
    }
  }

  // quantize_i8's output as matmul_i8 and matvec_items_qin read it: int8 blocks (8 words each), then
  // the blocks' scales, then each group's sum of its activations as rounded (the sum of its int8
  // times its scale, in fp32).
  void quantized_layout() {
    const int tokens = 3, cols = 96, nb = cols / 32;
    const Matrix a = random_matrix(DType::Q8_0, 64, cols, 3);
    const std::vector<float> x = activations(size_t(tokens) * cols, 9, 2.0f, true);
    gpu(a, nullptr, x, tokens, 0);
    const std::vector<uint32_t> words = last_words(tokens, cols);
    int off_by_one = 0;
    for (int blk = 0; blk < tokens * nb; ++blk) {
      const RoundedBlock r = round_block(&x[size_t(blk) * 32]);
      const GpuBlock b = gpu_block(words, tokens * nb, blk);
      for (int g = 0; g < kGroups; ++g) QCOMPARE(b.scale[g], r.scale[g]);
      int sums[kGroups] = {};
      for (int i = 0; i < 32; ++i) {
        sums[i / kGroupSize] += b.q[i];
        QVERIFY2(std::abs(b.q[i] - r.q[i]) <= 1,
                 qPrintable(QString("block %1 element %2: %3 vs %4").arg(blk).arg(i).arg(b.q[i]).arg(r.q[i])));
        off_by_one += b.q[i] != r.q[i];
      }
      for (int g = 0; g < kGroups; ++g) QCOMPARE(b.sum_x[g], float(sums[g]) * b.scale[g]);
    }
    QVERIFY(off_by_one <= 2);  // a tie or a division rounded the other way, at most
  }
};

QTEST_GUILESS_MAIN(VulkanMatmulI8)
#include "test_matmul_i8.moc"
