#!/usr/bin/env python3
# mrc_eval_reference.py: golden values for ethost's CMRC2018 and SQuAD v1.1 metrics. The functions below are
# the official scripts' (ymcui/cmrc2018 squad-style-data/cmrc2018_evaluate.py; SQuAD evaluate-v1.1.py),
# retyped unchanged except one call: nltk.word_tokenize needs the punkt sentence model, which Debian does not
# package, so the runs are tokenized with nltk's word tokenizer without sentence splitting
# (word_tokenize(..., preserve_line=True), the same NLTKWordTokenizer word_tokenize applies per sentence).
# Writes perturbed predictions for every question of the CMRC2018 trial file with their EM/F1, the totals
# (unanswered questions included), NLTK tokenizations of every non-Chinese run of the file, and English cases.
# Needs Debian's python3-nltk. Usage:
#   /usr/bin/python3 scripts/reference/mrc_eval_reference.py ../shared/data/mrc/cmrc2018/cmrc2018_trial.json \
#       plugins/apps/machine_reading_comprehension/tests/data/mrc_eval_golden.json
# or, to score a predictions file ({id: answer}, what `ethost --mode predict --outputs x.json` writes) as the
# official script does:
#   /usr/bin/python3 scripts/reference/mrc_eval_reference.py --score data/mrc/cmrc2018/heldout.json x.json
import json
import random
import re
import string
import sys
from collections import Counter

import nltk


def word_tokenize(s):
    return nltk.word_tokenize(s, preserve_line=True)


# ---- cmrc2018_evaluate.py
SP_CHAR = ['-', ':', '_', '*', '^', '/', '\\', '~', '`', '+', '=',
           '，', '。', '：', '？', '！', '“', '”', '；', '’', '《', '》', '……', '·', '、',
           '「', '」', '（', '）', '－', '～', '『', '』']


def mixed_segmentation(in_str, rm_punc=False):
    in_str = str(in_str).lower().strip()
    segs_out = []
    temp_str = ""
    for char in in_str:
        if rm_punc and char in SP_CHAR:
            continue
        if re.search(r'[\u4e00-\u9fa5]', char) or char in SP_CHAR:
            if temp_str != "":
                segs_out.extend(word_tokenize(temp_str))
                temp_str = ""
            segs_out.append(char)
        else:
            temp_str += char
    if temp_str != "":
        segs_out.extend(word_tokenize(temp_str))
    return segs_out


def remove_punctuation(in_str):
    in_str = str(in_str).lower().strip()
    return ''.join(c for c in in_str if c not in SP_CHAR)


def find_lcs(s1, s2):
    m = [[0 for i in range(len(s2) + 1)] for j in range(len(s1) + 1)]
    mmax = 0
    p = 0
    for i in range(len(s1)):
        for j in range(len(s2)):
            if s1[i] == s2[j]:
                m[i + 1][j + 1] = m[i][j] + 1
                if m[i + 1][j + 1] > mmax:
                    mmax = m[i + 1][j + 1]
                    p = i + 1
    return s1[p - mmax:p], mmax


def calc_f1_score(answers, prediction):
    f1_scores = []
    for ans in answers:
        ans_segs = mixed_segmentation(ans, rm_punc=True)
        prediction_segs = mixed_segmentation(prediction, rm_punc=True)
        lcs, lcs_len = find_lcs(ans_segs, prediction_segs)
        if lcs_len == 0:
            f1_scores.append(0)
            continue
        precision = 1.0 * lcs_len / len(prediction_segs)
        recall = 1.0 * lcs_len / len(ans_segs)
        f1 = (2 * precision * recall) / (precision + recall)
        f1_scores.append(f1)
    return max(f1_scores)


def calc_em_score(answers, prediction):
    em = 0
    for ans in answers:
        if remove_punctuation(ans) == remove_punctuation(prediction):
            em = 1
            break
    return em


def cmrc_evaluate(ground_truth_file, prediction_file):
    f1 = em = total_count = skip_count = 0
    for instance in ground_truth_file["data"]:
        for para in instance["paragraphs"]:
            for qas in para['qas']:
                total_count += 1
                query_id = qas['id'].strip()
                answers = [x["text"] for x in qas['answers']]
                if query_id not in prediction_file:
                    skip_count += 1
                    continue
                prediction = str(prediction_file[query_id])
                f1 += calc_f1_score(answers, prediction)
                em += calc_em_score(answers, prediction)
    return 100.0 * f1 / total_count, 100.0 * em / total_count, total_count, skip_count


# ---- evaluate-v1.1.py
def normalize_answer(s):
    def remove_articles(text):
        return re.sub(r'\b(a|an|the)\b', ' ', text)

    def white_space_fix(text):
        return ' '.join(text.split())

    def remove_punc(text):
        exclude = set(string.punctuation)
        return ''.join(ch for ch in text if ch not in exclude)

    return white_space_fix(remove_articles(remove_punc(s.lower())))


def squad_f1(prediction, ground_truth):
    prediction_tokens = normalize_answer(prediction).split()
    ground_truth_tokens = normalize_answer(ground_truth).split()
    common = Counter(prediction_tokens) & Counter(ground_truth_tokens)
    num_same = sum(common.values())
    if num_same == 0:
        return 0
    precision = 1.0 * num_same / len(prediction_tokens)
    recall = 1.0 * num_same / len(ground_truth_tokens)
    return (2 * precision * recall) / (precision + recall)


