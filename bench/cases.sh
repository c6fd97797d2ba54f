# Sourced by bench/smpi/table.sh and bench/simulate_table.sh: the benchmark cases.
# BENCH_CASES: Moore neighborhoods (d, r) and Erdős–Rényi graphs (density δ, seed 1).
BENCH_CASES="moore-2-2 moore-2-3 moore-3-1 moore-3-2 random-0.05 random-0.2"

# algo_options NAME: nbrc compile's options for an algorithm or configuration name (the names
# auto gives its candidates): hierarchical[-cube-kK][-bruck-rR] is the hierarchical algorithm
# across nodes along a cube of radix K (k0: every node in one round) instead of in lanes, with
# Bruck rounds of radix R inside the node; kgroup-kK[-aware] groups of K, topology-aware or
# not; any other name is an --algo value.
algo_options() {
  case $1 in
    kgroup-k*)
      local k=${1#kgroup-k}
      [[ $k == *-aware ]] && echo "--algo kgroup --k ${k%-aware} --topology-aware" || echo "--algo kgroup --k $k" ;;
    hierarchical-*)
      local rest=${1#hierarchical} options="--algo hierarchical"
      if [[ $rest =~ ^-cube-k([0-9]+) ]]; then
        options+=" --across-nodes cube --node-radix ${BASH_REMATCH[1]}"
        rest=${rest#-cube-k"${BASH_REMATCH[1]}"}
      fi
      [[ $rest =~ ^-bruck-r([0-9]+)$ ]] && options+=" --intra-node bruck --radix ${BASH_REMATCH[1]}"
      echo "$options" ;;
    *) echo "--algo $1" ;;
  esac
}

# hierarchical_configs PER_NODE...: the hierarchical configurations auto tries on nodes of
# PER_NODE ranks (compiler/src/algorithm.cpp), the union for several node sizes: in lanes,
# direct and Bruck rounds of radix 2-4; along a cube of radix 4 or in one round, direct and
# Bruck rounds of radix 3; and where a node needs a radix above 4 to be reached in two Bruck
# rounds (⌈√PER_NODE⌉), that radix in lanes and with the cube in one round.
hierarchical_configs() {
  local lanes="hierarchical hierarchical-bruck-r2 hierarchical-bruck-r3 hierarchical-bruck-r4"
  local cube="hierarchical-cube-k4 hierarchical-cube-k0 hierarchical-cube-k4-bruck-r3 hierarchical-cube-k0-bruck-r3"
  local n r
  for n in "$@"; do
    r=2
    while ((r * r < n)); do r=$((r + 1)); done
    if ((r > 4)) && [[ " $lanes " != *" hierarchical-bruck-r$r "* ]]; then
      lanes+=" hierarchical-bruck-r$r"
      cube+=" hierarchical-cube-k0-bruck-r$r"
    fi
  done
  echo "$lanes $cube"
}

# gen_case NBRC CASE RANKS FILE: writes the topology of a case name (moore-D-R: Moore
# neighborhood of dimension D and radius R; random-DELTA: random graph of density DELTA) at
# RANKS ranks to FILE, unless FILE exists.
gen_case() {
  local nbrc=$1 case=$2 ranks=$3 file=$4 d r
  [ -f "$file" ] && return
  case $case in
    moore-*-*)
      IFS=- read -r _ d r <<<"$case"
      "$nbrc" gen moore --ranks "$ranks" --dims "$d" --radius "$r" -o "$file" >/dev/null ;;
    random-*) "$nbrc" gen random --ranks "$ranks" --density "${case#random-}" -o "$file" >/dev/null ;;
    *) echo "unknown case $case" >&2; return 1 ;;
  esac
}

# prepare_case NBRC OUT CASE RANKS ALGOS...: generates OUT/CASE-RANKS/topology.el and compiles
# the naive pattern and every algorithm in ALGOS into OUT/CASE-RANKS/ALGO (with ALGO.inspect.json),
# skipping what is there already. NBR_COMPILE_LAUNCH (e.g. "mpirun -np 2") runs the compiler
# in parallel (same output for any process count); NBR_COMPILE_ARGS are added to every compile
# (e.g. "--ranks-per-node 32 --ranks-per-socket 16", which distance-halving needs).
prepare_case() {
  local nbrc=$1 out=$2 case=$3 ranks=$4 work="$2/$3-$4" algo
  shift 4
  mkdir -p "$work"
  gen_case "$nbrc" "$case" "$ranks" "$work/topology.el"
  for algo in naive "$@"; do
    if [ ! -f "$work/$algo.inspect.json" ]; then
      # shellcheck disable=SC2046,SC2086
      ${NBR_COMPILE_LAUNCH:-} "$nbrc" compile "$work/topology.el" $(algo_options "$algo") ${NBR_COMPILE_ARGS:-} \
        -q -o "$work/$algo"
      "$nbrc" inspect "$work/$algo" --json >"$work/$algo.inspect.json"
    fi
  done
}
