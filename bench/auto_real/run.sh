#!/usr/bin/env bash
# nbrc compile --algo auto on this machine's real MPI: calibrates the machine with
# nbr-calibrate (2 ranks bound to cores), compiles every case with --algo auto for that machine
# file, replays the auto pattern with nbr-bench beside the native neighborhood collective in
# one run per launch, and reports native / auto per size (bench/auto_real/table.py writes
# OUT/auto_real.md; below 0.95 is marked). Each run also times the native call a second time
# (native-control): native / native-control is the noise floor the ratios are read against.
#
#   pe32        2 ranks bound to cores, 32 parallel edges each way
#   moore-r1    16 ranks, Moore (2,1)        } 16 ranks share the 2 cores (--bind-to none); the
#   random-0.3  16 ranks, random δ = 0.3     } machine file says so: cores_per_node = cores,
#                                              and switch_us measured with two ranks on one core
#
#   usage: bench/auto_real/run.sh [OUT] [options of bench/lib/study.sh]
#     --launches N (default 5), --sizes (default 1,4,16,...,65536), --iters (2 ranks, default
#     2000), --collectives (default: allgather alltoall allgatherv alltoallv), --cases
#     (default: pe32 moore-r1 random-0.3)
#   env:   NBR_ITERS16 (16 ranks, default 500),
#          NBR_ROUNDS (default 25: nbr-bench times the three variants in turn, median round),
#          NBR_RECHECKS, NBR_RECHECK_GAP (default 3 and 30: launches of nbr-calibrate --recheck
#          after the calibration, seconds apart),
#          NBR_MPIEXEC and NBR_BIND (default mpirun and --bind-to core: Open MPI; for MPICH
#          NBR_MPIEXEC=mpiexec.mpich NBR_BIND="-bind-to core" NBR_BUILD=its build, 2-rank
#          case only: MPICH's oversubscribed ranks poll, which measures the scheduler)
set -euo pipefail
source "$(dirname "$0")/../lib/study.sh"
study_init "$@"
launches=${NBR_LAUNCHES:-5}
sizes=${NBR_SIZES:-1,4,16,64,256,1024,4096,16384,65536}
iters=${NBR_ITERS:-2000}
iters16=${NBR_ITERS16:-500}
rounds=${NBR_ROUNDS:-25}
collectives=${NBR_COLLECTIVES:-allgather alltoall allgatherv alltoallv}
selected=${NBR_CASES:-pe32 moore-r1 random-0.3}
mpiexec=${NBR_MPIEXEC:-mpirun}
bind_core=${NBR_BIND:---bind-to core}
nbrc=$build/compiler/nbrc
cores=$(nproc)

# A calibration during which the machine's state changed (nbr-calibrate warns: the smallest
# one-way time moved while it measured) is made again, up to three times.
calibrate() {
  for attempt in 1 2 3; do
    echo "# calibrating ($(date +%T))"
    # shellcheck disable=SC2086
    $mpiexec -np 2 $bind_core "$build/simulator/nbr-calibrate" --ranks-per-node "$cores" --name "this-machine" \
      -o "$out/machine.json" >"$out/calibrate.txt" 2>"$out/calibrate.err"
    cat "$out/calibrate.err" >&2
    grep -q "Calibrate again" "$out/calibrate.err" || break
    echo "# calibration $attempt unsettled"
  done
}
# The pattern checks again in further launches (NBR_RECHECKS, default 3), NBR_RECHECK_GAP
# seconds apart (default 30): where the machine's state differs between launches, their ratio
# errors join the file's, so that auto does not act on gains only the calibration's state
# would show. This machine's states last from seconds to minutes: rechecks in a row tend to
# meet the calibration's own. Prints how many rechecks found the fit measured in another
# state than theirs (nbr-calibrate warns: most sizes' naive calls off in one direction).
recheck() {
  local other=0
  for ((r = 1; r <= ${NBR_RECHECKS:-3}; r++)); do
    sleep "${NBR_RECHECK_GAP:-30}"
    echo "# rechecking the model, launch $r ($(date +%T))" >&2
    # shellcheck disable=SC2086
    $mpiexec -np 2 $bind_core "$build/simulator/nbr-calibrate" --recheck --base "$out/machine.json" \
      -o "$out/machine.json" >>"$out/calibrate.txt" 2>"$out/recheck.err"
    cat "$out/recheck.err" >&2
    if grep -q "another state of the machine" "$out/recheck.err"; then other=$((other + 1)); fi
  done
  echo "$other"
}
# A calibration that most rechecks find in another state than theirs (its whole launch slow,
# say) is made again, once: the file would describe a state the launches rarely meet.
calibrate
if [ "$(recheck)" -gt $((${NBR_RECHECKS:-3} / 2)) ]; then
  echo "# the rechecks found the calibration in another state than theirs: calibrating again"
  calibrate
  recheck >/dev/null
