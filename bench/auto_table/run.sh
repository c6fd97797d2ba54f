#!/usr/bin/env bash
# What `nbrc compile --algo auto` chooses on the simulated tables, and how it compares with
# every candidate: per machine and case it compiles the topology with --algo auto (the
# candidates' predictions are in the auto directory), and bench/auto_table/table.py writes
# OUT_DIR/table.md (per case, collective and size band: the chosen variant, the worst ratio
# of auto to the best single candidate and to naive over all sizes) and one plot per machine
# (auto's speedup over naive per size next to each candidate's).
#
# These are the model's own numbers: auto is the best candidate up to its margin by
# construction, and the table shows that the bands, the margin and the band boundaries keep
# it so at every simulated size. The independent checks are the SMPI and real-MPI
# comparisons in README.md.
#
#   usage: bench/auto_table/run.sh [OUT] [options of bench/lib/study.sh]
#     --machine LIST  (default "niagara smpi-fat-tree-32c")
#     --cases LIST    "case:ranks[:ranks_per_node:ranks_per_socket] ..." (default: the six cases
#                     at 1024 and 4096 ranks on the machine's placement, and the distance-halving
#                     paper's settings: random graphs at 2160 ranks on nodes of 36, Moore
#                     neighborhoods at 2048 on nodes of 32)
#   env: NBR_COMPILE_LAUNCH (default "mpirun -np 2"; empty: no mpirun)
# Cases already compiled in OUT are kept, so an interrupted run resumes.
set -euo pipefail
source "$(dirname "$0")/../lib/study.sh"
study_init "$@"
machines=$(study_words "${NBR_MACHINE:-niagara smpi-fat-tree-32c}")
default_cases=""
for ranks in 1024 4096; do
  for case in $BENCH_CASES; do default_cases+=" $case:$ranks"; done
done
default_cases+=" moore-2-2:2048:32:16 moore-3-1:2048:32:16 moore-3-2:2048:32:16"
default_cases+=" random-0.05:2160:36:18 random-0.1:2160:36:18 random-0.3:2160:36:18"
cases=$(study_words "${NBR_CASES:-$default_cases}")
nbrc=$build/compiler/nbrc
launch=${NBR_COMPILE_LAUNCH-mpirun -np 2}

for spec in $cases; do
  for machine in $machines; do
    IFS=: read -r case ranks per_node per_socket <<<"$spec"
    placement=()
    [ -n "${per_node:-}" ] && placement=(--ranks-per-node "$per_node" --ranks-per-socket "$per_socket")
    dir="$out/$machine/$case-$ranks${per_node:+-$per_node}"
    [ -f "$dir.json" ] && continue
    mkdir -p "$dir"
    topology="$out/topologies/$case-$ranks.el"
    mkdir -p "$out/topologies"
    gen_case "$nbrc" "$case" "$ranks" "$topology"
    echo "# $machine $spec ($(date +%T))"
    start=$(date +%s.%N)
    # shellcheck disable=SC2086
    $launch "$nbrc" compile "$topology" --algo auto --machine "$machine" "${placement[@]}" -q -o "$dir/auto" \
      2>/dev/null
    echo "$(date +%s.%N) - $start" | bc >"$dir/compile-seconds"
    "$nbrc" inspect "$dir/auto" --json >"$dir.json.tmp"
    rm -rf "$dir/auto"  # the predictions are in the inspect output; the patterns are large
    mv "$dir.json.tmp" "$dir.json"
  done
done
# shellcheck disable=SC2086 # one argument per machine or cell
/usr/bin/python3 "$root/bench/auto_table/table.py" "$out" $machines | tee "$out/table.md"
