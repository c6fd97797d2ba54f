#!/usr/bin/env bash
# End-to-end checks of the nbrc command line: outputs, exit codes, messages. PART: compile (the
# compiler, inspect, verify, simulate, bad inputs), algorithms (each algorithm's options,
# configurations and 1- and 2-process compiles), calibrate (nbr-calibrate, nbr-bench
# --calibrate) or all; three CTest entries run the three parts, each well within its timeout.
# usage: nbrc_cli_test.sh NBRC "LAUNCHER_FOR_2_PROCESSES" SHARED_DIR NBR_CALIBRATE [NBR_BENCH] [PART]
set -u
nbrc=$1
launch2=$2
shared=$3
calibrate=$4
bench=${5:-}  # nbr-bench, where the benchmarks are built
part=${6:-all}
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

# expect CODE FRAGMENT -- command...: exit code and a fragment of stdout+stderr.
expect() {
  local code=$1 fragment=$2
  shift 3
  local out rc
  out=$("$@" 2>&1)
  rc=$?
  if [ "$rc" -ne "$code" ]; then fail "'$*' exited $rc, expected $code: $out"; return; fi
  if [ -n "$fragment" ] && ! grep -qF -- "$fragment" <<<"$out"; then fail "'$*' output lacks '$fragment': $out"; return; fi
  pass
}

cd "$work" || exit 1
# shellcheck disable=SC2086
expect 0 "wrote moore.el: 64 ranks, 512 edges" -- $nbrc gen moore --ranks 64 --dims 2 --radius 1 -o moore.el
expect 0 "wrote random.el: 64 ranks" -- $nbrc gen random --ranks 64 --density 0.1 --seed 3 -o random.el
expect 1 "needs every grid dimension >= 5" -- $nbrc gen moore --ranks 16 --dims 2 --radius 2 -o bad.el
test ! -e bad.el && pass || fail "failed gen left a file"
expect 2 "" -- $nbrc gen random --ranks 10 --density 1.5 -o x.el
expect 0 "Subcommands" -- $nbrc --help
expect 2 "" -- $nbrc frobnicate

# Compile with 2 processes and with 1: identical bytes.
expect 0 "compiled moore.el" -- $launch2 $nbrc compile moore.el -o p2
expect 0 "" -- $nbrc compile moore.el -o p1 --quiet
if diff -r p1 p2 >/dev/null; then pass; else fail "P=1 and P=2 outputs differ"; fi
expect 0 "OK p2: 64 ranks, 512 edges each delivered exactly once" -- $nbrc verify p2 --topology moore.el
expect 1 "differ from the given topology" -- $nbrc verify p2 --topology random.el
# An output named with a trailing slash is the same directory (and is replaced as one).
expect 0 "" -- $nbrc compile moore.el -o slash/ -q
expect 0 "" -- $nbrc compile moore.el -o slash// -q
if diff -r p1 slash >/dev/null && [ -z "$(ls -A . | grep '^\.slash')" ]; then pass; else fail "-o slash/ differs: $(ls -A)"; fi

# Placement files (simulate and distance-halving use them): all 64 ranks on one socket, and
# one that places only ranks 0-9.
for r in $(seq 0 63); do echo "$r 0 0"; done >onesocket.txt
head -n 10 onesocket.txt >short.txt

if [ "$part" = all ] || [ "$part" = compile ]; then
# --layout packed: two files, identical for 1 and 2 processes; verify, inspect and simulate
# read it; an auto directory's variants can be packed too.
expect 0 "rank patterns (packed)" -- $launch2 $nbrc compile moore.el -o k2 --layout packed
expect 0 "" -- $nbrc compile moore.el -o k1 --layout packed -q
if diff -r k1 k2 >/dev/null; then pass; else fail "packed: P=1 and P=2 outputs differ"; fi
[ "$(ls -A k2)" = "$(printf 'manifest.pb\nranks.pack')" ] && pass || fail "k2 holds: $(ls -A k2)"
expect 0 "OK k2: 64 ranks, 512 edges each delivered exactly once" -- $nbrc verify k2 --topology moore.el
expect 0 "layout           packed" -- $nbrc inspect k2
expect 0 '"layout": "packed"' -- $nbrc inspect k2 --json
expect 0 "rank 5 of 64" -- $nbrc inspect k2 --rank 5
expect 0 "latency_us" -- $nbrc simulate k2 --machine niagara --sizes 8
expect 0 "layout           per-rank" -- $nbrc inspect p2
# --segment: the same rank files with the size in the manifest (and the compile id); verify
# proves them and every segmented form (one per power of two of blocks below the longest
# staged message: 8 blocks here), inspect and simulate say how messages are cut; misuse is a
# usage error.
expect 0 "" -- $nbrc compile random.el --algo distance-halving --ranks-per-node 4 --ranks-per-socket 2 --segment 1K -q -o sg
expect 0 "in segments of 1 to 8 blocks: 4 forms proven" -- $nbrc verify sg --topology random.el
expect 0 "segments         up to 1024 bytes of whole blocks" -- $nbrc inspect sg
expect 0 '"segment_bytes": 1024' -- $nbrc inspect sg --json
expect 0 "segments         whole messages" -- $nbrc inspect p2
expect 0 '"segment_blocks": 4' -- $nbrc simulate sg --machine niagara --sizes 256 --json
expect 2 "--segment needs one size above 0" -- $nbrc compile random.el --segment 0 -o sg2
expect 2 "--segment needs one size above 0" -- $nbrc compile random.el --segment 1K,2K -o sg2
expect 2 "--segment is for one algorithm" -- $nbrc compile random.el --algo auto --machine niagara --segment 1K -o sg2
# --algo NAME-segSIZE (the names auto gives its segmented candidates) compiles what
# --algo NAME --segment SIZE does, byte for byte; not both, and naive has nothing to segment.
expect 0 "" -- $nbrc compile random.el --algo distance-halving-seg1K --ranks-per-node 4 --ranks-per-socket 2 -q -o sg3
if diff -r sg sg3 >/dev/null; then pass; else fail "--algo distance-halving-seg1K differs from --segment 1K"; fi
expect 2 "already sets --segment" -- $nbrc compile random.el --algo hierarchical-seg1K --segment 1K -o sg2
expect 2 "naive forwards nothing" -- $nbrc compile random.el --algo naive-seg1K -o sg2
expect 2 "--layout" -- $nbrc compile moore.el -o k3 --layout zip
expect 0 "" -- $nbrc compile random.el --algo auto --machine niagara --sizes 1,4K -q --layout packed -o ak
expect 0 "variants, each proven" -- $nbrc verify ak --topology random.el
test -e ak/naive/ranks.pack && pass || fail "auto --layout packed: variants not packed"
# nbr-load-probe reads an auto directory as libnbr loads it: every variant's part of the rank.
if [ -n "$bench" ]; then
  expect 0 "rank 0: read" -- "$(dirname "$bench")/nbr-load-probe" ak --ranks 0 --repeat 1
  expect 0 "ak: 64 ranks, auto:" -- "$(dirname "$bench")/nbr-load-probe" ak --ranks 0 --repeat 1
  # The benchmarks take configuration names too (without the options they do not offer).
  expect 0 "2 ranks, random graphs, kgroup-k2" -- $launch2 "$(dirname "$bench")/nbr-startup-bench" --degrees 1 \
    --algo kgroup-k2 --repeats 1
