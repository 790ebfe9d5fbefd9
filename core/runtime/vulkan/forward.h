// Recording Gemma 3's forward pass for a batch of tokens into one command sequence.
#pragma once

#include <span>

#include "runtime/vulkan/model_gpu.h"
#include "runtime/vulkan/sequence.h"

namespace kiln::vk {

struct MatrixCall {
  bool glu = false;      // rows are (gate, up) pairs; y gets gelu_tanh(gate) * up
  bool batched = false;  // tiled matrix-matrix kernel (prefill) instead of matrix-vector
  int n = 1;             // tokens
  uint32_t x_offset = 0, x_stride = 0, y_stride = 0;  // floats
  MatmulTile tile = kMatmulTile;  // batched: rows x tokens a workgroup of the kernel takes
  // Split-K (matmul_coop only, not GLU): the row's blocks in `splits` parts, each part's sums in
  // its own slice of y (which must hold splits x n x y_stride floats), then split_sum adds them.
  uint32_t splits = 1;
  const Kernel* split_sum = nullptr;
  uint32_t norm_post = 0;  // gathering the add_norm's sums (MatrixKernels::sums): its w_post
  // One token with stage flags (matvec_qin_*, one chunk): gate_up's first part_groups workgroups
  // are an early part, and down reads its blocks below part_blocks once that part is done
  // (KernelPlan::early_part). Set on both calls; 0: none.
  uint32_t part_groups = 0, part_blocks = 0;
  // False for all but the last part of a mixed stack: the parts write disjoint rows from the same
  // input, so they share the barrier after the last one instead of waiting on each other.
  bool barrier_after = true;
};

// y[t][chunk.row_begin + r] (or [.. / 2] with GLU) = W x[t] over `chunks` of a matrix of `cols`
// columns (all of its chunks, or a mixed stack's run of one type), then a barrier (unless
// call.barrier_after is false).
// sets[i] binds chunk i's weights, scales, x and y to `kernel` (a matvec_* pipeline of `shape`, or
// a matmul_* / matmul_coop_* one of tile call.tile). With call.splits > 1, split_sum runs on sets[0]
// after the chunks (binding 3 is y in every set).
void record_matrix(CommandSequence& seq, const Kernel& kernel, std::span<const DeviceMatrix::Chunk> chunks,
                   int64_t cols, std::span<const VkDescriptorSet> sets, const MatrixCall& call,
                   const MatvecShape& shape, uint32_t max_groups_x, const char* op, int layer);

// Int8 tiles (KernelPlan::int_dot_for): quantize_i8 rounds n tokens of `nb` blocks, read at
// x_offset + t x_stride floats through `set`'s input, into its xq; then a barrier.
void record_quantize(CommandSequence& seq, const Kernel& quantize, VkDescriptorSet set, int n, uint32_t nb,
                     uint32_t x_offset, uint32_t x_stride, int layer);

// What a recorded forward pass leaves for the host.
enum class ForwardOutput {
  LastLogits,  // the last token's row of logits in model.logits_host
  AllLogits,   // n rows of logits in model.logits_host
  Argmax,      // only the index of the last token's largest logit: model.pick_host[its position % 2]
               // and model.tokens[0] (argmax.comp)
  Normed,      // no logits: model.xn holds final_norm(x) of all n tokens, for record_logits
};

// Soft tokens of one recording (Backend::forward_embedded): batch rows [first, first + count),
// whose token ids in model.tokens are -1 and whose rows are in model.soft_tokens().rows at their
// batch rows. Attention among a span's tokens is bidirectional.
struct BatchSpan {
  int first = 0, count = 0;
};

// Records n tokens (already written to model.tokens) at positions [pos, pos + n): embedding,
// every layer (writing K/V into the cache), the final norm, the logits and `out`.
// n <= model.max_batch, and n <= model.logit_rows for AllLogits. spans: at most
// kMaxAttentionSpans, in order; none records exactly the text-only pass. sequence: whose KV cache
// (ModelGpu::sequences).
void record_forward(ModelGpu& model, CommandSequence& seq, int n, int pos, ForwardOutput out,
                    std::span<const BatchSpan> spans = {}, int sequence = 0);

// One decode step of several sequences (Backend::forward_sequences): item i's token, already in
// model.tokens[i], at position pos of its sequence; its row of logits in row i of
// model.logits_host. 1 <= items <= model.items.max_items, each sequence at most once.
struct StepItem {
  int sequence = 0, pos = 0;
  bool operator==(const StepItem&) const = default;
};
void record_items(ModelGpu& model, CommandSequence& seq, std::span<const StepItem> items);

// After a Normed recording: logits of batch rows [first, first + rows) into model.logits_host
// (rows <= model.logit_rows).
void record_logits(ModelGpu& model, CommandSequence& seq, int first, int rows);

// A decode step's `keys` split over workgroups (one a split and query head): short splits, since
// one token has only `heads` queries to spread over the GPU.
struct AttentionSplit {
  uint32_t splits = 1, keys_per_split = 0;
};
AttentionSplit decode_attention_split(uint32_t keys, const KernelPlan& plan);

// Dispatches one recording of a forward pass needs at most (for the timestamp pool).
uint32_t max_dispatches_per_forward(const ModelGpu& model);

}  // namespace kiln::vk
