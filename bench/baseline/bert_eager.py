#!/usr/bin/env python3
# bert_eager.py: a plain, idiomatic PyTorch eager BERT for sequence or token classification and question answering — the baseline of
# bench/bert_bench.cpp (ethost-bench). transformers is not installed; this is written in this project.
"""Baseline for ethost-bench: the same architecture and numerics as HF BertForSequenceClassification
(transformers 4.30): nn.Embedding / nn.Linear / nn.LayerNorm / nn.Dropout, F.gelu, softmax over scores plus HF's
additive mask ((1 - mask) * finfo(dtype).min), cross-entropy loss, torch.optim.AdamW with HF's no-decay rule.

Usage: bert_eager.py JOB.json            (parity and the runs of JOB.json, results written to its "out")
       bert_eager.py --serve JOB.json    (iterations on request, so that ethost-bench can alternate them with its
                                          own: stdin lines "setup fp32|bf16 train|infer|latency", "step" (answers
                                          the iteration's seconds), "quit"; "ready"/"ok" acknowledge)
JOB.json (written by ethost-bench):
  model_dir   config.json + model.safetensors written by ethost's model->save(dir) (HF names)
  inputs      a safetensors file with <batch>.input_ids / .attention_mask / .token_type_ids / .labels for the
              batches "parity", "train0".."trainK", "infer", "latency"
  task        "sequence" (BertForSequenceClassification, labels [B]), "qa" (BertForQuestionAnswering, labels
              [B, 2]: start and end positions) or "token" (BertForTokenClassification,
              labels [B, T] with -100 on unlabelled tokens)
  threads     torch.set_num_threads
  optimizer   {learning_rate, weight_decay, beta1, beta2, eps, no_decay}
  parity      true: eval logits of the parity batch, and two training losses (dropout 0, one AdamW step between)
  runs        [{precision: "fp32"|"bf16", train: {warmup, iters}, infer: {...}, latency: {...}}]
  out         where to write the result JSON
The safetensors files are parsed here with json + struct + torch.frombuffer (no safetensors package).
"""
import gc
import json
import math
import struct
import sys
import time
from contextlib import nullcontext

import torch
import torch.nn as nn
import torch.nn.functional as F

DTYPES = {"F32": torch.float32, "F64": torch.float64, "F16": torch.float16, "BF16": torch.bfloat16,
          "I64": torch.int64, "I32": torch.int32, "I16": torch.int16, "I8": torch.int8, "U8": torch.uint8,
          "BOOL": torch.bool}


def read_safetensors(path):
    with open(path, "rb") as f:
        data = bytearray(f.read())  # writable: torch.frombuffer warns on read-only buffers
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n].decode("utf-8"))
    header.pop("__metadata__", None)
    base = 8 + n
    tensors = {}
    for name, info in header.items():
        begin, end = info["data_offsets"]
        dtype = DTYPES[info["dtype"]]
        size = torch.empty((), dtype=dtype).element_size()
        count = (end - begin) // size
        if count == 0:
            t = torch.empty(info["shape"], dtype=dtype)
        else:
            t = torch.frombuffer(data, dtype=dtype, count=count, offset=base + begin).reshape(info["shape"]).clone()
        tensors[name] = t
    return tensors


# ----------------------------------------------------------------------------------------------- the model
class Embeddings(nn.Module):
    def __init__(self, c):
        super().__init__()
        h = c["hidden_size"]
        self.word_embeddings = nn.Embedding(c["vocab_size"], h, padding_idx=c.get("pad_token_id", 0))
        self.position_embeddings = nn.Embedding(c["max_position_embeddings"], h)
        self.token_type_embeddings = nn.Embedding(c["type_vocab_size"], h)
        self.LayerNorm = nn.LayerNorm(h, eps=c["layer_norm_eps"])
        self.dropout = nn.Dropout(c["hidden_dropout_prob"])
        self.register_buffer("position_ids", torch.arange(c["max_position_embeddings"]).expand((1, -1)),
                             persistent=False)

    def forward(self, input_ids, token_type_ids):
        position_ids = self.position_ids[:, :input_ids.size(1)]
        x = self.word_embeddings(input_ids) + self.token_type_embeddings(token_type_ids)
        x = x + self.position_embeddings(position_ids)
        return self.dropout(self.LayerNorm(x))


class SelfAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        h = c["hidden_size"]
        self.heads = c["num_attention_heads"]
        self.head_dim = h // self.heads
        self.query = nn.Linear(h, h)
        self.key = nn.Linear(h, h)
        self.value = nn.Linear(h, h)
        self.dropout = nn.Dropout(c["attention_probs_dropout_prob"])

    def split(self, x):
        return x.view(x.size(0), x.size(1), self.heads, self.head_dim).permute(0, 2, 1, 3)

    def forward(self, hidden, mask):
        q, k, v = self.split(self.query(hidden)), self.split(self.key(hidden)), self.split(self.value(hidden))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        scores = scores + mask
        probs = self.dropout(F.softmax(scores, dim=-1))
        ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
        return ctx.view(ctx.size(0), ctx.size(1), -1)


class ResidualOutput(nn.Module):  # HF BertSelfOutput / BertOutput
    def __init__(self, c, d_in):
        super().__init__()
        self.dense = nn.Linear(d_in, c["hidden_size"])
        self.LayerNorm = nn.LayerNorm(c["hidden_size"], eps=c["layer_norm_eps"])
        self.dropout = nn.Dropout(c["hidden_dropout_prob"])

    def forward(self, x, residual):
        return self.LayerNorm(self.dropout(self.dense(x)) + residual)


class Attention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.self = SelfAttention(c)
        self.output = ResidualOutput(c, c["hidden_size"])

    def forward(self, hidden, mask):
        return self.output(self.self(hidden, mask), hidden)


class Intermediate(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c["hidden_size"], c["intermediate_size"])

    def forward(self, x):
        return F.gelu(self.dense(x))


class Layer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.attention = Attention(c)
        self.intermediate = Intermediate(c)
        self.output = ResidualOutput(c, c["intermediate_size"])

    def forward(self, hidden, mask):
        a = self.attention(hidden, mask)
        return self.output(self.intermediate(a), a)


class Encoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.layer = nn.ModuleList([Layer(c) for _ in range(c["num_hidden_layers"])])

    def forward(self, hidden, mask):
        for layer in self.layer:
            hidden = layer(hidden, mask)
        return hidden


class Pooler(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c["hidden_size"], c["hidden_size"])

    def forward(self, hidden):
        return torch.tanh(self.dense(hidden[:, 0]))


class Bert(nn.Module):
    def __init__(self, c, pooler=True):  # HF add_pooling_layer (False for token classification)
        super().__init__()
        self.embeddings = Embeddings(c)
        self.encoder = Encoder(c)
        self.pooler = Pooler(c) if pooler else None

    def forward(self, input_ids, attention_mask, token_type_ids):
        """The last hidden state [B, T, H] and the pooled output [B, H] (None without a pooler)."""
        dtype = next(self.parameters()).dtype  # HF: self.dtype (fp32 master weights, also under autocast)
        mask = (1.0 - attention_mask[:, None, None, :].to(dtype)) * torch.finfo(dtype).min
        hidden = self.encoder(self.embeddings(input_ids, token_type_ids), mask)
        return hidden, self.pooler(hidden) if self.pooler is not None else None