fi

# --algo auto: identical for 1 and 2 processes; verify proves every variant; inspect explains
# the bands; simulate runs each size's variant.
expect 0 "auto on niagara" -- $launch2 $nbrc compile random.el --algo auto --machine niagara --sizes 1,64,4K -o a2
expect 0 "" -- $nbrc compile random.el --algo auto --machine niagara --sizes 1,64,4K -q -o a1
if diff -r a1 a2 >/dev/null; then pass; else fail "auto: P=1 and P=2 outputs differ"; fi
expect 0 "variants, each proven" -- $nbrc verify a2 --topology random.el
expect 0 "allgather bands:" -- $nbrc inspect a2
expect 0 '"bands": [' -- $nbrc inspect a2 --json
# The predictions have a column per schedule: a candidate "same schedules" names as an earlier
# one's is not repeated there, every other simulated candidate is.
$nbrc inspect a2 | python3 -c '
import sys
text = sys.stdin.read().splitlines()
same = [l for l in text if l.startswith("same schedules")]
assert same, "no same schedules line"
aliases = {p.split(" = ")[0] for p in same[0].split(": ", 1)[1].split(", ")}
heads = [text[i + 1].split()[2:] for i, l in enumerate(text) if l.startswith("predicted latency (us), allgather ")]
assert heads and "naive" in heads[0] and not aliases & set(heads[0]), (aliases, heads)
' && pass || fail "inspect's predictions repeat a candidate whose schedules an earlier one has"
expect 1 "is an auto directory" -- $nbrc inspect a2 --rank 0
expect 0 "variant" -- $nbrc simulate a2 --machine niagara --sizes 1,4K --collective alltoall
# Another placement than the bands were chosen for: said, and each size still runs its band's variant.
expect 0 "note: the bands were chosen for niagara, placement block 40/node 20/socket" -- $nbrc simulate a2 \
  --machine niagara --ranks-per-node 8 --ranks-per-socket 4 --sizes 1
if $nbrc simulate a2 --machine niagara --sizes 1 | grep -q "bands were chosen"; then
  fail "simulate on the auto directory's own machine and placement notes a difference"
else pass; fi
expect 0 '"alltoallv_us": [' -- $nbrc inspect a2 --json
expect 0 "alltoallv (blocking, nonblocking): " -- $nbrc inspect a2
expect 0 "alltoallv, 64 ranks" -- $nbrc simulate a2 --machine niagara --sizes 1,4K --collective alltoallv
# --v-bytes: the v choice judged at the sizes bracketing the application's v-call sizes.
expect 0 "" -- $nbrc compile random.el --algo auto --machine niagara --sizes 1,64,4K --v-bytes 2:60 -q -o av
expect 0 "over 1 B to 64 B (--v-bytes 2:60)" -- $nbrc inspect av
expect 0 '"variable_bytes": [2, 60], "variable_bytes_source": "--v-bytes"' -- $nbrc inspect av --json
expect 0 '"variable_bytes": null' -- $nbrc inspect a2 --json
expect 2 "LO <= HI" -- $nbrc compile random.el --algo auto --machine niagara --v-bytes 64:1 -o a3
expect 2 "is not a size" -- $nbrc compile random.el --algo auto --machine niagara --v-bytes 1:x -o a3
expect 2 "needs --machine" -- $nbrc compile random.el --algo auto -o a3
expect 1 "must increase strictly" -- $nbrc compile random.el --algo auto --machine niagara --sizes 64,1 -o a3
# --candidates: only those tried, recorded; a selector matching nothing names the candidates.
expect 0 "" -- $nbrc compile random.el --algo auto --machine niagara --sizes 1,4K --candidates 'distance-halving,kgroup-k2*' -q -o ac
expect 0 "candidates: distance-halving, kgroup-k2* (--candidates; naive always)" -- $nbrc inspect ac
expect 0 '"candidate_selectors": ["distance-halving", "kgroup-k2*"]' -- $nbrc inspect ac --json
expect 1 "'kgroup-k9' matches no candidate (they are: naive, common-neighbor," -- \
  $nbrc compile random.el --algo auto --machine niagara --candidates kgroup-k9 -o a3
expect 2 "--candidates chooses among the candidates of --algo auto" -- $nbrc compile random.el --candidates naive -o a3
test ! -e a3 && pass || fail "a rejected auto compile left an output directory"

