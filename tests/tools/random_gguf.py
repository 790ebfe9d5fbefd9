#!/usr/bin/env python3
"""A Gemma 3 GGUF of a real model's shape with random weights, for speed measurement only (random
weights cost the same time as real ones). Kiln and llama.cpp read the same file side by side.

    python3 tests/tools/random_gguf.py OUT.gguf 1b|4b|12b|27b q4_0|q8_0|q4_k_m|q6_k|iq4_xs|bf16|f16 PATH/TO/gguf-py

q4_k_m mixes types as llama-quantize does: Q4_K, with Q6_K for the token embedding and for attn_v and
ffn_down of the layers its "more bits" rule picks (the first and last eighth, every third between).
Rows that are no multiple of 256 (the 1B shape's 1152) fall back as llama-quantize does: Q4_K to
Q5_0, Q6_K to Q8_0. q4_0 and q8_0 hold the embedding in Q8_0. iq4_xs holds every matrix in IQ4_XS
(IQ4_NL where a row is no multiple of 256, as llama-quantize falls back; its rules that raise some
attn_v / ffn_down to Q5_K are left out) and the embedding as q4_k_m does. bf16 and f16 hold every matrix,
the embedding included, in that format (as convert_hf_to_gguf.py writes them), values of a real model's
size (normal, sigma 0.02). Norms are F32 ones.
"""
import sys

import numpy as np

sys.path.insert(0, sys.argv[4] if len(sys.argv) > 4 else "gguf-py")
import gguf  # noqa: E402
from gguf import GGMLQuantizationType as Q  # noqa: E402

SHAPES = {  # layers, hidden, heads, kv heads, head_dim, ffn, window, vocab, linear rope scaling
    "1b": (26, 1152, 4, 1, 256, 6912, 512, 262144, None),
    "4b": (34, 2560, 8, 4, 256, 10240, 1024, 262208, 8.0),
    "12b": (48, 3840, 16, 8, 256, 15360, 1024, 262208, 8.0),
    "27b": (62, 5376, 32, 16, 128, 21504, 1024, 262208, 8.0),
}
# type: (weights a block, bytes a block, offsets of fp16 scales, their value)
BLOCKS = {
    Q.Q8_0: (32, 34, [0], 5e-4), Q.Q4_0: (32, 18, [0], 2e-3), Q.Q5_0: (32, 22, [0], 1e-3),
    Q.Q4_K: (256, 144, [0, 2], 2e-4), Q.Q6_K: (256, 210, [208], 2e-4),
    Q.IQ4_XS: (256, 136, [0], 1e-4), Q.IQ4_NL: (32, 18, [0], 2e-3),
}
FALLBACK = {Q.Q4_K: Q.Q5_0, Q.Q6_K: Q.Q8_0, Q.IQ4_XS: Q.IQ4_NL}
FILE_TYPE = {"q4_0": 2, "q8_0": 7, "q4_k_m": 15, "q6_k": 18, "iq4_xs": 30, "f16": 1, "bf16": 32}

out, shape, quant = sys.argv[1], sys.argv[2], sys.argv[3]
L, H, NH, NKV, HD, FF, W, V, RS = SHAPES[shape]
rng = np.random.default_rng(0)


def matrix(rows, cols, t):
    """Random blocks of type t (or its fallback) for a rows x cols weight: bytes, type."""
    if t in (Q.F16, Q.BF16):
        v = rng.standard_normal((rows, cols), dtype=np.float32) * np.float32(0.02)
        if t == Q.F16:
            return v.astype(np.float16).view(np.uint8), t
        return (v.view(np.uint32) >> 16).astype(np.uint16).view(np.uint8), t  # truncated: random anyway
    if cols % BLOCKS[t][0] != 0:
        t = FALLBACK[t]
    per, size, halves, scale = BLOCKS[t]
    a = rng.integers(0, 256, size=(rows, cols // per, size), dtype=np.uint8)
    d = np.full((rows, cols // per), scale, dtype=np.float16).view(np.uint8).reshape(rows, cols // per, 2)
    for at in halves:
        a[:, :, at:at + 2] = d
    if t == Q.Q8_0:
        a[:, :, 2:] %= 32  # small int8 quants
    return a.reshape(rows, -1), t


def more_bits(i):
    return i < L // 8 or i >= 7 * L // 8 or (i - L // 8) % 3 == 2


def layer_type(name, i):
    if quant in ("q4_0", "q8_0", "iq4_xs", "bf16", "f16"):
        return {"q4_0": Q.Q4_0, "q8_0": Q.Q8_0, "iq4_xs": Q.IQ4_XS, "bf16": Q.BF16, "f16": Q.F16}[quant]
    if quant == "q6_k" or (name in ("attn_v", "ffn_down") and more_bits(i)):
        return Q.Q6_K
    return Q.Q4_K


w = gguf.GGUFWriter(out, "gemma3")
w.add_block_count(L); w.add_context_length(131072); w.add_embedding_length(H); w.add_feed_forward_length(FF)
w.add_head_count(NH); w.add_head_count_kv(NKV); w.add_key_length(HD); w.add_value_length(HD)
w.add_layer_norm_rms_eps(1e-6); w.add_rope_freq_base(1e6); w.add_sliding_window(W)
w.add_float32("gemma3.rope.freq_base_swa", 10000.0)
if RS:
    w.add_rope_scaling_type(gguf.RopeScalingType.LINEAR); w.add_rope_scaling_factor(RS)
w.add_file_type(FILE_TYPE[quant])
w.add_tokenizer_model("llama"); w.add_tokenizer_pre("default")
toks = [b"<pad>", b"</s>", b"<s>", b"<unk>"] + [("<t%d>" % i).encode() for i in range(4, V)]
w.add_token_list(toks); w.add_token_scores([0.0] * V); w.add_token_types([3, 3, 3, 2] + [1] * (V - 4))
w.add_bos_token_id(2); w.add_eos_token_id(1); w.add_unk_token_id(3); w.add_pad_token_id(0)


def add(name, rows, cols, t):
    data, t = matrix(rows, cols, t)
    w.add_tensor(name, data, raw_dtype=t)


add("token_embd.weight", V, H, Q.Q8_0 if quant in ("q4_0", "q8_0") else Q.BF16 if quant == "bf16"
    else Q.F16 if quant == "f16" else Q.Q6_K)
ones = lambda n: np.ones(n, dtype=np.float32)  # noqa: E731
for i in range(L):
    p = f"blk.{i}."
    for n, size in [("attn_norm", H), ("post_attention_norm", H), ("ffn_norm", H), ("post_ffw_norm", H),
                    ("attn_q_norm", HD), ("attn_k_norm", HD)]:
        w.add_tensor(p + n + ".weight", ones(size))
    for n, rows, cols in [("attn_q", NH * HD, H), ("attn_k", NKV * HD, H), ("attn_v", NKV * HD, H),
                          ("attn_output", H, NH * HD), ("ffn_gate", FF, H), ("ffn_up", FF, H), ("ffn_down", H, FF)]:
        add(p + n + ".weight", rows, cols, layer_type(n, i))
w.add_tensor("output_norm.weight", ones(H))
w.write_header_to_file(); w.write_kv_data_to_file(); w.write_tensors_to_file(); w.close()
print("wrote", out)
