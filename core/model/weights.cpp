#include "model/weights.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <random>

#include "kiln/types.h"
#include "quant/convert.h"
#include "quant/kquants.h"
#include "runtime/cpu/thread_pool.h"

namespace kiln {
namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

const TensorView& require(const TensorSource& source, const std::string& name, std::vector<int64_t> shape) {
  const TensorView* t = source.find(name);
  if (!t) throw Error("checkpoint: tensor '" + name + "' is missing");
  if (t->shape != shape)
    throw Error(t->file + ": tensor '" + name + "' has shape " + shape_text(t->shape) + ", the config needs " +
                shape_text(shape));
  return *t;
}

// A norm weight as the float multiplier the forward pass uses: 1 + w (or w when the file has the 1).
std::vector<float> load_norm(const TensorSource& source, const std::string& name, int64_t n) {
  const TensorView& t = require(source, name, {n});
  std::vector<float> out(n);
  dequantize_row(t.dtype, t.data, n, out.data());
  if (!source.norms_include_one())
    for (float& v : out) v += 1.0f;
  return out;
}

constexpr size_t kLoadSliceBytes = size_t(32) << 20;  // of the file, per step of load_matrix

// Converts a [rows, cols] tensor to `wanted` (or the fallback storage_type_for picks), row-parallel.
Matrix load_matrix(const TensorSource& source, const std::string& name, int64_t rows, int64_t cols, DType wanted,
                   ThreadPool& pool, std::vector<std::string>& notes) {
  const TensorView& t = require(source, name, {rows, cols});
  if (t.bytes != size_t(rows) * row_bytes(t.dtype, cols))
    throw Error(t.file + ": tensor '" + name + "' holds " + std::to_string(t.bytes) + " bytes, its shape needs " +
                std::to_string(size_t(rows) * row_bytes(t.dtype, cols)));
  Matrix m;
  m.type = storage_type_for(wanted, cols);
  if (m.type != wanted)
    notes.push_back(name + " kept in " + to_string(m.type) + ": its rows of " + std::to_string(cols) +
                    " weights are not a multiple of the block size " + std::to_string(kBlockSize));
  m.rows = rows;
  m.cols = cols;
  m.storage = allocate_aligned(m.bytes());
  const size_t src_row = row_bytes(t.dtype, cols);
  const size_t dst_row = row_bytes(m.type, cols);
  // A slice of rows at a time, the file's pages of each released behind it: the model is never
  // resident twice (mapping and copy) while it loads, only one slice of it.
  const int64_t slice = std::max<int64_t>(1, int64_t(kLoadSliceBytes / src_row));
  for (int64_t first = 0; first < rows; first += slice) {
    const int64_t count = std::min(slice, rows - first);
    if (t.dtype == m.type) {
      std::memcpy(m.storage.get() + first * dst_row, t.data + first * src_row, size_t(count) * src_row);
    } else {
      pool.parallel_for(
          count,
          [&](int64_t begin, int64_t end) {
            std::vector<float> tmp(cols);
            for (int64_t r = first + begin; r < first + end; ++r) {
              dequantize_row(t.dtype, t.data + r * src_row, cols, tmp.data());
              quantize_row(m.type, tmp.data(), cols, m.storage.get() + r * dst_row);
            }
          },
          16);
    }
    source.release(t, size_t(first) * src_row, size_t(count) * src_row);
  }
  source.release(t, 0, t.bytes);  // the pages slices shared at their edges
  return m;
}

struct Shapes {
  int64_t hidden, q_dim, kv_dim, ffn, vocab, head_dim;
  explicit Shapes(const Gemma3Config& c)
      : hidden(c.hidden_size),
        q_dim(int64_t(c.num_heads) * c.head_dim),
        kv_dim(int64_t(c.num_kv_heads) * c.head_dim),
        ffn(c.intermediate_size),
        vocab(c.vocab_size),
        head_dim(c.head_dim) {}
};

}  // namespace

