#!/usr/bin/env bash
# Capture from an unmodified Fortran program (tests/apps/neighbor_app.f90, `use mpi`): the
# library wraps the Fortran entry points, whose MPI bindings call PMPI_* directly.
# usage: capture_fortran_test.sh NBRC FORTRAN_APP CAPTURE_LIB "LAUNCHER_FOR_4_PROCESSES"
set -u
nbrc=$1
app=$2
capture_lib=$3
launch4=$4
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
cd "$work" || exit 1
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:verify_asan_link_order=0"
# shellcheck disable=SC2086
out=$($launch4 env NBR_CAPTURE="$work/cap" LD_PRELOAD="$capture_lib" "$app" 2>&1)
check '[ $? -eq 0 ] && grep -q "neighbor_app_f: data OK" <<<"$out"' "run failed or wrong data: $out"
check 'grep -q "^nbr-capture: MPI_Dist_graph_create_adjacent: 4 ranks -> " <<<"$out"' "not captured: $out"
check 'grep -qx "0: 3 2 3 ; 1 2 1" cap/000000/neighbors.adj' "lists: $(cat cap/000000/neighbors.adj 2>&1)"
check '"$nbrc" compile cap/000000 --algo common-neighbor --threshold 1 -q -o cn' "compile failed"
check '"$nbrc" verify cn --topology cap/000000 >/dev/null' "verify failed"
finish capture_fortran
