#!/usr/bin/env bash
# fewclue.sh: the FewCLUE harness — for each (task, method, seed) trains on train_few_all, selects the best
# epoch on dev_few_all, evaluates on test_public, and prints a methods x tasks table (+ average), also
# written as Markdown and JSON. Resumable: a finished (task, method, seed) keeps its result file.
#   scripts/fewclue.sh [--tasks eprstmt,tnews,bustm] [--methods finetune,pet,fuzzy,pet_st] [--seeds 1,2,3]
#                      [--model DIR] [--out runs/fewclue] [--set key=value]... [--smoke] [--force]
# Methods: finetune = app/text_classify ([CLS] + a new classifier); pet = app/fewshot with the config's one
# verbalizer; fuzzy = Fuzzy-PET (the task's several verbalizer sets); pet_st = PET + one self-training
# generation on the task's unlabeled file (test_public excluded). --model: an MLM-pretrained model directory
# (default runs/pretrain-small/model, made by scripts/pretrain-small.sh; without one, models start from
# scratch and the table says so). --smoke: 2 tasks x 16 rows, a tiny model from scratch (CI).
set -euo pipefail
cd "$(dirname "$0")/.."
ethost=${ETHOST:-build/bin/ethost}
tasks=eprstmt,tnews,bustm methods=finetune,pet,fuzzy,pet_st seeds=1 model=runs/pretrain-small/model
out=runs/fewclue smoke=0 force=0 user_set=()
while [ $# -gt 0 ]; do
  case "$1" in
    --tasks) tasks=$2; shift 2 ;;
    --methods) methods=$2; shift 2 ;;
    --seeds) seeds=$2; shift 2 ;;
    --model) model=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --smoke) smoke=1; shift ;;
    --force) force=1; shift ;;
    --set) user_set+=(--set "$2"); shift 2 ;;
    *) echo "fewclue.sh: unknown argument '$1' (see the header of $0)" >&2; exit 2 ;;
  esac
done

# Per task: the verbalizer sets of Fuzzy-PET, the unlabeled file, the self-training top-k per class.
declare -A fuzzy unlabeled topk
fuzzy[eprstmt]="差,好/烂,棒/坏,赞"
fuzzy[tnews]="故事,文化,娱乐,体育,财经,房产,汽车,教育,科技,军事,旅游,国际,股票,农业,电竞/生活,历史,明星,比赛,经济,楼市,车辆,学校,数码,部队,景点,外交,证券,乡村,游戏"
fuzzy[bustm]="不同,相同/无关,相近/相反,一样"
unlabeled[eprstmt]=data/fewclue/eprstmt/unlabeled.json topk[eprstmt]=300
unlabeled[tnews]=data/fewclue/tnews/unlabeled.json topk[tnews]=60
unlabeled[bustm]=data/fewclue/bustm/unlabeled.json topk[bustm]=150

for m in ${methods//,/ }; do
  case $m in finetune|pet|fuzzy|pet_st) ;; *) echo "fewclue.sh: unknown method '$m' (finetune, pet, fuzzy, pet_st)" >&2; exit 2 ;; esac
done
for t in ${tasks//,/ }; do
  [ -f configs/fewclue/$t.toml ] || { echo "fewclue.sh: no config for task '$t' (configs/fewclue/<task>.toml)" >&2; exit 2; }
done
data=data/fewclue
extra=()
if [ $smoke = 1 ]; then
  tasks=eprstmt,bustm seeds=1 out=${out%/}-smoke model=""
  mkdir -p "$out/data"
  for t in eprstmt bustm; do
    mkdir -p "$out/data/$t"
    for f in train_few_all dev_few_all test_public; do head -n 16 "$data/$t/$f.json" > "$out/data/$t/$f.json"; done
    head -n 40 "$data/$t/unlabeled.json" > "$out/data/$t/unlabeled.json"
    unlabeled[$t]=$out/data/$t/unlabeled.json topk[$t]=4
  done
  data=$out/data
  extra=(--set model.hidden_size=32 --set model.intermediate_size=64 --set model.num_hidden_layers=1
         --set train.epoch_num=2 --set runtime.threads=1 --set optimizer.learning_rate=1e-3)
fi
scratch=1
if [ -n "$model" ]; then
  [ -f "$model/config.json" ] || { echo "fewclue.sh: no model at $model (run scripts/pretrain-small.sh, or --model DIR)" >&2; exit 2; }
  scratch=0
fi
mkdir -p "$out/results"
log=$out/fewclue.log
echo "fewclue.sh: tasks $tasks, methods $methods, seeds $seeds, model ${model:-none (from scratch)}; log $log"

run_one() {  # task method seed
  local t=$1 m=$2 s=$3 res=$out/results/$1-$2-seed$3.json
  [ $force = 0 ] && [ -f "$res" ] && { echo "  $t $m seed $s: done before ($(cat "$res"))"; return; }
  local app=fewshot cfg=configs/fewclue/$t.toml dir=$out/$t/$m/seed-$s
  local args=(--set "train.seed=$s" --set "train.checkpoint_dir=\"$dir\"" "${user_set[@]}")
  [ $scratch = 0 ] && args+=(--set "pretrain_model_name_or_path=\"$model\"")
  case $m in
    finetune) app=text_classify cfg=configs/fewclue/${t}_finetune.toml ;;
    pet) ;;
    fuzzy) args+=(--set "label_desc=\"${fuzzy[$t]}\"") ;;
    pet_st) args+=(--set self_training.generations=1 --set "self_training.unlabeled_tables=[\"${unlabeled[$t]}\"]"
                   --set "self_training.exclude_tables=[\"$data/$t/test_public.json\"]"
                   --set "self_training.top_k=${topk[$t]}" --set self_training.max_unlabeled=4000) ;;
    *) echo "fewclue.sh: unknown method '$m' (finetune, pet, fuzzy, pet_st)" >&2; exit 2 ;;
  esac
  local t0=$(date +%s)
  rm -rf "$dir"
  "$ethost" --app $app --config "$cfg" "${args[@]}" "${extra[@]}" --log-level warn \
    --tables "$data/$t/train_few_all.json,$data/$t/dev_few_all.json" >> "$log" 2>&1 ||
    { echo "fewclue.sh: $t $m seed $s failed to train (see $log)" >&2; exit 1; }
  # Evaluate the trained model (not the starting one) on test_public.
  "$ethost" --app $app --mode evaluate --config "$cfg" "${args[@]}" "${extra[@]}" --set 'pretrain_model_name_or_path=""' \
    --tables "$data/$t/test_public.json" --log-level warn >> "$log" 2>&1 ||
    { echo "fewclue.sh: $t $m seed $s failed to evaluate (see $log)" >&2; exit 1; }
  /usr/bin/python3 - "$dir/eval_results.json" "$res" "$t" "$m" "$s" $(( $(date +%s) - t0 )) <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
