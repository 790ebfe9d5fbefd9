#include "runtime/npu/npu_emulator.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <string>
#include <vector>

#include "runtime/cpu/thread_pool.h"
#include "runtime/npu/npu_kernel_math.h"

namespace kiln {

using namespace kiln_npu;
using npu_math::ceil_clamped;
using npu_math::exp2_kernel;
using npu_math::mmul_lane;
using npu_math::round_bf16;
using npu_math::scale_down_pow2;

namespace {

inline float bf16_value(uint16_t h) { return std::bit_cast<float>(uint32_t(h) << 16); }

}  // namespace

void emulate_npu_step(const NpuTileShape& shape, const int32_t* q_object, const int32_t* kv_objects,
                      int32_t* out_object) {
  const int D = shape.head_dim, BQ = shape.q_rows, BK = shape.kv_keys;
  float* out = reinterpret_cast<float*>(out_object);
  float* m = out + BQ * D;
  float* l = m + BQ;
  // attn_step_begin: O = 0, m = kNoMax, l = 0.
  std::fill(out, out + BQ * D, 0.0f);
  std::fill(m, m + BQ, kNoMax);
  std::fill(l, l + BQ, 0.0f);
  if (q_object[kDescMagic] != kDescriptorMagic) throw Error("npu: a Q object has no descriptor (bad packing)");
  const int rows_valid = q_object[kDescRowsValid];
  const int group = q_object[kDescGroup];
  const int64_t query_pos = q_object[kDescQueryPos], first_row = q_object[kDescFirstRow];
  const int64_t key_pos = q_object[kDescKeyPos], key_end = q_object[kDescKeyEnd];
  const int tiles = q_object[kDescTilesValid];
  const int window = q_object[kDescWindow];
  if (rows_valid < 0 || rows_valid > BQ || group <= 0 || tiles < 0 || tiles > shape.tiles_per_step)
    throw Error("npu: a step descriptor is out of range (bad packing)");
  const auto* q = reinterpret_cast<const uint16_t*>(q_object + kDescriptorWords);

  std::vector<float> qrow(D), scores(BK), probs(BK), products(kMmulS);
  std::vector<char> visible(BK);
  for (int t = 0; t < tiles; ++t) {
    const auto* kt = reinterpret_cast<const uint16_t*>(kv_objects + int64_t(t) * kv_object_words(shape));
    const uint16_t* vt = kt + BK * D;
    for (int i = 0; i < rows_valid; ++i) {
      const int64_t p = query_pos + (first_row + i) / group;
      for (int d = 0; d < D; ++d) qrow[d] = bf16_value(q[q_offset(D, i, d)]);
      // S = Q K^T: one mmul step per 8 head-dim elements, each adding its 8 exact products to the
      // fp32 accumulator with one rounding (mmul_lane); masked keys become -inf (visible[j]).
      bool any = false;
      float tile_max = -INFINITY;
      for (int j = 0; j < BK; ++j) {
        const int64_t kp = key_pos + int64_t(t) * BK + j;
        visible[j] = kp < key_end && kp <= p && (window == 0 || kp > p - window);
        if (!visible[j]) continue;
        float s = 0.0f;
        for (int d8 = 0; d8 < D; d8 += kMmulS) {
          for (int e = 0; e < kMmulS; ++e) products[e] = qrow[d8 + e] * bf16_value(kt[kt_offset(BK, d8 + e, j)]);
          s = mmul_lane(s, products.data(), kMmulS);
        }
        scores[j] = s;
        tile_max = any ? std::max(tile_max, s) : s;
        any = true;
      }
      if (!any) continue;  // the kernel keeps m, O and l of a row without a visible key
      // Online softmax with an integer running maximum: rescaling is an exact power of two.
      const float m_new = std::max(m[i], ceil_clamped(tile_max));
      const int64_t shift = int64_t(m_new) - int64_t(m[i]);
      if (shift > 0) {
        for (int d = 0; d < D; ++d) out[o_offset(D, i, d)] = scale_down_pow2(out[o_offset(D, i, d)], shift);
        l[i] = scale_down_pow2(l[i], shift);
      }
      m[i] = m_new;
      for (int j = 0; j < BK; ++j) probs[j] = visible[j] ? round_bf16(exp2_kernel(scores[j] - m_new)) : 0.0f;
      // l += P 1 and O += P V: one mmul step per 8 keys onto the loaded l and O.
      float sum = l[i];
      for (int j8 = 0; j8 < BK; j8 += kMmulS) sum = mmul_lane(sum, probs.data() + j8, kMmulS);
      l[i] = sum;
      for (int d = 0; d < D; ++d) {
        float acc = out[o_offset(D, i, d)];
        for (int j8 = 0; j8 < BK; j8 += kMmulS) {
          for (int e = 0; e < kMmulS; ++e) products[e] = probs[j8 + e] * bf16_value(vt[v_offset(D, j8 + e, d)]);
          acc = mmul_lane(acc, products.data(), kMmulS);
        }
        out[o_offset(D, i, d)] = acc;
      }
    }
  }
}

namespace {

class NpuEmulator final : public NpuDevice {
 public:
  explicit NpuEmulator(ThreadPool& pool) : pool_(pool) {}
  std::string name() const override { return "npu-emulator"; }

  void run(const NpuJob& job, std::chrono::steady_clock::time_point deadline) override {
    const NpuPlan& plan = *job.plan;
    const NpuBufferWords need = npu_launch_words(plan.shape);
    if (int64_t(job.q_words.size()) < need.q || int64_t(job.kv_words.size()) < need.kv ||
        int64_t(job.out_words.size()) < need.out)
      throw Error("npu-emulator: buffers are smaller than a launch");
    if (job.launch < 0 || job.launch >= plan.launches) throw Error("npu-emulator: no such launch");
    // Every compute tile's step of the launch: (column, slot, row), independent of each other.
    const int64_t steps = int64_t(kColumns) * plan.shape.steps_per_launch;
    std::atomic<bool> late{false};
    pool_.parallel_for(steps * kRowsPerColumn, [&](int64_t begin, int64_t end) {
      for (int64_t w = begin; w < end && !late.load(std::memory_order_relaxed); ++w) {
        if (std::chrono::steady_clock::now() > deadline) {
          late = true;
          return;
        }
        const int64_t step = job.launch * steps + w / kRowsPerColumn;
        const int row = int(w % kRowsPerColumn);
        emulate_npu_step(plan.shape, job.q_words.data() + q_object_offset(plan, step, row),
                         job.kv_words.data() + kv_object_offset(plan, step, 0),
                         job.out_words.data() + out_object_offset(plan, step, row));
      }
    });
    if (late) throw NpuTimeout("npu-emulator: attention did not finish in time");
  }

 private:
  ThreadPool& pool_;
};

}  // namespace

std::unique_ptr<NpuDevice> make_npu_emulator(ThreadPool& pool) { return std::make_unique<NpuEmulator>(pool); }

}  // namespace kiln
