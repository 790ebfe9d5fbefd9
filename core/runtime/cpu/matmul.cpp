// Threading and tiling of y = x . W^T. Decode (one token) streams every weight row once through a
// fused dequantize-and-dot kernel: it is memory-bandwidth bound, so the weights are read in their
// stored format and never expanded. Prefill (several tokens) expands a tile of rows to floats once
// and applies it to a group of up to 32 tokens, so the dequantization cost is shared by them.
// That is the path of F32 / F16 / BF16 (and of Q8_0 / Q4_0 in a set without integer kernels).
// Q8_0, Q4_0, K-quant, IQ4_XS and GGUF's other 32-weight formats (Q5_0, Q4_1, Q5_1, IQ4_NL) take their own
// path for any number of tokens (integer_matmul):
// integer dot products against activations rounded to int8 (int16 for Q8_0), faster than float ones.
// So do BF16 in a set with vdpbf16ps (activations rounded to bf16) and F16 prefill on AVX-512 (float
// activations, tiles of rows x tokens that need no expanded copy of the weights).
#include "runtime/cpu/matmul.h"

#include <algorithm>
#include <iterator>
#include <string>
#include <vector>

#include "kiln/types.h"
#include "quant/convert.h"
#include "quant/kquants.h"
#include "runtime/cpu/matmul_kernels.h"

namespace kiln {

namespace {

// Prefill blocking, chosen by measurement (tests/bench, 2560 x 10240): a tile of 6 rows x 128
// columns of weights (3 KiB) and the same 128 columns of 32 tokens (16 KiB) stay in L1 together.
constexpr int64_t kTileCols = 128;
constexpr int64_t kMaxTileCols = 256;  // IQ4_XS's tiles: one super-block (the K-quants never expand)
constexpr int64_t kTokenGroup = 32;
constexpr size_t kDecodeChunkBytes = 64 * 1024;  // weight bytes a thread takes at a time in decode
constexpr size_t kPrefillRowBytes = 16 * 1024;   // integer-path weight bytes applied to all tokens at a time

void check_matmul_args(const Matrix& w, const float* x, int64_t n, const float* y) {
  if (!is_matmul_type(w.type)) {
    throw Error("matmul: no kernels for weight type " + std::to_string(static_cast<int>(w.type)));
  }
  if (w.rows < 0 || w.cols < 0 || n < 0) throw Error("matmul: negative size");
  if (w.rows > 0 && w.cols > 0 && !w.storage) throw Error("matmul: weight matrix has no storage");
  if (n > 0 && w.rows > 0 && (!y || (w.cols > 0 && !x))) throw Error("matmul: null activation buffer");
  // Throws when a row is not a whole number of blocks (32 weights, 256 for the K-quants).
  try {
    (void)row_bytes(w.type, w.cols);
  } catch (const Error& e) {
    throw Error(std::string("matmul: ") + e.what());
  }
}

void decode(const MatmulKernels& kernels, const Matrix& w, const float* x, float* y, ThreadPool& pool) {
  const size_t stride = row_bytes(w.type, w.cols);
  const auto dot_rows = kernels.dot_rows[static_cast<int>(w.type)];
  const int64_t grain = std::max<int64_t>(1, static_cast<int64_t>(kDecodeChunkBytes / std::max<size_t>(1, stride)));
  pool.parallel_for(w.rows, [&](int64_t begin, int64_t end) {
    dot_rows(w.row(begin), stride, end - begin, w.cols, x, y + begin);
  }, grain);
}

// Activations rounded to integers (ActivationBlockQ8K for the K-quants, ActivationBlockQ16 for
// Q8_0, ActivationBlockQ8_0 for Q4_0 and the other 32-weight formats), any number of tokens: every token is rounded once, then each
// thread applies its rows to all tokens, a few rows at a time so that they stay in L1 while the
// kernel walks the tokens (several at a time, unpacking each weight block once for them).
template <typename Activation, typename Quantize, typename DotRows>
void integer_matmul(Quantize quantize, DotRows dot_rows, int64_t block_size, const Matrix& w, const float* x,
                 int64_t n, float* y, ThreadPool& pool) {
  const int64_t blocks = w.cols / block_size;
  std::vector<Activation> xq(static_cast<size_t>(n * blocks));  // [n][cols / block_size]
  pool.parallel_for(n, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) quantize(x + t * w.cols, w.cols, xq.data() + t * blocks);
  }, 8);
  const size_t stride = row_bytes(w.type, w.cols);
  const size_t chunk_bytes = n == 1 ? kDecodeChunkBytes : kPrefillRowBytes;
  int64_t rows_at_once = std::max<int64_t>(1, static_cast<int64_t>(chunk_bytes / stride));
  // Prefill kernels may take rows 8 at a time (matmul_q8_0_gemm_vnni.inc): give them whole groups.
  if (n > 1) rows_at_once = (rows_at_once + 7) / 8 * 8;
  pool.parallel_for(w.rows, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; r += rows_at_once) {
      dot_rows(w.row(r), stride, std::min(rows_at_once, end - r), w.cols, xq.data(), n, y + r, w.rows);
    }
  }, rows_at_once);
}

