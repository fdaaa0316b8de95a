#!/usr/bin/env bash
# fill-mask-eval.sh: top-1 accuracy of a model's fill-mask predictions on N held-out sentences with one Chinese
# character masked (bench/make_fill_mask.py, seeded), next to the unigram baseline (always the most frequent
# character of the held-out text).
#   scripts/fill-mask-eval.sh MODEL_DIR HELDOUT.txt [N] [SEED]     -> MODEL_DIR/fill_mask.json
set -euo pipefail
cd "$(dirname "$0")/.."
ethost=${ETHOST:-build/bin/ethost}
model=$1 heldout=$2 n=${3:-1000} seed=${4:-11}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 bench/make_fill_mask.py "$heldout" "$n" "$seed" --skip 262 > "$tmp/probes.tsv"
"$ethost" --app pretrain --mode predict --config configs/pretrain/quickstart.toml --log-level warn \
  --set pretrain_model_name_or_path=\"$model\" --tables "$tmp/probes.tsv" --input_schema text:str:1,answer:str:1 \
  --append_cols answer --set predict.outputs=\"$tmp/pred.tsv\" --set predict.top_k=5
python3 - "$tmp/pred.tsv" "$heldout" "$model/fill_mask.json" <<'PY'
import collections, json, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1], encoding="utf-8")]
top1 = sum(r[0] == r[2] for r in rows) / len(rows)
top5 = sum(r[2] in [p[0] for p in json.loads(r[1])[0]] for r in rows) / len(rows)
chars = collections.Counter(c for l in open(sys.argv[2], encoding="utf-8") for c in l if "\u4e00" <= c <= "\u9fff")
common = chars.most_common(1)[0][0]
uni = sum(r[2] == common for r in rows) / len(rows)
res = {"probes": len(rows), "top1_accuracy": top1, "top5_accuracy": top5, "unigram_top1_accuracy": uni,
       "unigram_char": common}
json.dump(res, open(sys.argv[3], "w"), ensure_ascii=False, indent=2)
print(f"fill-mask on {len(rows)} held-out characters: top-1 {top1:.4f}, top-5 {top5:.4f} "
      f"(unigram baseline, always '{common}': {uni:.4f})")
PY
