#!/usr/bin/env bash
# Write tools/crosscheck/goldens/JOB.sum from the golden target's runner
# outputs (every tick, made by `make goldens`, mk/cross.mk) and print a summary.
# usage: XC_BUILD=dir XC_JOBS='job ...' XC_INPUT='...' XC_SLEEP='...' XC_HINGES_SLEEP='...' goldens.sh TARGET DESC
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
goldens=${XC_GOLDENS:-$here/goldens}
target=${1:?}
desc=${2:?}
out=${XC_BUILD:?}/out/$target
read -r -a jobs <<<"${XC_JOBS:?}"
mkdir -p "$goldens"

status=0
printf '%-16s %6s  %-16s  %-22s  %s\n' job ticks "final checksum" sleep snapshot
for j in "${jobs[@]}"; do
    o=$out/$j.out
    case $j in
    arena+input) what="tools/scenes/arena.scene with scripted inputs: ${XC_INPUT:-}" ;;
    sleep) what="stepped until every body sleeps: ${XC_SLEEP:-}" ;;
    hinges+sleep) what="stepped until every body sleeps (golden: sleep tick + checksum): ${XC_HINGES_SLEEP:-}" ;;
    replay) what="tools/crosscheck/arena.lsr re-simulated (must equal its recorded checksums)" ;;
    replay_soccer) what="tools/crosscheck/soccer.lsr (4 soccer bots, rollback mode) re-simulated (must equal its recorded checksums)" ;;
    *+synctest) what="SyncTest on tools/scenes/${j%+synctest}.scene (rollback k = 1..8 every tick), first-simulation stream" ;;
    *) what="tools/scenes/$j.scene, every tick" ;;
    esac
    if ! grep -q '^end ' "$o"; then
        echo "goldens: $j: the $target run did not finish, golden not written:" >&2
        grep -vE '^c ' "$o" | tail -5 >&2 || true
        status=1
        continue
    fi
    if ! grep -qx 'exit 0' "$o"; then
        # The stream is still the golden; the failed check (snapshot, sleep) is reported.
        echo "goldens: $j: warning: the run reported a failure: $(grep -E '^(snap|sleep|exit)' "$o" | tr '\n' ' ')" >&2
        status=1
    fi
    tmp=$goldens/$j.sum.tmp
    {
        echo "# crosscheck golden v1 (SPEC.md §18): TICK CHECKSUM per tick"
        echo "# job $j: $what"
        echo "# made by \`make goldens\` with $desc"
        awk '$1 == "c" { print $2, $3 } $1 == "sleep" { print }' "$o"
    } >"$tmp"
    mv "$tmp" "$goldens/$j.sum"
    ticks=$(awk '$1 == "c" { n = $2 } END { print n }' "$o")
    final=$(awk '$1 == "c" { s = $3 } END { print s }' "$o")
    sl=$(awk '$1 == "sleep" { print "tick " $2 }' "$o")
    sn=$(awk '$1 == "snap" { print $3 " at " $2 }' "$o")
    printf '%-16s %6s  %-16s  %-22s  %s\n' "$j" "$ticks" "$final" "${sl:--}" "${sn:--}"
done
# Goldens of jobs that no longer exist (a scene was removed) go too.
for f in "$goldens"/*.sum; do
    [ -e "$f" ] || continue
    j=$(basename "$f" .sum)
    keep=0
    for k in "${jobs[@]}"; do [ "$k" = "$j" ] && keep=1; done
    if [ $keep = 0 ]; then
        echo "goldens: removing $f (no such job)"
        rm -f "$f"
    fi
done
[ $status = 0 ] && echo "goldens: wrote ${#jobs[@]} files to ${goldens#"$PWD"/}"
exit $status
