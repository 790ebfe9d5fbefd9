#include "runtime/vulkan/weight_layout.h"

#include <algorithm>
#include <cstring>

#include "kiln/types.h"
#include "quant/block32_formats.h"
#include "runtime/vulkan/kquant_layout.h"

namespace kiln::vk {
namespace {

uint64_t align16(uint64_t v) { return (v + 15) / 16 * 16; }

}  // namespace

uint64_t layout_weight_bytes(DType type, int64_t rows, int64_t cols) {
  const uint64_t n = uint64_t(rows) * uint64_t(cols);
  switch (type) {
    case DType::F32: return n * 4;
    case DType::F16: return n * 2;
    case DType::Q8_0: return n;
    case DType::Q4_0:
    case DType::Q5_0:
    case DType::Q4_1:
    case DType::Q5_1:
    case DType::IQ4_NL: return n / 2;  // nibbles; Q5_0's and Q5_1's fifth bits go with their scales
    case DType::Q4_K:
    case DType::Q5_K:
    case DType::Q6_K:
    case DType::IQ4_XS: return n / 2;  // their low nibbles (kquant_layout.h)
    case DType::Q3_K:
    case DType::Q2_K: return n / 4;  // their low 2 bits
    default: throw Error(std::string("Vulkan: weights in ") + to_string(type) + " are not supported on the GPU");
  }
}

uint64_t layout_scale_row_bytes(DType type, int64_t cols) {
  if (gpu_kquant(type)) return kquant_scale_row_bytes(type, cols);
  if (is_block32_format(type)) return uint64_t(cols / kBlockSize) * (block32_format_bytes(type) - kBlockSize / 2);
  if (type != DType::Q8_0 && type != DType::Q4_0) return 0;
  return uint64_t(cols / kBlockSize) * 2;
}

uint64_t layout_scale_bytes(DType type, int64_t rows, int64_t cols) {
  return align16(uint64_t(rows) * layout_scale_row_bytes(type, cols));
}

void repack_rows(DType type, int64_t cols, int64_t rows, const std::function<const uint8_t*(int64_t)>& row_ptr,
                 uint8_t* weights, uint8_t* scales) {
  const int64_t nb = cols / kBlockSize;
  const size_t src_row = row_bytes(type, cols);
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t* src = row_ptr(r);
    if (gpu_kquant(type)) {
      repack_kquant_row(type, cols, src, weights + r * layout_weight_bytes(type, 1, cols),
                        scales + r * layout_scale_row_bytes(type, cols));
    } else if (type == DType::F32 || type == DType::F16) {
      std::memcpy(weights + r * src_row, src, src_row);
    } else if (type == DType::Q8_0) {
      for (int64_t b = 0; b < nb; ++b) {
        BlockQ8_0 blk;
        std::memcpy(&blk, src + b * sizeof(BlockQ8_0), sizeof blk);
        std::memcpy(weights + (r * nb + b) * kBlockSize, blk.qs, kBlockSize);
        std::memcpy(scales + (r * nb + b) * 2, &blk.d, 2);
      }
    } else if (is_block32_format(type)) {
      // GGUF's block is its scale words (d; m; qh) then the 16 nibble bytes: split as they are.
      const size_t block = block32_format_bytes(type), head = block - kBlockSize / 2;
      for (int64_t b = 0; b < nb; ++b) {
        std::memcpy(weights + (r * nb + b) * (kBlockSize / 2), src + b * block + head, kBlockSize / 2);
        std::memcpy(scales + (r * nb + b) * head, src + b * block, head);
      }
    } else {
      for (int64_t b = 0; b < nb; ++b) {
        BlockQ4_0 blk;
        std::memcpy(&blk, src + b * sizeof(BlockQ4_0), sizeof blk);
        std::memcpy(weights + (r * nb + b) * (kBlockSize / 2), blk.qs, kBlockSize / 2);
        std::memcpy(scales + (r * nb + b) * 2, &blk.d, 2);
      }
    }
  }
}

uint64_t DeviceMatrix::bytes() const {
  uint64_t total = 0;
  for (const Chunk& c : chunks)
    total += layout_weight_bytes(c.type, c.rows, cols) + layout_scale_bytes(c.type, c.rows, cols);
  return total;
}

