#!/usr/bin/env bash
# The main job. Until the planner lands it runs the paper's three worked
# examples through the trinity program, each with its explanation. Build
# output goes to stderr so stdout holds only the results.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
{
  cmake --preset ci >/dev/null
  cmake --build --preset ci --target trinity-cli
} >&2

trinity=build/bin/trinity
rule() { printf '\n==== %s ====\n\n' "$*"; }

rule "1. More computation -> less bandwidth (paper §3.1.2)"
"$trinity" model frontier

rule "2. More bandwidth -> less memory (paper §4.1.2)"
"$trinity" model deficit --total 400GB --avail 100GB --devices 2 --k 0.5

rule "3. More memory -> less computation (paper §5.1.2)"
"$trinity" model cache --steps 50 --step-flops 1e9 --reuse-depth 20 --entry-size 2GB --capacity 10GB --hit-rate 0.6

rule "Where the figures come from"
echo "$("$trinity" presets | wc -l) lines of tier and link presets, each with its source: $trinity presets"
echo "The same in JSON: append --json to any command."