void check_weight_tensors(const Gemma3Config& config, const TensorSource& source) {
  const Shapes s(config);
  auto tensor = [&](const std::string& name, std::vector<int64_t> shape) {
    const TensorView& t = require(source, name, shape);
    const int64_t rows = shape.size() == 2 ? shape[0] : 1;
    const size_t needed = size_t(rows) * row_bytes(t.dtype, shape.back());
    if (t.bytes != needed)
      throw Error(t.file + ": tensor '" + name + "' holds " + std::to_string(t.bytes) + " bytes, its shape needs " +
                  std::to_string(needed));
  };
  tensor("embed_tokens.weight", {s.vocab, s.hidden});
  tensor("norm.weight", {s.hidden});
  for (int i = 0; i < config.num_layers; ++i) {
    const std::string p = "layers." + std::to_string(i) + ".";
    for (const char* norm : {"input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm",
                             "post_feedforward_layernorm"})
      tensor(p + norm + ".weight", {s.hidden});
    tensor(p + "self_attn.q_norm.weight", {s.head_dim});
    tensor(p + "self_attn.k_norm.weight", {s.head_dim});
    tensor(p + "self_attn.q_proj.weight", {s.q_dim, s.hidden});
    tensor(p + "self_attn.k_proj.weight", {s.kv_dim, s.hidden});
    tensor(p + "self_attn.v_proj.weight", {s.kv_dim, s.hidden});
    tensor(p + "self_attn.o_proj.weight", {s.hidden, s.q_dim});
    tensor(p + "mlp.gate_proj.weight", {s.ffn, s.hidden});
    tensor(p + "mlp.up_proj.weight", {s.ffn, s.hidden});
    tensor(p + "mlp.down_proj.weight", {s.hidden, s.ffn});
  }
}

DType embedding_type_for(DType precision) { return precision == DType::Q4_0 ? DType::Q8_0 : precision; }

uint64_t Gemma3Weights::bytes() const {
  auto norms = [](const LayerWeights& l) {
    return (l.input_norm.size() + l.post_attn_norm.size() + l.pre_ffn_norm.size() + l.post_ffn_norm.size() +
            l.q_norm.size() + l.k_norm.size()) * sizeof(float);
  };
  uint64_t total = embed.bytes() + final_norm.size() * sizeof(float);
  for (const LayerWeights& l : layers)
    total += l.wq.bytes() + l.wk.bytes() + l.wv.bytes() + l.wo.bytes() + l.w_gate.bytes() + l.w_up.bytes() +
             l.w_down.bytes() + norms(l);
  return total;
}

DType held_type_for_stored(DType stored) {
  switch (stored) {
    case DType::F32:
    case DType::F16:
    case DType::Q8_0:
    case DType::Q4_0:
    case DType::Q5_0:  // GGUF's fallbacks for Q4_K / Q5_K / IQ4_XS rows that are not whole super-blocks:
    case DType::Q5_1:  // most matrices of Gemma 3 1B / 270M K-quant files; Q4_1 in some Q4_0 files
    case DType::Q4_1:
    case DType::IQ4_NL:
    case DType::IQ4_XS:
    case DType::Q2_K:
    case DType::Q3_K:
    case DType::Q4_K:
    case DType::Q5_K:
    case DType::Q6_K: return stored;
    case DType::BF16: return DType::F16;
  }
  return DType::Q8_0;
}

