#!/usr/bin/env bash
# FashionBERT speed: patch-feature extraction (images/s) and ITM retrieval scoring (pairs/s), ethost against
# PIL + eager PyTorch in Python (bench/fashionbert_torch.py), same images, same model, same run, 2 threads each.
# Usage: scripts/bench-fashionbert.sh [model_dir]   (default runs/fashionbert, from the quickstart)
set -euo pipefail
cd "$(dirname "$0")/.."
ETHOST=${ETHOST:-build/bin/ethost}
model=${1:-runs/fashionbert}
table=${FASHION_TABLE:-../shared/data/multimodal/fashion_product_images/pairs.tsv}
[ -f "$model/config.json" ] || { echo "bench-fashionbert: no model in $model (run scripts/fashionbert-quickstart.sh)" >&2; exit 4; }
size=$(/usr/bin/python3 -c "import json; print(json.load(open('$model/fashionbert.json'))['image_size'])")
grid=$(/usr/bin/python3 -c "import json; print(json.load(open('$model/fashionbert.json'))['grid'])")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
grep -m1 'model name' /proc/cpuinfo || true
# ethost: a fresh feature cache (so the features are extracted), then retrieval over 300 dev queries.
"$ETHOST" --app fashionbert --mode evaluate --config configs/fashionbert/quickstart.toml --tables "$table" \
  --set pretrain_model_name_or_path="\"$model\"" --set data.feature_cache="\"$tmp/cache\"" \
  --set eval.max_queries=300 --set eval.results_file="\"$tmp/eval.json\"" --set runtime.threads=2 \
  > /dev/null 2> "$tmp/ethost.err"
n=$(sed -n 's/.*features: extracted \([0-9]*\) images.*/\1/p' "$tmp/ethost.err")
a_img=$(sed -n 's/.*s (\([0-9.]*\) images\/s).*/\1/p' "$tmp/ethost.err")
a_pairs=$(/usr/bin/python3 -c "import json; print(round(json.load(open('$tmp/eval.json'))['pairs_per_second'], 1))")
echo "ethost: features $a_img images/s ($n images, stb + TBB, 2 threads)"
echo "ethost: scoring $a_pairs pairs/s (batches of 202)"
/usr/bin/python3 bench/fashionbert_torch.py "$table" "$model" "$size" "$grid" 1500 2 | tee "$tmp/py.txt"
b_img=$(sed -n 's/.*features \([0-9.]*\) images\/s.*/\1/p' "$tmp/py.txt")
b_pairs=$(sed -n 's/.*scoring \([0-9.]*\) pairs\/s.*/\1/p' "$tmp/py.txt")
awk -v a="$a_img" -v b="$b_img" 'BEGIN { printf "ratio: features %.1fx Python'"'"'s images/s\n", a / b }'
awk -v a="$a_pairs" -v b="$b_pairs" 'BEGIN { printf "ratio: scoring %.2fx PyTorch'"'"'s pairs/s\n", a / b }'