# inspect: text, one rank, JSON with the summary keys.
expect 0 "naive sends/rank" -- $nbrc inspect p2
expect 0 "rank 5 of 64" -- $nbrc inspect p2 --rank 5
expect 1 "out of range" -- $nbrc inspect p2 --rank 64
mkdir -p not_a_pattern
expect 1 "not_a_pattern: not a pattern directory (it has no manifest.pb)" -- $nbrc inspect not_a_pattern
json=$($nbrc inspect p2 --json --rank 3)
for key in '"ranks": 64' '"edges": 512' '"algorithm": "naive"' '"steps_max": 1' '"sends_per_rank": {"min": 8, "mean": 8, "max": 8}' '"recvs_per_rank"' '"rank": 3'; do
  grep -qF -- "$key" <<<"$json" && pass || fail "inspect --json lacks $key"
done
if command -v python3 >/dev/null; then
  python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["sends_per_rank"]["mean"]==8' <<<"$json" && pass || fail "inspect --json is not valid JSON"
fi

# common-neighbor: fewer sends than naive, same bytes for 1 and 2 processes, metrics in JSON.
expect 0 "common-neighbor" -- $launch2 $nbrc compile moore.el --algo common-neighbor --threshold 3 -o cn2
expect 0 "" -- $nbrc compile moore.el --algo common-neighbor --threshold 3 -o cn1 --quiet
if diff -r cn1 cn2 >/dev/null; then pass; else fail "common-neighbor P=1 and P=2 outputs differ"; fi
expect 0 "OK cn2" -- $nbrc verify cn2 --topology moore.el
json=$($nbrc inspect cn2 --json)
for key in '"algorithm": "common-neighbor"' '"threshold": "3"' '"naive_sends_per_rank": {"min": 8, "mean": 8, "max": 8}' '"friends"' '"pairings"' '"combined_edge_share"' '"iterations"'; do
  grep -qF -- "$key" <<<"$json" && pass || fail "inspect --json (common-neighbor) lacks $key"
done
python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["sends_per_rank"]["mean"] < d["naive_sends_per_rank"]["mean"], d' <<<"$json" && pass || fail "common-neighbor does not send less than naive"
expect 2 "" -- $nbrc compile moore.el --algo common-neighbor --threshold 0 -o bad

# Matrix Market input, rectangular, mapped to 16 ranks.
expect 0 "16 ranks" -- $launch2 $nbrc compile "$shared/matrices/D_10.mtx" --ranks 16 -o d10
expect 0 "OK d10" -- $nbrc verify d10 --topology "$shared/matrices/D_10.mtx" --ranks 16

# Bad inputs: file and line named, non-zero exit, nothing written.
printf '0 1\n1 2\n2 x\n' >bad.el
expect 1 "bad.el:3:" -- $launch2 $nbrc compile bad.el -o pbad
test ! -e pbad && pass || fail "failed compile left an output directory"
ls -a | grep -q '\.tmp-' && fail "failed compile left a temporary directory" || pass
printf '0 1\n1 9\n' >range.el
expect 1 "range.el:2: rank 9 out of range [0, 4)" -- $nbrc compile range.el --ranks 4 -o prange
printf '%%%%MatrixMarket matrix coordinate real general\n3 3 4\n1 1 1\n2 2 1\n' >trunc.mtx
expect 1 "2 entries found, 4 declared" -- $nbrc compile trunc.mtx -o ptrunc

# Corrupted and truncated pattern files are caught by verify, naming the file.
cp -r p2 pcorrupt
printf '\x01\x02\x03' | dd of=pcorrupt/rank-000007.pb bs=1 seek=5 conv=notrunc 2>/dev/null
expect 1 "rank-000007.pb: checksum" -- $nbrc verify pcorrupt
cp -r p2 ptrunc2
head -c 10 p2/manifest.pb >ptrunc2/manifest.pb
expect 1 "manifest.pb" -- $nbrc verify ptrunc2
# A string field that is not UTF-8: nbr's message naming the file, no log line of protobuf's.
cp -r p2 putf8
python3 -c '
import sys
path = sys.argv[1]
b = bytearray(open(path, "rb").read())
b[b.index(b"naive")] = 0xff
open(path, "wb").write(bytes(b))' putf8/manifest.pb
expect 1 "putf8/manifest.pb: not a valid manifest" -- $nbrc verify putf8
out=$($nbrc verify putf8 2>&1)
check '! grep -q libprotobuf <<<"$out"' "protobuf logged on a corrupted manifest: $out"

# simulate: presets, JSON results per size, baseline speedup, placement file, bad machines.
expect 0 "machine smpi-fat-tree-32c" -- $nbrc simulate cn2 --machine smpi-fat-tree-32c --sizes 4,1K --baseline p2
json=$($nbrc simulate cn2 --machine niagara --sizes 8,64K --collective alltoall --baseline p2 --json)
python3 -c '
import json, sys
d = json.load(sys.stdin)
r = d["results"]
assert [x["bytes"] for x in r] == [8, 65536], r
assert all(x["latency_us"] > 0 and x["baseline_latency_us"] > 0 for x in r), r
assert r[1]["latency_us"] > r[0]["latency_us"], r
assert d["collective"] == "alltoall" and d["machine"] == "niagara" and d["nodes"] == 2, d
# The lower bound: the larger of its parts, below both runs (achieved at most 1), bytes-bound at 64 KiB.
for x in r:
    b = x["lower_bound"]
    assert b["us"] == max(b["latency_us"], b["bytes_us"]) and b["latency_us"] > 0, b
    assert 0 < b["achieved"] <= 1 and 0 < b["baseline_achieved"] <= 1, b
    assert abs(b["achieved"] - b["us"] / x["per_call_us"]) < 1e-4 * b["achieved"], b  # 6 digits printed