namespace {

// type_for(tensor name, its stored type, whether it is the embedding, its [rows, cols]) -> the type
// to hold it in.
using TypeChoice = std::function<DType(const std::string&, DType, bool, int64_t, int64_t)>;

Gemma3Weights load_weights_with(const Gemma3Config& config, const TensorSource& source, const TypeChoice& type_for,
                                int threads, const std::function<void(int, int)>& progress, std::stop_token cancel) {
  const Shapes s(config);
  ThreadPool pool(threads);
  Gemma3Weights w;
  w.config = config;
  const int total = 2 + config.num_layers * 13;
  int done = 0;
  auto step = [&] {
    if (cancel.stop_requested()) throw Error("loading cancelled");
    if (progress) progress(++done, total);
  };
  auto matrix = [&](const std::string& name, int64_t rows, int64_t cols, bool embedding = false) {
    const TensorView& t = require(source, name, {rows, cols});
    Matrix m = load_matrix(source, name, rows, cols, type_for(name, t.dtype, embedding, rows, cols), pool, w.notes);
    step();
    return m;
  };
  w.embed = matrix("embed_tokens.weight", s.vocab, s.hidden, /*embedding=*/true);
  w.final_norm = load_norm(source, "norm.weight", s.hidden);
  step();
  w.layers.resize(config.num_layers);
  for (int i = 0; i < config.num_layers; ++i) {
    const std::string p = "layers." + std::to_string(i) + ".";
    LayerWeights& l = w.layers[i];
    l.input_norm = load_norm(source, p + "input_layernorm.weight", s.hidden);
    l.post_attn_norm = load_norm(source, p + "post_attention_layernorm.weight", s.hidden);
    l.pre_ffn_norm = load_norm(source, p + "pre_feedforward_layernorm.weight", s.hidden);
    l.post_ffn_norm = load_norm(source, p + "post_feedforward_layernorm.weight", s.hidden);
    l.q_norm = load_norm(source, p + "self_attn.q_norm.weight", s.head_dim);
    l.k_norm = load_norm(source, p + "self_attn.k_norm.weight", s.head_dim);
    for (int k = 0; k < 6; ++k) step();
    l.wq = matrix(p + "self_attn.q_proj.weight", s.q_dim, s.hidden);
    l.wk = matrix(p + "self_attn.k_proj.weight", s.kv_dim, s.hidden);
    l.wv = matrix(p + "self_attn.v_proj.weight", s.kv_dim, s.hidden);
    l.wo = matrix(p + "self_attn.o_proj.weight", s.hidden, s.q_dim);
    l.w_gate = matrix(p + "mlp.gate_proj.weight", s.ffn, s.hidden);
    l.w_up = matrix(p + "mlp.up_proj.weight", s.ffn, s.hidden);
    l.w_down = matrix(p + "mlp.down_proj.weight", s.hidden, s.ffn);
  }
  return w;
}

}  // namespace

Gemma3Weights load_weights(const Gemma3Config& config, const TensorSource& source, DType precision, int threads,
                           const std::function<void(int, int)>& progress, std::stop_token cancel) {
  Gemma3Weights w = load_weights_with(
      config, source, [precision](const std::string&, DType, bool embedding, int64_t, int64_t) {
        return embedding ? embedding_type_for(precision) : precision;
      },
      threads, progress, cancel);
  if (embedding_type_for(precision) != precision)
    w.notes.push_back("embedding (also the output projection) held in " + std::string(to_string(w.embed.type)));
  return w;
}

Gemma3Weights load_weights_with_mix(const Gemma3Config& config, const TensorSource& source, QuantMix mix,
                                    int threads, const std::function<void(int, int)>& progress,
                                    std::stop_token cancel) {
  std::map<std::pair<DType, DType>, int> fallbacks;  // (wanted, held) -> tensors
  Gemma3Weights w = load_weights_with(
      config, source,
      [&](const std::string& name, DType, bool, int64_t rows, int64_t cols) {
        const TensorTypeChoice choice = quant_type_for(mix, name, {rows, cols}, config.num_layers);
        if (choice.type != choice.wanted) ++fallbacks[{choice.wanted, choice.type}];
        return choice.type;
      },
      threads, progress, cancel);
  for (const auto& [types, count] : fallbacks)
    w.notes.push_back(std::to_string(count) + " tensors held as " + to_string(types.second) + " instead of " +
                      to_string(types.first) + ": their rows are not whole blocks of it");
  return w;
}

Gemma3Weights load_weights_as_stored(const Gemma3Config& config, const TensorSource& source, int threads,
                                     const std::function<void(int, int)>& progress, std::stop_token cancel) {
  std::map<std::pair<DType, DType>, int> converted;  // (stored, held) -> tensors
  Gemma3Weights w = load_weights_with(
      config, source, [&converted](const std::string&, DType stored, bool, int64_t, int64_t) {
        const DType held = held_type_for_stored(stored);
        if (held != stored) ++converted[{stored, held}];
        return held;
      },
      threads, progress, cancel);
  for (const auto& [types, count] : converted)
    w.notes.push_back(std::to_string(count) + " tensors stored as " + to_string(types.first) + " held as " +
                      to_string(types.second) + (is_block_quantized(types.first) ? " (Kiln has no kernels for it)" : ""));
  return w;
}

Gemma3Weights load_weights_held_as(const Gemma3Config& config, const TensorSource& source,
                                   const std::function<DType(DType)>& held_for, int threads) {
  return load_weights_with(
      config, source, [&held_for](const std::string&, DType stored, bool, int64_t, int64_t) { return held_for(stored); }, threads,
      nullptr, {});
}

