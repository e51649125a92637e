#!/usr/bin/env bash
# Re-measures every figure the docs and the built-in presets show, on this
# machine, into bench/results/, then regenerates the docs and the generated
# headers from them (build/bin/trinity-docgen --write). The CPU benchmarks run
# on the `ci` build (a generic x86-64, what a user's build is) and, where the
# docs compare, on the `bench` preset (-march=native). Each result file names
# its build and machine. Takes 15-20 minutes on a 2-core machine; run it on an
# otherwise idle one. The GPU's file (cuda_codecs_h100.json) is recorded on a
# GPU: build/bin/trinity-bench-cuda-codecs --benchmark_repetitions=3
# --benchmark_out=bench/results/cuda_codecs_h100.json.
set -euo pipefail
cd "$(dirname "$(readlink -f "$0")")/.."
scripts/setup.sh
out=bench/results
mkdir -p "$out"
step() { printf '\n== %s\n' "$*" >&2; }

step "build: ci and bench presets"
cmake --preset ci >/dev/null
cmake --build --preset ci -j "$(nproc)" --target trinity-docgen compressed_exchange trinity-bench-compress \
  trinity-bench-collectives trinity-bench-cache trinity-bench-place trinity-bench-retrieval
cmake --preset bench >/dev/null
cmake --build --preset bench -j "$(nproc)" --target trinity-bench-compress trinity-bench-cache

# Median of 3 repetitions of each benchmark; the JSON keeps only the aggregates.
reps=(--benchmark_repetitions=3 --benchmark_report_aggregates_only=true --benchmark_out_format=json)

step "codecs (ci, bench)"
build/bin/trinity-bench-compress "${reps[@]}" --benchmark_out="$out/compress-ci.json" >/dev/null
build/bench/bin/trinity-bench-compress "${reps[@]}" --benchmark_out="$out/compress-bench.json" >/dev/null
step "collectives (ci, 2 ranks)"
scripts/mpirun.sh -n 2 build/bin/trinity-bench-collectives --benchmark_out_format=json \
  --benchmark_out="$out/collectives-ci.json" >/dev/null
step "caches (ci, bench)"
build/bin/trinity-bench-cache "${reps[@]}" --benchmark_out="$out/cache-ci.json" >/dev/null
build/bench/bin/trinity-bench-cache "${reps[@]}" --benchmark_out="$out/cache-bench.json" >/dev/null
step "samples over trinity::stream against raw ZeroMQ, loopback (ci)"
build/bin/trinity-bench-stream --benchmark_repetitions=5 --benchmark_report_aggregates_only=true --benchmark_out_format=json --benchmark_out="$out/stream-ci.json" >/dev/null
step "the prefix cache on Mooncake's trace, against the Python replay (ci)"
cmake --build --preset ci -j "$(nproc)" --target trinity-bench-prefix-replay
build/bin/trinity-bench-prefix-replay "${reps[@]}" --benchmark_out="$out/prefix-replay-ci.json" >/dev/null
step "Mooncake's whole trace through the prefix cache: the serving preset's curve (where ../shared has the trace)"
trace=../shared/traces/mooncake_conversation_trace.jsonl
if [ -f "$trace" ]; then
  cmd="build/bin/trinity cache replay --trace $trace --format mooncake --capacity-blocks 100,300,1000,3000,10000,30000,100000 --eviction lru,lfu,shared-prefix --json"
  $cmd > "$out/.prefix-curve.json"
  build/bin/trinity-docgen --source . --build build --record-prefix-curve "$out/.prefix-curve.json" --command "$cmd"
  rm -f "$out/.prefix-curve.json"
fi
step "the T2V curation pipeline run with and without co-residency, and the executor against a loop (ci)"
cmake --build --preset ci -j "$(nproc)" --target trinity-cli trinity-bench-pipeline
build/bin/trinity-bench-pipeline "${reps[@]}" --benchmark_out="$out/pipeline-ci.json" >/dev/null
cmd="build/bin/trinity verify --system dgx-h100 --workload t2v-curation --json"
$cmd > "$out/.curation.json"
build/bin/trinity-docgen --source . --build build --record-curation "$out/.curation.json" --command "$cmd"
rm -f "$out/.curation.json"
step "placement and the planner (ci)"
build/bin/trinity-bench-place --benchmark_out_format=json --benchmark_out="$out/place-ci.json" >/dev/null

