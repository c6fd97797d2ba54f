# Shared by the CLI test scripts (sourced): a work directory removed at exit, pass and fail
# counters, `check CONDITION MESSAGE` (CONDITION is evaluated), and `finish NAME`, which
# prints the tally and fails if anything failed.
work=$(mktemp -d)
trap 'chmod -R u+rwX "$work" 2>/dev/null; rm -rf "$work"' EXIT
failures=0
passes=0
pass() { passes=$((passes + 1)); }
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
check() { if eval "$1"; then pass; else fail "$2"; fi; }
finish() {
  echo "$1: $passes passed, $failures failed"
  [ "$failures" -eq 0 ]
}
