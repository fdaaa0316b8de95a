#!/usr/bin/env bash
# prune-vocab.sh: an HF-compatible vocab.txt holding only the tokens that occur in the given files (plus the
# special and [unused] tokens), in the original order — a smaller embedding and MLM decoder for a model
# pretrained from scratch. Every line of every file is tokenized with the full vocabulary by `ethost tokenize`
# (JSON files whole, keys included: a superset of their texts).
#   scripts/prune-vocab.sh FULL_VOCAB OUT_VOCAB FILE_OR_DIR...
set -euo pipefail
full=$1 out=$2
shift 2
here=$(cd "$(dirname "$0")/.." && pwd)
ethost=${ETHOST:-$here/build/bin/ethost}
find "$@" -type f \( -name '*.txt' -o -name '*.json' -o -name '*.jsonl' -o -name '*.tsv' -o -name '*.csv' \
  -o -name '*.spo' -o -name '*.dat' -o -name '*.char' -o -name '*.bio' \) -print0 | sort -z |
  xargs -0 cat | tr -d '\r' | "$ethost" tokenize --vocab "$full" |
  python3 -c '
import json, sys
full = open(sys.argv[1], encoding="utf-8").read().split("\n")
if full and full[-1] == "": full.pop()
seen = set()
for line in sys.stdin:
    seen.update(json.loads(line)["input_ids"])
keep = [t for i, t in enumerate(full) if i in seen or (t.startswith("[") and t.endswith("]"))]
open(sys.argv[2], "w", encoding="utf-8").write("\n".join(keep) + "\n")
print(f"{len(keep)} of {len(full)} tokens kept ({len(seen)} seen) -> {sys.argv[2]}", file=sys.stderr)
' "$full" "$out"
