#!/usr/bin/env bash
# Patterns built in the job on a simulated cluster: nbr-cache-bench (SMPI build) with RANKS
# ranks, building into an empty cache and loading the entry again, per algorithm. SMPI has no
# dist-graph communicators, so the bench gives MPI_COMM_WORLD and each rank's lists to
# nbr_pattern_build_adjacent; no per-call times (no native neighborhood collectives there).
# Each rank's computation (the construction, auto's simulations of its candidates, the files
# written and read) is timed on this host and charged to the simulated clock
# (smpi/simulate-computation:yes, smpi/host-speed = the platform's core speed).
#
#   usage: bench/smpi/cache.sh RANKS [PLATFORM] -- [nbr-cache-bench options]
#   e.g.   bench/smpi/cache.sh 1024 -- --degree 16 --algos naive,common-neighbor --ranks-per-node 32 --repeats 1
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
ranks=$1
shift
platform=$root/bench/smpi/fat-tree-32c.xml
if [ $# -gt 0 ] && [ "$1" != "--" ]; then
  platform=$1
  shift
fi
[ "${1:-}" = "--" ] && shift
build=${NBR_SMPI_BUILD:-$root/build-smpi}

# shellcheck source=common.sh
source "$root/bench/smpi/common.sh"
smpi_build "$root" "$build" nbr-cache-bench
speed=$(smpi_platform_attr "$platform" speed)
hostfile=$(mktemp)
trap 'rm -f "$hostfile"' EXIT
smpi_hostfile "$platform" "$ranks" "$hostfile"
smpi_run -np "$ranks" -platform "$platform" -hostfile "$hostfile" \
  --cfg=smpi/simulate-computation:yes --cfg=smpi/host-speed:"$speed" \
  "$build/bench/nbr-cache-bench" "$@"
