#include "runtime/vulkan/forward.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "runtime/vulkan/push_constants.h"

namespace kiln::vk {
namespace {

class Recorder {
 public:
  Recorder(ModelGpu& m, CommandSequence& seq, int sequence = 0) : m_(m), seq_(seq), c_(m.config), sequence_(sequence) {}

  void matrix(BoundMatrix& bm, bool glu, int n, uint32_t x_offset, uint32_t x_stride, uint32_t y_stride,
              const char* op, int layer, std::optional<uint32_t> norm_after = std::nullopt, EarlyPart part = {}) {
    // A step of several sequences, or a batch of 2 to matvec_max_tokens tokens of one (a prompt's last
    // few): each weight block loaded once for all rows (matvec_items_*), each row summed as the
    // one-token kernel without staging sums it.
    const bool batched = n > m_.plan.matvec_max_tokens;
    if (!items_.empty() || (n > 1 && !batched)) return items_matrix(bm, glu, n, x_offset, x_stride, y_stride, op, layer);
    if (bm.m->mixed()) return mixed_matrix(bm, glu, n, batched, x_offset, x_stride, y_stride, op, layer);
    const MatrixKernels& ks = bm.kernels[0];  // not mixed: one run
    const MatmulTile tile = batched ? ks.tile : kMatmulTile;
    // One token: a matrix whose producer rounds its input to int8 reads it so (matvec_qin_*),
    // whichever kernel it would take otherwise. A batch's last row of logits is n == 1 too, but
    // reads the batch's fp32 buffers.
    const bool one = n == 1 && one_token_;
    // One token with ModelKernels::wide_norm, o and down also gather the sums of the add_norm after
    // them (norm_after: its w_post).
    const bool sums = one && norm_after && m_.kernels.wide_norm;
    const bool qin = one && bm.qact_in, staged = one && bm.staged && !qin;
    const bool early = qin && !glu && part.groups > 0;  // down, on gate_up's early part
    const bool half = batched && tile == kCoopTile && m_.half_input(bm);  // tensor cores: fp16 input
    const Kernel& k = need(sums     ? early ? ks.sums_early : ks.sums
                           : qin    ? early ? ks.qin_early : ks.qin
                           : staged ? ks.staged
                           : batched ? ks.batched
                                     : ks.matvec,
                           op);
    MatrixCall call{glu, batched, n, x_offset, x_stride, y_stride, tile};
    if (sums) call.norm_post = *norm_after;
    if (qin) {
      call.part_groups = part.groups;
      call.part_blocks = part.blocks;
    }
    const bool int_dot = batched && m_.plan.int_dot_for(bm.m->type);  // int8 tiles: round the input first
    if (int_dot)
      record_quantize(seq_, *m_.kernels.quantize, bm.quantize_set, n, uint32_t(bm.m->cols / kBlockSize), x_offset,
                      x_stride, layer);
    if (half) {
      convert_input(bm, n, x_offset, x_stride, layer);
      call.x_offset = 0;
      call.x_stride = uint32_t(bm.m->cols);
    }
    const std::vector<VkDescriptorSet>& sets = int_dot ? bm.int_dot_sets
                                               : half  ? bm.half_sets
                                               : sums  ? bm.sums_sets
                                               : one   ? bm.token_sets
                                                       : bm.sets;
    const MatvecShape& shape = qin ? bm.qin_shape : staged ? bm.staged_shape : bm.shape;
    if (batched && tile == kCoopTile && !glu && bm.split_output) {
      call.splits = m_.plan.coop_splits(bm.m->rows, n, m_.coop_slices);
      call.split_sum = m_.kernels.split_sum;
    }
    record_matrix(seq_, k, bm.m->chunks, bm.m->cols, sets, call, shape, m_.device.limits().maxComputeWorkGroupCount[0],
                  op, layer);
  }

