#!/usr/bin/env bash
# The table of simulated latencies (nbrc simulate) of docs/performance.md: for every
# (case, ranks) it generates the topology, compiles the naive and common-neighbor patterns,
# and simulates both on every machine at every size; then bench/simulate_table.py writes
# OUT/table.md (with the validation against the SMPI results in bench/smpi/reference.csv)
# and OUT/speedup-MACHINE.png.
#
#   usage: bench/simulate_table.sh OUT_DIR [RANKS...]        (default ranks: 1024 4096 16384)
#   env:   NBR_SIM_CASES     cases (default: all of bench/cases.sh)
#          NBR_SIM_MACHINES  machines (default: "niagara smpi-fat-tree-32c")
#          NBR_SIM_SIZES     block sizes (default: 4 B to 4 MiB, powers of 4)
#          NBR_BUILD         build with nbrc (default: build)
#          NBR_COMPILE_LAUNCH  launcher for the compiler, e.g. "mpirun -np 2" (bench/cases.sh)
# Cases already simulated in OUT_DIR are skipped, so an interrupted run resumes.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/scripts/env.sh"  # mpirun as root, for NBR_COMPILE_LAUNCH
out=$1
shift
ranks_list=("$@")
[ ${#ranks_list[@]} -gt 0 ] || ranks_list=(1024 4096 16384)
# shellcheck source=cases.sh
source "$root/bench/cases.sh"
cases=${NBR_SIM_CASES:-$BENCH_CASES}
machines=${NBR_SIM_MACHINES:-"niagara smpi-fat-tree-32c"}
sizes=${NBR_SIM_SIZES:-4,16,64,256,1K,4K,16K,64K,256K,1M,4M}
nbrc=${NBR_BUILD:-$root/build}/compiler/nbrc
[ -x "$nbrc" ] || { echo "simulate_table.sh: $nbrc not found (build the project first)" >&2; exit 1; }
mkdir -p "$out"
out=$(cd "$out" && pwd)

for ranks in "${ranks_list[@]}"; do
  for case in $cases; do
    echo "# $case $ranks: preparing ($(date +%T))"
    prepare_case "$nbrc" "$out" "$case" "$ranks" common-neighbor
    work="$out/$case-$ranks"
    for machine in $machines; do
      [ -f "$work/sim.$machine.json" ] && continue
      echo "# $case $ranks: simulating on $machine ($(date +%T))"
      "$nbrc" simulate "$work/common-neighbor" --baseline "$work/naive" --machine "$machine" --sizes "$sizes" \
        --json >"$work/sim.$machine.json.tmp"
      mv "$work/sim.$machine.json.tmp" "$work/sim.$machine.json"
    done
  done
done
/usr/bin/python3 "$root/bench/simulate_table.py" "$out" "$root/bench/smpi/reference.csv" | tee "$out/table.md"
