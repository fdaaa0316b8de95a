#!/usr/bin/env bash
# bench-distill.sh: vanilla-KD training speed of ethost (teacher in-process through the forward hook) against
# the same in plain PyTorch eager on the same torch (bench/baseline/bert_distill_eager.py): teacher 4 x 256,
# student 1 x 256, vocabulary 11,583 (the pretrain-small model's), batch 32, AdamW with clipping, the bundled
# EPRSTMT reviews' lengths, 2 threads, measured one after the other in this run. ethost's figure is the
# trainer's logged samples/s after the first window (tokenization, collation and the teacher included).
#   scripts/bench-distill.sh [STEPS]        env: TEACHER (a 4 x 256 text_classify model dir; default: trains one)
set -euo pipefail
cd "$(dirname "$0")/.."
ethost=${ETHOST:-build/bin/ethost}
steps=${1:-60}
threads=${THREADS:-2}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
teacher=${TEACHER:-}
if [ -z "$teacher" ]; then  # an untrained 4 x 256 teacher is as fast as a trained one
  teacher=$out/teacher
  "$ethost" --app text_classify --config configs/text_classify/quickstart.toml --log-level warn \
    --set model.hidden_size=256 --set model.num_hidden_layers=4 --set model.intermediate_size=512 \
    --set train.max_steps=1 --set train.checkpoint_dir=\"$teacher\" --set train.progress_bar=\"never\" >/dev/null
fi
"$ethost" --app text_classify --config configs/text_classify/distill.toml --log-level warn \
  --set distill.teacher=\"$teacher\" --set train.max_steps=$steps --set train.logging_steps=10 \
  --set train.eval_steps=0 --set train.eval_each_epoch=false --set train.save_checkpoint_steps=100000 \
  --set train.progress_bar=\"never\" --set train.tensorboard=false --set runtime.threads=$threads \
  --set train.checkpoint_dir=\"$out/student\" >/dev/null
ours=$(python3 -c '
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if "\"train\"" in l]
ev = [e for e in ev if e["step"] > 10]
print(sum(e["samples_per_sec"] for e in ev) / len(ev))' "$out/student/metrics.jsonl")
vocab=$(wc -l < "$teacher/vocab.txt")
layers=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["num_hidden_layers"])' "$teacher/config.json")
theirs=$(/usr/bin/python3 bench/baseline/bert_distill_eager.py --texts data/eprstmt/train.tsv --steps $((steps - 10)) \
  --warmup 10 --vocab "$vocab" --teacher_layers "$layers" --threads "$threads" |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["samples_per_sec"])')
python3 -c '
import sys
ours, theirs = float(sys.argv[1]), float(sys.argv[2])
print(f"vanilla KD training, teacher {sys.argv[3]} x 256 in-process, student 1 x 256, batch 32: "
      f"ethost {ours:.0f} samples/s, PyTorch eager {theirs:.0f} samples/s: {ours / theirs:.2f}x")' "$ours" "$theirs" "$layers"
