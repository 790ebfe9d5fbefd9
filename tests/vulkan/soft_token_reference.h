// TEMPORARY: a plain Gemma 3 forward pass with image spans (rows in place of embeddings,
// bidirectional attention inside spans) until the CPU backend's forward_embedded lands.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "model/weights.h"
#include "runtime/backend.h"
#include "runtime/cpu/matmul.h"
#include "runtime/cpu/ops.h"

namespace kiln::test {

inline std::vector<float> dense(const Matrix& m) {
  std::vector<float> out(size_t(m.rows) * m.cols);
  for (int64_t r = 0; r < m.rows; ++r) matrix_row(m, r, &out[size_t(r) * m.cols]);
  return out;
}

// y[n][rows] = x[n][cols] . w^T
inline std::vector<float> apply(const Matrix& w, const std::vector<float>& x, int n) {
  const std::vector<float> d = dense(w);
  std::vector<float> y(size_t(n) * w.rows);
  for (int t = 0; t < n; ++t)
    for (int64_t r = 0; r < w.rows; ++r) {
      double s = 0;
      for (int64_t c = 0; c < w.cols; ++c) s += double(d[size_t(r) * w.cols + c]) * x[size_t(t) * w.cols + c];
      y[size_t(t) * w.rows + r] = float(s);
    }
  return y;
}

inline std::vector<float> reference_logits(const Gemma3Weights& w, const std::vector<int32_t>& ids,
                                           std::span<const Backend::EmbeddingSpan> spans) {
  const Gemma3Config& c = w.config;
  const int n = int(ids.size()), H = c.hidden_size, D = c.head_dim, heads = c.num_heads, kvh = c.num_kv_heads;
  std::vector<float> x(size_t(n) * H);
  for (int t = 0; t < n; ++t) {
    matrix_row(w.embed, ids[t], &x[size_t(t) * H]);
    scale(&x[size_t(t) * H], H, std::sqrt(float(H)));
  }
  std::vector<int> lo(n), hi(n);  // keys [lo, hi] of layer kinds: filled per layer
  for (const auto& s : spans)
    std::copy(s.rows, s.rows + size_t(s.count) * H, x.begin() + size_t(s.pos) * H);
  auto norm = [&](const std::vector<float>& in, const std::vector<float>& wt, int rows, int len) {
    std::vector<float> out(in.size());
    for (int r = 0; r < rows; ++r) rms_norm(&in[size_t(r) * len], wt.data(), len, c.rms_norm_eps, &out[size_t(r) * len]);
    return out;
  };
  for (int layer = 0; layer < c.num_layers; ++layer) {
    const LayerWeights& l = w.layers[layer];
    const bool global = c.is_global(layer);
    const std::vector<float> xn = norm(x, l.input_norm, n, H);
    std::vector<float> q = apply(l.wq, xn, n), k = apply(l.wk, xn, n), v = apply(l.wv, xn, n);
    for (int t = 0; t < n; ++t) {
      for (int h = 0; h < heads; ++h) rms_norm(&q[(size_t(t) * heads + h) * D], l.q_norm.data(), D, c.rms_norm_eps, &q[(size_t(t) * heads + h) * D]);
      for (int h = 0; h < kvh; ++h) rms_norm(&k[(size_t(t) * kvh + h) * D], l.k_norm.data(), D, c.rms_norm_eps, &k[(size_t(t) * kvh + h) * D]);
      rope(&q[size_t(t) * heads * D], heads, D, t, global ? c.rope_theta : c.rope_local_base_freq,
           global ? c.rope_scaling_factor : 1.0f);
      rope(&k[size_t(t) * kvh * D], kvh, D, t, global ? c.rope_theta : c.rope_local_base_freq,
           global ? c.rope_scaling_factor : 1.0f);
      lo[t] = global ? 0 : std::max(0, t - c.sliding_window + 1);
      hi[t] = t;
      for (const auto& s : spans)
        if (t >= s.pos && t < s.pos + s.count) {
          lo[t] = std::min(lo[t], s.pos);
          hi[t] = s.pos + s.count - 1;
        }
    }
    std::vector<float> att(size_t(n) * heads * D, 0.0f);
    const float sc = 1.0f / std::sqrt(c.query_pre_attn_scalar);
    for (int t = 0; t < n; ++t)
      for (int h = 0; h < heads; ++h) {
        const int g = h / (heads / kvh);
        std::vector<double> p;
        double m = -1e300;
        for (int j = lo[t]; j <= hi[t]; ++j) {
          double s = 0;
          for (int d = 0; d < D; ++d) s += double(q[(size_t(t) * heads + h) * D + d]) * k[(size_t(j) * kvh + g) * D + d];
          p.push_back(s * sc);
          m = std::max(m, p.back());
        }
        double sum = 0;
        for (double& e : p) sum += (e = std::exp(e - m));
        for (int j = lo[t]; j <= hi[t]; ++j)
          for (int d = 0; d < D; ++d)
            att[(size_t(t) * heads + h) * D + d] += float(p[j - lo[t]] / sum * v[(size_t(j) * kvh + g) * D + d]);
      }
    std::vector<float> o = norm(apply(l.wo, att, n), l.post_attn_norm, n, H);
    add_in_place(x.data(), o.data(), int64_t(x.size()));
    const std::vector<float> hn = norm(x, l.pre_ffn_norm, n, H);
    std::vector<float> gate = apply(l.w_gate, hn, n), up = apply(l.w_up, hn, n);
    gelu_tanh_mul(gate.data(), up.data(), int64_t(gate.size()), gate.data());
    std::vector<float> down = norm(apply(l.w_down, gate, n), l.post_ffn_norm, n, H);
    add_in_place(x.data(), down.data(), int64_t(x.size()));
  }
  return apply(w.embed, norm(x, w.final_norm, n, H), n);
}

}  // namespace kiln::test
