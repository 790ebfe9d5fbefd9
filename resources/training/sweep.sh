#!/usr/bin/env bash
# Trains a few regularisation settings side by side on one GPU and keeps the one with the lowest
# validation loss (valid.txt; the held-out text plays no part in the choice). Usage:
#   sweep.sh DATA_DIR OUT_DIR
# DATA_DIR holds train.txt, valid.txt, heldout.txt and tokenizer.model (from prepare.sh).
# The winner's files land in OUT_DIR (model/, demo-reference.json, train-log.json); each variant's
# console output goes to OUT_DIR/sweep.txt.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
data="$1"; out="$2"; runs="$(mktemp -d)"
declare -A variants=(
  [a]="--steps 800 --dropout 0.1"
  [b]="--steps 800 --dropout 0.25"
  [c]="--steps 1200 --dropout 0.3"
)
for name in "${!variants[@]}"; do
  # shellcheck disable=SC2086
  python3 "$here/train.py" --data "$data" --tokenizer "$data/tokenizer.model" --out "$runs/$name" \
    --batch 16 --seq 2048 --eval-every 50 ${variants[$name]} > "$runs/$name.txt" 2>&1 &
done
wait
best=""; best_loss=""
for name in "${!variants[@]}"; do
  loss=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['best_valid_loss'])" "$runs/$name/train-log.json")
  echo "variant $name (${variants[$name]}): best valid loss $loss" | tee -a "$out/sweep.txt"
  grep -E "^(step|best|held-out|greedy)" "$runs/$name.txt" | sed "s/^/  [$name] /" >> "$out/sweep.txt"
  if [ -z "$best" ] || python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) < float(sys.argv[2]) else 1)" "$loss" "$best_loss"; then
    best="$name"; best_loss="$loss"
  fi
done
echo "chosen: variant $best (${variants[$best]})" | tee -a "$out/sweep.txt"
cp -r "$runs/$best/model" "$runs/$best/demo-reference.json" "$runs/$best/train-log.json" "$out/"
grep -E "^(best|held-out|greedy)" "$runs/$best.txt"
