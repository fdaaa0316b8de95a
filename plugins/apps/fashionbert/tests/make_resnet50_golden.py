#!/usr/bin/python3
"""make_resnet50_golden.py: golden data for fashionbert_resnet_test.cpp (the C++ ResNet-50 vs torchvision).

Usage: make_resnet50_golden.py OUT_DIR SEED [THREADS]

THREADS (default 1) is torch's intra-op thread count: the C++ side should use the same, since convolutions
sum in a thread-count dependent order (about 1e-4 apart here across counts; bit-identical at equal counts).

Writes to OUT_DIR:
  resnet50.pth                  torch.save(state_dict) of a seeded torchvision resnet50 (random BatchNorms)
  resnet50.safetensors          the same tensors, written by hand (the safetensors package is not needed)
  resnet50_missing.pth          the state dict without layer4.2.bn3.weight (an error case)
  golden.pt                     torch.save of a plain dict: x28 [4,3,28,28], y28 [4,2048], x64 [2,3,64,64],
                                y64 [2,2048] (y = the pooled layer4 features, what fc would see)
"""
import json
import os
import struct
import sys

import torch
import torchvision


def randomise_batch_norms(model):
    # Fresh BatchNorms are the identity in eval mode. Give them random affine parameters, calibrate their running
    # statistics on a random batch, then jitter those. Factors stay near 1 so that activations stay O(1) through
    # 50 layers (large activations would make float32 rounding exceed the test's absolute tolerance).
    bns = [m for m in model.modules() if isinstance(m, torch.nn.BatchNorm2d)]
    with torch.no_grad():
        for m in bns:
            m.weight.uniform_(0.8, 1.2)
            m.bias.normal_().mul_(0.1)
            m.momentum = None  # running stats = the cumulative average over the calibration forward
        model.train()
        model(torch.randn(8, 3, 64, 64))
        for m in bns:
            m.momentum = 0.1
            m.running_mean.add_(torch.randn_like(m.running_mean) * m.running_var.sqrt() * 0.1)
            m.running_var.mul_(torch.empty_like(m.running_var).uniform_(0.8, 1.25))


def write_safetensors(path, tensors):
    # 8-byte little-endian header length, JSON header {name: {dtype, shape, data_offsets}}, then raw bytes.
    dtypes = {torch.float32: "F32", torch.int64: "I64"}
    header, blobs, offset = {}, [], 0
    for name, t in tensors.items():
        data = t.detach().contiguous().numpy().tobytes()
        header[name] = {"dtype": dtypes[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # pad like the reference writer
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for data in blobs:
            f.write(data)


def main():
    out_dir, seed = sys.argv[1], int(sys.argv[2])
    torch.set_num_threads(int(sys.argv[3]) if len(sys.argv) > 3 else 1)
    torch.manual_seed(seed)
    model = torchvision.models.resnet50(weights=None)
    randomise_batch_norms(model)
    model.eval()

    state = model.state_dict()
    torch.save(state, os.path.join(out_dir, "resnet50.pth"))
    write_safetensors(os.path.join(out_dir, "resnet50.safetensors"), state)
    missing = {k: v for k, v in state.items() if k != "layer4.2.bn3.weight"}
    torch.save(missing, os.path.join(out_dir, "resnet50_missing.pth"))

    features = torch.nn.Sequential(*list(model.children())[:-1])  # everything but fc
    golden = {}
    with torch.no_grad():
        for name, shape in (("28", (4, 3, 28, 28)), ("64", (2, 3, 64, 64))):
            x = torch.randn(*shape)
            golden["x" + name] = x
            golden["y" + name] = torch.flatten(features(x), 1).contiguous()
    torch.save(golden, os.path.join(out_dir, "golden.pt"))


if __name__ == "__main__":
    main()
