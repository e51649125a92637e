#!/usr/bin/env bash
# The main job. First the planner on a built-in preset (a 70B model trained on
# a GB200 NVL72 rack with CXL tier-2): every tensor x pipeline x context x data
# layout priced, the chosen one, what it predicts, why, and the Pareto front
# (drawn to build/plan/pareto.png); its transfers on the simulated fabric; its
# pipeline and ZeRO slots run here, scaled down, every count beside the step
# model's. The data-parallel planner on the same rack (ZeRO, codecs, CXL
# tiers), this machine calibrated, and its plan run here beside the prediction
# (step time included). The layout search for the same model on 64 H100s: the
# layout, its transfers on the DGX links, and its tensor, pipeline and ZeRO
# slots run here, counted. The planner on the other presets: a diffusion cache,
# an edge video stream, and by cost. The paper's producer/consumer training
# (planned, and capped streams measured) and its curation pipeline (planned,
# then run here with and without co-resident models). Then the paper's three
# worked examples through the trinity program, each with its explanation, then
# the first trade for real: a 100 MB gradient over links of 1 to 400 Gbps with
# every compressor, the chooser's pick checked against the measurement; and
# the second: ZeRO stage 3 on 4 MPI processes against DDP, its memory and
# traffic checked against the model; and the third: a synthetic request trace
# replayed through the approximate cache, its hit-rate curve fitted and drawn.
# Build output and progress go to stderr so stdout holds only the results.
set -euo pipefail
cd "$(dirname "$(readlink -f "$0")")/.."

scripts/setup.sh
{
  cmake --preset ci >/dev/null
  cmake --build --preset ci --target trinity-cli compressed_exchange trinity-train trinity-train-check trinity-stream
} >&2

trinity=build/bin/trinity
# TRINITY_BENCH_QUICK=1 (the docs test sets it, as for the benchmarks): the same steps at a smaller size, so
# the test checks that every step runs, not what this machine measures.
samples=() exchange=100MB requests=10000
if [[ -n "${TRINITY_BENCH_QUICK:-}" ]]; then
  samples=(--samples 100) exchange=4MB requests=2000
fi
rule() { printf '\n==== %s ====\n\n' "$*"; }

rule "The planner: llm-70b-train on gb200-nvl72-cxl, every parallel layout (docs/parallelism.md)"
mkdir -p build/plan
"$trinity" plan --system gb200-nvl72-cxl --workload llm-70b-train --plot build/plan/pareto.png | sed -n 1,40p
echo
"$trinity" simulate --system gb200-nvl72-cxl --workload llm-70b-train
echo
"$trinity" verify --system gb200-nvl72-cxl --workload llm-70b-train ||
  echo "(a count of the layout's run differs from the step model's: see above)"

rule "The data-parallel planner on the same rack: ZeRO, codecs and CXL tiers, timed here (docs/planning.md)"
"$trinity" plan --system gb200-nvl72-cxl --workload llm-70b-train --parallelism data | sed -n 1,30p
echo
"$trinity" simulate --system gb200-nvl72-cxl --workload llm-70b-train --parallelism data
echo
echo "Measuring this machine (codecs, dense layers, thread link) into build/plan/profile.json..." >&2
"$trinity" calibrate --size 4MiB --out build/plan/profile.json >/dev/null
"$trinity" verify --system gb200-nvl72-cxl --workload llm-70b-train --parallelism data --profile build/plan/profile.json ||
  echo "(a measured figure of the plan's run is more than 20% from the prediction: see above)"

rule "The layout search: llm-70b-train on 64 H100s, tensor x pipeline x context x data (docs/parallelism.md)"
"$trinity" plan --system dgx-h100 --workload llm-70b-train --gpus 64 | sed -n 1,30p
echo
"$trinity" simulate --system dgx-h100 --workload llm-70b-train --gpus 64
echo
"$trinity" verify --system dgx-h100 --workload llm-70b-train --gpus 64 ||
  echo "(a count of the layout's run differs from the step model's: see above)"

rule "The planner on the other presets: a diffusion cache, an edge stream, and by cost"
"$trinity" plan --system gb200-nvl72-cxl --workload diffusion-dit-12b
echo
"$trinity" plan --system edge-5g-cloud --workload edge-video-analytics
echo
"$trinity" simulate --system edge-5g-cloud --workload edge-video-analytics
echo
"$trinity" plan --system edge-5g-cloud --workload edge-video-analytics --objective cost | sed -n 1,12p
echo
"$trinity" plan --system h100-ib-cluster --workload llm-70b-train --objective cost | sed -n 1,20p

rule "The paper's other two systems: producers feeding trainers over streams (§4.2), models sharing devices (§5.2)"
"$trinity" plan --system dgx-h100 --workload wan22-t2v-hetero | sed -n 1,12p
echo
build/bin/trinity-stream demo --streams 1,4,16 --seconds 1
echo
"$trinity" plan --system dgx-h100 --workload t2v-curation
echo
"$trinity" verify --system dgx-h100 --workload t2v-curation "${samples[@]}"

rule "1. More computation -> less bandwidth (paper §3.1.2)"
"$trinity" model frontier

rule "2. More bandwidth -> less memory (paper §4.1.2)"
"$trinity" model deficit --total 400GB --avail 100GB --devices 2 --k 0.5

rule "3. More memory -> less computation (paper §5.1.2)"
"$trinity" model cache --steps 50 --step-flops 1e9 --reuse-depth 20 --entry-size 2GB --capacity 10GB --hit-rate 0.6

rule "1, measured: compress or send a 100 MB gradient? (examples/compressed_exchange)"
build/bin/compressed_exchange --size "$exchange" --out build/compressed_exchange || echo "(the pick missed the measured fastest by more than 10% somewhere above)"

rule "2, measured: ZeRO stages on 4 processes under mpirun (tools/train; docs/sharding.md)"
build/bin/trinity-train-check --train build/bin/trinity-train --check-model \
  --launcher "mpirun --allow-run-as-root --oversubscribe -n 4" \
  --run "--stage 0" --run "--stage 1" --run "--stage 2" --run "--stage 3" --run "--stage 3 --offload" ||
  echo "(a run broke a promise of the sharding model: see FAIL above)"

rule "3, measured: an approximate cache of diffusion latents, replayed (SYNTHETIC trace; docs/cache.md)"
mkdir -p build/cache
"$trinity" cache gen-trace --trace build/cache/requests.csv --embeddings build/cache/prompts.fvecs --requests "$requests"
"$trinity" cache replay --trace build/cache/requests.csv --embeddings build/cache/prompts.fvecs \
  --capacity 1GB,10GB,100GB,1TB --latent-size 0.016GB,0.07GB --plot build/cache/curve.png

rule "Where the figures come from"
echo "$("$trinity" presets | wc -l) lines of tier and link presets, each with its source: $trinity presets"
echo "The same in JSON: append --json to any command."
