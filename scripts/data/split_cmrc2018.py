#!/usr/bin/env python3
# split_cmrc2018.py: cuts the CMRC2018 trial file (256 articles, 1,002 questions) by article into 80% to
# train on and 20% held out: the 20% of articles (rounded) whose SHA-1 of the article id sorts first are held
# out, so no paragraph is in both. Deterministic, independent of article order. Writes SQuAD-style JSON.
# Usage: scripts/data/split_cmrc2018.py ../shared/data/mrc/cmrc2018/cmrc2018_trial.json data/mrc/cmrc2018
import hashlib
import json
import sys

src, out = sys.argv[1], sys.argv[2]
d = json.load(open(src, encoding="utf-8"))
arts = d["data"]
key = lambda a: hashlib.sha1(a["id"].encode("utf-8")).hexdigest()
n_held = round(len(arts) * 0.2)
held = set(a["id"] for a in sorted(arts, key=key)[:n_held])
for name, part in (("train", [a for a in arts if a["id"] not in held]), ("heldout", [a for a in arts if a["id"] in held])):
    with open(out + "/" + name + ".json", "w", encoding="utf-8") as f:
        json.dump({"version": d.get("version", ""), "data": part}, f, ensure_ascii=False, separators=(",", ":"))
        f.write("\n")
    q = sum(len(p["qas"]) for a in part for p in a["paragraphs"])
    print(name, len(part), "articles,", q, "questions")
