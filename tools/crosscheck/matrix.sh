#!/usr/bin/env bash
# Print the crosscheck matrix (target x scene -> OK / first divergent tick) from
# the runner outputs under $XC_BUILD/out and the goldens; exit 1 unless all OK.
# With XC_RESULTS=FILE it also writes the matrix to FILE (see the end).
# usage: XC_BUILD=dir XC_JOBS='job ...' matrix.sh 'ID|DESCRIPTION|BUDGET|EXACT' ...
# (called by `make crosscheck`, mk/cross.mk).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
goldens=${XC_GOLDENS:-$here/goldens}
out=${XC_BUILD:?}/out
read -r -a jobs <<<"${XC_JOBS:?}"

fails=0
oks=0
header="| target | budget | run time |"
rule="|---|---|---|"
for j in "${jobs[@]}"; do
    header+=" $j |"
    rule+="---|"
done
header+=" snapshot/restore | fx exactness |"
rule+="---|---|"

rows=()
for spec in "$@"; do
    IFS='|' read -r id desc budget exact <<<"$spec"
    full=0
    [ "$budget" = full ] && full=1
    ms=$(cat "$out/$id"/*.out 2>/dev/null | awk '$1 == "time" { t += $2 } END { print t + 0 }')
    row="| $desc | $budget | $((ms / 1000)) s |"
    snapcell="OK"
    snapn=0
    for j in "${jobs[@]}"; do
        g=$goldens/$j.sum
        o=$out/$id/$j.out
        [ -f "$g" ] || g=/dev/null
        if [ ! -f "$o" ]; then
            cell="FAIL|NOT RUN|NONE|-"
        else
            cell=$(awk -v full=$full -f "$here/compare.awk" "$g" "$o")
        fi
        IFS='|' read -r st text sst stext <<<"$cell"
        row+=" $text |"
        if [ "$st" = OK ]; then oks=$((oks + 1)); else fails=$((fails + 1)); fi
        if [ "$sst" = OK ]; then
            snapn=$((snapn + 1))
        elif [ "$sst" = FAIL ] && [ "$snapcell" = OK ]; then
            snapcell="$j $stext"
        fi
    done
    if [ "$snapcell" = OK ]; then
        if [ $snapn -gt 0 ]; then oks=$((oks + 1)); else fails=$((fails + 1)); snapcell="NONE"; fi
        [ $snapn -gt 0 ] && snapcell="OK ($snapn runs)"
    else
        fails=$((fails + 1))
    fi
    row+=" $snapcell |"
    case "$exact" in
    skip:*)
        row+=" SKIP (${exact#skip:}) |"
        ;;
    *)
        e=$out/$id/exact.out
        tot=$( [ -f "$e" ] && awk '$1 == "exact" && $2 == "total" { print $4, $6 }' "$e" || true)
        code=$( [ -f "$e" ] && awk '$1 == "exit" { print $2 }' "$e" || true)
        read -r checked mism <<<"${tot:-- -}"
        if [ "${code:-1}" = 0 ] && [ "$mism" = 0 ]; then
            row+=" OK ($checked checked) |"
            oks=$((oks + 1))
        else
            row+=" FAIL (${mism:-?} of ${checked:-?} differ) |"
            fails=$((fails + 1))
        fi
        ;;
    esac
    rows+=("$row")
done

report() {
    echo
    echo "crosscheck matrix: cells are OK N (N per-tick checksums equal to the golden),"
    echo "@T (first divergent tick T) or a reason; budget B: a scene of n bodies runs"
    echo "min(ticks, max(120, B/n)) ticks (full: every tick of the scene); run time:"
    echo "the target's runs added up (they run ${XC_PAR:-2} at a time)."
    echo
    echo "$header"
    echo "$rule"
    for r in "${rows[@]}"; do echo "$r"; done
    echo
    if [ $fails -eq 0 ]; then
        echo "crosscheck: all $oks cells OK"
    else
        echo "crosscheck: $fails of $((oks + fails)) cells FAILED (outputs in $out/TARGET/JOB.out)"
    fi
}
report
# The results file (XC_RESULTS, set by `make crosscheck`): when, at which
# commit, on what machine, then the same lines; README's matrix is generated
# from it by `make readme` (tools/gen/readme.py). Written whatever the outcome.
if [ -n "${XC_RESULTS:-}" ]; then
    if commit=$(git rev-parse --short HEAD 2>/dev/null); then
        git diff --quiet HEAD -- . ':!tools/crosscheck/results' ':!tools/bench/results' ||
            commit="$commit + uncommitted changes"
    else
        commit=unknown
    fi
    mkdir -p "$(dirname "$XC_RESULTS")"
    {
        echo "# written by \`make crosscheck\` (tools/crosscheck/matrix.sh); README.md's matrix is generated from it by \`make readme\`"
        echo "date_utc $(date -u +%Y-%m-%dT%H:%M:%SZ)"
        echo "commit $commit"
        echo "host $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //'), $(nproc) cores"
        report
    } >"$XC_RESULTS"
    echo "crosscheck: wrote $XC_RESULTS"
fi
[ $fails -eq 0 ] || exit 1
