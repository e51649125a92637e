#!/usr/bin/env bash
# Hostile inputs of the fourth hardening round (issue 78), each a check: no shell runs a path, every write that
# fails says so and exits 2, a value given is used or refused, control bytes are escaped, a child's end is told as
# an exit code, nothing hangs. Each check prints its name; the first broken one stops the script non-zero.
#
#   hostile_round4.sh TRINITY TRINITY_TRAIN TRINITY_STREAM SOURCE_DIR
set -uo pipefail
trinity=$1 train=$2 stream=$3 source=$4
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
fail() { echo "FAIL: $*" >&2; exit 1; }
# run EXPECTED_CODE REGEX CMD...: runs CMD (20 s at most), requires its exit code and its output to match REGEX.
run() {
  local code=$1 regex=$2
  shift 2
  out=$(timeout 20 "$@" 2>&1)
  local got=$?
  [ "$got" = "$code" ] || fail "exit $got, expected $code: $* -> ${out:0:600}"
  printf '%s' "$out" | tr '\n' ' ' | grep -Eq -- "$regex" || fail "output does not match '$regex': $* -> ${out:0:600}"
  echo "ok: $*" | cut -c1-160
}
no_injection() { [ ! -e "$dir/INJECTED" ] || fail "a shell ran: $dir/INJECTED exists after $*"; }

# 1. No shell: trinity-train reached through paths holding ', ", ;, $(), spaces and a newline runs as named.
for name in "it's" 'say "hi"' 'a;touch INJECTED' 'a$(touch INJECTED)' 'two words' $'new\nline'; do
  mkdir -p "$dir/$name"
  ln -sf "$train" "$dir/$name/trinity-train"
  run 0 "Run here, scaled to an MLP" "$trinity" verify --system h100-ib-cluster --workload llm-7b-train \
    --train "$dir/$name/trinity-train" --steps 1
  no_injection verify --train "$dir/$name"
done
run 2 "--train .*trinity-train is not there" "$trinity" verify --system h100-ib-cluster --workload llm-7b-train \
  --train "./x'; touch INJECTED; echo '"
no_injection "verify --train ./x'; touch INJECTED"
# A child's end is its exit code, not the wait status (256 for exit 1).
run 2 "the run failed .*: exit code 1" "$trinity" verify --system h100-ib-cluster --workload llm-7b-train --train /bin/false

# --plot: the PNG written where the path says, whatever it holds; names inside the script are gnuplot text.
mkdir -p "$dir/plots"
for name in "it's.png" 'a;touch INJECTED.png' 'a$(touch INJECTED).png' "x' ; system \"touch INJECTED\" ; '.png"; do
  run 0 "wrote " "$trinity" plan --system dgx-h100 --workload llm-7b-train --parallelism data --plot "$dir/plots/$name"
  [ "$(head -c 4 "$dir/plots/$name" | tail -c 3)" = "PNG" ] || fail "--plot $name is not a PNG"
  no_injection --plot "$name"
done
sed "s/\"name\": \"[^\"]*\"/\"name\": \"box'; system \\\\\"touch INJECTED\\\\\"; '\"/" \
  "$source/docs/examples/two-h100-box.json" > evil-system.json
grep -q "touch INJECTED" evil-system.json || fail "the hostile system file was not made"
run 0 "wrote " "$trinity" plan --system evil-system.json --workload llm-7b-train --parallelism data --plot "$dir/plots/evil.png"
no_injection "a system named with a gnuplot command"

# 3. Every write is checked: a device, a directory, a missing folder.
for target in /dev/full "$dir/plots" "$dir/missing/folder/out.png"; do
  run 2 "--plot: .*(not a regular file|is a directory|does not exist)" \
    "$trinity" plan --system dgx-h100 --workload llm-7b-train --parallelism data --plot "$target"
  run 2 "--out: .*(not a regular file|is a directory|does not exist)" "$trinity" calibrate --size 4KiB --repeats 1 \
    --compressor bf16 --out "$target"
  run 2 "--trace: .*(not a regular file|is a directory|does not exist)" "$trinity" cache gen-trace --requests 10 \
    --dimension 8 --trace "$target" --embeddings "$dir/e.fvecs"