dev = [json.loads(l).get("accuracy") for l in open(sys.argv[1].replace("eval_results.json", "metrics.jsonl"))
       if '"event":"eval"' in l]
dev = max([d for d in dev if d is not None], default=None)
json.dump({"task": sys.argv[3], "method": sys.argv[4], "seed": int(sys.argv[5]), "test_accuracy": r["accuracy"], "dev_accuracy": dev,
           "macro_f1": r.get("macro_f1"), "majority_baseline": r.get("majority_baseline"),
           "seconds": int(sys.argv[6])}, open(sys.argv[2], "w"))
PY
  echo "  $t $m seed $s: test accuracy $(/usr/bin/python3 -c "import json;print(round(100*json.load(open('$res'))['test_accuracy'],2))") ($(( $(date +%s) - t0 )) s)"
}

for t in ${tasks//,/ }; do
  [ -f configs/fewclue/$t.toml ] || { echo "fewclue.sh: no config for task '$t' (configs/fewclue/)" >&2; exit 2; }
  for m in ${methods//,/ }; do
    for s in ${seeds//,/ }; do run_one "$t" "$m" "$s"; done
  done
done

/usr/bin/python3 - "$out" "$tasks" "$methods" "$seeds" "$scratch" <<'PY'
import json, os, statistics, sys
out, tasks, methods, seeds, scratch = sys.argv[1], sys.argv[2].split(","), sys.argv[3].split(","), sys.argv[4].split(","), sys.argv[5] == "1"
cells, runs = {}, []
for m in methods:
    for t in tasks:
        accs = []
        for s in seeds:
            p = f"{out}/results/{t}-{m}-seed{s}.json"
            if os.path.exists(p):
                r = json.load(open(p)); runs.append(r); accs.append(100 * r["test_accuracy"])
        cells[(m, t)] = accs
def fmt(a):
    if not a: return "–"
    return f"{statistics.mean(a):.2f}" + (f" ± {statistics.stdev(a):.2f}" if len(a) > 1 else "")
head = "| method | " + " | ".join(tasks) + " | average |"
lines = [head, "|" + "---|" * (len(tasks) + 2)]
table = {}
for m in methods:
    means = [statistics.mean(cells[(m, t)]) for t in tasks if cells[(m, t)]]
    avg = statistics.mean(means) if len(means) == len(tasks) else None
    table[m] = {t: cells[(m, t)] for t in tasks} | {"average": avg}
    lines.append(f"| {m} | " + " | ".join(fmt(cells[(m, t)]) for t in tasks) + f" | {avg:.2f} |" if avg is not None else
                 f"| {m} | " + " | ".join(fmt(cells[(m, t)]) for t in tasks) + " | – |")
maj = {}
for r in runs:
    if r.get("majority_baseline") is not None: maj[r["task"]] = 100 * r["majority_baseline"]
if maj:
    vals = [maj.get(t) for t in tasks]
    avg = statistics.mean(vals) if None not in vals else None
    lines.append("| majority class (of test_public) | " + " | ".join(f"{v:.2f}" if v is not None else "–" for v in vals) +
                 (f" | {avg:.2f} |" if avg is not None else " | – |"))
    table["majority"] = {t: maj.get(t) for t in tasks} | {"average": avg}
note = f"test_public accuracy (%), mean ± sd over seeds {','.join(seeds)}" + (" — models from scratch" if scratch else "")
md = "\n".join([note, ""] + lines) + "\n"
open(f"{out}/table.md", "w").write(md)
json.dump({"note": note, "table": table, "runs": runs}, open(f"{out}/table.json", "w"), indent=1)
print(md, end="")
print(f"written: {out}/table.md, {out}/table.json")
PY
