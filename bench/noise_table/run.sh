#!/usr/bin/env bash
# Noise, skew and execution rules on the niagara model (README.md):
# every algorithm under libnbr's event-driven rule, the step-synchronized rule and BSP, and
# naive beside them, at noise fractions of 0 %, 2.5 %, 5 % and 10 % in ADAPT's long, rare
# detours (10 Hz, uniform 0 to twice the mean) and short, frequent ones (1 kHz), over
# back-to-back calls; and one rank late by 100 us in a single call (blast radius).
# table.py writes OUT/table.md and OUT/noise.csv.
#
#   usage: bench/noise_table/run.sh [OUT] [options of bench/lib/study.sh]
#     --cases "case:ranks:per_node:per_socket ..." (cases as in bench/lib/cases.sh)
#     --algos (default: common-neighbor kgroup distance-halving hierarchical)
#     --sizes (default 8,4K,64K), --iters (back-to-back calls, default 10)
#   env: NBR_SEEDS (default 2), NBR_COMPILE_LAUNCH (default "mpirun -np 2"; empty: no mpirun)
# Runs already in OUT are kept, so an interrupted run resumes.
set -euo pipefail
source "$(dirname "$0")/../lib/study.sh"
study_init "$@"
cases=$(study_words "${NBR_CASES:-moore-2-2:1024:32:16 random-0.05:1024:40:20 moore-2-2:4096:32:16}")
algos=$(study_words "${NBR_ALGOS:-common-neighbor kgroup distance-halving hierarchical}")
sizes=$(study_commas "${NBR_SIZES:-8,4K,64K}")
iterations=${NBR_ITERS:-10}
seeds=${NBR_SEEDS:-2}
nbrc=$build/compiler/nbrc
read -r -a launch <<<"${NBR_COMPILE_LAUNCH-mpirun -np 2}"

# Settings: name and nbrc simulate options. Long rare detours: 10 Hz, mean 2.5/5/10 ms;
# short frequent ones: 1 kHz, mean 25/50/100 us; both uniform on [0, 2 x mean].
settings=(
  "quiet:"
  "long-2.5:--noise 10:2500:uniform"
  "long-5:--noise 10:5000:uniform"
  "long-10:--noise 10:10000:uniform"
  "short-2.5:--noise 1000:25:uniform"
  "short-5:--noise 1000:50:uniform"
  "short-10:--noise 1000:100:uniform"
)

for spec in $cases; do
  IFS=: read -r case ranks per_node per_socket <<<"$spec"
  dir=$out/$case-$ranks-$per_node
  mkdir -p "$dir"
  placement=(--ranks-per-node "$per_node" --ranks-per-socket "$per_socket")
  gen_case "$nbrc" "$case" "$ranks" "$dir/topology.el"
  for algo in naive $algos; do
    [ -d "$dir/$algo" ] && continue
    echo "# $spec: compiling $algo ($(date +%T))"
    "${launch[@]}" "$nbrc" compile "$dir/topology.el" --algo "$algo" "${placement[@]}" -q -o "$dir/$algo.tmp"
    mv "$dir/$algo.tmp" "$dir/$algo"
  done
  late=$((ranks / 2 + per_node / 2))  # a rank in the middle of a node in the middle
  for algo in naive $algos; do
    rules="event step bsp"
    [ "$algo" = naive ] && rules=event  # no forwarding: the rules coincide
    for rule in $rules; do
      for collective in allgather alltoall; do
        for setting in "${settings[@]}" "late:--late $late:100"; do
          name=${setting%%:*}
          read -r -a extra <<<"${setting#*:}"
          result=$dir/sim.$algo.$rule.$collective.$name.json
          [ -f "$result" ] && continue
          calls=(--iterations "$iterations" --seeds "$seeds")
          [ "$name" = late ] && calls=(--iterations 1)
          "$nbrc" simulate "$dir/$algo" --machine niagara "${placement[@]}" --collective "$collective" \
            --sizes "$sizes" --rule "$rule" "${calls[@]}" ${extra[@]+"${extra[@]}"} --json >"$result.tmp"
          mv "$result.tmp" "$result"
        done
      done
      echo "# $spec: $algo $rule done ($(date +%T))"
    done
  done
done
/usr/bin/python3 "$root/bench/noise_table/table.py" "$out" | tee "$out/table.md"