  // A stack whose parts differ in type (upload_stacked; never staged): each run of chunks of one
  // type with its type's kernel, writing its own rows of the output. One token, a stack whose
  // producer rounds its input to int8 reads it so, part by part (matvec_qin_*).
  void mixed_matrix(BoundMatrix& bm, bool glu, int n, bool batched, uint32_t x_offset, uint32_t x_stride,
                    uint32_t y_stride, const char* op, int layer) {
    const bool one = n == 1 && one_token_, qin = one && bm.qact_in, half = batched && m_.half_input(bm);
    MatrixCall call{glu, batched, n, x_offset, x_stride, y_stride};
    if (half) {  // every part on tensor cores: one conversion for all
      convert_input(bm, n, x_offset, x_stride, layer);
      call.x_offset = 0;
      call.x_stride = uint32_t(bm.m->cols);
    }
    const std::vector<VkDescriptorSet>& sets = half ? bm.half_sets : one ? bm.token_sets : bm.sets;
    const MatvecShape& shape = qin ? bm.qin_shape : bm.shape;
    for (const MatrixKernels& ks : bm.kernels) {
      call.tile = batched ? ks.tile : kMatmulTile;
      call.barrier_after = &ks == &bm.kernels.back();  // the parts write disjoint rows: one barrier after all
      record_run(need(qin ? ks.qin : batched ? ks.batched : ks.matvec, op), bm, ks, sets, call, shape, op, layer);
    }
  }

  // The run of bm's chunks that ks covers (a mixed stack's part of one type; a matrix of one type is
  // one run), with their descriptor sets, as a matrix of its own.
  void record_run(const Kernel& k, const BoundMatrix& bm, const MatrixKernels& ks,
                  const std::vector<VkDescriptorSet>& sets, const MatrixCall& call, const MatvecShape& shape,
                  const char* op, int layer) {
    const size_t count = ks.end_chunk - ks.first_chunk;
    record_matrix(seq_, k, std::span(bm.m->chunks).subspan(ks.first_chunk, count), bm.m->cols,
                  std::span(sets).subspan(ks.first_chunk, count), call, shape,
                  m_.device.limits().maxComputeWorkGroupCount[0], op, layer);
  }

  // A kernel the load resolved for this path; null would mean the plan at load and the recording
  // disagree.
  static const Kernel& need(const Kernel* k, const char* op) {
    if (!k) throw Error(std::string("Vulkan: no kernel resolved at load for ") + op + " (internal error)");
    return *k;
  }

  // A step of several sequences: the n rows of the batch buffers through matvec_items_*, each run
  // of chunks of one type (a mixed stack's parts) with its type's kernel.
  void items_matrix(BoundMatrix& bm, bool glu, int n, uint32_t x_offset, uint32_t x_stride, uint32_t y_stride,
                    const char* op, int layer) {
    const uint32_t tokens = m_.items_pass_tokens(n);
    const MatvecShape shape = m_.items_shape(bm, glu, tokens);
    MatrixCall call{glu, false, n, x_offset, x_stride, y_stride};
    const bool quantized = m_.items_quantized(bm);  // the input rounded to int8 once, for every part
    if (quantized)
      record_quantize(seq_, *m_.kernels.quantize, bm.quantize_set, n, uint32_t(bm.m->cols / kBlockSize), x_offset,
                      x_stride, layer);
    const std::vector<VkDescriptorSet>& sets = quantized ? bm.int_dot_sets : bm.sets;
    for (const MatrixKernels& ks : bm.kernels) {
      call.barrier_after = &ks == &bm.kernels.back();
      record_run(need(ks.items[items_slot(tokens)], op), bm, ks, sets, call, shape, op, layer);
    }
  }

  // bm's input (n tokens from x_offset, x_stride floats apart) into ModelGpu::xh in fp16.
  void convert_input(const BoundMatrix& bm, int n, uint32_t x_offset, uint32_t x_stride, int layer) {
    const uint32_t nb = uint32_t(bm.m->cols / kBlockSize);
    const QuantizePush p{uint32_t(n), nb, x_offset, x_stride};
    seq_.dispatch(*m_.kernels.convert, bm.convert_set, &p, sizeof p, (nb + 63) / 64, uint32_t(n), 1, "convert_f16",
                  layer);  // 64 blocks a workgroup
    seq_.barrier();
  }

  // which: 0 after attention, 1 after the MLP (one token: each has its own buffers).
  void add_norm(int n, uint32_t post, uint32_t pre, int layer, int which) {
    AddNormPush p{uint32_t(c_.hidden_size), post, pre, c_.rms_norm_eps};
    const Kernel* k = m_.kernels.add_norm;
    VkDescriptorSet set = m_.add_norm_set;
    uint32_t groups = uint32_t(n);  // a workgroup a token
    if (one_token_ && m_.kernels.wide_norm) {  // the sums are in o's or down's slots: a vec4 an invocation
      p.slot_count = m_.norm_slots;
      k = m_.kernels.add_norm_slots;
      set = m_.layers[layer].token_wide_norm_sets[which];
      groups = (uint32_t(c_.hidden_size) / 4 + m_.plan.wide_norm_wg - 1) / m_.plan.wide_norm_wg;
    } else if (one_token_) {
      if (m_.kernels.add_norm_qout) k = m_.kernels.add_norm_qout;
      set = m_.layers[layer].token_add_norm_sets[which];
    }
    seq_.dispatch(*k, set, &p, sizeof p, groups, 1, 1, "add_norm", layer);
    seq_.barrier();
  }

