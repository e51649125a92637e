#!/usr/bin/env bash
# Installs every build and test dependency of trinity from Debian 12 packages.
# Idempotent: when everything is present it prints nothing and returns at once,
# so demo.sh and test.sh can call it unconditionally.
set -euo pipefail

# One line per package, grouped by what needs it. Names are Debian bookworm's.
packages=(
  # toolchain
  g++ cmake ninja-build ccache pkg-config git
  # the trinity::trinity target itself
  librange-v3-dev libboost-dev
  # tests, benchmarks, the command-line program
  catch2 libbenchmark-dev nlohmann-json3-dev libcli11-dev
  # optional backends: codecs, multi-process collectives, NUMA tiers, ANN index
  libzstd-dev liblz4-dev libxxhash-dev libopenmpi-dev openmpi-bin libnuma-dev libhnswlib-dev
  # message streams between processes (trinity::stream)
  libzmq3-dev cppzmq-dev
  # the peer the flat index is benchmarked against (bench/cache.cpp)
  libfaiss-dev
  # the independent reference the placement solvers are tested against
  libglpk-dev
  # the independent Python replay the prefix cache is checked and timed against (tools/reference), and the
  # JSON Schema validator every plan's JSON is checked with (docs/plan.schema.json)
  python3 python3-jsonschema
  # pictures drawn by the demo and examples
  gnuplot-nox
  # scripts/fuzz.sh: libFuzzer comes with clang's runtime
  clang libclang-rt-14-dev
  # the house style (.clang-format), held by a test
  clang-format
)

missing=()
for p in "${packages[@]}"; do
  # dpkg-query prints "install ok installed" only for a fully configured package.
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  sudo_cmd=sudo
  command -v sudo >/dev/null || {
    echo "setup.sh: missing packages (${missing[*]}) and not root; run as root or install them" >&2
    exit 1
  }
else
  sudo_cmd=
fi

echo "setup.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo_cmd apt-get update -qq >/dev/null
$sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup.sh: done" >&2
