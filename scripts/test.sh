#!/usr/bin/env bash
# Sets up, configures, builds and runs every test: first the optimised build
# with warnings as errors (build/), then the same tests under AddressSanitizer
# and UndefinedBehaviorSanitizer (build/asan/), then the concurrent tests under
# ThreadSanitizer (build/tsan/). Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$(readlink -f "$0")")/.."

scripts/setup.sh

jobs=$(nproc)
# Each step says how far into the run it starts, so a CI log shows where the time went.
step() { printf '\n== %s (at %d min %02d s)\n' "$*" $((SECONDS / 60)) $((SECONDS % 60)) >&2; }

step "configure and build (preset ci: RelWithDebInfo, -Werror)"
cmake --preset ci >/dev/null
cmake --build --preset ci -j "$jobs"

step "test (preset ci)"
ctest --preset ci -j "$jobs"

step "configure and build (preset asan: AddressSanitizer + UndefinedBehaviorSanitizer)"
cmake --preset asan >/dev/null
cmake --build --preset asan -j "$jobs"

step "test (preset asan)"
ctest --preset asan -j "$jobs"

step "configure and build (preset tsan: ThreadSanitizer, the in-process backend and sharding)"
cmake --preset tsan >/dev/null
cmake --build --preset tsan -j "$jobs"

step "test (preset tsan)"
ctest --preset tsan -j "$jobs"

step "every test passed"
