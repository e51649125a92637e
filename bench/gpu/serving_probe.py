#!/usr/bin/env python3
"""Measures, on one GPU, what trinity's serving model prices (issue 32, docs/serving.md), so its constants can be
fitted on a run of our own and the published runs stay held out:

 1. The GPU memory's achievable bandwidth: a reduction that reads a 4 GiB buffer once, and a device-to-device
    copy (bytes read plus bytes written).
 2. Decode steps of dense Llama-2 models (7B, 13B, 70B) at their published shapes, with synthetic bf16 weights
    (the timing does not depend on their values): RMSNorm, fused QKV (grouped-query attention for 70B),
    attention over a KV cache through torch's scaled_dot_product_attention (its flash kernel), the output
    projection, the SwiGLU MLP, then the final norm and the vocabulary head. Each at batch x context points,
    run eagerly (one kernel launch per operation, as an unfused engine runs it) and replayed as a CUDA graph
    (launch overhead gone, as vLLM and TensorRT-LLM run decode).
 3. Prefill of one prompt (128 to 4,096 tokens), causal flash attention, the KV written to the cache; eager and
    as a CUDA graph, as decode.
 4. The same decode and prefill with fp8 (e4m3) weights through torch._scaled_mm, activations cast to fp8 per
    matrix multiply, attention and the KV cache in bf16.

Not measured: rotary embeddings (elementwise, a few microseconds a layer), sampling, tensor parallelism (one GPU),
weight-only int8/int4 (no kernel in plain PyTorch that would be representative). The 70B model runs 8 of its 80
layers (its weights are 138 GB): each row gives the layers it ran and the head's own time, so a reader scales the
layers, not the head.

Eager times are the Python launch path's and vary from run to run by up to 2x where the GPU waits on launches
(small batches and prompts); graph replays repeat within 5%. Fit on the graph times.

The JSON goes to the file named by --out, rewritten after every model so a run cut short leaves what it measured.
Needs PyTorch and a CUDA device; CI has neither, so the tests read the recorded file
(bench/results/serving-probe-h100.json and -h200.json, each with a repeat run).
"""
import argparse
import datetime
import json
import sys
import traceback

import torch
import torch.nn.functional as F

import gpu_timing

# Llama 2 (Touvron et al. 2023, Table 1 and the released config.json files): hidden, layers, heads, KV heads,
# MLP width, vocabulary.
MODELS = {
    "llama-2-7b": dict(hidden=4096, layers=32, heads=32, kv_heads=32, ffn=11008, vocab=32000, run_layers=32),
    "llama-2-13b": dict(hidden=5120, layers=40, heads=40, kv_heads=40, ffn=13824, vocab=32000, run_layers=40),
    "llama-2-70b": dict(hidden=8192, layers=80, heads=64, kv_heads=8, ffn=28672, vocab=32000, run_layers=8),
}
DECODE_BATCHES = (1, 4, 16, 64, 128, 256)
DECODE_CONTEXTS = (256, 2048)
PREFILL_TOKENS = (128, 256, 512, 1024, 2048, 4096)
FP8_DECODE_BATCHES = (1, 16, 64)
FP8_PREFILL_TOKENS = (128, 512, 2048)
BF16 = torch.bfloat16


def timed(fn):
    return gpu_timing.median_seconds(fn, warmup=5, reps=15)


def time_both(row, fn):
    """fn's time run eagerly and replayed as a CUDA graph, into row; a capture failure is a finding, not a crash."""
    row["eager_seconds"] = timed(fn)
    try:
        row["graph_seconds"] = timed(graphed(fn))
    except Exception as e:
        row["graph_error"] = repr(e)[:300]


