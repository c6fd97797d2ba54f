#!/usr/bin/env bash
# The hierarchical pattern's radices from the machine model (--radix machine, --node-radix
# machine) against a sweep of the radices, both simulated with nbrc simulate: per case, level
# and block size, the closed form's pick next to the sweep's fastest radix.
#   - inside the node: across nodes in lanes, hand-off and delivery direct or in Bruck rounds of
#     radix 2..8 (the sweep) or of the radix the model chooses (the pick);
#   - across nodes: along a cube of nodes of radix 2..8 or every node in one round (k0), direct
#     delivery (the sweep), or of the radix the model chooses.
# The pick is compiled with --model-bytes at each size and simulated at that size (alltoall,
# what the estimate counts). Writes OUT/radix.csv (every simulated latency: table.py --collect)
# and OUT/table.md (table.py).
#
#   usage: bench/radix_model/run.sh [OUT] [options of bench/lib/study.sh]
#     --cases "case:ranks:per_node:per_socket ..." (cases as in bench/lib/cases.sh)
#     --machine (default "niagara smpi-fat-tree-32c"), --sizes (default 8,128,2048)
#   env: NBR_COMPILE_LAUNCH (default "mpirun -np 2"; empty: no mpirun)
# Patterns and results already in OUT are kept, so an interrupted run resumes.
set -euo pipefail
source "$(dirname "$0")/../lib/study.sh"
study_init "$@"
cases=$(study_words "${NBR_CASES:-random-0.05:1024:40:20 random-0.2:1024:40:20 random-0.05:2160:36:18 moore-2-2:2048:32:16 moore-3-2:2048:32:16}")
machines=$(study_words "${NBR_MACHINE:-niagara smpi-fat-tree-32c}")
sizes=$(study_commas "${NBR_SIZES:-8,128,2048}")
nbrc=$build/compiler/nbrc
read -r -a launch <<<"${NBR_COMPILE_LAUNCH-mpirun -np 2}"
sweep="hierarchical"
for r in 2 3 4 5 6 7 8; do sweep+=" hierarchical-bruck-r$r"; done
for k in 2 3 4 5 6 8 0; do sweep+=" hierarchical-cube-k$k"; done

compile() {  # compile DIR NAME OPTIONS...: compiles and proves one pattern unless it is there
  local dir=$1 name=$2
  shift 2
  [ -f "$dir/$name.inspect.json" ] && return
  "${launch[@]}" "$nbrc" compile "$dir/topology.el" "$@" "${placement[@]}" -q -o "$dir/$name" 2>"$dir/$name.note"
  "$nbrc" verify "$dir/$name" --topology "$dir/topology.el" >"$dir/$name.verify.txt"
  "$nbrc" inspect "$dir/$name" --json >"$dir/$name.inspect.json"
}

simulate() {  # simulate DIR NAME MACHINE SIZES
  local result=$1/sim.$2.$3.json
  [ -f "$result" ] && return
  "$nbrc" simulate "$1/$2" --machine "$3" "${placement[@]}" --collective alltoall --sizes "$4" --json >"$result.tmp"
  mv "$result.tmp" "$result"
}

for spec in $cases; do
  IFS=: read -r case ranks per_node per_socket <<<"$spec"
  dir=$out/$case-$ranks-$per_node
  mkdir -p "$dir"
  placement=(--ranks-per-node "$per_node" --ranks-per-socket "$per_socket")
  gen_case "$nbrc" "$case" "$ranks" "$dir/topology.el"
  "$nbrc" candidates --ranks "$ranks" "${placement[@]}" >"$dir/candidates.txt"  # auto's menu here
  echo "# $spec ($(date +%T))"
  for name in $sweep; do
    compile "$dir" "$name" --algo "$name"
    for machine in $machines; do simulate "$dir" "$name" "$machine" "$sizes"; done
  done
  for machine in $machines; do
    for size in ${sizes//,/ }; do
      compile "$dir" "pick-lanes-$machine-$size" --algo hierarchical --radix machine --machine "$machine" \
        --model-bytes "$size"
      compile "$dir" "pick-cube-$machine-$size" --algo hierarchical --across-nodes cube --node-radix machine \
        --machine "$machine" --model-bytes "$size"
      simulate "$dir" "pick-lanes-$machine-$size" "$machine" "$size"
      simulate "$dir" "pick-cube-$machine-$size" "$machine" "$size"
    done
  done
done
/usr/bin/python3 "$root/bench/radix_model/table.py" --collect "$out" >"$out/radix.csv"
/usr/bin/python3 "$root/bench/radix_model/table.py" "$out/radix.csv" | tee "$out/table.md"
