#!/usr/bin/env bash
# The main job end to end on a built-in default: generate a topology, compile it with
# 2 MPI processes, inspect a rank, verify the pattern, and replay it in a 16-rank MPI job
# that checks every received block against MPI's own neighbor collectives.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=env.sh
source "$root/scripts/env.sh"
bash "$root/scripts/install_deps.sh"

build=${NBR_BUILD_DIR:-$root/build}
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" --target nbrc replay_check

out=$build/demo
mkdir -p "$out"
nbrc=$build/compiler/nbrc
ranks=${NBR_DEMO_RANKS:-16}

echo "== 1. generate: Moore neighborhood, $ranks ranks, 2-D, radius 1"
"$nbrc" gen moore --ranks "$ranks" --dims 2 --radius 1 -o "$out/moore.el"
echo "== 2. compile with 2 MPI processes: naive, common-neighbor message combining, distance"
echo "      halving for nodes of 4 ranks on two sockets, and groups of 3 friends (k-group)"
mpirun -np 2 "$nbrc" compile "$out/moore.el" -o "$out/patterns"
mpirun -np 2 "$nbrc" compile "$out/moore.el" --algo common-neighbor -o "$out/patterns-cn"
mpirun -np 2 "$nbrc" compile "$out/moore.el" --algo distance-halving --ranks-per-node 4 --ranks-per-socket 2 \
  -o "$out/patterns-dh"
mpirun -np 2 "$nbrc" compile "$out/moore.el" --algo kgroup --k 3 --threshold 2 -o "$out/patterns-kg"
echo "== 3. inspect: rank 5 of the naive pattern, summaries of the others"
"$nbrc" inspect "$out/patterns" --rank 5
"$nbrc" inspect "$out/patterns-cn"
"$nbrc" inspect "$out/patterns-dh"
"$nbrc" inspect "$out/patterns-kg"
echo "== 4. verify"
for p in patterns patterns-cn patterns-dh patterns-kg; do "$nbrc" verify "$out/$p" --topology "$out/moore.el"; done
echo "== 5. replay in a $ranks-rank job and check the data against MPI's neighbor collectives"
for p in patterns patterns-cn patterns-dh patterns-kg; do mpirun -np "$ranks" "$build/examples/replay_check" "$out/$p" 8; done
echo "demo: OK (outputs in $out)"
