#!/usr/bin/env bash
# Two producer processes and a consumer process over trinity::stream. Mid-stream, producer 0 is killed
# with SIGKILL and started again, then the consumer is killed and started again on its journal. The
# test passes when every process finishes and `check` proves the journal holds every sample of both
# producers once, in order, with the hash of its true bytes: nothing lost, nothing twice.
set -euo pipefail
bin=$1
dir=$(mktemp -d)
pids=()
trap 'kill -9 "${pids[@]}" 2>/dev/null || true; rm -rf "$dir"' EXIT
count=20000
journal_records() { echo $(( ($(stat -c %s "$dir/acks" 2>/dev/null || echo 8) - 8) / 32 )); }
wait_for_records() {  # until the journal holds $1 records (60 s at most)
  for _ in $(seq 600); do [ "$(journal_records)" -ge "$1" ] && return 0; sleep 0.1; done
  echo "the journal never reached $1 records" >&2; exit 1
}

"$bin" consume --endpoint-file "$dir/ep" --journal "$dir/acks" --producers 2 --count $count > "$dir/c1.log" &
consumer=$!; pids+=($consumer)
for _ in $(seq 100); do [ -s "$dir/ep" ] && break; sleep 0.1; done
ep=$(cat "$dir/ep")
# exec: the background job's pid is the producer's own, so SIGKILL reaches it and not only a subshell.
produce() { exec "$bin" produce --connect "$ep" --id "$1" --count $count --streams "$2" --stream-cap 10MB/s; }
produce 0 3 > "$dir/p0.log" & p0=$!; pids+=($p0)
produce 1 2 > "$dir/p1.log" & p1=$!; pids+=($p1)

wait_for_records 4000
kill -9 $p0; wait $p0 2>/dev/null || true
if grep -q "sent" "$dir/p0.log"; then echo "producer 0 finished before it was killed: nothing was tested" >&2; exit 1; fi
produce 0 3 > "$dir/p0b.log" & p0=$!; pids+=($p0)

wait_for_records 12000
kill -9 $consumer; wait $consumer 2>/dev/null || true
# Killed mid-stream: the journal is not complete yet.
if "$bin" check --journal "$dir/acks" --producers 2 --count $count > /dev/null 2>&1; then
  echo "the consumer finished before it was killed: nothing was tested" >&2; exit 1
fi
"$bin" consume --bind "$ep" --journal "$dir/acks" --producers 2 --count $count > "$dir/c2.log" &
consumer=$!; pids+=($consumer)

wait $consumer || { echo "the restarted consumer failed"; cat "$dir/c2.log"; exit 1; }
wait $p0 || { echo "the restarted producer 0 failed"; cat "$dir/p0b.log"; exit 1; }
wait $p1 || { echo "producer 1 failed"; cat "$dir/p1.log"; exit 1; }
cat "$dir/p0b.log" "$dir/p1.log" "$dir/c2.log"
# The restarted producer resumed where the consumer stood, not from 0.
grep -Eq "producer 0 resumes at offset [1-9][0-9]*" "$dir/p0b.log" || { echo "producer 0 restarted from 0"; exit 1; }
grep -q "the consumer restarted 1 times" "$dir/p1.log" || { echo "producer 1 did not see the consumer restart"; exit 1; }
"$bin" check --journal "$dir/acks" --producers 2 --count $count
