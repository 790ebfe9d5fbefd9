// Blocked attention for the vision tower. One task takes one head and up to 32 queries; it walks the
// keys 240 at a time with a running (online) softmax:
//   scores  St[key][query] = K_block . Q^T      (the matmul tile kernel, keys as its rows)
//   weights P = exp(St - running max),  running sum and output rescaled when the max grows
//   output  Ot[d][query] += V^T_block . P       (the same kernel, value dimensions as its rows)
// Queries sit side by side in every buffer, so the kernel and the softmax loops vectorize over them.
#include "vision/siglip_attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "runtime/cpu/fast_exp.h"
#include "runtime/cpu/matmul_kernels.h"

namespace kiln {
namespace {

constexpr int64_t kRows = MatmulKernels::kTileRows;  // rows the tile kernel takes at a time
constexpr int64_t kQueryBlock = 32;
constexpr int64_t kKeyBlock = 40 * kRows;  // scores of 240 keys x 32 queries: 30 KiB, near L1

int64_t round_up(int64_t n, int64_t to) { return (n + to - 1) / to * to; }

struct Shape {
  int64_t tokens;
  int heads, head_dim;
  int64_t width;       // heads * head_dim: the row stride of q, k, v and out
  int64_t dims_padded;  // head_dim rounded up to whole tiles of value rows
};

// vt[(h * dims_padded + d) * tokens + t] = v[t][h * head_dim + d]; padding rows stay zero.
std::vector<float> transpose_values(const float* v, const Shape& s, ThreadPool& pool) {
  std::vector<float> vt(static_cast<size_t>(s.heads * s.dims_padded * s.tokens), 0.0f);
  pool.parallel_for(s.heads * s.head_dim, [&](int64_t begin, int64_t end) {
    for (int64_t hd = begin; hd < end; ++hd) {
      const int64_t h = hd / s.head_dim, d = hd % s.head_dim;
      float* row = vt.data() + (h * s.dims_padded + d) * s.tokens;
      const float* column = v + h * s.head_dim + d;
      for (int64_t t = 0; t < s.tokens; ++t) row[t] = column[t * s.width];
    }
  });
  return vt;
}

// Where the CPU has AVX2, the element-wise softmax loops run in 8 lanes (a clone picked at load
// time); elsewhere in what the baseline instruction set gives.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define KILN_VECTOR_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define KILN_VECTOR_CLONES
#endif

// One key block's scores [keys][tq] become weights against the running max of each query; the
// running sums and the output so far [dims][tq] are rescaled to the new max.
KILN_VECTOR_CLONES void softmax_step(float* scores, int64_t keys, int64_t tq, float* running_max, float* running_sum,
                                     float* ot, int64_t dims) {
  float block_max[kQueryBlock], correction[kQueryBlock], block_sum[kQueryBlock];
  std::copy(running_max, running_max + tq, block_max);
  for (int64_t r = 0; r < keys; ++r) {
    const float* row = scores + r * tq;
    for (int64_t t = 0; t < tq; ++t) block_max[t] = row[t] > block_max[t] ? row[t] : block_max[t];
  }
  for (int64_t t = 0; t < tq; ++t) {
    correction[t] = exp_clamped(running_max[t] - block_max[t]);
    running_max[t] = block_max[t];
    block_sum[t] = 0.0f;
  }
  for (int64_t r = 0; r < keys; ++r) {
    float* row = scores + r * tq;
    for (int64_t t = 0; t < tq; ++t) {
      row[t] = exp_clamped(row[t] - running_max[t]);
      block_sum[t] += row[t];
    }
  }
  for (int64_t t = 0; t < tq; ++t) running_sum[t] = running_sum[t] * correction[t] + block_sum[t];
  for (int64_t d = 0; d < dims; ++d) {
    float* row = ot + d * tq;
    for (int64_t t = 0; t < tq; ++t) row[t] *= correction[t];
  }
}

class QueryBlock {
 public:
  QueryBlock(const Shape& s, const MatmulKernels& kernels) : s_(s), kernels_(kernels) {
    qt_.resize(static_cast<size_t>(s.head_dim * kQueryBlock));
    scores_.resize(static_cast<size_t>(kKeyBlock * kQueryBlock));
    ot_.resize(static_cast<size_t>(s.dims_padded * kQueryBlock));
  }