  void embed(int n) {
    const DeviceMatrix& em = m_.weights.embed;
    const Kernel& k = *m_.kernels.embed;
    const uint32_t norm = m_.weights.layers[0].input_norm;
    for (size_t i = 0; i < em.chunks.size(); ++i) {
      EmbedPush p{uint32_t(n), uint32_t(c_.hidden_size), uint32_t(em.cols / 32), uint32_t(em.chunks[i].row_begin),
                  uint32_t(em.chunks[i].rows), norm, std::sqrt(float(c_.hidden_size)), c_.rms_norm_eps};
      seq_.dispatch(k, one_token_ ? m_.token_embed_gather[i] : m_.embed_gather[i], &p, sizeof p, uint32_t(n), 1, 1,
                    "embedding", -1);
    }
    // Soft tokens: embed.comp skipped them (id -1), so their rows go in before the same barrier.
    for (const BatchSpan& s : spans_) {
      const ModelGpu::SoftTokens& st = m_.soft_tokens();
      const SoftEmbedPush p{uint32_t(s.first), uint32_t(c_.hidden_size), norm, c_.rms_norm_eps};
      seq_.dispatch(*st.embed, n == 1 ? st.token_embed_set : st.embed_set, &p, sizeof p, uint32_t(s.count), 1, 1,
                    "embedding", -1);
    }
    seq_.barrier();
  }

  void attention(LayerGpu& l, int n, int pos, int layer) {
    const uint32_t hd = c_.head_dim, heads = c_.num_heads, kvh = c_.num_kv_heads;
    const uint32_t window = l.global ? 0u : uint32_t(c_.sliding_window);
    const uint32_t rope_offset = l.global ? m_.rope_global : m_.rope_local;
    const float scale = 1.0f / std::sqrt(c_.query_pre_attn_scalar);
    if (n == 1) {
      // One dispatch: norm + RoPE, the cache write and the merge of key splits happen inside.
      const DecodeAttentionPush p = decode_push(l, layer, pos);
      seq_.dispatch(*m_.kernels.decode_attention, m_.kv(sequence_, layer).decode_attention_set, &p, sizeof p,
                    heads * p.splits, 1, 1, "attention", layer);
      seq_.barrier();
      return;
    }
    // Batches: every token's keys must be in the cache before any query reads them.
    const uint32_t qkv_stride = (heads + 2 * kvh) * hd;
    const LayerWeightsGpu& w = m_.weights.layers[size_t(layer)];
    RopePush rp{uint32_t(pos), heads, kvh, hd, qkv_stride, uint32_t(l.cache_slots), w.q_norm, w.k_norm, rope_offset,
                c_.rms_norm_eps};
    const LayerKv& kv = m_.kv(sequence_, layer);
    seq_.dispatch(*m_.kernels.rope, kv.rope_set, &rp, sizeof rp, uint32_t(n) * (heads + kvh), 1, 1, "qk_norm_rope", layer);
    seq_.barrier();
    AttentionPush ap{uint32_t(pos), heads, kvh, hd, qkv_stride, heads * hd, uint32_t(l.cache_slots), window, scale,
                     c_.attn_logit_softcapping, uint32_t(n)};
    // attention_prefill(_coop): a workgroup a block of queries of one head; attention.comp: one a query.
    auto groups = [&](uint32_t queries) { return (uint32_t(n) + std::max(1u, queries) - 1) / std::max(1u, queries) * heads; };
    if (spans_.empty()) {
      seq_.dispatch(*m_.kernels.attention, kv.attention_set, &ap, sizeof ap, groups(m_.kernels.attention_queries), 1, 1,
                    "attention", layer);
    } else {  // the tiles' variant that widens the key ranges of queries inside spans (same bindings)
      AttentionSpansPush sp{ap, uint32_t(spans_.size())};
      for (size_t i = 0; i < spans_.size(); ++i) {
        sp.spans[i][0] = uint32_t(pos + spans_[i].first);
        sp.spans[i][1] = uint32_t(pos + spans_[i].first + spans_[i].count);
      }
      seq_.dispatch(*m_.soft_tokens().attention, kv.attention_set, &sp, sizeof sp,
                    groups(m_.plan.prefill_attention_queries), 1, 1, "attention", layer);
    }
    seq_.barrier();
  }

