#!/usr/bin/env bash
# Job-start cost on a simulated cluster: nbr-startup-bench (SMPI build) with --ranks ranks, so
# that patterns of up to ranks - 1 neighbors per rank can be measured on one machine. Each
# rank's computation (the online pattern construction, nbr_load_pattern's read/check/plan)
# is timed on this host and charged to the simulated clock (smpi/simulate-computation:yes,
# smpi/host-speed = the platform's core speed, so a simulated core is as fast as this host's).
#
#   usage: bench/smpi_startup/run.sh [OUT] --ranks N [--build DIR] [-- nbr-startup-bench options]
#   e.g.   bench/smpi_startup/run.sh --ranks 1024 -- --degrees 16,64,256,1000 --repeats 1
#   env: NBR_SMPI_PLATFORM (default bench/smpi/fat-tree-32c.xml), NBR_SMPI_BUILD
# Prints the bench's table and keeps it in OUT/startup.txt.
set -euo pipefail
source "$(dirname "$0")/../lib/study.sh"
study_init "$@"

# shellcheck source=common.sh
source "$root/bench/smpi/common.sh"
# The allocator (see smpi_preload) is part of what is timed here: every simulated rank's
# computation runs in this one process and heap, where glibc's malloc charges whichever rank
# happens to trigger a consolidation pass over all ranks' free chunks; tcmalloc has no such
# passes, closer to separate processes with their own heaps.
smpi_run_host_timed nbr-startup-bench "${NBR_RANKS:?--ranks is required}" ${NBR_SMPI_PLATFORM:+"$NBR_SMPI_PLATFORM"} \
  -- "${study_rest[@]}" | tee "$out/startup.txt"
