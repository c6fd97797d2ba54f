# Sourced by bench/smpi_table/run.sh and bench/simulate_table/run.sh: the benchmark cases.
# BENCH_CASES: Moore neighborhoods (d, r) and Erdős–Rényi graphs (density δ, seed 1).
BENCH_CASES="moore-2-2 moore-2-3 moore-3-1 moore-3-2 random-0.05 random-0.2"

# hierarchical_configs NBRC PER_NODE[/PER_SOCKET]...: the hierarchical configurations auto tries
# on nodes of PER_NODE ranks (sockets of PER_SOCKET; default one socket per node), as `nbrc
# candidates` lists them (names --algo takes), the union for several node sizes in their first
# order.
hierarchical_configs() {
  local nbrc=$1 n name seen=" "
  shift
  for n in "$@"; do
    for name in $("$nbrc" candidates --ranks "${n%/*}" --ranks-per-node "${n%/*}" --ranks-per-socket "${n#*/}"); do
      [[ $name == hierarchical* && $seen != *" $name "* ]] && seen+="$name "
    done
  done
  seen=${seen# }
  echo "${seen% }"
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
      # shellcheck disable=SC2086
      ${NBR_COMPILE_LAUNCH:-} "$nbrc" compile "$work/topology.el" --algo "$algo" ${NBR_COMPILE_ARGS:-} \
        -q -o "$work/$algo"
      "$nbrc" inspect "$work/$algo" --json >"$work/$algo.inspect.json"
    fi
  done
}

# without_dir DIR [FILE]: FILE (or standard input) with DIR/ left out of every path it names, so
# that kept data name the patterns relative to where a study compiled them.
without_dir() {
  sed "s|$1/||g" ${2:+"$2"}
}
