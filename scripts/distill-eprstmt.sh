#!/usr/bin/env bash
# distill-eprstmt.sh: knowledge distillation on FewCLUE EPRSTMT. For each seed: a teacher (the pretrained 4 x 256
# model of scripts/pretrain-small.sh, fine-tuned on train_few_all, best epoch on dev_few_all) writes its logits for
# train_few_all, dev_few_all and the unlabeled reviews (the transfer set, minus rows repeating a dev_few_all or
# test_public review); a 1-layer student (1/4 of the encoder FLOPs, initialised from the teacher's layer 0)
# trains on those logits (vanilla KD, T = 5, alpha = 0.2); the same student trained without KD (train_few_all
# only) is the baseline. Reports test_public accuracy (mean of the seeds) and predict throughput of teacher vs
# student on the same rows, measured in this run.
#   scripts/distill-eprstmt.sh            -> runs/distill-eprstmt/results.{json,md}
#   env: SEEDS (default "1 2 3"), GENERAL (pretrained model dir), OUT, STUDENT_LAYERS (1), EPOCHS (3), LR (1e-3)
set -euo pipefail
cd "$(dirname "$0")/.."
ethost=${ETHOST:-build/bin/ethost}
out=${OUT:-runs/distill-eprstmt}
general=${GENERAL:-runs/pretrain-small/model}
seeds=${SEEDS:-"1 2 3"}
layers=${STUDENT_LAYERS:-1}
epochs=${EPOCHS:-3}
lr=${LR:-1e-3}
[ -f $general/model.safetensors ] || ETHOST=$ethost scripts/pretrain-small.sh
mkdir -p $out
d=data/fewclue/eprstmt
q=(--log-level warn --set train.progress_bar=\"never\" --set train.tensorboard=false)
acc() { /usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["accuracy"])' "$1"; }

# The transfer set: unlabeled reviews that repeat no dev_few_all / test_public review.
/usr/bin/python3 - $d $out <<'PY'
import json, sys
d, out = sys.argv[1:]
held = {json.loads(l)["sentence"] for f in ("dev_few_all.json", "test_public.json") for l in open(f"{d}/{f}")}
rows = [json.loads(l) for l in open(f"{d}/unlabeled.json")]
kept = [r for r in rows if r["sentence"] not in held]
with open(f"{out}/transfer.json", "w") as f:
    for r in kept:
        f.write(json.dumps({"sentence": r["sentence"]}, ensure_ascii=False) + "\n")
print(f"transfer set: {len(kept)} of {len(rows)} unlabeled reviews ({len(rows) - len(kept)} repeat dev/test)")
# Throughput rows: test_public four times.
with open(f"{out}/speed.json", "w") as f:
    for _ in range(4):
        f.writelines(open(f"{d}/test_public.json"))
PY

: > $out/runs.jsonl
for seed in $seeds; do
  t=$out/teacher-s$seed
  "$ethost" --app text_classify --config configs/text_classify/eprstmt.toml "${q[@]}" \
    --set pretrain_model_name_or_path=\"$general\" --set model.hidden_dropout_prob=0.1 \
    --set model.attention_probs_dropout_prob=0.1 --set optimizer.learning_rate=1e-3 --set train.seed=$seed \
    --set model.seed=$seed --set train.checkpoint_dir=\"$t\" >/dev/null
  rm -rf $t/checkpoint-*
  ev() {  # model dir -> test_public accuracy
    "$ethost" --app text_classify --mode evaluate --config configs/text_classify/eprstmt.toml --log-level warn \
      --set pretrain_model_name_or_path=\"\" --set train.checkpoint_dir=\"$1\" --tables $d/test_public.json >/dev/null
    acc $1/eval_results.json
  }
  for part in train_few_all dev_few_all; do
    "$ethost" --app text_classify --mode predict --config configs/text_classify/eprstmt.toml --log-level warn \
      --set pretrain_model_name_or_path=\"$t\" --tables $d/$part.json --outputs $t/$part.logits.tsv \
      --output_schema logits --append_cols sentence,label >/dev/null
  done
  "$ethost" --app text_classify --mode predict --config configs/text_classify/eprstmt.toml --log-level warn \
    --set pretrain_model_name_or_path=\"$t\" --tables $out/transfer.json --outputs $t/transfer.logits.tsv \
    --set data.input_schema=\"sentence:str:1\" --output_schema logits --append_cols sentence >/dev/null
  student=(--set pretrain_model_name_or_path=\"\" --set optimizer.learning_rate=$lr --set train.seed=$seed
           --set model.seed=$seed --set distill.enable_distillation=true --set distill.teacher=\"$t\"
           --set distill.student_layers=$layers)
  s=$out/student-kd-s$seed
  "$ethost" --app text_classify --config configs/text_classify/eprstmt.toml "${q[@]}" "${student[@]}" \
    --set data.reader=\"tsv\" --set data.input_schema=\"logits:str:1,sentence:str:1,label:str:1\" \
    --set data.tables="[\"$t/train_few_all.logits.tsv\", \"$t/dev_few_all.logits.tsv\"]" \
    --set distill.logits_column=\"logits\" --set distill.transfer_tables="[\"$t/transfer.logits.tsv\"]" \
    --set distill.transfer_input_schema=\"logits:str:1,sentence:str:1\" --set train.epoch_num=$epochs \
    --set train.micro_batch_size=32 --set train.checkpoint_dir=\"$s\" >/dev/null
  n=$out/student-nokd-s$seed
  # Without KD: the same student and initialisation, the labelled rows only, the teacher's fine-tuning budget.
  "$ethost" --app text_classify --config configs/text_classify/eprstmt.toml "${q[@]}" "${student[@]}" \
    --set distill.alpha=0.0 --set train.checkpoint_dir=\"$n\" >/dev/null
  rm -rf $s/checkpoint-* $n/checkpoint-*
  speed() {  # model dir -> predict rows/s on speed.json
    "$ethost" --app text_classify --mode predict --config configs/text_classify/eprstmt.toml --log-level info \
      --set pretrain_model_name_or_path=\"$1\" --tables $out/speed.json --outputs $1/speed.tsv 2>&1 |
      sed -n 's/.*predict: [0-9]* rows in [0-9.e-]* s (\([0-9.]*\) rows\/s.*/\1/p'
  }
  line="{\"seed\": $seed, \"teacher\": $(ev $t), \"student_kd\": $(ev $s), \"student_nokd\": $(ev $n), \"teacher_rows_per_s\": $(speed $t), \"student_rows_per_s\": $(speed $s)}"
  echo "$line" | tee -a $out/runs.jsonl
done
/usr/bin/python3 - $out $layers <<'PY'
import json, sys, statistics as st
out, layers = sys.argv[1], sys.argv[2]
runs = [json.loads(l) for l in open(out + "/runs.jsonl")]
m = {k: st.mean(r[k] for r in runs) for k in runs[0] if k != "seed"}
res = {"seeds": [r["seed"] for r in runs], "mean": m, "kept": m["student_kd"] / m["teacher"],
       "speedup": m["student_rows_per_s"] / m["teacher_rows_per_s"], "runs": runs}
json.dump(res, open(out + "/results.json", "w"), indent=1)
per = lambda k: ", ".join(f"{r[k]:.4f}" for r in runs)
md = [f"| model | test_public accuracy (mean of {len(runs)}) | per seed | predict rows/s |", "|---|---|---|---|",
      f"| teacher 4 x 256 | {m['teacher']:.4f} | {per('teacher')} | {m['teacher_rows_per_s']:.0f} |",
      f"| student {layers} x 256, KD | {m['student_kd']:.4f} | {per('student_kd')} | {m['student_rows_per_s']:.0f} |",
      f"| student {layers} x 256, no KD | {m['student_nokd']:.4f} | {per('student_nokd')} | |",
      "", f"student keeps {100 * res['kept']:.1f}% of the teacher's accuracy at {res['speedup']:.2f}x its throughput"]
open(out + "/results.md", "w").write("\n".join(md) + "\n")
print("\n".join(md))
PY
