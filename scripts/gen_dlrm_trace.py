#!/usr/bin/env python3
"""Writes a SYNTHETIC embedding lookup trace in the DLRM reference's format (facebookresearch/dlrm:
trace_<t>.log, one line of ", "-separated rows as dlrm_data_pytorch.py's write_trace_to_file writes it, or
trace_<t>.bin, little-endian uint64 as its --trace-file-binary-type writes it; size_trace_<t>.log, each
sample's bag size, as fb_emb_trace_writer.py writes it). Rows are drawn Zipf(skew) by rank, ranks spread over
the table's rows by a multiplicative permutation; bag sizes 1 to 2*pooling - 1. Deterministic for a seed.

  scripts/gen_dlrm_trace.py docs/examples/dlrm-trace --samples 2048 --seed 7
"""
import argparse, bisect, os, random, struct

# (rows, pooling, binary): the first three tables of MLPerf DLRM v2 (the dlrm-serve preset), table 0 as binary.
TABLES = [(40_000_000, 3, True), (39_060, 2, False), (17_295, 1, False)]
SKEW = 1.05
# Ranks past this are drawn uniformly over the rest: the Zipf tail's share is computed, not enumerated.
HEAD = 200_000


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("directory")
    ap.add_argument("--samples", type=int, default=2048)
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args()
    os.makedirs(a.directory, exist_ok=True)
    rng = random.Random(a.seed)
    for t, (rows, pooling, binary) in enumerate(TABLES):
        head = min(rows, HEAD)
        cdf, total = [], 0.0
        for r in range(head):
            total += (r + 1) ** -SKEW
            cdf.append(total)
        # The tail's weight, by the integral of x^-s from head + 1/2 to rows + 1/2.
        tail = ((head + 0.5) ** (1 - SKEW) - (rows + 0.5) ** (1 - SKEW)) / (SKEW - 1) if rows > head else 0.0
        prime = 1_000_003
        rows_out, sizes = [], []
        for _ in range(a.samples):
            n = rng.randint(1, 2 * pooling - 1)
            sizes.append(n)
            for _ in range(n):
                u = rng.random() * (total + tail)
                rank = bisect.bisect_left(cdf, u) if u < total else rng.randrange(head, rows)
                rows_out.append((rank * prime) % rows)
        base = os.path.join(a.directory, f"trace_{t}")
        if binary:
            with open(base + ".bin", "wb") as f:
                f.write(struct.pack(f"<{len(rows_out)}Q", *rows_out))
        else:
            with open(base + ".log", "w") as f:
                f.write(", ".join(map(str, rows_out)))
        with open(os.path.join(a.directory, f"size_trace_{t}.log"), "w") as f:
            f.write(", ".join(map(str, sizes)))


if __name__ == "__main__":
    main()