  // attention_decode's push constants for one token of layer l at pos.
  DecodeAttentionPush decode_push(const LayerGpu& l, int layer, int pos) const {
    const LayerWeightsGpu& w = m_.weights.layers[size_t(layer)];
    const uint32_t window = l.global ? 0u : uint32_t(c_.sliding_window);
    const uint32_t keys = uint32_t(pos) + 1 - (window && uint32_t(pos) + 1 > window ? uint32_t(pos) + 1 - window : 0);
    const AttentionSplit split = decode_attention_split(keys, m_.plan);
    return {uint32_t(pos), uint32_t(c_.num_heads), uint32_t(c_.num_kv_heads), uint32_t(c_.head_dim),
            uint32_t(l.cache_slots), window, split.splits, split.keys_per_split, w.q_norm, w.k_norm,
            l.global ? m_.rope_global : m_.rope_local, 1.0f / std::sqrt(c_.query_pre_attn_scalar),
            c_.attn_logit_softcapping, c_.rms_norm_eps};
  }

  // A step of several sequences: item i's attention on its own sequence's cache at its own
  // position, from row i of qkv to row i of att, with its own partials and counters. The items'
  // dispatches touch disjoint memory (each sequence appears once), so one barrier follows them all.
  void items_attention(const LayerGpu& l, int layer) {
    const uint32_t heads = c_.num_heads, hd = c_.head_dim, qkv_stride = (heads + 2 * c_.num_kv_heads) * hd;
    for (size_t i = 0; i < items_.size(); ++i) {
      const uint32_t item = uint32_t(i);
      const DecodeAttentionItemsPush p{decode_push(l, layer, items_[i].pos), item * qkv_stride, item * heads * hd,
                                       item * m_.items.partial_floats, item * heads};
      seq_.dispatch(*m_.items.attention, m_.kv(items_[i].sequence, layer).items_attention_set, &p, sizeof p,
                    heads * p.base.splits, 1, 1, "attention", layer);
    }
    seq_.barrier();
  }

  // One decode step of several sequences: embedding, every layer and the logits over the items
  // as rows of the batch buffers; only attention is per item.
  void run_items(std::span<const StepItem> items) {
    items_ = items;
    one_token_ = false;
    const int n = int(items.size());
    const uint32_t hidden = c_.hidden_size, ffn = c_.intermediate_size;
    const uint32_t q_dim = c_.num_heads * c_.head_dim, qkv_stride = (c_.num_heads + 2 * c_.num_kv_heads) * c_.head_dim;
    embed(n);
    for (int i = 0; i < c_.num_layers; ++i) {
      LayerGpu& l = m_.layers[i];
      const LayerWeightsGpu& w = m_.weights.layers[size_t(i)];
      matrix(l.qkv, false, n, 0, hidden, qkv_stride, "qkv_proj", i);
      items_attention(l, i);
      matrix(l.o, false, n, 0, q_dim, hidden, "o_proj", i);
      add_norm(n, w.post_attn_norm, w.pre_ffn_norm, i, 0);
      matrix(l.gate_up, true, n, 0, hidden, ffn, "gate_up_gelu", i);
      matrix(l.down, false, n, 0, ffn, hidden, "down_proj", i);
      const uint32_t next = i + 1 < c_.num_layers ? m_.weights.layers[size_t(i) + 1].input_norm : m_.weights.final_norm;
      add_norm(n, w.post_ffn_norm, next, i, 1);
    }
    logits(0, n);
  }

  // Greedy decoding's pick: the largest of logits[0, vocab) (the last token's row, at position
  // `last`), in two passes.
  void argmax(int last) {
    const uint32_t vocab = uint32_t(c_.vocab_size), groups = m_.argmax_groups;
    const ArgmaxPush reduce_row{vocab, (vocab + groups - 1) / groups, 0};
    seq_.dispatch(*m_.kernels.argmax, m_.argmax_set, &reduce_row, sizeof reduce_row, groups, 1, 1, "argmax", -1);
    seq_.barrier();
    const ArgmaxPush reduce_groups{groups, 0, 1, uint32_t(last) % 2};
    seq_.dispatch(*m_.kernels.argmax, m_.argmax_set, &reduce_groups, sizeof reduce_groups, 1, 1, 1, "argmax", -1);
    seq_.barrier();
    seq_.barrier_to_host();
  }

