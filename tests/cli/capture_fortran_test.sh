#!/usr/bin/env bash
# Capture from an unmodified Fortran program (tests/apps/neighbor_app.f90, `use mpi`): the
# library wraps the Fortran entry points, whose MPI bindings call PMPI_* directly.
# usage: capture_fortran_test.sh NBRC FORTRAN_APP CAPTURE_LIB "LAUNCHER_FOR_4_PROCESSES"
set -u
nbrc=$1
app=$2
capture_lib=$3
launch4=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:verify_asan_link_order=0"
fail() { echo "FAIL: $*" >&2; exit 1; }
# shellcheck disable=SC2086
out=$($launch4 env NBR_CAPTURE="$work/cap" LD_PRELOAD="$capture_lib" "$app" 2>&1) || fail "run failed: $out"
grep -q "neighbor_app_f: data OK" <<<"$out" || fail "wrong data: $out"
grep -q "^nbr-capture: MPI_Dist_graph_create_adjacent: 4 ranks -> " <<<"$out" || fail "not captured: $out"
grep -qx "0: 3 2 3 ; 1 2 1" cap/000000/neighbors.adj || fail "lists: $(cat cap/000000/neighbors.adj)"
"$nbrc" compile cap/000000 --algo common-neighbor --threshold 1 -q -o cn || fail "compile failed"
"$nbrc" verify cn --topology cap/000000 >/dev/null || fail "verify failed"
echo "capture_fortran: passed"
