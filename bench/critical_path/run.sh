#!/usr/bin/env bash
# Where each algorithm's time goes in the model: per case, algorithm, collective and size, the
# split of the last rank's critical path (`nbrc simulate --critical-path`, docs/simulate.md)
# into CPU work (sends and receives), messages on their way, and queueing at the ranks'
# injection, the NICs and the uplinks. table.py writes OUT/critical_path.csv (the rows,
# what results/ keeps) and OUT/table.md.
#
#   usage: bench/critical_path/run.sh [OUT] [options of bench/lib/study.sh]
#     --cases  "case:ranks:ranks_per_node:ranks_per_socket ..." (default: random δ = 0.05 at
#              1024 ranks on nodes of 40, Moore (3,1) at 2048 on nodes of 32)
#     --algos  algorithm or configuration names (names nbrc compile --algo takes; nbrc
#              candidates lists them)
#     --sizes (default 8,1K,64K), --machine (default niagara), --collectives (default
#     "allgather alltoall")
# Patterns already compiled in OUT are kept.
set -euo pipefail
source "$(dirname "$0")/../lib/study.sh"
study_init "$@"
cases=$(study_words "${NBR_CASES:-random-0.05:1024:40:20 moore-3-1:2048:32:16}")
algos=$(study_words "${NBR_ALGOS:-common-neighbor distance-halving kgroup-k2 hierarchical-bruck-r4 hierarchical-socket-bruck-r4 hierarchical-socket-bruck-r5 hierarchical-cube-k0}")
sizes=$(study_commas "${NBR_SIZES:-8,1K,64K}")
machine=${NBR_MACHINE:-niagara}
collectives=$(study_words "${NBR_COLLECTIVES:-allgather alltoall}")
nbrc=$build/compiler/nbrc

for spec in $cases; do
  IFS=: read -r case ranks per_node per_socket <<<"$spec"
  placement="--ranks-per-node $per_node --ranks-per-socket $per_socket"
  # shellcheck disable=SC2086 # the algorithm names are words
  NBR_COMPILE_ARGS="$placement" prepare_case "$nbrc" "$out" "$case" "$ranks" $algos
  for algo in naive $algos; do
    for collective in $collectives; do
      result="$out/$case-$ranks/$algo.$collective.$machine.json"
      [ -f "$result" ] && continue
      # shellcheck disable=SC2086
      "$nbrc" simulate "$out/$case-$ranks/$algo" --machine "$machine" $placement --collective "$collective" \
        --sizes "$sizes" --critical-path --json >"$result.tmp"
      mv "$result.tmp" "$result"
    done
  done
done
/usr/bin/python3 "$root/bench/critical_path/table.py" "$out" "$machine" --csv "$out/critical_path.csv" |
  tee "$out/table.md"
