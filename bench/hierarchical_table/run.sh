#!/usr/bin/env bash
# The hierarchical algorithm against naive and distance halving with nbrc simulate on the
# niagara model, in the distance-halving paper's settings: random graphs at 2160 ranks (60
# nodes x 36, sockets of 18) and Moore neighborhoods at 2048 ranks (64 nodes x 32, sockets of
# 16), plus random δ = 0.05 at 1024 and 4096 ranks and δ = 0.1, 0.2 at 1024 on niagara's own
# nodes of 40; allgather and alltoall, 8 B to 4 MiB. The hierarchical algorithm in the
# configurations auto tries: across nodes in lanes or along a cube of nodes, inside the node
# directly or in Bruck rounds (the names nbrc candidates lists). Every hierarchical pattern is proven by nbrc verify first.
# table.py writes OUT/table.md.
#
#   usage: bench/hierarchical_table/run.sh [OUT] [options of bench/lib/study.sh]
#     --cases "case:ranks:per_node:per_socket ..." (cases as in bench/lib/cases.sh)
#     --algos the hierarchical configurations (default: the hierarchical candidates auto tries
#             on the case's nodes)
#   env: NBR_COMPILE_LAUNCH (default "mpirun -np 2"; empty: no mpirun)
# Cases already done in OUT are kept, so an interrupted run resumes.
set -euo pipefail
source "$(dirname "$0")/../lib/study.sh"
study_init "$@"
default_cases="random-0.05:2160:36:18 random-0.1:2160:36:18 random-0.3:2160:36:18 random-0.7:2160:36:18"
default_cases+=" moore-2-2:2048:32:16 moore-3-1:2048:32:16 moore-3-2:2048:32:16"
default_cases+=" random-0.05:1024:40:20 random-0.1:1024:40:20 random-0.2:1024:40:20 random-0.05:4096:40:20"
cases=$(study_words "${NBR_CASES:-$default_cases}")
nbrc=$build/compiler/nbrc
read -r -a launch <<<"${NBR_COMPILE_LAUNCH-mpirun -np 2}"
sizes=8,32,128,512,2K,8K,32K,128K,512K,2M,4M

for spec in $cases; do
  IFS=: read -r case ranks per_node per_socket <<<"$spec"
  hierarchical=${NBR_ALGOS:-$(hierarchical_configs "$nbrc" "$per_node/$per_socket")}
  dir=$out/$case-$ranks-$per_node
  mkdir -p "$dir"
  placement=(--ranks-per-node "$per_node" --ranks-per-socket "$per_socket")
  gen_case "$nbrc" "$case" "$ranks" "$dir/topology.el"
  for algo in naive distance-halving $hierarchical; do
    [ -f "$dir/$algo.inspect.json" ] && continue
    echo "# $spec: $algo ($(date +%T))"
    start=$(date +%s.%N)
    "${launch[@]}" "$nbrc" compile "$dir/topology.el" --algo "$algo" "${placement[@]}" -q -o "$dir/$algo"
    echo "$(date +%s.%N) - $start" | bc >"$dir/$algo.compile-seconds"
    if [ "${algo#hierarchical}" != "$algo" ]; then
      "$nbrc" verify "$dir/$algo" --topology "$dir/topology.el" >"$dir/$algo.verify.txt"
    fi
    "$nbrc" inspect "$dir/$algo" --json >"$dir/$algo.inspect.json"
  done
  for algo in distance-halving $hierarchical; do
    for collective in allgather alltoall; do
      result=$dir/sim.$algo.$collective.json
      [ -f "$result" ] && continue
      "$nbrc" simulate "$dir/$algo" --baseline "$dir/naive" --machine niagara "${placement[@]}" \
        --collective "$collective" --sizes "$sizes" --json >"$result.tmp"
      mv "$result.tmp" "$result"
    done
  done
done
/usr/bin/python3 "$root/bench/hierarchical_table/table.py" "$out" | tee "$out/table.md"
