#!/usr/bin/env bash
# fewclue.sh: the FewCLUE harness — for each (task, method, seed) trains on train_few_all, selects the best
# epoch on dev_few_all, evaluates on test_public, and prints a methods x tasks table (+ average), also
# written as Markdown and JSON. Resumable: a finished (task, method, seed) keeps its result file.
#   scripts/fewclue.sh [--tasks eprstmt,tnews,bustm (default; also csldcp,iflytek,ocnli,csl,chid,cluewsc; all: the 9)]
#                      [--methods finetune,pet,fuzzy,pet_st]
#                      [--seeds 1,2,3]
#                      [--lrs 1e-4,3e-4,1e-3] [--st-thresholds 0.9,0] [--model DIR] [--out runs/fewclue] [--set key=value]... [--smoke]
#                      [--force] [--report]
# Methods: finetune = app/text_classify ([CLS] + a new classifier); pet = app/fewshot with the config's one
# verbalizer; fuzzy = Fuzzy-PET (the task's several verbalizer sets; CHID has none: its label words are each row's
# candidates); pet_st = PET + one self-training generation on the task's unlabeled file (test_public excluded;
# EPRSTMT, TNEWS, BUSTM and CHID have one); a method a task cannot run is skipped with one line, and its table
# cell says n/a; ptuning = P-tuning (the PET pattern's literal text replaced by as many trainable prompt tokens;
# not in the default methods). Tasks: the 9 with a config in configs/fewclue/ (CHID: PET scores each row's 7
# candidate idioms at the masks, fine-tuning is multiple choice; CLUEWSC: the marked text of
# scripts/data/mark_cluewsc.py). --model: an MLM-pretrained
# model directory (default runs/pretrain-small/model, made by scripts/pretrain-small.sh; without one, models
# start from scratch and the table says so). --report: print and write the table from the results already in
# <out>/results, running nothing (a missing run's cell is –). --lrs: each (task, method) first trains the first
# seed at every learning rate listed (results in <out>/results/lr/), keeps the one with the best dev_few_all
# accuracy (ties: the earlier in the list; fuzzy and pet_st take pet's, being PET with more verbalizer sets or
# plus self-training) and runs its seeds
# with it; test_public plays no part in the choice. --st-thresholds: likewise pet_st chooses its
# self_training.threshold (with --lrs: at pet's learning rate); 0 keeps the top_k most probable per class. --smoke: 2 tasks x 16 rows, a tiny model from scratch (CI).
set -euo pipefail
cd "$(dirname "$0")/.."
ethost=${ETHOST:-build/bin/ethost}
tasks=eprstmt,tnews,bustm methods=finetune,pet,fuzzy,pet_st seeds=1 model=runs/pretrain-small/model
out=runs/fewclue smoke=0 force=0 report=0 user_set=() lrs="" ths="" th=""
while [ $# -gt 0 ]; do
  case "$1" in
    --tasks) tasks=$2; [ "$tasks" = all ] && tasks=eprstmt,csldcp,tnews,iflytek,ocnli,bustm,chid,csl,cluewsc; shift 2 ;;
    --methods) methods=$2; shift 2 ;;
    --seeds) seeds=$2; shift 2 ;;
    --lrs) lrs=$2; shift 2 ;;
    --st-thresholds) ths=$2; shift 2 ;;
    --model) model=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --smoke) smoke=1; shift ;;
    --force) force=1; shift ;;
    --report) report=1; shift ;;
    --set) user_set+=(--set "$2"); shift 2 ;;
    *) echo "fewclue.sh: unknown argument '$1' (see the header of $0)" >&2; exit 2 ;;
  esac
done

