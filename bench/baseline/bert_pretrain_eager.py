#!/usr/bin/env python3
# bert_pretrain_eager.py: the Python baseline of scripts/bench-pretrain.sh — an HF-style BertForMaskedLM
# (transformers 4.30's layout: the prediction-head transform and the tied decoder on every position, as
# BertForPreTraining/BertForMaskedLM compute it) trained with torch.optim.AdamW, in plain PyTorch eager on
# the same torch as ethost. Batches are pre-made random ids with 15% targets (no tokenization or masking is
# timed: that favours the baseline).
"""Usage: bert_pretrain_eager.py --layers 4 --hidden 256 --heads 4 --intermediate 512 --vocab 21128
                                --batch 64 --seq 128 --steps 30 --warmup 5 --threads 2 [--lr 1e-3]
Prints one JSON line: {"tokens_per_sec": ..., "samples_per_sec": ..., "seconds_per_step": ...}."""
import argparse
import json
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bert_eager import Embeddings, Encoder  # noqa: E402  (the baseline BERT blocks, HF numerics)


class BertForMaskedLM(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embeddings = Embeddings(c)
        self.encoder = Encoder(c)
        h = c["hidden_size"]
        self.dense = nn.Linear(h, h)
        self.LayerNorm = nn.LayerNorm(h, eps=c["layer_norm_eps"])
        self.bias = nn.Parameter(torch.zeros(c["vocab_size"]))

    def forward(self, input_ids, attention_mask, token_type_ids, labels):
        mask = (1.0 - attention_mask[:, None, None, :].float()) * torch.finfo(torch.float32).min
        hidden = self.encoder(self.embeddings(input_ids, token_type_ids), mask)
        t = self.LayerNorm(F.gelu(self.dense(hidden)))
        logits = F.linear(t, self.embeddings.word_embeddings.weight, self.bias)  # tied decoder, every position
        return F.cross_entropy(logits.view(-1, logits.size(-1)), labels.view(-1))  # ignore_index -100


def main():
    p = argparse.ArgumentParser()
    for k, d in [("layers", 4), ("hidden", 256), ("heads", 4), ("intermediate", 512), ("vocab", 21128),
                 ("batch", 64), ("seq", 128), ("steps", 30), ("warmup", 5), ("threads", 2)]:
        p.add_argument("--" + k, type=int, default=d)
    p.add_argument("--lr", type=float, default=1e-3)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    c = {"hidden_size": a.hidden, "num_hidden_layers": a.layers, "num_attention_heads": a.heads,
         "intermediate_size": a.intermediate, "vocab_size": a.vocab, "max_position_embeddings": a.seq,
         "type_vocab_size": 2, "layer_norm_eps": 1e-12, "hidden_dropout_prob": 0.1,
         "attention_probs_dropout_prob": 0.1, "hidden_act": "gelu", "pad_token_id": 0}
    model = BertForMaskedLM(c)
    model.train()
    no_decay = ["bias", "LayerNorm.weight"]
    groups = [{"params": [q for n, q in model.named_parameters() if not any(x in n for x in no_decay)],
               "weight_decay": 0.01},
              {"params": [q for n, q in model.named_parameters() if any(x in n for x in no_decay)],
               "weight_decay": 0.0}]
    opt = torch.optim.AdamW(groups, lr=a.lr)
    batches = []
    for _ in range(4):
        ids = torch.randint(1000, a.vocab, (a.batch, a.seq))
        labels = torch.where(torch.rand(a.batch, a.seq) < 0.15, ids, torch.full_like(ids, -100))
        batches.append((ids, torch.ones_like(ids), torch.zeros_like(ids), labels))
    t0 = None
    for step in range(a.warmup + a.steps):
        if step == a.warmup:
            t0 = time.perf_counter()
        ids, mask, types, labels = batches[step % len(batches)]
        opt.zero_grad()
        loss = model(ids, mask, types, labels)
        loss.backward()
        opt.step()
    secs = (time.perf_counter() - t0) / a.steps
    print(json.dumps({"tokens_per_sec": a.batch * a.seq / secs, "samples_per_sec": a.batch / secs,
                      "seconds_per_step": secs, "loss": float(loss)}))


if __name__ == "__main__":
    main()
