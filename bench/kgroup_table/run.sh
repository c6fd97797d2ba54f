#!/usr/bin/env bash
# Groups of k friends (kgroup) as in the k-group paper's evaluation; table.py
# turns OUT into tables and OUT_DIR/kgroup-*.png:
#   - hyperedges per rank in the style of the paper's Figs. 4 and 8, topology-agnostic and
#     -aware: Moore d = 2..4, r = 1..3 at 4096 ranks (40 per node), k = 2..6, 8, 16; random
#     δ = 0.05, 0.1, 0.2, 0.4 at 1024 ranks (32 per node), k = 2..6; every pattern proven by
#     nbrc verify;
#   - k = 2 topology-agnostic with Θ = 3 (more than 3 common neighbors) next to common-neighbor
#     with its default Θ = 4 (at least 4): the same friendship criterion, messages side by side;
#   - simulated latency on niagara, 4 B to 4 MiB: naive, common-neighbor and kgroup k = 2, 3, 4
#     in both variants, on Moore d = 2 r = 1..3 and d = 3 r = 1, 2 at 4096 ranks and on the
#     random graphs at 1024 ranks;
#   - compile cost with 2 processes (nbr-compile-bench): Moore d = 2 r = 4 at 4096 ranks and
#     random δ = 0.2 at 1024 ranks.
#
#   usage: bench/kgroup_table/run.sh [OUT] [--build DIR]
#   env:   NBR_COMPILE_LAUNCH (default "mpirun -np 2"; empty: no mpirun),
#          NBR_SKIP_COST=1 to leave out the compile-cost runs,
#          NBR_SKIP="moore-4-3 ..." to leave out cases (Moore d = 4, r = 3 has 2400
#          neighbors per rank: 2-4 minutes per compile and verify; its topology-agnostic k >= 3
#          are not built: their search is budget-bound there, lower bounds only)
# Work already in OUT is skipped, so an interrupted run resumes.
set -euo pipefail
source "$(dirname "$0")/../lib/study.sh"
study_init "$@"
nbrc=$build/compiler/nbrc
launch=${NBR_COMPILE_LAUNCH-mpirun -np 2}
sizes=4,16,64,256,1K,4K,16K,64K,256K,1M,4M

# variant DIR NAME PER_NODE SIMULATE ARGS...: compiles DIR/topology.el into DIR/NAME with ARGS,
# verifies it, records inspect --json and the compiler's notes, simulates it against DIR/naive
# if SIMULATE=1, then removes the pattern
variant() {
  local dir=$1 name=$2 node=$3 simulate=$4
  shift 4
  if [ ! -f "$dir/$name.inspect.json" ]; then
    # shellcheck disable=SC2086
    $launch "$nbrc" compile "$dir/topology.el" "$@" -q -o "$dir/$name" 2>"$dir/$name.notes.txt"
    "$nbrc" verify "$dir/$name" --topology "$dir/topology.el" >"$dir/$name.verify.txt"
    "$nbrc" inspect "$dir/$name" --json >"$dir/$name.inspect.json.tmp"
    mv "$dir/$name.inspect.json.tmp" "$dir/$name.inspect.json"
  fi
  if [ "$simulate" = 1 ] && [ ! -f "$dir/sim.$name.json" ]; then
    "$nbrc" simulate "$dir/$name" --baseline "$dir/naive" --machine niagara --ranks-per-node "$node" \
      --ranks-per-socket $((node / 2)) --sizes "$sizes" --json >"$dir/sim.$name.json.tmp"
    mv "$dir/sim.$name.json.tmp" "$dir/sim.$name.json"
  fi
  rm -rf "${dir:?}/$name"
}

# run_case NAME PER_NODE SIMULATE AGNOSTIC_UP_TO KS...: every k topology-aware, those up to
# AGNOSTIC_UP_TO topology-agnostic too, plus naive and the common-neighbor comparison
run_case() {
  local name=$1 node=$2 simulate=$3 agnostic_up_to=$4 k sim
  shift 4
  local dir=$out/$name
  echo "# $name ($(date +%T))"
  variant "$dir" naive "$node" 0 --algo naive
  if [ "$simulate" = 1 ] && [ ! -d "$dir/naive" ]; then
    $launch "$nbrc" compile "$dir/topology.el" -q -o "$dir/naive"  # the baseline
  fi
  variant "$dir" common-neighbor "$node" "$simulate" --algo common-neighbor
  variant "$dir" kg2-t3 "$node" 0 --algo kgroup --k 2 --threshold 3
  for k in "$@"; do
    sim=0
    [ "$simulate" = 1 ] && [ "$k" -le 4 ] && sim=1
    if [ "$k" -le "$agnostic_up_to" ]; then
      variant "$dir" "kg$k-agnostic" "$node" "$sim" --algo kgroup --k "$k"
    fi
    variant "$dir" "kg$k-aware" "$node" "$sim" --algo kgroup --k "$k" --topology-aware --ranks-per-node "$node"
  done
  rm -rf "${dir:?}/naive"
}

for delta in 0.05 0.1 0.2 0.4; do
  mkdir -p "$out/random-$delta-1024"
  [ -f "$out/random-$delta-1024/topology.el" ] ||
    "$nbrc" gen random --ranks 1024 --density "$delta" -o "$out/random-$delta-1024/topology.el" >/dev/null
  run_case "random-$delta-1024" 32 1 6 2 3 4 5 6
done
for d in 2 3 4; do
  for r in 1 2 3; do
    name=moore-$d-$r-4096
    [[ " ${NBR_SKIP:-} " == *" moore-$d-$r "* ]] && continue
    mkdir -p "$out/$name"
    [ -f "$out/$name/topology.el" ] ||
      "$nbrc" gen moore --ranks 4096 --dims "$d" --radius "$r" -o "$out/$name/topology.el" >/dev/null
    simulate=0
    { [ "$d" = 2 ] || { [ "$d" = 3 ] && [ "$r" -le 2 ]; }; } && simulate=1
    agnostic_up_to=16
    [ "$name" = moore-4-3-4096 ] && agnostic_up_to=2
    run_case "$name" 40 "$simulate" "$agnostic_up_to" 2 3 4 5 6 8 16
  done
done

if [ "${NBR_SKIP_COST:-0}" != 1 ] && [ ! -f "$out/compile_cost.jsonl" ]; then
  echo "# compile cost ($(date +%T))"
  bench=$build/bench/nbr-compile-bench
  for c in "--moore 4096,2,4 --ranks-per-node 40" "--random 1024,0.2,1 --ranks-per-node 32"; do
    for k in 2 3 4; do
      # shellcheck disable=SC2086
      $launch "$bench" $c --algo kgroup --k "$k" --json "$out/compile_cost.jsonl.tmp"
      # shellcheck disable=SC2086
      $launch "$bench" $c --algo kgroup --k "$k" --topology-aware --json "$out/compile_cost.jsonl.tmp"
    done
    # shellcheck disable=SC2086
    $launch "$bench" $c --algo common-neighbor --json "$out/compile_cost.jsonl.tmp"
  done
  mv "$out/compile_cost.jsonl.tmp" "$out/compile_cost.jsonl"
fi
python3 "$root/bench/kgroup_table/table.py" "$out" >"$out/table.md"
echo "wrote $out/table.md"
