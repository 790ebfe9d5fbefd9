// Cycles of the attention kernel on one Phoenix compute tile, from what it streams and the
// operations it issues, and of a whole launch from the plan. Every constant is labelled in
// core/runtime/npu/DESIGN.md ("Cycle model"): published architecture facts (AM020, UG1603) or
// stated assumptions about the compiled code; nothing here is measured on an NPU.
#pragma once

#include "runtime/npu/npu_layout.h"

namespace kiln {

// One compute tile, one K/V tile of the step (shape.kv_keys keys).
struct NpuTileCycles {
  double stream = 0;   // K/V bytes over the tile's one input stream, 4 bytes a cycle
  double mmul = 0;     // matrix-unit steps, counted at the rate the 2 load units can feed them
  double softmax = 0;  // vector work of masking, row maxima, exp2 and P packing (no rescale)
  double rescale = 0;  // extra when a row block's running maximum rises (rare once m settles)
  int mmul_ops = 0;    // aie::mmul mul/mac calls (for the model's efficiency figure)
  // Streams and compute overlap (double-buffered K/V); the vector unit issues one instruction a
  // cycle, so matrix and softmax work add up.
  double busy() const { return stream > mmul + softmax ? stream : mmul + softmax; }
};

// rows: query rows of the Q tile (-1: all q_rows); the kernel skips row blocks without queries.
NpuTileCycles npu_tile_cycles(const NpuTileShape& shape, int rows = -1);

// Cycles of launch `launch` of a plan: the slowest column's steps, each tiles_per_step times the
// larger of the stream cycles and the compute of its fullest Q tile (the broadcast K/V stream moves
// at the pace of its slowest reader; idle rows and padding steps still consume their K/V objects).
// The split variant (kv_split 2) has half the tiles per column step, so its steps and launches take
// half the cycles; DESIGN.md, "Two columns sharing a kv head".
double npu_launch_cycles(const NpuPlan& plan, int launch);

}  // namespace kiln
