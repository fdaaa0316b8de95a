#!/usr/bin/env bash
# distill-quickstart.sh: installs dependencies and builds (if needed), trains the quickstart teacher (2 x 128) if
# runs/quickstart has none, distills a 1-layer student from it on the bundled EPRSTMT TSV (vanilla KD, teacher
# in-process), evaluates teacher and student on the dev set, and times both in predict mode on the same rows.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x build/bin/ethost ] || { ./scripts/install-deps.sh && ./scripts/build.sh dev; }
start=$(date +%s)
e=./build/bin/ethost
[ -f runs/quickstart/model.safetensors ] ||
  $e --app text_classify --config configs/text_classify/quickstart.toml --log-level warn --set train.progress_bar=\"never\"
$e --app text_classify --config configs/text_classify/distill.toml --log-level warn
for m in runs/quickstart runs/distill-quickstart; do
  $e --app text_classify --mode evaluate --config configs/text_classify/distill.toml --log-level warn \
    --set pretrain_model_name_or_path=\"\" --set train.checkpoint_dir=\"$m\" \
    --tables data/eprstmt/dev.tsv >/dev/null
  rate=$($e --app text_classify --mode predict --config configs/text_classify/distill.toml \
    --set pretrain_model_name_or_path=\"$m\" --tables data/eprstmt/train.tsv --outputs $m/speed.tsv 2>&1 |
    sed -n 's/.*predict: [0-9]* rows in [0-9.e-]* s (\([0-9.]*\) rows\/s.*/\1/p')
  acc=$(grep -o '"accuracy": [0-9.]*' $m/eval_results.json | cut -d' ' -f2)
  printf '%-24s dev accuracy %s   predict %s rows/s\n' "$m" "$acc" "$rate"
done
echo "distill-quickstart: teacher and student trained, evaluated and timed in $(( $(date +%s) - start ))s"
