#!/bin/bash
# SPDX-License-Identifier: MIT
# `make bench-ws-loss` (mk/browser_peer.mk, SPEC.md §17.16 "Loss: head-of-line
# blocking, measured"): what packet loss does to a WebSocket peer (TCP: ordered,
# reliable, so a lost segment holds back every later datagram until it is
# retransmitted) against a UDP peer (a lost datagram is just lost; the next one
# carries the inputs again). For each loss rate it plays one soccer match in
# rollback mode per lossy link, each match in its own network namespace
# (`unshare -n`, loopback only, fixed ports) where nftables drops that rate of
# the lossy peer's packets in both directions on the input hook (after the
# sender's stack let them go: a real loss, retransmitted by TCP):
#   udp   the lossy peer is `lockstep bot` on UDP (the relay's UDP port dropped;
#         the clean peer is `lockstep bot --ws`, never faulted)
#   ws    the lossy peer is `lockstep bot --ws` (native: the transport alone)
#   wasm  the lossy peer is the wasm peer in Node.js (node_peer.mjs) on a WebSocket
# with a clean native `lockstep bot` on UDP as the other slot of ws and wasm.
# The three matches of one rate run at once. It prints both peers' rollback
# counters, the dropped packets, the kernel's TCP recovery counters (of that
# namespace only) and checks equal final checksums, 0 desyncs and that the
# recording verifies. Needs root (or CAP_NET_ADMIN + CAP_SYS_ADMIN), unshare
# and nft; without them it says so and exits 0. Exit 1 when a match does not
# end equal (a finding, printed in the table).
set -u
me=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
here=$(dirname "$me")
root=$(cd "$here/../.." && pwd)

usage() {
    cat <<EOF
usage: ws_loss.sh [--tool PATH] [--wasm PATH] [--scene FILE] [--ticks N] [--tick-rate HZ]
                  [--delay D] [--repeats R] [--loss 'P ...'] [--links 'udp ws wasm'] [--csv FILE] [--keep]

For each loss rate P (percent per direction, 0.1 steps) one soccer match per lossy
link in rollback mode, a private network namespace each, nftables dropping P % of
that peer's packets both ways; prints rollbacks, longest re-simulation, prediction
hits, waits, time-sync skips, RTT and stalls of both peers, equal checksums, desyncs.

  --tool PATH     the lockstep program (default build/lockstep)
  --wasm PATH     the wasm peer (default build/browser_peer/peer.wasm; without it,
                  or without node and tools/browser_peer/node_modules, no wasm link)
  --scene FILE    default tools/scenes/soccer.scene
  --ticks N       match length (default 1200)
  --tick-rate HZ  default 60
  --delay D       the relay session's input delay in ticks (default 3, the relay's)
  --repeats R     matches per loss rate and link (default 1): counts summed
  --loss 'P ...'  loss rates in percent per direction (default '0 1 2 5')
  --links 'L ...' which lossy links: udp, ws, wasm (default all three)
  --csv FILE      append rows section,case,engine,metric,value,unit (mk/bench.mk)
  --keep          keep the matches' folders (printed)
EOF
}
die() {
    echo "ws_loss: $*" >&2
    usage >&2
    exit 2
}

# One match inside its namespace: ws_loss.sh --in-namespace LINK PERMILLE DIR ...
if [ "${1:-}" = --in-namespace ]; then
    link=$2 pm=$3 d=$4 tool=$5 wasm=$6 scene=$7 ticks=$8 rate=$9 delay=${10}
    ip link set lo up || exit 1
    proto=tcp port=40001
    [ "$link" = udp ] && proto=udp port=40000
    nft -f - <<EOF || exit 1
