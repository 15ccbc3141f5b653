// SPDX-License-Identifier: MIT
// The browser peer's page: joins `lockstep relay --ws` with the credential in the
// URL fragment (never sent to any server: a fragment is not part of an HTTP
// request) and plays one car of the soccer match with the keyboard, or lets the
// soccer bot drive it. peer.js runs the wasm peer; this file owns the WebSocket,
// the clock and the keys; render3d.js draws the predicted world with three.js,
// and this file's top-down 2D canvas is the fallback without WebGL.
//
// Fragment: #ws=ws://HOST:PORT&cred=CREDENTIAL TEXT&scene=soccer.scene
//           [&bot=1][&mode=lockstep][&prediction=8][&seed=1][&render=2d][&restarted=1]
// A reload (this tab joined with the credential before) rejoins the match in progress.
// A spectator credential (`lockstep relay --spectators N`) makes the page watch:
// it simulates the relay's final ticks and checks every agreed checksum.
// window.__peer: status for tests (state, ticks, checksum, stats, score, renderer).
import sodium from 'libsodium-wrappers';
import { Peer, clockFirstSeq } from './peer.js';
import { create3d } from './render3d.js';

const $ = (id) => document.getElementById(id);
const args = new URLSearchParams(location.hash.slice(1));
const status = { state: 'loading', ticks: 0, checksum: '', stats: {}, score: [0, 0], error: '', log: [], renderer: '2d canvas' };
window.__peer = status;

function fail(message) {
  status.state = 'error';
  status.error = message;
  $('error').textContent = message;
}

const KEYS = {
  KeyW: 1, ArrowUp: 1, KeyS: 2, ArrowDown: 2, KeyA: 4, ArrowLeft: 4, KeyD: 8, ArrowRight: 8,
  Space: 16, ShiftLeft: 32, ShiftRight: 32,
};
const held = new Set();
let bot = args.get('bot') === '1';
let view3d = null; // render3d.js's view once it is up; until then, or without WebGL, the 2D canvas

async function main() {
  const ws = args.get('ws');
  const cred = args.get('cred');
  if (!ws || !cred) {
    fail('join with #ws=ws://HOST:PORT&cred=CREDENTIAL (the text of a credential file)');
    return;
  }
  // Forget the credential in the address bar (it stays in this tab's memory only).
  history.replaceState(null, '', location.pathname + location.search);
  await sodium.ready;
  const [wasm, scene] = await Promise.all([
    fetch('peer.wasm').then((r) => r.arrayBuffer()),
    fetch(args.get('scene') || 'soccer.scene').then((r) => r.text()),
  ]);
  const peer = await Peer.load(wasm, sodium, (fd, line) => status.log.push(line));
  // This tab played with this credential before (a reload): our previous load may still
  // hold the slot, so rejoin it (SPEC.md §17.10); every load numbers its datagrams from
  // the clock, above what a previous one sent (§17.3). The mark is a hash, not the key.
  const mark = `lockstep-joined-${sodium.to_hex(sodium.crypto_generichash(16, cred))}`;
  status.restarted = args.get('restarted') === '1' || sessionStorage.getItem(mark) === '1';
  try {
    peer.create({
      scene, credential: cred, rollback: args.get('mode') !== 'lockstep',
      maxPrediction: Number(args.get('prediction') || 8), seed: Number(args.get('seed') || 1), bot,
      firstSeq: clockFirstSeq(), restarted: status.restarted,
    });
  } catch (e) {
    fail(e.message);
    return;
  }
  const who = () => (peer.spectator ? `spectator ${peer.slot}, watching` : `slot ${peer.slot}, ${bot ? 'bot driving' : 'you drive'}`);
  $('who').textContent = who();
  // The three.js view (render=2d: the 2D canvas only); joining does not wait for it.
  if (args.get('render') !== '2d') {
    create3d($('view'), scene, peer).then((v) => {
      view3d = v;
      status.renderer = v.kind;
      status.draw = v.stats;
      $('field').style.display = 'none';
    }, (e) => {
      status.renderer = `2d canvas (no three.js view: ${e.message})`;
    });
  }
  const now = () => BigInt(Math.round(performance.now() * 1000));
  const sock = new WebSocket(ws);
  sock.binaryType = 'arraybuffer';
  const flush = () => {
    for (const d of peer.drain()) if (sock.readyState === WebSocket.OPEN) sock.send(d);
  };
  let timer = null;
  let marked = false;
  const stop = (why) => {
    clearInterval(timer);
    timer = null;
    status.state = why;
    update(peer);
    if (sock.readyState === WebSocket.OPEN) sock.close(1000);
  };
  sock.onopen = () => {
    status.state = 'joining';
    peer.poll(now());
    flush();
    timer = setInterval(() => {
      const input = [...held].reduce((a, k) => a | KEYS[k], 0);
      peer.setInput(input, bot);
      peer.poll(now());
      flush();
      const st = peer.state;
      if (st === 'running' && !marked && !peer.spectator) marked = !sessionStorage.setItem(mark, '1');
      if (st === 'finished' || st === 'left' || st === 'dropped') stop(st);
    }, 2);
  };
  sock.onmessage = (m) => {
    if (typeof m.data === 'string' || !timer) return;
    peer.receive(new Uint8Array(m.data), now());
    peer.poll(now());
    flush();
  };
  sock.onclose = (e) => {
    if (timer) stop(peer.state === 'finished' ? 'finished' : 'disconnected');
    if (e.code !== 1000 && e.code !== 1005 && status.state !== 'finished') fail(`WebSocket closed (${e.code} ${e.reason})`);
  };
  sock.onerror = () => fail(`cannot connect to ${ws} (is the relay's --ws-origin this page's origin?)`);
  addEventListener('keydown', (e) => {
    if (e.code === 'KeyB') {
      bot = !bot;
      $('who').textContent = who();
    } else if (e.code in KEYS) {
      held.add(e.code);
      e.preventDefault();
    }
  });
  addEventListener('keyup', (e) => held.delete(e.code));
  const frame = () => {
    update(peer);
    if (view3d) view3d.draw();
    else draw(peer);
    if (['loading', 'joining', 'running'].includes(status.state)) requestAnimationFrame(frame);
  };
  requestAnimationFrame(frame);
  setInterval(() => update(peer), 250); // also when no frames are drawn (hidden tab, headless)
}