  void run(int n, int pos, ForwardOutput out, std::span<const BatchSpan> spans) {
    if (spans.size() > kMaxAttentionSpans)
      throw Error("Vulkan: more soft-token spans in one batch than the attention takes (internal error)");
    spans_ = spans;
    const bool all_logits = out == ForwardOutput::AllLogits;
    const uint32_t hidden = c_.hidden_size, ffn = c_.intermediate_size;
    const uint32_t q_dim = c_.num_heads * c_.head_dim, qkv_stride = (c_.num_heads + 2 * c_.num_kv_heads) * c_.head_dim;
    one_token_ = n == 1;
    if (one_token_) m_.early_part_layers = 0;
    embed(n);
    for (int i = 0; i < c_.num_layers; ++i) {
      LayerGpu& l = m_.layers[i];
      const LayerWeightsGpu& w = m_.weights.layers[size_t(i)];
      matrix(l.qkv, false, n, 0, hidden, qkv_stride, "qkv_proj", i);
      attention(l, n, pos, i);
      matrix(l.o, false, n, 0, q_dim, hidden, "o_proj", i, w.post_attn_norm);
      add_norm(n, w.post_attn_norm, w.pre_ffn_norm, i, 0);
      // One token: down starts on the first part of gate_up's output while gate_up's last
      // workgroups still run (KernelPlan::early_part).
      const EarlyPart part = one_token_ ? m_.early_part(l) : EarlyPart{};
      if (part.groups) ++m_.early_part_layers;
      matrix(l.gate_up, true, n, 0, hidden, ffn, "gate_up_gelu", i, std::nullopt, part);
      matrix(l.down, false, n, 0, ffn, hidden, "down_proj", i, w.post_ffn_norm, part);
      const uint32_t next = i + 1 < c_.num_layers ? m_.weights.layers[size_t(i) + 1].input_norm : m_.weights.final_norm;
      add_norm(n, w.post_ffn_norm, next, i, 1);
    }
    // xn now holds final_norm(x) for every token.
    if (out == ForwardOutput::Normed) return;
    const int rows = all_logits ? n : 1;
    if (out == ForwardOutput::Argmax) {
      matrix(m_.embed_logits, false, rows, uint32_t(n - 1) * c_.hidden_size, c_.hidden_size,
             uint32_t(c_.vocab_size), "logits", -1);
      argmax(pos + n - 1);
    } else {
      logits(all_logits ? 0 : n - 1, rows);
    }
  }

  // Logits of batch rows [first, first + rows) from xn (a decode step: its own final buffer),
  // copied to logits_host.
  void logits(int first, int rows) {
    const uint32_t hidden = c_.hidden_size;
    matrix(m_.embed_logits, false, rows, uint32_t(first) * hidden, hidden, uint32_t(c_.vocab_size), "logits", -1);
    seq_.copy_to_host(m_.logits, 0, m_.logits_host, 0, uint64_t(rows) * c_.vocab_size * 4);
  }

