#!/usr/bin/env python3
"""The Vulkan forward pass against the fixtures' reference logits (tests/data/fixtures), with and
without the tensor-core prefill (KILN_VK_COOPMAT=1 / 0). Qt-free, so it runs where the Qt tests
cannot (the GPU machine). Every case is fed as one batch (> 4 tokens: the matmul path).

usage: check_fixtures.py KILN [FIXTURES_DIR]
Prints, per fixture, precision and setting: relative error ||ours - ref|| / ||ref||, top-1
agreement and mean KL(ref || ours) over every position of every case, and the relative
difference between the two settings' logits. Exit status 1 when a run fails."""
import json
import math
import os
import subprocess
import sys


def logits(kiln, model, precision, ids, coop):
    env = dict(os.environ, KILN_VK_COOPMAT=coop)
    out = subprocess.run([kiln, "logits", "--model", model, "--backend", "vulkan", "--precision", precision,
                          "--tokens", ",".join(map(str, ids))], env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"kiln logits failed ({model}, {precision}, coop {coop}): {out.stderr.strip()}")
    return json.loads(out.stdout)["logits"]


def relative(ours, ref):  # over lists of rows
    diff = sum((o - r) ** 2 for orow, rrow in zip(ours, ref) for o, r in zip(orow, rrow))
    return math.sqrt(diff / sum(r * r for rrow in ref for r in rrow))


def log_softmax(row):
    m = max(row)
    z = math.log(sum(math.exp(v - m) for v in row))
    return [v - m - z for v in row]


def agreement(ours, ref):
    top1 = sum(o.index(max(o)) == r.index(max(r)) for o, r in zip(ours, ref)) / len(ref)
    kl = 0.0
    for o, r in zip(ours, ref):
        lo, lr = log_softmax(o), log_softmax(r)
        kl += sum(math.exp(b) * (b - a) for a, b in zip(lo, lr))
    return relative(ours, ref), top1, kl / len(ref)


def main():
    kiln = sys.argv[1]
    root = sys.argv[2] if len(sys.argv) > 2 else "tests/data/fixtures"
    print(f"{'fixture':<14} {'precision':<9} {'coop':<4} {'rel.err':>9} {'top1':>6} {'KL':>9} {'coop vs fp32 tiles':>19}")
    failed = False
    for fixture in ("tiny-gemma3-a", "tiny-gemma3-b"):
        model = os.path.join(root, fixture)
        ref = json.load(open(os.path.join(model, "reference.json")))
        for precision in ("f32", "f16", "q8_0", "q4_0"):
            rows = {}
            for coop in ("0", "1"):
                try:
                    rows[coop] = [logits(kiln, model, precision, c["input_ids"], coop) for c in ref["cases"]]
                except RuntimeError as e:
                    print(e)
                    failed = True
                    continue
            for coop, ours in rows.items():
                r = [row for c in ref["cases"] for row in c["logits"]]
                o = [row for case in ours for row in case]
                rel, top1, kl = agreement(o, r)
                between = ""
                if coop == "1" and "0" in rows:
                    between = f"{relative(o, [row for case in rows['0'] for row in case]):.2e}"
                print(f"{fixture:<14} {precision:<9} {coop:<4} {rel:9.2e} {top1:6.3f} {kl:9.2e} {between:>19}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