// For kernels that take float activations as they are (MatmulKernels::dot_rows_f16) through integer_matmul.
void copy_activations(const float* x, int64_t cols, float* out) { std::copy_n(x, cols, out); }

// xt[c][t] = x[t][c] for t < tokens, zero for tokens <= t < padded: the tile kernels vectorize
// over tokens, so they want each column's tokens side by side.
void transpose_tokens(const float* x, int64_t cols, int64_t tokens, int64_t padded, float* xt) {
  for (int64_t c = 0; c < cols; ++c) {
    float* column = xt + c * padded;
    for (int64_t t = 0; t < tokens; ++t) column[t] = x[t * cols + c];
    std::fill(column + tokens, column + padded, 0.0f);
  }
}

void prefill(const MatmulKernels& kernels, const Matrix& w, const float* x, int64_t n, float* y,
             ThreadPool& pool) {
  constexpr int64_t kRows = MatmulKernels::kTileRows;
  const int64_t tiles = (w.rows + kRows - 1) / kRows;
  const auto to_float = kernels.to_float[static_cast<int>(w.type)];
  const int64_t tile_cols = std::max(kTileCols, block_weights(w.type));  // whole blocks
  std::vector<float> xt(static_cast<size_t>(w.cols) * kTokenGroup);  // [cols][padded tokens]
  for (int64_t g0 = 0; g0 < n; g0 += kTokenGroup) {
    const int64_t tokens = std::min(kTokenGroup, n - g0);
    const int64_t padded = (tokens + 7) / 8 * 8;
    transpose_tokens(x + g0 * w.cols, w.cols, tokens, padded, xt.data());
    pool.parallel_for(tiles, [&](int64_t tile_begin, int64_t tile_end) {
      // Rows past the last weight row hold zeros or an earlier tile's values: their sums are not stored.
      float expanded[kRows * kMaxTileCols] = {};  // [kRows][tile_cols]
      float acc[kRows * kTokenGroup];          // [kRows][padded]
      for (int64_t tile = tile_begin; tile < tile_end; ++tile) {
        const int64_t r0 = tile * kRows;
        const int64_t rows = std::min(kRows, w.rows - r0);
        std::fill_n(acc, kRows * padded, 0.0f);
        for (int64_t c0 = 0; c0 < w.cols; c0 += tile_cols) {
          const int64_t cols = std::min(tile_cols, w.cols - c0);
          const size_t offset = row_bytes(w.type, c0);  // c0 is a whole number of blocks
          for (int64_t r = 0; r < rows; ++r) to_float(w.row(r0 + r) + offset, cols, expanded + r * tile_cols);
          kernels.tile_product(expanded, tile_cols, xt.data() + c0 * padded, padded, padded, cols, acc, padded);
        }
        for (int64_t r = 0; r < rows; ++r) {
          for (int64_t t = 0; t < tokens; ++t) y[(g0 + t) * w.rows + r0 + r] = acc[r * padded + t];
        }
      }
    });
  }
}

}  // namespace

MatmulKernels best_matmul_kernels() {
  if (cpu_has_avx512_kernels()) return avx512_matmul_kernels();
  return cpu_has_avx2_kernels() ? avx2_matmul_kernels() : portable_matmul_kernels();
}

