#!/usr/bin/env bash
# One complete Vulkan measurement on the NVIDIA machine (core/runtime/vulkan/PERFORMANCE.md,
# "How to measure"): kernel sweeps and the copy ceiling, then `kiln bench` on random weights of
# Gemma 3 27B's shape, Q4_0 and Q8_0, a 512-token prefill and decode. Run from the repository root
# (bash tests/tools/measure_gpu.sh) with the Vulkan loader debs in .gl/ and Release binaries (kiln,
# bench_vulkan_kernels, their .so files in lib/) in $BIN (default .vkbench/); results go to $OUT
# (or ./vk-results). KERNEL_ARGS go to bench_vulkan_kernels (--prefill: only the prefill part);
# SKIP_KERNELS=1 leaves them out; CHECK_FIXTURES=1 first checks the forward pass against the
# fixtures' reference logits (check_fixtures.py, beside this script). PROMPT sets the prompt's
# length (default 512); decode is timed after it, so it also sets the context decode attends over.
# GEN: decode steps (default 128); PROFILE=1: per-op GPU times. TUNE (key=value+key=value) goes to
# check_fixtures.py, e.g. TUNE=family=other for the portable plan. --help prints this and exits.
if [ "${1:-}" = -h ] || [ "${1:-}" = --help ]; then
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
  exit 0
fi
set -uo pipefail
HERE=$(dirname "${BASH_SOURCE[0]}")
if [ ! -d tests/data/fixtures ]; then
  echo "measure_gpu.sh: run it from the repository root (bash tests/tools/measure_gpu.sh)" >&2
  exit 2
fi
OUT=${OUT:-vk-results}
mkdir -p "$OUT"
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
BIN=${BIN:-.vkbench}
export LD_LIBRARY_PATH=$PWD/$BIN/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export XDG_CACHE_HOME=/tmp/kiln-cache
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv | tee "$OUT/gpu.txt"
date -u +%FT%TZ | tee -a "$OUT/gpu.txt"

# The same binary against the fixtures' transformers logits on this GPU (kernels lavapipe cannot run).
if [ "${CHECK_FIXTURES:-0}" = 1 ]; then
  python3 "$HERE"/check_fixtures.py "$BIN"/kiln --backend vulkan ${TUNE:+--tune "$TUNE"} 2>&1 | tee "$OUT/fixtures.txt"
fi
if [ "${SKIP_KERNELS:-0}" != 1 ]; then
  "$BIN"/bench_vulkan_kernels ${KERNEL_ARGS:-} 2>&1 | tee "$OUT/kernels.txt"
fi
# Each variant: "precision[:tag[:key=value+key=value...]]", each key=value a `kiln bench --tune`
# (the plan's tuning keys, PERFORMANCE.md "Tuning keys"), e.g. q4_0:fp32:int8_dot=0 or
# q4_0:portable:family=other (values may hold commas: matvec=128,16,64).
for v in ${VARIANTS:-q4_0 q8_0}; do
  IFS=: read -r p tag tunes <<< "$v"
  name="27b-$p${tag:+-$tag}"
  [ "${PROMPT:-512}" != 512 ] && name="$name-prompt${PROMPT}"
  args=()
  IFS=+ read -ra pairs <<< "$tunes"
  for t in ${pairs[@]+"${pairs[@]}"}; do args+=(--tune "$t"); done
  "$BIN"/kiln bench --synthetic gemma3-27b --precision "$p" --backend vulkan --prompt "${PROMPT:-512}" \
    --gen "${GEN:-128}" --json ${PROFILE:+--profile} ${args[@]+"${args[@]}"} > "$OUT/$name.json" 2>> "$OUT/bench.err"
  python3 - "$OUT/$name.json" "$name" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(f"{sys.argv[2]}: prefill {r['prefill_tokens_per_s']:.0f} tok/s (again {r.get('prefill_again_tokens_per_s',0):.0f}), decode {r['decode_tokens_per_s']:.1f} tok/s, "
      f"{r['achieved_gb_per_s']:.0f} GB/s = {100*r.get('decode_fraction_of_copy',0):.1f}% of copy "
      f"{r.get('device_copy_gb_per_s',0):.0f} GB/s; greedy pick on the {r.get('decode_pick', 'host')}; "
      f"load {r['load_s']:.1f} s; vulkan {r.get('vulkan')}")
if r.get('profile'):
    ops = {}
    for t in r['profile']:
        o = ops.setdefault(t['op'], [0, 0]); o[0] += t['micros']; o[1] += t['calls']
    tokens = r['counters']['decode_tokens'] - 1  # the bench's warm-up step is not profiled
    print('  per token (ms): ' + ', '.join(f"{k} {v[0]/1000/tokens:.2f}" for k, v in sorted(ops.items(), key=lambda x: -x[1][0])))
if r.get('prefill_profile'):
    ops = {}
    for t in r['prefill_profile']:
        ops[t['op']] = ops.get(t['op'], 0) + t['micros']
    print(f"  prefill (ms, total {sum(ops.values())/1000:.1f}): " +
          ', '.join(f"{k} {v/1000:.2f}" for k, v in sorted(ops.items(), key=lambda x: -x[1])))
PY
done
tail -5 "$OUT/bench.err"
