#!/usr/bin/env python3
# bert_distill_eager.py: the Python baseline of scripts/bench-distill.sh — vanilla KD as EasyNLP computes it, in
# plain PyTorch eager on the same torch as ethost: an HF-style teacher BertForSequenceClassification (eval, no
# grad) and a student with fewer layers, loss alpha * T^2 * kl_div(batchmean) + (1 - alpha) * cross_entropy,
# torch.optim.AdamW. Batches: the given texts' lengths (characters + [CLS]/[SEP], capped at --seq; Chinese
# WordPiece is one token per character), shuffled, padded to each batch's longest, random ids (no tokenization
# is timed: that favours the baseline).
"""Usage: bert_distill_eager.py --texts FILE --teacher_layers 4 --student_layers 1 --hidden 256 --heads 4
                               --intermediate 512 --vocab 11583 --batch 32 --seq 96 --steps 40 --warmup 5
Prints one JSON line: {"samples_per_sec": ..., "tokens_per_sec": ..., "seconds_per_step": ...}."""
import argparse
import json
import os
import random
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bert_eager import BertForSequenceClassification  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--texts", required=True)
    for k, d in [("teacher_layers", 4), ("student_layers", 1), ("hidden", 256), ("heads", 4),
                 ("intermediate", 512), ("vocab", 11583), ("batch", 32), ("seq", 96), ("steps", 40),
                 ("warmup", 5), ("threads", 2)]:
        p.add_argument("--" + k, type=int, default=d)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    random.seed(0)

    def config(layers):
        return {"hidden_size": a.hidden, "num_hidden_layers": layers, "num_attention_heads": a.heads,
                "intermediate_size": a.intermediate, "vocab_size": a.vocab, "max_position_embeddings": 128,
                "type_vocab_size": 2, "layer_norm_eps": 1e-12, "hidden_dropout_prob": 0.1,
                "attention_probs_dropout_prob": 0.1, "hidden_act": "gelu", "pad_token_id": 0, "num_labels": 2}

    teacher = BertForSequenceClassification(config(a.teacher_layers)).eval()
    student = BertForSequenceClassification(config(a.student_layers)).train()
    opt = torch.optim.AdamW(student.parameters(), lr=5e-4, weight_decay=0.01)
    lengths = [min(len(line.split("\t")[0]) + 2, a.seq) for line in open(a.texts, encoding="utf-8") if line.strip()]
    T, alpha = 5.0, 0.2
    t0, tokens = None, 0
    for step in range(a.warmup + a.steps):
        if step == a.warmup:
            t0, tokens = time.perf_counter(), 0
        ls = random.sample(lengths, a.batch)
        L = max(ls)
        ids = torch.randint(1000, a.vocab, (a.batch, L))
        mask = torch.tensor([[1] * n + [0] * (L - n) for n in ls])
        types = torch.zeros_like(ids)
        y = torch.randint(0, 2, (a.batch,))
        with torch.no_grad():
            t_logits, _ = teacher(ids, mask, types)
        s_logits, ce = student(ids, mask, types, y)
        kd = F.kl_div(F.log_softmax(s_logits / T, -1), F.softmax(t_logits / T, -1), reduction="batchmean") * T * T
        loss = alpha * kd + (1 - alpha) * ce
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(student.parameters(), 1.0)
        opt.step()
        tokens += sum(ls)
    secs = (time.perf_counter() - t0) / a.steps
    print(json.dumps({"samples_per_sec": a.batch / secs, "tokens_per_sec": tokens / a.steps / secs,
                      "seconds_per_step": secs}))


if __name__ == "__main__":
    main()
