// Bidirectional multi-head attention over all patches of one image: the tower's most expensive step
// (4096 patches attend to 4096 on the 4B shape), computed in blocks with a running softmax so the
// score matrix is never held whole, and threaded over (head, block of queries).
#pragma once

#include <cstdint>

#include "runtime/cpu/thread_pool.h"

namespace kiln {

// out[t][h * head_dim + d] = sum_j softmax_j(q_t . k_j / sqrt(head_dim)) v_j[h * head_dim + d]
// q, k, v, out: [tokens][heads * head_dim] row-major. k must hold round_up(tokens, 6) rows, the
// rows past `tokens` zero (the product kernel takes keys 6 at a time).
void siglip_attention(const float* q, const float* k, const float* v, int64_t tokens, int heads, int head_dim,
                      float* out, ThreadPool& pool);

// Rows the key buffer must have for `tokens` keys.
int64_t siglip_key_rows(int64_t tokens);

}  // namespace kiln
