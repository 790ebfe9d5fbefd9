# The IRON (mlir-aie) design of Kiln's attention kernel for the Ryzen AI "Phoenix" NPU (npu1, 4
# columns x 4 compute rows). Prints MLIR; aiecc.py turns it into an xclbin and an instruction
# stream (see README.md and the Makefile). Written against the IRON API of the mlir-aie release
# pinned in README.md ("Toolchain"): the device is NPU1() (npu1 is the 4-column Phoenix array since
# npu1_4col was removed in mid-2025) and tiles are given with tile=, as mlir-aie's
# programming_examples/basic/matrix_multiplication/whole_array design does. Not run on Kiln's
# development machines, which have no mlir-aie toolchain.
#
# Data movement, per column c and launch (all buffers are int32 words, laid out by the host in
# core/runtime/npu/npu_layout.cpp; every region below is contiguous in host memory):
#   Q:  shim(c) -> mem tile(c): 4 Q objects per step -> split, one to each compute row
#   KV: shim(c) -> mem tile(c) -> broadcast to the column's 4 compute rows (they share a kv head
#       and a key chunk, so K/V are read from DDR once per 4 Q tiles)
#   O:  each compute row -> mem tile(c): join 4 out objects -> shim(c)
# A compute tile loops forever over steps: acquire Q and out, attn_step_begin, then tiles_per_step
# times acquire K/V, attn_tile, release; release Q and out.
#
# --kv-split 2 builds the variant where two columns share a kv head ("two columns sharing a kv
# head", core/runtime/npu/DESIGN.md): the host deals one 512-key chunk of a Q group to columns 2p
# and 2p + 1 of the same slot, the first half to 2p, the second to 2p + 1, each with its own copy
# of the Q objects (descriptors differ only in the key range). Each column streams its half over its
# own shim -> memory tile -> compute path and computes a partial softmax state (m, l, O not yet
# divided); the host merges the pair exactly (npu_layout.cpp, NpuMerge). On the array this is the
# same kernel and the same ObjectFifos with half the K/V tiles per step, so it needs no DMA channel
# beyond the ones the unsplit design uses (every memory-tile MM2S channel is taken). Merging on a
# designated tile would need a third S2MM channel into that tile (it has 2: Q and K/V), so the
# merge stays on the host, where it costs one pass over the out objects.
import argparse
import os
import re
import sys

import numpy as np

from aie.helpers.taplib import TensorAccessPattern
from aie.iron import Kernel, ObjectFifo, Program, Runtime, Worker
from aie.iron.controlflow import range_
from aie.iron.device import NPU1, Tile
from aie.iron.placers import SequentialPlacer

HERE = os.path.dirname(os.path.abspath(__file__))
DMA_DIM_LIMIT = 1023  # largest size of one dimension of a shim / mem tile buffer descriptor


SHAPE_FIELDS = ["head_dim", "q_rows", "kv_keys", "tiles_per_step", "steps_per_launch", "q_depth", "kv_split"]


def read_layout(head_dim, kv_split):
    """The tile shape and constants from attention_layout.h: one source of truth with the C++."""
    text = open(os.path.join(HERE, "attention_layout.h")).read()
    consts = {name: int(value) for name, value in re.findall(r"constexpr int (k\w+) = (\d+);", text)}
    shapes = {}
    for m in re.findall(r"kShapeD(\d+)(Split)?\{(\d+), (\d+), (\d+), (\d+), (\d+), (\d+), (\d+)\}", text):
        shape = dict(zip(SHAPE_FIELDS, map(int, m[2:])))
        shapes[(shape["head_dim"], shape["kv_split"])] = shape
    if (head_dim, kv_split) not in shapes:
        sys.exit(f"no kernel variant for head_dim {head_dim}, kv_split {kv_split} (have {sorted(shapes)})")
    return shapes[(head_dim, kv_split)], consts


def contiguous(total, offset, objects, object_words):
    """A contiguous run of `objects` objects as a 3-d pattern whose every size fits a descriptor."""
    inner = next(d for d in range(min(object_words, DMA_DIM_LIMIT), 0, -1) if object_words % d == 0)
    middle = object_words // inner
    assert objects <= DMA_DIM_LIMIT and middle <= DMA_DIM_LIMIT
    return TensorAccessPattern((total,), offset, [1, objects, middle, inner], [0, object_words, inner, 1])


