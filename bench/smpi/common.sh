# Shared by bench/smpi/*.sh (sourced): SimGrid installation, the SMPI build, hostfiles.

# smpi_build ROOT BUILD_DIR [TARGET]: installs SimGrid if needed and, unless TARGET is already
# built, configures and builds the SMPI configuration (TARGET, or everything).
smpi_build() {
  local root=$1 build=$2 target=${3:-}
  if ! command -v smpicxx >/dev/null; then
    local sudo=""
    [ "$(id -u)" -ne 0 ] && sudo=sudo
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends libsimgrid-dev >/dev/null
  fi
  if [ -z "$target" ] || [ ! -x "$build/bench/$target" ]; then
    CC=smpicc CXX=smpicxx cmake -S "$root" -B "$build" -G Ninja -DNBR_SMPI=ON -DCMAKE_BUILD_TYPE=Release >/dev/null
    cmake --build "$build" ${target:+--target "$target"}
  fi
}

# smpi_platform_attr PLATFORM NAME: the first value of attribute NAME (e.g. core, speed).
smpi_platform_attr() {
  grep -o "$2=\"[^\"]*\"" "$1" | head -1 | cut -d'"' -f2
}

# smpi_hostfile PLATFORM RANKS FILE: as many ranks per node as the platform's nodes have cores.
smpi_hostfile() {
  local cores prefix nodes i
  cores=$(smpi_platform_attr "$1" core)
  prefix=$(smpi_platform_attr "$1" prefix)
  nodes=$((($2 + cores - 1) / cores))
  for ((i = 0; i < nodes; ++i)); do echo "${prefix}${i}:${cores}"; done >"$3"
}
