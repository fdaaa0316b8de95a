#!/usr/bin/env bash
# fewshot-quickstart.sh: installs dependencies and builds (if needed), trains PET on the bundled FewCLUE EPRSTMT
# few-shot split (160 reviews as clozes "<review>总之很[MASK]。", label words 差/好), reports test_public accuracy
# beside the majority-class baseline, and predicts labels with per-label probabilities.
# PRETRAINED=<an MLM-pretrained model dir> (e.g. scripts/pretrain-small.sh's) makes it real few-shot learning;
# without it a small BERT starts from scratch, which shows the mechanics only.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x build/bin/ethost ] || { ./scripts/install-deps.sh && ./scripts/build.sh dev; }
start=$(date +%s)
cfg=configs/fewshot/eprstmt.toml
out=runs/fewshot-eprstmt
set_args=()
if [ -n "${PRETRAINED:-}" ]; then
  set_args=(--set "pretrain_model_name_or_path=\"$PRETRAINED\"")
else
  set_args=(--set optimizer.learning_rate=1e-3)
fi
./build/bin/ethost --app fewshot --config $cfg "${set_args[@]}" --log-level warn
# Evaluate and predict with the model just trained (not the starting one).
./build/bin/ethost --app fewshot --mode evaluate --config $cfg --set 'pretrain_model_name_or_path=""' \
  --tables data/fewclue/eprstmt/test_public.json
./build/bin/ethost --app fewshot --mode predict --config $cfg --set 'pretrain_model_name_or_path=""' \
  --tables data/fewclue/eprstmt/test_public.json --outputs $out/predictions.tsv --append_cols label,sentence \
  --log-level warn
echo "--- first predictions ($out/predictions.tsv: prediction, probabilities, gold label, review) ---"
head -n 5 $out/predictions.tsv
echo "fewshot-quickstart: trained, evaluated and predicted in $(( $(date +%s) - start ))s"
