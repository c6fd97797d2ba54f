#!/usr/bin/env bash
# The whole test suite: unit, MPI and CLI tests against Open MPI (built with
# AddressSanitizer + UBSan) and against MPICH.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=env.sh
source "$root/scripts/env.sh"
bash "$root/scripts/install_deps.sh"
jobs=$(nproc)

echo "== Open MPI, sanitized build (all tests but the heavy sweeps)"
cmake -S "$root" -B "$root/build-asan" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DNBR_SANITIZE=ON -DNBR_WERROR=ON \
  -DNBR_BUILD_BENCH=OFF >/dev/null
cmake --build "$root/build-asan" -j "$jobs"
(cd "$root/build-asan" && ctest -j "$jobs" --output-on-failure --timeout 900 -LE heavy)

echo "== MPICH build (all tests)"
cmake -S "$root" -B "$root/build-mpich" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNBR_WERROR=ON \
  -DMPI_C_COMPILER=mpicc.mpich -DMPI_CXX_COMPILER=mpicxx.mpich -DMPIEXEC_EXECUTABLE=/usr/bin/mpiexec.mpich >/dev/null
cmake --build "$root/build-mpich" -j "$jobs"
(cd "$root/build-mpich" && ctest -j "$jobs" --output-on-failure --timeout 900)
