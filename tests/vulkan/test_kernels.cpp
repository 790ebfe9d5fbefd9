// Every Vulkan kernel but attention's (test_attention.cpp) against the CPU reference ops
// (runtime/cpu), on whatever Vulkan device is there (lavapipe in CI): normalised error per op,
// outputs poisoned with NaN beforehand so an element a kernel forgets to write fails the test.
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "generate/sampler.h"
#include "model/config.h"
#include "quant/convert.h"
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

const char* suffix(DType t) {
  switch (t) {
    case DType::F32: return "f32";
    case DType::F16: return "f16";
    case DType::Q8_0: return "q8_0";
    case DType::Q4_K: return "q4_k";
    case DType::Q6_K: return "q6_k";
    default: return "q4_0";
  }
}

// add_norm on the CPU, for one token: x += rms_norm(y) * w_post, then xn = rms_norm(x) * w_pre.
void add_norm_reference(const float* y, float* x, const float* w_post, const float* w_pre, int hidden, float eps,
                        float* xn) {
  std::vector<float> tmp(static_cast<size_t>(hidden));
  rms_norm(y, w_post, hidden, eps, tmp.data());
  add_in_place(x, tmp.data(), hidden);
  rms_norm(x, w_pre, hidden, eps, xn);
}

std::vector<float> gelu_reference(const std::vector<float>& gate, const std::vector<float>& up) {
  std::vector<float> out(gate.size());
  gelu_tanh_mul(gate.data(), up.data(), int64_t(gate.size()), out.data());
  return out;
}

}  // namespace

