#!/usr/bin/env bash
# The comparison must be able to fail: flip one checksum of the arena golden
# and the sleep golden's tick in a copy of the goldens, and check that the
# matrix reports exactly those (first divergent tick, wrong sleep tick) and
# fails. Uses the golden target's existing outputs (run by `make crosscheck`).
# usage: XC_BUILD=dir selftest.sh TARGET
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
target=${1:?}
tmp=${XC_BUILD:?}/selftest-goldens
rm -rf "$tmp"
cp -r "$here/goldens" "$tmp"
awk '$1 == "100" { $2 = ($2 == "0000000000000000") ? "0000000000000001" : "0000000000000000" } { print }' \
    "$here/goldens/arena.sum" >"$tmp/arena.sum"
awk '$1 == "sleep" { $2 = $2 + 1 } { print }' "$here/goldens/sleep.sum" >"$tmp/sleep.sum"
want_sleep=$(awk '$1 == "sleep" { print $2 }' "$tmp/sleep.sum")
if out=$(XC_GOLDENS=$tmp XC_JOBS='arena sleep' bash "$here/matrix.sh" "$target|self-test|full|skip:-" 2>&1); then
    echo "crosscheck self-test FAILED: a corrupted golden was accepted" >&2
    exit 1
fi
row=$(grep '^| self-test' <<<"$out")
if ! grep -q '| @100 |' <<<"$row" || ! grep -q "(golden $want_sleep)" <<<"$row"; then
    echo "crosscheck self-test FAILED: expected @100 and a sleep mismatch, got: $row" >&2
    exit 1
fi
rm -rf "$tmp"
echo "crosscheck: self-test OK (a flipped golden checksum at tick 100 is reported as @100, a wrong sleep tick as such)"
