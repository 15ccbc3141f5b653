# Compare one runner output with its golden (SPEC.md §18).
# usage: awk -v full=0|1 -f compare.awk GOLDEN OUTPUT
# Prints one line: STREAM_STATUS|STREAM_CELL|SNAP_STATUS|SNAP_CELL
# where STATUS is OK, FAIL or NONE and CELL is what the matrix shows:
# "OK N" (N ticks compared), "@T" (first divergent tick T), or a short reason.
FNR == NR {
    if ($0 ~ /^#/ || NF == 0) next
    if ($1 == "sleep") { gsleep = $2 " " $3; next }
    g[$1] = $2
    gmax = $1 + 0
    next
}
$1 == "c" && NF == 3 {
    n++
    last = $2 + 0
    if (!bad && ($2 + 0 != n || !($2 in g) || g[$2] != $3)) bad = $2 + 0
    next
}
$1 == "sleep" { osleep = ($2 == "none") ? "none" : $2 " " $3; next }
$1 == "snap" { snap = $3; snapk = $2; snapt = $4; next }
$1 == "end" { ended = 1; next }
$1 == "exit" { code = $2 + 0; haveexit = 1; next }
$1 == "scene" || $1 == "time" { next }
{ if (msg == "") msg = $0 }
END {
    if (gmax == 0) { stream = "FAIL|NO GOLDEN" }
    else if (n == 0) { stream = "FAIL|NO OUTPUT" (msg != "" ? ": " substr(msg, 1, 40) : "") }
    else if (bad) { stream = "FAIL|@" bad }
    else if (!ended) { stream = "FAIL|CRASH after " last }
    else if (gsleep != "" && osleep != gsleep) {
        split(gsleep, gs, " ")
        split(osleep, os, " ")
        if (osleep == "none") stream = "FAIL|no sleep (golden " gs[1] ")"
        else if (os[1] != gs[1]) stream = "FAIL|sleep " os[1] " (golden " gs[1] ")"
        else stream = "FAIL|sleep checksum"
    }
    else if (full && n != gmax) { stream = "FAIL|" n " ticks, golden " gmax }
    else if (haveexit && code != 0 && snap != "diverge") { stream = "FAIL|exit " code }
    else { stream = "OK|OK " n }
    if (snap == "") s = "NONE|-"
    else if (snap == "ok") s = "OK|" snapk
    else s = "FAIL|@" snapt " (snap " snapk ")"
    print stream "|" s
}
