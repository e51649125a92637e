#!/usr/bin/env python3
"""The simplest replay of a block-hashed trace (Mooncake's JSONL) with the semantics of
include/trinity/cache/block_replay.hpp, written apart from trinity's prefix cache so the two can be
checked against each other and timed side by side (bench/prefix_replay.cpp):

  - a request hits the longest prefix of its hash_ids chain whose blocks are all cached;
  - then every block of its chain is cached and stamped with the request's index;
  - over capacity, the first block by the policy's key goes, among the cached leaves not on the
    request's own chain, ties to the older stamp, then to the deeper block; when only the request's
    own chain is left, its deepest blocks go.
  Keys: lru the stamp; lfu the requests that cached through the block; shared-prefix the stamp, plus
  the horizon when two or more requests cached through the block.

usage: prefix_replay.py TRACE.jsonl CAPACITY[,CAPACITY...] [lru|lfu|shared-prefix] [HORIZON] [BLOCK_TOKENS]
prints one JSON object per capacity: capacity_blocks, block_hit_rate, token_hit_rate, the counts, and the
seconds the replay took (reading the file not counted).
"""
import heapq
import json
import sys
import time


def replay(requests, capacity, policy="lru", horizon=1000, block_tokens=512):
    stamp, uses, depth, parent, children = {}, {}, {}, {}, {}

    def key(x):
        if policy == "lfu":
            k = uses[x]
        elif policy == "shared-prefix":
            k = stamp[x] + (horizon if uses[x] >= 2 else 0)
        else:
            k = stamp[x]
        return (k, stamp[x], -depth[x], x)

    heap = []
    hit_blocks = blocks = hit_tokens = tokens = 0
    for i, r in enumerate(requests):
        chain = r["hash_ids"]
        hit = 0
        while hit < len(chain) and chain[hit] in stamp:
            hit += 1
        hit_blocks += hit
        blocks += len(chain)
        hit_tokens += min(hit * block_tokens, r["input_length"])
        tokens += r["input_length"]
        for d, x in enumerate(chain):
            if x not in stamp:
                p = chain[d - 1] if d else None
                parent[x], children[x], uses[x], depth[x] = p, 0, 0, d
                if p is not None:
                    children[p] += 1
            stamp[x] = i + 1
            uses[x] += 1
        mine = set(chain)
        held = []
        while len(stamp) > capacity and heap:
            e = heapq.heappop(heap)
            x = e[3]
            if x not in stamp or children[x] or e != key(x):
                continue  # stale: gone, no longer a leaf, or touched since
            if x in mine:
                held.append(e)
                continue
            evict(x, stamp, parent, children, heap, key)
        for e in held:
            heapq.heappush(heap, e)
        for x in reversed(chain):  # only the request's own chain is left: its deepest blocks go
            if len(stamp) <= capacity:
                break
            if x in stamp:
                evict(x, stamp, parent, children, heap, key)
        if chain and chain[-1] in stamp and not children[chain[-1]]:
            heapq.heappush(heap, key(chain[-1]))
    return {"capacity_blocks": capacity, "block_hit_rate": hit_blocks / blocks if blocks else 0.0,
            "token_hit_rate": hit_tokens / tokens if tokens else 0.0, "hit_blocks": hit_blocks,
            "blocks": blocks, "hit_tokens": hit_tokens, "tokens": tokens}


def evict(x, stamp, parent, children, heap, key):
    del stamp[x]
    p = parent[x]
    if p is not None:
        children[p] -= 1
        if not children[p]:
            heapq.heappush(heap, key(p))


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    requests = [json.loads(line) for line in open(argv[1]) if line.strip()]
    policy = argv[3] if len(argv) > 3 else "lru"
    horizon = int(argv[4]) if len(argv) > 4 else 1000
    block_tokens = int(argv[5]) if len(argv) > 5 else 512
    for c in argv[2].split(","):
        start = time.perf_counter()
        row = replay(requests, int(c), policy, horizon, block_tokens)
        row["seconds"] = time.perf_counter() - start
        print(json.dumps(row))


if __name__ == "__main__":
    main(sys.argv)
