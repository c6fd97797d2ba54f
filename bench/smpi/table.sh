#!/usr/bin/env bash
# The simulated-cluster table of docs/performance.md: for every (topology, ranks) case it
# generates the topology, compiles the naive pattern and every optimized algorithm with nbrc,
# simulates nbr-bench (bench/smpi/run.sh) and writes one JSON per case plus table.md.
#
#   usage: bench/smpi/table.sh OUT_DIR [RANKS...]          (default ranks: 1024 4096)
#   env:   NBR_SMPI_CASES   cases to run (default: all six below), e.g. "moore-2-2 random-0.05"
#          NBR_SMPI_ALGOS   optimized algorithms (default: common-neighbor)
#          NBR_BUILD        normal build with nbrc (default: build)
#          plus bench/smpi/run.sh's NBR_SMPI_* variables
# Cases already present in OUT_DIR are skipped, so an interrupted table can be resumed.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$1
shift
ranks_list=("$@")
[ ${#ranks_list[@]} -gt 0 ] || ranks_list=(1024 4096)
cases=${NBR_SMPI_CASES:-"moore-2-2 moore-2-3 moore-3-1 moore-3-2 random-0.05 random-0.2"}
algos=${NBR_SMPI_ALGOS:-common-neighbor}
nbrc=${NBR_BUILD:-$root/build}/compiler/nbrc
[ -x "$nbrc" ] || { echo "table.sh: $nbrc not found (build the project first)" >&2; exit 1; }
mkdir -p "$out"
out=$(cd "$out" && pwd)

for ranks in "${ranks_list[@]}"; do
  for case in $cases; do
    work="$out/$case-$ranks"
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
    for algo in $algos; do
      json="$work/$algo.bench.json"
      if [ -f "$json" ]; then
        echo "# $case $ranks $algo: done before"
        continue
      fi
      echo "# $case $ranks $algo: simulating ($(date +%T))"
      start=$(date +%s)
      bash "$root/bench/smpi/run.sh" "$work/$algo" "$work/naive" "$ranks" "" 4,1024 1 "$json.tmp"
      echo "$(($(date +%s) - start))" >"$work/$algo.host-seconds"
      mv "$json.tmp" "$json"
    done
  done
done
/usr/bin/python3 "$root/bench/smpi/table.py" "$out" | tee "$out/table.md"
