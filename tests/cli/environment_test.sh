#!/usr/bin/env bash
# docs/environment.md is complete and current: every NBR_ variable the sources read (any
# string literal naming one that is not an API constant of the public headers: getenv's
# argument, or a table of names read later), the scripts and benchmarks expand ($NBR_... or
# ${NBR_...}) or Python reads (os.environ) is named in the first column of one of its tables,
# and every variable named there is read somewhere.
set -uo pipefail
root=${1:?usage: environment_test.sh SOURCE_DIR}
cd "$root" || exit 1
sources=(replayer interpose compiler simulator graphs schema plan examples bench tests)
api_constants() {
  grep -rhoE '\bNBR_[A-Z0-9_]+' replayer/include | sort -u
}
read_vars() {
  grep -rhoE '"NBR_[A-Z0-9_]+"' --include=*.cpp --include=*.c --include=*.hpp --include=*.h \
    "${sources[@]}" | tr -d '"' | grep -vxFf <(api_constants)
  grep -rhoE '\$\{?NBR_[A-Z0-9_]+' --include=*.sh bench scripts tests .ci | tr -d '${'
  grep -rhoE '(environ(\.get\(|\[)|getenv\()"NBR_[A-Z0-9_]+' --include=*.py bench scripts tests |
    grep -oE 'NBR_[A-Z0-9_]+'
}
documented_vars() {
  # The first cell of every table row, where the variables are named.
  grep -E '^\| *`' docs/environment.md | cut -d'|' -f2 | grep -oE '\bNBR_[A-Z0-9_]+' | sort -u
}
vars=$(read_vars | sort -u)
documented=$(documented_vars)
[ -n "$vars" ] || { echo "FAIL: found no NBR_ variable at all (the search is broken)"; exit 1; }
[ -n "$documented" ] || { echo "FAIL: docs/environment.md names no variable in a table (the parse is broken)"; exit 1; }
failures=0
for v in $vars; do
  if ! grep -qxF "$v" <<<"$documented"; then
    echo "FAIL: $v is read ($(grep -rlE "\b$v\b" "${sources[@]}" scripts .ci 2>/dev/null | head -1)) but not in a table of docs/environment.md"
    failures=$((failures + 1))
  fi
done
for v in $documented; do
  if ! grep -qxF "$v" <<<"$vars"; then
    echo "FAIL: docs/environment.md documents $v, which nothing reads"
    failures=$((failures + 1))
  fi
done
echo "environment: $(wc -w <<<"$vars") variables read, $(wc -w <<<"$documented") documented, $failures mismatches"
[ "$failures" -eq 0 ]