namespace {

// Random weights written straight into the storage format: fast enough for 27B-shaped models.
Matrix random_matrix(int64_t rows, int64_t cols, DType wanted, uint64_t seed, ThreadPool& pool) {
  Matrix m;
  m.type = storage_type_for(wanted, cols);
  m.rows = rows;
  m.cols = cols;
  m.storage = allocate_aligned(m.bytes());
  const size_t rb = row_bytes(m.type, cols);
  const float amplitude = 1.0f / std::sqrt(float(cols));
  pool.parallel_for(
      rows,
      [&](int64_t begin, int64_t end) {
        std::mt19937_64 rng(seed ^ (uint64_t(begin) * 0x9E3779B97F4A7C15ull));
        std::vector<float> tmp(cols);
        for (int64_t r = begin; r < end; ++r) {
          uint8_t* dst = m.storage.get() + r * rb;
          if (is_block_quantized(m.type)) {
            // Random quants with a plausible scale: the bytes a real model would have, not its values.
            for (size_t b = 0; b < rb; b += 8) {
              const uint64_t bits = rng();
              std::memcpy(dst + b, &bits, std::min<size_t>(8, rb - b));
            }
            const size_t block = m.type == DType::Q8_0 ? sizeof(BlockQ8_0) : sizeof(BlockQ4_0);
            const uint16_t d = float_to_fp16(amplitude / (m.type == DType::Q8_0 ? 127.0f : 8.0f));
            for (size_t b = 0; b < rb; b += block) std::memcpy(dst + b, &d, 2);
          } else {
            std::uniform_real_distribution<float> u(-amplitude, amplitude);
            for (float& v : tmp) v = u(rng);
            quantize_row(m.type, tmp.data(), cols, dst);
          }
        }
      },
      64);
  return m;
}

}  // namespace

Gemma3Weights synthetic_weights(const Gemma3Config& config, DType precision, uint64_t seed, int threads) {
  const Shapes s(config);
  ThreadPool pool(threads);
  Gemma3Weights w;
  w.config = config;
  w.notes.push_back("synthetic random weights");
  uint64_t k = seed;
  w.embed = random_matrix(s.vocab, s.hidden, embedding_type_for(precision), ++k, pool);
  w.final_norm.assign(s.hidden, 1.0f);
  w.layers.resize(config.num_layers);
  for (LayerWeights& l : w.layers) {
    l.input_norm = l.post_attn_norm = l.pre_ffn_norm = l.post_ffn_norm = std::vector<float>(s.hidden, 1.0f);
    l.q_norm = l.k_norm = std::vector<float>(s.head_dim, 1.0f);
    l.wq = random_matrix(s.q_dim, s.hidden, precision, ++k, pool);
    l.wk = random_matrix(s.kv_dim, s.hidden, precision, ++k, pool);
    l.wv = random_matrix(s.kv_dim, s.hidden, precision, ++k, pool);
    l.wo = random_matrix(s.hidden, s.q_dim, precision, ++k, pool);
    l.w_gate = random_matrix(s.ffn, s.hidden, precision, ++k, pool);
    l.w_up = random_matrix(s.ffn, s.hidden, precision, ++k, pool);
    l.w_down = random_matrix(s.hidden, s.ffn, precision, ++k, pool);
  }
  return w;
}

uint64_t weight_bytes_for(const Gemma3Config& config, DType precision) {
  const Shapes s(config);
  auto mat = [&](int64_t rows, int64_t cols) { return uint64_t(rows) * row_bytes(storage_type_for(precision, cols), cols); };
  const uint64_t norms = (4 * s.hidden + 2 * s.head_dim) * sizeof(float);
  const uint64_t layer = mat(s.q_dim, s.hidden) + 2 * mat(s.kv_dim, s.hidden) + mat(s.hidden, s.q_dim) +
                         2 * mat(s.ffn, s.hidden) + mat(s.hidden, s.ffn) + norms;
  const DType embed = storage_type_for(embedding_type_for(precision), s.hidden);
  return uint64_t(s.vocab) * row_bytes(embed, s.hidden) + s.hidden * sizeof(float) + layer * uint64_t(config.num_layers);
}

}  // namespace kiln
