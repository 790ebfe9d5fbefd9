#!/usr/bin/env python3
"""Random IQ4_XS super-blocks and their values as llama.cpp's gguf-py dequantizes them, for
tests/gguf/test_iq4xs.cpp.

    /usr/bin/python3 tests/tools/iq4xs_reference.py PATH/TO/llama.cpp/gguf-py > tests/gguf/data/iq4xs-reference.json

gguf-py comes with llama.cpp's source (not in this repository); numpy is Debian's python3-numpy.
Block: fp16 d, uint16 scales_h, 4 bytes scales_l, 128 bytes of nibbles (136 bytes, 256 weights).
"""
import json, sys

import numpy as np

sys.path.insert(0, sys.argv[1])
from gguf import quants  # noqa: E402
from gguf.constants import GGMLQuantizationType  # noqa: E402

rng = np.random.default_rng(20261126)
BLOCKS = 6
blocks = rng.integers(0, 256, size=(BLOCKS, 136), dtype=np.uint8)
# d small and positive as in real files (random bytes there would be NaN or huge); one negative.
d = rng.uniform(1e-4, 2e-3, size=BLOCKS).astype(np.float16)
d[3] = -d[3]
blocks[:, 0:2] = d.view(np.uint8).reshape(BLOCKS, 2)
# Block 4: every sub-block scale at its extremes (ls 0 and 63: -32 and 31) in turn.
blocks[4, 2:4] = np.frombuffer(np.uint16(0xCCCC).tobytes(), dtype=np.uint8)
blocks[4, 4:8] = [0xF0, 0xF0, 0xF0, 0xF0]
values = quants.dequantize(blocks.reshape(-1), GGMLQuantizationType.IQ4_XS)
json.dump({"note": "Random IQ4_XS super-blocks and their values as dequantized by llama.cpp's gguf-py (numpy); "
                   "made by tests/tools/iq4xs_reference.py.",
           "blocks_hex": blocks.tobytes().hex(),
           "values": [float(v) for v in np.asarray(values, dtype=np.float32).reshape(-1)]}, sys.stdout)
print()
