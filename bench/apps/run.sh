#!/usr/bin/env bash
# The example applications (examples/: spmm, cg, stencil, matching) with nbr, two ways:
#
#  1. Predicted at cluster scale: each program writes its own process graph at RANKS ranks
#     (--write-topology) and the bytes its calls move per iteration (or per matching round) at
#     that size; nbrc compiles it with naive, common-neighbor, kgroup, distance halving, hierarchical and
#     auto, and simulates every pattern on MACHINE at the program's sizes: the communication
#     time per iteration (the sum over the step's calls) and its speedup over naive.
#  2. Measured on this machine: time per iteration natively, under the drop-in (captured,
#     compiled with --algo auto --keep 3, preloaded), under the drop-in with measured selection
#     (NBR_MEASURE=1: the kept candidates timed in the program's first calls) and through the
#     API (NAME-nbr --nbr) on 2 ranks bound to cores, where the model and the machine agree
#     that naive is best (the directories keep naive alone: nothing to measure), so this shows
#     what nbr costs when it cannot gain; and on 4 oversubscribed ranks with distance halving
#     replayed, which measures scheduling more than messaging, and measured selection over an
#     auto directory compiled from the same capture (--keep 3: naive, distance halving and a
#     hierarchical configuration timed in the program's first calls; cg's 25-call solves
#     carry their trials from one communicator to the next). Launches alternate; medians.
#
# table.py writes OUT/apps.md from both.
#
#   usage: bench/apps/run.sh [OUT] [options of bench/lib/study.sh]
#     --ranks N        ranks of the simulated runs (default 2048; 0 skips part 1)
#     --machine M      machine preset or file (default niagara)
#     --placement N:S  ranks per node:per socket (default 32:16, the distance-halving paper's
#                      2048-rank runs)
#     --launches N     launches per local configuration (default 5; 0 skips part 2)
#   env: NBR_COMPILE_LAUNCH (default "mpirun -np 2"; empty: no mpirun)
# Cases already done in OUT are kept, so an interrupted run resumes.
set -euo pipefail
source "$(dirname "$0")/../lib/study.sh"
study_init "$@"
ranks=${NBR_RANKS:-2048}
machine=${NBR_MACHINE:-niagara}
IFS=: read -r per_node per_socket <<<"${NBR_PLACEMENT:-32:16}"
launches=${NBR_LAUNCHES:-5}
nbrc=$build/compiler/nbrc
examples=$build/examples
read -r -a compile_launch <<<"${NBR_COMPILE_LAUNCH-mpirun -np 2}"
matrices=$root/../shared/matrices
placement=(--ranks-per-node "$per_node" --ranks-per-socket "$per_socket")

# Cases: "NAME|PROGRAM ARGS" at cluster scale (inputs sized for about 2048 ranks: 8 to 128
# rows or vertices per rank), the papers' SpMM matrix dwt_193 as it is.
sim_cases=(
  "spmm-stencil27|spmm --stencil 64 --points 27"
  "spmm-random|spmm --random 16384 --density 0.002"
  "spmm-rmat|spmm --rmat 16"
  "spmm-dwt_193|spmm --matrix $matrices/dwt_193.mtx"
  "cg-stencil7|cg --stencil 64"
  "cg-rmat|cg --rmat 16"
  "stencil-3d-r1|stencil --dims 3 --radius 1 --local 16"
  "stencil-2d-r2|stencil --dims 2 --radius 2 --local 1"
  "matching-rmat|matching --rmat 16"
  "matching-geometric|matching --geometric 262144"
)
algorithms=(naive common-neighbor kgroup distance-halving hierarchical auto)

# compile_options ALGO TRAFFIC_FILE: auto is told the bytes per edge of the program's v-calls
# (--v-bytes 1:MAX, MAX the largest of the step; later matching rounds move fewer).
compile_options() {
  local vmax
  case $1 in
    auto)
      vmax=$(grep -oE "(allgatherv|alltoallv) [0-9]+ B" "$2" | awk '$2 > m { m = $2 } END { print m + 0 }')
      echo "--algo auto --machine $machine ${placement[*]}"
      if [ "$vmax" -gt 0 ]; then echo "--v-bytes 1:$vmax"; fi ;;
    *) echo "--algo $1 ${placement[*]}" ;;
  esac
}