assert r[1]["lower_bound"]["bytes_us"] > r[1]["lower_bound"]["latency_us"], r[1]
' <<<"$json" && pass || fail "simulate --json: $json"
expect 0 "lower bound per call" -- $nbrc simulate cn2 --machine niagara --sizes 8 --baseline p2
# --critical-path: the chain of operations ending at the last rank's completion.
json=$($nbrc simulate cn2 --machine niagara --sizes 8 --collective alltoall --critical-path --json)
python3 -c '
import json, sys
r = json.load(sys.stdin)["results"][0]
p = r["path"]
assert p["steps"][-1]["kind"] == "receive" and p["steps"][-1]["rank"] == r["critical_path"]["last_rank"], p
assert abs(p["steps"][-1]["end_us"] - r["latency_us"]) < 1e-4, p
assert abs(p["cpu_us"] + p["transfer_us"] + p["queued_us"] + p["other_us"] - r["latency_us"]) < 1e-4, p
' <<<"$json" && pass || fail "simulate --critical-path --json: $json"
expect 0 "critical path at 8 B: rank" -- $nbrc simulate cn2 --machine niagara --sizes 8 --critical-path
# The v-variant: a combined pattern's staged messages carry size headers and cost more.
v=$($nbrc simulate cn2 --machine niagara --sizes 8 --collective alltoallv --json)
f=$($nbrc simulate cn2 --machine niagara --sizes 8 --collective alltoall --json)
python3 -c '
import json, sys
v, f = (json.loads(t)["results"][0]["latency_us"] for t in sys.argv[1:3])
assert v > f, (v, f)
' "$v" "$f" && pass || fail "alltoallv not above alltoall: $v $f"
# The same pattern twice gives the same prediction (deterministic), also through a file machine.
$nbrc simulate p2 --machine niagara --print-machine >niagara.json
a=$($nbrc simulate p2 --machine niagara --sizes 4 --json | grep -o '"latency_us": [0-9.e+-]*' | head -1)
b=$($nbrc simulate p2 --machine niagara.json --sizes 4 --json | grep -o '"latency_us": [0-9.e+-]*' | head -1)
[ -n "$a" ] && [ "$a" = "$b" ] && pass || fail "preset and its printed file disagree: '$a' vs '$b'"
# Placement file: all 64 ranks on one socket makes every message a same-socket one.
expect 0 "socket 8 / 8 node 0 / 0 leaf 0 / 0 network 0 / 0" -- $nbrc simulate p2 --machine niagara --placement onesocket.txt --sizes 4
expect 2 "" -- $nbrc simulate p2 --machine niagara --placement onesocket.txt --ranks-per-node 4
expect 1 "rank 10 is not placed" -- $nbrc simulate p2 --machine niagara --placement short.txt
expect 1 "unknown machine 'nowhere'" -- $nbrc simulate p2 --machine nowhere
printf '{"format_version": 14}' >future.json
expect 1 "future.json: format_version 14 is newer" -- $nbrc simulate p2 --machine future.json
expect 2 "is not a size" -- $nbrc simulate p2 --machine niagara --sizes 4,x
expect 2 "a pattern directory is required" -- $nbrc simulate --machine niagara
expect 1 "checksum" -- $nbrc simulate pcorrupt --machine niagara
# Noise, skew and execution rules: a late rank's blast radius, detours slow the calls down,
# the same seed gives the same numbers, the step rule is never faster; bad values are usage errors.
json=$($nbrc simulate cn2 --machine niagara --sizes 8,64K --late 3:100 --baseline p2 --rank-finish --json)
python3 -c '
import json, sys
d = json.load(sys.stdin)
assert "rank 3 late by 100 us" in d["perturbation"], d["perturbation"]
for r in d["results"]:
    assert r["noise"]["blast_radius"] >= 1 and r["baseline_noise"]["blast_radius"] >= 1, r
assert d["results"][0]["noise"]["slowdown"] > 0, d  # at 8 B the delay is longer than the call
assert len(d["results"][0]["finish_us"]) == 64 and d["results"][0]["finish_us"][3] > 100, d
' <<<"$json" && pass || fail "simulate --late --json: $json"
noisy() { $nbrc simulate cn2 --machine niagara --sizes 8 --iterations 5 --seeds 2 --json "$@"; }
a=$(noisy --noise 1000:50:uniform --seed 3 --rule step)
b=$(noisy --noise 1000:50:uniform --seed 3 --rule step)
e=$(noisy --noise 1000:50:uniform --seed 3 --rule event)
python3 -c '
import json, sys
a, b, e = (json.loads(t)["results"][0] for t in sys.argv[1:4])
assert a["noise"] == b["noise"], (a, b)
assert a["noise"]["noise_fraction"] == 0.05 and a["noise"]["noisy_us"] >= a["noise"]["quiet_us"], a
assert a["noise"]["quiet_us"] >= e["noise"]["quiet_us"], (a, e)
' "$a" "$b" "$e" && pass || fail "simulate --noise: $a $e"
printf '5 20\n40 10\n' >detours.txt
expect 0 "detour trace (2 detours) on 1 rank(s)" -- $nbrc simulate cn2 --machine niagara --sizes 8 \
  --detour-trace detours.txt --noisy-ranks 0
printf '5 20\n10 10\n' >overlapping.txt
expect 2 "overlapping.txt:2: detours must be in increasing order" -- $nbrc simulate cn2 --machine niagara \
  --detour-trace overlapping.txt
expect 2 "detours longer than their period" -- $nbrc simulate cn2 --machine niagara --noise 1000:600:uniform
expect 2 "expected RANK:DELAY_US" -- $nbrc simulate cn2 --machine niagara --late 3
expect 2 "unknown distribution" -- $nbrc simulate cn2 --machine niagara --skew 5:gauss
expect 1 "late rank 64 is not below the pattern's 64 ranks" -- $nbrc simulate cn2 --machine niagara --late 64:5
expect 1 "single call" -- $nbrc simulate cn2 --machine niagara --iterations 2 --critical-path

fi

