#!/usr/bin/env python3
"""Whole-model check of a kiln binary against the fixtures' transformers logits, for machines
without Qt (the GPU measurement machine): for each fixture, precision and feeding mode (one batch,
or 3 tokens then one at a time), prints the worst case's relative error
(norm of the difference over norm of the reference) and top-1 agreement.
Run from the repository root (the fixtures' paths are relative to it); measure_gpu.sh runs it
with CHECK_FIXTURES=1. Usage:
    python3 tests/tools/check_fixtures.py KILN [--backend vulkan] [--precisions f32,f16,q8_0,q4_0]
        [--tune k=v+k=v] [--gguf FILE,FILE] [--modes all,3]
(--tune: the Vulkan plan's tuning keys, e.g. family=other for the portable plan; --gguf: GGUF files,
each checked as stored against llama.cpp's logits beside it, FILE minus .gguf plus .llama-logits.json,
instead of the folders against transformers)"""
import argparse, json, math, subprocess, sys

ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("kiln")
ap.add_argument("--backend", default="vulkan")
ap.add_argument("--precisions", default="f32,f16,q8_0,q4_0")
ap.add_argument("--tune", default="", help="key=value+key=value, each passed as kiln --tune")
ap.add_argument("--fixtures", default="tests/data/fixtures/tiny-gemma3-a,tests/data/fixtures/tiny-gemma3-b")
ap.add_argument("--gguf", default="", help="GGUF files with llama.cpp's logits beside them")
ap.add_argument("--modes", default="all,3",
                help="feeding modes: all (one batch), or N (the first N tokens as one batch, then one at a time)")
args = ap.parse_args()

checks = [(fx, fx + "/reference.json", args.precisions.split(",")) for fx in args.fixtures.split(",")]
if args.gguf:
    checks = [(f, f[:-len(".gguf")] + ".llama-logits.json", ["auto"]) for f in args.gguf.split(",")]
for fx, reference, precisions in checks:
    ref = json.load(open(reference))
    for p in precisions:
        for prefill in args.modes.split(","):
            worst, agree, total = 0.0, 0, 0
            for case in ref["cases"]:
                ids = case["input_ids"]
                cmd = [args.kiln, "logits", "-m", fx, "-p", p, "--backend", args.backend,
                       "--tokens", ",".join(map(str, ids))]
                if prefill != "all":
                    cmd += ["--prefill", prefill]
                for t in filter(None, args.tune.split("+")):
                    cmd += ["--tune", t]
                out = subprocess.run(cmd, capture_output=True, text=True)
                if out.returncode != 0:
                    sys.exit(f"{' '.join(cmd)} failed: {out.stderr.strip()}")
                diff = norm = 0.0  # over the whole case, as tests/core/fixture_reference.h
                for a, b in zip(json.loads(out.stdout)["logits"], case["logits"]):
                    diff += sum((x - y) ** 2 for x, y in zip(a, b))
                    norm += sum(y * y for y in b)
                    agree += a.index(max(a)) == b.index(max(b))
                    total += 1
                worst = max(worst, math.sqrt(diff / norm))
            print(f"{fx.split('/')[-1]:14s} {p:5s} prefill {prefill:3s}: relative error {worst:.2e}, top-1 {agree}/{total}")
