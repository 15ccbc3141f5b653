// SPDX-License-Identifier: MIT
// The browser peer without a browser: Node.js loads peer.wasm (peer.js), joins
// `lockstep relay --ws` over a WebSocket (npm's ws, pinned in package-lock.json)
// and plays the match as `lockstep bot` does over UDP: every message in goes to
// the peer with the time, the peer is polled every millisecond, every datagram
// it produces leaves as one binary message. At the end it prints the bot's
// `result` line (slot, ticks, checksum, desyncs, rollbacks, ...).
//
//   node node_peer.mjs --ws ws://HOST:PORT --credential FILE --scene FILE
//        [--wasm FILE] [--seed S] [--mode rollback|lockstep] [--max-prediction W]
//        [--deadline S] [--keys] [--first-seq N|clock] [--restarted] [--die-at-tick T]
// --keys: our car is driven by a fixed key pattern instead of the soccer bot.
// --first-seq: the number of our first datagram (default 1; clock: Unix time in us x
// 4096, SPEC.md §17.3); --restarted: an earlier process of this credential may still
// hold the slot: rejoin it (SPEC.md §17.10); --die-at-tick T: SIGKILL ourselves at tick
// T, no goodbye (a crash, a closed tab), for the restart test of node_match.sh.
// Exit 0: finished and never named; 3: finished, named or disputed; 1 otherwise.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import sodium from 'libsodium-wrappers';
import WebSocket from 'ws';
import { Peer, clockFirstSeq } from './peer.js';

const here = dirname(fileURLToPath(import.meta.url));
const opts = {
  ws: null, credential: null, scene: null, wasm: join(here, '../../build/browser_peer/peer.wasm'),
  seed: 1, mode: 'rollback', 'max-prediction': 8, deadline: 300, keys: false,
  'first-seq': '0', restarted: false, 'die-at-tick': '0',
};
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i].replace(/^--/, '');
  if (a === 'keys' || a === 'restarted') opts[a] = true;
  else if (argv[i].startsWith('--') && a in opts && i + 1 < argv.length) opts[a] = argv[++i];
  else {
    console.error(`node_peer: unknown or incomplete option '${argv[i]}'`);
    process.exit(2);
  }
}
if (!opts.ws || !opts.credential || !opts.scene || !['rollback', 'lockstep'].includes(opts.mode)) {
  console.error('usage: node node_peer.mjs --ws ws://HOST:PORT --credential FILE --scene FILE ' +
    '[--wasm FILE] [--seed S] [--mode rollback|lockstep] [--max-prediction W] [--deadline S] [--keys] ' +
    '[--first-seq N|clock] [--restarted] [--die-at-tick T]');
  process.exit(2);
}

const nowUs = () => process.hrtime.bigint() / 1000n;
await sodium.ready;
const peer = await Peer.load(readFileSync(opts.wasm), sodium, (fd, line) => console.error(`wasm: ${line}`));
try {
  peer.create({
    scene: readFileSync(opts.scene, 'utf8'),
    credential: readFileSync(opts.credential, 'utf8'),
    rollback: opts.mode === 'rollback',
    maxPrediction: Number(opts['max-prediction']),
    seed: Number(opts.seed),
    bot: !opts.keys,
    firstSeq: opts['first-seq'] === 'clock' ? clockFirstSeq() : BigInt(opts['first-seq']),
    restarted: opts.restarted,
  });
} catch (e) {
  console.error(`node_peer: ${e.message}`);
  process.exit(1);
}
const slot = peer.slot;

const ws = new WebSocket(opts.ws);
ws.binaryType = 'arraybuffer';
let done = false;
let status = 'running';
let timer = null;
const started = nowUs();
// Gaps between two messages from the relay once the match runs (ticks > 0): the
// longest and how many exceeded 100 ms (head-of-line stalls, ws_loss.sh).
let lastRecv = 0n;
let maxGapUs = 0n;
let gaps100ms = 0;
let rejoined = false;
const dieAt = Number(opts['die-at-tick']);

function flush() {
  for (const d of peer.drain()) {
    if (ws.readyState === WebSocket.OPEN) ws.send(d, { binary: true });
  }
}

function finish(why) {
  if (done) return;
  done = true;
  status = why;
  clearInterval(timer);
  const s = peer.stats();
  const [a, b] = peer.score();
  console.log(`result slot=${slot} ticks=${peer.ticks} checksum=${peer.checksum} desyncs=${s.desyncs} ` +
    `named=${s.named} disputes=${s.disputes} rtt_us=${s.rtt_us} packets_out=${s.packets_out} ` +
    `bytes_out=${s.bytes_out} packets_in=${s.packets_in} bytes_in=${s.bytes_in} stalls=${s.stalls} ` +
    `dropped=${s.dropped} bad_mac=${s.bad_mac} replayed=${s.replayed} stale=${s.stale} ` +
    `malformed=${s.malformed} mode=${opts.mode} frames=${s.frames} rollbacks=${s.rollbacks} ` +
    `resimulated=${s.resimulated} resim_max=${s.max_resim_frame} predicted=${s.predicted} ` +
    `predicted_hits=${s.predicted_hits} waits=${s.waits} time_sync=${s.time_sync_skips} ` +
    `rejoins=${s.rejoins} max_gap_us=${maxGapUs} gaps_100ms=${gaps100ms} transport=websocket wasm=1 state=${status} score=${a}-${b}`);
  ws.close();
  const code = status !== 'finished' ? 1 : s.named || s.disputes ? 3 : 0;
  setTimeout(() => process.exit(code), 50);
}

// A fixed key pattern (--keys): throttle, steering that changes every second.
function keys(tick) {
  const phase = Math.floor(tick / 60) % 4;
  return 1 | (phase === 1 ? 4 : phase === 3 ? 8 : 0) | (tick % 240 < 30 ? 32 : 0);
}

ws.on('open', () => {
  console.log(`node_peer ${slot}: connected to ${opts.ws}`);
  peer.poll(nowUs());
  flush();
  timer = setInterval(() => {
    const now = nowUs();
    if (opts.keys) peer.setInput(keys(peer.ticks), false);
    peer.poll(now);
    const st = peer.state;
    flush();
    if (dieAt && peer.ticks >= dieAt) {
      console.log(`node_peer ${slot}: killed at tick ${peer.ticks} unix_ms=${Date.now()}`);
      process.kill(process.pid, 'SIGKILL'); // no goodbye, no cleanup: a crash
    }
    if (!rejoined && peer.stats().rejoins > 0) {
      rejoined = true;
      console.log(`node_peer ${slot}: rejoined ${(now - started) / 1000n} ms after starting, ` +
        `at tick ${peer.ticks} unix_ms=${Date.now()}`);
    }
    if (st === 'finished') finish('finished');
    else if (st === 'left') finish('disconnected');
    else if (now - started > BigInt(opts.deadline) * 1000000n) finish('timeout');
  }, 1);
});
ws.on('message', (data, isBinary) => {
  if (done || !isBinary) return;
  const at = nowUs();
  if (lastRecv !== 0n && peer.ticks > 0) {
    const gap = at - lastRecv;
    if (gap > maxGapUs) maxGapUs = gap;
    if (gap > 100000n) gaps100ms++;
  }
  lastRecv = at;
  peer.receive(new Uint8Array(data), at);
  peer.poll(nowUs());
  flush();
});
ws.on('close', () => {
  if (!done) finish(peer.state === 'finished' ? 'finished' : 'disconnected');
});
ws.on('error', (e) => {
  console.error(`node_peer: ${e.message}`);
  if (!done) finish('disconnected');
});
