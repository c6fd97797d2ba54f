#!/usr/bin/env bash
# Runs nbr-bench (SMPI build) on a simulated cluster: optimized pattern vs the naive pattern
# of the same topology, which is what an MPI library's naive algorithm puts on the wire.
# Simulated time is deterministic: the script runs every case twice and checks that the
# two runs report identical times.
#
#   usage: bench/smpi/run.sh PATTERN_DIR NAIVE_DIR RANKS [PLATFORM] [SIZES] [ITERS] [JSON]
#   e.g.   bench/smpi/run.sh p/cn p/naive 1024 bench/smpi/fat-tree-32c.xml 4,1024 1
#
# One call per variant and size is the default: a simulation has no caches and no noise, and
# libnbr builds its plans at load time, so warm-up is off (NBR_SMPI_WARMUP); averaging more
# calls moves the result by a few percent (Moore 2,2 at 1024 ranks, 4 B: 20.2 us for one call,
# 19.1 us mean of four) at proportional host cost.
# NBR_SMPI_RUNS=1 skips the second (determinism) run. NBR_SMPI_ARGS: more nbr-bench arguments
# (e.g. --measure). NBR_SMPI_COLLECTIVE picks the collective
# (allgather, the default, alltoall, allgatherv, alltoallv). NBR_SMPI_ONLY=nbr times the
# pattern alone (nbr-bench --only): a script that simulates several patterns of one topology
# then simulates the naive pattern once instead of beside each (on dense topologies the naive
# call is most of the host time).
#
# Per-message software overheads: SMPI charges none by default, yet that per-message cost is
# what message combining saves. We charge NBR_SMPI_OS / NBR_SMPI_OR seconds per send / receive
# (default 0.5 us each, a typical InfiniBand MPI figure); set both to 0 to disable. SMPI charges
# smpi/os to MPI_Send only; MPI_Isend (what libnbr uses) pays smpi/ois, so both are set. The
# receive overhead smpi/or is charged when a receive completes in a wait call.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
patterns=$1 naive=$2 ranks=$3
platform=${4:-$root/bench/smpi/fat-tree-32c.xml}
sizes=${5:-4,1024}
iters=${6:-1}
json=${7:-}
os=${NBR_SMPI_OS:-0.5e-6}
or=${NBR_SMPI_OR:-0.5e-6}
build=${NBR_SMPI_BUILD:-$root/build-smpi}
warmup=${NBR_SMPI_WARMUP:-0}
runs=${NBR_SMPI_RUNS:-2}
collective=${NBR_SMPI_COLLECTIVE:-allgather}
only=${NBR_SMPI_ONLY:-}

# shellcheck source=common.sh
source "$root/bench/smpi/common.sh"
smpi_build "$root" "$build" nbr-bench
hostfile=$(mktemp)
trap 'rm -f "$hostfile" "$hostfile".out*' EXIT
smpi_hostfile "$platform" "$ranks" "$hostfile"

run() {
  smpi_run -np "$ranks" -platform "$platform" -hostfile "$hostfile" --cfg=smpi/simulate-computation:no \
    --cfg=smpi/os:"0:${os}:0" --cfg=smpi/ois:"0:${os}:0" --cfg=smpi/or:"0:${or}:0" \
    "$build/bench/nbr-bench" --patterns "$patterns" --naive "$naive" --sizes "$sizes" --iters "$iters" \
    --warmup "$warmup" --collective "$collective" ${only:+--only "$only"} ${NBR_SMPI_ARGS:-} "$@"
}
if [ "$runs" -lt 2 ]; then
  run ${json:+--json "$json"}
  exit 0
fi
run >"$hostfile.out1"
run ${json:+--json "$json"} >"$hostfile.out2"
cat "$hostfile.out2"
if diff <(grep -v '^#' "$hostfile.out1") <(grep -v '^#' "$hostfile.out2") >/dev/null; then
  echo "# deterministic: two simulations agree"
else
  echo "# WARNING: two simulations differ" >&2
  exit 1
fi