# Per task: the verbalizer sets of Fuzzy-PET, the unlabeled file, the self-training top-k per class.
declare -A fuzzy unlabeled topk
fuzzy[eprstmt]="差,好/烂,棒/坏,赞"
fuzzy[tnews]="故事,文化,娱乐,体育,财经,房产,汽车,教育,科技,军事,旅游,国际,股票,农业,电竞/生活,历史,明星,比赛,经济,楼市,车辆,学校,数码,部队,景点,外交,证券,乡村,游戏"
fuzzy[bustm]="不同,相同/无关,相近/相反,一样"
fuzzy[ocnli]="蕴含,中性,矛盾/相关,无关,相反/包含,中立,反向"
fuzzy[csl]="不,都/非,皆/未,全"
fuzzy[cluewsc]="不,就/非,正/否,即"
# CSLDCP: the label names (a '/' name keeps its first half) / short synonyms; IFLYTEK: label_des / synonyms.
fuzzy[csldcp]="材料科学与工程,作物学,口腔医学,药学,教育学,水利工程,理论经济学,食品科学与工程,畜牧学,体育学,核科学与技术,力学,园艺学,水产,法学,地质学,石油与天然气工程,农林经济管理,信息与通信工程,图书馆、情报与档案管理,政治学,电气工程,海洋科学,民族学,航空宇航科学与技术,化学,哲学,公共卫生与预防医学,艺术学,农业工程,船舶与海洋工程,计算机科学与技术,冶金工程,交通运输工程,动力工程及工程热物理,纺织科学与工程,建筑学,环境科学与工程,公共管理,数学,物理学,林学,心理学,历史学,工商管理,应用经济学,中医学,天文学,机械工程,土木工程,光学工程,地理学,农业资源利用,生物学,兵器科学与技术,矿业工程,大气科学,基础医学,电子科学与技术,测绘科学与技术,控制科学与工程,军事学,中国语言文学,新闻传播学,社会学,地球物理学,植物保护/材料,农作物,牙科,药物,教育,水利,经济理论,食品,兽医学,体育,核能,工程力学,园艺,渔业,法律,地质工程,油气,农业经济,通信,图书情报,政治,电力,海洋,民族,航空航天,化工,哲理,公共卫生,艺术,农机,船舶,计算机,冶金,交通,热能,纺织,建筑,环境,行政管理,数理,物理,林业,心理,历史,企业管理,经济,中药学,天文,机械,土木,光学,地理,土壤,生物,兵器,采矿,气象,临床医学,电子,测绘,自动化,军事,中文,新闻,社会,地球物理,病虫害"
fuzzy[iflytek]="打车,地图导航,免费WIFI,租车,同城服务,快递物流,婚庆,家政,公共交通,政务,社区服务,薅羊毛,魔幻,仙侠,卡牌,飞行空战,射击游戏,休闲益智,动作类,体育竞技,棋牌中心,经营养成,策略,MOBA,辅助工具,约会社交,即时通讯,工作社交,论坛圈子,婚恋社交,情侣社交,社交工具,生活社交,微博博客,新闻,漫画,小说,技术,教辅,问答交流,搞笑,杂志,百科,影视娱乐,求职,兼职,视频,短视频,音乐,直播,电台,K歌,成人,中小学,职考,公务员,英语,视频教育,高等教育,成人教育,艺术,语言(非英语),旅游资讯,综合预定,民航,铁路,酒店,行程管理,民宿短租,出国,工具,亲子儿童,母婴,驾校,违章,汽车咨询,汽车交易,日常养车,行车辅助,租房,买房,装修家居,电子产品,问诊挂号,养生保健,医疗服务,减肥瘦身,美妆美业,菜谱,餐饮店,体育咨讯,运动健身,支付,保险,股票,借贷,理财,彩票,记账,银行,美颜,影像剪辑,摄影修图,相机,绘画,二手,电商,团购,外卖,电影票务,社区超市,购物咨询,笔记,办公,日程管理,女性,经营,收款,其他/叫车,导航,上网,汽车租赁,跑腿,快递,婚礼,保洁,公交,政府,物业,返利,奇幻,修仙,集换卡,空战,射击,益智,动作,竞技,棋牌,养成,战略,推塔,辅助,约会,聊天,人脉,论坛,婚恋,情侣,交友,生活圈,微博,资讯,动漫,阅读,编程,作业,问答,段子,期刊,知识,影视,招聘,打工,追剧,小视频,歌曲,主播,广播,唱歌,两性,小学,考证,考公,单词,网课,大学,自考,美术,外语,旅游,预订,机票,火车,住宿,行程,民宿,留学,实用,儿童,育儿,学车,罚单,汽车,买车,养车,车载,找房,房产,装修,数码,挂号,养生,医疗,减肥,美妆,食谱,餐厅,体育,健身,付款,保单,炒股,贷款,基金,彩民,账本,网银,自拍,剪辑,修图,拍照,画画,闲置,网购,优惠,订餐,电影票,超市,导购,记事,文档,日程,女生,店铺,收银,其它"
# P-tuning: the PET pattern with its literal text replaced by as many trainable prompt tokens ([unused1]...).
declare -A ptuning
ptuning[eprstmt]="sent1,<pseudo>*3,label,<pseudo>"
ptuning[tnews]="<pseudo>*4,label,<pseudo>*3,sent1"
ptuning[bustm]="sent1,<pseudo>,sent2,<pseudo>*6,label,<pseudo>"
ptuning[csldcp]="<pseudo>*4,label,<pseudo>*3,sent1"
ptuning[iflytek]="<pseudo>*4,label,<pseudo>*3,sent1"
ptuning[ocnli]="sent1,<pseudo>*9,label,<pseudo>,sent2"
ptuning[csl]="<pseudo>*3,sent1,<pseudo>*5,sent2,<pseudo>*3,label,<pseudo>*7"
ptuning[chid]="<pseudo>*4,{content}"
ptuning[cluewsc]="sent1,<pseudo>*4,{span2_text},label,<pseudo>,{span1_text},<pseudo>"
# pet_st's self_training.threshold without --st-thresholds: the choice of --st-thresholds 0.9,0 (dev_few_all, seed 1,
# 2,500-step model); 0 = the top_k most probable per class. Other tasks: the app's default (0.9).
declare -A st_threshold=([eprstmt]=0.9 [tnews]=0 [bustm]=0)
unlabeled[eprstmt]=data/fewclue/eprstmt/unlabeled.json topk[eprstmt]=300
unlabeled[tnews]=data/fewclue/tnews/unlabeled.json topk[tnews]=60
unlabeled[bustm]=data/fewclue/bustm/unlabeled.json topk[bustm]=150
unlabeled[chid]=data/fewclue/chid/unlabeled.json topk[chid]=40
# No unlabeled file (FewCLUE ships none for csldcp, iflytek, ocnli, csl, cluewsc): pet_st is skipped there.
# The method a task cannot run: "" or why not (its table cell is n/a).
cannot() {  # task method
  if [ "$2" = pet_st ] && [ -z "${unlabeled[$1]:-}" ]; then echo "$1 has no unlabeled file (self-training needs one)"
  elif [ "$2" = fuzzy ] && [ -z "${fuzzy[$1]:-}" ]; then echo "$1 has no verbalizer sets (its label words are each row's candidates)"
  fi
}

