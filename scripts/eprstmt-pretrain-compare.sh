#!/usr/bin/env bash
# eprstmt-pretrain-compare.sh: does pretraining help? Fine-tunes the same 4 x 256 BERT on FewCLUE EPRSTMT
# (train_few_all, 160 reviews) from three inits — from scratch, the general model (scripts/pretrain-small.sh),
# and that model after continued pretraining on EPRSTMT's unlabeled reviews
# (configs/pretrain/eprstmt_continued.toml) — with one recipe (AdamW, 10 epochs, batch 16, best epoch on
# dev_few_all), the learning rate chosen per init on dev_few_all (mean of the seeds), and reports test_public
# accuracy (mean of 3 seeds, each seed listed). data/eprstmt/train.tsv is never used (it holds test_public).
#   scripts/eprstmt-pretrain-compare.sh            -> runs/eprstmt-compare/results.{json,md}
#   env: INITS, LRS, SEEDS; GENERAL / CONTINUED (model directories), OUT (results directory)
set -euo pipefail
cd "$(dirname "$0")/.."
ethost=${ETHOST:-build/bin/ethost}
out=${OUT:-runs/eprstmt-compare}
general=${GENERAL:-runs/pretrain-small/model}
continued=${CONTINUED:-runs/pretrain-eprstmt/model}
[ -f $general/model.safetensors ] || ETHOST=$ethost scripts/pretrain-small.sh
inits=${INITS:-"scratch general continued"}
# Continued pretraining runs in the precision the general recipe's calibration chose (its recipe.json): native
# bf16 is not always the faster one.
precision=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("precision", "fp32"))' \
  $general/recipe.json 2>/dev/null || echo fp32)
[[ " $inits " != *" continued "* ]] || [ -f $continued/model.safetensors ] || "$ethost" --app pretrain --config configs/pretrain/eprstmt_continued.toml \
  --set train.progress_bar=\"never\" --set train.precision=\"$precision\"
mkdir -p $out
lrs=${LRS:-"1e-4 3e-4 1e-3"}
seeds=${SEEDS:-"1 2 3"}
: > $out/runs.jsonl
for init in $inits; do
  case $init in
    scratch) model=(--set pretrain_model_name_or_path=\"\" --set data.vocab_file=\"$general/vocab.txt\"
                    --set model.hidden_size=256 --set model.num_hidden_layers=4 --set model.num_attention_heads=4
                    --set model.intermediate_size=512 --set model.max_position_embeddings=128) ;;
    general) model=(--set pretrain_model_name_or_path=\"$general\") ;;
    continued) model=(--set pretrain_model_name_or_path=\"$continued\") ;;
  esac
  for lr in $lrs; do
    for seed in $seeds; do
      dir=$out/$init-lr$lr-seed$seed
      # Fine-tuning dropout is part of the one recipe (a pretrained config.json may carry another).
      "$ethost" --app text_classify --config configs/text_classify/eprstmt.toml "${model[@]}" --log-level warn \
        --set model.hidden_dropout_prob=0.1 --set model.attention_probs_dropout_prob=0.1 \
        --set optimizer.learning_rate=$lr --set train.seed=$seed --set model.seed=$seed \
        --set train.checkpoint_dir=\"$dir\" --set train.progress_bar=\"never\" --set train.tensorboard=false >/dev/null
      dev=$(python3 -c 'import json,sys; print(max(json.loads(l)["accuracy"] for l in open(sys.argv[1]) if "\"eval\"" in l))' $dir/metrics.jsonl)
      "$ethost" --app text_classify --mode evaluate --config configs/text_classify/eprstmt.toml --log-level warn \
        --set train.checkpoint_dir=\"$dir\" --tables data/fewclue/eprstmt/test_public.json >/dev/null
      test=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["accuracy"])' $dir/eval_results.json)
      echo "{\"init\": \"$init\", \"lr\": $lr, \"seed\": $seed, \"dev\": $dev, \"test\": $test}" | tee -a $out/runs.jsonl
      rm -rf $dir/checkpoint-* $dir/model.safetensors
    done
  done
done
python3 - $out <<'PY'
import json, sys, statistics as st
out = sys.argv[1]
runs = [json.loads(l) for l in open(out + "/runs.jsonl")]
res, lines = {}, ["| init | lr (chosen on dev) | dev mean | test_public mean | test per seed |", "|---|---|---|---|---|"]
for init in ["scratch", "general", "continued"]:
    mine = [r for r in runs if r["init"] == init]
    if not mine:
        continue
    by_lr = {}
    for r in mine:
        by_lr.setdefault(r["lr"], []).append(r)
    lr = max(by_lr, key=lambda k: (st.mean(r["dev"] for r in by_lr[k]), -k))
    chosen = sorted(by_lr[lr], key=lambda r: r["seed"])
    res[init] = {"lr": lr, "dev_mean": st.mean(r["dev"] for r in chosen),
                 "test_mean": st.mean(r["test"] for r in chosen), "test": [r["test"] for r in chosen],
                 "dev_by_lr": {str(k): st.mean(r["dev"] for r in v) for k, v in by_lr.items()}}
    lines.append(f"| {init} | {lr:g} | {res[init]['dev_mean']:.4f} | {res[init]['test_mean']:.4f} | "
                 + ", ".join(f"{t:.4f}" for t in res[init]["test"]) + " |")
diffs = []
for a, b in [("general", "scratch"), ("continued", "general")]:
    if a in res and b in res:
        res[f"{a}_minus_{b}_points"] = 100 * (res[a]["test_mean"] - res[b]["test_mean"])
        diffs.append(f"{a} - {b}: {res[f'{a}_minus_{b}_points']:+.2f} points")
json.dump(res, open(out + "/results.json", "w"), indent=2)
md = "\n".join(lines) + "\n\n" + "; ".join(diffs) + "\n"
open(out + "/results.md", "w").write(md)
print(md)
PY
