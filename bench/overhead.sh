#!/usr/bin/env bash
# Replay overhead of libnbr against the native MPI call: 2 ranks bound to cores, 32 parallel
# edges each way (the naive pattern sends 32 messages each way per call), the naive pattern
# replayed by nbr beside the native neighborhood collective, in one nbr-bench run per launch.
# bench/overhead.py writes OUT/overhead.md: medians over the launches and native / nbr.
#
#   usage: bench/overhead.sh OUT_DIR [LAUNCHES]       (default 5)
#   env:   NBR_BUILD (default build), NBR_EDGES (parallel edges each way, default 32),
#          NBR_SIZES (default 1,2,4,...,16384), NBR_ITERS (default 2000),
#          NBR_COLLECTIVES (default: every collective nbr-bench knows)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/scripts/env.sh"
out=$1
launches=${2:-5}
build=${NBR_BUILD:-$root/build}
edges=${NBR_EDGES:-32}
sizes=${NBR_SIZES:-1,2,4,8,16,32,64,128,256,512,1024,2048,4096,8192,16384}
iters=${NBR_ITERS:-2000}
collectives=${NBR_COLLECTIVES:-$("$build/bench/nbr-bench" --list-collectives 2>/dev/null || echo allgather alltoall)}
mkdir -p "$out"
out=$(cd "$out" && pwd)

"$build/compiler/nbrc" gen pairs --ranks 2 --edges "$edges" -o "$out/pe$edges.el" >/dev/null
"$build/compiler/nbrc" compile "$out/pe$edges.el" --algo naive -q -o "$out/pe$edges.naive"

for ((l = 1; l <= launches; ++l)); do
  for collective in $collectives; do
    mpirun -np 2 --bind-to core "$build/bench/nbr-bench" --patterns "$out/pe$edges.naive" \
      --collective "$collective" --sizes "$sizes" --iters "$iters" \
      --json "$out/overhead.$collective.$l.json" >/dev/null
  done
  echo "# launch $l of $launches done ($(date +%T))"
done
/usr/bin/python3 "$root/bench/overhead.py" "$out" | tee "$out/overhead.md"
