#!/usr/bin/env python3
"""llama.cpp's own backends on the K-quant GGUF fixtures against the fixtures' logits (llama.cpp's
CPU backend on the machine that made them): relative error and top-1 agreement of its CPU and of its
Vulkan backend with coopmat2, with KHR cooperative matrices and with none, as test_gguf_logits
measures Kiln. Run from the repository root with a llama_logits binary (llama_logits.cpp says how to
build it); the GPU rows need a GPU and llama.cpp built with GGML_VULKAN (a build without it runs
every row on the CPU). Usage:
    python3 tests/tools/llama_fixture_agreement.py /tmp/llama_logits"""
import json, math, os, subprocess, sys

if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
    sys.exit(__doc__)
dump = sys.argv[1]
MODES = (("cpu", 0, {}), ("vulkan coopmat2", 99, {}), ("vulkan khr", 99, {"GGML_VK_DISABLE_COOPMAT2": "1"}),
         ("vulkan no matrix cores", 99, {"GGML_VK_DISABLE_COOPMAT2": "1", "GGML_VK_DISABLE_COOPMAT": "1"}))
for q in ("q4_k_m", "q3_k_m"):
    f = f"tests/data/fixtures/gguf/tiny-gemma3-k/tiny-gemma3-k-{q}.gguf"
    ref = json.load(open(f[:-len(".gguf")] + ".llama-logits.json"))
    for tag, layers, env in MODES:
        diff = norm = 0.0
        agree = total = 0
        for case in ref["cases"]:
            out = subprocess.run([dump, f, str(layers), ",".join(map(str, case["input_ids"]))], capture_output=True,
                                 text=True, env={**os.environ, **env})
            if out.returncode:
                print(f"{q} {tag}: failed ({out.returncode}): {out.stderr[-300:]}")
                break
            rows = [list(map(float, line.split())) for line in out.stdout.strip().split("\n")]
            for mine, theirs in zip(rows, case["logits"]):
                diff += sum((x - y) ** 2 for x, y in zip(mine, theirs))
                norm += sum(y * y for y in theirs)
                agree += mine.index(max(mine)) == theirs.index(max(theirs))
                total += 1
        else:
            print(f"{q} llama.cpp {tag}: relative error {math.sqrt(diff / norm):.2e}, top-1 {agree}/{total}")
