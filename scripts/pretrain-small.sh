#!/usr/bin/env bash
# pretrain-small.sh: the small Chinese BERT recipe (configs/pretrain/small.toml) on the general text of
# ../shared/data/text — prunes the vocabulary to the characters of every file the downstream apps use, links the
# corpus and the held-out file, pretrains, reports held-out MLM accuracy next to the unigram baseline, and
# caches the model in ~/.cache/ethost/models/pretrain-small (later runs reuse it; --force retrains).
#   scripts/pretrain-small.sh [--force]      -> runs/pretrain-small/model (HF BertForMaskedLM layout)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
shared=${ETHOST_SHARED:-$root/../shared}
ethost=${ETHOST:-$root/build/bin/ethost}
run=runs/pretrain-small
cache=${ETHOST_MODEL_CACHE:-$HOME/.cache/ethost/models}/pretrain-small
key=$(cat configs/pretrain/small.toml scripts/pretrain-small.sh | sha256sum | cut -c1-16)
[ -x "$ethost" ] || ./scripts/build.sh dev

if [ "${1:-}" != "--force" ] && [ -f "$cache/$key/model/model.safetensors" ]; then
  mkdir -p "$run" && rm -rf "$run/model" && cp -r "$cache/$key/model" "$run/model"
  echo "pretrain-small: reused the cached model $cache/$key (recipe $key) -> $run/model"
  cat "$run/model/eval_results.json" 2>/dev/null || true
  exit 0
fi

text=$shared/data/text
[ -d "$text" ] || { echo "pretrain-small: $text not found (set ETHOST_SHARED)" >&2; exit 2; }
rm -rf "$run" && mkdir -p "$run/corpus" "$run/heldout"
# Training text: CLUECorpusSmall sentences, the training splits of the review corpora; held out: the other
# CLUECorpusSmall sample. (The dev/test splits of the review corpora are left out: other tasks evaluate on them.)
ln -s "$text/uer_cluecorpussmall/CLUECorpusSmall_bert_sampled.txt" "$run/corpus/cluecorpussmall.txt"
ln -s "$text/kbert_reviews/book_review/train.tsv" "$run/corpus/book_review_train.tsv"
ln -s "$text/kbert_reviews/shopping/train.tsv" "$run/corpus/shopping_train.tsv"
ln -s "$text/sophonplus_reviews/waimai_10k.csv" "$run/corpus/waimai_10k.csv"
ln -s "$text/sophonplus_reviews/ChnSentiCorp_htl_all.csv" "$run/corpus/chnsenticorp_htl.csv"
ln -s "$text/uer_cluecorpussmall/CLUECorpusSmall_5000_lines_bert.txt" "$run/heldout/cluecorpussmall_5000.txt"

ETHOST=$ethost scripts/prune-vocab.sh data/vocab/bert-base-chinese-vocab.txt "$run/vocab.txt" \
  "$shared"/data/{fewclue,kg,ner,mrc,text,matching,generation}

precision=fp32
if "$ethost" doctor 2>/dev/null | grep -q 'native AVX512-BF16'; then precision=bf16; fi
start=$(date +%s)
"$ethost" --app pretrain --config configs/pretrain/small.toml --set train.precision=$precision \
  --set train.progress_bar=never
"$ethost" --app pretrain --mode evaluate --config configs/pretrain/small.toml --tables "$run/heldout" \
  --set eval.max_sequences=0 --set eval.results_file="$run/model/eval_results.json" --log-level warn
secs=$(( $(date +%s) - start ))
ETHOST=$ethost scripts/fill-mask-eval.sh "$run/model" "$run/heldout/cluecorpussmall_5000.txt" 1000 11
"$ethost" --app pretrain --mode predict --config configs/pretrain/small.toml --log-level warn \
  --set pretrain_model_name_or_path=\"$run/model\" --tables data/pretrain/fill_mask.tsv \
  --input_schema text:str:1,answer:str:1 --append_cols text,answer --set predict.outputs=\"$run/model/fill_mask_20.tsv\"
echo "pretrain-small: trained and evaluated in ${secs}s on $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs))"
mkdir -p "$cache/$key" && rm -rf "$cache/$key/model" && cp -r "$run/model" "$cache/$key/model"
find "$cache/$key/model" -maxdepth 1 -name 'checkpoint-*' -exec rm -rf {} +
echo "pretrain-small: cached in $cache/$key"
