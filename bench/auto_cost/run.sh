#!/usr/bin/env bash
# Compile cost of `nbrc compile --algo auto` against the sum of its candidates, with 2 compiler
# processes: one auto compile (wall time and peak memory of each process, and its own split
# into building the candidates and simulating them), the same with --whole-messages (no
# segmented copies), then each candidate it built compiled alone by nbr-compile-bench (build
# and write). Resumable; writes OUT/<case>-<ranks>/ (auto.log, auto-whole.log: the compiles'
# progress and /usr/bin/time lines; auto.inspect.json: what auto chose and predicted;
# candidates.jsonl: the candidates alone; the topology and the pattern directories are removed
# once a case is done) and prints OUT/auto_cost.md.
#   usage: bench/auto_cost/run.sh [OUT] [options of bench/lib/study.sh]
#     --cases "CASE:RANKS ..."  (default: random-0.2:4096 moore-3-2:4096; CASE as in
#                               bench/lib/cases.sh: moore-D-R, random-DELTA, seed 1)
#     --machine M               (default niagara) with its block placement, which
#     --placement N:S           (default 40:20, niagara's) gives the candidates alone
#   env: NBR_COMPILE_LAUNCH (default "mpirun -np 2 --bind-to core")
set -euo pipefail
source "$(dirname "$0")/../lib/study.sh"
study_init "$@"
read -r -a cells <<<"$(study_words "${NBR_CASES:-random-0.2:4096 moore-3-2:4096}")"
machine=${NBR_MACHINE:-niagara}
placement=$(study_placement "${NBR_PLACEMENT:-40:20}")
read -r -a launch <<<"${NBR_COMPILE_LAUNCH:-mpirun -np 2 --bind-to core}"
nbrc=$build/compiler/nbrc
bench=$build/bench/nbr-compile-bench

# bench_topology CASE RANKS: nbr-compile-bench's generator options for a case.
bench_topology() {
  local d r
  case $1 in
    moore-*-*) IFS=- read -r _ d r <<<"$1"; echo "--moore $2,$d,$r" ;;
    random-*) echo "--random $2,${1#random-},1" ;;
  esac
}

for cell in "${cells[@]}"; do
  IFS=: read -r case ranks <<<"$cell"
  dir=$out/$case-$ranks
  mkdir -p "$dir"
  if [ -f "$dir/auto.inspect.json" ] && [ ! -d "$dir/auto" ] && grep -qs "^exit 0" "$dir/auto-whole.log"; then
    continue  # done
  fi
  for kind in auto auto-whole; do
    grep -qs "^exit 0" "$dir/$kind.log" && continue
    gen_case "$nbrc" "$case" "$ranks" "$dir/topology.el"
    echo "$cell: $kind ..." >&2
    whole=()
    [ "$kind" = auto-whole ] && whole=(--whole-messages)
    { "${launch[@]}" /usr/bin/time -f "process: wall %e s, peak %M KiB" "$nbrc" compile "$dir/topology.el" \
        --ranks "$ranks" --algo auto "${whole[@]}" --machine "$machine" -o "$dir/$kind" 2>&1 && echo "exit 0" ||
        echo "exit $?"; } >"$dir/$kind.log"
  done
  [ -d "$dir/auto" ] && "$nbrc" inspect "$dir/auto" --json >"$dir/auto.inspect.json"
  for name in $(python3 -c 'import json,sys; print(" ".join(c["name"] for c in json.load(open(sys.argv[1]))["candidates"]))' \
                  "$dir/auto.inspect.json"); do
    grep -qs "\"candidate\": \"$name\"" "$dir/candidates.jsonl" && continue
    # A segmented copy (NAME-segSIZE) shares its base's build and files: nothing to time.
    [[ $name == *-seg[0-9]* ]] && continue
    echo "$cell: $name ..." >&2
    rm -f "$dir/one.jsonl"
    # shellcheck disable=SC2046,SC2086
    "${launch[@]}" "$bench" $(bench_topology "$case" "$ranks") --algo "$name" $placement \
      --json "$dir/one.jsonl" >/dev/null
    python3 -c 'import json,sys; r=json.loads(open(sys.argv[1]).read().splitlines()[-1]); r["candidate"]=sys.argv[2]; print(json.dumps(r))' \
      "$dir/one.jsonl" "$name" >>"$dir/candidates.jsonl"
  done
  rm -rf "$dir/one.jsonl" "$dir/auto" "$dir/auto-whole" "$dir/topology.el"
done
python3 "$root/bench/auto_cost/table.py" "$out" "${cells[@]}" | tee "$out/auto_cost.md"
