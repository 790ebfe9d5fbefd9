// How a weight matrix lives on the GPU (read by kernels/vulkan/weights.glsl).
//
// Rows are runs of 32-weight blocks; block gb = row * blocks_per_row + b of a chunk. The GGUF block
// structs (34 and 18 bytes) are split so every load is 16 bytes and aligned:
//   F32  : weights [rows][cols] float                       (8 x 16 B a block)
//   F16  : weights [rows][cols] fp16                        (4 x 16 B a block)
//   Q8_0 : weights [blocks][32] int8, scales [blocks] fp16  (2 x 16 B a block, + 2 B)
//   Q4_0 : weights [blocks][16] nibble bytes as in GGUF, scales [blocks] fp16 (16 B a block, + 2 B)
//   Q5_0, Q4_1, Q5_1, IQ4_NL: weights as Q4_0's, scales [blocks] of the GGUF block's other bytes as
//          they are: halfwords d (, m) (, the 32 fifth bits qh as two): 22, 20, 24, 18 B a block as in the file
//   Q4_K, Q5_K, Q6_K: weights [blocks][16] low nibbles in Q4_0's order (Q3_K, Q2_K: [blocks][8] low
//          2 bits), scales [super-blocks][words] of scales, mins and high bits (kquant_layout.h);
//          IQ4_XS likewise: its nibbles, scales [super-blocks][2 words]
// Bytes per weight are unchanged (Q4_0 stays 4.5 bits; Q6_K takes 212 bytes for GGUF's 210). A matrix
// larger than one storage-buffer binding (maxStorageBufferRange) is split into row chunks, each
// dispatched on its own. A stack of matrices of different types (Q4_K_M files keep attn_v in Q6_K
// next to q, k in Q4_K) is uploaded part by part, its chunks each of their part's type.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "quant/dtype.h"
#include "runtime/vulkan/memory.h"

namespace kiln::vk {

// Bytes of the weight words / of the scales of `rows` rows (scales: 0 for F32 and F16).
uint64_t layout_weight_bytes(DType type, int64_t rows, int64_t cols);
uint64_t layout_scale_bytes(DType type, int64_t rows, int64_t cols);
uint64_t layout_scale_row_bytes(DType type, int64_t cols);  // one row's, unaligned

// Repacks `rows` rows given in their GGUF/host form (row_ptr(i) -> row i's bytes) into the GPU
// layout. weights gets layout_weight_bytes(...), scales layout_scale_bytes(...).
void repack_rows(DType type, int64_t cols, int64_t rows, const std::function<const uint8_t*(int64_t)>& row_ptr,
                 uint8_t* weights, uint8_t* scales);

struct DeviceMatrix {
  DType type = DType::F32;
  int64_t rows = 0, cols = 0;
  struct Chunk {
    DType type = DType::F32;  // the matrix's type, but for the parts of a mixed stack (upload_stacked)
    int64_t row_begin = 0, rows = 0;
    BufferSlice weights, scales;  // scales aliases weights for F32/F16 (unused by those kernels)
  };
  std::vector<Chunk> chunks;
  uint64_t bytes() const;  // device bytes of weights and scales
  bool mixed() const;      // chunks of more than one type
};

// Uploads a logical matrix whose row r is row_ptr(r) (any mix of source matrices of one type, e.g.
// q|k|v stacked or gate/up interleaved). Chunks hold at most max_chunk_bytes of weights and a
// multiple of row_granularity rows (an even count when a granule does not fit; the last may be short).
DeviceMatrix upload_matrix(MemoryArena& arena, Uploader& uploader, DType type, int64_t rows, int64_t cols,
                           const std::function<const uint8_t*(int64_t)>& row_ptr, uint64_t max_chunk_bytes,
                           int64_t row_granularity);

// Rows of one type stacked into a larger matrix (q|k|v): row(r) is the part's row r.
struct StackedPart {
  DType type;
  int64_t rows;
  std::function<const uint8_t*(int64_t)> row;
};
// Uploads the parts stacked in order: as upload_matrix when they share a type, else each part in
// chunks of its own (type: the first part's; mixed() says which it is).
DeviceMatrix upload_stacked(MemoryArena& arena, Uploader& uploader, const std::vector<StackedPart>& parts, int64_t cols,
                            uint64_t max_chunk_bytes, int64_t row_granularity);

}  // namespace kiln::vk
