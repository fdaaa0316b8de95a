#!/usr/bin/env bash
# Data-parallel benchmark: the same BERT classifier (global batch fixed) trained with 1, 2 and 4 processes,
# threads per process = cores / N (total = the machine's cores). Prints step time, speed-up vs 1 process and the
# fraction of all-reduce time hidden behind backward. Usage: scripts/bench-dist.sh [build dir] [steps]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
STEPS=${2:-30}
EXE=$BUILD/bin/ethost
[ -x "$EXE" ] || { echo "no $EXE: build first (scripts/build.sh)" >&2; exit 2; }
CORES=$(nproc)
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
cat > "$OUT/bench.toml" <<TOML
[data]
tables = ["$PWD/data/eprstmt/train.tsv", "$PWD/data/eprstmt/dev.tsv"]
input_schema = "text:str:1,label:str:1"
label_enumerate_values = ["Negative", "Positive"]
sequence_length = 64
vocab_file = "$PWD/data/vocab/bert-base-chinese-vocab.txt"
[model]
hidden_size = 256
num_hidden_layers = 4
num_attention_heads = 4
intermediate_size = 1024
max_position_embeddings = 128
[train]
max_steps = $STEPS
logging_steps = 5
eval_steps = 1000000
save_checkpoint_steps = 1000000
progress_bar = "never"
tensorboard = false
TOML
GLOBAL_BATCH=32
printf "%-6s %-8s %-12s %-10s %-10s %-14s\n" procs threads "step (ms)" speedup samples/s "allreduce hidden"
base=""
for N in 1 2 4; do
  T=$(( CORES / N )); [ "$T" -ge 1 ] || T=1
  launch=(); [ "$N" -gt 1 ] && launch=(--nproc_per_node "$N")
  "$EXE" "${launch[@]}" --no-default-plugins --plugin-dir "$BUILD/bin/plugins" --app text_classify --mode train \
    --config "$OUT/bench.toml" --threads "$T" --set "train.micro_batch_size=$(( GLOBAL_BATCH / N ))" \
    --checkpoint_dir "$OUT/run$N" > "$OUT/log$N" 2>&1 || { tail -20 "$OUT/log$N"; exit 1; }
  read -r step sps hidden < <(python3 - "$OUT/run$N/metrics.jsonl" "$GLOBAL_BATCH" <<'PY'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
tr = [e for e in ev if e.get("event") == "train"][1:]  # drop the first interval (warm-up)
sps = sum(e["samples_per_sec"] for e in tr) / len(tr)
launched = sum(e.get("allreduce_seconds", 0) for e in tr)
exposed = sum(e.get("allreduce_exposed_seconds", 0) for e in tr)
hidden = "-" if launched == 0 else "%.1f%%" % (100 * (1 - exposed / launched))
print("%.1f %.1f %s" % (1000 * int(sys.argv[2]) / sps, sps, hidden))
PY
)
  [ -n "$base" ] || base=$step
  printf "%-6s %-8s %-12s %-10s %-10s %-14s\n" "$N" "$T" "$step" "$(python3 -c "print('%.2fx' % ($base/$step))")" "$sps" "$hidden"
done
