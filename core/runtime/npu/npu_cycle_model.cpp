#include "runtime/npu/npu_cycle_model.h"

#include <algorithm>

namespace kiln {

using namespace kiln_npu;

namespace {

// Assumptions about the compiled kernel (DESIGN.md, "Cycle model"): each 256-bit load unit moves
// 32 bytes a cycle and there are two (AM020); an A or B operand of a 4x8x4 bf16 mmul is 64 bytes,
// an fp32 C block 64 bytes.
constexpr double kLoadBytesPerCycle = 2 * 32;
constexpr double kExp2VectorOps = 22;      // clamp, convert, correct, Horner (3 mac + 2 srs), exponent add, select
constexpr double kMaskVectorOps = 10;      // visible(): broadcasts, adds, 2-3 compares, select, store
constexpr double kRowMaxVectorOps = 12;    // fold of a row block's maxima, clamp, ceil by conversion
constexpr double kScalarPerRow = 12;       // the m update of one row (scalar unit, partly hidden by VLIW)
constexpr double kScaleDownVectorOps = 7;  // scale_down() on one 16-lane block

}  // namespace

NpuTileCycles npu_tile_cycles(const NpuTileShape& s, int rows) {
  const int valid = rows < 0 ? s.q_rows : std::min(rows, s.q_rows);
  const int D = s.head_dim, RB = (valid + kMmulR - 1) / kMmulR, KB = s.kv_keys / kMmulT, PB = s.kv_keys / kMmulS;
  NpuTileCycles c;
  c.stream = double(kv_object_words(s)) * 4 / kStreamBytesPerCycle;
  // S = Q K^T: each step loads its A (Q) and B (K) block afresh: 128 bytes.
  const double s_ops = double(RB) * KB * (D / kMmulS);
  // l += P 1: A (P) block per step, the ones block stays in a register.
  const double l_ops = double(RB) * PB;
  // O += P V: per 4x4 output block, load and store C once, then PB steps of A (P) and B (V).
  const double o_blocks = double(RB) * (D / kMmulT);
  const double o_ops = o_blocks * PB;
  c.mmul_ops = int(s_ops + l_ops + o_ops);
  c.mmul = s_ops * 128 / kLoadBytesPerCycle + l_ops * 64 / kLoadBytesPerCycle +
           o_blocks * (64 + PB * 128) / kLoadBytesPerCycle;
  c.mmul = std::max(c.mmul, double(c.mmul_ops));  // never faster than one mmul a cycle
  c.softmax = RB * KB * kMaskVectorOps + RB * (KB + kRowMaxVectorOps) + RB * 2 * PB * (kExp2VectorOps + 2) +
              RB * kMmulR * kScalarPerRow;
  c.rescale = o_blocks * kScaleDownVectorOps;
  return c;
}

double npu_launch_cycles(const NpuPlan& plan, int launch) {
  double slowest = 0;
  for (int column = 0; column < kColumns; ++column) {
    double cycles = 0;
    for (int slot = 0; slot < plan.shape.steps_per_launch; ++slot) {
      const NpuStep& step = plan.steps[plan.step_at(launch, column, slot)];
      int rows = 0;  // the fullest Q tile of the step
      if (step.kv_head >= 0)
        for (int r = 0; r < kRowsPerColumn; ++r)
          if (step.q_tiles[r] >= 0) rows = std::max(rows, plan.q_tiles[step.q_tiles[r]].rows_valid);
      cycles += plan.shape.tiles_per_step * npu_tile_cycles(plan.shape, rows).busy();
    }
    slowest = std::max(slowest, cycles);
  }
  return slowest;
}

}  // namespace kiln
