// The contract between Kiln's host code (core/runtime/npu) and the AIE attention kernel for the
// Ryzen AI "Phoenix" NPU (mlir-aie device npu1): tile shapes, the buffers' object layout, the step
// descriptor and the constants of the kernel's arithmetic. Both the AIE compiler (Peano) and the
// host compiler include this file, so the numbers cannot drift apart; it needs no library headers.
#pragma once

#include <stdint.h>

namespace kiln_npu {

// ---- The array (mlir-aie's npu1: 4 usable columns; the irregular column 0 is not exposed) ----
constexpr int kColumns = 4;          // shim + memory tile + 4 compute tiles each
constexpr int kRowsPerColumn = 4;    // compute tiles per column
constexpr int kComputeTileBytes = 64 * 1024;   // data memory of one compute tile
constexpr int kBankBytes = 16 * 1024;          // ... in 4 banks (AM020, "AIE-ML Tile Data Memory")
constexpr int kMemTileBytes = 512 * 1024;      // one memory tile
constexpr int kStackBytes = 1024;              // mlir-aie's default core stack
// DMA channels (AM020, "AIE-ML Tile DMA" / "Memory Tile DMA"): a compute tile has 2 stream-to-memory
// (S2MM) and 2 memory-to-stream (MM2S) channels, a memory tile 6 of each, a shim tile 2 of each.
// Each moves 32 bits a cycle.
constexpr int kComputeTileS2mm = 2, kMemTileMm2s = 6, kMemTileS2mm = 6, kShimMm2s = 2;
constexpr int kStreamBytesPerCycle = 4;

// ---- The AIE-ML bf16 matrix unit: C[r x t] += A[r x s] * B[s x t] ----
constexpr int kMmulR = 4, kMmulS = 8, kMmulT = 4;

// One compiled variant of the kernel.
//   q_rows:           query rows per Q tile (a row = one (token, query head) pair of one kv head)
//   kv_keys:          keys per K/V tile
//   tiles_per_step:   K/V tiles one step streams (a step = one key chunk of kv_keys * tiles_per_step)
//   tiles_per_step:   K/V tiles one column streams per step
//   steps_per_launch: steps each column runs per kernel launch
//   q_depth:          Q ObjectFifo depth in a compute tile (2 overlaps the next Q load, when it fits)
//   kv_split:         columns that stream one key chunk (kv_keys * tiles_per_step * kv_split keys)
//                     between them: 1, or 2 for "two columns sharing a kv head", where the columns
//                     2p and 2p + 1 of a slot take the chunk's two halves, each computes a partial
//                     softmax state (m, l, O not yet divided) and the host merges the two exactly
struct TileShape {
  int head_dim;
  int q_rows;
  int kv_keys;
  int tiles_per_step;
  int steps_per_launch;
  int q_depth;
  int kv_split = 1;
};

// The two head sizes of Gemma 3 (27B: 128; 1B/4B/12B: 256). See kernels/npu/README.md for why.
constexpr TileShape kShapeD128{128, 32, 16, 32, 4, 2, 1};
constexpr TileShape kShapeD256{256, 16, 16, 32, 4, 1, 1};
// The split variants: the same compute-tile kernel and buffers, the same 512-key chunk, half the
// K/V tiles per column and step (core/runtime/npu/DESIGN.md, "Two columns sharing a kv head").
constexpr TileShape kShapeD128Split{128, 32, 16, 16, 4, 2, 2};
constexpr TileShape kShapeD256Split{256, 16, 16, 16, 4, 1, 2};
// Keys one step of a column group covers (the planner's chunk), and one column's part of it.
constexpr int chunk_keys(TileShape s) { return s.kv_keys * s.tiles_per_step * s.kv_split; }
constexpr int column_part_keys(TileShape s) { return s.kv_keys * s.tiles_per_step; }

// ---- Buffer objects, in 32-bit words (every ObjectFifo carries int32 words) ----
// Q object:  descriptor (kDescriptorWords) + Q tile, bf16, mmul-A blocked (see below).
// KV object: K tile (bf16, mmul-B blocked as K^T) then V tile (bf16, mmul-B blocked).
// Out object: O (fp32, mmul-C blocked, not yet divided by l) + m[q_rows] (fp32) + l[q_rows] (fp32).
constexpr int kDescriptorWords = 16;
constexpr int q_object_words(TileShape s) { return kDescriptorWords + s.q_rows * s.head_dim / 2; }
constexpr int kv_object_words(TileShape s) { return s.kv_keys * s.head_dim; }  // 2 tiles of bf16
constexpr int out_object_words(TileShape s) { return s.q_rows * s.head_dim + 2 * s.q_rows; }

// Blocked layouts (each block row-major, blocks row-major), element offsets within a tile:
//   Q  [q_rows x D]   blocks 4 x 8:  ((row/4) * (D/8) + d/8) * 32 + (row%4) * 8 + d%8
//   K^T[D x kv_keys]  blocks 8 x 4:  ((d/8) * (keys/4) + key/4) * 32 + (d%8) * 4 + key%4
//   V  [kv_keys x D]  blocks 8 x 4:  ((key/8) * (D/4) + d/4) * 32 + (key%8) * 4 + d%4
//   O  [q_rows x D]   blocks 4 x 4:  ((row/4) * (D/4) + d/4) * 16 + (row%4) * 4 + d%4
constexpr int q_offset(int D, int row, int d) { return ((row / 4) * (D / 8) + d / 8) * 32 + (row % 4) * 8 + d % 8; }
constexpr int kt_offset(int keys, int d, int key) {
  return ((d / 8) * (keys / 4) + key / 4) * 32 + (d % 8) * 4 + key % 4;
}
constexpr int v_offset(int D, int key, int d) { return ((key / 8) * (D / 4) + d / 4) * 32 + (key % 8) * 4 + d % 4; }
constexpr int o_offset(int D, int row, int d) { return ((row / 4) * (D / 4) + d / 4) * 16 + (row % 4) * 4 + d % 4; }

// ---- The step descriptor: the first words of every Q object ----
// Row r of the tile is flattened row (first_row + r) of its kv head: token (first_row + r) / group
// at position query_pos + that token, query head kv_head * group + (first_row + r) % group.
// Key j of tile t is at position key_pos + t * kv_keys + j. Row r sees key position kp when
//   kp < key_end, kp <= p_r, and (window == 0 or kp > p_r - window).
enum DescriptorWord {
  kDescMagic = 0,
  kDescRowsValid = 1,   // rows of this tile that hold queries; 0: idle (consume K/V, compute nothing)
  kDescGroup = 2,       // query heads per kv head
  kDescQueryPos = 3,    // position of token 0 of the batch
  kDescFirstRow = 4,    // flattened row index of tile row 0
  kDescKeyPos = 5,      // position of key 0 of K/V tile 0 of this step
  kDescKeyEnd = 6,      // keys at or after this position are masked (chunk end)
  kDescTilesValid = 7,  // K/V tiles of this step that hold keys; the rest are padding
  kDescWindow = 8,      // sliding window (local layers), 0 for global layers
  kDescTileCounter = 9, // the kernel's own count of tiles seen in this step (host writes 0)
};
constexpr int32_t kDescriptorMagic = 0x4b4e5031;  // "KNP1"

// ---- Arithmetic constants ----
// Q is pre-scaled on the host by query_pre_attn_scalar^-0.5 * log2(e), so scores are in log2 units
// and the softmax is exp2(s - m). The running maximum m is kept as an integer (the ceiling of the
// scores seen), so rescaling by exp2(m_old - m_new) is an exact power-of-two scaling.
constexpr float kLog2e = 1.44269504088896340736f;
constexpr float kNoMax = -1073741824.0f;   // m before any key was seen (-2^30)
constexpr float kMaxClamp = 1048576.0f;    // |m| is clamped to 2^20 (keeps exp2 arguments <= 0)
constexpr float kExpMin = -126.0f;         // exp2 of anything below is 0 (results stay normal floats)
// 2^f on [0, 1): cubic through the Chebyshev nodes (max error 1.0e-4 before the bf16 rounding of
// f and of the Horner steps). c0..c2 are fp32 accumulator inits; c3 is only ever a bf16 operand,
// so it is given already rounded to bf16 (no conversion for the two compilers to disagree on).
constexpr float kExp2C0 = 0x1.fff2eep-1f;
constexpr float kExp2C1 = 0x1.6484aep-1f;
constexpr float kExp2C2 = 0x1.cc2becp-3f;
constexpr float kExp2C3 = 0x1.44p-4f;

// ---- What one compute tile holds (bytes), at the ObjectFifo depths the design uses ----
constexpr int kKvDepth = 2, kOutDepth = 1;
// The kernel's small static arrays: row_pos (16 words per row block), lane_row_shift and kLaneCol
// (16 words each), the bf16 ones block (32 values).
constexpr int kernel_small_statics_bytes(TileShape s) { return (s.q_rows / kMmulR) * 16 * 4 + 2 * 16 * 4 + 32 * 2; }
constexpr int compute_tile_bytes(TileShape s) {
  return s.q_depth * q_object_words(s) * 4 + kKvDepth * kv_object_words(s) * 4 +
         kOutDepth * out_object_words(s) * 4 +
         s.q_rows * s.kv_keys * 4 +  // scores S, fp32
         s.q_rows * s.kv_keys * 2 +  // probabilities P, bf16
         kernel_small_statics_bytes(s) + kStackBytes;
}
constexpr int mem_tile_bytes(TileShape s) {  // per column: Q split, K/V broadcast, out join; double-buffered
  return 2 * kRowsPerColumn * q_object_words(s) * 4 + 2 * kv_object_words(s) * 4 +
         2 * kRowsPerColumn * out_object_words(s) * 4;
}
constexpr bool shape_is_valid(TileShape s) {
  return s.head_dim % kMmulS == 0 && s.head_dim % kMmulT == 0 && s.q_rows % kMmulR == 0 &&
         s.kv_keys % kMmulS == 0 && s.kv_keys % kMmulT == 0 && s.tiles_per_step > 0 && s.steps_per_launch > 0 &&
         (s.q_depth == 1 || s.q_depth == 2) && (s.kv_split == 1 || s.kv_split == 2) && kColumns % s.kv_split == 0;
}
static_assert(shape_is_valid(kShapeD128) && shape_is_valid(kShapeD256));
static_assert(shape_is_valid(kShapeD128Split) && shape_is_valid(kShapeD256Split));
static_assert(chunk_keys(kShapeD128Split) == chunk_keys(kShapeD128) &&
                  chunk_keys(kShapeD256Split) == chunk_keys(kShapeD256),
              "the split variants cut the same key chunks in two");
static_assert(compute_tile_bytes(kShapeD128) <= kComputeTileBytes, "D=128 variant overflows a compute tile");
static_assert(compute_tile_bytes(kShapeD256) <= kComputeTileBytes, "D=256 variant overflows a compute tile");
static_assert(mem_tile_bytes(kShapeD128) <= kMemTileBytes && mem_tile_bytes(kShapeD256) <= kMemTileBytes);
static_assert(compute_tile_bytes(kShapeD128Split) <= kComputeTileBytes &&
              compute_tile_bytes(kShapeD256Split) <= kComputeTileBytes);
static_assert(mem_tile_bytes(kShapeD128Split) <= kMemTileBytes && mem_tile_bytes(kShapeD256Split) <= kMemTileBytes);

}  // namespace kiln_npu
