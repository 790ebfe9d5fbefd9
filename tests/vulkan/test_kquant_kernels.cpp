// The matrix and embedding kernels on GGUF's K-quants as the GPU holds them (Q2_K ... Q6_K, and
// IQ4_XS: runtime/vulkan/kquant_layout.h), and on GGUF's other 32-weight formats (Q5_0, Q4_1, Q5_1, IQ4_NL:
// their fallbacks, read by the same kernels, runtime/vulkan/weight_layout.h), against
// the CPU's dequantization (quant/kquants.h, quant/block32_formats.h) and fp32 math, on whatever
// Vulkan device is there (lavapipe in CI). Blocks are random bytes, which every bit pattern of these
// formats is, with scales of a realistic size. Outputs are poisoned with NaN first.
#include <QtTest>

#include <cmath>
#include <random>

#include "quant/block32_formats.h"
#include "quant/convert.h"
#include "quant/kquants.h"
#include "runtime/cpu/matmul.h"
#include "runtime/cpu/ops.h"
#include "runtime/cpu/thread_pool.h"
#include "runtime/vulkan/forward.h"
#include "runtime/vulkan/model_gpu.h"
#include "runtime/vulkan/push_constants.h"
#include "runtime/vulkan/weight_layout.h"
#include "vk_harness.h"

using namespace kiln;
using namespace kiln::test;

namespace {

const DType kTypes[] = {DType::Q4_K, DType::Q5_K, DType::Q6_K, DType::Q3_K, DType::Q2_K,
                        DType::Q5_0, DType::Q4_1, DType::Q5_1, DType::IQ4_NL, DType::IQ4_XS};
// The K-quants and Q5_0 (by far the most common of the 32-weight formats) take every case below;
// Q4_1, Q5_1 and IQ4_NL, read by the same code, those of the 32-weight formats.
bool every_case(DType t) { return !is_block32_format(t) || t == DType::Q5_0; }

const char* suffix(DType t) {
  switch (t) {
    case DType::Q4_K: return "q4_k";
    case DType::Q5_K: return "q5_k";
    case DType::Q6_K: return "q6_k";
    case DType::Q3_K: return "q3_k";
    case DType::Q5_0: return "q5_0";
    case DType::Q4_1: return "q4_1";
    case DType::Q5_1: return "q5_1";
    case DType::IQ4_NL: return "iq4_nl";
    case DType::IQ4_XS: return "iq4_xs";
    default: return "q2_k";
  }
}

// Random blocks with d (and dmin) of 1e-3 .. 1e-2: weights of order 0.1-1, as in real files.
Matrix random_kquant(DType type, int64_t rows, int64_t cols, uint64_t seed) {
  Matrix m;
  m.type = type;
  m.rows = rows;
  m.cols = cols;
  m.storage = allocate_aligned(m.bytes());
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> scale(1e-3f, 1e-2f);
  for (size_t i = 0; i < m.bytes(); ++i) m.storage.get()[i] = uint8_t(rng());
  const bool block32 = is_block32_format(type);
  const size_t block = row_bytes(type, block32 ? 32 : 256);
  // Q4_K, Q5_K: d, dmin first; Q2_K: d, dmin last; Q3_K, Q6_K: d last; 32-weight formats: d (, m)
  // first; IQ4_XS: d first (its sub-block scales are random bytes too).
  const bool has_min = block32 ? type == DType::Q4_1 || type == DType::Q5_1
                               : type != DType::Q6_K && type != DType::Q3_K && type != DType::IQ4_XS;
  const size_t d_at = type == DType::Q4_K || type == DType::Q5_K || type == DType::IQ4_XS || block32 ? 0 : block - (has_min ? 4 : 2);
  for (size_t b = 0; b < m.bytes() / block; ++b) {
    uint8_t* p = m.storage.get() + b * block;
    const uint16_t d = float_to_fp16(scale(rng)), dmin = float_to_fp16(scale(rng));
    std::memcpy(p + d_at, &d, 2);
    if (has_min) std::memcpy(p + d_at + 2, &dmin, 2);
  }
  return m;
}

// The CPU reference: the same weights dequantized to F32.
Matrix dequantized(const Matrix& q) {
  Matrix m;
  m.type = DType::F32;
  m.rows = q.rows;
  m.cols = q.cols;
  m.storage = allocate_aligned(m.bytes());
  for (int64_t r = 0; r < q.rows; ++r) dequantize_row(q.type, q.row(r), q.cols, reinterpret_cast<float*>(m.row(r)));
  return m;
}

}  // namespace

