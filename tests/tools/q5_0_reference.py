#!/usr/bin/env python3
"""Float rows and the Q5_0 blocks llama.cpp's gguf-py quantizer makes of them (the numpy twin of
ggml's quantize_row_q5_0_ref, what llama-quantize writes without an importance matrix), for
tests/gguf/test_kquant_quantize.cpp.

    /usr/bin/python3 tests/tools/q5_0_reference.py PATH/TO/llama.cpp/gguf-py > tests/gguf/data/q5_0-reference.json

gguf-py comes with llama.cpp's source (not in this repository); numpy is Debian's python3-numpy.
"""
import json, sys

import numpy as np

sys.path.insert(0, sys.argv[1])
from gguf import quants  # noqa: E402
from gguf.constants import GGMLQuantizationType  # noqa: E402

rng = np.random.default_rng(20261126)
rows = []
# Trained-weight-like rows: normal with a varying scale, some outliers.
for scale in (0.02, 1.0, 3e-5):
    x = rng.normal(0.0, scale, size=256).astype(np.float32)
    x[rng.integers(0, 256, size=4)] *= 20.0
    rows.append(x)
# Edge cases, a block each: all zero, one value, the largest magnitude negative / positive and
# repeated with both signs (the first one counts), values on the rounding boundaries.
edge = np.zeros((8, 32), dtype=np.float32)
edge[1, 7] = 0.5
edge[2] = np.linspace(-1.0, 0.9, 32)
edge[3] = np.linspace(-0.9, 1.0, 32)
edge[4, 3], edge[4, 9] = 0.75, -0.75
edge[5] = (np.arange(32, dtype=np.float32) - 16.0) / 16.0 + 1.0 / 32.0  # x / d lands on .5
edge[6] = rng.uniform(-1, 1, size=32).astype(np.float32) * 1e4
edge[7] = rng.uniform(-1, 1, size=32).astype(np.float32)
rows.append(edge.reshape(-1))

cases = []
for x in rows:
    blocks = quants.quantize(x.reshape(1, -1), GGMLQuantizationType.Q5_0)
    cases.append({"floats": [float(v) for v in x], "blocks_hex": np.asarray(blocks).tobytes().hex()})
json.dump({"note": "Float rows and their Q5_0 blocks as quantized by llama.cpp's gguf-py (numpy); "
                   "made by tests/tools/q5_0_reference.py.", "cases": cases}, sys.stdout)
print()
