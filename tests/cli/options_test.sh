#!/usr/bin/env bash
# docs/cli.md is complete: every option the command-line programs' --help lists (nbrc and each
# of its subcommands, nbrc gen's generators, nbr-calibrate, nbr-bench when built) is named in
# it, as --long or by its short form.
#
#   usage: options_test.sh SOURCE_DIR NBRC NBR_CALIBRATE [NBR_BENCH]
set -uo pipefail
root=${1:?usage: options_test.sh SOURCE_DIR NBRC NBR_CALIBRATE [NBR_BENCH]}
nbrc=${2:?} calibrate=${3:?} bench=${4:-}
doc="$root/docs/cli.md"
failures=0 checked=0
# Open MPI's session directories in this script's own, as tests/cli/lib.sh explains.
ompi_sessions=$(mktemp -d /tmp/nbr-ompi.XXXXXX)
export OMPI_MCA_orte_tmpdir_base="$ompi_sessions"
trap 'rm -rf "$ompi_sessions"' EXIT

# The options of one --help text: "SHORT LONG" per option (SHORT "-" when there is none).
options_of() {
  grep -oE '^ +(-[A-Za-z],)?--[a-z0-9-]+' | sed -E 's/^ +//; s/,/ /' |
    awk '{ if (NF == 1) print "-", $1; else print $1, $2 }' | grep -v -- '--help$'
}

documented() {
  local short=$1 long=$2
  grep -qE -- "(^|[^a-z0-9-])${long}([^a-z0-9-]|$)" "$doc" && return 0
  [ "$short" != "-" ] && grep -qE -- "\`${short}[\` /]" "$doc"
}

check() {  # check NAME COMMAND...
  local name=$1 help
  shift
  help=$("$@" --help 2>&1) || { echo "FAIL: $name --help failed"; failures=$((failures + 1)); return; }
  while read -r short long; do
    [ -n "$long" ] || continue
    checked=$((checked + 1))
    documented "$short" "$long" || { echo "FAIL: $name $long is not in docs/cli.md"; failures=$((failures + 1)); }
  done < <(options_of <<<"$help")
}

for sub in compile candidates inspect verify simulate; do check "nbrc $sub" "$nbrc" "$sub"; done
for generator in moore cart random pairs; do check "nbrc gen $generator" "$nbrc" gen "$generator"; done
check nbr-calibrate "$calibrate"
[ -n "$bench" ] && check nbr-bench "$bench"
[ "$checked" -gt 40 ] || { echo "FAIL: only $checked options found (the --help parse is broken)"; exit 1; }
echo "options: $checked checked, $failures not in docs/cli.md"
[ "$failures" -eq 0 ]
