# bench/lib/study.sh: the one interface of every study (bench/README.md). A study's run.sh
# sources this file and calls `study_init "$@"`:
#
#   bench/STUDY/run.sh [OUT] [--build DIR] [--cases LIST] [--sizes LIST] [--ranks LIST]
#                      [--machine LIST] [--placement N:S] [--algos LIST] [--collectives LIST]
#                      [--launches N] [--iters N] [-- STUDY ARGUMENTS]
#
# OUT is where the study writes its data and tables (default BUILD/bench/STUDY; the data the
# documentation shows are in bench/STUDY/results: give that directory to refresh them). Each
# option sets the environment variable of its name (NBR_BUILD, NBR_CASES, NBR_SIZES,
# NBR_RANKS, NBR_MACHINE, NBR_PLACEMENT, NBR_ALGOS, NBR_COLLECTIVES, NBR_LAUNCHES,
# NBR_ITERS), which the environment may set instead; a study reads those it has a use for and
# states its defaults in its header (`run.sh --help`) and README. LIST: words separated by
# spaces or commas. After `--`, arguments go to the study itself (study_rest).
#
# Sets: root (the project), study (its name), build, out (created), study_rest (array); sources
# scripts/env.sh (mpirun as root, oversubscribed) and bench/lib/cases.sh (the case generator).

# study_usage FILE: the header comment of a study's run.sh.
study_usage() {
  sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$1"
}

study_init() {
  local script=${BASH_SOURCE[1]}
  root=$(cd "$(dirname "$script")/../.." && pwd)
  # shellcheck source=../../scripts/env.sh
  source "$root/scripts/env.sh"
  # shellcheck source=cases.sh
  source "$root/bench/lib/cases.sh"
  study=$(basename "$(dirname "$(cd "$(dirname "$script")" && pwd)/x")")
  out=""
  study_rest=()
  while [ $# -gt 0 ]; do
    case $1 in
      --build | --cases | --sizes | --ranks | --machine | --placement | --algos | --collectives | --launches | --iters)
        [ $# -ge 2 ] || { echo "$study: $1 needs a value" >&2; exit 2; }
        local name=${1#--}
        export "NBR_${name^^}=$2"
        shift 2 ;;
      --) shift; study_rest=("$@"); break ;;
      -h | --help) study_usage "$script"; exit 0 ;;
      -*) echo "$study: unknown option $1 (bench/lib/study.sh; $script --help)" >&2; exit 2 ;;
      *)
        [ -z "$out" ] || { echo "$study: one output directory, not '$out' and '$1'" >&2; exit 2; }
        out=$1
        shift ;;
    esac
  done
  build=${NBR_BUILD:-$root/build}
  out=${out:-$build/bench/$study}
  mkdir -p "$out"
  out=$(cd "$out" && pwd)
}

# study_words LIST: the list's words separated by spaces.
study_words() {
  echo "${1//,/ }"
}

# study_commas LIST: the list's words separated by commas.
study_commas() {
  local words
  read -r -a words <<<"${1//,/ }"
  local IFS=,
  echo "${words[*]}"
}

# study_bytes LIST: sizes with K and M suffixes as bytes, separated by commas.
study_bytes() {
  local size result=()
  for size in $(study_words "$1"); do
    case $size in
      *K) result+=($((${size%K} << 10))) ;;
      *M) result+=($((${size%M} << 20))) ;;
      *) result+=("$size") ;;
    esac
  done
  local IFS=,
  echo "${result[*]}"
}

# study_placement N:S: nbrc's block-placement options for N ranks per node, S per socket.
study_placement() {
  local per_node per_socket
  IFS=: read -r per_node per_socket <<<"$1"
  echo "--ranks-per-node $per_node${per_socket:+ --ranks-per-socket $per_socket}"
}