table inet wsloss {
    chain in {
        type filter hook input priority 0;
        $proto dport $port numgen random mod 1000 < $pm counter drop
        $proto sport $port numgen random mod 1000 < $pm counter drop
    }
}
EOF
    deadline=$((ticks * 4 / rate + 60))
    "$tool" relay --bind 127.0.0.1:40000 --ws 127.0.0.1:40001 --workers 1 --slots 2 \
        --ticks "$ticks" --tick-rate "$rate" --delay "$delay" --credentials "$d" \
        --record "$d/m.lsr" --scene "$scene" --seed 1 --exit-when-done \
        >"$d/relay.out" 2>"$d/relay.err" &
    relay=$!
    for _ in $(seq 100); do grep -q '^ready' "$d/relay.out" && break; sleep 0.1; done
    c0=$d/session-1-slot-0.cred c1=$d/session-1-slot-1.cred
    common=(--scene "$scene" --mode rollback --deadline "$deadline")
    if [ "$link" = udp ]; then
        "$tool" bot --ws ws://127.0.0.1:40001 --credential "$c0" "${common[@]}" >"$d/clean.out" 2>&1 &
    else
        "$tool" bot --relay 127.0.0.1:40000 --credential "$c0" "${common[@]}" >"$d/clean.out" 2>&1 &
    fi
    clean=$!
    case $link in
    udp) "$tool" bot --relay 127.0.0.1:40000 --credential "$c1" "${common[@]}" >"$d/lossy.out" 2>&1 & ;;
    ws) "$tool" bot --ws ws://127.0.0.1:40001 --credential "$c1" "${common[@]}" >"$d/lossy.out" 2>&1 & ;;
    wasm) node "$here/node_peer.mjs" --ws ws://127.0.0.1:40001 --credential "$c1" --scene "$scene" \
        --wasm "$wasm" --mode rollback --deadline "$deadline" >"$d/lossy.out" 2>"$d/lossy.err" & ;;
    esac
    lossy=$!
    start=$(date +%s%N)
    wait "$lossy"
    echo "lossy_rc=$?" >"$d/rc"
    wait "$clean"
    echo "clean_rc=$?" >>"$d/rc"
    echo "ms=$((($(date +%s%N) - start) / 1000000))" >>"$d/rc"
    for _ in $(seq 100); do kill -0 "$relay" 2>/dev/null || break; sleep 0.1; done
    kill "$relay" 2>/dev/null
    wait "$relay"
    echo "relay_rc=$?" >>"$d/rc"
    # Packets the two rules dropped (to the relay, from the relay).
    nft list chain inet wsloss in | grep -o 'packets [0-9]*' | awk '{s += $2} END {print "nft_dropped=" s+0}' >>"$d/rc"
    nstat -az >"$d/nstat" 2>/dev/null
    exit 0
fi

tool=$root/build/lockstep wasm=$root/build/browser_peer/peer.wasm scene=$root/tools/scenes/soccer.scene
ticks=1200 rate=60 delay=3 repeats=1 losses="0 1 2 5" links="udp ws wasm" csv="" keep=""
while [ $# -gt 0 ]; do
    case $1 in
    -h | --help) usage; exit 0 ;;
    --keep) keep=1; shift; continue ;;
    --tool | --wasm | --scene | --ticks | --tick-rate | --delay | --repeats | --loss | --links | --csv)
        [ $# -ge 2 ] || die "$1 needs a value" ;;
    *) die "unknown option '$1'" ;;
    esac
    case $1 in
    --tool) tool=$2 ;; --wasm) wasm=$2 ;; --scene) scene=$2 ;; --ticks) ticks=$2 ;;
    --tick-rate) rate=$2 ;; --delay) delay=$2 ;; --repeats) repeats=$2 ;; --loss) losses=$2 ;; --links) links=$2 ;;
    --csv) csv=$2 ;;
    esac
    shift 2
done
uint() { [[ $2 =~ ^[0-9]{1,6}$ ]] || die "$1 wants a whole number, not '$2'"; }
uint --ticks "$ticks"
uint --tick-rate "$rate"
uint --delay "$delay"
uint --repeats "$repeats"
{ [ "$repeats" -ge 1 ] && [ "$repeats" -le 100 ]; } || die "--repeats wants 1..100"
[ "$ticks" -ge 60 ] || die "--ticks wants at least 60"
{ [ "$rate" -ge 1 ] && [ "$rate" -le 1000 ]; } || die "--tick-rate wants 1..1000"
[ -n "$losses" ] || die "--loss wants at least one rate"
for p in $losses; do
    { [[ $p =~ ^[0-9]{1,3}(\.[0-9])?$ ]] && awk -v p="$p" 'BEGIN {exit !(p <= 100)}'; } ||
        die "--loss wants percentages 0..100 with at most one decimal, not '$p'"
done
[ -n "$links" ] || die "--links wants at least one of udp, ws, wasm"
for l in $links; do
    case $l in udp | ws | wasm) ;; *) die "--links: unknown link '$l' (udp, ws, wasm)" ;; esac
done
[ -x "$tool" ] || die "no lockstep program at $tool (make, or --tool PATH)"
[ -f "$scene" ] || die "no scene $scene"
tool=$(cd "$(dirname "$tool")" && pwd)/$(basename "$tool")
scene=$(cd "$(dirname "$scene")" && pwd)/$(basename "$scene")

skip() {
    echo "ws_loss: skipped: $*"
    exit 0
}
[ "$(id -u)" = 0 ] || skip "needs root (a private network namespace and nftables rules in it)"
for c in unshare nft ip nstat; do
    command -v "$c" >/dev/null || skip "no '$c' (apt-get install util-linux nftables iproute2)"
