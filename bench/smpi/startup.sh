#!/usr/bin/env bash
# Job-start cost on a simulated cluster: nbr-startup-bench (SMPI build) with RANKS ranks, so
# that patterns of up to RANKS - 1 neighbors per rank can be measured on one machine. Each
# rank's computation (the online pattern construction, nbr_load_pattern's read/check/plan)
# is timed on this host and charged to the simulated clock (smpi/simulate-computation:yes,
# smpi/host-speed = the platform's core speed, so a simulated core is as fast as this host's).
#
#   usage: bench/smpi/startup.sh RANKS [PLATFORM] -- [nbr-startup-bench options]
#   e.g.   bench/smpi/startup.sh 1024 -- --degrees 16,64,256,1000 --repeats 1
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
smpi_build "$root" "$build" nbr-startup-bench
speed=$(smpi_platform_attr "$platform" speed)
hostfile=$(mktemp)
trap 'rm -f "$hostfile"' EXIT
smpi_hostfile "$platform" "$ranks" "$hostfile"

# maxmin/precision: SimGrid's default (1e-5) trips an internal assertion on the long compute
# bursts of the online construction.
smpirun -np "$ranks" -platform "$platform" -hostfile "$hostfile" \
  --cfg=smpi/simulate-computation:yes --cfg=smpi/host-speed:"$speed" --cfg=maxmin/precision:1e-4 \
  "${SMPI_COLL_FLAGS[@]}" --cfg=smpi/send-is-detached-thresh:0 --cfg=smpi/test:0 --cfg=smpi/wtime:0 \
  --log=root.thres:warning \
  "$build/bench/nbr-startup-bench" "$@" 2>&1 | { grep --line-buffered -v '^\[' || true; }
