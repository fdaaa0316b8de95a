#!/usr/bin/env bash
# vectorization-quickstart.sh: installs dependencies and builds (if needed), trains the small two-tower AFQMC
# matcher of the text-match quickstart (if it is not there), embeds the second questions of the 1,000 held-out
# AFQMC pairs into a FAISS index, searches it with the first questions, and reports how often a matching pair's
# own second question comes first (recall@1 over the whole corpus, against random retrieval).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x build/bin/ethost ] || { ./scripts/install-deps.sh && ./scripts/build.sh dev; }
start=$(date +%s)
model=runs/text_match/afqmc_two_tower
[ -f $model/text_match.json ] || ./build/bin/ethost --app text_match --config configs/text_match/afqmc_two_tower.toml --log-level warn
cfg=configs/vectorization/afqmc_search.toml
./build/bin/ethost --app vectorization --config $cfg --log-level warn
./build/bin/ethost --app vectorization --mode predict --config $cfg --first_sequence sentence1 \
  --output_schema search_ids,search_scores,search_texts --append_cols idx,label,sentence1 --log-level warn
out=runs/vectorization/afqmc_search.tsv
python3 - "$out" <<'PY'
import json, sys
rows = [line.rstrip("\n").split("\t") for line in open(sys.argv[1], encoding="utf-8")]
print("--- three queries and their top 3 (cosine) ---")
for ids, scores, texts, idx, label, query in rows[:3]:
    top = ", ".join("%s %.2f" % (t, s) for t, s in zip(json.loads(texts)[:3], json.loads(scores)[:3]))
    print(query, "->", top)
pos = [r for r in rows if r[4] == "1"]
hits = sum(json.loads(r[0])[0] == r[3] for r in pos)
print("recall@1 over %d matching pairs: %.3f (random %.4f)" % (len(pos), hits / len(pos), 1 / len(rows)))
PY
echo "vectorization-quickstart: indexed and searched in $(( $(date +%s) - start ))s"