std::vector<MatmulKernels> matmul_kernel_sets() {
  std::vector<MatmulKernels> sets = {portable_matmul_kernels()};
  if (cpu_has_avx2_kernels()) sets.push_back(avx2_matmul_kernels());
  if (cpu_has_avx512_kernels()) sets.push_back(avx512_matmul_kernels());
  return sets;
}

MatmulKernels matmul_kernels_named(const std::string& name) {
  std::string have;
  for (MatmulKernels& k : matmul_kernel_sets()) {
    if (name == k.name) return k;
    have += (have.empty() ? "" : ", ") + std::string(k.name);
  }
  throw Error("no CPU kernel set \"" + name + "\" on this CPU (it runs " + have + ")");
}

void matmul_with(const MatmulKernels& kernels, const Matrix& w, const float* x, int64_t n, float* y,
                 ThreadPool& pool) {
  check_matmul_args(w, x, n, y);
  if (n == 0 || w.rows == 0) return;
  if (w.cols == 0) {
    std::fill_n(y, n * w.rows, 0.0f);
    return;
  }
  const int type = static_cast<int>(w.type);
  if (is_kquant(w.type)) {
    integer_matmul<ActivationBlockQ8K>(kernels.quantize_q8k, kernels.dot_rows_q8k[type], kSuperBlockSize, w, x, n, y,
                                    pool);
  } else if (w.type == DType::Q8_0 && kernels.dot_rows_q8_0 && kernels.quantize_q16) {
    integer_matmul<ActivationBlockQ16>(kernels.quantize_q16, kernels.dot_rows_q8_0, kBlockSize, w, x, n, y, pool);
  } else if (w.type == DType::Q4_0 && kernels.dot_rows_q4_0 && kernels.quantize_q8_0) {
    integer_matmul<ActivationBlockQ8_0>(kernels.quantize_q8_0, kernels.dot_rows_q4_0, kBlockSize, w, x, n, y, pool);
  } else if (kernels.dot_rows_i8[type] && kernels.quantize_q8_0) {  // Q5_0, Q4_1, Q5_1, IQ4_NL, IQ4_XS
    integer_matmul<ActivationBlockQ8_0>(kernels.quantize_q8_0, kernels.dot_rows_i8[type], kBlockSize, w, x, n, y, pool);
  } else if (w.type == DType::BF16 && kernels.dot_rows_bf16 && kernels.round_bf16) {  // activations to bf16
    integer_matmul<uint16_t>(kernels.round_bf16, kernels.dot_rows_bf16, 1, w, x, n, y, pool);
  } else if (w.type == DType::F16 && kernels.dot_rows_f16 && n > 1) {
    integer_matmul<float>(copy_activations, kernels.dot_rows_f16, 1, w, x, n, y, pool);
  } else if (n == 1) {
    decode(kernels, w, x, y, pool);
  } else {
    prefill(kernels, w, x, n, y, pool);
  }
}

void matmul(const Matrix& w, const float* x, int64_t n, float* y, ThreadPool& pool) {
  matmul_with(best_matmul_kernels(), w, x, n, y, pool);
}

void matmul_float_activations(const Matrix& w, const float* x, int64_t n, float* y, ThreadPool& pool) {
  MatmulKernels kernels = best_matmul_kernels();
  kernels.dot_rows_q8_0 = nullptr;  // Q8_0 / Q4_0 fall back to the float decode / prefill paths
  kernels.dot_rows_q4_0 = nullptr;
  std::fill(std::begin(kernels.dot_rows_i8), std::end(kernels.dot_rows_i8), nullptr);
  kernels.dot_rows_bf16 = nullptr;  // BF16 too: float activations, not rounded to bf16
  matmul_with(kernels, w, x, n, y, pool);
}

void matrix_row(const Matrix& w, int64_t r, float* out) {
  if (r < 0 || r >= w.rows) {
    throw Error("matrix_row: row " + std::to_string(r) + " is outside 0.." + std::to_string(w.rows - 1));
  }
  if (!w.storage) throw Error("matrix_row: matrix has no storage");
  dequantize_row(w.type, w.row(r), w.cols, out);
}

}  // namespace kiln