# The algorithms' options, configurations and compiles on 1 and 2 processes (part algorithms).
if [ "$part" = all ] || [ "$part" = algorithms ]; then
# distance-halving: a placement is required and recorded; the same bytes for 1 and 2 processes.
expect 2 "distance-halving needs a placement" -- $nbrc compile random.el --algo distance-halving -o dh
test ! -e dh && pass || fail "usage error left a directory"
expect 0 "" -- $launch2 $nbrc compile random.el --algo distance-halving --ranks-per-node 8 --ranks-per-socket 4 -o dh2 -q
expect 0 "" -- $nbrc compile random.el --algo distance-halving --ranks-per-node 8 --ranks-per-socket 4 -o dh1 -q
if diff -r dh1 dh2 >/dev/null; then pass; else fail "distance-halving: P=1 and P=2 outputs differ"; fi
expect 0 "each delivered exactly once" -- $nbrc verify dh2 --topology random.el
json=$($nbrc inspect dh2 --json)
for key in '"placement": "block 8/node 4/socket"' '"halving_steps": {"min": 4, "mean": 4, "max": 4}' '"agent_found_share"' \
  '"sends_off_socket"' '"sends_intra_socket"' '"origins_served"'; do
  grep -qF -- "$key" <<<"$json" && pass || fail "inspect --json (distance-halving) lacks $key"
done
expect 0 "" -- $nbrc compile random.el --algo distance-halving --placement onesocket.txt -o dhfile -q
# An auto directory chosen on a placement file is simulated on it unless told otherwise.
expect 0 "" -- $nbrc compile random.el --algo auto --candidates naive --machine niagara --placement onesocket.txt \
  --sizes 4 -o afile -q
expect 0 "placement file onesocket.txt" -- $nbrc simulate afile --machine niagara --sizes 4
if $nbrc simulate afile --machine niagara --sizes 4 | grep -q "bands were chosen"; then
  fail "simulate on the auto directory's own placement file notes a difference"
else pass; fi
expect 0 "bands were chosen for niagara, placement file onesocket.txt" -- $nbrc simulate afile --machine niagara \
  --ranks-per-node 8 --sizes 4
grep -qF '"halving_steps": {"min": 0, "mean": 0, "max": 0}' <<<"$($nbrc inspect dhfile --json)" &&
  pass || fail "one socket: no halving expected"
expect 2 "" -- $nbrc compile random.el --algo distance-halving --placement onesocket.txt --ranks-per-node 4 -o x
expect 1 "rank 10 is not placed" -- $nbrc compile random.el --algo distance-halving --placement short.txt -o x
test ! -e x && pass || fail "failed compile left a directory"

# kgroup: agnostic and topology-aware, the same bytes for 1 and 2 processes, metrics, limits.
$nbrc gen moore --ranks 256 --dims 2 --radius 2 -o moore2.el >/dev/null
expect 0 "(kgroup)" -- $launch2 $nbrc compile moore2.el --algo kgroup --k 3 -o kg2
expect 0 "" -- $nbrc compile moore2.el --algo kgroup --k 3 -o kg1 -q
if diff -r kg1 kg2 >/dev/null; then pass; else fail "kgroup: P=1 and P=2 outputs differ"; fi
expect 0 "each delivered exactly once" -- $nbrc verify kg2 --topology moore2.el
json=$($nbrc inspect kg2 --json)
for key in '"algorithm": "kgroup"' '"k": "3"' '"threshold": "3"' '"topology_aware": "0"' '"hyperedges"' \
  '"hyperedges_held"' '"group_size"' '"groups_joined"' '"matching_rounds"' '"combined_edge_share"'; do
  grep -qF -- "$key" <<<"$json" && pass || fail "inspect --json (kgroup) lacks $key"
done
grep -qF '"metrics": {"friends": ' <<<"$($nbrc inspect kg2 --rank 7 --json)" && pass ||
  fail "inspect --rank --json lacks the rank's metrics"
expect 2 "kgroup --topology-aware needs a placement" -- $nbrc compile moore2.el --algo kgroup --topology-aware -o x
expect 0 "" -- $launch2 $nbrc compile moore2.el --algo kgroup --k 4 --threshold 2 --topology-aware --ranks-per-node 32 -o kga -q
grep -qF '"placement": "block 32/node 32/socket"' <<<"$($nbrc inspect kga --json)" && pass ||
  fail "kgroup --topology-aware: placement not recorded"
expect 0 "each delivered exactly once" -- $nbrc verify kga --topology moore2.el
expect 0 "the hyperedge cap (--max-hyperedges 5) bound on 256 of 256 ranks" -- \
  $nbrc compile moore2.el --algo kgroup --k 3 --max-hyperedges 5 -o kgcap -q
expect 0 "each delivered exactly once" -- $nbrc verify kgcap --topology moore2.el
expect 2 "" -- $nbrc compile moore2.el --algo kgroup --k 1 -o x
expect 2 "" -- $nbrc compile moore2.el --algo kgroup --max-hyperedges 0 -o x

# hierarchical in Bruck rounds: the configuration recorded, the same bytes for 1 and 2
# processes, a bad radix or configuration name refused.
expect 0 "" -- $launch2 $nbrc compile moore2.el --algo hierarchical --intra-node bruck --radix 3 --ranks-per-node 8 \
  -o hb2 -q
expect 0 "" -- $nbrc compile moore2.el --algo hierarchical --intra-node bruck --radix 3 --ranks-per-node 8 -o hb1 -q
if diff -r hb1 hb2 >/dev/null; then pass; else fail "hierarchical bruck: P=1 and P=2 outputs differ"; fi
json=$($nbrc inspect hb2 --json)
for key in '"intra_node": "bruck"' '"radix": "3"'; do
  grep -qF -- "$key" <<<"$json" && pass || fail "inspect --json (hierarchical bruck) lacks $key"
done
expect 0 "OK" -- $nbrc verify hb2
expect 2 "" -- $nbrc compile moore2.el --algo hierarchical --intra-node bruck --radix 1 --ranks-per-node 8 -o x
expect 2 "" -- $nbrc compile moore2.el --algo hierarchical --intra-node tree --ranks-per-node 8 -o x
test ! -e x && pass || fail "failed compile left a directory"

# hierarchical along a cube of nodes: likewise.
expect 0 "" -- $launch2 $nbrc compile moore2.el --algo hierarchical --across-nodes cube --node-radix 3 \
  --ranks-per-node 4 -o hc2 -q
