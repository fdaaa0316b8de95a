#!/usr/bin/env bash
# bench-int8.sh: predict.quantize = "int8" against fp32 in the same run — speed on a BERT-base-size classifier
# (768 x 12, 3072; weights from one training step: speed does not depend on them) over EPRSTMT dev rows at
# batch 1 and 16, sequence 128; and the accuracy change on a fine-tuned model (held-out EPRSTMT dev, 160 rows).
#   scripts/bench-int8.sh [ACCURACY_MODEL_DIR]   (default runs/quickstart, trained here when missing)
set -euo pipefail
cd "$(dirname "$0")/.."
ethost=${ETHOST:-build/bin/ethost}
acc_model=${1:-runs/quickstart}
work=${WORK:-$(mktemp -d)}
base="$work/base"
if [ ! -f "$base/model.safetensors" ]; then
  echo "bench-int8: one training step of a base-size model into $base"
  "$ethost" --app text_classify --config configs/text_classify/quickstart.toml --log-level warn \
    --set model.hidden_size=768 --set model.num_hidden_layers=12 --set model.num_attention_heads=12 \
    --set model.intermediate_size=3072 --set model.max_position_embeddings=512 --set train.max_steps=1 \
    --set train.micro_batch_size=4 --set train.checkpoint_dir=\""$base"\" --set train.progress_bar=\"never\" \
    --set train.tensorboard=false >/dev/null
fi
if [ ! -f "$acc_model/model.safetensors" ]; then
  "$ethost" --app text_classify --config configs/text_classify/quickstart.toml --log-level warn \
    --set train.progress_bar=\"never\" --set train.checkpoint_dir=\""$acc_model"\" >/dev/null
fi
cat data/eprstmt/dev.tsv data/eprstmt/dev.tsv >"$work/dev320.tsv"  # 320 rows: warm caches count little

predict() {  # model table quantize batch_size outputs -> rows/s
  "$ethost" --app text_classify --mode predict --checkpoint_dir "$1" --tables "$2" --log-level info \
    --input_schema text:str:1,label:str:1 --first_sequence text --append_cols label --outputs "$5" \
    --set predict.quantize=\""$3"\" --set predict.batch_size="$4" 2>&1 |
    sed -n 's/.*rows in [0-9.]* s (\([0-9.]*\) rows\/s.*/\1/p'
}
echo "| model | batch | fp32 rows/s | int8 rows/s | int8 / fp32 |"
echo "|---|---|---|---|---|"
for bs in 1 16; do
  f=$(predict "$base" "$work/dev320.tsv" none "$bs" "$work/f.tsv")
  q=$(predict "$base" "$work/dev320.tsv" int8 "$bs" "$work/q.tsv")
  awk -v b="$bs" -v f="$f" -v q="$q" 'BEGIN {printf "| base 768x12 | %s | %.1f | %.1f | %.2fx |\n", b, f, q, q / f}'
done
predict "$acc_model" data/eprstmt/dev.tsv none 64 "$work/af.tsv" >/dev/null
predict "$acc_model" data/eprstmt/dev.tsv int8 64 "$work/aq.tsv" >/dev/null
paste "$work/af.tsv" "$work/aq.tsv" | awk -F'\t' -v m="$acc_model" '{n++; a += ($1 == $4); f += ($1 == $3);
  q += ($4 == $6)} END {printf "accuracy on EPRSTMT dev (%d rows), %s: fp32 %.4f, int8 %.4f (%+.2f points), " \
  "labels agree on %d rows\n", n, m, f / n, q / n, 100 * (q - f) / n, a}'