class BertForSequenceClassification(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.num_labels = len(c.get("id2label") or {}) or c.get("num_labels", 2)
        self.bert = Bert(c)
        p = c.get("classifier_dropout")
        self.dropout = nn.Dropout(c["hidden_dropout_prob"] if p is None else p)
        self.classifier = nn.Linear(c["hidden_size"], self.num_labels)

    def forward(self, input_ids, attention_mask, token_type_ids, labels=None):
        logits = self.classifier(self.dropout(self.bert(input_ids, attention_mask, token_type_ids)[1]))
        if labels is None:
            return logits, None
        return logits, F.cross_entropy(logits.view(-1, self.num_labels), labels.view(-1))


class BertForTokenClassification(nn.Module):
    """HF BertForTokenClassification: no pooler, the classifier on every token, cross-entropy over the labelled
    tokens (label -100: ignored)."""

    def __init__(self, c):
        super().__init__()
        self.num_labels = len(c.get("id2label") or {}) or c.get("num_labels", 2)
        self.bert = Bert(c, pooler=False)
        p = c.get("classifier_dropout")
        self.dropout = nn.Dropout(c["hidden_dropout_prob"] if p is None else p)
        self.classifier = nn.Linear(c["hidden_size"], self.num_labels)

    def forward(self, input_ids, attention_mask, token_type_ids, labels=None):
        logits = self.classifier(self.dropout(self.bert(input_ids, attention_mask, token_type_ids)[0]))
        if labels is None:
            return logits, None
        return logits, F.cross_entropy(logits.view(-1, self.num_labels), labels.view(-1), ignore_index=-100)


class BertForQuestionAnswering(nn.Module):
    """HF BertForQuestionAnswering: no pooler, qa_outputs (2 wide) on every token; labels [B, 2] are the start
    and end positions; positions are clamped to [0, T] and T is ignored, the loss is the mean of the two."""

    def __init__(self, c):
        super().__init__()
        self.bert = Bert(c, pooler=False)
        self.qa_outputs = nn.Linear(c["hidden_size"], 2)

    def forward(self, input_ids, attention_mask, token_type_ids, labels=None):
        logits = self.qa_outputs(self.bert(input_ids, attention_mask, token_type_ids)[0])
        start, end = logits[..., 0].contiguous(), logits[..., 1].contiguous()
        if labels is None:
            return logits, None
        T = start.size(1)
        ls = F.cross_entropy(start, labels[:, 0].clamp(0, T), ignore_index=T)
        le = F.cross_entropy(end, labels[:, 1].clamp(0, T), ignore_index=T)
        return logits, (ls + le) / 2


TASK = {"task": "sequence"}  # the job's "task": sequence (classification of the text) or token (of every token)


def build_model(model_dir, dropout=None):
    with open(model_dir + "/config.json") as f:
        c = json.load(f)
    if dropout is not None:
        c["hidden_dropout_prob"] = c["attention_probs_dropout_prob"] = dropout
    model = {"token": BertForTokenClassification, "qa": BertForQuestionAnswering}.get(
        TASK["task"], BertForSequenceClassification)(c)
    weights = read_safetensors(model_dir + "/model.safetensors")
    weights = {k: v for k, v in weights.items() if not k.endswith("position_ids")}  # a buffer, not a weight
    model.load_state_dict(weights, strict=True)
    return model


def make_optimizer(model, hp):
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        (no_decay if any(nd in name for nd in hp["no_decay"]) else decay).append(p)
    groups = [{"params": decay, "weight_decay": hp["weight_decay"]}, {"params": no_decay, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=hp["learning_rate"], betas=(hp["beta1"], hp["beta2"]), eps=hp["eps"])


# ------------------------------------------------------------------------------------------ the measurements
def batch(inputs, name, labels=True):
    b = {k: inputs["%s.%s" % (name, k)] for k in ("input_ids", "attention_mask", "token_type_ids")}
    if labels:
        b["labels"] = inputs[name + ".labels"]
    return b


def autocast(precision):
    return torch.autocast("cpu", dtype=torch.bfloat16) if precision == "bf16" else nullcontext()


def train_step(model, opt, b, precision):
    opt.zero_grad()
    with autocast(precision):
        _, loss = model(**b)
    loss.backward()
    opt.step()
    return loss


def timed(fn, warmup, iters):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(iters):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return times


def parity(job, inputs):
    model = build_model(job["model_dir"]).eval()
    with torch.no_grad():
        logits, _ = model(**batch(inputs, "parity", labels=False))
    # Training parity: dropout 0, two forward passes with one AdamW step in between.
    model = build_model(job["model_dir"], dropout=0.0).train()
    opt = make_optimizer(model, job["optimizer"])
    b = batch(inputs, "parity")
    loss0 = train_step(model, opt, b, "fp32").item()
    opt.zero_grad()
    _, loss1 = model(**b)
    return {"logits": logits.flatten().tolist(), "train_losses": [loss0, loss1.item()]}


def measure(job, inputs, run):
    precision = run["precision"]
    out = {"precision": precision}
    train_batches = sorted({k.split(".")[0] for k in inputs if k.startswith("train")})
    if run["train"]["iters"] > 0:
        model = build_model(job["model_dir"]).train()
        opt = make_optimizer(model, job["optimizer"])
        batches = [batch(inputs, n) for n in train_batches]
        state = {"i": 0}

        def step():
            train_step(model, opt, batches[state["i"] % len(batches)], precision)
            state["i"] += 1

        out["train_step_s"] = timed(step, run["train"]["warmup"], run["train"]["iters"])
        del model, opt
    model = build_model(job["model_dir"]).eval()
    for kind in ("infer", "latency"):
        if run[kind]["iters"] <= 0:
            continue
        b = batch(inputs, kind, labels=False)

        def forward():
            with torch.no_grad(), autocast(precision):
                model(**b)

        out[kind + "_s"] = timed(forward, run[kind]["warmup"], run[kind]["iters"])
    return out


def serve(job, inputs):
    """One iteration per "step" request, timed here (the pipe round trip is not in the time)."""
    train_batches = sorted({k.split(".")[0] for k in inputs if k.startswith("train")})
    fn = None
    print("ready", flush=True)
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        if words[0] == "quit":
            break
        if words[0] == "setup":
            precision, kind = words[1], words[2]
            fn = model = opt = batches = state = b = None  # free the previous model before building the next
            gc.collect()
            if kind == "train":
                model = build_model(job["model_dir"]).train()
                opt = make_optimizer(model, job["optimizer"])
                batches = [batch(inputs, n) for n in train_batches]
                state = {"i": 0}

                def fn(model=model, opt=opt, batches=batches, state=state, precision=precision):
                    train_step(model, opt, batches[state["i"] % len(batches)], precision)
                    state["i"] += 1
            else:
                model = build_model(job["model_dir"]).eval()
                b = batch(inputs, kind, labels=False)

                def fn(model=model, b=b, precision=precision):
                    with torch.no_grad(), autocast(precision):
                        model(**b)
            print("ok", flush=True)
        elif words[0] == "step":
            t0 = time.perf_counter()
            fn()
            print(repr(time.perf_counter() - t0), flush=True)
        else:
            print("error unknown command " + words[0], flush=True)
    return 0


def main():
    if sys.argv[1] == "--serve":
        with open(sys.argv[2]) as f:
            job = json.load(f)
        TASK["task"] = job.get("task", "sequence")
        torch.set_num_threads(job["threads"])
        torch.manual_seed(0)
        return serve(job, read_safetensors(job["inputs"]))
    with open(sys.argv[1]) as f:
        job = json.load(f)
    TASK["task"] = job.get("task", "sequence")
    torch.set_num_threads(job["threads"])
    torch.manual_seed(0)
    inputs = read_safetensors(job["inputs"])
    result = {"python": sys.version.split()[0], "torch": torch.__version__, "threads": torch.get_num_threads()}
    if job.get("parity"):
        result["parity"] = parity(job, inputs)
    result["runs"] = [measure(job, inputs, run) for run in job.get("runs", [])]
    with open(job["out"], "w") as f:
        json.dump(result, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