done
unshare -n nft add table inet wsloss_probe 2>/dev/null ||
    skip "'unshare -n nft add table ...' failed: no network namespaces or no nf_tables in this kernel"
if [[ " $links " = *" wasm "* ]]; then
    if ! { [ -f "$wasm" ] && command -v node >/dev/null && [ -d "$here/node_modules/ws" ] &&
        [ -d "$here/node_modules/libsodium-wrappers" ]; }; then
        echo "ws_loss: no wasm link: needs $wasm (make browser-peer), node and tools/browser_peer/node_modules (make deps-browser-peer)"
        links=$(echo " $links " | sed 's/ wasm / /')
    else
        wasm=$(cd "$(dirname "$wasm")" && pwd)/$(basename "$wasm")
    fi
fi

top=$(mktemp -d "${TMPDIR:-/tmp}/lockstep-ws-loss.XXXXXX")
cleanup() { if [ -n "$keep" ]; then echo "kept $top"; else rm -rf "$top"; fi; }
trap cleanup EXIT

field() { grep -o " $2=[^ ]*" "$1" 2>/dev/null | tail -1 | cut -d= -f2; }
kv() { grep -o "^$2=.*" "$1" 2>/dev/null | cut -d= -f2; }
nst() { awk -v k="$2" '$1 == k {print $2; f = 1} END {if (!f) print 0}' "$1" 2>/dev/null; }
row() { [ -n "$csv" ] && printf 'ws_loss,%s,%s,%s,%s,%s\n' "$1" "$2" "$3" "$4" "$5" >>"$csv"; }
declare -A linkname=([udp]="UDP (native bot)" [ws]="WebSocket (native bot --ws)" [wasm]="WebSocket (wasm in Node.js)")

