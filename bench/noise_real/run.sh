#!/usr/bin/env bash
# One late rank on real MPI (this machine) against nbrc simulate's prediction for the same run:
# a 4x4 Moore torus (radius 1) on 16 ranks, compiled for virtual nodes of 4 ranks (sockets of
# 2), so that the hierarchical and distance-halving patterns forward; rank 5 enters every
# disturbed call DELAY us late (sleeping). nbr-noise-bench times native, nbr's event-driven
# replay and nbr under the step rule (NBR_LOAD_STEP_SYNC), quiet and disturbed, at a size below
# and one above Open MPI's eager limit; each launch gives per rank how much later it finished,
# and the blast radius (ranks later by more than DELAY/2). The prediction: the machine
# calibrated here (nbr-calibrate, and the switch time of two ranks sharing a core), 16 ranks
# on one node of 2 cores, nbrc simulate --late 5:DELAY under --rule event and step.
# table.py writes OUT/noise_real.md.
#
#   usage: bench/noise_real/run.sh [OUT] [options of bench/lib/study.sh]
#     --launches (default 3), --iters (default 20), --sizes (default 64,65536)
#   env: NBR_DELAY_US (default 20000)
set -euo pipefail
source "$(dirname "$0")/../lib/study.sh"
study_init "$@"
launches=${NBR_LAUNCHES:-3}
delay=${NBR_DELAY_US:-20000}
iters=${NBR_ITERS:-20}
sizes=${NBR_SIZES:-64,65536}
nbrc=$build/compiler/nbrc
late=5

"$nbrc" gen moore --ranks 16 --dims 2 --radius 1 -o "$out/moore.el" >/dev/null
for algo in naive hierarchical distance-halving; do
  [ -d "$out/$algo" ] || "$nbrc" compile "$out/moore.el" --algo "$algo" --ranks-per-node 4 --ranks-per-socket 2 \
    -q -o "$out/$algo"
done

if [ ! -f "$out/machine.json" ]; then
  echo "# calibrating ($(date +%T))"
  mpirun -np 2 --bind-to core "$build/simulator/nbr-calibrate" --ranks-per-node "$(nproc)" -o "$out/machine.json" \
    >"$out/calibrate.txt"
  taskset -c 0 mpirun -np 2 --bind-to none --mca mpi_yield_when_idle 1 "$build/simulator/nbr-calibrate" \
    --shared-core --base "$out/machine.json" --sizes 1 -o "$out/machine.json" >>"$out/calibrate.txt"
fi

for algo in hierarchical distance-halving; do
  for collective in allgather alltoall; do
    for ((l = 1; l <= launches; ++l)); do
      result=$out/measured.$algo.$collective.$l.json
      [ -f "$result" ] && continue
      mpirun -np 16 --oversubscribe --bind-to none --mca mpi_yield_when_idle 1 "$build/bench/nbr-noise-bench" \
        --patterns "$out/$algo" --collective "$collective" --sizes "$sizes" --iters "$iters" --late "$late" \
        --delay-us "$delay" --json "$result" >/dev/null
    done
    for rule in event step; do
      "$nbrc" simulate "$out/$algo" --machine "$out/machine.json" --ranks-per-node 16 --ranks-per-socket 16 \
        --collective "$collective" --sizes "$sizes" --rule "$rule" --late "$late:$delay" \
        --baseline "$out/naive" --json >"$out/predicted.$algo.$collective.$rule.json"
    done
    echo "# $algo $collective done ($(date +%T))"
  done
done
/usr/bin/python3 "$root/bench/noise_real/table.py" "$out" | tee "$out/noise_real.md"
