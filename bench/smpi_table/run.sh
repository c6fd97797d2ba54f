#!/usr/bin/env bash
# The simulated-cluster table of README.md: for every (topology, ranks) case it
# generates the topology, compiles the naive pattern and every optimized algorithm with nbrc,
# and simulates nbr-bench (bench/smpi/run.sh) once per message size. The data, in
# OUT/CASE-RANKS/: per (algorithm, size) cell ALGO.SIZEB.bench.json (nbr-bench's results),
# .host-seconds and .simulations, and per pattern ALGO.inspect.json (its message counts);
# topologies and patterns stay in BUILD/bench/smpi_table-patterns. Then OUT/table.md.
#
#   usage: bench/smpi_table/run.sh [OUT] [options of bench/lib/study.sh]
#     --ranks  (default 1024 4096)
#     --cases  cases to run (default: all six below), e.g. "moore-2-2 random-0.05"
#     --sizes  message sizes in bytes (default: "4 1024")
#     --algos  optimized algorithms (default: common-neighbor)
#     --build  the normal build with nbrc (default: build)
#   env: bench/smpi/run.sh's NBR_SMPI_* variables
# Cells are simulated size by size (all small-message cells first: they are the cheap ones),
# and cells already present in OUT are skipped, so an interrupted table can be resumed.
set -euo pipefail
source "$(dirname "$0")/../lib/study.sh"
study_init "$@"
read -r -a ranks_list <<<"$(study_words "${NBR_RANKS:-1024 4096}")"
cases=$(study_words "${NBR_CASES:-}")
sizes=$(study_words "${NBR_SIZES:-4 1024}")
algos=$(study_words "${NBR_ALGOS:-common-neighbor}")
nbrc=$build/compiler/nbrc
[ -x "$nbrc" ] || { echo "smpi_table: $nbrc not found (build the project first)" >&2; exit 1; }

patterns=$build/bench/smpi_table-patterns

# prepare CASE RANKS: the topology and patterns of a case, and their message counts in OUT.
prepare() {
  local algo
  prepare_case "$nbrc" "$patterns" "$1" "$2" $algos
  mkdir -p "$out/$1-$2"
  for algo in naive $algos; do
    without_dir "$patterns" "$patterns/$1-$2/$algo.inspect.json" >"$out/$1-$2/$algo.inspect.json"
  done
}
cases=${cases:-$BENCH_CASES}

# Every case first, so that the table lists the cells a stopped run did not reach.
for ranks in "${ranks_list[@]}"; do
  for case in $cases; do
    prepare "$case" "$ranks"
  done
done
for size in $sizes; do
  for ranks in "${ranks_list[@]}"; do
    for case in $cases; do
      work="$patterns/$case-$ranks"
      for algo in $algos; do
        cell="$out/$case-$ranks/$algo.${size}B"
        if [ -f "$cell.bench.json" ]; then
          echo "# $case $ranks ${size} B $algo: done before"
          continue
        fi
        echo "# $case $ranks ${size} B $algo: simulating ($(date +%T))"
        start=$(date +%s)
        bash "$root/bench/smpi/run.sh" "$work/$algo" "$work/naive" "$ranks" "" "$size" 1 "$cell.bench.json.tmp"
        echo "$(($(date +%s) - start))" >"$cell.host-seconds"
        echo "${NBR_SMPI_RUNS:-2}" >"$cell.simulations"
        without_dir "$patterns" "$cell.bench.json.tmp" >"$cell.bench.json.part"
        mv "$cell.bench.json.part" "$cell.bench.json"
        rm "$cell.bench.json.tmp"
      done
    done
  done
done
/usr/bin/python3 "$root/bench/smpi_table/table.py" "$out" | tee "$out/table.md"
