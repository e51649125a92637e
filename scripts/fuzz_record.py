#!/usr/bin/env python3
"""Summarises libFuzzer runs (scripts/fuzz.sh record) into one result file.

    fuzz_record.py LOG_DIR > bench/results/fuzz-readers.json

Each LOG_DIR/<target>.log is one run's output; LOG_DIR/<target>.times holds its start and end (UTC). For each
run: the executions, their rate, the coverage (edges) and features at the start and the end, the corpus it
grew (units and bytes), and what it found (a crash, a leak or a sanitizer report: the artifact libFuzzer names)."""
import json
import os
import platform
import re
import subprocess
import sys


def machine():
    model = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    clang = subprocess.run(["clang++", "--version"], capture_output=True, text=True, check=False).stdout.splitlines()
    return {"host": platform.node(), "cpu": model, "cores": os.cpu_count(),
            "build": "build/fuzz: clang " + (clang[0] if clang else "?") +
                     ", RelWithDebInfo, -fsanitize=fuzzer,address,undefined (scripts/fuzz.sh)"}


def size_bytes(text):
    m = re.match(r"(\d+)(b|Kb|Mb)", text)
    n, unit = int(m.group(1)), m.group(2)
    return n * {"b": 1, "Kb": 1024, "Mb": 1024 * 1024}[unit]


def run_of(log_dir, target):
    with open(os.path.join(log_dir, target + ".log"), encoding="utf-8", errors="replace") as f:
        text = f.read()
    status = re.findall(r"^#(\d+)\s+(INITED|DONE|pulse|NEW|REDUCE)\s+cov: (\d+) ft: (\d+) corp: (\d+)/(\S+)", text, re.M)
    inited = next((s for s in status if s[1] == "INITED"), None)
    last = status[-1] if status else None
    seconds = re.search(r"Done \d+ runs in (\d+) second", text)
    executed = re.search(r"stat::number_of_executed_units: (\d+)", text)
    rate = re.search(r"stat::average_exec_per_sec:\s+(\d+)", text)
    artifact = re.search(r"Test unit written to (\S+)", text)
    times = {}
    times_path = os.path.join(log_dir, target + ".times")
    if os.path.exists(times_path):
        with open(times_path, encoding="utf-8") as f:
            times = dict(line.strip().split("=", 1) for line in f if "=" in line)
    return {
        "target": target,
        "started": times.get("start"), "ended": times.get("end"),
        "seconds": int(seconds.group(1)) if seconds else None,
        "executions": int(executed.group(1)) if executed else None,
        "executions_per_second": int(rate.group(1)) if rate else None,
        "coverage_edges_start": int(inited[2]) if inited else None,
        "coverage_edges": int(last[2]) if last else None,
        "features": int(last[3]) if last else None,
        "corpus_units": int(last[4]) if last else None,
        "corpus_bytes": size_bytes(last[5]) if last else None,
        "finding": artifact.group(1) if artifact else None,
        "completed": bool(seconds),
    }


def main():
    log_dir = sys.argv[1]
    targets = sorted(f[:-4] for f in os.listdir(log_dir) if f.endswith(".log"))
    out = {"context": machine(), "about": "scripts/fuzz.sh record: one coverage-guided libFuzzer run per target, "
                                          "from the seeds of tests/fuzz and the corpus earlier runs grew",
           "runs": [run_of(log_dir, t) for t in targets]}
    json.dump(out, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
