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
cases=${NBR_SMPI_CASES:-"moore-2-2 moore-2-3 moore-3-1 moore-3-2 random-0.05 random-0.2"}
sizes=${NBR_SMPI_SIZES:-"4 1024"}
algos=${NBR_SMPI_ALGOS:-common-neighbor}
nbrc=${NBR_BUILD:-$root/build}/compiler/nbrc
[ -x "$nbrc" ] || { echo "table.sh: $nbrc not found (build the project first)" >&2; exit 1; }
mkdir -p "$out"
out=$(cd "$out" && pwd)

# prepare CASE RANKS: topology and compiled patterns of one case (once).
prepare() {
  local case=$1 ranks=$2 work="$out/$1-$2" d r algo
  mkdir -p "$work"
  if [ ! -f "$work/topology.el" ]; then
    case $case in
      moore-*-*)
        IFS=- read -r _ d r <<<"$case"
        "$nbrc" gen moore --ranks "$ranks" --dims "$d" --radius "$r" -o "$work/topology.el" ;;
      random-*)
        "$nbrc" gen random --ranks "$ranks" --density "${case#random-}" -o "$work/topology.el" ;;
      *) echo "table.sh: unknown case $case" >&2; exit 1 ;;
    esac
  fi
  for algo in naive $algos; do
    if [ ! -f "$work/$algo.inspect.json" ]; then
      "$nbrc" compile "$work/topology.el" --algo "$algo" -q -o "$work/$algo"
      "$nbrc" inspect "$work/$algo" --json >"$work/$algo.inspect.json"
    fi
  done
}

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