for m in ${methods//,/ }; do
  case $m in finetune|pet|fuzzy|pet_st|ptuning) ;; *) echo "fewclue.sh: unknown method '$m' (finetune, pet, fuzzy, pet_st, ptuning)" >&2; exit 2 ;; esac
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

run_one() {  # task method seed [learning rate: a --lrs candidate, its result under results/lr/]
  local t=$1 m=$2 s=$3 lr=${4:-} res=$out/results/$1-$2-seed$3.json dir=$out/$1/$2/seed-$3 what="$1 $2 seed $3"
  local tag=${lr:+lr$lr} thr=""
  [ "$m" = pet_st ] && thr=$th
  [ -n "$thr" ] && tag=${tag:+$tag-}th$thr
  if [ -n "$tag" ] && [ "${5:-}" != main ]; then res=$out/results/lr/$t-$m-$tag-seed$s.json dir=$out/$t/$m/$tag/seed-$s what="$what $tag"; fi
  last_res=$res
  [ $force = 0 ] && [ -f "$res" ] && { echo "  $what: done before ($(cat "$res"))"; return; }
  [ $report = 1 ] && { echo "  $what: not run (--report)"; return; }
  local app=fewshot cfg=configs/fewclue/$t.toml
  local args=(--set "train.seed=$s" --set "train.checkpoint_dir=\"$dir\"")
  [ "$m" = pet_st ] && [ -n "${st_threshold[$t]:-}" ] && args+=(--set "self_training.threshold=${st_threshold[$t]}")
  args+=("${user_set[@]}")
  [ $scratch = 0 ] && args+=(--set "pretrain_model_name_or_path=\"$model\"")
  [ -n "$lr" ] && args+=(--set "optimizer.learning_rate=$lr")
  [ -n "$thr" ] && args+=(--set "self_training.threshold=$thr")
  case $m in
    finetune) app=text_classify cfg=configs/fewclue/${t}_finetune.toml ;;
    pet) ;;
    fuzzy) args+=(--set "label_desc=\"${fuzzy[$t]}\"") ;;
    ptuning) args+=(--set 'type="p_tuning"' --set "pattern=\"${ptuning[$t]}\"") ;;
    pet_st) args+=(--set self_training.generations=1 --set "self_training.unlabeled_tables=[\"${unlabeled[$t]}\"]"
                   --set "self_training.exclude_tables=[\"$data/$t/test_public.json\"]"
                   --set "self_training.top_k=${topk[$t]}" --set self_training.max_unlabeled=4000) ;;
    *) echo "fewclue.sh: unknown method '$m' (finetune, pet, fuzzy, pet_st, ptuning)" >&2; exit 2 ;;
  esac
  local t0=$(date +%s)
  rm -rf "$dir"
  "$ethost" --app $app --config "$cfg" "${args[@]}" "${extra[@]}" --log-level warn \
    --tables "$data/$t/train_few_all.json,$data/$t/dev_few_all.json" >> "$log" 2>&1 ||
    { echo "fewclue.sh: $what failed to train (see $log)" >&2; exit 1; }
  # Evaluate the trained model (not the starting one) on test_public.
  "$ethost" --app $app --mode evaluate --config "$cfg" "${args[@]}" "${extra[@]}" --set 'pretrain_model_name_or_path=""' \
    --tables "$data/$t/test_public.json" --log-level warn >> "$log" 2>&1 ||
    { echo "fewclue.sh: $what failed to evaluate (see $log)" >&2; exit 1; }
  mkdir -p "$(dirname "$res")"
  /usr/bin/python3 - "$dir/eval_results.json" "$res" "$t" "$m" "$s" $(( $(date +%s) - t0 )) "$lr" "$thr" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
