#!/bin/bash
# SPDX-License-Identifier: MIT
# `make browser-peer-test` (mk/browser_peer.mk): a relay with --ws, a native
# `lockstep bot` on UDP (slot 0) and the wasm peer in Node.js on a WebSocket
# (slot 1) play one soccer match in rollback mode. Passes when both finish with
# the same final checksum, 0 desyncs at both and at the relay, and the relay's
# recording verifies natively (`lockstep replay verify`). BP_KEEP=1 keeps its folder.
#   node_match.sh TOOL WASM SCENE TICKS TICK_RATE [--keys] [--restart TICK] [-- FAULT OPTIONS]
# --restart TICK: the wasm peer is killed (SIGKILL, no goodbye) at tick TICK and a new
# Node.js process with the same credential starts at once, with a first sequence number
# from the clock and `restarted` (SPEC.md §17.3, §17.10): it must rejoin and end equal.
# The relay runs with --timeout 1500 --rejoin-ms 20000 then, to keep the wait short.
# Fault options (--loss P, --jitter MS, ...) go to the relay and to the native bot:
# both directions of the UDP side; the relay's faults never touch a WebSocket.
set -u
tool=$1 wasm=$2 scene=$3 ticks=$4 rate=$5
shift 5
keys=
[ "${1:-}" = --keys ] && { keys=--keys; shift; }
restart=
[ "${1:-}" = --restart ] && { restart=$2; shift 2; }
relay_opts=()
[ -n "$restart" ] && relay_opts=(--timeout 1500 --rejoin-ms 20000)
[ "${1:-}" = -- ] && shift
faults=("$@")
here=$(cd "$(dirname "$0")" && pwd)
d=$(mktemp -d "${TMPDIR:-/tmp}/lockstep-browser-peer.XXXXXX")
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
    [ -n "${BP_KEEP:-}" ] && echo "kept $d" || rm -rf "$d"
}
trap cleanup EXIT
fail() {
    echo "browser-peer-test: FAILED: $*"
    for f in relay.out relay.err bot.out node1.out node1.err node.out node.err; do
        [ -s "$d/$f" ] && { echo "--- $f"; tail -n 15 "$d/$f"; }
    done
    exit 1
}

"$tool" relay --ws 127.0.0.1:0 --workers 1 --slots 2 --ticks "$ticks" --tick-rate "$rate" \
    --credentials "$d" --record "$d/m.lsr" --scene "$scene" --seed 1 --exit-when-done \
    ${relay_opts[@]+"${relay_opts[@]}"} ${faults[@]+"${faults[@]}"} >"$d/relay.out" 2>"$d/relay.err" &
relay=$!
pids+=("$relay")
for _ in $(seq 100); do grep -q '^ready' "$d/relay.out" && break; sleep 0.1; done
udp=$(awk '$1 == "listening" {print $2; exit}' "$d/relay.out")
ws=$(awk '$1 == "ws" {print $2; exit}' "$d/relay.out")
[ -n "$udp" ] && [ -n "$ws" ] || fail "the relay did not start"

start=$(date +%s%N)
"$tool" bot --relay "$udp" --credential "$d/session-1-slot-0.cred" --scene "$scene" \
    --mode rollback ${faults[@]+"${faults[@]}"} >"$d/bot.out" 2>&1 &
bot=$!
pids+=("$bot")
node_args=(--ws "ws://$ws" --credential "$d/session-1-slot-1.cred" --scene "$scene"
    --wasm "$wasm" --mode rollback $keys)
if [ -n "$restart" ]; then # the first process dies at tick $restart; its successor rejoins
    node "$here/node_peer.mjs" "${node_args[@]}" --first-seq clock --die-at-tick "$restart" \
        >"$d/node1.out" 2>"$d/node1.err" &
    node=$!
    pids+=("$node")
    { wait "$node"; } 2>/dev/null # bash would say "Killed"
    grep -q '^node_peer 1: killed at tick' "$d/node1.out" || fail "the first wasm peer was not killed"
    node_args+=(--first-seq clock --restarted)
