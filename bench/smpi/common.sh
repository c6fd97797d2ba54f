# Shared by bench/smpi/*.sh (sourced): SimGrid installation, the SMPI build, hostfiles.

# SMPI_FLAGS: settings of every simulation.
# - Collective algorithms: with smpi/coll-selector:ompi, SimGrid 3.32 picks for small
#   MPI_Allreduce and MPI_Bcast algorithms that first build SMP-aware sub-communicators
#   (Comm::init_smp: a ring allgather over the whole communicator), which costs host time
#   growing faster than quadratically with the communicator (a quarter of a 1024-rank
#   simulation, most of a 4096-rank one) and, in simulated time, hundreds of milliseconds
#   on a new communicator. Recursive doubling and a binomial tree are the small-message
#   algorithms of Open MPI's tuned module; the other collectives stay with the selector.
# - maxmin/precision: SimGrid's default (1e-5) trips an internal assertion ("Cannot saturate
#   more a constraint that has no active element") on 4096-rank random traffic and on the
#   long compute bursts of the online pattern construction.
# - smpi/test:0, smpi/wtime:0: no injected 100 us per test call; send-is-detached-thresh:0:
#   every send is matched (rendezvous), no eager buffering in the simulator.
SMPI_FLAGS=(--cfg=smpi/coll-selector:ompi --cfg=smpi/allreduce:rdb --cfg=smpi/bcast:binomial_tree
  --cfg=maxmin/precision:1e-4 --cfg=smpi/send-is-detached-thresh:0 --cfg=smpi/test:0 --cfg=smpi/wtime:0
  --log=root.thres:warning)

# smpi_tcmalloc: path of tcmalloc's shared library, empty if not installed.
smpi_tcmalloc() {
  # (awk reads all of ldconfig's output: exiting early would fail the pipe under pipefail)
  /sbin/ldconfig -p | awk '/libtcmalloc_minimal\.so\.4 / && !found {found = $NF} END {if (found) print found}'
}

# smpi_preload: LD_PRELOAD for smpirun. Host time only: SimGrid allocates and frees per
# simulated message, and glibc's malloc then takes minutes to release a 4096-rank simulation's
# heap at exit (malloc_consolidate); with tcmalloc (libtcmalloc-minimal4) a 1024-rank case runs
# 1.5x faster. Simulated communication times do not depend on the host allocator.
# NBR_SMPI_MALLOC=system keeps glibc's.
smpi_preload() {
  [ "${NBR_SMPI_MALLOC:-tcmalloc}" = tcmalloc ] && smpi_tcmalloc
  return 0
}

# smpi_run SMPIRUN_ARGS... PROGRAM ARGS...: smpirun with SMPI_FLAGS and smpi_preload, its output
# without SimGrid's configuration echo (warnings and errors stay). smpirun exits 0 even when a
# simulated rank called MPI_Abort or the simulation deadlocked, so this fails if its output
# says so.
smpi_run() {
  LD_PRELOAD=$(smpi_preload) smpirun "${SMPI_FLAGS[@]}" "$@" 2>&1 |
    awk '/xbt_cfg\/INFO/ {next} {print; fflush()}
         /MPI_Abort was called|\/CRITICAL\]|Execution failed/ {failed = 1}
         END {exit failed}'
}

# smpi_build ROOT BUILD_DIR [TARGET]: installs SimGrid (and tcmalloc, see smpi_preload) if needed
# and, unless TARGET is already built, configures and builds the SMPI configuration (TARGET,
# or everything). NBR_WERROR=ON (CI sets it) makes warnings errors there too.
smpi_build() {
  local root=$1 build=$2 target=${3:-}
  if ! command -v smpicxx >/dev/null || [ -z "$(smpi_tcmalloc)" ]; then
    local sudo=""
    [ "$(id -u)" -ne 0 ] && sudo=sudo
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends libsimgrid-dev \
      libtcmalloc-minimal4 >/dev/null
  fi
  if [ -z "$target" ] || [ ! -x "$build/bench/$target" ]; then
    CC=smpicc CXX=smpicxx cmake -S "$root" -B "$build" -G Ninja -DNBR_SMPI=ON -DCMAKE_BUILD_TYPE=Release \
      -DNBR_WERROR="${NBR_WERROR:-OFF}" >/dev/null
    cmake --build "$build" ${target:+--target "$target"}
  fi
}

# smpi_platform_attr PLATFORM NAME: the first value of attribute NAME (e.g. core, speed).
smpi_platform_attr() {
  grep -o "$2=\"[^\"]*\"" "$1" | head -1 | cut -d'"' -f2
}

# smpi_hostfile PLATFORM RANKS FILE: as many ranks per node as the platform's nodes have cores,
# or NBR_SMPI_RANKS_PER_NODE (nodes that are not full).
smpi_hostfile() {
  local cores prefix nodes i
  cores=${NBR_SMPI_RANKS_PER_NODE:-$(smpi_platform_attr "$1" core)}
  prefix=$(smpi_platform_attr "$1" prefix)
  nodes=$((($2 + cores - 1) / cores))
  for ((i = 0; i < nodes; ++i)); do echo "${prefix}${i}:${cores}"; done >"$3"
}

# smpi_run_host_timed TARGET RANKS [PLATFORM] [-- PROGRAM_ARGS...]: builds TARGET (a program of
# bench/) for SMPI if needed and runs it on RANKS ranks of PLATFORM (default fat-tree-32c), each
# rank's computation timed on this host and charged to the simulated clock
# (smpi/simulate-computation:yes, smpi/host-speed = the platform's core speed, so a simulated
# core is as fast as this host's). Needs ROOT in $root; the build in NBR_SMPI_BUILD.
smpi_run_host_timed() {
  local target=$1 ranks=$2 platform=$root/bench/smpi/fat-tree-32c.xml build=${NBR_SMPI_BUILD:-$root/build-smpi}
  shift 2
  if [ $# -gt 0 ] && [ "$1" != "--" ]; then
    platform=$1
    shift
  fi
  [ "${1:-}" = "--" ] && shift
  smpi_build "$root" "$build" "$target"
  local speed hostfile
  speed=$(smpi_platform_attr "$platform" speed)
  hostfile=$(mktemp)
  smpi_hostfile "$platform" "$ranks" "$hostfile"
  local status=0
  smpi_run -np "$ranks" -platform "$platform" -hostfile "$hostfile" \
    --cfg=smpi/simulate-computation:yes --cfg=smpi/host-speed:"$speed" "$build/bench/$target" "$@" || status=$?
  rm -f "$hostfile"
  return $status
}