simulate_case() {
  local name=$1 command=$2 dir="$out/sim/$1" program args algo collective bytes
  program=${command%% *}
  args=${command#* }
  mkdir -p "$dir"
  if [ ! -f "$dir/traffic.txt" ]; then
    # shellcheck disable=SC2086
    "$examples/$program" $args --write-topology "$ranks" "$dir/topology.el" >"$dir/traffic.tmp"
    mv "$dir/traffic.tmp" "$dir/traffic.txt"
  fi
  for algo in "${algorithms[@]}"; do
    [ -f "$dir/$algo.done" ] && continue
    echo "# $name: $algo ($(date +%T))"
    rm -rf "$dir/$algo"
    # shellcheck disable=SC2046
    "${compile_launch[@]}" "$nbrc" compile "$dir/topology.el" $(compile_options "$algo" "$dir/traffic.txt") -q -o "$dir/$algo" \
      2>"$dir/$algo.notes"
    # One simulation per call of the step: "COLLECTIVE BYTES B" pairs of the traffic line.
    local calls call
    mapfile -t calls < <(grep -oE "(allgather|alltoallv?) [0-9]+ B" "$dir/traffic.txt")
    for call in "${calls[@]}"; do
      read -r collective bytes _ <<<"$call"
      "$nbrc" simulate "$dir/$algo" --machine "$machine" "${placement[@]}" --collective "$collective" \
        --sizes "$bytes" --json >"$dir/$algo.$collective.json"
    done
    "$nbrc" inspect "$dir/$algo" --json >"$dir/$algo.inspect.json"
    rm -rf "$dir/$algo"  # the patterns are large; the predictions are kept
    touch "$dir/$algo.done"
  done
}

# Part 2: this machine. "NAME|PROGRAM ARGS" at the programs' built-in problems, timed longer:
# 1000 iterations (the trials of measured selection take 45 to 200 of them), cg 10 solves of
# 25 iterations (the last one's time printed), matching its 8 rounds.
local_cases=(
  "spmm|spmm --iterations 1000"
  "cg|cg --stencil 24 --solves 10"
  "stencil|stencil --dims 2 --radius 1 --local 32 --iterations 1000"
  "matching|matching --geometric 20000"
)

# prepare_local NAME "PROGRAM ARGS" P "COMPILE OPTIONS" ["MEASURED OPTIONS"]: capture, compile
# (drop-in) and the program's own topology compiled (API) into $out/local/P/NAME; with MEASURED
# OPTIONS the capture compiled with them too (measure/: the drop-in's directory under
# NBR_MEASURE=1, else preload/ is).
prepare_local() {
  local name=$1 command=$2 ranks=$3 options=$4 measured=${5:-} dir="$out/local/$3/$1" program args
  program=${command%% *}
  args=${command#* }
  [ -d "$dir/api" ] && return 0
  rm -rf "$dir" && mkdir -p "$dir"
  # shellcheck disable=SC2086
  mpirun -np "$ranks" env LD_PRELOAD="$build/interpose/libnbr-capture.so" NBR_CAPTURE="$dir/captures" \
    "$examples/$program" $args >/dev/null
  # shellcheck disable=SC2086
  "$nbrc" compile "$dir/captures" $options -q -o "$dir/preload"
  if [ -n "$measured" ]; then
    # shellcheck disable=SC2086
    "$nbrc" compile "$dir/captures" $measured -q -o "$dir/measure"
  fi
  # shellcheck disable=SC2086
  "$examples/$program" $args --write-topology "$ranks" "$dir/topology.el" >/dev/null
  # shellcheck disable=SC2086
  "$nbrc" compile "$dir/topology.el" $options -q -o "$dir/api"
}

# run_local NAME "PROGRAM ARGS" P "LAUNCHER...": the three ways, LAUNCHES times, alternating.
run_local() {
  local name=$1 command=$2 ranks=$3 dir="$out/local/$3/$1" program args l measure
  shift 3
  program=${command%% *}
  args=${command#* }
  measure=$dir/preload
  [ -d "$dir/measure" ] && measure=$dir/measure
  for ((l = 1; l <= launches; ++l)); do
    [ -f "$dir/api.$l.txt" ] && continue
    # shellcheck disable=SC2086
    "$@" "$examples/$program" $args >"$dir/native.$l.txt"
    # shellcheck disable=SC2086
    "$@" env LD_PRELOAD="$build/interpose/libnbr-preload.so" NBR_PATTERNS="$dir/preload" NBR_REPORT=1 \
      "$examples/$program" $args >"$dir/preload.$l.txt" 2>&1
    # shellcheck disable=SC2086
    "$@" env LD_PRELOAD="$build/interpose/libnbr-preload.so" NBR_PATTERNS="$measure" NBR_REPORT=1 NBR_MEASURE=1 \
      "$examples/$program" $args >"$dir/measured.$l.txt" 2>&1
    for kind in preload measured; do
      grep -q "nbr: replayed [1-9][0-9]* calls" "$dir/$kind.$l.txt" || {
        echo "apps: $name on $ranks ranks: the drop-in ($kind) replayed nothing" >&2
        exit 1
      }
    done
    # shellcheck disable=SC2086
    "$@" "$examples/$program-nbr" $args --nbr "$dir/api" >"$dir/api.tmp"
    mv "$dir/api.tmp" "$dir/api.$l.txt"
  done
  for l in "$dir"/*.[0-9]*.txt; do
    grep -q "check OK" "$l" || {
      echo "apps: $l: the check did not pass" >&2
      exit 1
    }
  done
}

if [ "$ranks" -gt 0 ]; then
  for case in "${sim_cases[@]}"; do simulate_case "${case%%|*}" "${case#*|}"; done
fi

if [ "$launches" -gt 0 ]; then
  for case in "${local_cases[@]}"; do
    name=${case%%|*}
    echo "# this machine: $name ($(date +%T))"
    prepare_local "$name" "${case#*|}" 2 "--algo auto --keep 3 --machine $machine --ranks-per-node 2"
    run_local "$name" "${case#*|}" 2 mpirun -np 2 --bind-to core
    prepare_local "$name" "${case#*|}" 4 "--algo distance-halving --ranks-per-node 2" \
      "--algo auto --keep 3 --machine $machine --ranks-per-node 2"
    run_local "$name" "${case#*|}" 4 mpirun -np 4 --oversubscribe
  done
fi

/usr/bin/python3 "$root/bench/apps/table.py" "$out" "$ranks" "$machine" "$per_node:$per_socket" "$launches" |
  tee "$out/apps.md"