 private:
  ModelGpu& m_;
  CommandSequence& seq_;
  const Gemma3Config& c_;
  int sequence_ = 0;        // whose cache the layers' attention reads and writes (run)
  bool one_token_ = false;  // a decode step: each layer's own buffers (LayerGpu::token)
  std::span<const StepItem> items_;  // a step of several sequences (run_items)
  std::span<const BatchSpan> spans_;  // soft tokens of this batch (none: the text-only pass)
};

}  // namespace

void record_matrix(CommandSequence& seq, const Kernel& kernel, std::span<const DeviceMatrix::Chunk> chunks,
                   int64_t cols, std::span<const VkDescriptorSet> sets, const MatrixCall& call,
                   const MatvecShape& shape, uint32_t max_groups_x, const char* op, int layer) {
  // Split-K: parts of split_blocks blocks, the last possibly shorter.
  const uint32_t nb = uint32_t(cols / 32);
  const bool split = call.batched && call.splits > 1 && call.split_sum && !call.glu;
  const uint32_t split_blocks = split ? (nb + call.splits - 1) / call.splits : 0;
  const uint32_t splits = split ? (nb + split_blocks - 1) / split_blocks : 1;
  for (size_t i = 0; i < chunks.size(); ++i) {
    const auto& ch = chunks[i];
    MatrixPush p{uint32_t(ch.rows), nb, uint32_t(call.n), call.x_offset, call.x_stride,
                 uint32_t(call.glu ? ch.row_begin / 2 : ch.row_begin), call.y_stride, 0, call.norm_post,
                 call.part_groups, call.part_blocks};
    if (call.batched) {
      const MatmulTile t = call.tile;
      p.groups_x = split_blocks;  // matmul_coop: blocks a split (0: no split)
      seq.dispatch(kernel, sets[i], &p, sizeof p, uint32_t((ch.rows + t.rows - 1) / t.rows),
                   (uint32_t(call.n) + t.tokens - 1) / t.tokens, splits, op, layer);
    } else {
      const uint32_t per_group = shape.rows_per_workgroup();
      const uint32_t groups = uint32_t((ch.rows + per_group - 1) / per_group);
      p.groups_x = std::min(groups, max_groups_x);
      seq.dispatch(kernel, sets[i], &p, sizeof p, p.groups_x, (groups + p.groups_x - 1) / p.groups_x, 1, op, layer);
    }
  }
  if (call.barrier_after || splits > 1) seq.barrier();  // chunks write disjoint rows: one barrier after all of them
  if (splits > 1) {
    const SplitSumPush s{uint32_t(call.n) * call.y_stride, splits};
    seq.dispatch(*call.split_sum, sets[0], &s, sizeof s, std::min<uint32_t>(1024, (s.count + 255) / 256), 1, 1, op,
                 layer);
    seq.barrier();
  }
}

void record_quantize(CommandSequence& seq, const Kernel& quantize, VkDescriptorSet set, int n, uint32_t nb,
                     uint32_t x_offset, uint32_t x_stride, int layer) {
  const QuantizePush p{uint32_t(n), nb, x_offset, x_stride};
  seq.dispatch(quantize, set, &p, sizeof p, (nb + 63) / 64, uint32_t(n), 1, "quantize_i8", layer);  // 64 blocks a workgroup
  seq.barrier();
}

AttentionSplit decode_attention_split(uint32_t keys, const KernelPlan& plan) {
  AttentionSplit s;
  s.keys_per_split = std::max<uint32_t>(plan.attention_keys_per_split,
                                        (keys + plan.max_attention_splits - 1) / plan.max_attention_splits);
  s.splits = std::max<uint32_t>(1, (keys + s.keys_per_split - 1) / s.keys_per_split);
  if (s.splits == 1) s.keys_per_split = keys;
  return s;
}

void record_forward(ModelGpu& model, CommandSequence& seq, int n, int pos, ForwardOutput out,
                    std::span<const BatchSpan> spans, int sequence) {
  Recorder(model, seq, sequence).run(n, pos, out, spans);
}

void record_items(ModelGpu& model, CommandSequence& seq, std::span<const StepItem> items) {
  if (items.empty() || int(items.size()) > model.items.max_items)
    throw Error("Vulkan: a step of " + std::to_string(items.size()) + " sequences (internal error)");
  Recorder(model, seq).run_items(items);
}

void record_logits(ModelGpu& model, CommandSequence& seq, int first, int rows) {
  Recorder(model, seq).logits(first, rows);
}

uint32_t max_dispatches_per_forward(const ModelGpu& model) {
  uint32_t per_layer = 4;  // the four matrices' chunks
  for (const LayerWeightsGpu& l : model.weights.layers) {
    per_layer = std::max<uint32_t>(per_layer, uint32_t(l.qkv.chunks.size() + l.o.chunks.size() +
                                                       l.gate_up.chunks.size() + l.down.chunks.size()));
  }
  // + qk_norm_rope and attention (batches; decode has only the fused attention) + add_norm x2
  // + split_sum after o and down (or, with int8 tiles, quantize_i8 before each of the four matrices
  // and the logits); after the layers, argmax's two passes.
  // (With fp16 tensor-core input, convert_f16 likewise.)
  const uint32_t quantize = model.kernels.quantize || model.kernels.convert ? 4 : 0;
  // A step of several sequences: an attention an item instead of two.
  const uint32_t items = uint32_t(std::max(0, kMaxStepItems - 2));
  // Soft tokens: a soft_embed a span.
  return uint32_t(model.layers.size()) * (per_layer + 6 + quantize + items) +
         2 * uint32_t(model.weights.embed.chunks.size()) + 6 + quantize / 4 + kMaxAttentionSpans;
}

}  // namespace kiln::vk
