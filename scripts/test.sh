#!/usr/bin/env bash
# The whole test suite: unit, MPI and CLI tests against Open MPI (built with
# AddressSanitizer + UBSan) and against MPICH (the long runs also with clang's sanitizers); the fuzz targets for a fixed time each (clang,
# libFuzzer, ASan + UBSan); then the SimGrid SMPI build of the simulated
# benchmarks with a small simulated run of each (data checked, determinism checked).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=env.sh
source "$root/scripts/env.sh"
bash "$root/scripts/install_deps.sh"
jobs=$(nproc)
# Compile time is most of CI's time: the sanitized and fuzzing builds keep line tables only
# (-g1: their reports still name file and line), the MPICH build no debug information at all.
lines_only=(-DCMAKE_C_FLAGS_DEBUG=-g1 -DCMAKE_CXX_FLAGS_DEBUG=-g1)
fuzz_lines_only=(-DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG")
no_debug_info=(-DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -DNDEBUG" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -DNDEBUG"
  -DCMAKE_Fortran_FLAGS_RELWITHDEBINFO="-O2 -DNDEBUG")
stage() {  # stage TITLE: the title with the minutes and seconds since the start
  printf '== [%02d:%02d] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$1"
}

stage "Open MPI, sanitized build (all tests but the heavy sweeps, the algorithms' 2-process compiles and the regular grids' reference outputs)"
# Each algorithm's MPI test runs once per MPI: here on 3 processes, under MPICH below on 2
# (each also compiles on one process and compares, so both process counts are checked).
# The reference outputs of the two Moore grids (98 s here, 35 s optimized) run under MPICH
# below; here the irregular graphs' (random and dwt_162), whose uneven degrees reach more of
# the algorithms' code.
cmake -S "$root" -B "$root/build-asan" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DNBR_SANITIZE=ON -DNBR_WERROR=ON \
  -DNBR_BUILD_BENCH=OFF "${lines_only[@]}" >/dev/null
cmake --build "$root/build-asan" -j "$jobs"
(cd "$root/build-asan" && ctest -j "$jobs" --output-on-failure --timeout 900 -LE heavy \
  -E '^(test_(common_neighbor|distance_halving|kgroup|hierarchical)[.]2ranks|reference_outputs[.]moore-(2-2|3-1))$')

stage "MPICH build (all tests but the 7- and 16-rank replays, the 6-rank Cartesian grids, the 5-rank API replay, auto and in-job build tests, the 3-process compiles, the 7-rank applications and in-job builds and the 9-rank demo)"
# MPICH busy-polls when ranks outnumber cores: the 16-rank replay takes about 9 minutes on
# 2 cores there, the 7-rank one about 3.5, the 6-rank Cartesian grids minutes, the 5-rank API replay about 2, each algorithm's
# 3-process compile test 35-47 s (5 s on 2 processes), the example applications on 7 ranks
# 38 s, the 5-rank auto and in-job build tests 24 and 17 s (7 and 10 on 3), the README's demo
# (eight 9-rank launches) minutes. They run against Open MPI above; MPICH replays (and runs the
# Cartesian grids) at 4 ranks, the API, auto and in-job build tests at 3, runs the applications
# on 1 and 4, and compiles the algorithms on 2 processes.
cmake -S "$root" -B "$root/build-mpich" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNBR_WERROR=ON "${no_debug_info[@]}" \
  -DNBR_AROUND_LIBRARIES_FLAGS=-O0 \
  -DMPI_C_COMPILER=mpicc.mpich -DMPI_CXX_COMPILER=mpicxx.mpich -DMPI_Fortran_COMPILER=mpif90.mpich \
  -DMPIEXEC_EXECUTABLE=/usr/bin/mpiexec.mpich >/dev/null
cmake --build "$root/build-mpich" -j "$jobs"
(cd "$root/build-mpich" && ctest -j "$jobs" --output-on-failure --timeout 900 \
  -E '^(test_replay[.](7|16)ranks|test_cartesian[.]6ranks|test_(replay_api|auto|build)[.]5ranks|test_(common_neighbor|distance_halving|kgroup|hierarchical)[.]3ranks|(example_applications|in_job_build)[.]7ranks|readme_demo)$')

stage "MPICH, sanitized build of the long runs (10^5 persistent and nonblocking iterations)"
# clang, whose sanitized build of the libraries this test needs takes 30 % less CPU time than
# GCC's (384 s against 552 s on one core); GCC's sanitizers run the Open MPI stage above.
CC=clang CXX=clang++ cmake -S "$root" -B "$root/build-mpich-asan" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DNBR_SANITIZE=ON -DNBR_WERROR=ON "${lines_only[@]}" \
  -DNBR_BUILD_BENCH=OFF -DNBR_BUILD_EXAMPLES=OFF -DMPI_C_COMPILER=mpicc.mpich -DMPI_CXX_COMPILER=mpicxx.mpich \
  -DMPIEXEC_EXECUTABLE=/usr/bin/mpiexec.mpich >/dev/null
cmake --build "$root/build-mpich-asan" -j "$jobs" --target test_long_run
(cd "$root/build-mpich-asan" && ctest --output-on-failure -R '^test_long_run[.]')

stage "Fuzzing (clang, libFuzzer with ASan and UBSan): each target for NBR_FUZZ_SECONDS"
CC=clang CXX=clang++ cmake -S "$root" -B "$root/build-fuzz" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNBR_FUZZ=ON \
  -DNBR_BUILD_BENCH=OFF -DNBR_BUILD_EXAMPLES=OFF -DNBR_FUZZ_SECONDS="${NBR_FUZZ_SECONDS:-12}" "${fuzz_lines_only[@]}" >/dev/null
cmake --build "$root/build-fuzz" -j "$jobs" --target fuzz_targets
(cd "$root/build-fuzz" && ctest -j "$jobs" --output-on-failure -L fuzz)

stage "SimGrid SMPI build (simulated benchmarks: build and a small simulated run)"
# shellcheck source=../bench/smpi/common.sh
source "$root/bench/smpi/common.sh"
NBR_WERROR=ON smpi_build "$root" "$root/build-smpi-ci"
smoke=$(mktemp -d)
trap 'rm -rf "$smoke"' EXIT
nbrc="$root/build-mpich/compiler/nbrc"
# The simulated table (bench/smpi_table/run.sh) at 64 ranks: generate, compile, simulate every
# cell twice (run.sh fails if the two simulations differ), check the data, tabulate.
NBR_SMPI_BUILD="$root/build-smpi-ci" bash "$root/bench/smpi_table/run.sh" "$smoke/table" --build "$root/build-mpich" \
  --ranks 64 --cases "moore-2-2 random-0.2" | tee "$smoke/table.txt"
[ "$(grep -c "deterministic: two simulations agree" "$smoke/table.txt")" -eq 4 ]
[ "$(grep -cE '^\| (Moore|random).* \| 2 \| ok \|$' "$smoke/table.txt")" -eq 4 ]
# A prepared case missing one of the table's sizes is tabulated as "not simulated".
cp -r "$smoke/table" "$smoke/partial"
rm "$smoke/partial/moore-2-2-64/common-neighbor.1024B.bench.json"
/usr/bin/python3 "$root/bench/smpi_table/table.py" "$smoke/partial" >"$smoke/partial.txt"
grep -qE '^\| Moore d=2 r=2 \| 64 \| 4 \| .* \| 2 \| ok \|$' "$smoke/partial.txt"
grep -qE '^\| Moore d=2 r=2 \| 64 \| 1024 \| common-neighbor \| – \| – \| – \| 24.0 → .* \| not simulated \|$' \
  "$smoke/partial.txt"
# The model against SMPI (bench/smpi_validate/run.sh) on one small cell: naive and the three
# algorithms under SMPI and in the model, one row per size, the data apart from the patterns;
# run again with a second size, only that size is simulated and added to the kept results.
for sizes in 64 64,1024; do
  NBR_SMPI_BUILD="$root/build-smpi-ci" bash "$root/bench/smpi_validate/run.sh" "$smoke/validate" \
    --build "$root/build-mpich" --cases moore-2-2:64:16 --sizes "$sizes" | tee "$smoke/validate.txt"
done
[ "$(grep -cE '^\| moore-2-2 64 \(16/node\) \| (64|1024) \| ' "$smoke/validate.txt")" -eq 2 ]
[ "$(grep -c ' (1024 B): SMPI' "$smoke/validate.txt")" -eq 4 ]
[ "$(find "$smoke/validate/ppn16/moore-2-2-64" -name '*.smpi.json' | wc -l)" -eq 4 ]
# Job-start cost at 32 simulated ranks: two online-vs-load rows and one load-only row of a
# pattern compiled beforehand.
"$nbrc" gen random --ranks 32 --density 0.5 -o "$smoke/r.el" >/dev/null
"$nbrc" compile "$smoke/r.el" --algo common-neighbor -q -o "$smoke/r.cn"
NBR_SMPI_BUILD="$root/build-smpi-ci" bash "$root/bench/smpi_startup/run.sh" "$smoke/startup" --ranks 32 -- --degrees 4,31 --repeats 1 \
  --patterns "$smoke/r.cn" | tee "$smoke/startup.txt"
[ "$(grep -cE '^ +(4|31) ' "$smoke/startup.txt")" -eq 2 ]
grep -q "(load only: $smoke/r.cn)" "$smoke/startup.txt"
stage "all tests passed"