class VulkanKernels : public QObject {
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
    QTest::addColumn<int>("chunk_rows");       // 0: one chunk
    QTest::addColumn<QString>("shape_text");   // matvec wg,rows,tpr
    QTest::addColumn<bool>("int8_dot");        // matvec_i8_*: int8 activations, integer dots
    QTest::addColumn<bool>("coop");            // matmul_coop_*: tensor cores, 128 x 128 tiles
    QTest::addColumn<bool>("staged");          // matvec_staged_*: int8 activations staged in shared memory
    QTest::addColumn<bool>("khr");             // with coop: matmul_coop_khr_* (VK_KHR_cooperative_matrix)
    QTest::addColumn<bool>("half_x");          // with coop: fp16 input from convert_f16 (matmul_coop_*xh_*)
    for (DType t : {DType::F32, DType::F16, DType::Q8_0, DType::Q4_0})
      for (bool glu : {false, true}) {
        const std::string s = std::string(suffix(t)) + (glu ? " glu" : "");
        auto row = [&](const std::string& what, int rows, int cols, int tokens, bool batched, int chunk, const char* shape) {
          QTest::newRow((s + " " + what).c_str()) << int(t) << rows << cols << tokens << batched << glu << chunk
                                                  << QString(shape) << false << false << false << false << false;
          if (!batched && (t == DType::Q8_0 || t == DType::Q4_0))
            QTest::newRow((s + " int8 dot " + what).c_str()) << int(t) << rows << cols << tokens << batched << glu
                                                              << chunk << QString(shape) << true << false << false << false
                                                              << false;
          if (!batched && tokens == 1 && (t == DType::Q8_0 || t == DType::Q4_0))
            QTest::newRow((s + " staged " + what).c_str()) << int(t) << rows << cols << tokens << batched << glu
                                                            << chunk << QString(shape) << true << false << true << false
                                                            << false;
        };
        auto coop = [&](const std::string& what, int rows, int cols, int tokens, int chunk) {
          for (bool khr : {false, true})
            for (bool half : {false, true})
              if (!half || t != DType::F32)  // F32 weights never take the tensor cores in a model
                QTest::newRow((s + (khr ? " khr coop " : " coop ") + (half ? "fp16 input " : "") + what).c_str())
                    << int(t) << rows << cols << tokens << true << glu << chunk << QString() << false << true << false
                    << khr << half;
        };
        // Partial tiles in rows and tokens, several tiles each way, chunks of one tile and less.
        coop("37 tokens", 200, 96, 37, 0);
        coop("300 rows, 200 tokens, long rows", 300, 2240, 200, 0);
        coop("split in chunks", 330, 96, 129, 128);
        coop("chunks of 64 rows", 200, 64, 20, 64);
        row("matvec 1 token", 200, 96, 1, false, 0, "64,2,64");
        row("matvec 3 tokens, long rows", 130, 2240, 3, false, 0, "64,2,64");
        row("matvec split in chunks", 330, 96, 1, false, 64, "64,2,64");
        // Groups of whole subgroups, groups smaller than a subgroup, one row an invocation.
        row("matvec 128,4,32", 198, 2240, 1, false, 0, "128,4,32");
        row("matvec 128,2,4", 202, 96, 2, false, 0, "128,2,4");
        if (!glu) row("matvec 256,1,128", 77, 2240, 1, false, 0, "256,1,128");
        row("matmul 37 tokens", 200, 96, 37, true, 0, "");
        row("matmul 70 tokens, long rows", 130, 2240, 70, true, 0, "");
        row("matmul split in chunks", 330, 96, 65, true, 128, "");
      }
  }

  // matvec_* / matmul_* (and their GLU forms) against the CPU matmul and gelu_tanh_mul.
  void matrix() {
    QFETCH(int, type);
    QFETCH(int, rows);
    QFETCH(int, cols);
    QFETCH(int, tokens);
    QFETCH(bool, batched);
    QFETCH(bool, glu);
    QFETCH(int, chunk_rows);
    QFETCH(QString, shape_text);
    QFETCH(bool, int8_dot);
    QFETCH(bool, coop);
    QFETCH(bool, staged);
    QFETCH(bool, khr);
    QFETCH(bool, half_x);
    if (int8_dot && !h.device->info().int8_dot) QSKIP("the device has no integer dot products");
    if (coop && !khr && !h.device->info().coop_matrix_f16) QSKIP("the device has no fp16 cooperative matrices");
    // lavapipe has no cooperative matrices: this runs on a GPU (the H100 through `device`; PERFORMANCE.md).
    if (khr && !h.device->info().coop_khr_f16)
      QSKIP("the device has no VK_KHR_cooperative_matrix with an fp16 16x16x16 shape (lavapipe has none)");
    if (khr && !vk::khr_coopmat_built()) QSKIP("this build has no KHR kernels (no Debian 13 glslc at configure)");
    const DType t = DType(type);
    vk::MatvecShape shape;
    std::sscanf(shape_text.toLatin1().constData(), "%u,%u,%u", &shape.wg, &shape.rows, &shape.tpr);
    const Matrix a = random_matrix(t, rows, cols, 11 + rows), b = random_matrix(t, rows, cols, 97 + cols);
    const std::vector<float> x = random_floats(size_t(tokens) * cols, 5);

    std::vector<float> ya(size_t(tokens) * rows), yb(size_t(tokens) * rows);
    matmul_float_activations(a, x.data(), tokens, ya.data(), pool);  // unrounded, as the fp32 kernels
    std::vector<float> expected = ya;
    if (glu) {
      matmul_float_activations(b, x.data(), tokens, yb.data(), pool);
      expected = gelu_reference(ya, yb);
    }

    // GLU weights are uploaded as the model does: gate and up rows interleaved.
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
    const char* matvec = staged ? "matvec_staged_" : int8_dot ? "matvec_i8_" : "matvec_";
    const std::string name = batched ? vk::matmul_kernel_name(t, glu, tile, khr, half_x)
                                     : matvec + std::string(glu ? "glu_" : "") + suffix(t);
    std::vector<uint32_t> spec{shape.wg, shape.rows, shape.tpr};
    if (staged) spec.push_back(uint32_t(cols / 32));  // shared memory for exactly this row length
    const vk::Kernel& k = batched ? h.pipelines->get(name, 4) : h.pipelines->get(name, 4, spec);
    std::vector<VkDescriptorSet> sets;
    for (const auto& c : dm.chunks) sets.push_back(h.descriptors->allocate(k, std::vector{c.weights, c.scales, xs, ys}));
    h.seq->begin(false);
    vk::record_matrix(*h.seq, k, dm.chunks, dm.cols, sets,
                      vk::MatrixCall{glu, batched, tokens, 0, uint32_t(cols), uint32_t(rows), tile},
                      shape, batched ? 65535 : 7 /* folds the grid into y */, "test", -1);
    h.seq->submit_and_wait();
    const double err = relative_error(h.read(ys, expected.size()), expected);
    // fp32 accumulation agrees to rounding. Int8 activations (a scale for each 16) round each element by
    // up to half a step of max|x| / 127: 1/254 relative rms for uniform inputs, 3-4e-3 measured, a
    // little more through GELU's slope. The tensor cores round weights and activations to fp16: ~1e-3.
    const double bound = coop ? 1.5e-3 : !int8_dot ? 2e-6 : glu ? 1e-2 : 5e-3;
    QVERIFY2(err < bound, qPrintable(QString("relative error %1").arg(err)));
    // Activations far from 1 (Gemma's MLP reaches thousands) keep their precision.
    if (int8_dot && !batched) {
      std::vector<float> big = x;
      for (float& v : big) v *= 3000.0f;
      std::vector<float> ya_big(size_t(tokens) * rows), yb_big(size_t(tokens) * rows);
      matmul(a, big.data(), tokens, ya_big.data(), pool);
      std::vector<float> expected_big = ya_big;
      if (glu) {
        matmul(b, big.data(), tokens, yb_big.data(), pool);
        expected_big = gelu_reference(ya_big, yb_big);
      }
      const vk::BufferSlice xb = h.upload(big), yb2 = h.poisoned(expected.size());
      std::vector<VkDescriptorSet> big_sets;
      for (const auto& c : dm.chunks) big_sets.push_back(h.descriptors->allocate(k, std::vector{c.weights, c.scales, xb, yb2}));
      h.seq->begin(false);
      vk::record_matrix(*h.seq, k, dm.chunks, dm.cols,
                        big_sets, vk::MatrixCall{glu, false, tokens, 0, uint32_t(cols), uint32_t(rows)},
                        shape, 7, "test", -1);
      h.seq->submit_and_wait();
      const double err_big = relative_error(h.read(yb2, expected.size()), expected_big);
      QVERIFY2(err_big < bound, qPrintable(QString("relative error with large activations %1").arg(err_big)));
    }
  }

  // convert_f16: the tensor-core tiles' input, each token's elements in fp16 at t * cols + k (from a
  // strided fp32 input), values past fp16's range saturated, as the fp32 tiles convert them.
  void convert_f16() {
    const int tokens = 3, cols = 96, stride = 104, offset = 8;
    std::vector<float> x = random_floats(size_t(offset + tokens * stride), 21, -4, 4);
    x[offset + 5] = 1e6f;
    x[offset + stride + 7] = -7e4f;
    const vk::BufferSlice xs = h.upload(x), xh = h.poisoned(size_t(tokens * cols / 2));
    h.run(h.pipelines->get("convert_f16", 2), {xs, xh},
          vk::QuantizePush{uint32_t(tokens), uint32_t(cols / 32), uint32_t(offset), uint32_t(stride)}, 1, tokens);
    const std::vector<uint32_t> words = h.read<uint32_t>(xh, size_t(tokens * cols / 2));
    for (int t = 0; t < tokens; ++t)
      for (int k = 0; k < cols; ++k) {
        const uint32_t w = words[size_t(t * cols + k) / 2];
        const float got = fp16_to_float(uint16_t(k % 2 ? w >> 16 : w & 0xFFFF));
        const float want = std::clamp(x[size_t(offset + t * stride + k)], -65504.0f, 65504.0f);
        QVERIFY2(std::abs(got - want) <= std::abs(want) * 1e-3f, qPrintable(QString("token %1, element %2: %3 for %4").arg(t).arg(k).arg(got).arg(want)));
      }
  }

  void quantized_activations_data() {
    QTest::addColumn<int>("type");
    QTest::addColumn<int>("ffn");
    QTest::addColumn<QString>("shapes");  // gate_up's, down's: wg,rows,tpr
    QTest::addColumn<bool>("from_norm");  // x from add_norm_qout (int8) instead of fp32
    for (bool from_norm : {false, true}) {
      const std::string n = from_norm ? ", after add_norm_qout" : "";
      auto row = [&](const char* name) -> QTestData& { return QTest::newRow((name + n).c_str()); };
      row("q8_0") << int(DType::Q8_0) << 96 << "128,8,64 64,2,64" << from_norm;
      row("q4_0") << int(DType::Q4_0) << 96 << "128,8,64 64,2,64" << from_norm;
      row("q4_0, groups of 32") << int(DType::Q4_0) << 96 << "128,8,32 128,8,32" << from_norm;
      row("q4_0, 27B's hidden and a short ffn") << int(DType::Q4_0) << 512 << "128,8,64 128,8,64" << from_norm;
      // down's shape on GPUs (KernelPlan::down_shape), and row groups that split subgroups (36 lanes).
      row("q4_0, down in groups of 96") << int(DType::Q4_0) << 512 << "128,8,64 192,4,96" << from_norm;
      row("q4_0, groups of 36") << int(DType::Q4_0) << 2048 << "128,8,64 72,4,36" << from_norm;
      // The K-quants (rows of whole 256-weight super-blocks): Q4_K_M's two types.
      row("q4_k, 27B's hidden") << int(DType::Q4_K) << 512 << "128,8,64 128,4,64" << from_norm;
      row("q6_k, 27B's hidden") << int(DType::Q6_K) << 512 << "128,8,64 128,4,64" << from_norm;
    }
  }

  // The decode MLP with int8 activations between its kernels: gate_up writes gelu(gate) * up
  // rounded to int8 (matvec_staged_glu_qout_*) and down reads it (matvec_qin_*). From add_norm,
  // x itself arrives as int8 too (add_norm_qout, then matvec_qin_glu_qout_*).
  void quantized_activations() {
    QFETCH(int, type);
    QFETCH(int, ffn);
    QFETCH(QString, shapes);
    QFETCH(bool, from_norm);
    if (!h.device->info().int8_dot) QSKIP("the device has no integer dot products");
    const DType t = DType(type);
    const int hidden = ffn == 512 ? 5376 : 64;
    const float eps = 1e-6f;
    const Matrix gate = random_matrix(t, ffn, hidden, 1), up = random_matrix(t, ffn, hidden, 2),
                 down = random_matrix(t, hidden, ffn, 3);
    // add_norm's inputs: block output, residual, post and pre norm weights.
    const std::vector<float> block = random_floats(size_t(hidden), 5, -30, 30), resid = random_floats(size_t(hidden), 6);
    const std::vector<float> norms = random_floats(size_t(2) * hidden, 7, 0.2f, 2.0f);
    std::vector<float> x = random_floats(size_t(hidden), 4);
    if (from_norm) {
      std::vector<float> r = resid;
      add_norm_reference(block.data(), r.data(), norms.data(), norms.data() + hidden, hidden, eps, x.data());
    }
    std::vector<float> g(ffn), u(ffn), y(hidden);
    // Unrounded activations: the CPU's own kernels round them (per 32, or per 256 for the K-quants).
    matmul_float_activations(gate, x.data(), 1, g.data(), pool);
    matmul_float_activations(up, x.data(), 1, u.data(), pool);
    const std::vector<float> a = gelu_reference(g, u);
    matmul_float_activations(down, a.data(), 1, y.data(), pool);

    auto gu_row = [&](int64_t r) { return r % 2 ? up.row(r / 2) : gate.row(r / 2); };
    const vk::DeviceMatrix gu = vk::upload_matrix(*h.arena, *h.uploader, t, 2 * ffn, hidden, gu_row, ~0ull, 64);
    const vk::DeviceMatrix dn = vk::upload_matrix(*h.arena, *h.uploader, t, hidden, ffn,
                                                  [&](int64_t r) { return down.row(r); }, ~0ull, 64);
    h.uploader->finish();
    const vk::BufferSlice xs = from_norm ? h.poisoned(size_t(hidden)) : h.upload(x), act = h.poisoned(size_t(ffn)),
                          ys = h.poisoned(size_t(hidden));
    vk::MatvecShape gs, ds;
    std::sscanf(shapes.toLatin1().constData(), "%u,%u,%u %u,%u,%u", &gs.wg, &gs.rows, &gs.tpr, &ds.wg, &ds.rows, &ds.tpr);
    const vk::Kernel& kg =
        from_norm ? h.pipelines->get(std::string("matvec_qin_glu_qout_") + suffix(t), 4, {gs.wg, gs.rows, gs.tpr})
                  : h.pipelines->get(std::string("matvec_staged_glu_qout_") + suffix(t), 4,
                                     {gs.wg, gs.rows, gs.tpr, uint32_t(hidden / 32)});
    const vk::Kernel& kd = h.pipelines->get(std::string("matvec_qin_") + suffix(t), 4, {ds.wg, ds.rows, ds.tpr});
    const std::vector<VkDescriptorSet> sg{h.descriptors->allocate(kg, std::vector{gu.chunks[0].weights, gu.chunks[0].scales, xs, act})},
        sd{h.descriptors->allocate(kd, std::vector{dn.chunks[0].weights, dn.chunks[0].scales, act, ys})};
    if (from_norm)
      h.run(h.pipelines->get("add_norm_qout", 5, {256}),
            {h.upload(block), h.upload(resid), xs, h.upload(norms), h.poisoned(resid.size())},
            vk::AddNormPush{uint32_t(hidden), 0, uint32_t(hidden), eps}, 1);
    h.seq->begin(false);
    vk::record_matrix(*h.seq, kg, gu.chunks, gu.cols,
                      sg, vk::MatrixCall{true, false, 1, 0, uint32_t(hidden), uint32_t(ffn)}, gs, 7, "test", -1);
    vk::record_matrix(*h.seq, kd, dn.chunks, dn.cols,
                      sd, vk::MatrixCall{false, false, 1, 0, uint32_t(ffn), uint32_t(hidden)}, ds, 7, "test", -1);
    h.seq->submit_and_wait();
    // Two roundings to int8 (x per 16 or 8 values, the GLU output per 8): 4-8e-3 measured for
    // Q8_0/Q4_0, 1.2-1.8e-2 for Q4_K/Q6_K (their int8 matvecs already sit at about twice Q4_0's
    // error through GELU, test_kquant_kernels.cpp).
    const double err = relative_error(h.read(ys, y.size()), y);
    const double bound = t == DType::Q4_K || t == DType::Q6_K ? 2.5e-2 : 1.5e-2;
    QVERIFY2(err < bound, qPrintable(QString("relative error %1").arg(err)));
  }

  void wide_add_norm_data() {
    QTest::addColumn<int>("type");
    QTest::addColumn<int>("hidden");
    QTest::addColumn<QString>("shape");  // o's: wg,rows,tpr
    QTest::addColumn<int>("norm_wg");
    QTest::newRow("q8_0") << int(DType::Q8_0) << 64 << "64,2,64" << 64;
    QTest::newRow("q4_0, 27B's hidden") << int(DType::Q4_0) << 5376 << "128,4,64" << 128;
    QTest::newRow("q8_0, 27B's hidden, short rows") << int(DType::Q8_0) << 5376 << "128,4,64" << 32;
    QTest::newRow("q4_k, 27B's hidden") << int(DType::Q4_K) << 5376 << "128,4,64" << 128;
    QTest::newRow("q6_k, 27B's hidden") << int(DType::Q6_K) << 5376 << "128,4,64" << 128;
  }

  // One token's add_norm spread over workgroups (ModelGpu::wide_norm): the matrix before it
  // (matvec_qin_sums_*, int8 input) leaves the sums of both norms in a slot a workgroup, and
  // add_norm_slots_qout writes the residual and xn (int8) from them, as add_norm_qout would.
  void wide_add_norm() {
    QFETCH(int, type);
    QFETCH(int, hidden);
    QFETCH(QString, shape);
    QFETCH(int, norm_wg);
    if (!h.device->info().int8_dot) QSKIP("the device has no integer dot products");
    const DType t = DType(type);
    const float eps = 1e-6f;
    const Matrix w = random_matrix(t, hidden, hidden, 11);
    // The matrix's input arrives as int8 from an add_norm_qout (as o's from the attention).
    const std::vector<float> b0 = random_floats(size_t(hidden), 12, -30, 30), r0 = random_floats(size_t(hidden), 13);
    const std::vector<float> r1 = random_floats(size_t(hidden), 14, -5, 5);  // the residual around the matrix
    const std::vector<float> norms = random_floats(size_t(4) * hidden, 15, 0.2f, 2.0f);  // 2 pairs of norms
    std::vector<float> x(hidden), r = r0, y(hidden), h1 = r1, xn(hidden);
    add_norm_reference(b0.data(), r.data(), norms.data(), norms.data() + hidden, hidden, eps, x.data());
    matmul(w, x.data(), 1, y.data(), pool);
    add_norm_reference(y.data(), h1.data(), norms.data() + 2 * hidden, norms.data() + 3 * hidden, hidden, eps,
                       xn.data());

    const vk::DeviceMatrix dm = vk::upload_matrix(*h.arena, *h.uploader, t, hidden, hidden,
                                                  [&](int64_t row) { return w.row(row); }, ~0ull, 64);
    h.uploader->finish();
    vk::MatvecShape s;
    std::sscanf(shape.toLatin1().constData(), "%u,%u,%u", &s.wg, &s.rows, &s.tpr);
    const uint32_t slot_count = uint32_t((hidden + s.rows_per_workgroup() - 1) / s.rows_per_workgroup());
    const vk::BufferSlice ns = h.upload(norms), xq = h.poisoned(size_t(hidden)), ys = h.poisoned(size_t(hidden)),
                          r1s = h.upload(r1), ss = h.poisoned(size_t(slot_count) * 4), hs = h.poisoned(size_t(hidden)),
                          xns = h.poisoned(size_t(hidden)), h_ref = h.poisoned(size_t(hidden)),
                          xn_ref = h.poisoned(size_t(hidden));
    h.run(h.pipelines->get("add_norm_qout", 5, {256}), {h.upload(b0), h.upload(r0), xq, ns, h.poisoned(size_t(hidden))},
          vk::AddNormPush{uint32_t(hidden), 0, uint32_t(hidden), eps}, 1);
    const vk::Kernel& k = h.pipelines->get(std::string("matvec_qin_sums_") + suffix(t), 7, {s.wg, s.rows, s.tpr});
    const std::vector<VkDescriptorSet> sets{
        h.descriptors->allocate(k, std::vector{dm.chunks[0].weights, dm.chunks[0].scales, xq, ys, r1s, ns, ss})};
    vk::MatrixCall call{false, false, 1, 0, uint32_t(hidden), uint32_t(hidden)};
    call.norm_post = uint32_t(2 * hidden);
    h.seq->begin(false);
    vk::record_matrix(*h.seq, k, dm.chunks, dm.cols, sets, call, s, 7, "test", -1);
    h.seq->submit_and_wait();
    vk::AddNormPush p{uint32_t(hidden), uint32_t(2 * hidden), uint32_t(3 * hidden), eps};
    p.slot_count = slot_count;
    h.run(h.pipelines->get("add_norm_slots_qout", 6, {uint32_t(norm_wg)}), {ys, r1s, xns, ns, hs, ss}, p,
          uint32_t((hidden / 4 + norm_wg - 1) / norm_wg));
    // The same y through add_norm_qout: the sums' order differs, nothing else.
    h.run(h.pipelines->get("add_norm_qout", 5, {256}), {ys, r1s, xn_ref, ns, h_ref},
          vk::AddNormPush{uint32_t(hidden), uint32_t(2 * hidden), uint32_t(3 * hidden), eps}, 1);

    // xn's int8 form: per 32 values 8 words of int8, then 4 fp32 scales, one for each 8.
    auto dequantize = [&](const vk::BufferSlice& q) {
      const std::vector<uint32_t> words = h.read<uint32_t>(q, size_t(hidden / 32) * 12);
      std::vector<float> v(hidden);
      for (int e = 0; e < hidden; ++e) {
        const uint32_t* b = &words[size_t(e / 32) * 12];
        float scale;
        std::memcpy(&scale, &b[8 + (e % 32) / 8], 4);
        v[e] = float(int8_t(uint8_t(b[(e % 32) / 4] >> (8 * (e % 4))))) * scale;
      }
      return v;
    };
    const std::vector<float> h_gpu = h.read(hs, size_t(hidden)), xn_gpu = dequantize(xns);
    // The matrix's input and xn are rounded to int8 (a scale for each 8): 3-6e-3 measured.
    const double eh = relative_error(h_gpu, h1), exn = relative_error(xn_gpu, xn);
    QVERIFY2(eh < 1e-2 && exn < 1.5e-2, qPrintable(QString("h %1, xn %2").arg(eh).arg(exn)));
    const double dh = relative_error(h_gpu, h.read(h_ref, size_t(hidden))),
                 dxn = relative_error(xn_gpu, dequantize(xn_ref));
    QVERIFY2(dh < 1e-6 && dxn < 1e-3, qPrintable(QString("against add_norm_qout: h %1, xn %2").arg(dh).arg(dxn)));
  }

  void embedding_data() {
    QTest::addColumn<int>("type");
    QTest::addColumn<int>("hidden");
    QTest::addColumn<bool>("chunked");
    for (DType t : {DType::F32, DType::F16, DType::Q8_0, DType::Q4_0}) {
      QTest::newRow(suffix(t)) << int(t) << 96 << false;
      QTest::newRow((std::string(suffix(t)) + " wide, chunked").c_str()) << int(t) << 2240 << true;
    }
  }

  // embed_*: x = row * sqrt(hidden) and xn = rms_norm(x) * w, tokens from any chunk.
  void embedding() {
    QFETCH(int, type);
    QFETCH(int, hidden);
    QFETCH(bool, chunked);
    const DType t = DType(type);
    const Matrix e = random_matrix(t, 300, hidden, 3);
    const EmbedCheck c = check_embed(h, e, std::string("embed_") + suffix(t), chunked);
    if (chunked) QCOMPARE(int(c.chunks), 5);
    QVERIFY2(c.x < 1e-6 && c.xn < 1e-6, qPrintable(QString("x %1, xn %2").arg(c.x).arg(c.xn)));
  }

  void add_norm_data() {
    QTest::addColumn<int>("hidden");
    QTest::newRow("hidden 96") << 96;
    QTest::newRow("hidden 5376") << 5376;
  }

  // add_norm: x += rms_norm(y) * w_post, then xn = rms_norm(x) * w_pre.
  void add_norm() {
    QFETCH(int, hidden);
    const int n = 5;
    const float eps = 1e-6f;
    std::vector<float> y = random_floats(size_t(n) * hidden, 1, -30, 30), x = random_floats(size_t(n) * hidden, 2);
    const std::vector<float> norms = random_floats(size_t(2) * hidden, 3, 0.2f, 2.0f);
    std::vector<float> x_out = x, xn(x.size());
    for (int t = 0; t < n; ++t)
      add_norm_reference(&y[t * hidden], &x_out[t * hidden], norms.data(), norms.data() + hidden, hidden, eps,
                         &xn[t * hidden]);
    // The residual in place (batches), then into a buffer of its own (one token), input untouched.
    for (bool in_place : {true, false}) {
      const vk::BufferSlice ys = h.upload(y), xs = h.upload(x), xns = h.poisoned(xn.size()), ns = h.upload(norms);
      const vk::BufferSlice outs = in_place ? xs : h.poisoned(x.size());
      h.run(h.pipelines->get("add_norm", 5, {256}), {ys, xs, xns, ns, outs},
            vk::AddNormPush{uint32_t(hidden), 0, uint32_t(hidden), eps}, n);
      const double ex = relative_error(h.read(outs, x.size()), x_out), exn = relative_error(h.read(xns, xn.size()), xn);
      QVERIFY2(ex < 1e-6 && exn < 1e-6, qPrintable(QString("in place %1: x %2, xn %3").arg(in_place).arg(ex).arg(exn)));
      if (!in_place) QCOMPARE(h.read(xs, x.size()), x);
    }
  }

  // argmax.comp's two passes pick what the CPU's kiln::argmax picks: ties to the lowest index
  // (also across workgroups), NaN never, the first -inf when nothing is larger, -1 for all NaN.
  void argmax() {
    const float nan = std::nanf(""), inf = INFINITY;
    const int vocab = 262144;
    std::vector<std::pair<const char*, std::vector<float>>> rows;
    rows.emplace_back("random", random_floats(vocab, 7, -20, 20));
    std::vector<float> ties = random_floats(vocab, 8, -20, 20);
    ties[200000] = ties[70001] = ties[70002] = 25.0f;  // in different workgroups and in one
    rows.emplace_back("ties", ties);
    std::vector<float> poisoned = ties;
    for (size_t i = 0; i < poisoned.size(); i += 97) poisoned[i] = nan;
    poisoned[3] = -inf;
    poisoned[70001] = nan;
    rows.emplace_back("NaN", poisoned);
    std::vector<float> low(vocab, -inf);
    for (size_t i = 0; i < 2000; ++i) low[i] = nan;
    rows.emplace_back("nothing above -inf", low);
    rows.emplace_back("all NaN", std::vector<float>(vocab, nan));
    rows.emplace_back("a short row", random_floats(300, 9));
    std::vector<float> last(5000, -1.0f);
    last.back() = 0.5f;
    rows.emplace_back("the last logit", last);
    const vk::Kernel& k = h.pipelines->get("argmax", 4);
    for (const auto& [name, v] : rows) {
      const uint32_t n = uint32_t(v.size()), groups = std::clamp<uint32_t>((n + 1023) / 1024, 1, 256);
      const vk::BufferSlice logits = h.upload(v), partials = h.poisoned(2 * groups), pick = h.poisoned(2),
                            token = h.poisoned(1);
      h.run(k, {logits, partials, pick, token}, vk::ArgmaxPush{n, (n + groups - 1) / groups, 0}, groups);
      h.run(k, {logits, partials, pick, token}, vk::ArgmaxPush{groups, 0, 1, 1}, 1);
      const int32_t expected = kiln::argmax(v);
      QVERIFY2(h.read<int32_t>(pick, 2)[1] == expected, name);
      QVERIFY2(h.read<int32_t>(token, 1)[0] == std::max(expected, 0), name);  // the next step's input
    }
    QCOMPARE(kiln::argmax(rows[1].second), 70001);  // the cases above test what they say
    QCOMPARE(kiln::argmax(rows[2].second), 70002);
    QCOMPARE(kiln::argmax(rows[3].second), 2000);
    QCOMPARE(kiln::argmax(rows[4].second), -1);
  }
};

QTEST_GUILESS_MAIN(VulkanKernels)
#include "test_kernels.moc"
