#!/usr/bin/env bash
# kgbert-quickstart.sh: installs dependencies and builds (if needed), gets the small Chinese BERT
# (scripts/pretrain-small.sh; cached after its first run), then
#  1. continues pretraining it as KGBERT on DuIE 2.0 (configs/kgbert/quickstart.toml -> runs/kgbert), and the
#     same run with the knowledge module off (-> runs/kgbert-noknowledge), the ablation;
#  2. evaluates both on the held-out 10% of DuIE's sentences (mention F1 next to the trie baseline, SPO ranking
#     next to chance, MLM accuracy);
#  3. (NER=1; about an hour more, so off by default) fine-tunes K-BERT's medical NER from the same init and budget
#     with and without knowledge fusion (configs/sequence_labeling/medical_ner_kgbert.toml, Medical.spo), SEEDS
#     seeds each (default "1 2 3"); each arm is evaluated with its own model.knowledge setting.
# Prints one table; the numbers are in runs/kgbert*/eval_results.json and runs/kgbert-ner/*/eval_results.json.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x build/bin/ethost ] || { ./scripts/install-deps.sh && ./scripts/build.sh dev; }
ethost=./build/bin/ethost
start=$(date +%s)
./scripts/pretrain-small.sh > /dev/null
cfg=configs/kgbert/quickstart.toml
for variant in kgbert kgbert-noknowledge; do
  knowledge=true
  [ "$variant" = kgbert-noknowledge ] && knowledge=false
  echo "--- $variant: pretraining on DuIE (knowledge $knowledge) ---"
  $ethost --app kgbert --config $cfg --log-level warn --set model.knowledge=$knowledge \
    --set train.checkpoint_dir=\""$PWD/runs/$variant"\"
  $ethost --app kgbert --mode evaluate --config $cfg --log-level warn \
    --set train.checkpoint_dir=\""$PWD/runs/$variant"\"
done
if [ "${NER:-0}" = 1 ]; then
  for seed in ${SEEDS:-1 2 3}; do
    for variant in fusion plain; do
      knowledge=true
      [ "$variant" = plain ] && knowledge=false
      out="$PWD/runs/kgbert-ner/$variant-seed$seed"
      echo "--- medical NER: $variant, seed $seed ---"
      $ethost --app sequence_labeling --config configs/sequence_labeling/medical_ner_kgbert.toml --log-level warn \
        --set model.knowledge=$knowledge --set train.seed=$seed --set model.seed=$seed \
        --set train.checkpoint_dir=\""$out"\"
      $ethost --app sequence_labeling --mode evaluate --config configs/sequence_labeling/medical_ner_kgbert.toml --log-level warn \
        --set model.knowledge=$knowledge --set train.checkpoint_dir=\""$out"\" --set pretrain_model_name_or_path=\""$out"\" \
        --tables data/kg/kbert/medical_ner/dev.tsv > /dev/null
    done
  done
fi
/usr/bin/python3 - "${NER:-0}" "${SEEDS:-1 2 3}" <<'PY'
import json, sys
def load(p):
    try:
        return json.load(open(p))
    except OSError:
        return None
rows = [("KGBERT (knowledge)", load("runs/kgbert/eval_results.json")),
        ("same, knowledge off at inference", None),
        ("ablation: trained without knowledge", load("runs/kgbert-noknowledge/eval_results.json"))]
k = rows[0][1]
print("\n| model | mention_f1 | spo_rank_accuracy | same, both entities in the graph | mlm_accuracy |")
print("|---|---|---|---|---|")
for name, m in rows:
    if name.startswith("same") and k:
        print("| %s | %.4f | %.4f | %.4f | %.4f |" % (name, k["mention_f1_nokg"], k["spo_rank_accuracy_nokg"],
                                                    k["spo_rank_accuracy_in_graph_nokg"], k["mlm_accuracy_nokg"]))
    elif m:
        print("| %s | %.4f | %.4f | %.4f | %.4f |" % (name, m["mention_f1"], m["spo_rank_accuracy"],
                                                    m["spo_rank_accuracy_in_graph"], m["mlm_accuracy"]))
if k:
    print("| trie longest match (training graph) | %.4f | | | |" % k["mention_f1_trie_baseline"])
    print("| chance | | %.4f | %.4f | |" % (k["spo_rank_chance"], k["spo_rank_chance"]))
    print("(held-out DuIE: %d facts of %d sentences)" % (k["eval_facts"], k["eval_sentences"]))
if sys.argv[1] == "1":
    seeds = sys.argv[2].split()
    print("\n| medical NER (dev, entity F1) | " + " | ".join("seed " + s for s in seeds) + " | mean |")
    print("|---|" + "---|" * (len(seeds) + 1))
    for v in ("fusion", "plain"):
        f = []
        for s in seeds:
            m = load("runs/kgbert-ner/%s-seed%s/eval_results.json" % (v, s))
            f.append(m["f1"] if m else float("nan"))
        print("| %s | %s | %.4f |" % (v, " | ".join("%.4f" % x for x in f), sum(f) / len(f)))
PY
echo "kgbert-quickstart: done in $(( $(date +%s) - start ))s (models in runs/kgbert, runs/kgbert-noknowledge, runs/kgbert-ner)"
