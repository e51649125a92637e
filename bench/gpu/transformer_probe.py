#!/usr/bin/env python3
"""Measures, on one GPU, what trinity's parallel training model prices, so the model meets a run it was not
fitted on (docs/parallelism.md):

 1. bf16 GEMM rates by shape (cuBLAS through torch.matmul): the shapes a transformer layer's four matrix
    multiplies take under t-way tensor parallelism. plan/detail/measured_gemm.hpp is generated from them and
    sets the H100 preset's GEMM efficiency curve.
 2. A stack of GPT layers laid out as Megatron-LM lays them out (Korthikanti et al. 2022, section 4.1: two
    LayerNorms, QKV, scores with their softmax and dropout, attention over V, projection, dropout, MLP with
    GeLU, dropout), trained in bf16 with no recomputation, with selective recomputation (the core attention
    checkpointed, as Megatron does) and with full recomputation (every layer checkpointed). For each it records
    the bytes the forward pass leaves for the backward (torch.cuda.memory_allocated before and after, the
    output itself taken off), the peak, and the forward and forward+backward times.

The JSON goes to stdout or to the file named by --out. Needs PyTorch and a CUDA device; this project's CI has
neither, so its tests read the recorded file (bench/results/transformer-probe-h100.json).
"""
import argparse
import datetime
import json
import math
import sys

import torch
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

import gpu_timing


def timed(fn, warmup=3, reps=10):
    return gpu_timing.median_seconds(fn, warmup, reps)


def gemm_sweep():
    shapes = set()
    # The layer's GEMMs (tokens M, output N, reduction K) for the hidden sizes of the published runs trinity
    # validates against, at tensor-parallel widths 1-8.
    for h in (2048, 2304, 3072, 4096, 6144, 8192, 10240, 12288, 16384, 20480, 25600):
        for t in (1, 2, 4, 8):
            for m in (2048, 8192):
                shapes.add((m, 3 * h // t, h))      # QKV
                shapes.add((m, h, h // t))          # attention projection
                shapes.add((m, 4 * h // t, h))      # MLP up
                shapes.add((m, h, 4 * h // t))      # MLP down
    # A square grid for the curve's small end.
    for n in (256, 512, 1024, 2048, 4096, 8192, 16384):
        shapes.add((n, n, n))
    out = []
    for m, n, k in sorted(shapes):
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
        s = timed(lambda: torch.matmul(a, b), warmup=2, reps=5)
        out.append({"m": m, "n": n, "k": k, "seconds": s, "flops_per_second": 2.0 * m * n * k / s})
        del a, b
    return out


class Layer(torch.nn.Module):
    """One GPT layer, Megatron-LM's order of operations, [s, b, h] layout."""

    def __init__(self, h, a, selective):
        super().__init__()
        self.h, self.a, self.selective = h, a, selective
        self.ln1 = torch.nn.LayerNorm(h)
        self.qkv = torch.nn.Linear(h, 3 * h)
        self.proj = torch.nn.Linear(h, h)
        self.ln2 = torch.nn.LayerNorm(h)
        self.fc1 = torch.nn.Linear(h, 4 * h)
        self.fc2 = torch.nn.Linear(4 * h, h)

    def core(self, q, k, v):
        # q, k, v: [b*a, s, d]. Scores, softmax, dropout, attention over V: what selective recomputation redoes.
        scores = torch.bmm(q, k.transpose(1, 2)) * (1.0 / math.sqrt(q.shape[-1]))
        probs = F.dropout(torch.softmax(scores, dim=-1), 0.1, self.training)
        return torch.bmm(probs, v)

    def forward(self, x):
        s, b, h = x.shape
        a, d = self.a, h // self.a
        qkv = self.qkv(self.ln1(x)).view(s, b * a, 3, d)
        q, k, v = (qkv[:, :, i].transpose(0, 1).contiguous() for i in range(3))
        ctx = checkpoint(self.core, q, k, v, use_reentrant=False) if self.selective else self.core(q, k, v)
        ctx = ctx.transpose(0, 1).reshape(s, b, h)
        x = x + F.dropout(self.proj(ctx), 0.1, self.training)
        y = self.fc2(F.gelu(self.fc1(self.ln2(x))))
        return x + F.dropout(y, 0.1, self.training)


class Stack(torch.nn.Module):
    def __init__(self, layers, h, a, recompute):
        super().__init__()
        self.full = recompute == "full"
        self.layers = torch.nn.ModuleList(Layer(h, a, recompute == "selective") for _ in range(layers))

    def forward(self, x):
        for layer in self.layers:
            x = checkpoint(layer, x, use_reentrant=False) if self.full else layer(x)
        return x


def layer_probe(h, a, s, b, layers, recompute):
    torch.manual_seed(0)
    model = Stack(layers, h, a, recompute).cuda().to(torch.bfloat16).train()
    x = torch.randn(s, b, h, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    g = torch.randn(s, b, h, device="cuda", dtype=torch.bfloat16)

    def step():
        model(x).backward(g)

    step()
    for p in model.parameters():
        p.grad = None
    x.grad = None
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated()
    y = model(x)
    torch.cuda.synchronize()
    stored = torch.cuda.memory_allocated() - before - y.numel() * y.element_size()
    y.backward(g)
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated() - before
    del y

    def forward_only():
        with torch.no_grad():
            model(x)

    row = {
        "hidden": h, "heads": a, "sequence": s, "micro_batch": b, "layers": layers, "recompute": recompute,
        "stored_bytes": stored, "peak_bytes_above_weights": peak,
        "forward_seconds": timed(forward_only), "step_seconds": timed(step),
    }
    del model, x, g
    torch.cuda.empty_cache()
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="-")
    ap.add_argument("--quick", action="store_true", help="a few shapes only, to check the script")
    args = ap.parse_args()
    props = torch.cuda.get_device_properties(0)
    result = {
        "context": {
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "device": props.name, "multiprocessors": props.multi_processor_count,
            "memory_bytes": props.total_memory, "torch": torch.__version__, "cuda": torch.version.cuda,
            "cublas": "torch.matmul (cuBLAS), bf16 inputs and output, fp32 accumulation",
            "command": "python3 bench/gpu/transformer_probe.py --out transformer-probe-h100.json",
        },
        "gemm": [],
        "layers": [],
    }
    configs = []
    for (h, a, layers) in ((2048, 16, 4), (4096, 32, 4), (8192, 64, 2)):
        for (s, b) in ((1024, 4), (2048, 1), (2048, 4), (4096, 1)):
            for r in ("none", "selective", "full"):
                configs.append((h, a, s, b, layers, r))
    if args.quick:
        configs = configs[:3]
    for c in configs:
        result["layers"].append(layer_probe(*c))
        print(json.dumps(result["layers"][-1]), file=sys.stderr, flush=True)
    result["gemm"] = gemm_sweep() if not args.quick else []
    text = json.dumps(result, indent=1)
    if args.out == "-":
        print(text)
    else:
        with open(args.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
