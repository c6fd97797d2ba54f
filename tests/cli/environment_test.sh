#!/usr/bin/env bash
# docs/environment.md is complete: every NBR_ variable the sources read (getenv), the scripts
# and benchmarks expand (${NBR_...}) or Python reads (os.environ) is named in it.
set -uo pipefail
root=${1:?usage: environment_test.sh SOURCE_DIR}
cd "$root" || exit 1
read_vars() {
  grep -rhoE 'getenv\("NBR_[A-Z0-9_]+' --include=*.cpp --include=*.c --include=*.hpp --include=*.h \
    replayer interpose compiler simulator graphs schema examples bench tests | sed 's/getenv("//'
  grep -rhoE '\$\{NBR_[A-Z0-9_]+' --include=*.sh bench scripts tests .ci | sed 's/\${//'
  grep -rhoE 'environ(\.get\(|\[)"NBR_[A-Z0-9_]+' --include=*.py bench scripts tests | grep -oE 'NBR_[A-Z0-9_]+'
}
vars=$(read_vars | sort -u)
[ -n "$vars" ] || { echo "FAIL: found no NBR_ variable at all (the search is broken)"; exit 1; }
missing=0
for v in $vars; do
  if ! grep -qE "\b$v\b" docs/environment.md; then
    echo "FAIL: $v is read but not in docs/environment.md"
    missing=$((missing + 1))
  fi
done
echo "environment: $(wc -w <<<"$vars") variables, $missing undocumented"
[ "$missing" -eq 0 ]
