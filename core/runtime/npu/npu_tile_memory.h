// Where the kernel's buffers live in a compute tile's 64 KiB and a memory tile's 512 KiB, as
// mlir-aie places them with `--alloc-scheme=basic-sequential` (kernels/npu/Makefile): the core's
// stack at address 0, then every buffer in turn, each aligned for the 256-bit load/store units.
// Kept beside the kernel's own static_asserts so a test can name the buffer that does not fit.
#pragma once

#include <string>
#include <vector>

#include "attention_layout.h"

namespace kiln {

struct NpuTileBuffer {
  std::string name;  // as in the design (q_<c>_<r>, kv_<c>, out_<c>_<r>) or the kernel (s_tile, ...)
  int bytes = 0;     // one object
  int copies = 1;    // ObjectFifo depth (each object is its own buffer)
  int address = 0;   // of the first copy, after placement
};

struct NpuTileMemory {
  std::vector<NpuTileBuffer> buffers;  // placed, stack first
  int end = 0;                         // first byte past the last buffer
  int capacity = 0;                    // the tile's data memory
};

constexpr int kNpuBufferAlignment = 32;  // AM020: 256-bit loads and stores need aligned addresses

// One compute tile of the design: stack, Q objects, K/V objects, the out object, the kernel's
// scratch (S, P) and small statics, placed in that order.
NpuTileMemory npu_compute_tile_memory(const kiln_npu::TileShape& shape);
// One memory tile (per column): the Q split, the K/V forward (broadcast) and the out join buffers.
NpuTileMemory npu_memory_tile_memory(const kiln_npu::TileShape& shape);

// Buffers a bank-aware allocator could not place: larger than one 16 KiB bank.
std::vector<std::string> npu_buffers_wider_than_a_bank(const NpuTileMemory& m);

// DMA channels one column of the design uses, against kiln_npu's per-tile limits.
struct NpuColumnChannels {
  int mem_tile_mm2s = 0, mem_tile_s2mm = 0, compute_s2mm = 0, shim_mm2s = 0;
};
NpuColumnChannels npu_column_channels();

}  // namespace kiln
