#!/usr/bin/env python3
"""Random K-quant super-blocks (and blocks of GGUF's other formats Kiln reads: Q4_1, Q5_0, Q5_1,
IQ4_NL) and their values as llama.cpp's gguf-py dequantizes them, for tests/gguf/test_kquants.cpp.

    /usr/bin/python3 tests/tools/kquants_reference.py PATH/TO/llama.cpp/gguf-py > tests/gguf/data/kquants-reference.json

gguf-py comes with llama.cpp's source (not in this repository); numpy is Debian's python3-numpy.
"""
import json, sys

import numpy as np

sys.path.insert(0, sys.argv[1])
from gguf import quants  # noqa: E402
from gguf.constants import GGMLQuantizationType  # noqa: E402

# Bytes of a block, where its fp16 multipliers sit (random bytes there would be NaN or huge; real
# files hold small positive scales), and weights a block. Every case holds 1024 weights.
LAYOUTS = {
    "Q2_K": (84, [80, 82], 256),
    "Q3_K": (110, [108], 256),
    "Q4_K": (144, [0, 2], 256),
    "Q5_K": (176, [0, 2], 256),
    "Q6_K": (210, [208], 256),
    "Q4_1": (20, [0, 2], 32),
    "Q5_0": (22, [0], 32),
    "Q5_1": (24, [0, 2], 32),
    "IQ4_NL": (18, [0], 32),
}

rng = np.random.default_rng(20261125)
cases = []
for name, (size, halves, weights) in LAYOUTS.items():
    BLOCKS = 1024 // weights
    blocks = rng.integers(0, 256, size=(BLOCKS, size), dtype=np.uint8)
    for at in halves:
        scale = rng.uniform(1e-3, 5e-2, size=BLOCKS).astype(np.float16)
        blocks[:, at:at + 2] = scale.view(np.uint8).reshape(BLOCKS, 2)
    values = quants.dequantize(blocks.reshape(-1), GGMLQuantizationType[name])
    cases.append({"type": name, "blocks_hex": blocks.tobytes().hex(),
                  "values": [float(v) for v in np.asarray(values, dtype=np.float32).reshape(-1)]})
json.dump({"note": "Random K-quant super-blocks (and Q4_1, Q5_0, Q5_1, IQ4_NL blocks) and their values as dequantized by llama.cpp's gguf-py (numpy); "
                   "made by tests/tools/kquants_reference.py.", "cases": cases}, sys.stdout)
print()
