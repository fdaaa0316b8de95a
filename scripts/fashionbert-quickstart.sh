#!/usr/bin/env bash
# fashionbert-quickstart.sh: installs dependencies and builds (if needed), then pretrains a small FashionBERT
# from scratch on the train split of the fashion product photos (patch features extracted once and cached),
# writes it to runs/fashionbert/, evaluates text->image and image->text retrieval on dev (1 positive + 100
# negatives from the same category) next to random, and runs the two one-modality ablations.
# FASHION_TABLE: another pairs.tsv of the same layout (default: the shared data's).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x build/bin/ethost ] || { ./scripts/install-deps.sh && ./scripts/build.sh dev; }
table=${FASHION_TABLE:-../shared/data/multimodal/fashion_product_images/pairs.tsv}
[ -f "$table" ] || { echo "fashionbert-quickstart: $table not found (set FASHION_TABLE)" >&2; exit 4; }
cfg=configs/fashionbert/quickstart.toml
start=$(date +%s)
./build/bin/ethost --app fashionbert --config $cfg --tables "$table" --log-level warn
echo "--- retrieval on dev ---"
./build/bin/ethost --app fashionbert --mode evaluate --config $cfg --tables "$table" --log-level warn
if [ "${ABLATIONS:-1}" = 1 ]; then
  for a in text_only image_only; do
    echo "--- ablation: $a ---"
    ./build/bin/ethost --app fashionbert --mode evaluate --config $cfg --tables "$table" --log-level warn \
      --set eval.ablation=\"$a\" --set eval.results_file=\"runs/fashionbert/eval_$a.json\"
  done
fi
echo "fashionbert-quickstart: features, pretraining and retrieval in $(( $(date +%s) - start ))s (model in runs/fashionbert)"