dev = [json.loads(l).get("accuracy") for l in open(sys.argv[1].replace("eval_results.json", "metrics.jsonl"))
       if '"event":"eval"' in l]
dev = max([d for d in dev if d is not None], default=None)
json.dump({"task": sys.argv[3], "method": sys.argv[4], "seed": int(sys.argv[5]), "test_accuracy": r["accuracy"], "dev_accuracy": dev,
           "macro_f1": r.get("macro_f1"), "majority_baseline": r.get("majority_baseline"),
           "seconds": int(sys.argv[6])} | ({"learning_rate": float(sys.argv[7])} if sys.argv[7] else {})
          | ({"st_threshold": float(sys.argv[8])} if sys.argv[8] else {}),
          open(sys.argv[2], "w"))
PY
  echo "  $what: test accuracy $(/usr/bin/python3 -c "import json;print(round(100*json.load(open('$res'))['test_accuracy'],2))") ($(( $(date +%s) - t0 )) s)"
}

# The best dev accuracy among result files: its index (the first of ties), "" when one is missing.
best_dev() {
  /usr/bin/python3 - "$@" <<'PY'
import json, os, sys
if all(os.path.exists(f) for f in sys.argv[1:]):
    dev = [json.load(open(f))["dev_accuracy"] for f in sys.argv[1:]]
    dev = [-1 if d is None else d for d in dev]
    print(dev.index(max(dev)))
PY
}

