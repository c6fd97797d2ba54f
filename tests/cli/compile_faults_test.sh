#!/usr/bin/env bash
# Faults during `nbrc compile`: a compiler killed while writing leaves no pattern directory
# (and an existing one intact), the next compile removes what the killed one left, and a full
# disk gives a clear error with nothing partial left behind.
# usage: compile_faults_test.sh NBRC
set -u
nbrc=$1
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
cd "$work" || exit 1

# 65536 ranks: writing the rank files takes about a second, long enough to kill it midway.
$nbrc gen moore --ranks 65536 --dims 2 --radius 1 -o big.el >/dev/null || exit 1
$nbrc gen moore --ranks 64 --dims 2 --radius 1 -o small.el >/dev/null || exit 1

# kill_while_writing OUT [LAYOUT]: starts a compile of big.el to OUT and kills it (SIGKILL) as
# soon as its temporary directory holds rank files (per-rank, the default here) or exists
# (packed: ranks.pack is written in one go after the build). Fails the test if the compile
# ends first.
kill_while_writing() {
  local out=$1 layout=${2:-per-rank} pid i glob
  glob=".$out.tmp-*/rank-0*.pb"
  [ "$layout" = packed ] && glob=".$out.tmp-*"
  $nbrc compile big.el -o "$out" -q --layout "$layout" &
  pid=$!
  for i in $(seq 1 3000); do
    if compgen -G "$glob" >/dev/null; then break; fi
    sleep 0.01
  done
  if kill -9 "$pid" 2>/dev/null; then
    wait "$pid" 2>/dev/null
    pass
  else
    fail "the compile to $out ended before it could be killed"
  fi
}

# Killed while writing a new pattern: no directory named like the output, no manifest anywhere.
kill_while_writing fresh
test ! -e fresh && pass || fail "a killed compile left fresh/"
leftovers=$(compgen -G ".fresh.tmp-*" | wc -l)
[ "$leftovers" -eq 1 ] && pass || fail "expected one hidden temporary directory, found $leftovers"
compgen -G ".fresh.tmp-*/manifest.pb" >/dev/null && fail "a killed compile wrote a manifest" || pass

# The next compile to the same output removes the leftover and succeeds.
out=$($nbrc compile small.el -o fresh -q 2>&1)
[ $? -eq 0 ] && pass || fail "compile after a killed one failed: $out"
grep -qF "removed 1 temporary directory left by interrupted compiles" <<<"$out" && pass ||
  fail "no word of the removed leftover: $out"
[ "$(compgen -G ".fresh.tmp-*" | wc -l)" -eq 0 ] && pass || fail "the leftover is still there"
$nbrc verify fresh --topology small.el >/dev/null && pass || fail "the new pattern does not verify"

# Killed while replacing an existing pattern: the old one stays whole.
kill_while_writing fresh
$nbrc verify fresh --topology small.el >/dev/null && pass || fail "a killed compile damaged the old pattern"

# The packed layout (the default at this size): killed, it leaves no pattern either, and the
# next compile cleans up and writes a whole one.
kill_while_writing packed packed
test ! -e packed && pass || fail "a killed packed compile left packed/"
compgen -G ".packed.tmp-*/manifest.pb" >/dev/null && fail "a killed packed compile wrote a manifest" || pass
$nbrc compile small.el -o packed -q --layout packed 2>/dev/null && pass || fail "compile after a killed packed one failed"
[ "$(ls -A packed)" = "$(printf 'manifest.pb\nranks.pack')" ] && pass || fail "packed/ holds: $(ls -A packed)"

# A leftover of a process that still runs is not touched (here: this shell's own pid).
mkdir ".keep.tmp-$(hostname)-$$-abcdef"
$nbrc compile small.el -o keep -q && pass || fail "compile next to a live process's directory failed"
test -d ".keep.tmp-$(hostname)-$$-abcdef" && pass || fail "a live process's temporary directory was removed"

# A full disk: a 1 MiB tmpfs in a private mount namespace (skipped where the kernel or the
# container does not allow one). The error names the file and the reason; nothing is left.
mkdir disk
if unshare -rm true 2>/dev/null; then
  out=$(unshare -rm sh -c "mount -t tmpfs -o size=1m tmpfs disk && '$nbrc' compile small.el -o disk/ok -q &&
        '$nbrc' compile big.el -o disk/p -q; echo \"exit \$?\"; ls -A disk" 2>&1)
  grep -q "^exit 1$" <<<"$out" && pass || fail "compile onto a full disk did not exit 1: $out"
  grep -qE "disk/\.p\.tmp-.*: write failed: No space left on device" <<<"$out" && pass ||
    fail "no clear full-disk message: $out"
  [ "$(sed -n '/^exit/,$p' <<<"$out" | tail -n +2)" = "ok" ] && pass || fail "a full disk left files behind: $out"
else
  echo "compile_faults: no private tmpfs here (unshare -rm refused); full-disk case skipped"
fi

finish compile_faults
