#!/usr/bin/env bash
# Every C and C++ source of the project is formatted as .clang-format says (clang-format
# --dry-run --Werror): tracked files when SOURCE_DIR is a git checkout, else every such file
# outside build directories. `clang-format -i FILE` fixes one.
set -uo pipefail
root=${1:?usage: format_test.sh SOURCE_DIR [CLANG_FORMAT]}
clang_format=${2:-clang-format}
cd "$root" || exit 1
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files '*.c' '*.h' '*.cpp' '*.hpp')
else
  mapfile -t files < <(find . -path './build*' -prune -o -type f \( -name '*.c' -o -name '*.h' -o -name '*.cpp' \
    -o -name '*.hpp' \) -print | sort)
fi
[ ${#files[@]} -gt 50 ] || { echo "FAIL: found ${#files[@]} sources (the search is broken)"; exit 1; }
# One clang-format for all files (one per file took 20-35 s, mostly process start-up); its
# messages name each file that is not formatted.
output=$("$clang_format" --dry-run --Werror "${files[@]}" 2>&1)
status=$?
mapfile -t unformatted < <(printf '%s\n' "$output" | sed -n 's/^\(.*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/\1/p' |
  sort -u)
if [ ${#unformatted[@]} -gt 0 ]; then
  printf 'FAIL: not formatted (clang-format -i %s)\n' "${unformatted[@]}"
  exit 1
fi
if [ "$status" -ne 0 ]; then
  printf 'FAIL: clang-format exited with %s:\n%s\n' "$status" "$output"
  exit 1
fi
echo "ok: ${#files[@]} sources formatted"
