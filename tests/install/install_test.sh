#!/usr/bin/env bash
# The installed package, from outside the tree: `cmake --install` into a fresh prefix, then
# examples/replay_check.c built against it twice (CMake find_package(nbr) and pkg-config with
# the MPI compiler wrapper), run on a pattern written by the installed nbrc; replay_check
# compares every replayed block with MPI's own neighbor collectives.
#
#   install_test.sh BUILD_DIR SOURCE_DIR MPI_C_COMPILER "LAUNCH_1" "LAUNCH_4"
set -euo pipefail
build=$1 source=$2 mpicc=$3 launch1=$4 launch4=$5
work=$(mktemp -d -p "${NBR_TEST_TMPDIR:-${TMPDIR:-/tmp}}")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

cmake --install "$build" --prefix "$prefix" >"$work/install.log"
for f in bin/nbrc bin/nbr-calibrate include/nbr.h include/nbr_version.h; do
  [ -e "$prefix/$f" ] || { echo "install_test: $f not installed"; exit 1; }
done
for lib in libnbr-capture libnbr-preload; do
  [ -n "$(find "$prefix" -name "$lib.so*")" ] || { echo "install_test: $lib not installed"; exit 1; }
done
config=$(find "$prefix" -name nbrConfig.cmake)
pc=$(find "$prefix" -name nbr.pc)
[ -n "$config" ] && [ -n "$pc" ] || { echo "install_test: no nbrConfig.cmake or nbr.pc"; exit 1; }

# One version everywhere: the generated header, the CMake package and the pkg-config file.
version=$(sed -n 's/^#define NBR_VERSION_STRING "\(.*\)"$/\1/p' "$prefix/include/nbr_version.h")
[ -n "$version" ] || { echo "install_test: no NBR_VERSION_STRING in nbr_version.h"; exit 1; }
pc_version=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --modversion nbr)
[ "$pc_version" = "$version" ] || { echo "install_test: nbr.pc says $pc_version, nbr_version.h $version"; exit 1; }

# find_package(nbr VERSION)
cmake -S "$source/tests/install/consumer" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$prefix" -DNBR_VERSION="$version" \
  -DMPI_C_COMPILER="$mpicc" -DNBR_EXAMPLE_SOURCE="$source/examples/replay_check.c" >"$work/configure.log" 2>&1 \
  || { cat "$work/configure.log"; exit 1; }
cmake --build "$work/consumer" >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
# pkg-config, relocated prefix
PKG_CONFIG_PATH=$(dirname "$pc") "$mpicc" "$source/examples/replay_check.c" \
  $(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --cflags --libs nbr) -o "$work/replay_check_pc" 2>"$work/pc.log" \
  || { cat "$work/pc.log"; exit 1; }

# A pattern from the installed compiler, replayed by both builds on 4 ranks.
$launch1 "$prefix/bin/nbrc" gen random --ranks 4 --density 0.6 --seed 3 -o "$work/r.el" >/dev/null
$launch1 "$prefix/bin/nbrc" compile "$work/r.el" --algo common-neighbor --threshold 2 -q -o "$work/cn"
for program in "$work/consumer/replay_check" "$work/replay_check_pc"; do
  $launch4 "$program" "$work/cn" 3 >"$work/run.log" 2>&1 || { cat "$work/run.log"; exit 1; }
  grep -q "OK" "$work/run.log" || { cat "$work/run.log"; echo "install_test: $program did not report OK"; exit 1; }
done
echo "install_test: find_package(nbr) and pkg-config builds replay correctly from $prefix"
