#!/usr/bin/env bash
# mrc-quickstart.sh: installs dependencies and builds (if needed), trains a small BERT reader from scratch on 80% of
# the bundled CMRC2018 trial articles (805 questions, SQuAD-style JSON, doc_stride windows), reports the official
# CMRC2018 EM/F1 on the other 20% (197 questions) next to the sentence-overlap baseline, and writes the answers as
# SQuAD's {id: answer} JSON (the input of cmrc2018_evaluate.py) and an n-best TSV.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x build/bin/ethost ] || { ./scripts/install-deps.sh && ./scripts/build.sh dev; }
start=$(date +%s)
cfg=configs/machine_reading_comprehension/cmrc2018.toml
out=runs/mrc/cmrc2018
heldout=data/mrc/cmrc2018/heldout.json
./build/bin/ethost --app machine_reading_comprehension --config $cfg --log-level warn
./build/bin/ethost --app machine_reading_comprehension --mode evaluate --config $cfg --tables $heldout
./build/bin/ethost --app machine_reading_comprehension --mode predict --config $cfg --tables $heldout \
  --outputs $out/predictions.json --log-level warn
./build/bin/ethost --app machine_reading_comprehension --mode predict --config $cfg --tables $heldout \
  --output_schema id,predictions,nbest --append_cols question_text,answer_text --outputs $out/nbest.tsv \
  --log-level warn
echo "--- answers to 5 held-out questions ($out/nbest.tsv: id, answer, question, gold answer) ---"
cut -f1,2,4,5 $out/nbest.tsv | head -n 5
echo "mrc-quickstart: trained, evaluated and answered in $(( $(date +%s) - start ))s"