expect 0 "" -- $nbrc compile moore2.el --algo hierarchical --across-nodes cube --node-radix 3 --ranks-per-node 4 -o hc1 -q
if diff -r hc1 hc2 >/dev/null; then pass; else fail "hierarchical cube: P=1 and P=2 outputs differ"; fi
json=$($nbrc inspect hc2 --json)
for key in '"across_nodes": "cube"' '"node_radix": "3"'; do
  grep -qF -- "$key" <<<"$json" && pass || fail "inspect --json (hierarchical cube) lacks $key"
done
expect 0 "OK" -- $nbrc verify hc2 --topology moore2.el
expect 2 "must be 0 or at least 2" -- $nbrc compile moore2.el --algo hierarchical --across-nodes cube --node-radix 1 \
  --ranks-per-node 8 -o x
expect 2 "" -- $nbrc compile moore2.el --algo hierarchical --across-nodes ring --ranks-per-node 8 -o x
test ! -e x && pass || fail "failed compile left a directory"
# Configuration names: nbrc candidates lists auto's menu by the names --algo takes; a name
# compiles the same bytes as its options; it fixes what it spells.
menu=$($nbrc candidates --ranks 1024 --ranks-per-node 40 --ranks-per-socket 20)
[ "$(wc -l <<<"$menu")" = 22 ] && pass || fail "candidates on nodes of 40: $(tr '\n' ' ' <<<"$menu")"
grep -qx "hierarchical-cube-k0-bruck-r7" <<<"$menu" && pass || fail "candidates on nodes of 40 lack radix 7"
[ "$($nbrc candidates --ranks 64 --ranks-per-node 8 | wc -l)" = 17 ] && pass || fail "candidates on nodes of 8"
[ "$($nbrc candidates --ranks 64 --machine niagara)" = "$($nbrc candidates --ranks 64 --ranks-per-node 40 \
  --ranks-per-socket 20)" ] && pass || fail "candidates: --machine niagara is not its block placement"
expect 0 '"name": "kgroup-k4-aware", "algorithm": "kgroup", "parameters": {"k": "4"' -- \
  $nbrc candidates --ranks 64 --ranks-per-node 8 --json
expect 2 "give a placement" -- $nbrc candidates --ranks 64
expect 2 "is above --max-ranks 16777216" -- $nbrc candidates --ranks 4000000000 --ranks-per-node 40
expect 0 "" -- $nbrc compile moore2.el --algo hierarchical-cube-k3-bruck-r3 --ranks-per-node 4 -o hn -q
expect 0 "" -- $nbrc compile moore2.el --algo hierarchical --across-nodes cube --node-radix 3 --intra-node bruck \
  --radix 3 --ranks-per-node 4 -o ho -q
if diff -r hn ho >/dev/null; then pass; else fail "hierarchical-cube-k3-bruck-r3 differs from its options"; fi
expect 0 "configuration    hierarchical-cube-k3-bruck-r3 (--algo)" -- $nbrc inspect ho
grep -qx "hierarchical-socket-bruck-r5" <<<"$menu" && pass || fail "candidates on nodes of 40 lack lanes by socket"
expect 0 "" -- $nbrc compile moore2.el --algo hierarchical-socket-bruck-r2 --ranks-per-node 8 --ranks-per-socket 4 \
  -o hs -q
expect 0 "" -- $nbrc compile moore2.el --algo hierarchical --aggregate-by socket --intra-node bruck --radix 2 \
  --ranks-per-node 8 --ranks-per-socket 4 -o ht -q
if diff -r hs ht >/dev/null; then pass; else fail "hierarchical-socket-bruck-r2 differs from its options"; fi
expect 0 "aggregate_by=socket" -- $nbrc inspect ht
expect 0 "OK" -- $nbrc verify ht --topology moore2.el
expect 2 "hierarchical-socket already sets --aggregate-by" -- $nbrc compile moore2.el --algo hierarchical-socket \
  --aggregate-by node --ranks-per-node 8 -o x
expect 0 "" -- $nbrc compile moore2.el --algo kgroup-k4-aware --ranks-per-node 32 -o kn -q
expect 0 "" -- $nbrc compile moore2.el --algo kgroup --k 4 --topology-aware --ranks-per-node 32 -o ko -q
if diff -r kn ko >/dev/null; then pass; else fail "kgroup-k4-aware differs from its options"; fi
expect 0 '"configuration": "kgroup-k4-aware"' -- $nbrc inspect ko --json
expect 2 "hierarchical-bruck-r3 already sets --radix" -- $nbrc compile moore2.el --algo hierarchical-bruck-r3 \
  --radix 4 --ranks-per-node 8 -o x
expect 2 "the Bruck radix must be 2 to" -- $nbrc compile moore2.el --algo hierarchical-bruck-r1 --ranks-per-node 8 -o x
expect 2 "or a configuration kgroup-kK[-aware]" -- $nbrc compile moore2.el --algo kgroup-aware -o x
test ! -e x && pass || fail "failed compile left a directory"
# Radices from the machine model: needs --machine; the note says what was chosen; the pattern
# is proven and the same for 1 and 2 compiler processes.
expect 2 "needs --machine" -- $nbrc compile random.el --algo hierarchical --radix machine --ranks-per-node 8 -o x
expect 2 "or machine" -- $nbrc compile random.el --algo hierarchical --node-radix cube --ranks-per-node 8 -o x
expect 0 "radices from the machine model (niagara, 8 B per block)" -- $launch2 $nbrc compile random.el \
  --algo hierarchical --radix machine --across-nodes cube --node-radix machine --machine niagara --ranks-per-node 8 \
  --ranks-per-socket 4 -o hm2 -q
expect 0 "across 8 nodes" -- $nbrc compile random.el --algo hierarchical --radix machine --across-nodes cube \
  --node-radix machine --machine niagara --ranks-per-node 8 --ranks-per-socket 4 -o hm1 -q
if diff -r hm1 hm2 >/dev/null; then pass; else fail "hierarchical --radix machine: P=1 and P=2 outputs differ"; fi
expect 0 "OK" -- $nbrc verify hm2 --topology random.el

