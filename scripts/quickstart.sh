#!/usr/bin/env bash
# The README's quickstart: installs dependencies, builds, trains a text classifier on the bundled Chinese
# sentiment data (EPRSTMT), prints its accuracy and where the model is, then predicts a few new rows.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/build.sh dev
start=$(date +%s)
./build/bin/ethost --app text_classify --config configs/text_classify/quickstart.toml
./build/bin/ethost --app text_classify --mode predict --config configs/text_classify/quickstart.toml \
  --tables data/eprstmt/predict.tsv --input_schema text:str:1 --append_cols text --log-level warn
echo "--- first predictions (runs/quickstart/predictions.tsv: prediction, probabilities, text) ---"
head -n 5 runs/quickstart/predictions.tsv
echo "quickstart: trained, evaluated and predicted in $(( $(date +%s) - start ))s"
