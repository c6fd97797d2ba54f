#!/usr/bin/env bash
# The main job end to end on a built-in default: generate a topology, compile it with
# 2 MPI processes (each algorithm, then --algo auto choosing per message size on the niagara
# model), inspect, verify the patterns, and replay them in a 16-rank MPI job that checks
# every received block against MPI's own neighbor collectives.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=env.sh
source "$root/scripts/env.sh"
# NBR_DEMO_PREBUILT=1: use the nbrc and replay_check of NBR_BUILD_DIR as they are (the test
# suite runs the demo so); NBR_MPIEXEC: the launcher (default mpirun); NBR_DEMO_OUT: where
# the topology and patterns go (default NBR_BUILD_DIR/demo); NBR_DEMO_RANKS (default 16).
build=${NBR_BUILD_DIR:-$root/build}
if [ -z "${NBR_DEMO_PREBUILT:-}" ]; then
  bash "$root/scripts/install_deps.sh"
  # A fresh build directory is configured as Release; one already configured keeps its type.
  type=()
  [ -f "$build/CMakeCache.txt" ] || type=(-DCMAKE_BUILD_TYPE=Release)
  cmake -S "$root" -B "$build" -G Ninja "${type[@]}" >/dev/null
  cmake --build "$build" --target nbrc replay_check
fi
mpirun=${NBR_MPIEXEC:-mpirun}

out=${NBR_DEMO_OUT:-$build/demo}
mkdir -p "$out"
nbrc=$build/compiler/nbrc
ranks=${NBR_DEMO_RANKS:-16}

echo "== 1. generate: Moore neighborhood, $ranks ranks, 2-D, radius 1"
"$nbrc" gen moore --ranks "$ranks" --dims 2 --radius 1 -o "$out/moore.el"
placement=(--ranks-per-node 4 --ranks-per-socket 2)  # nodes of 4 ranks on two sockets
echo "== 2. compile with 2 MPI processes: naive, common-neighbor message combining, distance"
echo "      halving, groups of 3 friends (k-group), node-aware aggregation (hierarchical, Bruck"
echo "      rounds inside the node), on nodes of 4 ranks on two sockets"
"$mpirun" -np 2 "$nbrc" compile "$out/moore.el" -o "$out/patterns"
"$mpirun" -np 2 "$nbrc" compile "$out/moore.el" --algo common-neighbor -o "$out/patterns-cn"
"$mpirun" -np 2 "$nbrc" compile "$out/moore.el" --algo distance-halving "${placement[@]}" -o "$out/patterns-dh"
"$mpirun" -np 2 "$nbrc" compile "$out/moore.el" --algo kgroup --k 3 --threshold 2 -o "$out/patterns-kg"
"$mpirun" -np 2 "$nbrc" compile "$out/moore.el" --algo hierarchical-bruck-r2 "${placement[@]}" -o "$out/patterns-hi"
echo "== 3. auto: every candidate below compiled and simulated on the niagara model, the fastest"
echo "      kept per collective and message size (naive unless one is at least 1 % faster)"
"$nbrc" candidates --ranks "$ranks" "${placement[@]}" | paste -sd' '
"$mpirun" -np 2 "$nbrc" compile "$out/moore.el" --algo auto --machine niagara "${placement[@]}" -q -o "$out/patterns-auto"
echo "== 4. inspect: rank 5 of the naive pattern, summaries of the others, auto's size bands"
"$nbrc" inspect "$out/patterns" --rank 5
for p in patterns-cn patterns-dh patterns-kg patterns-hi; do "$nbrc" inspect "$out/$p"; done
"$nbrc" inspect "$out/patterns-auto" | sed -n '1,/^predicted latency/p' | sed '$d'
echo "== 5. verify"
for p in patterns patterns-cn patterns-dh patterns-kg patterns-hi patterns-auto; do
  "$nbrc" verify "$out/$p" --topology "$out/moore.el"
done
echo "== 6. replay in a $ranks-rank job and check the data against MPI's neighbor collectives"
echo "      (auto: 8 ints per block replay its small-message variant, 1024 its large one)"
for p in patterns patterns-cn patterns-dh patterns-kg patterns-hi patterns-auto; do
  "$mpirun" -np "$ranks" "$build/examples/replay_check" "$out/$p" 8
done
"$mpirun" -np "$ranks" "$build/examples/replay_check" "$out/patterns-auto" 1024
echo "demo: OK (outputs in $out)"