DeviceMatrix upload_matrix(MemoryArena& arena, Uploader& uploader, DType type, int64_t rows, int64_t cols,
                           const std::function<const uint8_t*(int64_t)>& row_ptr, uint64_t max_chunk_bytes,
                           int64_t row_granularity) {
  if (cols % kBlockSize != 0)
    throw Error("Vulkan: a weight with rows of " + std::to_string(cols) +
                " values is not supported on the GPU (rows must be whole blocks of 32)");
  DeviceMatrix m;
  m.type = type;
  m.rows = rows;
  m.cols = cols;
  if (gpu_kquant(type) && cols % kSuperBlockSize != 0)
    throw Error("Vulkan: " + std::string(to_string(type)) + " rows of " + std::to_string(cols) +
                " values are not whole 256-weight super-blocks");
  const uint64_t per_row = layout_weight_bytes(type, 1, cols);
  // Whole granules when they fit, else an even count (GLU rows come in pairs).
  int64_t chunk_rows = int64_t(std::min<uint64_t>(max_chunk_bytes / per_row, uint64_t(rows) + 1));
  if (chunk_rows <= rows)  // more than one chunk (a matrix that fits whole stays whole)
    chunk_rows = chunk_rows >= row_granularity ? chunk_rows / row_granularity * row_granularity : chunk_rows / 2 * 2;
  if (chunk_rows <= 0) throw Error("Vulkan: one weight row of " + std::to_string(per_row) + " bytes exceeds a binding");
  chunk_rows = std::min(chunk_rows, rows);

  // Repack a slice of rows at a time into host memory, then hand it to the uploader.
  constexpr int64_t kSliceRows = 1024;  // even, so scale offsets stay word aligned
  std::vector<uint8_t> wbuf, sbuf;
  for (int64_t begin = 0; begin < rows; begin += chunk_rows) {
    DeviceMatrix::Chunk c;
    c.type = type;
    c.row_begin = begin;
    c.rows = std::min(chunk_rows, rows - begin);
    c.weights = arena.allocate(layout_weight_bytes(type, c.rows, cols));
    const uint64_t sb = layout_scale_bytes(type, c.rows, cols);
    c.scales = sb ? arena.allocate(sb) : c.weights;
    for (int64_t r = 0; r < c.rows; r += kSliceRows) {
      const int64_t n = std::min(kSliceRows, c.rows - r);
      wbuf.resize(layout_weight_bytes(type, n, cols));
      sbuf.resize(layout_scale_bytes(type, n, cols));
      repack_rows(type, cols, n, [&](int64_t i) { return row_ptr(begin + r + i); }, wbuf.data(), sbuf.data());
      uploader.write(c.weights, layout_weight_bytes(type, r, cols), wbuf.data(), wbuf.size());
      if (sb) {
        const uint64_t per = layout_scale_row_bytes(type, cols);
        uploader.write(c.scales, uint64_t(r) * per, sbuf.data(), uint64_t(n) * per);
      }
    }
    m.chunks.push_back(c);
  }
  return m;
}

DeviceMatrix upload_stacked(MemoryArena& arena, Uploader& uploader, const std::vector<StackedPart>& parts, int64_t cols,
                            uint64_t max_chunk_bytes, int64_t row_granularity) {
  int64_t rows = 0;
  bool one_type = true;
  for (const StackedPart& p : parts) {
    rows += p.rows;
    one_type = one_type && p.type == parts.front().type;
  }
  auto row_of = [&parts](int64_t r) {
    for (const StackedPart& p : parts) {
      if (r < p.rows) return p.row(r);
      r -= p.rows;
    }
    throw Error("Vulkan: row past a stacked matrix");
  };
  if (one_type) return upload_matrix(arena, uploader, parts.front().type, rows, cols, row_of, max_chunk_bytes, row_granularity);
  DeviceMatrix m;
  m.type = parts.front().type;
  m.rows = rows;
  m.cols = cols;
  int64_t begin = 0;
  for (const StackedPart& p : parts) {
    DeviceMatrix part = upload_matrix(arena, uploader, p.type, p.rows, cols, p.row, max_chunk_bytes, row_granularity);
    for (DeviceMatrix::Chunk c : part.chunks) {
      c.row_begin += begin;
      m.chunks.push_back(c);
    }
    begin += p.rows;
  }
  return m;
}

bool DeviceMatrix::mixed() const {
  for (const Chunk& c : chunks)
    if (c.type != type) return true;
  return false;
}

}  // namespace kiln::vk
