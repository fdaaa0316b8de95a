#!/usr/bin/env bash
# bench-pretrain.sh: pretraining tokens/s of `ethost --app pretrain` against an HF-style BertForMaskedLM in
# Python on the same torch (bench/baseline/bert_pretrain_eager.py), same model (the recipe's 4 x 256,
# intermediate 512), batch (64 x 128), vocabulary (bert-base-chinese, 21128), optimizer (AdamW) and threads,
# measured one after the other in this run. ethost's figure is the trainer's logged tokens/s (real tokens)
# over the steps after the first window, with its tokenization, packing and masking included; the baseline's
# excludes data preparation.
#   scripts/bench-pretrain.sh [STEPS]
set -euo pipefail
cd "$(dirname "$0")/.."
ethost=${ETHOST:-build/bin/ethost}
steps=${1:-40}
threads=${THREADS:-$(nproc)}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$ethost" --app pretrain --config configs/pretrain/small.toml --log-level warn \
  --tables data/fewclue/eprstmt/unlabeled.json --set data.vocab_file=\"data/vocab/bert-base-chinese-vocab.txt\" \
  --set optimizer.name=\"adamw\" --set optimizer.learning_rate=1e-3 --set train.gradient_accumulation_steps=1 \
  --set train.max_steps=$steps --set train.logging_steps=10 --set train.eval_steps=0 \
  --set train.save_checkpoint_steps=100000 --set train.progress_bar=\"never\" --set train.tensorboard=false \
  --set train.checkpoint_dir=\"$out/ethost\" --set runtime.threads=$threads >/dev/null
ours=$(python3 -c '
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if "\"train\"" in l]
ev = [e for e in ev if e["step"] > 10]
print(sum(e["tokens_per_sec"] for e in ev) / len(ev))' "$out/ethost/metrics.jsonl")
theirs=$(/usr/bin/python3 bench/baseline/bert_pretrain_eager.py --steps $((steps - 10)) --warmup 10 \
  --vocab 21128 --threads "$threads" | python3 -c 'import json,sys; print(json.load(sys.stdin)["tokens_per_sec"])')
python3 -c '
import sys
ours, theirs = float(sys.argv[1]), float(sys.argv[2])
print(f"pretraining 4x256 (intermediate 512), batch 64 x 128, vocab 21128, AdamW, {sys.argv[3]} threads")
print(f"  ethost --app pretrain         {ours:8.0f} tokens/s (decoder on the targets only, fused kernels)")
print(f"  HF-style BertForMaskedLM (py) {theirs:8.0f} tokens/s (decoder on every position)")
print(f"  ratio {ours / theirs:.2f}x")' "$ours" "$theirs" "$threads"
