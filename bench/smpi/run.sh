#!/usr/bin/env bash
# Runs nbr-bench (SMPI build) on a simulated cluster: optimized pattern vs the naive pattern
# of the same topology, which is what an MPI library's naive algorithm puts on the wire.
# Simulated time is deterministic: the script runs every case twice and checks that the
# two runs report identical times.
#
#   usage: bench/smpi/run.sh PATTERN_DIR NAIVE_DIR RANKS [PLATFORM] [SIZES] [ITERS] [JSON]
#   e.g.   bench/smpi/run.sh p/cn p/naive 1024 bench/smpi/fat-tree-32c.xml 4,1024 3
#
# Per-message software overheads: SMPI charges none by default, yet that per-message cost is
# what message combining saves. We charge NBR_SMPI_OS / NBR_SMPI_OR seconds per send / receive
# (default 0.5 us each, a typical InfiniBand MPI figure); set both to 0 to disable.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
patterns=$1 naive=$2 ranks=$3
platform=${4:-$root/bench/smpi/fat-tree-32c.xml}
sizes=${5:-4,1024}
iters=${6:-3}
json=${7:-}
os=${NBR_SMPI_OS:-0.5e-6}
or=${NBR_SMPI_OR:-0.5e-6}
build=${NBR_SMPI_BUILD:-$root/build-smpi}

if ! command -v smpicxx >/dev/null; then
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo=sudo
  $sudo apt-get install -y -qq libsimgrid-dev >/dev/null
fi
if [ ! -x "$build/bench/nbr-bench" ]; then
  CC=smpicc CXX=smpicxx cmake -S "$root" -B "$build" -G Ninja -DNBR_SMPI=ON -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$build" --target nbr-bench
fi
# Hostfile: as many ranks per node as the platform has cores.
cores=$(grep -o 'core="[0-9]*"' "$platform" | head -1 | grep -o '[0-9]*')
prefix=$(grep -o 'prefix="[^"]*"' "$platform" | head -1 | cut -d'"' -f2)
nodes=$(((ranks + cores - 1) / cores))
hostfile=$(mktemp)
trap 'rm -f "$hostfile" "$hostfile".out*' EXIT
for ((i = 0; i < nodes; ++i)); do echo "${prefix}${i}:${cores}"; done >"$hostfile"

run() {
  smpirun -np "$ranks" -platform "$platform" -hostfile "$hostfile" \
    --cfg=smpi/simulate-computation:no --cfg=smpi/coll-selector:ompi --cfg=smpi/send-is-detached-thresh:0 \
    --cfg=smpi/test:0 --cfg=smpi/wtime:0 --cfg=smpi/os:"0:${os}:0" --cfg=smpi/or:"0:${or}:0" \
    --log=root.thres:warning \
    "$build/bench/nbr-bench" --patterns "$patterns" --naive "$naive" --sizes "$sizes" --iters "$iters" \
    --warmup 1 "$@" 2>&1 | grep -v '^\[' || true
}
run >"$hostfile.out1"
run ${json:+--json "$json"} >"$hostfile.out2"
cat "$hostfile.out2"
if diff <(grep -v '^#' "$hostfile.out1") <(grep -v '^#' "$hostfile.out2") >/dev/null; then
  echo "# deterministic: two simulations agree"
else
  echo "# WARNING: two simulations differ" >&2
  exit 1
fi
