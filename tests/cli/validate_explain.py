#!/usr/bin/env python3
"""`trinity validate --json`, every run of its table, and `--explain NAME` against the table.

Usage: validate_explain.py TRINITY RUNS PROBE      (the training model)
       validate_explain.py TRINITY RUNS --serving  (the serving model)

The table's JSON lists every run as `--explain NAME --json` prints it alone. Every run of the table is checked:
Training: its breakdown must add up to its step (the parts the step model reports are the whole step, nothing left
unnamed) and its pipeline's stages must hold the model's layers as Megatron places them; the table's memory
verdicts must follow its bytes and its device's memory, and the summary must list the runs put over and each
source's count and errors as its runs give them.
Serving: the figure of its configuration named by its metric must be the table's prediction (the configuration
priced again on the same calibrated preset), its time to first token its prompt's prefill after its cached
prefix's load, and its prefill's and decode step's parts must add up to those figures.
Then `--explain NAME --json` of every STRIDE-th run (and the last) must print exactly the table's row: the one-run
path finds the run by name and prices it as the table does. A sample, not every run: each call calibrates the
model again, which under the sanitizers takes seconds, and the row it must equal is already checked in full.
Prints "explained: N runs" and exits 0, or names the first run that disagrees and exits 1.
"""
import json
import re
import subprocess
import sys

STRIDE = 8  # --explain of every 8th run of the table, and of its last

# The breakdown's parts, in parallel_predicted_json's names: every second of the step is one of them.
PARTS = ("gemm_s", "attention_s", "elementwise_s", "recompute_s", "tensor_parallel_s", "expert_parallel_s",
         "context_parallel_s", "pipeline_p2p_s", "bubble_s", "data_parallel_s", "optimizer_s", "offload_s",
         "gradient_coding_s", "embedding_all_reduce_s")


def run(cmd):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def close(a, b):
    return abs(a - b) <= 1e-12 * max(abs(a), abs(b), 1e-300)


def serving_parts_add_up(name, one, figures):
    """The TTFT's prefill and the TPOT's decode step, part by part: each kernel the longer of its read and its
    FLOPs, the parts adding up to the figure the table prices."""
    p = one["prefill"]["parts"]
    flops = p["multiplies_s"] + p["attention_s"]
    if p["read_bound"] != (p["weights_read_s"] > flops):
        sys.exit(f"{name}: the prefill is marked read_bound={p['read_bound']} with its read "
                 f"{p['weights_read_s']} s against {flops} s of FLOPs")
    prefill = max(flops, p["weights_read_s"]) + p["overhead_s"] + p["eager_overhead_s"] + p["all_reduces_s"]
    if not (close(prefill, p["total_s"]) and close(p["total_s"], figures["prefill_s"])):
        sys.exit(f"{name}: prefill parts add to {prefill} s, total {p['total_s']} s, figure {figures['prefill_s']} s")
    d = one["decode_step"]["parts"]
    step = d["overhead_s"] + d["sequences_s"] + d["all_reduces_s"]
    for kernel in ("multiplies", "attention"):
        k = d[kernel]
        if k["read_bound"] != (k["read_s"] >= k["compute_s"]):
            sys.exit(f"{name}: the decode step's {kernel} marked read_bound={k['read_bound']}: {k}")
        step += max(k["read_s"], k["compute_s"])
    if not (close(step, d["total_s"]) and close(d["total_s"], figures["tpot_s"])):
        sys.exit(f"{name}: decode parts add to {step} s, total {d['total_s']} s, TPOT {figures['tpot_s']} s")


def sampled(table):
    """Every STRIDE-th row and the last."""
    return [row for i, row in enumerate(table) if i % STRIDE == 0 or i == len(table) - 1]


def explained_as_in_table(base, table):
    for row in sampled(table):
        one = run(base + ["--explain", row["name"]])
        if one != row:
            keys = sorted(k for k in set(one) | set(row) if one.get(k) != row.get(k))
            sys.exit(f"{row['name']}: --explain --json differs from the table's row in {keys}")


def serving(trinity, runs):
    base = [trinity, "validate", "--serving", "--runs", runs, "--json"]
    table = run(base)["runs"]
    if not table:
        sys.exit("the table has no runs")
    for row in table:
        figures = row["figures"]
        if figures[row["metric"]] != row["predicted"]:
            sys.exit(f"{row['name']}: its configuration's {row['metric']} is {figures[row['metric']]}, "
                     f"the table predicts {row['predicted']}")
        ttft, parts = figures["ttft_s"], figures["prefill_s"] + figures["prefix_load_s"]
        if abs(ttft - parts) > 1e-12 * ttft:
            sys.exit(f"{row['name']}: time to first token {ttft} s, prefill and load {parts} s")
        serving_parts_add_up(row["name"], row, figures)
    explained_as_in_table(base, table)
    print(f"explained: {len(table)} runs")


