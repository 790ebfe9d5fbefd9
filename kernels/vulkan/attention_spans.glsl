// Soft-token spans in the batched attention kernels (attention.comp, attention_prefill.comp built
// with SPANS; Backend::forward_embedded): a query inside span [begin, end) (an image's tokens) also
// sees the rest of the span after it, on every layer; before it, its window still bounds it (as
// transformers 5 masks Gemma 3: (causal or same image) and window). Queries outside spans keep
// their causal range. Text-only batches run the kernels built without SPANS.
//
// Included after the kernel's push block `pc`, which ends (AttentionSpansPush in push_constants.h)
// after AttentionPush's 11 words (44 bytes) with
//   uint span_count;     // spans in use, <= 8
//   uvec2 spans[8];      // [begin, end) absolute positions, in order, inside the batch
// (48 + 8 x 8 = 112 bytes; 8 is kMaxAttentionSpans).

// [first key, end) query position p sees, from its causal (windowed) range [lo, p + 1).
uvec2 key_range(uint p, uint lo) {
  uvec2 r = uvec2(lo, p + 1u);
  for (uint i = 0u; i < pc.span_count; ++i) {
    const uvec2 s = pc.spans[i];
    if (p >= s.x && p < s.y) r = uvec2(lo, s.y);
  }
  return r;
}
