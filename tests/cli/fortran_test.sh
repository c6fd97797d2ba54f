#!/usr/bin/env bash
# Unmodified Fortran programs (tests/apps/neighbor_app.F90 with `use mpi`, neighbor_app_f08.f90
# with `use mpi_f08`; no nbr module or library): run natively, run under libnbr-capture,
# compile the capture, verify it (and the calls it counted), then run under libnbr-preload with
# NBR_REPORT=1. The data checks must pass in every run and the report must count every
# replayed call.
# F08: "replayed" where the libraries wrap the mpi_f08 entry points (Open MPI); "native" where
# MPI's f08 binding bypasses every wrapper (MPICH 4.0: TS 29113 entry points calling MPICH's
# internals), so the program must run natively and unharmed under both libraries.
# usage: fortran_test.sh NBRC APP_F APP_F08 F08 CAPTURE_LIB PRELOAD_LIB "LAUNCHER_FOR_4_PROCESSES"
set -u
nbrc=$1
app_f=$2
app_f08=$3
f08=$4
capture_lib=$5
preload_lib=$6
launch4=$7
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
cd "$work" || exit 1

# `use mpi`: 3 iterations per size.
# shellcheck disable=SC2086
out=$($launch4 "$app_f" 3 2>&1)
check '[ $? -eq 0 ] && grep -q "neighbor_app_f: data OK" <<<"$out"' "native run failed: $out"
out=$(run_preloaded "$capture_lib" NBR_CAPTURE="$work/cap" "$app_f" 3)
check '[ $? -eq 0 ] && grep -q "neighbor_app_f: data OK" <<<"$out"' "run under capture failed: $out"
check '[ "$(grep -c "^nbr-capture: MPI_Dist_graph_create_adjacent: 4 ranks -> " <<<"$out")" -eq 1 ]' \
  "not captured exactly once: $out"
check 'grep -qx "0: 3 2 3 ; 1 2 1" cap/000000/neighbors.adj' "lists: $(cat cap/000000/neighbors.adj 2>&1)"
# The non-periodic 2x2 grid: MPI_PROC_NULL left out of the lists (rank 0: one neighbor per dimension).
check '[ "$(grep -c "^nbr-capture: MPI_Cart_create: 4 ranks -> " <<<"$out")" -eq 1 ]' "grid not captured: $out"
check 'grep -qx "0: 2 1 ; 2 1" cap/000001/neighbors.adj' "grid lists: $(cat cap/000001/neighbors.adj 2>&1)"
# The calls, seen through the Fortran binding (Open MPI: the capture's Fortran wrappers; MPICH:
# its C ones): 30 allgathers (8 sizes x 3, 5 mixed rounds, 1 persistent init) and the
# alltoallv whose rank r sends 1 + r%5 + j bytes on edge j (means 2..5, 42 bytes in all), and
# the alltoallw with the same blocks (alltoallw counts as alltoallv).
check 'grep -q "^allgather 30 " cap/000000/calls.txt' "allgather calls: $(cat cap/000000/calls.txt 2>&1)"
check 'grep -qx "alltoallv 2 1 6 2 5 24 84" cap/000000/calls.txt' "alltoallv calls: $(cat cap/000000/calls.txt 2>&1)"
mkdir patterns
check '"$nbrc" compile cap/000000 --algo common-neighbor --threshold 1 -q -o patterns/cn' "compile failed"
check '"$nbrc" compile cap/000001 --algo distance-halving --ranks-per-node 2 -q -o patterns/grid' "grid compile failed"
check '"$nbrc" verify patterns/grid --topology cap/000001 >/dev/null' "grid verify failed"
check '"$nbrc" verify patterns/cn --topology cap/000000 >/dev/null' "verify failed"
check '"$nbrc" inspect patterns/cn | grep -q "common-neighbor"' "not a common-neighbor pattern"
out=$(run_preloaded "$preload_lib" NBR_PATTERNS="$work/patterns" NBR_REPORT=1 "$app_f" 3)
check '[ $? -eq 0 ] && grep -q "neighbor_app_f: data OK" <<<"$out"' "run under the preload failed: $out"
# 8 sizes x 3 nonblocking allgathers, 1 alltoallv, 1 alltoallw, 5 mixed rounds, 1 persistent init; the
# grid's alltoall.
check 'grep -qx "nbr: replayed 33 calls on 2 communicators" <<<"$out"' "report: $out"
check '! grep -q "not completed or freed\|nbr: MPI_\|no pattern" <<<"$out"' "a failed call or left requests: $out"
# The same under an auto directory (variants chosen per size for the niagara model).
mkdir auto
check '"$nbrc" compile cap/000000 --algo auto --machine niagara -q -o auto/a' "auto compile failed"
check '"$nbrc" compile cap/000001 --algo auto --machine niagara -q -o auto/grid' "auto grid compile failed"
check '"$nbrc" verify auto/a --topology cap/000000 >/dev/null' "auto verify failed"
out=$(run_preloaded "$preload_lib" NBR_PATTERNS="$work/auto" NBR_REPORT=1 "$app_f" 3)
check '[ $? -eq 0 ] && grep -q "neighbor_app_f: data OK" <<<"$out"' "run under the preload with auto failed: $out"
check 'grep -qx "nbr: replayed 33 calls on 2 communicators" <<<"$out"' "auto report: $out"

# `use mpi_f08`, no ierror arguments: the same topology, so the same patterns match.
# shellcheck disable=SC2086
out=$($launch4 "$app_f08" 2 2>&1)
check '[ $? -eq 0 ] && grep -q "neighbor_app_f08: data OK" <<<"$out"' "native f08 run failed: $out"
out=$(run_preloaded "$capture_lib" NBR_CAPTURE="$work/cap08" "$app_f08" 2)
check '[ $? -eq 0 ] && grep -q "neighbor_app_f08: data OK" <<<"$out"' "f08 run under capture failed: $out"
out_preload=$(run_preloaded "$preload_lib" NBR_PATTERNS="$work/patterns" NBR_REPORT=1 "$app_f08" 2)
check '[ $? -eq 0 ] && grep -q "neighbor_app_f08: data OK" <<<"$out_preload"' \
  "f08 run under the preload failed: $out_preload"
check '! grep -q "not completed or freed\|nbr: MPI_\|no pattern" <<<"$out_preload"' "f08: a failed call: $out_preload"
if [ "$f08" = replayed ]; then
  check 'cmp -s <(grep -v "^#" cap/000000/neighbors.adj) <(grep -v "^#" cap08/000000/neighbors.adj)' \
    "f08 capture differs from the use-mpi one: $(cat cap08/000000/neighbors.adj 2>&1)"
  # 7 sizes x 2 nonblocking allgathers, 1 alltoallv, 1 more nonblocking allgather.
  check 'grep -qx "nbr: replayed 16 calls on 1 communicator" <<<"$out_preload"' "f08 report: $out_preload"
else
  check '[ ! -e cap08 ] && ! grep -q "^nbr-capture:" <<<"$out"' "f08 unexpectedly captured: $out"
  # Its MPI_Finalize bypasses the wrappers too: no report line.
  check '! grep -q "^nbr: replayed" <<<"$out_preload"' "f08 report: $out_preload"
fi

finish fortran