def pipeline_stages_hold_the_layers(name, one, layers, modules):
    """The stages' layers add up to the model's, as the layout's pipeline places them (Megatron's split: the first
    and last hold fewer; or as the layout states them), the last holds the run's prediction modules, and the stage the step is priced on is one
    that exists."""
    g = one["predicted"]["pipeline"]
    if g["prediction_modules"] != modules:
        sys.exit(f"{name}: {g['prediction_modules']} prediction modules explained, {modules} in its model")
    p = int(re.search(r"\bpp=(\d+)", one["parallelism"]).group(1))
    if g["stages"] != p:
        sys.exit(f"{name}: {g['stages']} pipeline stages explained, pp={p} in its layout")
    # A layout may state its first and last stages' layers (first_stage_layers=, last_stage_layers=): those.
    stated = {end: int(n) for end, n in re.findall(r"\b(first|last)_stage_layers=(\d+)", one["parallelism"])}
    for end, n in stated.items():
        if g[f"{end}_layers"] != n:
            sys.exit(f"{name}: {g[end + '_layers']} layers on the {end} stage explained, {n} in its layout")
    held = g["first_layers"] + g["middle_layers"] * (p - 2) + g["last_layers"] if p > 1 else g["first_layers"]
    megatron = g["first_layers"] <= g["middle_layers"] and g["last_layers"] <= g["first_layers"]
    if held != layers or not (megatron or stated):
        sys.exit(f"{name}: stages of {g['first_layers']}, {g['middle_layers']}, {g['last_layers']} layers do not "
                 f"place its {layers} as Megatron does")
    if g["binding"] not in (("last", "first") if p <= 2 else ("last", "middle")) or (p == 1 and g["binding"] != "last"):
        sys.exit(f"{name}: priced on the {g['binding']} stage of {p}")


def memory_verdicts_agree(table, summary):
    """Each run fits its device when its predicted bytes are at most the device's memory, and the summary's list
    of runs put over is exactly those that do not, in the file's order (every one ran, so each is an overcount)."""
    for row in table:
        fits = row["predicted"]["device_bytes"] <= row["device_memory_bytes"]
        if row["fits_device_memory"] != fits or not row["device_memory_bytes"] > 0:
            sys.exit(f"{row['name']}: fits_device_memory {row['fits_device_memory']} with "
                     f"{row['predicted']['device_bytes']} bytes of {row['device_memory_bytes']}")
    over = [row["name"] for row in table if not row["fits_device_memory"]]
    if summary != {"runs": len(table), "over": over}:
        sys.exit(f"summary.device_memory {summary}, the table's runs put over: {over} of {len(table)}")


def sources_summarised(table, by_source):
    """The summary's by_source lists each source once, in the order its first run appears, with the count, the
    mean signed and absolute errors and the worst of its runs, recomputed here from the table's rows."""
    order = list(dict.fromkeys(row["source"] for row in table))
    if [s["source"] for s in by_source] != order:
        sys.exit(f"summary.by_source lists {[s['source'] for s in by_source]}, the table's sources are {order}")
    for s in by_source:
        errors = [row["error"] for row in table if row["source"] == s["source"]]
        want = (len(errors), sum(errors) / len(errors), sum(map(abs, errors)) / len(errors), max(map(abs, errors)))
        got = (s["runs"], s["mean_error"], s["mean_abs_error"], s["max_abs_error"])
        if got[0] != want[0] or not all(abs(a - b) <= 1e-12 for a, b in zip(got[1:], want[1:])):
            sys.exit(f"summary.by_source {s['source']}: {got}, its runs give {want}")


def main():
    if sys.argv[3] == "--serving":
        return serving(*sys.argv[1:3])
    trinity, runs, probe = sys.argv[1:4]
    base = [trinity, "validate", "--runs", runs, "--probe", probe, "--json"]
    whole = run(base)
    table = whole["runs"]
    memory_verdicts_agree(table, whole["summary"]["device_memory"])
    sources_summarised(table, whole["summary"]["by_source"])
    with open(runs) as f:
        models = {r["name"]: r["model"] for r in json.load(f)["runs"]}
    if not table:
        sys.exit("the table has no runs")
    for row in table:
        parts = row["predicted"]["breakdown"]
        unknown = set(parts) - set(PARTS)
        if unknown:
            sys.exit(f"{row['name']}: the breakdown has parts this test does not know: {sorted(unknown)}")
        total, step = sum(parts[p] for p in PARTS), row["predicted"]["step_time_s"]
        if abs(total - step) > 1e-9 * step:
            sys.exit(f"{row['name']}: the breakdown adds to {total} s, the step is {step} s")
        model = models[row["name"]]
        pipeline_stages_hold_the_layers(row["name"], row, model["layers"], model.get("mtp_layers", 0))
    explained_as_in_table(base, table)
    print(f"explained: {len(table)} runs")


if __name__ == "__main__":
    main()