def graphed(fn):
    """fn captured as a CUDA graph; returns its replay."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    return g.replay


def warm_up(seconds=2.0):
    """Matrix products until the clocks have risen: the first point measured must not pay for an idle GPU."""
    a = torch.randn(8192, 8192, device="cuda", dtype=BF16)
    start = datetime.datetime.now()
    while (datetime.datetime.now() - start).total_seconds() < seconds:
        for _ in range(10):
            a @ a
        torch.cuda.synchronize()
    del a
    torch.cuda.empty_cache()


def bandwidth():
    n = 1 << 30  # 4 GiB of fp32
    x = torch.ones(n, dtype=torch.float32, device="cuda")
    y = torch.empty_like(x)
    read = timed(lambda: x.sum())
    copy = timed(lambda: y.copy_(x))
    row = {"read_bytes": 4 * n, "read_seconds": read, "read_bytes_per_second": 4 * n / read,
           "copy_bytes_moved": 8 * n, "copy_seconds": copy, "copy_bytes_per_second": 8 * n / copy}
    del x, y
    torch.cuda.empty_cache()
    return row


def rms(x, w):
    return x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-5).to(x.dtype) * w


class Linear:
    """y = x W, W of shape [in, out], in bf16 or in fp8 with a per-tensor scale."""

    def __init__(self, n_in, n_out, fp8):
        self.fp8 = fp8
        w = torch.randn(n_in, n_out, device="cuda", dtype=BF16) * (n_in ** -0.5)
        if fp8:
            # _scaled_mm wants the second operand column-major: the transpose of a row-major [out, in].
            self.w = w.t().contiguous().to(torch.float8_e4m3fn).t()
            self.one = torch.ones((), device="cuda", dtype=torch.float32)
        else:
            self.w = w

    def __call__(self, x):
        if not self.fp8:
            return x @ self.w
        return torch._scaled_mm(x.to(torch.float8_e4m3fn), self.w, scale_a=self.one, scale_b=self.one,
                                out_dtype=BF16)


class Layer:
    def __init__(self, m, fp8):
        h, d = m["hidden"], m["hidden"] // m["heads"]
        self.heads, self.kv_heads, self.d = m["heads"], m["kv_heads"], d
        self.n1 = torch.ones(h, device="cuda", dtype=BF16)
        self.n2 = torch.ones(h, device="cuda", dtype=BF16)
        self.qkv = Linear(h, (m["heads"] + 2 * m["kv_heads"]) * d, fp8)
        self.o = Linear(h, h, fp8)
        self.gate_up = Linear(h, 2 * m["ffn"], fp8)
        self.down = Linear(m["ffn"], h, fp8)

    def attend(self, x, kcache, vcache, start, causal):
        """x: [b, t, h]; writes the t new keys and values at [start, start + t), attends over [0, start + t)."""
        b, t, h = x.shape
        qkv = self.qkv(rms(x, self.n1).reshape(b * t, h)).view(b, t, self.heads + 2 * self.kv_heads, self.d)
        q = qkv[:, :, :self.heads].transpose(1, 2)
        k = qkv[:, :, self.heads:self.heads + self.kv_heads].transpose(1, 2)
        v = qkv[:, :, self.heads + self.kv_heads:].transpose(1, 2)
        kcache[:, :, start:start + t].copy_(k)
        vcache[:, :, start:start + t].copy_(v)
        ctx = F.scaled_dot_product_attention(q, kcache[:, :, :start + t], vcache[:, :, :start + t],
                                             is_causal=causal, enable_gqa=self.kv_heads != self.heads)
        return x + self.o(ctx.transpose(1, 2).reshape(b * t, h)).view(b, t, h)

    def mlp(self, x):
        b, t, h = x.shape
        g, u = self.gate_up(rms(x, self.n2).reshape(b * t, h)).chunk(2, dim=-1)
        return x + self.down(F.silu(g) * u).view(b, t, h)


class Model:
    def __init__(self, m, fp8):
        self.m = m
        self.layers = [Layer(m, fp8) for _ in range(m["run_layers"])]
        self.norm = torch.ones(m["hidden"], device="cuda", dtype=BF16)
        self.head = Linear(m["hidden"], m["vocab"], False)  # engines keep the head in 16 bits

    def caches(self, batch, context):
        m = self.m
        shape = (batch, m["kv_heads"], context, m["hidden"] // m["heads"])
        return [(torch.randn(shape, device="cuda", dtype=BF16), torch.randn(shape, device="cuda", dtype=BF16))
                for _ in self.layers]

    def step(self, x, caches, start, causal):
        for layer, (k, v) in zip(self.layers, caches):
            x = layer.mlp(layer.attend(x, k, v, start, causal))
        return x

    def logits(self, x):
        return self.head(rms(x[:, -1], self.norm))


def kv_bytes_per_token(m):
    return 2 * m["kv_heads"] * (m["hidden"] // m["heads"]) * 2 * m["run_layers"]


@torch.no_grad()
def decode_rows(name, m, model, fp8, batches, contexts):
    rows = []
    for context in contexts:
        for batch in batches:
            free, _ = torch.cuda.mem_get_info()
            need = batch * context * kv_bytes_per_token(m)
            row = {"model": name, "phase": "decode", "weights": "fp8" if fp8 else "bf16", "batch": batch,
                   "context": context, "layers_run": m["run_layers"], "layers": m["layers"]}
            if need > 0.7 * free:
                continue  # does not fit beside the weights; not a measurement
            try:
                caches = model.caches(batch, context)
                x = torch.randn(batch, 1, m["hidden"], device="cuda", dtype=BF16)

                time_both(row, lambda: model.logits(model.step(x, caches, context - 1, False)))
                del caches, x
            except Exception as e:
                row["error"] = repr(e)[:300]
            torch.cuda.empty_cache()
            rows.append(row)
            print(json.dumps(row), file=sys.stderr, flush=True)
    return rows


@torch.no_grad()
def head_row(name, m, model):
    x = torch.randn(1, 1, m["hidden"], device="cuda", dtype=BF16)
    return {"model": name, "phase": "head", "batch": 1, "eager_seconds": timed(lambda: model.logits(x)),
            "graph_seconds": timed(graphed(lambda: model.logits(x)))}


@torch.no_grad()
def prefill_rows(name, m, model, fp8, prompts):
    rows = []
    for p in prompts:
        row = {"model": name, "phase": "prefill", "weights": "fp8" if fp8 else "bf16", "batch": 1, "prompt": p,
               "layers_run": m["run_layers"], "layers": m["layers"]}
        try:
            caches = model.caches(1, p)
            x = torch.randn(1, p, m["hidden"], device="cuda", dtype=BF16)
            time_both(row, lambda: model.logits(model.step(x, caches, 0, True)))
            del caches, x
        except Exception as e:
            row["error"] = repr(e)[:300]
        torch.cuda.empty_cache()
        rows.append(row)
        print(json.dumps(row), file=sys.stderr, flush=True)
    return rows


def probe_model(name, m, quick):
    rows = []
    batches = DECODE_BATCHES[:2] if quick else DECODE_BATCHES
    contexts = DECODE_CONTEXTS[:1] if quick else DECODE_CONTEXTS
    prompts = PREFILL_TOKENS[:1] if quick else PREFILL_TOKENS
    torch.manual_seed(0)
    model = Model(m, False)
    rows.append(head_row(name, m, model))
    rows += decode_rows(name, m, model, False, batches, contexts)
    rows += prefill_rows(name, m, model, False, prompts)
    del model
    torch.cuda.empty_cache()
    try:
        model = Model(m, True)
        rows += decode_rows(name, m, model, True, FP8_DECODE_BATCHES[:1] if quick else FP8_DECODE_BATCHES, contexts)
        rows += prefill_rows(name, m, model, True, FP8_PREFILL_TOKENS[:1] if quick else FP8_PREFILL_TOKENS)
        del model
    except Exception as e:
        rows.append({"model": name, "phase": "fp8", "error": repr(e)[:300]})
    torch.cuda.empty_cache()
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--quick", action="store_true", help="a few points of 7B only, to check the script")
    ap.add_argument("--command", default="python3 bench/gpu/serving_probe.py --out serving-probe-h100.json")
    args = ap.parse_args()
    props = torch.cuda.get_device_properties(0)
    result = {
        "context": {
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "device": props.name, "multiprocessors": props.multi_processor_count,
            "memory_bytes": props.total_memory, "torch": torch.__version__, "cuda": torch.version.cuda,
            "kernels": "torch.matmul / torch._scaled_mm (cuBLAS), scaled_dot_product_attention; bf16 activations",
            "command": args.command,
            "models": MODELS,
        },
        "bandwidth": None,
        "rows": [],
    }

    def save():
        with open(args.out, "w") as f:
            f.write(json.dumps(result, indent=1) + "\n")

    warm_up()
    result["bandwidth"] = bandwidth()
    print(json.dumps(result["bandwidth"]), file=sys.stderr, flush=True)
    save()
    for name, m in MODELS.items():
        if args.quick and name != "llama-2-7b":
            continue
        m = dict(m, run_layers=2) if args.quick else m
        warm_up(0.5)
        try:
            result["rows"] += probe_model(name, m, args.quick)
        except Exception:
            result["rows"].append({"model": name, "error": traceback.format_exc()[-600:]})
        save()


if __name__ == "__main__":
    main()
