"""How the GPU probes time a call (bench/gpu/*_probe.py): CUDA events around each of `reps` calls after `warmup`
untimed ones, the median in seconds. Events time the GPU's work, not the Python that launched it."""
import statistics

import torch


def median_seconds(fn, warmup=3, reps=10):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) / 1e3)
    return statistics.median(times)