done
"$trinity" cache gen-trace --requests 200 --dimension 8 --topics 5 --trace "$dir/r.csv" --embeddings "$dir/e.fvecs" \
  > /dev/null || fail "gen-trace into a folder that exists"
run 2 "--points-out: .*not a regular file" "$trinity" cache replay --trace "$dir/r.csv" --embeddings "$dir/e.fvecs" \
  --capacity 1KB,10KB --latent-size 100B --steps 50 --points-out /dev/full
run 2 "--plot: .*not a regular file" "$trinity" cache replay --trace "$dir/r.csv" --embeddings "$dir/e.fvecs" \
  --capacity 1KB,10KB --latent-size 100B --steps 50 --plot /dev/full
# Standard output is an output too: a plan printed into a full device is a failed write.
run 2 "the output could not be written" sh -c "exec \"\$0\" plan --system dgx-h100 --workload llm-7b-train --json > /dev/full" "$trinity"
run 2 "the step lines could not be written" sh -c "exec \"\$0\" --ranks 2 --steps 1 > /dev/full" "$train"
# A value given empty is refused, where it would read as the flag left out (no plot drawn, no checkpoint saved).
run 2 "--plot: an empty value" "$trinity" plan --system dgx-h100 --workload llm-7b-train --parallelism data --plot ""
run 2 "--out: an empty value" "$trinity" calibrate --size 4KiB --out ""
run 2 "--train: an empty value" "$trinity" verify --system dgx-h100 --workload llm-7b-train --train ""
run 2 "--save-checkpoint: an empty value" "$train" --ranks 2 --steps 1 --save-checkpoint ""
run 2 "--compress: an empty value" "$train" --ranks 2 --steps 1 --compress ""
run 2 "--endpoint-file: an empty value" "$stream" consume --endpoint-file "" --count 0
[ ! -e "$dir/missing" ] || fail "a refused write left a folder behind"
ls "$dir/plots" | grep -q partial && fail "a refused write left a temporary file"

# 4. A value given is the value used: 0 for a default is refused, counts refuse fractions and take integral floats.
grep -q '"sequence": 4096' "$source/docs/examples/llama2-13b-train.json" || fail "the sample workload changed"
cat > moe.json <<'EOF'
{"name": "moe", "type": "training", "sequence": 4096, "layers": 4, "hidden": 1024, "ffn_hidden": 4096, "heads": 8, "vocabulary": 32000,
 "experts": 8, "top_k": 2, "moe_ffn_hidden": 0}
EOF
run 2 "moe_ffn_hidden: .*0 is out of range: expected a whole number from 1 to 1000000 \\(leave the key out" \
  "$trinity" plan --system dgx-h100 --workload moe.json
sed 's/"moe_ffn_hidden": 0/"head_dim": 0/' moe.json > head.json
run 2 "head_dim: .*expected a whole number from 1 to 4096" "$trinity" plan --system dgx-h100 --workload head.json
sed 's/"moe_ffn_hidden": 0/"head_dim": 1.28e2/' moe.json > head.json
run 0 "" "$trinity" plan --system dgx-h100 --workload head.json
sed 's/"moe_ffn_hidden": 0/"head_dim": 1000000000.0/' moe.json > head.json
run 2 "head_dim: 1000000000.0 is out of range: expected a whole number from 1 to 4096" \
  "$trinity" plan --system dgx-h100 --workload head.json
sed 's/"moe_ffn_hidden": 0/"head_dim": 127.5/' moe.json > head.json
run 2 "head_dim: expected a whole number from 1 to 4096.*not the number 127.5" \
  "$trinity" plan --system dgx-h100 --workload head.json
