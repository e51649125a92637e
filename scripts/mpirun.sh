#!/usr/bin/env bash
# mpirun as the docs use it: OpenMPI refuses to run as root without
# --allow-run-as-root, and more ranks than cores without --oversubscribe.
# This adds both where they are needed and passes everything else through:
#
#   scripts/mpirun.sh -n 4 build/bin/trinity-train --stage 3
set -euo pipefail
command -v mpirun >/dev/null || { echo "mpirun.sh: mpirun not found; run scripts/setup.sh (Debian: openmpi-bin)" >&2; exit 127; }
extra=(--oversubscribe)
[ "$(id -u)" -eq 0 ] && extra+=(--allow-run-as-root)
exec mpirun "${extra[@]}" "$@"
