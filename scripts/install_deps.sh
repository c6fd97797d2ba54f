#!/usr/bin/env bash
# Installs nbr's build and test dependencies from Debian 12 packages (idempotent).
set -euo pipefail
packages=(
  build-essential cmake ninja-build pkg-config
  openmpi-bin libopenmpi-dev mpich libmpich-dev
  libprotobuf-dev protobuf-compiler
  libhwloc-dev libcli11-dev libgtest-dev libgmock-dev
  python3 python3-matplotlib python3-mpi4py
  clang libclang-rt-14-dev clang-format gfortran
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "installing: ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# Open MPI stays the default mpicc/mpirun even with MPICH installed.
if [ -x /usr/bin/mpirun.openmpi ]; then
  $sudo update-alternatives --set mpi /usr/bin/mpicc.openmpi >/dev/null 2>&1 || true
  $sudo update-alternatives --set mpirun /usr/bin/mpirun.openmpi >/dev/null 2>&1 || true
fi