step "compress or send, measured (examples/compressed_exchange, 100 MB)"
build/bin/compressed_exchange --out "$out" >/dev/null
mv "$out/compressed_exchange.png" docs/compressed_exchange.png 2>/dev/null || true
rm -f "$out/compressed_exchange.gp" "$out/compressed_exchange.csv"

step "the IVF index beside FAISS, and its recall curve (bench/retrieval.cpp)"
build/bin/trinity-bench-retrieval --benchmark_filter='ivf/(faiss|trinity|tiered|faiss-pq|pq)/|hnsw/' \
    --benchmark_out="$out/retrieval-ci.json" --benchmark_out_format=json >/dev/null
build/bin/trinity-bench-retrieval --benchmark_filter='ivf/(pq-)?recall' --benchmark_out="$out/ivf-recall-ci.json" \
    --benchmark_out_format=json >/dev/null

step "the planner's codec rates from the codecs' results (plan/detail/measured_codecs.hpp), then the planner"
build/bin/trinity-docgen --source . --build build --headers
cmake --build --preset ci -j "$(nproc)" --target trinity-cli trinity-bench-plan
build/bin/trinity-bench-plan "${reps[@]}" --benchmark_filter=-simulate --benchmark_out="$out/plan-ci.json" >/dev/null
# Alone in its process, so that its peak resident memory is its own (target at dp=4096: under 1 GB and 10 s).
build/bin/trinity-bench-plan --benchmark_filter=simulate --benchmark_out_format=json \
  --benchmark_out="$out/simulate-ci.json" >/dev/null

step "a plan run for real here, with its step time (docs/planning.md §9)"
build/bin/trinity calibrate --size 4MiB --out build/plan-profile.json >/dev/null
{
  echo "(recorded $(date -u +%Y-%m-%d) by scripts/record-results.sh: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs, preset ci)"
  build/bin/trinity verify --system docs/examples/h100s-on-1gbe.json --workload llm-7b-train --parallelism data --profile build/plan-profile.json
} > "$out/verify-1gbe.txt"
build/bin/trinity plan --system gb200-nvl72-cxl --workload llm-70b-train --parallelism data --plot docs/plan_pareto.png >/dev/null
build/bin/trinity plan --system dgx-h100 --workload llm-70b-train --gpus 64 --plot docs/layout_pareto.png >/dev/null
build/bin/trinity plan --system dgx-h100-cxl --workload rag-serve --plot docs/rag_tiers.png >/dev/null

step "the synthetic trace's replay (deterministic)"
work=$(mktemp -d)
command="trinity cache gen-trace --requests 10000 >/dev/null && trinity cache replay --trace requests.csv --embeddings prompts.fvecs --capacity 1GB,10GB,100GB,1TB --latent-size 0.016GB --json"
( cd "$work" && PATH="$OLDPWD/build/bin:$PATH" bash -c "$command" ) > "$work/replay.json"
build/bin/trinity-docgen --record-replay "$work/replay.json" --command "$command" --source . --build build
( cd "$work" && PATH="$OLDPWD/build/bin:$PATH" trinity cache replay --trace requests.csv --embeddings prompts.fvecs \
    --capacity 1GB,3GB,10GB,30GB,100GB,300GB,1TB --latent-size 0.016GB,0.04GB,0.07GB --plot curve.png >/dev/null )
cp "$work/curve.png" docs/cache_curve.png
rm -rf "$work"
build/bin/trinity-docgen --source . --build build --headers
cmake --build --preset ci -j "$(nproc)" --target trinity-cli

step "regenerate the docs and headers"
build/bin/trinity-docgen --source . --build build --write
