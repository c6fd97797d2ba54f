# Shared by the CLI test scripts (sourced): a work directory removed at exit, pass and fail
# counters, `check CONDITION MESSAGE` (CONDITION is evaluated), `finish NAME`, which prints the
# tally and fails if anything failed, and `run_preloaded LIB ENV=VALUE... APP ARGS...`, which
# runs APP under $launch4 with LIB preloaded into the application's processes only (not the
# launcher), stderr merged. An instrumented application loads the instrumented library ahead
# of ASan's runtime, hence verify_asan_link_order=0.
work=$(mktemp -d -p "${NBR_TEST_TMPDIR:-${TMPDIR:-/tmp}}")
# Open MPI's session directories in this script's own: processes started without mpirun (nbrc
# run directly, OMPI_MCA_ess_singleton_isolated=1) all use /tmp/ompi.HOST.UID/jf.0, which
# another test's exiting process can remove while this one creates its directory in it ("A
# call to mkdir was unable to create the desired directory"). A short path: the session
# directory holds Unix sockets, whose paths are limited to 108 bytes. MPICH ignores it.
ompi_sessions=$(mktemp -d /tmp/nbr-ompi.XXXXXX)
export OMPI_MCA_orte_tmpdir_base="$ompi_sessions"
trap 'chmod -R u+rwX "$work" 2>/dev/null; rm -rf "$work" "$ompi_sessions"' EXIT
failures=0
passes=0
pass() { passes=$((passes + 1)); }
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
check() { if eval "$1"; then pass; else fail "$2"; fi; }
finish() {
  echo "$1: $passes passed, $failures failed"
  [ "$failures" -eq 0 ]
}
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:verify_asan_link_order=0"
run_preloaded() {
  local lib=$1
  shift
  # shellcheck disable=SC2086,SC2154
  $launch4 env LD_PRELOAD="$lib" "$@" 2>&1
}