echo "ws_loss: soccer, $ticks ticks at $rate Hz, rollback, input delay $delay, 2 slots; loss per direction on the lossy peer's link only"
echo "ws_loss: the lossy peer is slot 1; the clean one (slot 0) is on UDP, or on a WebSocket when the lossy link is UDP"
hdr() {
    printf '%-5s %-28s %-5s %5s %5s %5s %7s %6s %5s %5s %6s %6s %6s %5s %-4s\n' loss% "lossy link" peer \
        drops rb rbmax resim/f hit% waits tsync stalls rtt_us gap_ms ">100ms" ok
}
[ "$repeats" = 1 ] || echo "ws_loss: each row is $repeats matches: counts summed, rbmax the largest, rtt_us the mean of the final RTTs"
hdr
# check DIR: why the match in DIR does not count as equal (empty when it does).
check() {
    local d=$1 k0 k1 who v t
    # (a peer whose last datagram was lost is timed out after the last tick: no harm)
    t=$(awk -v n="$ticks" '$1 == "event" && $2 == "disconnected" && / reason=timeout/ {
        for (i = 3; i <= NF; i++) if ($i ~ /^tick=/) { sub("tick=", "", $i); if ($i + 0 < n) { print $i; exit } } }' "$d/relay.out")
    [ -z "$t" ] || { echo "the relay disconnected a peer at tick $t for silence (reason=timeout: silent longer than the relay's --timeout, 3000 ms)"; return; }
    k0=$(field "$d/clean.out" checksum) k1=$(field "$d/lossy.out" checksum)
    { [ -n "$k0" ] && [ -n "$k1" ]; } || { echo "a peer printed no result"; return; }
    [ "$k0" = "$k1" ] || { echo "final checksums differ ($k0, $k1)"; return; }
    for who in clean lossy; do
        [ "$(field "$d/$who.out" ticks)" = "$ticks" ] || { echo "$who played $(field "$d/$who.out" ticks) ticks"; return; }
        [ "$(field "$d/$who.out" desyncs)" = 0 ] || { echo "$who saw desyncs"; return; }
        [ "$(kv "$d/rc" "${who}_rc")" = 0 ] || { echo "$who exited $(kv "$d/rc" "${who}_rc")"; return; }
    done
    ! grep -q '^event desync' "$d/relay.out" || { echo "the relay reported a desync"; return; }
    v=$("$tool" replay verify "$d/m.lsr" --no-progress 2>&1) || echo "replay verify: $(echo "$v" | head -1)"
}
# agg FILE...: the result lines of one peer over the repeats:
# rollbacks resim_max resim/frame hit% waits time_sync stalls rtt_us max_gap_ms gaps_100ms
agg() {
    cat "$@" 2>/dev/null | grep -h '^result ' | awk '
        { for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
          rb += v["rollbacks"]; if (v["resim_max"] > mx) mx = v["resim_max"]; rs += v["resimulated"]
          fr += v["frames"]; pr += v["predicted"]; ph += v["predicted_hits"]; wa += v["waits"]
          ts += v["time_sync"]; st += v["stalls"]; rtt += v["rtt_us"]; n++
          if (v["max_gap_us"] > gap) gap = v["max_gap_us"]; g100 += v["gaps_100ms"] }
        END { printf "%d %d %.3f %s %d %d %d %d %d %d\n", rb, mx, fr ? rs / fr : 0,
              pr ? sprintf("%.1f", 100 * ph / pr) : "-", wa, ts, st, n ? rtt / n : 0, gap / 1000, g100 }'
}
bad=0
start=$(date +%s) load0=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)
for p in $losses; do
    pm=$(awk -v p="$p" 'BEGIN {printf "%d", p * 10 + 0.5}')
    for r in $(seq "$repeats"); do
        pids=()
        for l in $links; do
            d=$top/$p-$l-$r
            mkdir -p "$d"
            unshare -n "$me" --in-namespace "$l" "$pm" "$d" "$tool" "$wasm" "$scene" "$ticks" "$rate" "$delay" \
                >"$d/ns.out" 2>&1 &
            pids+=($!)
        done
        for pid in "${pids[@]}"; do wait "$pid"; done
    done
    for l in $links; do
        ok=yes drops=0 retr=0 fast=0 tlp=0 rto=0
        for r in $(seq "$repeats"); do
            d=$top/$p-$l-$r n=$top/$p-$l-$r/nstat
            why=$(check "$d")
            [ -n "$why" ] && { ok=NO; bad=1; keep=1; echo "      FAILED: $p % $l match $r: $why (folder $d, kept)"; }
            drops=$((drops + $(kv "$d/rc" nft_dropped || echo 0)))
            retr=$((retr + $(nst "$n" TcpRetransSegs))) fast=$((fast + $(nst "$n" TcpExtTCPFastRetrans)))
            tlp=$((tlp + $(nst "$n" TcpExtTCPLossProbes))) rto=$((rto + $(nst "$n" TcpExtTCPTimeouts)))
        done
        case_=loss_${p}pct_$l
        for who in lossy clean; do
            read -r rb mx mean hit wa ts st rtt gap g100 <<<"$(agg "$top/$p-$l-"*/"$who.out")"
            printf '%-5s %-28s %-5s %5s %5s %5s %7s %6s %5s %5s %6s %6s %6s %5s %-4s\n' "$p" "${linkname[$l]}" "$who" \
                "$([ "$who" = lossy ] && echo "$drops" || echo -)" "$rb" "$mx" "$mean" "$hit" "$wa" "$ts" "$st" "$rtt" \
                "$gap" "$g100" "$ok"
            row "$case_" "$who" rollbacks "$rb" count
            row "$case_" "$who" resim_max "$mx" ticks
            row "$case_" "$who" resim_per_frame "$mean" ticks
            [ "$hit" != - ] && row "$case_" "$who" prediction_hits "$hit" %
            row "$case_" "$who" waits "$wa" count
            row "$case_" "$who" time_sync "$ts" count
            row "$case_" "$who" stalls "$st" count
            row "$case_" "$who" rtt_us "$rtt" us
            row "$case_" "$who" max_gap_ms "$gap" ms
            row "$case_" "$who" gaps_over_100ms "$g100" count
        done
        if [ "$l" != udp ]; then
            echo "      tcp: $retr segments retransmitted: $fast fast retransmits (SACK/RACK), $tlp tail-loss probes, $rto RTO timeouts (>= 200 ms each)"
            row "$case_" tcp retransmitted "$retr" count
            row "$case_" tcp rto_timeouts "$rto" count
        fi
        row "$case_" lossy dropped "$drops" count
        row "$case_" match ok "$([ $ok = yes ] && echo 1 || echo 0)" bool
        row "$case_" match matches "$repeats" count
    done
done
echo "ws_loss: $(($(date +%s) - start)) s on $(nproc) cores, load average $load0 at the start, $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null) at the end (waits, time sync, RTT and gaps are timings: load moves them; drops and TCP's counters do not)"
echo "ws_loss: rb rollbacks, rbmax most ticks re-simulated in one frame (the longest rollback), resim/f mean ticks re-simulated per frame, hit% predictions that held, waits frames lost waiting on the prediction window, tsync time-sync skips, stalls polls that lacked an input, rtt_us the peer's final RTT estimate, gap_ms the longest silence of the relay toward the peer during the match, >100ms how many silences exceeded 100 ms"
[ "$bad" = 0 ] || { echo "ws_loss: a match did not end equal (see FAILED above)"; exit 1; }
echo "ws_loss: OK: every match ended on equal checksums, 0 desyncs, its recording verifies"
