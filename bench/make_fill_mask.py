#!/usr/bin/env python3
"""make_fill_mask.py: fill-mask probes from held-out text - sentences of 12-60 characters, one Chinese
character replaced by [MASK] (seeded), written as text<TAB>answer. Lines of the first `--skip` lines are not
used (data/pretrain/heldout.txt already holds them).
  make_fill_mask.py HELDOUT.txt N SEED [--skip K] > probes.tsv"""
import random
import sys

path, n, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
skip = int(sys.argv[sys.argv.index("--skip") + 1]) if "--skip" in sys.argv else 0
rng = random.Random(seed)
lines = [l.strip() for i, l in enumerate(open(path, encoding="utf-8")) if i >= skip]
cands = [l for l in lines if 12 <= len(l) <= 60 and "\t" not in l]
rng.shuffle(cands)
out = 0
for s in cands:
    pos = [i for i, c in enumerate(s) if "\u4e00" <= c <= "\u9fff"]
    if len(pos) < 8:
        continue
    i = rng.choice(pos)
    print(f"{s[:i]}[MASK]{s[i + 1:]}\t{s[i]}")
    out += 1
    if out == n:
        break
