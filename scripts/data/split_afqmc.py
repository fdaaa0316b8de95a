#!/usr/bin/env python3
# split_afqmc.py: cuts AFQMC's public dev set (4,316 pairs, the only labelled AFQMC file we bundle) into
# 3,316 pairs to train on and 1,000 held out, by hash: the 1,000 pairs whose SHA-1 of
# "sentence1<TAB>sentence2" sorts first are held out. Deterministic, independent of row order.
# Usage: scripts/data/split_afqmc.py ../shared/data/matching/afqmc/dev.json data/matching/afqmc
import hashlib
import json
import sys

src, out = sys.argv[1], sys.argv[2]
rows = [json.loads(line) for line in open(src, encoding="utf-8") if line.strip()]
key = lambda r: hashlib.sha1((r["sentence1"] + "\t" + r["sentence2"]).encode("utf-8")).hexdigest()
held = set(sorted(range(len(rows)), key=lambda i: key(rows[i]))[:1000])
with open(out + "/train.json", "w", encoding="utf-8") as tr, open(out + "/heldout.json", "w", encoding="utf-8") as ho:
    for i, r in enumerate(rows):
        (ho if i in held else tr).write(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n")
print(len(rows) - len(held), "train,", len(held), "held out")
