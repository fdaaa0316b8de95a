#!/usr/bin/env bash
# bench-serve.sh: `ethost --mode serve` under load on loopback — wrk POSTs one EPRSTMT dev row per request to
# the quickstart model, at concurrency 1, 8 and 32, with dynamic batching and with the naive one-request-
# one-forward mode (serve.batching = false), both measured in this run, at all cores and at one intra-op
# thread. Then a soak: >= 10,000 requests at concurrency 32 with the server's RSS read before and after.
#   scripts/bench-serve.sh [SECONDS_PER_POINT]   (env: ETHOST, MODEL, THREADS="2 1", SOAK_THREADS,
#                                                 SETS="predict.quantize=\"int8\"": extra --set for the server)
set -euo pipefail
cd "$(dirname "$0")/.."
ethost=${ETHOST:-build/bin/ethost}
model=${MODEL:-runs/quickstart}
secs=${1:-5}
threads_list=${THREADS:-"$(nproc) 1"}
command -v wrk >/dev/null || ETHOST_WITH_BENCH_DEPS=1 ./scripts/install-deps.sh
if [ ! -f "$model/model.safetensors" ]; then
  echo "bench-serve: training the quickstart model into $model"
  "$ethost" --app text_classify --config configs/text_classify/quickstart.toml --log-level warn \
    --set train.progress_bar=\"never\" --set train.checkpoint_dir=\"$model\" >/dev/null
fi
out=$(mktemp -d)
trap 'kill $(cat "$out"/pid 2>/dev/null) 2>/dev/null || true; rm -rf "$out"' EXIT
# One request body per dev row.
python3 - "$out/bodies.jsonl" <<'PY'
import json, sys
with open("data/eprstmt/dev.tsv", encoding="utf-8") as f, open(sys.argv[1], "w", encoding="utf-8") as o:
    for line in f:
        text = line.rstrip("\n").split("\t")[0]
        o.write(json.dumps({"rows": [{"text": text}]}, ensure_ascii=False) + "\n")
PY

extra=()
for s in ${SETS:-}; do extra+=(--set "$s"); done
start_server() {  # threads batching
  "$ethost" --app text_classify --mode serve --checkpoint_dir "$model" --log-level warn \
    --set runtime.threads="$1" --set serve.batching="$2" --set serve.port=0 "${extra[@]}" >"$out/log" 2>&1 &
  echo $! >"$out/pid"
  for _ in $(seq 600); do grep -q listening "$out/log" && break; sleep 0.1; done
  port=$(grep -o 'listening on http://[0-9.]*:[0-9]*' "$out/log" | sed 's/.*://')
  [ -n "$port" ] || { cat "$out/log"; exit 1; }
}
stop_server() {
  kill -TERM "$(cat "$out/pid")"
  wait "$(cat "$out/pid")" || true
  rm -f "$out/pid"
}
load() {  # concurrency seconds -> one JSON line
  wrk -t1 -c"$1" -d"$2"s --latency -s bench/serve/predict.lua "http://127.0.0.1:$port" -- "$out/bodies.jsonl" |
    grep '^{"requests"'
}
rss_kb() { awk '/VmRSS/ {print $2}' "/proc/$(cat "$out/pid")/status"; }

echo "| threads | mode | concurrency | requests/s | p50 ms | p99 ms | errors |"
echo "|---|---|---|---|---|---|---|"
: >"$out/results.jsonl"
for t in $threads_list; do
  for batching in true false; do
    start_server "$t" "$batching"
    load 8 1 >/dev/null  # warm-up
    for c in 1 8 32; do
      r=$(load "$c" "$secs")
      echo "{\"threads\": $t, \"batching\": $batching, \"concurrency\": $c, \"result\": $r}" >>"$out/results.jsonl"
      python3 -c '
import json, sys
r = json.loads(sys.argv[1]); e = sum(r["errors"].values())
mode = "dynamic batching" if sys.argv[3] == "true" else "one request, one forward"
print("| %s | %s | %s | %.0f | %.2f | %.2f | %d |" % (sys.argv[2], mode, sys.argv[4], r["rps"], r["p50_ms"], r["p99_ms"], e))' \
        "$r" "$t" "$batching" "$c"
    done
    stop_server
  done
done
python3 - "$out/results.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
for t in sorted({r["threads"] for r in rows}, reverse=True):
    for c in (1, 8, 32):
        b = next(r["result"] for r in rows if r["threads"] == t and r["batching"] and r["concurrency"] == c)
        n = next(r["result"] for r in rows if r["threads"] == t and not r["batching"] and r["concurrency"] == c)
        print(f"threads {t}, concurrency {c}: batching / naive throughput {b['rps'] / n['rps']:.2f}x, "
              f"p99 {b['p99_ms']:.2f} vs {n['p99_ms']:.2f} ms")
PY

# Soak: at least 10,000 requests at concurrency 32; RSS after warm-up and at the end.
t_best=${SOAK_THREADS:-$(echo $threads_list | awk '{print $NF}')}
start_server "$t_best" true
load 32 2 >/dev/null
before=$(rss_kb)
total=0
errors=0
rounds=0
while { [ "$total" -lt 10000 ] || [ "$rounds" -lt 3 ]; } && [ "$rounds" -lt 20 ]; do  # 3 to 20 rounds
  r=$(load 32 "$secs")
  total=$((total + $(echo "$r" | python3 -c 'import json,sys; print(json.load(sys.stdin)["requests"])')))
  errors=$((errors + $(echo "$r" | python3 -c 'import json,sys; print(sum(json.load(sys.stdin)["errors"].values()))')))
  rounds=$((rounds + 1))
  echo "soak round $rounds: $total requests, $errors errors, RSS $(rss_kb) kB"
done
after=$(rss_kb)
alive=$(kill -0 "$(cat "$out/pid")" 2>/dev/null && echo yes || echo no)
stop_server
echo "soak (threads $t_best, concurrency 32): $total requests, $errors errors, server alive: $alive," \
  "RSS $before kB after warm-up -> $after kB at the end ($(( (after - before) )) kB)"
