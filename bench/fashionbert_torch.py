# fashionbert_torch.py: the Python baseline of scripts/bench-fashionbert.sh — (1) patch features the way a
# PyTorch user makes them (PIL decode, antialiased bilinear resize, centre crop, ImageNet normalisation, patches)
# in one process; (2) ITM scoring of image-text pairs with an eager PyTorch FashionBERT (HF BERT layout) loaded
# from an ethost model directory, batches like ethost's evaluation. Prints images/s and pairs/s.
import csv, json, os, struct, sys, time

import numpy as np
import torch
import torch.nn.functional as F
from PIL import Image


def load_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        buf = f.read()
    out = {}
    for k, v in header.items():
        if k == "__metadata__" or v["dtype"] != "F32":
            continue
        a, b = v["data_offsets"]
        out[k] = torch.frombuffer(bytearray(buf[a:b]), dtype=torch.float32).reshape(v["shape"])
    return out


def features(table, size, grid, limit):
    root = os.path.dirname(table)
    rows = list(csv.DictReader(open(table, encoding="utf-8"), delimiter="\t"))[:limit]
    mean, std = np.array([0.485, 0.456, 0.406], np.float32), np.array([0.229, 0.224, 0.225], np.float32)
    t0 = time.perf_counter()
    out = []
    for r in rows:
        im = Image.open(os.path.join(root, r["image"])).convert("RGB")
        w, h = im.size
        s = size / min(w, h)
        im = im.resize((max(size, round(w * s)), max(size, round(h * s))), Image.BILINEAR)
        l, t = (im.size[0] - size) // 2, (im.size[1] - size) // 2
        x = (np.asarray(im.crop((l, t, l + size, t + size)), np.float32) / 255.0 - mean) / std
        p = size // grid
        x = x.transpose(2, 0, 1).reshape(3, grid, p, grid, p).transpose(1, 3, 0, 2, 4).reshape(grid * grid, -1)
        out.append(x)
    return len(rows) / (time.perf_counter() - t0)


def scoring(model_dir, batch, batches, text_len):
    cfg = json.load(open(os.path.join(model_dir, "config.json")))
    W = load_safetensors(os.path.join(model_dir, "model.safetensors"))
    H, nh, L = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_hidden_layers"]
    P, D = cfg["num_patches"], cfg["patch_feature_dim"]
    eps = cfg["layer_norm_eps"]

    def ln(x, p):
        return F.layer_norm(x, (H,), W[p + ".weight"], W[p + ".bias"], eps)

    def lin(x, p):
        return F.linear(x, W[p + ".weight"], W[p + ".bias"])

    def forward(ids, mask, im):
        B, T = ids.shape
        t = W["bert.embeddings.word_embeddings.weight"][ids] + W["bert.embeddings.position_embeddings.weight"][:T]
        t = ln(t + W["bert.embeddings.token_type_embeddings.weight"][0], "bert.embeddings.LayerNorm")
        i = lin(im, "patch_embeddings.projection") + W["patch_embeddings.position_embeddings.weight"][:P]
        i = ln(i + W["patch_embeddings.modality_embeddings.weight"][1], "patch_embeddings.LayerNorm")
        h = torch.cat([t, i], 1)
        m = torch.cat([mask, torch.ones(B, P, dtype=mask.dtype)], 1)
        ext = (1.0 - m[:, None, None, :].float()) * torch.finfo(torch.float32).min
        for l in range(L):
            p = f"bert.encoder.layer.{l}."
            q, k, v = [lin(h, p + "attention.self." + n).view(B, -1, nh, H // nh).transpose(1, 2)
                       for n in ("query", "key", "value")]
            a = torch.softmax(q @ k.transpose(-1, -2) / (H // nh) ** 0.5 + ext, -1) @ v
            h = ln(lin(a.transpose(1, 2).reshape(B, -1, H), p + "attention.output.dense") + h,
                   p + "attention.output.LayerNorm")
            h = ln(lin(F.gelu(lin(h, p + "intermediate.dense")), p + "output.dense") + h, p + "output.LayerNorm")
        pooled = torch.tanh(lin(h[:, 0], "bert.pooler.dense"))
        return torch.softmax(lin(pooled, "cls.seq_relationship"), -1)[:, 0]

    g = torch.Generator().manual_seed(0)
    ids = torch.randint(1000, cfg["vocab_size"], (batch, text_len), generator=g)
    mask = torch.ones(batch, text_len, dtype=torch.long)
    im = torch.randn(batch, P, D, generator=g)
    with torch.no_grad():
        forward(ids, mask, im)
        t0 = time.perf_counter()
        for _ in range(batches):
            forward(ids, mask, im)
    return batch * batches / (time.perf_counter() - t0)


if __name__ == "__main__":
    table, model_dir, size, grid, limit, threads = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), \
        int(sys.argv[5]), int(sys.argv[6])
    torch.set_num_threads(threads)
    print(f"python: features {features(table, size, grid, limit):.1f} images/s (PIL + numpy, one process)")
    print(f"python: scoring {scoring(model_dir, 202, 30, 24):.1f} pairs/s (PyTorch {torch.__version__} eager, "
          f"{threads} threads, batches of 202, 24 text tokens)")