def attention_design(head_dim, kv_split=1):
    shape, consts = read_layout(head_dim, kv_split)
    cols, rows = consts["kColumns"], consts["kRowsPerColumn"]
    desc_words = consts["kDescriptorWords"]
    D, BQ, BK = shape["head_dim"], shape["q_rows"], shape["kv_keys"]
    T, S = shape["tiles_per_step"], shape["steps_per_launch"]  # T: K/V tiles per column and step
    q_words = desc_words + BQ * D // 2
    kv_words = BK * D
    out_words = BQ * D + 2 * BQ

    def words(n):
        return np.ndarray[(n,), np.dtype[np.int32]]

    q_ty, kv_ty, out_ty = words(q_words), words(kv_words), words(out_words)
    # One launch: every column runs S steps; a step is rows Q objects, T K/V objects, rows out objects.
    q_host, kv_host, out_host = cols * S * rows * q_words, cols * S * T * kv_words, cols * S * rows * out_words

    step_begin = Kernel("attn_step_begin", f"attention_d{D}.o", [q_ty, out_ty])
    tile = Kernel("attn_tile", f"attention_d{D}.o", [q_ty, kv_ty, out_ty])

    q_l3, kv_l3, out_l3, workers = [], [], [], []
    for c in range(cols):
        q_fifo = ObjectFifo(words(rows * q_words), name=f"q_l3_{c}", depth=2)
        q_l1 = q_fifo.cons().split(
            [r * q_words for r in range(rows)],
            obj_types=[q_ty] * rows,
            names=[f"q_{c}_{r}" for r in range(rows)],
            depths=[shape["q_depth"]] * rows,
            tile=Tile(c, 1),
        )
        kv_fifo = ObjectFifo(kv_ty, name=f"kv_l3_{c}", depth=2)
        kv_l1 = kv_fifo.cons().forward(obj_type=kv_ty, name=f"kv_{c}", depth=2, tile=Tile(c, 1))
        out_fifo = ObjectFifo(words(rows * out_words), name=f"out_l3_{c}", depth=2)
        out_l1 = out_fifo.prod().join(
            [r * out_words for r in range(rows)],
            obj_types=[out_ty] * rows,
            names=[f"out_{c}_{r}" for r in range(rows)],
            depths=[1] * rows,
            tile=Tile(c, 1),
        )
        q_l3.append(q_fifo)
        kv_l3.append(kv_fifo)
        out_l3.append(out_fifo)

        def core_fn(q_in, kv_in, o_out, begin_fn, tile_fn):
            for _ in range_(sys.maxsize):  # one iteration per step, for as long as the context lives
                qd = q_in.acquire(1)
                o = o_out.acquire(1)
                begin_fn(qd, o)
                for _ in range_(T):
                    kv = kv_in.acquire(1)
                    tile_fn(qd, kv, o)
                    kv_in.release(1)
                q_in.release(1)
                o_out.release(1)

        for r in range(rows):
            workers.append(
                Worker(core_fn, [q_l1[r].cons(), kv_l1.cons(), out_l1[r].prod(), step_begin, tile],
                       tile=Tile(c, 2 + r))
            )

    rt = Runtime()
    with rt.sequence(words(q_host), words(kv_host), words(out_host)) as (Q, KV, OUT):
        rt.start(*workers)
        tg = rt.task_group()
        for c in range(cols):
            rt.fill(q_l3[c].prod(), Q, tap=contiguous(q_host, c * S * rows * q_words, S * rows, q_words),
                    task_group=tg, tile=Tile(c, 0))
            rt.fill(kv_l3[c].prod(), KV, tap=contiguous(kv_host, c * S * T * kv_words, S * T, kv_words),
                    task_group=tg, tile=Tile(c, 0))
        for c in range(cols):
            rt.drain(out_l3[c].cons(), OUT, tap=contiguous(out_host, c * S * rows * out_words, S * rows, out_words),
                     wait=True, task_group=tg, tile=Tile(c, 0))
        rt.finish_task_group(tg)
    return Program(NPU1(), rt).resolve_program(SequentialPlacer())


def main():
    parser = argparse.ArgumentParser(description="Kiln attention for the Phoenix NPU: prints MLIR")
    parser.add_argument("--head-dim", type=int, choices=[128, 256], required=True)
    parser.add_argument("--kv-split", type=int, choices=[1, 2], default=1,
                        help="columns that share one key chunk (2: a column pair takes its two halves)")
    args = parser.parse_args()
    print(attention_design(args.head_dim, args.kv_split))


if __name__ == "__main__":
    main()