def squad_em(prediction, ground_truth):
    return normalize_answer(prediction) == normalize_answer(ground_truth)


# ---- perturbations
def perturb(kind, ans, context, start, rng, others):
    end = start + len(ans)
    if kind == "exact":
        return ans
    if kind == "punct_around":
        return "“" + ans + "”。"
    if kind == "ascii_punct_inside":
        k = max(1, len(ans) // 2)
        return ans[:k] + "-" + ans[k:] + "+"
    if kind == "drop_last":
        return ans[:-1] if len(ans) > 1 else ans + "了"
    if kind == "drop_first":
        return ans[1:] if len(ans) > 1 else "的" + ans
    if kind == "extend_right":
        return context[start:min(len(context), end + rng.randint(1, 8))]
    if kind == "extend_left":
        return context[max(0, start - rng.randint(1, 8)):end]
    if kind == "random_span":
        s = rng.randrange(0, max(1, len(context) - 10))
        return context[s:s + rng.randint(2, 25)]
    if kind == "other_answer":
        return rng.choice(others)
    if kind == "upper_spaces":
        return "  " + ans.upper().replace("", " ").strip() + " \u3000"
    if kind == "empty":
        return ""
    if kind == "unanswered":
        return None
    raise ValueError(kind)


KINDS = ["exact", "punct_around", "ascii_punct_inside", "drop_last", "drop_first", "extend_right",
         "extend_left", "random_span", "other_answer", "upper_spaces", "empty", "unanswered"]

SQUAD_CASES = [
    (["Denver Broncos"], "denver broncos"),
    (["the Denver Broncos"], "Denver Broncos!"),
    (["Denver Broncos", "Broncos"], "The Broncos team"),
    (["an apple a day"], "apple, a day."),
    (["Santa Clara, California"], "Levi's Stadium in Santa Clara"),
    (["1.5 million"], "1.5"),
    (["Theatre"], "the theatre"),
    (["a"], "the"),
    (["New York"], ""),
    (["it's 10:30 p.m."], "Its 1030 pm"),
]


def main():
    if sys.argv[1] == "--score":
        gold = json.load(open(sys.argv[2], encoding="utf-8"))
        preds = json.load(open(sys.argv[3], encoding="utf-8"))
        f1, em, total, skip = cmrc_evaluate(gold, preds)
        print(json.dumps({"AVERAGE": (em + f1) * 0.5, "F1": f1, "EM": em, "TOTAL": total, "SKIP": skip}))
        return
    src, out = sys.argv[1], sys.argv[2]
    gold = json.load(open(src, encoding="utf-8"))
    rng = random.Random(20261202)
    qs = [(p["context"], q) for a in gold["data"] for p in a["paragraphs"] for q in p["qas"]]
    others = [q["answers"][0]["text"] for _, q in qs]
    cases, preds = [], {}
    for i, (context, q) in enumerate(qs):
        answers = [x["text"] for x in q["answers"]]
        start = q["answers"][0]["answer_start"]
        if context[start:start + len(answers[0])] != answers[0]:
            start = max(0, context.find(answers[0]))
        kind = KINDS[i % len(KINDS)]
        pred = perturb(kind, answers[0], context, start, rng, others)
        case = {"id": q["id"], "kind": kind, "answers": answers, "prediction": pred}
        if pred is not None:
            preds[q["id"]] = pred
            case["em"] = calc_em_score(answers, pred)
            case["f1"] = calc_f1_score(answers, pred)
            case["prediction_segments"] = mixed_segmentation(pred, rm_punc=True)
        cases.append(case)
    f1, em, total, skip = cmrc_evaluate(gold, preds)
    runs = set()
    for context, q in qs:
        for text in (context, q["question"], q["answers"][0]["text"]):
            cur = ""
            for ch in text.lower().strip():
                if re.search(r'[\u4e00-\u9fa5]', ch) or ch in SP_CHAR:
                    if cur:
                        runs.add(cur)
                    cur = ""
                else:
                    cur += ch
            if cur:
                runs.add(cur)
    extra = ["hello, world.", "(1546)", "don't stop", "u.s. army", 'a "quote" here', "3.5%", "e-mail", "c++ 11",
             "cannot gonna wanna go", "'tis", "it's ok... really?!", "[a] {b} <c>", "x--y", "price: $5, 6:30",
             "rock 'n' roll", "«guillemets» „low“", "end.)", "i'm we'll they've", "#tag @user & more; yes*"]
    nltk_cases = [[r, word_tokenize(r)] for r in sorted(runs) + extra]
    squad = []
    for answers, pred in SQUAD_CASES:
        squad.append({"answers": answers, "prediction": pred, "normalized": normalize_answer(pred),
                      "em": float(max(squad_em(pred, a) for a in answers)),
                      "f1": float(max(squad_f1(pred, a) for a in answers))})
    doc = {"generator": "scripts/reference/mrc_eval_reference.py (official CMRC2018 / SQuAD v1.1 rules, nltk "
                        + nltk.__version__ + ")",
           "source": "shared/data/mrc/cmrc2018/cmrc2018_trial.json",
           "cmrc": {"cases": cases, "totals": {"F1": f1, "EM": em, "TOTAL": total, "SKIP": skip}},
           "nltk": nltk_cases, "squad": squad}
    with open(out, "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False, indent=0)
        f.write("\n")
    print("cases", len(cases), "F1", f1, "EM", em, "skip", skip, "nltk runs", len(nltk_cases))


if __name__ == "__main__":
    main()