  void run(const float* q, const float* k, const float* vt, int h, int64_t t0, float* out) {
    const int64_t queries = std::min(kQueryBlock, s_.tokens - t0);
    tq_ = round_up(queries, 8);  // the kernel takes queries 8 at a time
    const float scale = 1.0f / std::sqrt(static_cast<float>(s_.head_dim));
    for (int64_t d = 0; d < s_.head_dim; ++d)
      for (int64_t t = 0; t < tq_; ++t)
        qt_[d * tq_ + t] = t < queries ? q[(t0 + t) * s_.width + h * s_.head_dim + d] * scale : 0.0f;
    std::fill(max_, max_ + tq_, -1e30f);
    std::fill(sum_, sum_ + tq_, 0.0f);
    std::fill_n(ot_.begin(), s_.dims_padded * tq_, 0.0f);

    for (int64_t k0 = 0; k0 < s_.tokens; k0 += kKeyBlock) {
      const int64_t keys = std::min(kKeyBlock, s_.tokens - k0);
      score(k + k0 * s_.width + h * s_.head_dim, keys);
      softmax_step(scores_.data(), keys, tq_, max_, sum_, ot_.data(), s_.dims_padded);
      const float* vt_block = vt + h * s_.dims_padded * s_.tokens + k0;
      for (int64_t d0 = 0; d0 < s_.dims_padded; d0 += kRows)
        kernels_.tile_product(vt_block + d0 * s_.tokens, s_.tokens, scores_.data(), tq_, tq_, keys,
                              ot_.data() + d0 * tq_, tq_);
    }
    for (int64_t t = 0; t < queries; ++t) {
      const float inv = 1.0f / sum_[t];
      float* row = out + (t0 + t) * s_.width + h * s_.head_dim;
      for (int64_t d = 0; d < s_.head_dim; ++d) row[d] = ot_[d * tq_ + t] * inv;
    }
  }

 private:
  // scores_[r][t] = k_r . q_t for the block's keys (rows past `keys` are the zero padding).
  void score(const float* k_block, int64_t keys) {
    const int64_t rows = round_up(keys, kRows);
    std::fill_n(scores_.begin(), rows * tq_, 0.0f);
    for (int64_t r = 0; r < rows; r += kRows)
      kernels_.tile_product(k_block + r * s_.width, s_.width, qt_.data(), tq_, tq_, s_.head_dim,
                            scores_.data() + r * tq_, tq_);
  }

  const Shape& s_;
  const MatmulKernels& kernels_;
  int64_t tq_ = 0;
  std::vector<float> qt_;      // [head_dim][tq] queries, transposed and scaled
  std::vector<float> scores_;  // [kKeyBlock][tq]
  std::vector<float> ot_;      // [dims_padded][tq] output, transposed
  float max_[kQueryBlock], sum_[kQueryBlock];
};

}  // namespace

int64_t siglip_key_rows(int64_t tokens) { return round_up(tokens, kRows); }

void siglip_attention(const float* q, const float* k, const float* v, int64_t tokens, int heads, int head_dim,
                      float* out, ThreadPool& pool) {
  if (tokens <= 0) return;
  const Shape s{tokens, heads, head_dim, int64_t(heads) * head_dim, round_up(head_dim, kRows)};
  const MatmulKernels kernels = best_matmul_kernels();
  const std::vector<float> vt = transpose_values(v, s, pool);
  const int64_t blocks = (tokens + kQueryBlock - 1) / kQueryBlock;
  pool.parallel_for(heads * blocks, [&](int64_t begin, int64_t end) {
    QueryBlock block(s, kernels);
    for (int64_t task = begin; task < end; ++task)
      block.run(q, k, vt.data(), static_cast<int>(task / blocks), (task % blocks) * kQueryBlock, out);
  });
}

}  // namespace kiln
