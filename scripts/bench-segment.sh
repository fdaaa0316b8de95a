#!/usr/bin/env bash
# Segmenter throughput: `ethost segment` against jieba 0.42.1 in Python (HMM off), same corpus, same run, one
# thread each; dictionary loading excluded from both. Also checks that both cut the corpus identically.
# Usage: scripts/bench-segment.sh [corpus.txt]   (default: CLUECorpusSmall samples from ../shared, else FewCLUE)
set -euo pipefail
cd "$(dirname "$0")/.."
ETHOST=${ETHOST:-build/bin/ethost}
corpus=${1:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -z "$corpus" ]; then
  corpus=$tmp/corpus.txt
  if ls ../shared/data/text/uer_cluecorpussmall/*.txt >/dev/null 2>&1; then
    cat ../shared/data/text/uer_cluecorpussmall/*.txt | grep -v '^$' > "$corpus"
  else
    /usr/bin/python3 -c "import json,glob,sys
for f in sorted(glob.glob('data/fewclue/*/*.json')):
    for l in open(f, encoding='utf-8'):
        d = json.loads(l); t = d.get('sentence') or d.get('content') or ''
        if t: print(t.replace('\n', ' '))" > "$corpus"
  fi
fi
echo "corpus: $corpus ($(wc -l < "$corpus") lines, $(du -h "$corpus" | cut -f1))"
grep -m1 'model name' /proc/cpuinfo || true
OMP_NUM_THREADS=1 "$ETHOST" segment --stats < "$corpus" > "$tmp/ethost.txt" 2> "$tmp/ethost.err"
/usr/bin/python3 bench/segment_jieba.py < "$corpus" > "$tmp/jieba.txt" 2> "$tmp/jieba.err"
cat "$tmp/ethost.err" "$tmp/jieba.err"
a=$(sed -n 's/.*(\([0-9.]*\) MB\/s).*/\1/p' "$tmp/ethost.err")
b=$(sed -n 's/.*(\([0-9.]*\) MB\/s).*/\1/p' "$tmp/jieba.err")
echo "ratio: ethost segment is $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.1f", a / b }')x jieba's throughput"
if cmp -s "$tmp/ethost.txt" "$tmp/jieba.txt"; then
  echo "outputs: identical ($(wc -l < "$tmp/ethost.txt") lines)"
else
  echo "outputs: DIFFER on $(diff "$tmp/ethost.txt" "$tmp/jieba.txt" | grep -c '^<') lines"; exit 1
fi
