#!/usr/bin/env bash
# Replay overhead of libnbr against the native MPI call: 2 ranks bound to cores, 32 parallel
# edges each way (the naive pattern sends 32 messages each way per call), the naive pattern
# replayed by nbr beside the native neighborhood collective, in one nbr-bench run per launch.
# Each launch's times go to OUT/overhead.COLLECTIVE.L.json (what results/ keeps); table.py
# writes OUT/overhead.md: medians over the launches and the ratios (table.py OUT without
# --ratios: the times too).
#
#   usage: bench/overhead/run.sh [OUT] [options of bench/lib/study.sh]
#     --launches (default 5), --sizes (default 1,2,4,...,16384), --iters (default 2000),
#     --collectives (default: every collective nbr-bench knows)
#   env: NBR_EDGES (parallel edges each way, default 32)
set -euo pipefail
source "$(dirname "$0")/../lib/study.sh"
study_init "$@"
launches=${NBR_LAUNCHES:-5}
edges=${NBR_EDGES:-32}
sizes=${NBR_SIZES:-1,2,4,8,16,32,64,128,256,512,1024,2048,4096,8192,16384}
iters=${NBR_ITERS:-2000}
collectives=$(study_words "${NBR_COLLECTIVES:-$("$build/bench/nbr-bench" --list-collectives 2>/dev/null || echo allgather alltoall)}")

pattern=$(mktemp -d)
trap 'rm -rf "$pattern"' EXIT
"$build/compiler/nbrc" gen pairs --ranks 2 --edges "$edges" -o "$pattern/pe$edges.el" >/dev/null
"$build/compiler/nbrc" compile "$pattern/pe$edges.el" --algo naive -q -o "$pattern/pe$edges.naive"
rm -f "$out"/overhead.*.json

for ((l = 1; l <= launches; ++l)); do
  for collective in $collectives; do
    mpirun -np 2 --bind-to core "$build/bench/nbr-bench" --patterns "$pattern/pe$edges.naive" \
      --collective "$collective" --sizes "$sizes" --iters "$iters" \
      --json "$out/overhead.$collective.$l.json" >/dev/null
  done
  echo "# launch $l of $launches done ($(date +%T))"
done
/usr/bin/python3 "$root/bench/overhead/table.py" "$out" --ratios | tee "$out/overhead.md"
