#!/usr/bin/env bash
# libnbr's ABI: its dynamic symbols are the C API that nbr.h declares and nothing else (no C++
# internals an application could clash with or interpose), every function nbr.h declares is
# among them, and it needs MPI's C library only (no C++ binding library). The drop-in library,
# which links libnbr, must find every symbol it uses beyond that C API in itself or in the
# libraries it needs (so LD_PRELOAD works under a C application).
# The capture library likewise. In an optimized, uninstrumented build the blocking entry points
# lie on one page.
# usage: library_exports_test.sh LIBNBR NBR_H LIBNBR_PRELOAD LIBNBR_CAPTURE one-page|unchecked
set -u
lib=$1
header=$2
preload=$3
capture=$4
hot_page=$5
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

exported=$(nm -D --defined-only "$lib" | awk '{print $3}' | sort -u)
others=$(grep -v '^nbr_' <<<"$exported")
check '[ -n "$exported" ]' "nm found no dynamic symbols in $lib"
check '[ -z "$others" ]' "$lib exports symbols beyond the C API: $(head -5 <<<"$others" | tr '\n' ' ')"
declared=$(grep -oE '\bnbr_[a-z0-9_]+ *\(' "$header" | tr -d ' (' | sort -u)
check '[ "$(wc -l <<<"$declared")" -ge 25 ]' "found only $(wc -l <<<"$declared") functions in $header"
# The large-count forms (_c) are declared and built only with an MPI-4 library: all or none.
large=$(grep -c '^nbr_.*_c$' <<<"$exported" || true)
check '[ "$large" -eq 0 ] || [ "$large" -eq 15 ]' "$lib exports $large of the 15 large-count forms"
if [ "$large" -eq 0 ]; then declared=$(grep -v '_c$' <<<"$declared"); fi
for f in $declared; do
  check 'grep -qx "$f" <<<"$exported"' "$header declares $f, which $lib does not export"
done
# The blocking entry points, the way of most calls to MPI's collective, share one page of text
# (what a call touches is cold where processes share a core; docs/architecture.md).
# Compiled at -O0 with the sanitizers the section is two pages; no claim is made for such builds.
if [ "$hot_page" = one-page ]; then
  pages=$(nm -D --defined-only "$lib" | awk '$3 ~ /^nbr_neighbor_all(gather|toall)v?$/ {print substr($1, 1, length($1) - 3)}' | sort -u)
  check '[ "$(wc -l <<<"$pages")" -eq 1 ]' "the blocking entry points of $lib lie on more than one page: $(tr '\n' ' ' <<<"$pages")"
fi
needed=$(objdump -p "$lib" | awk '$1 == "NEEDED" {print $2}')
check 'grep -q libmpi <<<"$needed"' "$lib needs no MPI library: $(tr '\n' ' ' <<<"$needed")"
check '! grep -qE "mpi_cxx|mpicxx" <<<"$needed"' "$lib needs MPI's C++ binding library: $(tr '\n' ' ' <<<"$needed")"
# Every symbol the libraries use is found in the libraries they need (the sanitizers' runtime
# comes with the instrumented application).
for l in "$lib" "$preload" "$capture"; do
  undefined=$(ldd -r "$l" 2>&1 | grep 'undefined symbol' | grep -vE '__(asan|ubsan|lsan|sanitizer)' | awk '{print $3}')
  check '[ -z "$undefined" ]' "$l needs symbols no library it needs has: $(head -3 <<<"$undefined" | c++filt | tr '\n' ' ')"
done
finish library_exports
