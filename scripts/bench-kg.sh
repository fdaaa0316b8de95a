#!/usr/bin/env bash
# Knowledge-graph mention detection: `ethost kg` against forward maximum matching in Python (a set of names,
# longest window first), the HowNet graph (52k triples) loaded, same corpus, same run, one thread each; graph
# loading excluded from both. Checks that both find the same mentions. Then loads a generated 1M-triple graph
# and reports its load time and peak RSS (the issue asks <= 15 s and <= 1.5 GB).
# Usage: scripts/bench-kg.sh [corpus.txt] [graph.spo]
set -euo pipefail
cd "$(dirname "$0")/.."
ETHOST=${ETHOST:-build/bin/ethost}
corpus=${1:-}
graph=${2:-data/kg/kbert/HowNet.spo}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -z "$corpus" ]; then
  corpus=$tmp/corpus.txt
  if ls ../shared/data/text/uer_cluecorpussmall/*.txt >/dev/null 2>&1; then
    cat ../shared/data/text/uer_cluecorpussmall/*.txt | grep -v '^$' > "$corpus"
  else
    cut -f1 data/kg/kbert/medical_ner/train.tsv | tail -n +2 | tr -d ' ' > "$corpus"
  fi
fi
echo "corpus: $corpus ($(wc -l < "$corpus") lines, $(du -h "$corpus" | cut -f1)); graph: $graph"
grep -m1 'model name' /proc/cpuinfo || true
OMP_NUM_THREADS=1 "$ETHOST" kg --kg "$graph" --stats < "$corpus" > "$tmp/ethost.txt" 2> "$tmp/ethost.err"
/usr/bin/python3 bench/kg_match_baseline.py "$graph" < "$corpus" > "$tmp/python.txt" 2> "$tmp/python.err"
cat "$tmp/ethost.err" "$tmp/python.err"
a=$(sed -n 's/.*(\([0-9.]*\) MB\/s).*/\1/p' "$tmp/ethost.err")
b=$(sed -n 's/.*(\([0-9.]*\) MB\/s).*/\1/p' "$tmp/python.err")
echo "ratio: ethost kg is $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.1f", a / b }')x Python's throughput"
if cmp -s "$tmp/ethost.txt" "$tmp/python.txt"; then
  echo "outputs: identical ($(wc -l < "$tmp/ethost.txt") lines, $(wc -w < "$tmp/ethost.txt") mentions)"
else
  echo "outputs: DIFFER on $(diff "$tmp/ethost.txt" "$tmp/python.txt" | grep -c '^<') lines"; exit 1
fi
# A generated graph of 1M triples: 300k subjects of 2-6 characters, 50 relations, objects from a 200k pool.
/usr/bin/python3 - "$tmp/big.spo" <<'PY'
import random, sys
random.seed(1)
chars = [chr(c) for c in range(0x4E00, 0x4E00 + 3000)]
def name(): return "".join(random.choice(chars) for _ in range(random.randint(2, 6)))
subs = [name() for _ in range(300000)]
objs = [name() for _ in range(200000)]
with open(sys.argv[1], "w", encoding="utf-8") as f:
    for i in range(1000000):
        f.write("%s\t关系%d\t%s\n" % (random.choice(subs), random.randrange(50), random.choice(objs)))
PY
echo "big graph: $(du -h "$tmp/big.spo" | cut -f1)"
/usr/bin/time -f "1M-triple graph: %e s wall, peak RSS %M KB" "$ETHOST" kg --kg "$tmp/big.spo" --stats \
  < /dev/null 2>&1 | grep -E "graph|line\(s\)"
