#!/usr/bin/python3
# onednn_vs_openblas.py: oneDNN (mkldnn_linear) vs OpenBLAS (F.linear) on BERT's GEMM shapes, fp32 and bf16, one process,
# side by side per shape, best of N. Usage: /usr/bin/python3 bench/onednn_vs_openblas.py [threads]  (docs/performance.md)
import time, torch, sys
torch.set_num_threads(int(sys.argv[1]) if len(sys.argv) > 1 else 2)
shapes = {  # (tokens, in, out): tiny = 4x256 (FFN 1024), base = 12x768 (FFN 3072); batch 32 x seq 128 = 4096 tokens
  "tiny qkv/out 4096x256x256": (4096, 256, 256), "tiny ffn-up 4096x256x1024": (4096, 256, 1024),
  "tiny ffn-down 4096x1024x256": (4096, 1024, 256), "base qkv/out 1024x768x768": (1024, 768, 768),
  "base ffn-up 1024x768x3072": (1024, 768, 3072), "base ffn-down 1024x3072x768": (1024, 3072, 768)}
def bench(f, reps=5):
    f(); best = 1e9
    for _ in range(reps):
        t = time.perf_counter(); f(); best = min(best, time.perf_counter() - t)
    return best
# Warm up the thread pools of both libraries before the first timed shape.
for _ in range(3):
    torch.nn.functional.linear(torch.randn(512, 512), torch.randn(512, 512))
    torch._C._nn.mkldnn_linear(torch.randn(512, 512).to_mkldnn(), torch.randn(512, 512).to_mkldnn(), None)
print("shape | dtype | OpenBLAS/ATen addmm GFLOP/s | oneDNN mkldnn_linear GFLOP/s | oneDNN/ATen")
for name, (m, k, n) in shapes.items():
    for dt in (torch.float32, torch.bfloat16):
        x = torch.randn(m, k).to(dt); w = torch.randn(n, k).to(dt); b = torch.randn(n).to(dt)
        reps = 5 if dt == torch.float32 else 1
        t_aten = bench(lambda: torch.nn.functional.linear(x, w, b), reps)
        try:
            xm = x.to_mkldnn(); wm = w.to_mkldnn(); bm = b.to_mkldnn()
            t_dnnl = bench(lambda: torch._C._nn.mkldnn_linear(xm, wm, bm), reps)
        except Exception as e:
            t_dnnl = float("nan"); print("  oneDNN failed:", str(e).splitlines()[0])
        fl = 2 * m * k * n / 1e9
        print(f"{name} | {str(dt)[6:]} | {fl/t_aten:.1f} | {fl/t_dnnl:.1f} | {t_aten/t_dnnl:.2f}x")
