#!/usr/bin/env bash
# Makes the demo model's corpus and tokenizer in WORK_DIR (default /tmp/kiln-demo):
#   WORK_DIR/data/{train,valid,heldout}.txt and WORK_DIR/data/tokenizer.model
# Needs Debian's bible-kjv (the `bible` reader; text from bible-kjv-text) and sentencepiece (spm_train).
# Deterministic: the same packages give byte-identical files.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
work="${1:-/tmp/kiln-demo}"
mkdir -p "$work/data"
cd "$work"
bible -f gen1:1-rev22:21 > kjv-verses.txt
python3 "$here/prepare_data.py" kjv-verses.txt data
# Gemma's tokenizer settings (BPE, byte fallback, identity normalization, no dummy prefix, digits split,
# whitespace kept as is), Gemma's special ids, and the two turn markers the chat format needs.
spm_train --input=data/train.txt --model_prefix=data/tokenizer --model_type=bpe --vocab_size=4096 \
  --character_coverage=1.0 --byte_fallback=true --normalization_rule_name=identity \
  --add_dummy_prefix=false --remove_extra_whitespaces=false --split_digits=true \
  --allow_whitespace_only_pieces=true --pad_id=0 --eos_id=1 --bos_id=2 --unk_id=3 \
  --pad_piece='<pad>' --eos_piece='</s>' --bos_piece='<s>' --unk_piece='<unk>' \
  --user_defined_symbols='<start_of_turn>,<end_of_turn>' --num_threads=2 > data/spm_train.log 2>&1
rm -f data/tokenizer.vocab
sha256sum data/*.txt data/tokenizer.model