fi
# case = topology:ranks:machine
cases=""
for c in pe32:2:machine moore-r1:16:machine16 random-0.3:16:machine16; do
  if [[ " $selected " == *" ${c%%:*} "* ]]; then cases="$cases $c"; fi
done
# The switch time of two ranks sharing a core (MPI yields while it waits, as Open MPI does when
# oversubscribed), for the 16-rank cases.
if [[ $cases == *machine16* ]]; then
  taskset -c 0 mpirun -np 2 --bind-to none --mca mpi_yield_when_idle 1 "$build/simulator/nbr-calibrate" --shared-core \
    --base "$out/machine.json" --sizes 1 -o "$out/machine.json" >>"$out/calibrate.txt"
fi
# The 16-rank machine: the same costs, 16 ranks on one node sharing its cores.
/usr/bin/python3 - "$out/machine.json" "$out/machine16.json" "$cores" <<'EOF'
import json, sys
m = json.load(open(sys.argv[1]))
m.update(name="this-machine-16", ranks_per_node=16, ranks_per_socket=16, cores_per_node=int(sys.argv[3]))
m["sources"].append("16 ranks on one node sharing its cores (cores_per_node)")
json.dump(m, open(sys.argv[2], "w"), indent=1)
EOF

"$nbrc" gen pairs --ranks 2 --edges 32 -o "$out/pe32.el" >/dev/null
"$nbrc" gen moore --ranks 16 --dims 2 --radius 1 -o "$out/moore-r1.el" >/dev/null
"$nbrc" gen random --ranks 16 --density 0.3 --seed 1 -o "$out/random-0.3.el" >/dev/null
for c in $cases; do
  IFS=: read -r topo ranks machine <<<"$c"
  "$nbrc" compile "$out/$topo.el" --algo auto --machine "$out/$machine.json" --sizes "$sizes" -q -o "$out/$topo.auto"
  "$nbrc" inspect "$out/$topo.auto" >"$out/$topo.inspect.txt"
done

for ((l = 1; l <= launches; ++l)); do
  for c in $cases; do
    IFS=: read -r topo ranks machine <<<"$c"
    if [ "$ranks" -le "$cores" ]; then bind=$bind_core n=$iters; else bind="--bind-to none --oversubscribe" n=$iters16; fi
    for collective in $collectives; do
      # shellcheck disable=SC2086
      $mpiexec -np "$ranks" $bind "$build/bench/nbr-bench" --patterns "$out/$topo.auto" --collective "$collective" \
        --sizes "$sizes" --iters "$n" --rounds "$rounds" --control --only native,native-control,nbr \
        --json "$out/run.$topo.$collective.$l.json" >/dev/null
    done
  done
  echo "# launch $l of $launches done ($(date +%T))"
done
/usr/bin/python3 "$root/bench/auto_real/table.py" "$out" | tee "$out/auto_real.md"