# The first seed at every --lrs value (kind lr) or, for pet_st at learning rate $chosen, every --st-thresholds
# value (kind th): $best = the value with the best dev accuracy, $best_res = its result file (both "" when a run
# is missing under --report).
choose() {  # lr|th task method
  local kind=$1 t=$2 m=$3 v files=() pick list name
  if [ "$kind" = lr ]; then list=(${lrs//,/ }) name="learning rate"; else list=(${ths//,/ }) name="self_training.threshold"; fi
  for v in "${list[@]}"; do
    if [ "$kind" = lr ]; then run_one "$t" "$m" "$s0" "$v"; else th=$v; run_one "$t" "$m" "$s0" "$chosen"; fi
    files+=("$last_res")
  done
  pick=$(best_dev "${files[@]}")
  best="" best_res=""
  if [ -n "$pick" ]; then
    best=${list[$pick]} best_res=${files[$pick]}
    echo "  $t $m: $name $best (best dev_few_all accuracy of ${list[*]}, seed $s0)" | tee -a "$log"
  fi
}

for t in ${tasks//,/ }; do
  [ -f configs/fewclue/$t.toml ] || { echo "fewclue.sh: no config for task '$t' (configs/fewclue/)" >&2; exit 2; }
  for m in ${methods//,/ }; do
    why=$(cannot "$t" "$m")
    if [ -n "$why" ]; then
      echo "  $t $m: skipped, $why; its table cell is n/a" | tee -a "$log"
      continue
    fi
    chooser=$m; case $m in pet_st|fuzzy) chooser=pet ;; esac
    chosen="" th="" s0=${seeds%%,*} picked=""
    if [ -n "$lrs" ]; then
      choose lr "$t" "$chooser"
      chosen=$best
      [ -z "$chosen" ] && { echo "  $t $m: no learning rate chosen yet (--report)"; continue; }
      [ "$m" = "$chooser" ] && picked=$best_res
    fi
    if [ "$m" = pet_st ] && [ -n "$ths" ]; then
      choose th "$t" pet_st
      th=$best picked=$best_res
      [ -z "$th" ] && { echo "  $t $m: no threshold chosen yet (--report)"; continue; }
    fi
    for s in ${seeds//,/ }; do
      if [ "$s" = "$s0" ] && [ -n "$picked" ] && { [ $force = 1 ] || [ ! -f "$out/results/$t-$m-seed$s.json" ]; }; then
        cp "$picked" "$out/results/$t-$m-seed$s.json"  # the same run
        echo "  $t $m seed $s: the run the choice kept (${chosen:+lr $chosen }${th:+threshold $th})"
      elif [ -n "$chosen$th" ]; then
        run_one "$t" "$m" "$s" "$chosen" main
      else
        run_one "$t" "$m" "$s"
      fi
    done
  done
done

not_run=$(for t in ${tasks//,/ }; do for m in ${methods//,/ }; do
  if [ -n "$(cannot "$t" "$m")" ]; then printf '%s:%s,' "$t" "$m"; fi; done; done)
/usr/bin/python3 - "$out" "$tasks" "$methods" "$seeds" "$scratch" "$not_run" <<'PY'
import json, os, statistics, sys
out, tasks, methods, seeds, scratch = sys.argv[1], sys.argv[2].split(","), sys.argv[3].split(","), sys.argv[4].split(","), sys.argv[5] == "1"
not_run = set(tuple(x.split(":")) for x in sys.argv[6].split(",") if x)
NA = "n/a"  # a method the task cannot run (pet_st without an unlabeled file, fuzzy on CHID)
def na(m, t): return (t, m) in not_run
cells, runs = {}, []
for m in methods:
    for t in tasks:
        accs = []
        for s in seeds:
            p = f"{out}/results/{t}-{m}-seed{s}.json"
            if os.path.exists(p):
                r = json.load(open(p)); runs.append(r); accs.append(100 * r["test_accuracy"])
        cells[(m, t)] = accs
def fmt(a, m=None, t=None):
    if na(m, t): return NA
    if not a: return "–"
    return f"{statistics.mean(a):.2f}" + (f" ± {statistics.stdev(a):.2f}" if len(a) > 1 else "")
head = "| method | " + " | ".join(tasks) + " | average |"
lines = [head, "|" + "---|" * (len(tasks) + 2)]
table = {}
for m in methods:
    means = [statistics.mean(cells[(m, t)]) for t in tasks if cells[(m, t)]]
    avg = statistics.mean(means) if len(means) == len(tasks) else None
    table[m] = {t: (NA if na(m, t) else cells[(m, t)]) for t in tasks} | {"average": avg}
    lines.append(f"| {m} | " + " | ".join(fmt(cells[(m, t)], m, t) for t in tasks) + f" | {avg:.2f} |" if avg is not None else
                 f"| {m} | " + " | ".join(fmt(cells[(m, t)], m, t) for t in tasks) + " | – |")
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
skipped = [t for t in tasks if na("pet_st", t)] if "pet_st" in methods else []
notes = []
if skipped:
    notes.append(f"n/a: pet_st not run on {', '.join(skipped)} (no unlabeled file for self-training)")
fz = [t for t in tasks if na("fuzzy", t)] if "fuzzy" in methods else []
if fz:
    notes.append(f"n/a: fuzzy not run on {', '.join(fz)} (the label words are each row's candidates: no sets)")
if notes:
    lines += [""] + [n + "; the row's average is –" for n in notes]
lr = {(r["method"], r["task"]): r["learning_rate"] for r in runs if "learning_rate" in r}
if lr:  # --lrs: the learning rate each (method, task) chose on dev
    lines += ["", "learning rate (chosen on dev_few_all, first seed; fuzzy and pet_st take pet's):", "",
              "| method | " + " | ".join(tasks) + " |", "|" + "---|" * (len(tasks) + 1)]
    lines += [f"| {m} | " + " | ".join(f"{lr[(m, t)]:g}" if (m, t) in lr else "–" for t in tasks) + " |"
              for m in methods]
    table["learning_rate"] = {m: {t: lr.get((m, t)) for t in tasks} for m in methods}
thr = {r["task"]: r["st_threshold"] for r in runs if r["method"] == "pet_st" and "st_threshold" in r}
if thr:  # --st-thresholds: pet_st's self_training.threshold, chosen on dev
    lines += ["", "pet_st self_training.threshold (chosen on dev_few_all, first seed): " +
              ", ".join(f"{t} {thr[t]:g}" for t in tasks if t in thr)]
    table["st_threshold"] = thr
md = "\n".join([note, ""] + lines) + "\n"
open(f"{out}/table.md", "w").write(md)
json.dump({"note": note, "table": table, "runs": runs} | ({"pet_st_skipped": skipped} if skipped else {}),
          open(f"{out}/table.json", "w"), indent=1)
print(md, end="")
print(f"written: {out}/table.md, {out}/table.json")
PY
