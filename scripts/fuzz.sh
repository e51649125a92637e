#!/usr/bin/env bash
# Runs one libFuzzer target for a while, coverage-guided, under
# AddressSanitizer and UndefinedBehaviorSanitizer.
#
#   scripts/fuzz.sh <target> <seconds> [libFuzzer flags...]
#   scripts/fuzz.sh list
#
# Targets: one per decoder (identity cast zstd lz4 sparse block_quant qsgd sign
# low_rank delta), `frame` (whole frames, hashes checked) and `round_trip`; one
# per reader of outside bytes (reader_*: system, workload, topology, profile,
# runs, serving runs, attention kernels and probe JSON, layouts, the Mooncake,
# CSV and DLRM traces, fvecs, stream frames, the ack journal, checkpoints and
# their manifests).
# The corpus grows in build/fuzz/corpus/<target>, starting from frames the
# real encoders wrote; a crash leaves its input in build/fuzz/findings/.
set -euo pipefail
cd "$(dirname "$(readlink -f "$0")")/.."

targets="identity cast zstd lz4 sparse block_quant qsgd sign low_rank delta frame round_trip
  reader_system reader_workload reader_topology reader_profile reader_runs reader_probe reader_layout
  reader_mooncake reader_csv_trace reader_fvecs reader_stream_frame reader_journal reader_checkpoint
  reader_dlrm_trace reader_serving_runs reader_attention_kernels reader_manifest"
targets=$(echo $targets)
if [ "${1:-}" = list ]; then echo "$targets"; exit 0; fi
# scripts/fuzz.sh record SECONDS [TARGET...]: one run of each (default: every reader), its log kept in
# build/fuzz/logs, then the runs summarised into bench/results/fuzz-readers.json.
if [ "${1:-}" = record ]; then
  seconds=${2:?"usage: scripts/fuzz.sh record SECONDS [TARGET...]"}
  shift 2
  chosen=${*:-$(for t in $targets; do case $t in reader_*) echo "$t" ;; esac; done)}
  mkdir -p build/fuzz/logs
  for t in $chosen; do
    start=$(date -u +%FT%TZ)
    "$0" "$t" "$seconds" > "build/fuzz/logs/$t.log" 2>&1 || echo "fuzz.sh: $t found something; see build/fuzz/logs/$t.log" >&2
    printf 'start=%s\nend=%s\n' "$start" "$(date -u +%FT%TZ)" > "build/fuzz/logs/$t.times"
  done
  python3 scripts/fuzz_record.py build/fuzz/logs > bench/results/fuzz-readers.json
  exit 0
fi
if [ $# -lt 2 ]; then
  echo "usage: scripts/fuzz.sh <target> <seconds> [libFuzzer flags...]   (targets: $targets)" >&2
  exit 2
fi
target=$1 seconds=$2
shift 2
case " $targets " in *" $target "*) ;; *) echo "fuzz.sh: unknown target '$target'; one of: $targets" >&2; exit 2 ;; esac

scripts/setup.sh
dir=build/fuzz
if [ ! -f "$dir/build.ninja" ]; then
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_CXX_FLAGS="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer" \
    -DTRINITY_FUZZ=ON -DTRINITY_BUILD_TESTS=OFF -DTRINITY_BUILD_TOOLS=OFF -DTRINITY_BUILD_EXAMPLES=OFF \
    -DTRINITY_BUILD_BENCH=OFF -DTRINITY_WITH_CUDA=OFF >/dev/null
fi
cmake --build "$dir" --target "trinity-fuzz-$target" trinity-fuzz-corpus >/dev/null
corpus="$dir/corpus/$target"
[ -d "$corpus" ] || "$dir/bin/trinity-fuzz-corpus" "$target" "$corpus" >&2
mkdir -p "$dir/findings"
exec "$dir/bin/trinity-fuzz-$target" "$corpus" -max_total_time="$seconds" -artifact_prefix="$dir/findings/$target-" \
  -print_final_stats=1 "$@"