function update(peer) {
  const s = peer.stats();
  Object.assign(status, { ticks: peer.ticks, checksum: peer.checksum, stats: s, score: peer.score(), slot: peer.slot });
  if (status.state === 'joining' && ['running', 'watching'].includes(peer.state)) status.state = 'running';
  status.spectator = peer.spectator;
  const badge = $('badge');
  badge.textContent = `tick ${peer.confirmed} checksum ${peer.checksum}`;
  badge.className = s.desyncs || s.named ? 'bad' : peer.ticks ? 'ok' : '';
  $('score').textContent = `score ${status.score[0]}-${status.score[1]}`;
  const hit = s.predicted ? ((100 * s.predicted_hits) / s.predicted).toFixed(1) + ' %' : '—';
  $('stats').textContent = [
    `state        ${status.state} (peer ${peer.state})`,
    `ticks        ${peer.ticks} simulated, inputs confirmed below ${peer.confirmed}`,
    `rtt          ${(s.rtt_us / 1000).toFixed(1)} ms (to the relay)`,
    `rollbacks    ${s.rollbacks} (longest ${s.max_rollback} ticks)`,
    `resim/frame  ${s.frames ? (s.resimulated / s.frames).toFixed(2) : '0'} (max ${s.max_resim_frame})`,
    `prediction   ${hit} right`,
    `packets      ${s.packets_in} in, ${s.packets_out} out, ${s.dropped} dropped`,
    `desyncs      ${s.desyncs}`,
  ].join('\n');
}

// The fallback: top down, x to the right, z up the screen, metres scaled to fit the 30 x 52 m arena.
function draw(peer) {
  const c = $('field');
  const w = (c.width = c.clientWidth);
  const h = (c.height = c.clientHeight);
  const g = c.getContext('2d');
  const k = Math.min(w / 34, h / 56);
  const X = (x) => w / 2 + x * k;
  const Z = (z) => h / 2 - z * k;
  g.fillStyle = '#24452c';
  g.fillRect(X(-15), Z(22), 30 * k, 44 * k);
  g.fillStyle = '#555';
  g.fillRect(X(-5), Z(26), 10 * k, 4 * k);
  g.fillRect(X(-5), Z(-22), 10 * k, 4 * k);
  const poses = peer.poses();
  const players = new Map();
  for (let s = 0; s < 16; s++) {
    const b = peer.playerBody(s);
    if (b >= 0) players.set(b, s);
  }
  poses.forEach((p, i) => {
    if (i === 0) return; // the arena mesh
    const slot = players.get(i);
    if (slot === undefined) {
      g.fillStyle = '#f4f4f4';
      g.beginPath();
      g.arc(X(p.x), Z(p.z), k, 0, 2 * Math.PI);
      g.fill();
      return;
    }
    // Heading: the car's +z axis rotated by its quaternion (w x y z, Q16.16), on the ground.
    const [qw, qx, qy, qz] = p.q.map((v) => v / 65536);
    const hx = 2 * (qx * qz + qw * qy);
    const hz = 1 - 2 * (qx * qx + qy * qy);
    const a = Math.atan2(hx, hz);
    g.save();
    g.translate(X(p.x), Z(p.z));
    g.rotate(a);
    g.fillStyle = slot % 2 ? '#e0603a' : '#3a8ee0';
    g.fillRect(-k, -2 * k, 2 * k, 4 * k);
    if (slot === peer.slot) {
      g.strokeStyle = '#ffeb3b';
      g.lineWidth = 2;
      g.strokeRect(-k, -2 * k, 2 * k, 4 * k);
    }
    g.restore();
  });
}

main().catch((e) => fail(String(e && e.message ? e.message : e)));