fi

if [ "$part" = all ] || [ "$part" = calibrate ]; then
# nbr-calibrate: a machine file nbrc simulate reads; --base keeps the other classes.
expect 0 "ratio error (the least margin nbrc compile --algo auto acts on: between two sizes the larger" -- \
  $launch2 $calibrate --sizes 1,2K \
  --check-sizes 16,2K --repeat 3 --ranks-per-node 4 -o cal.json
expect 0 "machine calibrated, placement block 4/node 4/socket" -- $nbrc simulate p2 --machine cal.json --sizes 4
# A new machine file is written in the newest format (12): the 2 KiB segment with the CPU
# overheads measured there, every segment above the eager limit with its byte time of streams
# that cross (Open MPI's limit is 256 B, MPICH's 8 KiB), the copy cost per block
# and per byte at blocks of 512 B and 8 KiB, a per-pair eager buffer where the exchanges showed
# one, the ratio error of the pattern checks, at each size checked.
grep -q '"format_version": 12,' cal.json && grep -q '"call_overhead_us"' cal.json &&
  grep -q '"post_recv_overhead_us"' cal.json && grep -q '"ratio_error"' cal.json && pass ||
  fail "calibrated format-12 file or its costs missing: $(cat cal.json)"
python3 -c 'import json, sys
s = json.load(open("cal.json"))["socket"]
above = [x for x in s["segments"] if int(x["from_bytes"]) > int(s["eager_limit_bytes"])]
sys.exit(0 if above and all(x.get("exchange_byte_time_ns", -1) >= 0 for x in above) else 1)' &&
  pass || fail "calibrated file without the byte time of streams that cross above its eager limit: $(cat cal.json)"
python3 -c 'import json, sys
m = json.load(open("cal.json"))
r = m["copy_rates"]
sys.exit(0 if [int(x["block_bytes"]) for x in r] == [512, 8192] and r[0].get("ns_per_byte", 0) == m["copy_ns_per_byte"] else 1)' &&
  pass || fail "calibrated file without its copy rates at 512 B and 8 KiB blocks: $(cat cal.json)"
python3 -c 'import json, sys
m = json.load(open("cal.json"))
p = m["ratio_errors"]
sys.exit(0 if [int(x["bytes"]) for x in p] == [16, 2048] and max(x.get("error", 0) for x in p) == m["ratio_error"] else 1)' &&
  pass || fail "calibrated file without its ratio error per checked size: $(cat cal.json)"
expect 2 "--check-sizes" -- $launch2 $calibrate --check-sizes 4M --sizes 8 -o x.json
python3 -c 'import json, sys
m = json.load(open("cal.json"))
s = [s for s in m["socket"]["segments"] if s["from_bytes"] == "2048"]
sys.exit(0 if s and s[0]["send_overhead_us"] > 0 and s[0]["recv_overhead_us"] > 0 and m["copy_block_ns"] >= 0 else 1)' &&
  pass || fail "calibrated 2 KiB segment without its overheads, or no copy cost per block: $(cat cal.json)"
python3 -c 'import json, sys
s = json.load(open("cal.json"))["socket"]
sys.exit(0 if "eager_buffer_bytes" not in s or int(s["eager_buffer_bytes"]) > 0 else 1)' &&
  pass || fail "calibrated file with an empty eager buffer: $(cat cal.json)"
# 2 KiB above the eager limit found: the sender's completion was measured and fitted.
python3 -c 'import json, sys
s = json.load(open("cal.json"))["socket"]
sys.exit(0 if int(s.get("eager_limit_bytes", 1 << 62)) >= 2048 or "ack_latency_us" in s else 1)' &&
  pass || fail "calibrated file without the acknowledgment above its eager limit: $(cat cal.json)"
expect 0 "predicted" -- $launch2 $calibrate --class network --base cal.json --sizes 8 --check-sizes none --repeat 3 \
  --passes 1 -o cal2.json
grep -q '"network: measured by nbr-calibrate' cal2.json && grep -q '"socket: measured by nbr-calibrate' cal2.json &&
  pass || fail "calibrated classes not recorded: $(cat cal2.json)"
python3 -c 'import json, sys
a, b = json.load(open("cal.json")), json.load(open("cal2.json"))
sys.exit(0 if a["ratio_error"] == b["ratio_error"] and a["ratio_errors"] == b["ratio_errors"] else 1)' &&
  pass || fail "a class calibrated without pattern checks changed the ratio error: $(cat cal2.json)"
# --recheck: the pattern checks alone against the file's model, their errors joined to its own
# (at each size at least the file's), the fit untouched.
expect 0 "pattern checks" -- $launch2 $calibrate --recheck --base cal.json --check-sizes 16,2K --repeat 3 --passes 1 \
  -o cal3.json
python3 -c 'import json, sys
a, b = json.load(open("cal.json")), json.load(open("cal3.json"))
pa = {x["bytes"]: x.get("error", 0) for x in a["ratio_errors"]}
pb = {x["bytes"]: x.get("error", 0) for x in b["ratio_errors"]}
same = all(a[k] == b[k] for k in a if k not in ("ratio_error", "ratio_errors", "sources"))
sys.exit(0 if same and pa.keys() == pb.keys() and all(pb[k] >= pa[k] for k in pa) and
         any("--recheck" in x for x in b["sources"]) else 1)' &&
  pass || fail "a recheck changed the fit or lost an error: $(cat cal3.json)"
