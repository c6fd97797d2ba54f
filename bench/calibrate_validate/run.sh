#!/usr/bin/env bash
# Real-MPI validation of nbrc simulate on this machine: calibrates the same-socket class with
# nbr-calibrate (2 ranks bound to cores), then times nbr-bench on small topologies and
# compares the replay times (median of the launches) with what nbrc simulate predicts from
# the calibrated machine (bench/calibrate_validate/table.py writes OUT/validation.md).
#
#   pe1     2 ranks, one edge each way (naive)
#   pe32    2 ranks, 32 parallel edges each way (naive: 32 messages each way)
#   fan3    3 ranks: 0 and 1 send 4 edges each to 2 and back; common-neighbor --threshold 1
#           (0's blocks reach 2 through 1: a dependent hop)
#   bip4    4 ranks: {0,1} x {2,3}, 3 parallel edges each; common-neighbor --threshold 2
#           (two steps: exchange with the friend, then one combined message)
# Runs with more ranks than cores are not bound (--bind-to none): the ranks share cores; the
# machine file says so (cores_per_node, and switch_us measured with two ranks on one core).
#
# Every 2-rank launch also calibrates itself (nbr-bench --calibrate, before its timing) and is
# predicted from its own machine file as well: on a virtual machine the state of the machine
# (where the hypervisor runs the two cores) can change from one launch to the next by more
# than any error of the model, and a launch's calibration and times share one state. The state
# can change within a launch too: nbr-bench probes it before and after each size's timing, and
# only sizes timed in the calibration's state are paired (table.py). Only the
# three variants compared are timed, which keeps each size's timing short.
#
#   usage: bench/calibrate_validate/run.sh [OUT] [options of bench/lib/study.sh]
#     --launches (default 5), --sizes (default 1,16,256,1024,4096,16384,65536), --iters
#     (default 2000), --cases (default: pe1 pe32 fan3 bip4)
#   env:   NBR_MPIEXEC and NBR_BIND (default mpirun and --bind-to core: Open MPI; for MPICH
#          NBR_MPIEXEC=mpiexec.mpich NBR_BIND="-bind-to core" NBR_BUILD=its build NBR_CASES="pe1 pe32":
#          the cases sharing cores need Open MPI's yielding wait)
set -euo pipefail
source "$(dirname "$0")/../lib/study.sh"
study_init "$@"
launches=${NBR_LAUNCHES:-5}
sizes=${NBR_SIZES:-1,16,256,1024,4096,16384,65536}
iters=${NBR_ITERS:-2000}
selected=${NBR_CASES:-pe1 pe32 fan3 bip4}
mpiexec=${NBR_MPIEXEC:-mpirun}
bind_core=${NBR_BIND:---bind-to core}
nbrc=$build/compiler/nbrc

bind() { if [ "$1" -le "$(nproc)" ]; then echo "$bind_core"; else echo "--bind-to none --oversubscribe"; fi; }

# Topologies (edge lists: "# ranks N", then "src dst" lines).
edges() { local n=$1 k=$2; shift 2; echo "# ranks $n"; for e in "$@"; do for ((i = 0; i < k; ++i)); do echo "${e/-/ }"; done; done; }
edges 2 1 0-1 1-0 >"$out/pe1.el"
edges 2 32 0-1 1-0 >"$out/pe32.el"
edges 3 4 0-2 1-2 2-0 2-1 >"$out/fan3.el"
edges 4 3 0-2 0-3 1-2 1-3 2-0 2-1 3-0 3-1 >"$out/bip4.el"

# case = topology:algorithm:threshold:ranks
cases=""
shared=0
for c in pe1:naive:0:2 pe32:naive:0:2 fan3:common-neighbor:1:3 bip4:common-neighbor:2:4; do
  case " $selected " in *" ${c%%:*} "*) cases+=" $c" ;; *) continue ;; esac
  [ "${c##*:}" -le "$(nproc)" ] || shared=1
done
for c in $cases; do
  IFS=: read -r topo algo threshold ranks <<<"$c"
  "$nbrc" compile "$out/$topo.el" --algo naive -q -o "$out/$topo.naive"
  [ "$algo" = naive ] || "$nbrc" compile "$out/$topo.el" --algo "$algo" --threshold "$threshold" -q -o "$out/$topo.$algo"
done

echo "# calibrating ($(date +%T))"
$mpiexec -np 2 $bind_core "$build/simulator/nbr-calibrate" --ranks-per-node "$(nproc)" -o "$out/machine.json" \
  >"$out/calibrate.txt"
# Ranks beyond the cores share them: the switch time of two ranks on one core.
if [ "$shared" = 1 ]; then
  taskset -c 0 mpirun -np 2 --bind-to none --mca mpi_yield_when_idle 1 "$build/simulator/nbr-calibrate" --shared-core \
    --base "$out/machine.json" --sizes 1 -o "$out/machine.json" >>"$out/calibrate.txt"
fi
cat "$out/calibrate.txt"

# The current case's prediction from a machine file: predict MACHINE OUTPUT.
predict() {
  "$nbrc" simulate "$out/$topo.$algo" --machine "$1" --ranks-per-node "$ranks" --ranks-per-socket "$ranks" \
    --collective "$collective" --sizes "$sizes" --baseline "$out/$topo.naive" --json >"$2"
}
for c in $cases; do
  IFS=: read -r topo algo threshold ranks <<<"$c"
  for collective in allgather alltoall; do
    predict "$out/machine.json" "$out/predicted.$topo.$collective.json"
    for ((l = 1; l <= launches; ++l)); do
      paired=()
      [ "$ranks" -eq 2 ] && paired=(--calibrate "$out/machine.$topo.$collective.$l.json")
      # shellcheck disable=SC2046
      $mpiexec -np "$ranks" $(bind "$ranks") "$build/bench/nbr-bench" --patterns "$out/$topo.$algo" \
        --naive "$out/$topo.naive" --collective "$collective" --sizes "$sizes" --iters "$iters" \
        --only native,nbr,nbr-naive "${paired[@]}" --json "$out/measured.$topo.$collective.$l.json" >/dev/null
      [ "$ranks" -eq 2 ] && predict "$out/machine.$topo.$collective.$l.json" "$out/paired.$topo.$collective.$l.json"
    done
    echo "# $topo $collective done ($(date +%T))"
  done
done
/usr/bin/python3 "$root/bench/calibrate_validate/table.py" "$out" | tee "$out/validation.md"
