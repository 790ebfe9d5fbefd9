#!/usr/bin/env python3
"""Reads a GGUF file written by `kiln quantize` with llama.cpp's own gguf-py (its reader and its
numpy dequantizers) and compares every tensor with the Hugging Face folder it came from.

    /usr/bin/python3 tests/tools/check_quantized_gguf.py PATH/TO/llama.cpp/gguf-py OUT.gguf MODEL_FOLDER

Prints, per storage type, the tensors and their relative RMS error against the source weights
(RMSNorm weights compared as 1 + w, as GGUF stores them); exits 1 when a tensor is missing, has
another shape, or is further than 0.2 from its source. Nothing of Kiln's runs here: it checks the
file layout, the block bytes and the tensor names against code we did not write.
gguf-py comes with llama.cpp's source (not in this repository); numpy is Debian's python3-numpy.
"""
import json, struct, sys
from collections import defaultdict

import numpy as np

sys.path.insert(0, sys.argv[1])
from gguf import GGUFReader, quants  # noqa: E402

GGUF_TO_HF = {
    "attn_norm": "input_layernorm", "post_attention_norm": "post_attention_layernorm",
    "ffn_norm": "pre_feedforward_layernorm", "post_ffw_norm": "post_feedforward_layernorm",
    "attn_q": "self_attn.q_proj", "attn_k": "self_attn.k_proj", "attn_v": "self_attn.v_proj",
    "attn_output": "self_attn.o_proj", "attn_q_norm": "self_attn.q_norm", "attn_k_norm": "self_attn.k_norm",
    "ffn_gate": "mlp.gate_proj", "ffn_up": "mlp.up_proj", "ffn_down": "mlp.down_proj",
}


def read_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        raw = np.frombuffer(data[begin:end], dtype=np.uint8)
        if info["dtype"] == "BF16":
            values = (raw.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
        elif info["dtype"] == "F16":
            values = raw.view(np.float16).astype(np.float32)
        else:
            values = raw.view(np.float32)
        out[name.removeprefix("model.")] = values.reshape(info["shape"])
    return out


def hf_name(gguf_name):
    if gguf_name == "token_embd.weight":
        return "embed_tokens.weight"
    if gguf_name == "output_norm.weight":
        return "norm.weight"
    _, layer, part, _ = gguf_name.split(".")
    return f"layers.{layer}.{GGUF_TO_HF[part]}.weight"


def main():
    reader = GGUFReader(sys.argv[2])
    source = read_safetensors(sys.argv[3] + "/model.safetensors")
    errors = defaultdict(list)
    bad = 0
    for t in reader.tensors:
        ref = source.get(hf_name(t.name))
        values = quants.dequantize(t.data, t.tensor_type).astype(np.float32)
        if ref is None or values.size != ref.size:
            print(f"{t.name}: missing in the source or another size")
            bad += 1
            continue
        ref = ref.reshape(values.shape).astype(np.float64)
        if t.name.endswith("norm.weight"):
            ref = ref + 1.0
        err = float(np.sqrt(np.mean((values - ref) ** 2) / np.mean(ref ** 2)))
        errors[t.tensor_type.name].append(err)
        if err > 0.2:
            print(f"{t.name}: relative RMS error {err:.4f}")
            bad += 1
    for kind, errs in errors.items():
        print(f"{kind}: {len(errs)} tensors, relative RMS error mean {np.mean(errs):.5f} max {np.max(errs):.5f}")
    sys.exit(1 if bad else 0)


main()