sed 's/"sequence": 4096/"sequence": 4096, "batch": 2.5/' "$source/docs/examples/llama2-13b-train.json" > w.json
run 2 "batch: expected a whole number" "$trinity" plan --system dgx-h100 --workload w.json
rag() { python3 - "$source/docs/examples/$1" "$2" "$3" <<'EOF'
import json, sys
w = json.load(open(sys.argv[1])); keys = sys.argv[2].split(".")
at = w
for k in keys[:-1]: at = at[k]
at[keys[-1]] = json.loads(sys.argv[3])
json.dump(w, open("rag.json", "w"))
EOF
}
rag_file=$(grep -l '"rag-serve"' "$source"/docs/examples/*.json | head -1)
[ -n "$rag_file" ] || fail "no rag-serve example"
rag_file=$(basename "$rag_file")
for change in "lists 0" "pq_bytes 0" "rerank 0"; do
  set -- $change
  rag "$rag_file" "$1" "$2"
  run 2 "$1: .*0 is out of range: expected a whole number from 1" "$trinity" plan --system dgx-h100 --workload rag.json
done
rag "$rag_file" corpus_vectors 1000.5
run 2 "corpus_vectors: expected a whole number \\(a count\\)" "$trinity" plan --system dgx-h100 --workload rag.json
rag "$rag_file" llm.prefill_efficiency 0
run 2 "llm.prefill_efficiency: .*expected a number above 0 and at most 1" "$trinity" plan --system dgx-h100 --workload rag.json
# A NUL byte is refused where it stands, not taken as the end of the file.
printf '{"name": "box"}\0{"evil": 1}' > nul.json
run 2 "nul.json: holds a NUL byte at offset 15" "$trinity" plan --system nul.json --workload llm-7b-train
# In a CSV trace too; gen-trace writes the embeddings the replay needs.
run 0 "wrote" "$trinity" cache gen-trace --requests 20
printf 'timestamp,row\n0.5,1\n2.\0009,1\n' > nul.csv
run 2 "nul.csv: holds a NUL byte at offset 22; a trace is text" "$trinity" cache replay --trace nul.csv \
  --embeddings prompts.fvecs --capacity 1GB --latent-size 0.016GB
# trinity-train: a flag given where it cannot act, a NaN, a seed past 2^64 or below 0.
run 2 "--top-k: shapes a mixture of experts, and the run has none" "$train" --ranks 2 --steps 1 --experts 0 --top-k 2
run 2 "--capacity-factor" "$train" --ranks 2 --steps 1 --experts 4 --top-k 2 --capacity-factor nan
run 2 "--seed" "$train" --ranks 2 --steps 1 --seed -1
run 2 "--seed" "$train" --ranks 2 --steps 1 --seed 18446744073709551616

# 6. Terminal hygiene: control bytes from input are escaped where they are echoed.
printf '{"name": "box", "\\u001b[31mred": 1}' > esc.json
run 2 'x1b\[31mred: unknown key' "$trinity" plan --system esc.json --workload llm-7b-train
printf '%s' "$out" | grep -q $'\033' && fail "an ESC byte reached the terminal"
sed "s/\"name\": \"[^\"]*\"/\"name\": \"box\\\\u0007\"/" "$source/docs/examples/two-h100-box.json" > bel.json
run 2 "name: holds a control character \\(0x07\\) at 3" "$trinity" plan --system bel.json --workload llm-7b-train

# 5. Nothing hangs or grows without bound: trinity-stream refuses, with exit code 2.
run 2 "--sample: must be a whole number of bytes from 0 .* to 64 MiB" "$stream" demo --sample 1e15B
run 2 "--streams" "$stream" demo --streams 100000
run 2 "--seconds: must be from 0.5 to 600" "$stream" demo --seconds 1e9
mkfifo fifo
run 2 "fifo: is not a regular file" "$stream" check --journal fifo
run 2 "/dev/zero: is not a regular file" "$stream" check --journal /dev/zero
run 2 "--endpoint-file: .*is a directory" "$stream" consume --endpoint-file "$dir/plots" --count 1
# A non-UTF-8 path printed in JSON is written with U+FFFD, not an internal error.
cp r.csv $'r\xff.csv'
run 0 '"trace": "r.*\.csv"' "$trinity" cache replay --trace $'r\xff.csv' --embeddings e.fvecs --capacity 1KB,10KB \
  --latent-size 100B --steps 50 --json
echo "every hostile input of round 4 was refused or run as named"
