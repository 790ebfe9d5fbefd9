#include "runtime/npu/npu_tile_memory.h"

namespace kiln {

using namespace kiln_npu;

namespace {

int align_up(int x) { return (x + kNpuBufferAlignment - 1) / kNpuBufferAlignment * kNpuBufferAlignment; }

NpuTileMemory place(std::vector<NpuTileBuffer> buffers, int capacity) {
  NpuTileMemory m;
  m.capacity = capacity;
  int at = 0;
  for (NpuTileBuffer& b : buffers) {
    b.address = align_up(at);
    at = b.address + b.bytes * b.copies;
  }
  m.buffers = std::move(buffers);
  m.end = at;
  return m;
}

}  // namespace

NpuTileMemory npu_compute_tile_memory(const TileShape& s) {
  return place({{"stack", kStackBytes, 1},
                {"q_<c>_<r> (descriptor + Q tile)", q_object_words(s) * 4, s.q_depth},
                {"kv_<c> (K^T tile + V tile)", kv_object_words(s) * 4, kKvDepth},
                {"out_<c>_<r> (O, m, l)", out_object_words(s) * 4, kOutDepth},
                {"s_tile (scores, fp32)", s.q_rows * s.kv_keys * 4, 1},
                {"p_tile (probabilities, bf16)", s.q_rows * s.kv_keys * 2, 1},
                {"row_pos, lane_row_shift, kLaneCol, ones", kernel_small_statics_bytes(s), 1}},
               kComputeTileBytes);
}

NpuTileMemory npu_memory_tile_memory(const TileShape& s) {
  return place({{"q_l3_<c> (4 Q objects)", kRowsPerColumn * q_object_words(s) * 4, 2},
                {"kv_l3_<c> (one K/V object)", kv_object_words(s) * 4, 2},
                {"out_l3_<c> (4 out objects)", kRowsPerColumn * out_object_words(s) * 4, 2}},
               kMemTileBytes);
}

std::vector<std::string> npu_buffers_wider_than_a_bank(const NpuTileMemory& m) {
  std::vector<std::string> wide;
  for (const NpuTileBuffer& b : m.buffers)
    if (b.bytes > kBankBytes) wide.push_back(b.name);
  return wide;
}

NpuColumnChannels npu_column_channels() {
  NpuColumnChannels c;
  c.mem_tile_mm2s = kRowsPerColumn + 1 + 1;  // Q split (one per row), K/V broadcast, out to the shim
  c.mem_tile_s2mm = 1 + 1 + kRowsPerColumn;  // Q and K/V from the shim, out from each row
  c.compute_s2mm = 2;                        // Q, K/V
  c.shim_mm2s = 2;                           // Q, K/V
  return c;
}

}  // namespace kiln
