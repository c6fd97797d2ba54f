#!/usr/bin/env bash
# Distance halving against naive and common-neighbor, as in the distance-halving paper's
# evaluation, with nbrc simulate on the niagara model (table.py writes
# OUT/table.md and OUT/halving-*.png):
#   - messages per rank at n = 2000 (40 ranks per node on two sockets) next to the paper's
#     Sec. V model (Eqs. 1-2), δ = 0.05 .. 0.7;
#   - simulated latency, 8 B to 4 MiB: random graphs at 2160 ranks (60 nodes x 36, sockets
#     of 18), Moore neighborhoods at 2048 ranks (64 nodes x 32, sockets of 16);
#   - compile cost with 2 processes (nbr-compile-bench) at 2160 and 4096 ranks.
# Kept per case: every pattern's inspect --json, the compiler's notes, nbrc verify's verdict and
# the simulations' JSON; the patterns and topologies are removed once a case is simulated.
#
#   usage: bench/halving_table/run.sh [OUT] [--build DIR]
#   env:   NBR_COMPILE_LAUNCH (default "mpirun -np 2"; empty: no mpirun),
#          NBR_SKIP_COST=1 to leave out the compile-cost runs
# Cases already done in OUT are skipped, so an interrupted run resumes.
set -euo pipefail
source "$(dirname "$0")/../lib/study.sh"
study_init "$@"
nbrc=$build/compiler/nbrc
launch=${NBR_COMPILE_LAUNCH-mpirun -np 2}
sizes=8,32,128,512,2K,8K,32K,128K,512K,2M,4M

# compile_all DIR PER_NODE PER_SOCKET: naive, common-neighbor and distance-halving of DIR/topology.el,
# each proven by nbrc verify
compile_all() {
  local dir=$1 node=$2 socket=$3 algo
  for algo in naive common-neighbor distance-halving; do
    [ -f "$dir/$algo.inspect.json" ] && continue
    # shellcheck disable=SC2086
    $launch "$nbrc" compile "$dir/topology.el" --algo "$algo" --ranks-per-node "$node" --ranks-per-socket "$socket" \
      -q -o "$dir/$algo" 2>"$dir/$algo.notes.txt"
    "$nbrc" verify "$dir/$algo" --topology "$dir/topology.el" | tee "$dir/$algo.verify.txt"
    "$nbrc" inspect "$dir/$algo" --json >"$dir/$algo.inspect.json.tmp"
    mv "$dir/$algo.inspect.json.tmp" "$dir/$algo.inspect.json"
  done
}

# simulate_all DIR PER_NODE PER_SOCKET: both algorithms against naive on niagara
simulate_all() {
  local dir=$1 node=$2 socket=$3 algo
  for algo in common-neighbor distance-halving; do
    [ -f "$dir/sim.$algo.json" ] && continue
    "$nbrc" simulate "$dir/$algo" --baseline "$dir/naive" --machine niagara --ranks-per-node "$node" \
      --ranks-per-socket "$socket" --sizes "$sizes" --json >"$dir/sim.$algo.json.tmp"
    mv "$dir/sim.$algo.json.tmp" "$dir/sim.$algo.json"
  done
}

# simulated DIR: whether both simulations of DIR are there (then its patterns are not needed)
simulated() { [ -f "$1/sim.common-neighbor.json" ] && [ -f "$1/sim.distance-halving.json" ]; }

# run_case DIR PER_NODE PER_SOCKET GEN_ARGS...: generates, compiles, verifies and simulates one
# case, then removes its patterns and topology
run_case() {
  local dir=$1 node=$2 socket=$3
  shift 3
  mkdir -p "$dir"
  if ! simulated "$dir"; then
    [ -f "$dir/topology.el" ] || "$nbrc" gen "$@" -o "$dir/topology.el" >/dev/null
    compile_all "$dir" "$node" "$socket"
    simulate_all "$dir" "$node" "$socket"
  fi
  rm -rf "${dir:?}/naive" "$dir/common-neighbor" "$dir/distance-halving" "$dir/topology.el"
}

echo "# messages per rank at n = 2000 ($(date +%T))"
for delta in 0.05 0.1 0.3 0.5 0.7; do
  dir=$out/model-$delta
  mkdir -p "$dir"
  if [ ! -f "$dir/distance-halving.inspect.json" ]; then
    "$nbrc" gen random --ranks 2000 --density "$delta" -o "$dir/topology.el" >/dev/null
    # shellcheck disable=SC2086
    $launch "$nbrc" compile "$dir/topology.el" --algo distance-halving --ranks-per-node 40 --ranks-per-socket 20 \
      -q -o "$dir/distance-halving"
    "$nbrc" inspect "$dir/distance-halving" --json >"$dir/distance-halving.inspect.json.tmp"
    mv "$dir/distance-halving.inspect.json.tmp" "$dir/distance-halving.inspect.json"
  fi
  rm -rf "${dir:?}/distance-halving" "$dir/topology.el"
done

for delta in 0.05 0.1 0.3 0.5 0.7; do
  echo "# random δ=$delta at 2160 ($(date +%T))"
  run_case "$out/random-$delta-2160" 36 18 random --ranks 2160 --density "$delta"
done
for case in 2-1 2-2 2-3 3-1 3-2; do
  echo "# Moore $case at 2048 ($(date +%T))"
  IFS=- read -r d r <<<"$case"
  run_case "$out/moore-$case-2048" 32 16 moore --ranks 2048 --dims "$d" --radius "$r"
done

if [ -z "${NBR_SKIP_COST:-}" ]; then
  cost=$out/compile_cost.jsonl
  for n in 2160 4096; do
    for delta in 0.05 0.1 0.3 0.5 0.7; do
      for algo in common-neighbor distance-halving; do
        grep -q "\"topology\": \"random ranks=$n density=$delta seed=1\", \"algorithm\": \"$algo\"" "$cost" 2>/dev/null &&
          continue
        echo "# compile cost $algo random δ=$delta at $n ($(date +%T))"
        # shellcheck disable=SC2086
        $launch "$build/bench/nbr-compile-bench" --random "$n,$delta,1" --algo "$algo" --ranks-per-node 36 \
          --ranks-per-socket 18 --json "$cost"
      done
    done
  done
fi
/usr/bin/python3 "$root/bench/halving_table/table.py" "$out" | tee "$out/table.md"