class VulkanKquantKernels : public QObject {
  Q_OBJECT
  VkHarness h;
  ThreadPool pool{2};

 private slots:
  void matrix_data() {
    QTest::addColumn<int>("type");
    QTest::addColumn<int>("rows");
    QTest::addColumn<int>("cols");
    QTest::addColumn<int>("tokens");
    QTest::addColumn<bool>("batched");
    QTest::addColumn<bool>("glu");
    QTest::addColumn<int>("chunk_rows");  // 0: one chunk
    QTest::addColumn<int>("coop");        // 0: fp32 kernels, 1: matmul_coop (NV), 2: matmul_coop_khr
    QTest::addColumn<bool>("int8_dot");   // matvec_i8_*: activations rounded to int8, integer dots
    QTest::addColumn<bool>("staged");     // matvec_staged_*: rounded once per workgroup, in shared memory
    QTest::addColumn<bool>("half_x");     // coop: fp16 input from convert_f16 (matmul_coop_*xh_*)
    for (DType t : kTypes)
      for (bool glu : {false, true}) {
        const std::string s = std::string(suffix(t)) + (glu ? " glu" : "");
        auto row = [&](const std::string& what, int rows, int cols, int tokens, bool batched, int chunk, int coop = 0) {
          QTest::newRow((s + " " + what).c_str()) << int(t) << rows << cols << tokens << batched << glu << chunk << coop
                                                  << false << false << false;
          if (coop)
            QTest::newRow((s + " fp16 input " + what).c_str()) << int(t) << rows << cols << tokens << batched << glu
                                                               << chunk << coop << false << false << true;
          if (!batched)
            QTest::newRow((s + " int8 dot " + what).c_str()) << int(t) << rows << cols << tokens << batched << glu
                                                              << chunk << coop << true << false << false;
          if (!batched && tokens == 1)
            QTest::newRow((s + " staged " + what).c_str()) << int(t) << rows << cols << tokens << batched << glu
                                                            << chunk << coop << true << true << false;
        };
        if (t == DType::Q5_0 || !every_case(t)) {  // rows of Gemma 3 1B's 1152 weights; an odd number of blocks a row
          row("matvec 1 token, 1B's hidden", 203, 1152, 1, false, 0);
          row("matvec 2 tokens, 3 blocks a row", 67, 96, 2, false, 0);
          row("matvec 3 blocks a row, chunks of 17 rows", 101, 96, 1, false, 17);
          row("matmul 37 tokens, 3 blocks a row", 67, 96, 37, true, 0);
          row("matmul 40 tokens, 1B's hidden, chunks", 150, 1152, 40, true, 64);
          row("coop 37 tokens, 1B's hidden", 100, 1152, 37, true, 0, 1);
          row("khr coop 37 tokens, 1B's hidden", 100, 1152, 37, true, 0, 2);
        }
        if (!every_case(t)) continue;
        row("matvec 1 token, odd rows", 203, 512, 1, false, 0);
        row("matvec 3 tokens, long rows", 130, 2304, 3, false, 0);
        row("matvec split in chunks", 331, 256, 1, false, 64);
        row("matvec 1 token, 27B's hidden", 64, 5376, 1, false, 0);
        row("matmul 37 tokens, odd rows", 201, 512, 37, true, 0);
        row("matmul 70 tokens, long rows", 130, 2304, 70, true, 0);
        row("matmul split in chunks", 330, 256, 65, true, 128);
        for (int coop : {1, 2}) {
          const std::string c = coop == 1 ? "coop " : "khr coop ";
          row(c + "37 tokens", 200, 512, 37, true, 0, coop);
          row(c + "300 rows, 200 tokens, long rows", 300, 2304, 200, true, 0, coop);
          row(c + "split in chunks", 330, 256, 129, true, 128, coop);
        }
      }
  }

