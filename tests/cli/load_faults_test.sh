#!/usr/bin/env bash
# Load faults seen from an application (examples/replay_check, 4 ranks): a rank file nobody may
# read fails the load on every rank, rank 0 naming the rank, the file and the system's reason.
# Run as root, where permissions do not apply, the file is given to an unmapped user and the
# application runs in a user namespace (skipped where unshare -r is refused).
# usage: load_faults_test.sh NBRC REPLAY_CHECK "LAUNCHER_FOR_4_PROCESSES"
set -u
nbrc=$1
replay_check=$2
launch4=$3
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
cd "$work" || exit 1
$nbrc gen random --ranks 4 --density 0.6 --seed 4 -o t.el >/dev/null || exit 1
$nbrc compile t.el --algo common-neighbor -q -o p || exit 1
chmod 000 p/rank-000002.pb
prefix=()
if [ "$(id -u)" -eq 0 ]; then
  if ! unshare -r true 2>/dev/null; then
    echo "load_faults: root without user namespaces: permissions cannot be tested here; skipped"
    exit 0
  fi
  chown 12345:12345 p/rank-000002.pb
  prefix=(unshare -r)
fi
# shellcheck disable=SC2086
out=$("${prefix[@]}" $launch4 "$replay_check" p 2>&1)
rc=$?
expected="replay_check: another rank failed: rank 2 failed: p/rank-000002.pb: cannot open file: Permission denied"
check '[ "$rc" -ne 0 ] && grep -qF "$expected" <<<"$out"' "exit $rc, expected a message '$expected': $out"
finish load_faults
