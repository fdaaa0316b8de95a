#!/usr/bin/env bash
# rss-pretrain.sh: the corpus is streamed, never loaded whole — peak RSS of 300 pretraining steps on a 2 GB
# generated corpus against 300 steps on a 10 MB one (same model and batch; /usr/bin/time -v). Not in CI.
#   scripts/rss-pretrain.sh [BIG_MB]        (default 2048)
set -euo pipefail
cd "$(dirname "$0")/.."
ethost=${ETHOST:-build/bin/ethost}
big_mb=${1:-2048}
tmp=${TMPDIR:-/tmp}/ethost-rss.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
# Documents of 1-8 lines cut from the bundled EPRSTMT reviews, repeated until the size is reached.
python3 - "$tmp" "$big_mb" <<'PY'
import json, os, random, sys
tmp, big_mb = sys.argv[1], int(sys.argv[2])
texts = [json.loads(l)["sentence"].strip() for l in open("data/fewclue/eprstmt/unlabeled.json", encoding="utf-8")]
rng = random.Random(1)
def make(path, mb):
    target = mb * 1024 * 1024
    with open(path, "w", encoding="utf-8") as f:
        block = []
        for _ in range(20000):
            block.append("\n".join(rng.choice(texts) for _ in range(rng.randint(1, 8))) + "\n\n")
        block = "".join(block)
        written = 0
        while written < target:
            f.write(block)
            written += len(block.encode("utf-8"))
    print(f"{path}: {os.path.getsize(path) / 2**20:.0f} MB")
make(tmp + "/small.txt", 10)
make(tmp + "/big.txt", big_mb)
PY
run() {
  /usr/bin/time -v "$ethost" --app pretrain --config configs/pretrain/quickstart.toml --tables "$1" --log-level warn \
    --set data.exclude_tables=[] --set train.max_steps=300 --set train.eval_steps=0 --set train.save_checkpoint_steps=1000 \
    --set train.progress_bar=\"never\" --set train.checkpoint_dir=\"$tmp/run-$2\" 2>&1 >/dev/null |
    awk '/Maximum resident set size/ {print $6}'
}
small=$(run "$tmp/small.txt" small)
big=$(run "$tmp/big.txt" big)
python3 -c '
import sys
s, b, mb = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
print(f"peak RSS, 300 steps: 10 MB corpus {s/1024:.0f} MB, {mb} MB corpus {b/1024:.0f} MB: ratio {b/s:.3f} (limit 1.5)")
sys.exit(0 if b <= 1.5 * s else 1)' "$small" "$big" "$big_mb"
