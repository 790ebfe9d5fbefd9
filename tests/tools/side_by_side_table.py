#!/usr/bin/env python3
"""The table of a side_by_side_gpu.sh run: every kiln-*.json and llama-*.csv in the folder given.
Kiln's pp512 is its second prefill of the prompt (the first in brackets), as llama-bench averages
runs after a warm-up one."""
import csv, glob, json, os, sys

work = sys.argv[1]
for path in sorted(glob.glob(os.path.join(work, "kiln-*.json"))):
    name = os.path.basename(path)[len("kiln-"):-len(".json")]
    try:
        r = json.load(open(path))
    except ValueError:
        print(f"kiln  {name:24s} no result (see kiln.err)")
        continue
    plan = (r.get("vulkan") or {}).get("plan") or {}
    print(f"kiln  {name:24s} pp512 {r['prefill_again_tokens_per_s']:7.0f} ({r['prefill_tokens_per_s']:4.0f})  tg128 {r['decode_tokens_per_s']:6.1f}  "
          f"{100 * r.get('decode_fraction_of_copy', 0):3.0f}% of copy  weights {r['weight_bytes'] / 1e9:5.2f} GB  "
          f"prefill={plan.get('prefill')} decode={plan.get('decode')}")
for path in sorted(glob.glob(os.path.join(work, "llama-*.csv"))):
    name = os.path.basename(path)[len("llama-"):-len(".csv")]
    rows = list(csv.DictReader(open(path)))
    tps = {("pp" if int(row["n_prompt"]) else "tg"): float(row["avg_ts"]) for row in rows}
    print(f"llama {name:24s} pp512 {tps.get('pp', 0):7.0f}  tg128 {tps.get('tg', 0):6.1f}")
