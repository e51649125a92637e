#!/usr/bin/env bash
# trinity verify of an llm-serve plan replays the trace through the tiered prefix cache at the plan's capacity;
# with the cache below a device memory of no cache blocks and nothing recomputed, it must serve exactly the
# tokens the independent Python LRU replay (tools/reference/prefix_replay.py) hits at that capacity.
# usage: serving_verify_parity.sh TRINITY PYTHON_SCRIPT TRACE SYSTEM
set -euo pipefail
trinity=$1 reference=$2 trace=$3 system=$4
out=$("$trinity" verify --system "$system" --workload llama3-70b-serve --trace "$trace" --json)
read -r cap served recomputed <<<"$(python3 -c 'import json, sys
j = json.load(sys.stdin); print(j["capacity_blocks"], int(j["served_tokens"]), j["recomputed_blocks"])' <<<"$out")"
theirs=$(python3 "$reference" "$trace" "$cap" lru | python3 -c 'import json, sys; print(json.loads(sys.stdin.readline())["hit_tokens"])')
if [ "$recomputed" != 0 ] || [ "$served" != "$theirs" ]; then
  printf 'at %s blocks: trinity verify served %s tokens (%s blocks recomputed), the Python replay hits %s\n' \
    "$cap" "$served" "$recomputed" "$theirs" >&2
  exit 1
fi
printf 'at %s blocks on %s: both serve %s prompt tokens from the cache\n' "$cap" "$system" "$served"