expect 1 "--recheck needs a --base machine" -- $launch2 $calibrate --recheck --check-sizes 16
expect 1 "--recheck needs --check-sizes" -- $launch2 $calibrate --recheck --base cal.json --check-sizes none
expect 1 "needs a --base machine with nodes_per_switch" -- $launch2 $calibrate --class leaf --sizes 8
expect 1 "nowhere" -- $launch2 $calibrate --base nowhere --sizes 8
expect 2 "sizes must lie in" -- $launch2 $calibrate --sizes 0
expect 1 "needs two ranks" -- $calibrate --sizes 8
compgen -G ".cal.json.tmp-*" >/dev/null && fail "calibrate left a temporary file" || pass
# nbr-bench --calibrate: the same machine file, measured in the launch that is timed.
if [ -n "$bench" ]; then
  printf '# ranks 2\n0 1\n1 0\n' >two.el
  expect 0 "" -- $nbrc compile two.el -q -o two
  # The calibration at the two sizes the state probes need (1 B, 4 KiB), not nbr-calibrate's 23.
  expect 0 "all variants correct" -- $launch2 $bench --patterns two --naive two --sizes 4,64 --iters 20 --only native \
    --calibrate bench-cal.json --calibrate-sizes 1,4K --calibrate-repeat 3 --json bench-cal-times.json
  grep -q '"socket: measured by nbr-bench --calibrate: ' bench-cal.json && grep -q '"call_overhead_us"' bench-cal.json &&
    pass || fail "nbr-bench --calibrate: machine file or its costs missing: $(cat bench-cal.json)"
  # The state probed at the calibration and before and after each size's timing (1 B and 4 KiB).
  python3 - bench-cal-times.json <<'PY' && pass || fail "nbr-bench --calibrate: state probes missing: $(cat bench-cal-times.json)"
import json, sys
state = json.load(open(sys.argv[1]))["state_one_way_us"]
assert state["probe_bytes"] == [1, 4096], state
assert len(state["calibration"]) == 2 and all(t > 0 for t in state["calibration"]), state
assert [s["bytes"] for s in state["sizes"]] == [4, 64], state
assert all(len(s[k]) == 2 and all(t > 0 for t in s[k]) for s in state["sizes"] for k in ("before", "after")), state
PY
  expect 0 "machine calibrated" -- $nbrc simulate two --machine bench-cal.json --sizes 4
  # nbr-bench --measure: nbr-measured's warm-up goes on until its trials decide (none asked for
  # here), so its timed call runs the choice, at every size.
  (for i in $(seq 8); do echo "0 1"; echo "1 0"; done) | { echo "# ranks 2"; cat; } >pe8.el
  expect 0 "" -- $nbrc compile pe8.el --algo auto --machine niagara --sizes 8 -q -o pe8
  out=$($launch2 $bench --patterns pe8 --measure --warmup 0 --iters 1 --rounds 1 --sizes 8,64 --only nbr-measured 2>&1)
  [ "$(grep -c "^# measured: allgather blocking .*(measured; trials [1-9]" <<<"$out")" -eq 2 ] &&
    ! grep -q "still in trials" <<<"$out" && pass || fail "nbr-bench --measure: trials not run to their end: $out"
  expect 1 "needs two ranks" -- $bench --patterns p1 --sizes 4 --iters 20 --calibrate one.json
  expect 2 "--calibrate-sizes: sizes must lie in 1 B .. 1 GiB" -- $bench --patterns p1 --calibrate one.json \
    --calibrate-sizes 1,2G
  expect 2 "--calibrate-sizes: 'x' is not a size" -- $bench --patterns p1 --calibrate one.json --calibrate-sizes x
  test ! -e one.json && ! compgen -G ".bench-cal.json.tmp-*" >/dev/null && pass ||
    fail "nbr-bench --calibrate left a file behind"
fi

fi

if [ "$part" = all ] || [ "$part" = compile ]; then
# A foreign directory is never replaced.
mkdir keep && echo data >keep/file
expect 1 "not an nbr pattern directory" -- $nbrc compile moore.el -o keep
test -f keep/file && pass || fail "foreign directory was replaced"
# ... and refused before the work, not after it (auto: before any candidate is built).
out=$($nbrc compile moore.el --algo auto --machine niagara --sizes 8 -o keep/file 2>&1)
[ $? -eq 1 ] && grep -q "keep/file: exists and is not an nbr pattern directory" <<<"$out" &&
  ! grep -q "built" <<<"$out" && pass || fail "a foreign output refused only after the work: $out"

# Sizes a file declares are checked against the file and --max-ranks before anything is
# allocated: each input fails with its file and line under a 256 MiB address-space limit (not
# in sanitized builds, whose shadow memory alone needs more), and leaves no output behind.
printf '%%%%MatrixMarket matrix coordinate pattern general\n2000000000 2000000000 1\n1 2\n' >rows.mtx
printf '%%%%MatrixMarket matrix coordinate pattern general\n3 3 4000000000\n1 2\n2 3\n' >entries.mtx
printf '0 1\n1 4294967294\n' >far.el
printf '# ranks 4000000000\n0 1\n' >declared.el
limited() { if [ -n "${NBR_SANITIZED:-}" ]; then "$@"; else (ulimit -v 262144 && "$@"); fi; }
expect 1 "rows.mtx:2: 2000000000 rows, one rank per row" -- limited $nbrc compile rows.mtx -o big1
expect 1 "entries.mtx:2: declares 4000000000 entries" -- limited $nbrc compile entries.mtx -o big2
expect 1 "far.el:2: rank 4294967294" -- limited $nbrc compile far.el -o big3
expect 1 "declared.el:1: 4000000000 ranks exceed the limit of 16777216" -- limited $nbrc compile declared.el -o big4
expect 1 "exceed the limit of 8" -- limited $nbrc compile moore.el --max-ranks 8 -o big5
expect 0 "" -- limited $nbrc compile rows.mtx --ranks 4 -q -o small
# A limit raised beyond what memory holds: a clear message, not "std::bad_alloc" (not in
# sanitized builds, which cannot run under a memory limit: there it would really compile).
printf '# ranks 90000000\n0 1\n' >huge.el
if [ -z "${NBR_SANITIZED:-}" ]; then
  expect 1 "huge.el: out of memory: the input needs more memory" -- limited $nbrc compile huge.el --max-ranks 100000000 -o big6
fi
test ! -e big1 && test ! -e big3 && test ! -e big5 && test ! -e big6 && pass || fail "a rejected input left an output directory"

fi

finish "nbrc_cli ($part)"