fi
node "$here/node_peer.mjs" "${node_args[@]}" >"$d/node.out" 2>"$d/node.err" &
node=$!
pids+=("$node")
wait "$node"
node_rc=$?
wait "$bot"
bot_rc=$?
for _ in $(seq 100); do kill -0 "$relay" 2>/dev/null || break; sleep 0.1; done
kill -0 "$relay" 2>/dev/null && fail "the relay did not exit after the match"
wait "$relay"
relay_rc=$?
secs=$(( ($(date +%s%N) - start) / 1000000 ))

field() { grep -o " $2=[^ ]*" "$1" | tail -1 | cut -d= -f2; }
rb=$(grep '^result ' "$d/bot.out" | tail -1)
rn=$(grep '^result ' "$d/node.out" | tail -1)
[ -n "$rb" ] || fail "the native bot printed no result (exit $bot_rc)"
[ -n "$rn" ] || fail "the wasm peer printed no result (exit $node_rc)"
printf '%-28s %-6s %-17s %-8s %-9s %-12s %-6s %s\n' peer ticks "final checksum" desyncs rollbacks \
    resim/frame score state
for who in "native bot (UDP, slot 0)|$d/bot.out" "wasm in Node.js (WebSocket, slot 1)|$d/node.out"; do
    name=${who%%|*} f=${who#*|}
    frames=$(field "$f" frames) resim=$(field "$f" resimulated)
    mean=$(awk -v r="$resim" -v f="$frames" 'BEGIN {printf "%.2f", f ? r / f : 0}')
    printf '%-28s %-6s %-17s %-8s %-9s %-12s %-6s %s\n' "${name%% (*}" "$(field "$f" ticks)" \
        "$(field "$f" checksum)" "$(field "$f" desyncs)" "$(field "$f" rollbacks)" "$mean" \
        "$(field "$f" score)" "$(field "$f" state) (${name#* (}"
done
kb=$(field "$d/bot.out" checksum) kn=$(field "$d/node.out" checksum)
[ "$bot_rc" = 0 ] || fail "the native bot exited $bot_rc"
[ "$node_rc" = 0 ] || fail "the wasm peer exited $node_rc"
[ "$relay_rc" = 0 ] || fail "the relay exited $relay_rc"
[ "$(field "$d/bot.out" ticks)" = "$ticks" ] && [ "$(field "$d/node.out" ticks)" = "$ticks" ] ||
    fail "a peer did not play $ticks ticks"
[ "$kb" = "$kn" ] || fail "final checksums differ: native $kb, wasm $kn"
[ "$(field "$d/bot.out" desyncs)" = 0 ] && [ "$(field "$d/node.out" desyncs)" = 0 ] ||
    fail "a peer saw desyncs"
grep -q '^event desync' "$d/relay.out" && fail "the relay reported a desync"
wsline=$(grep '^stats ws ' "$d/relay.out" | tail -1)
echo "relay: ${wsline#stats }"
verify=$("$tool" replay verify "$d/m.lsr" --no-progress 2>&1)
vrc=$?
echo "verify: $(echo "$verify" | head -1)"
[ "$vrc" = 0 ] || fail "replay verify exited $vrc: $verify"
if [ -n "$restart" ]; then
    rj=$(grep '^node_peer 1: rejoined' "$d/node.out") || fail "the restarted wasm peer did not rejoin"
    [ "$(field "$d/node.out" rejoins)" = 1 ] || fail "the restarted wasm peer rejoined $(field "$d/node.out" rejoins) times"
    t0=$(grep -o 'killed at .* unix_ms=[0-9]*' "$d/node1.out" | grep -o '[0-9]*$')
    t1=$(echo "$rj" | grep -o '[0-9]*$')
    echo "restart: the wasm peer $(grep -o 'killed at tick [0-9]*' "$d/node1.out"); a new process $(echo "${rj#node_peer 1: }" | sed 's/ unix_ms=.*//'):" \
        "REJOINED $((t1 - t0)) ms after the kill (relay --timeout 1500)"
fi
last=$("$tool" replay dump "$d/m.lsr" --json | grep -o '"checksum":"[0-9a-f]*"' | tail -1 | cut -d'"' -f4)
[ "$last" = "$kb" ] || fail "the recording's last checksum $last is not the peers' $kb"
echo "browser-peer-test: OK: $ticks ticks at $rate Hz in ${secs} ms${faults[*]+ (UDP faults: ${faults[*]})}${restart:+ (the wasm peer killed at tick $restart and started again)}, native and wasm end on $kb, 0 desyncs, the recording verifies"