  // matvec_* / matmul_* / matmul_coop_* (and GLU forms) against F32 math on the dequantized weights.
  void matrix() {
    QFETCH(int, type);
    QFETCH(int, rows);
    QFETCH(int, cols);
    QFETCH(int, tokens);
    QFETCH(bool, batched);
    QFETCH(bool, glu);
    QFETCH(int, chunk_rows);
    QFETCH(int, coop);
    QFETCH(bool, int8_dot);
    QFETCH(bool, staged);
    QFETCH(bool, half_x);
    if (int8_dot && !h.device->info().int8_dot) QSKIP("the device has no integer dot products");
    // lavapipe has no cooperative matrices: these run on a GPU (the H100 through `device`).
    if (coop == 1 && !h.device->info().coop_matrix_f16) QSKIP("the device has no fp16 cooperative matrices (NV)");
    if (coop == 2 && !h.device->info().coop_khr_f16) QSKIP("the device has no VK_KHR_cooperative_matrix fp16 16x16x16");
    if (coop == 2 && !vk::khr_coopmat_built()) QSKIP("this build has no KHR kernels (no Debian 13 glslc at configure)");
    const DType t = DType(type);
    const Matrix a = random_kquant(t, rows, cols, 11 + rows), b = random_kquant(t, rows, cols, 97 + cols);
    const std::vector<float> x = random_floats(size_t(tokens) * cols, 5);
    std::vector<float> expected(size_t(tokens) * rows), yb(size_t(tokens) * rows);
    matmul(dequantized(a), x.data(), tokens, expected.data(), pool);
    if (glu) {
      matmul(dequantized(b), x.data(), tokens, yb.data(), pool);
      std::vector<float> out(expected.size());
      gelu_tanh_mul(expected.data(), yb.data(), int64_t(out.size()), out.data());
      expected = out;
    }

    const int64_t dev_rows = glu ? 2 * rows : rows;
    auto row_ptr = [&](int64_t r) { return glu ? (r % 2 ? b.row(r / 2) : a.row(r / 2)) : a.row(r); };
    const uint64_t limit = chunk_rows ? uint64_t(chunk_rows) * vk::layout_weight_bytes(t, 1, cols) : ~0ull;
    const vk::DeviceMatrix dm = vk::upload_matrix(*h.arena, *h.uploader, t, dev_rows, cols, row_ptr, limit, 64);
    h.uploader->finish();
    if (chunk_rows) QVERIFY(dm.chunks.size() >= 3);

    vk::BufferSlice xs = h.upload(x);
    const vk::BufferSlice ys = h.poisoned(expected.size());
    if (half_x) xs = h.to_f16(xs, uint32_t(tokens), uint32_t(cols));  // the model's way: dense, x_stride = cols
    const vk::MatmulTile tile = coop ? vk::kCoopTile : vk::kMatmulTile;
    const vk::MatvecShape shape{64, 2, 64};
    const char* matvec = staged ? "matvec_staged_" : int8_dot ? "matvec_i8_" : "matvec_";
    const std::string name = batched ? vk::matmul_kernel_name(t, glu, tile, coop == 2, half_x)
                                     : matvec + std::string(glu ? "glu_" : "") + suffix(t);
    std::vector<uint32_t> spec{shape.wg, shape.rows, shape.tpr};
    if (staged) spec.push_back(uint32_t(cols / 32));  // shared memory for exactly this row length
    const vk::Kernel& k = batched ? h.pipelines->get(name, 4) : h.pipelines->get(name, 4, spec);
    std::vector<VkDescriptorSet> sets;
    for (const auto& c : dm.chunks) sets.push_back(h.descriptors->allocate(k, std::vector{c.weights, c.scales, xs, ys}));
    h.seq->begin(false);
    vk::record_matrix(*h.seq, k, dm.chunks, dm.cols,
                      sets, vk::MatrixCall{glu, batched, tokens, 0, uint32_t(cols), uint32_t(rows), tile},
                      shape, batched ? 65535 : 7 /* folds the grid into y */, "test", -1);
    h.seq->submit_and_wait();
    const double err = relative_error(h.read(ys, expected.size()), expected);
    // fp32 sums agree to rounding (1e-7 .. 1.3e-6 measured); the tensor cores round weights and
    // activations to fp16 (~1e-3); int8 activations (a scale for each 16) move each element by up to
    // half a step of max|x| / 127: 2-4e-3 measured, 4-9.5e-3 through GELU's slope (Q4_0: 3-4e-3).
    const double bound = coop ? 1.5e-3 : int8_dot ? (glu ? 1.5e-2 : 6e-3) : 5e-6;
    QVERIFY2(err < bound, qPrintable(QString("relative error %1").arg(err)));
  }

