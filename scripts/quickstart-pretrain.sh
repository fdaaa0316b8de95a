#!/usr/bin/env bash
# quickstart-pretrain.sh: installs dependencies and builds (if needed), pretrains a tiny BERT on the bundled
# EPRSTMT unlabeled reviews (dev/test repeats dropped) for 60 steps, evaluates MLM accuracy and perplexity on
# held-out text against a unigram baseline, and fills the masks of data/pretrain/fill_mask.tsv.
# The real recipe (4 x 256, >= 15M tokens, < 60 min on 2 cores) is scripts/pretrain-small.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x build/bin/ethost ] || { ./scripts/install-deps.sh && ./scripts/build.sh dev; }
start=$(date +%s)
cfg=configs/pretrain/quickstart.toml
./build/bin/ethost --app pretrain --config $cfg
./build/bin/ethost --app pretrain --mode evaluate --config $cfg --tables data/pretrain/heldout.txt --log-level warn
./build/bin/ethost --app pretrain --mode predict --config $cfg --tables data/pretrain/fill_mask.tsv \
  --input_schema text:str:1,answer:str:1 --append_cols text,answer --log-level warn
echo "--- fill-mask (runs/pretrain-quickstart/predictions.tsv: top-1, top-5, text, answer) ---"
head -n 5 runs/pretrain-quickstart/predictions.tsv | cut -f1,3,4
echo "quickstart-pretrain: trained, evaluated and filled masks in $(( $(date +%s) - start ))s"
