#!/usr/bin/env bash
# trinity's prefix-cache replay against the independent Python one (tools/reference/prefix_replay.py),
# block and token hits counted exactly, for every policy at every capacity given.
# usage: prefix_replay_parity.sh TRINITY PYTHON_SCRIPT TRACE CAPACITIES
set -euo pipefail
trinity=$1 reference=$2 trace=$3 caps=$4
for policy in lru lfu shared-prefix; do
  ours=$("$trinity" cache replay --trace "$trace" --format mooncake --capacity-blocks "$caps" --eviction "$policy" --json |
    python3 -c 'import json, sys
for r in json.load(sys.stdin)["rows"]: print(r["capacity_blocks"], r["hit_blocks"], r["hit_tokens"])')
  theirs=$(python3 "$reference" "$trace" "$caps" "$policy" |
    python3 -c 'import json, sys
for l in sys.stdin: r = json.loads(l); print(r["capacity_blocks"], r["hit_blocks"], r["hit_tokens"])')
  if [ "$ours" != "$theirs" ]; then
    printf '%s: trinity and the Python replay disagree\ntrinity:\n%s\nPython:\n%s\n' "$policy" "$ours" "$theirs" >&2
    exit 1
  fi
  printf '%s agrees at capacities %s:\n%s\n' "$policy" "$caps" "$ours"
done
