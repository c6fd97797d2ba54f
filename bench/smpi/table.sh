#!/usr/bin/env bash
# The simulated-cluster table of docs/performance.md: for every (topology, ranks) case it
# generates the topology, compiles the naive pattern and every optimized algorithm with nbrc,
# and simulates nbr-bench (bench/smpi/run.sh) once per message size, writing one JSON per
# (case, algorithm, size) cell plus table.md.
#
#   usage: bench/smpi/table.sh OUT_DIR [RANKS...]          (default ranks: 1024 4096)
#   env:   NBR_SMPI_CASES   cases to run (default: all six below), e.g. "moore-2-2 random-0.05"
#          NBR_SMPI_SIZES   message sizes in bytes (default: "4 1024")
#          NBR_SMPI_ALGOS   optimized algorithms (default: common-neighbor)
#          NBR_BUILD        normal build with nbrc (default: build)
#          plus bench/smpi/run.sh's NBR_SMPI_* variables
# Cells are simulated size by size (all small-message cells first: they are the cheap ones),
# and cells already present in OUT_DIR are skipped, so an interrupted table can be resumed.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$1
shift
ranks_list=("$@")
[ ${#ranks_list[@]} -gt 0 ] || ranks_list=(1024 4096)
cases=${NBR_SMPI_CASES:-}
sizes=${NBR_SMPI_SIZES:-"4 1024"}
algos=${NBR_SMPI_ALGOS:-common-neighbor}
nbrc=${NBR_BUILD:-$root/build}/compiler/nbrc
[ -x "$nbrc" ] || { echo "table.sh: $nbrc not found (build the project first)" >&2; exit 1; }
mkdir -p "$out"
out=$(cd "$out" && pwd)

# shellcheck source=../cases.sh
source "$root/bench/cases.sh"
prepare() { prepare_case "$nbrc" "$out" "$1" "$2" $algos; }
cases=${cases:-$BENCH_CASES}

for size in $sizes; do
  for ranks in "${ranks_list[@]}"; do
    for case in $cases; do
      prepare "$case" "$ranks"
      work="$out/$case-$ranks"
      for algo in $algos; do
        cell="$work/$algo.${size}B"
        if [ -f "$cell.bench.json" ]; then
          echo "# $case $ranks ${size} B $algo: done before"
          continue
        fi
        echo "# $case $ranks ${size} B $algo: simulating ($(date +%T))"
        start=$(date +%s)
        bash "$root/bench/smpi/run.sh" "$work/$algo" "$work/naive" "$ranks" "" "$size" 1 "$cell.bench.json.tmp"
        echo "$(($(date +%s) - start))" >"$cell.host-seconds"
        echo "${NBR_SMPI_RUNS:-2}" >"$cell.simulations"
        mv "$cell.bench.json.tmp" "$cell.bench.json"
      done
    done
  done
done
/usr/bin/python3 "$root/bench/smpi/table.py" "$out" | tee "$out/table.md"
