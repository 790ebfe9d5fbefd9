#!/usr/bin/env python3
"""Turns the King James Bible from Debian's bible-kjv-text into the demo model's corpus.

Input: the output of `bible -f gen1:1-rev22:21` (package bible-kjv, data from bible-kjv-text),
one verse a line, "Ref Text". Output, in OUT_DIR:
  train.txt    chapters the model is trained on (and the tokenizer is trained on)
  valid.txt    chapters used only to pick the best checkpoint during training
  heldout.txt  chapters nothing ever trains or selects on (copied to tests/data/demo-heldout.txt)
Each chapter is its verses joined by newlines (no verse numbers); chapters are separated by a blank
line. Held-out and validation chapters are spread evenly over the whole book, so they cover every
genre (law, history, poetry, prophecy, letters) instead of one book's vocabulary.
Standard library only, deterministic: the same input gives byte-identical files.
"""
import re
import sys
from pathlib import Path

# Chapter number c (0-based, in canonical order) goes to held-out when c % PERIOD == HELDOUT_PHASE
# and to validation when c % PERIOD == VALID_PHASE. 1189 chapters / 120 -> 10 chapters each.
PERIOD = 120
HELDOUT_PHASE = 60
VALID_PHASE = 0

VERSE_LINE = re.compile(r"^(\d?[A-Za-z]+)(\d+):(\d+) (.*)$")


def read_chapters(lines):
    chapters = []  # list of lists of verse texts, canonical order
    current_key = None
    for number, line in enumerate(lines, 1):
        line = line.rstrip("\n")
        if not line:
            continue
        match = VERSE_LINE.match(line)
        if not match:
            sys.exit(f"prepare_data: line {number} is not 'Ref Text': {line[:60]!r}")
        book, chapter, _verse, text = match.groups()
        text = " ".join(text.split())  # the source has a few double spaces
        key = (book, int(chapter))
        if key != current_key:
            chapters.append([])
            current_key = key
        chapters[-1].append(text)
    return chapters


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: prepare_data.py KJV_VERSES.txt OUT_DIR")
    source, out_dir = Path(sys.argv[1]), Path(sys.argv[2])
    chapters = read_chapters(source.read_text(encoding="utf-8").splitlines())
    if len(chapters) != 1189:
        sys.exit(f"prepare_data: expected the 1189 chapters of the KJV, found {len(chapters)}")
    split = {"train": [], "valid": [], "heldout": []}
    for index, verses in enumerate(chapters):
        phase = index % PERIOD
        name = "heldout" if phase == HELDOUT_PHASE else "valid" if phase == VALID_PHASE else "train"
        split[name].append("\n".join(verses))
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, texts in split.items():
        body = "\n\n".join(texts) + "\n"
        (out_dir / f"{name}.txt").write_text(body, encoding="utf-8")
        print(f"{name}: {len(texts)} chapters, {len(body.encode())} bytes")


if __name__ == "__main__":
    main()
