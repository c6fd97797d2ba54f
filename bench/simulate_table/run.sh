#!/usr/bin/env bash
# The table of simulated latencies (nbrc simulate) of README.md: for every
# (case, ranks) it generates the topology, compiles the naive and common-neighbor patterns,
# and simulates both on every machine at every size; then table.py writes
# OUT/table.md (with the validation against the SMPI results in bench/smpi/reference.csv)
# and OUT/speedup-MACHINE.png.
#
#   usage: bench/simulate_table/run.sh [OUT] [options of bench/lib/study.sh]
#     --ranks    (default 1024 4096 16384)
#     --cases    (default: all of bench/lib/cases.sh)
#     --machine  (default: "niagara smpi-fat-tree-32c")
#     --sizes    (default: 4 B to 4 MiB, powers of 4)
#   env: NBR_COMPILE_LAUNCH  launcher for the compiler, e.g. "mpirun -np 2" (bench/lib/cases.sh)
# Kept per case: both patterns' inspect --json and the simulations' JSON; the patterns and the
# topology are removed once every machine has simulated the case. Cases already simulated in
# OUT are skipped, so an interrupted run resumes.
set -euo pipefail
source "$(dirname "$0")/../lib/study.sh"
study_init "$@"
read -r -a ranks_list <<<"$(study_words "${NBR_RANKS:-1024 4096 16384}")"
cases=$(study_words "${NBR_CASES:-$BENCH_CASES}")
machines=$(study_words "${NBR_MACHINE:-niagara smpi-fat-tree-32c}")
sizes=$(study_commas "${NBR_SIZES:-4,16,64,256,1K,4K,16K,64K,256K,1M,4M}")
nbrc=$build/compiler/nbrc
[ -x "$nbrc" ] || { echo "simulate_table: $nbrc not found (build the project first)" >&2; exit 1; }

# simulated WORK: whether every machine has simulated the case in WORK
simulated() {
  local machine
  for machine in $machines; do
    [ -f "$1/sim.$machine.json" ] || return 1
  done
}

for ranks in "${ranks_list[@]}"; do
  for case in $cases; do
    work="$out/$case-$ranks"
    simulated "$work" && continue
    echo "# $case $ranks: preparing ($(date +%T))"
    prepare_case "$nbrc" "$out" "$case" "$ranks" common-neighbor
    for machine in $machines; do
      [ -f "$work/sim.$machine.json" ] && continue
      echo "# $case $ranks: simulating on $machine ($(date +%T))"
      "$nbrc" simulate "$work/common-neighbor" --baseline "$work/naive" --machine "$machine" --sizes "$sizes" \
        --json >"$work/sim.$machine.json.tmp"
      mv "$work/sim.$machine.json.tmp" "$work/sim.$machine.json"
    done
    rm -rf "${work:?}/naive" "$work/common-neighbor" "$work/topology.el"
  done
done
/usr/bin/python3 "$root/bench/simulate_table/table.py" "$out" "$root/bench/smpi/reference.csv" | tee "$out/table.md"