  void embedding_data() {
    QTest::addColumn<int>("type");
    QTest::addColumn<int>("hidden");
    QTest::addColumn<bool>("chunked");
    for (DType t : kTypes) {
      QTest::newRow(suffix(t)) << int(t) << 256 << false;
      QTest::newRow((std::string(suffix(t)) + " wide, chunked").c_str()) << int(t) << 2304 << true;
      if (is_block32_format(t))
        QTest::newRow((std::string(suffix(t)) + " 3 blocks a row, chunked").c_str()) << int(t) << 96 << true;
    }
  }

  // embed_*: x = row * sqrt(hidden) and xn = rms_norm(x) * w, tokens from any chunk.
  void embedding() {
    QFETCH(int, type);
    QFETCH(int, hidden);
    QFETCH(bool, chunked);
    const DType t = DType(type);
    const Matrix e = random_kquant(t, 301, hidden, 3);
    const EmbedCheck c = check_embed(h, e, std::string("embed_") + suffix(t), chunked);
    if (chunked) QCOMPARE(int(c.chunks), 5);
    QVERIFY2(c.x < 1e-6 && c.xn < 1e-5, qPrintable(QString("x %1, xn %2").arg(c.x).arg(c.xn)));
  }

  // The GPU holds each K-quant at the file's size: Q2_K, Q4_K, Q5_K, IQ4_XS and the 32-weight
  // formats exactly, Q6_K 212 bytes for 210, Q3_K 112 for 110.
  void device_bytes_match_the_file() {
    for (DType t : kTypes) {
      const int64_t rows = 64, cols = 1024;
      const Matrix m = random_kquant(t, rows, cols, 1);
      const vk::DeviceMatrix dm = vk::upload_matrix(*h.arena, *h.uploader, t, rows, cols,
                                                    [&](int64_t r) { return m.row(r); }, ~0ull, 64);
      h.uploader->finish();
      const double ratio = double(dm.bytes()) / double(m.bytes());
      QVERIFY2(ratio >= 1.0 && ratio <= 1.02, qPrintable(QString("%1: %2").arg(suffix(t)).arg(ratio)));
    }
  }

  // A stack of parts of different types (q|k in Q4_K, v in Q6_K) keeps each part's type and rows.
  void mixed_stack_keeps_each_parts_type() {
    const int64_t cols = 256;
    const Matrix q = random_kquant(DType::Q4_K, 100, cols, 1), v = random_kquant(DType::Q6_K, 30, cols, 2);
    const vk::DeviceMatrix dm = vk::upload_stacked(
        *h.arena, *h.uploader, {{q.type, q.rows, [&](int64_t r) { return q.row(r); }}, {v.type, v.rows, [&](int64_t r) { return v.row(r); }}},
        cols, ~0ull, 64);
    h.uploader->finish();
    QVERIFY(dm.mixed());
    QCOMPARE(int(dm.chunks.size()), 2);
    QCOMPARE(dm.chunks[1].type, DType::Q6_K);
    QCOMPARE(dm.chunks[1].row_begin, int64_t(100));
    QCOMPARE(dm.rows, int64_t(130));
  }
};

QTEST_GUILESS_MAIN(VulkanKquantKernels)
#include "test_kquant_kernels.moc"
