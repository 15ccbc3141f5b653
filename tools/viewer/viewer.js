// SPDX-License-Identifier: MIT
// The replay viewer: re-simulates a .lsr in WebAssembly from its inputs alone,
// verifies every tick's checksum against the recording (badge), and draws the
// world with three.js. Handle 0 is what you watch (play, step, scrub through
// keyframes); handle 1 verifies the whole recording from tick 0 in the
// background, as `lockstep replay verify` does; handle 2 is for the bench.
// A relay's recording keeps the players' claims where their checksums disagreed
// (format 2): those ticks are marked on the timeline, the HUD lists the claims of
// the current tick and which one re-simulation backs, and the header says who
// was wrong (the `disputes:` line of `lockstep replay verify`).
// A recording that does not verify gets a magenta mark on the timeline at the
// state after its first divergent tick, and the bodies whose state differs at
// the next keyframe (re-simulated vs recorded) are drawn in magenta.
// Tick numbers as in the CLI (SPEC.md §16.7): tick T is a 0-based index and its
// state the one after it; the counter, the timeline and &tick=N count the ticks
// run, so `DESYNC at tick T` is the state at &tick=T+1.
// URL parameters: ?replay=URL or ?scene=URL, &tick=N (start at the state after
// N ticks, as `lockstep render --tick N`), &play=1.
import * as THREE from 'three';
import { OrbitControls } from 'three/addons/controls/OrbitControls.js';
import { Engine, hex64 } from './engine.js';
import { bodyObject as makeBodyObject, polyGeometry } from './shapes3d.js';

const $ = (id) => document.getElementById(id);
const DESYNC_COLOR = 0xff1ac7; // magenta, as `lockstep replay diff --png`
const VIEW = 0;
const VERIFY = 1;
const BENCH = 2;

const PALETTE = [0xdb854d, 0xe6bd57, 0x8fbd6b, 0xcc7080, 0x85a3d6, 0xb38fd1];
const PLAYERS = [0xe63833, 0x3373eb, 0x38bf4d, 0xf2cc26];
const SLATE = new THREE.Color(0x4d6199);

const state = {
  engine: null,
  name: '',
  replay: false,
  ticks: 0,
  tickRate: 60,
  playing: false,
  speed: 1,
  acc: 0,
  bodies: [], // { shape, object, material, ground, baseColor, fixed }
  geometries: new Map(), // geometry index -> THREE.BufferGeometry (hulls, meshes)
  selected: -1,
  claims: [], // [{ tick, disputed, players: [{ player, claim }] }]
  claimAt: new Map(), // tick -> its entry of claims
  verify: { done: false, ok: false, verified: 0, text: 'no replay', final: null, mismatch: null, disputes: '' },
  diverged: new Set(), // body indexes drawn in the desync colour
  divergedAt: null, // the keyframe (ticks run) they were compared at
  error: '',
};

// ------------------------------------------------------------------ three.js
const view = $('view');
const renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
renderer.setPixelRatio(1);
view.appendChild(renderer.domElement);
const scene3 = new THREE.Scene();
scene3.background = new THREE.Color(0xb4cbe6);
scene3.fog = new THREE.Fog(0xc8d6e6, 80, 400);
const camera = new THREE.PerspectiveCamera(40, 1, 0.05, 2000);
const controls = new OrbitControls(camera, renderer.domElement);
controls.enableDamping = false;
scene3.add(new THREE.HemisphereLight(0xffffff, 0x777766, 1.4));
const sun = new THREE.DirectionalLight(0xffffff, 1.8);
sun.position.set(0.35, 1, 0.55);
scene3.add(sun);
const world = new THREE.Group();
scene3.add(world);

function resize() {
  const w = view.clientWidth || 640;
  const h = view.clientHeight || 400;
  renderer.setSize(w, h, false);
  camera.aspect = w / h;
  camera.updateProjectionMatrix();
}
window.addEventListener('resize', resize);

function bodyColor(s, i) {
  if (s.player >= 0) return PLAYERS[s.player % PLAYERS.length];
  if (s.type === 'static') return 0x9a9ca3;
  if (s.type === 'kinematic') return 0xf28c1a;
  return PALETTE[i % PALETTE.length];
}

// Hulls and meshes: one three.js geometry per geometry index the engine
// exported (shapes3d.js builds them), made on first use.
function geometryAt(index) {
  if (index < 0) return null;
  if (state.geometries.has(index)) return state.geometries.get(index);
  const g = state.engine.geometry(VIEW, index);
  if (!g) return null;
  const geo = polyGeometry(g);
  state.geometries.set(index, geo);
  return geo;
}

// Body i's object (shapes3d.js): one mesh, or a Group of one child per shape.
const bodyObject = (s, material, ground) => makeBodyObject(s, material, ground, { geometry: geometryAt, renderer });

function describe(p) {
  const f = (v) => v.map((x) => x.toFixed(3)).join(', ');
  const g = p.geometry >= 0 ? state.geometries.get(p.geometry)?.userData : null;
  if (p.shape === 'sphere') return `radius ${p.radius.toFixed(3)}`;
  if (p.shape === 'capsule') return `radius ${p.radius.toFixed(3)}, half height ${p.halfHeight.toFixed(3)}`;
  if (p.shape === 'box') return `half extents ${f(p.halfExtents)}`;
  if (p.shape === 'plane') return `normal ${f(p.normal)}, d ${p.planeD.toFixed(3)}`;
  if (p.shape === 'hull' && g) return `${g.vertices} vertices, ${g.faces} faces`;
  if (p.shape === 'mesh' && g) return `${g.vertices} vertices, ${g.faces} triangles`;
  return '';
}

function buildWorld() {
  world.clear();
  state.bodies = [];
  state.geometries.forEach((g) => g.dispose());
  state.geometries = new Map();
  const shapes = state.engine.shapes(VIEW);
  shapes.forEach((s, i) => {
    const baseColor = new THREE.Color(s.shape === 'plane' ? 0xd6d4c7 : bodyColor(s, i));
    const material = new THREE.MeshLambertMaterial({ color: baseColor.clone() });
    // Planes and meshes (terrain): ground colours, both sides of a mesh drawn.
    const ground = s.shape === 'plane' ? material
      : new THREE.MeshLambertMaterial({ color: 0xa8b38f, side: THREE.DoubleSide });
    const object = bodyObject(s, material, ground);
    if (object) {
      object.userData.body = i;
      object.traverse((o) => {
        o.userData.body = i;
      });
      world.add(object);
    }
    const fixed = s.parts.length > 0 && s.parts.every((p) => p.shape === 'plane');
    state.bodies.push({ shape: s, object, material, ground, baseColor, fixed });
  });
  frameCamera();
}

function frameCamera() {
  const box = new THREE.Box3();
  updatePoses();
  state.bodies.forEach((b) => {
    if (b.object && !b.fixed) box.expandByObject(b.object);
  });
  if (box.isEmpty()) box.set(new THREE.Vector3(-5, 0, -5), new THREE.Vector3(5, 5, 5));
  const center = box.getCenter(new THREE.Vector3());
  const radius = Math.max(1, box.getSize(new THREE.Vector3()).length() / 2);
  const dir = new THREE.Vector3(0.55, 0.85, 1).normalize();
  const fit = radius / Math.sin(THREE.MathUtils.degToRad(camera.fov / 2)) * 0.85;
  camera.position.copy(center).addScaledVector(dir, fit);
  controls.target.copy(center);
  controls.update();
}

function updatePoses() {
  const { data, stride, scale } = state.engine.poses(VIEW);
  state.bodies.forEach((b, i) => {
    if (!b.object || b.fixed) return;
    const o = i * stride;
    b.object.position.set(data[o] * scale, data[o + 1] * scale, data[o + 2] * scale);
    b.object.quaternion.set(data[o + 3] * scale, data[o + 4] * scale, data[o + 5] * scale, data[o + 6] * scale);
    const asleep = data[o + 7] !== 0;
    b.asleep = asleep;
    b.material.color.copy(b.baseColor);
    if (asleep) b.material.color.lerp(SLATE, 0.55);
    if (state.diverged.has(i)) b.material.color.setHex(DESYNC_COLOR);
    b.material.emissive.setHex(i === state.selected ? 0x444444 : 0x000000);
    if (b.ground !== b.material) b.ground.emissive.setHex(i === state.selected ? 0x333333 : 0x000000);
  });
}

// ------------------------------------------------------------------ verification
function setBadge() {
  const v = state.verify;
  const badge = $('badge');
  badge.textContent = v.text;
  badge.className = !state.replay ? '' : v.done ? (v.ok ? 'ok' : 'bad') : 'busy';
  badge.title = v.final ? `final checksum ${v.final}` : '';
  $('disputes').textContent = v.disputes || '';
}

// The tool's summary of the verdicts (tools/cmd_replay_verify.c), word for word:
// "disputes: N ticks (D disputed) from tick T; wrong: player P (K ticks), ...".
function disputesLine(d) {
  if (!d.ticks) return '';
  const s = (n) => (n === 1 ? '' : 's');
  const wrong = d.wrong.map((w) => `player ${w.player} (${w.ticks} tick${s(w.ticks)})`).join(', ');
  return `disputes: ${d.ticks} tick${s(d.ticks)} (${d.disputed} disputed) from tick ${d.first}; wrong: ${wrong || 'nobody'}`;
}

// One mark per run of consecutive claimed ticks of one kind, placed along the timeline.
function drawMarks() {
  const marks = $('marks');
  marks.replaceChildren();
  const n = Math.max(1, state.ticks);
  let run = null;
  const flush = () => {
    if (!run) return;
    const m = document.createElement('div');
    m.className = run.disputed ? 'mark' : 'mark majority';
    m.style.left = `${(run.first / n) * 100}%`;
    m.style.width = `${((run.last - run.first + 1) / n) * 100}%`;
    m.dataset.tick = String(run.first);
    m.dataset.count = String(run.last - run.first + 1);
    m.title = `ticks ${run.first}..${run.last}: ${run.disputed ? 'disputed' : 'a majority named someone'}`;
    marks.appendChild(m);
  };
  for (const c of state.claims) {
    if (run && c.tick === run.last + 1 && c.disputed === run.disputed) {
      run.last = c.tick;
    } else {
      flush();
      run = { first: c.tick, last: c.tick, disputed: c.disputed };
    }
  }
  flush();
  const m = state.verify.mismatch;
  if (m) { // at the state after the divergent tick: timeline value tick + 1
    const d = document.createElement('div');
    d.className = 'mark desync';
    d.style.left = `${(Math.min(m.tick + 1, n) / n) * 100}%`;
    d.dataset.tick = String(m.tick);
    d.title = `DESYNC at tick ${m.tick} (the state at ${m.tick + 1} ticks)`;
    marks.appendChild(d);
  }
}

// After a desync at tick T in handle VERIFY: the bodies whose pose differs at
// the first keyframe after T between the re-simulation (VERIFY, stepped on)
// and the recording (the keyframe restored in handle BENCH). Sets
// state.diverged (indexes) and state.divergedAt (the keyframe's ticks run).
function findDiverged(bytes, tick) {
  const e = state.engine;
  state.diverged = new Set();
  state.divergedAt = null;
  const kf = e.keyframes(VERIFY).find((k) => k > tick);
  if (kf === undefined) return;
  while (e.tick(VERIFY) < kf) {
    if (e.run(VERIFY, kf - e.tick(VERIFY)) === 0) return;
  }
  const a = e.poses(VERIFY);
  const computed = a.data.slice();
  try {
    e.open(BENCH, bytes);
    e.seek(BENCH, kf);
    const recorded = e.poses(BENCH).data;
    for (let i = 0; i * a.stride < computed.length; i++) {
      for (let k = 0; k < a.stride; k++) {
        if (computed[i * a.stride + k] !== recorded[i * a.stride + k]) {
          state.diverged.add(i);
          break;
        }
      }
    }
    state.divergedAt = kf;
  } finally {
    e.close(BENCH);
  }
}

// Re-simulate the whole recording from tick 0 in handle VERIFY, a slice per
// macrotask so the page stays responsive. Same report as the CLI's.
function startVerify(bytes) {
  const e = state.engine;
  e.open(VERIFY, bytes);
  const total = e.ticks(VERIFY);
  state.verify = { done: false, ok: false, verified: 0, text: `verifying 0/${total} ticks`, final: null, mismatch: null, disputes: '' };
  const token = {};
  state.verifyToken = token;
  const slice = () => {
    if (state.verifyToken !== token) return;
    const t0 = performance.now();
    while (performance.now() - t0 < 12) {
      const n = e.run(VERIFY, 64);
      const m = e.mismatch(VERIFY);
      if (m) {
        state.verify = {
          done: true, ok: false, verified: e.verified(VERIFY), mismatch: m, final: null,
          text: `DESYNC at tick ${m.tick}: recorded ${m.recorded} computed ${m.computed}`,
          disputes: disputesLine(e.verdicts(VERIFY)),
        };
        try {
          findDiverged(bytes, m.tick);
        } catch (err) {
          showError(`desync: ${err.message}`);
        }
        state.verify.diverged = [...state.diverged].map((i) => i + 1);
        state.verify.divergedAt = state.divergedAt;
        drawMarks();
        setBadge();
        refresh();
        return;
      }
      if (n < 64 || e.tick(VERIFY) >= total) {
        const verified = e.verified(VERIFY);
        const final = e.checksum(VERIFY);
        state.verify = {
          done: true, ok: verified === total, verified, mismatch: null, final,
          text: verified === total ? `verified ${verified} ticks` : `stopped at tick ${e.tick(VERIFY)} of ${total}`,
          disputes: disputesLine(e.verdicts(VERIFY)),
        };
        setBadge();
        return;
      }
    }
    state.verify.text = `verifying ${e.tick(VERIFY)}/${total} ticks`;
    setBadge();
    setTimeout(slice, 0);
  };
  setBadge();
  setTimeout(slice, 0);
}

// ------------------------------------------------------------------ loading
async function fetchBytes(url) {
  const r = await fetch(url);
  if (!r.ok) throw new Error(`cannot fetch ${url}: HTTP ${r.status}`);
  return new Uint8Array(await r.arrayBuffer());
}

function showError(msg) {
  state.error = msg;
  $('error').textContent = msg;
}

// The files a scene's `mesh obj FILE` lines name (none for replays: their
// embedded scene carries its meshes inline).
function objFiles(bytes) {
  if (bytes.length >= 4 && bytes[0] === 0x4c && bytes[1] === 0x53 && bytes[2] === 0x52 && bytes[3] === 0x50) return [];
  const text = new TextDecoder().decode(bytes);
  const names = [];
  for (const line of text.split('\n')) {
    const m = line.replace(/#.*/, '').match(/(?:^|\s)obj\s+(\S+)/);
    if (m && /(^|\s)mesh(\s|$)/.test(line) && !names.includes(m[1])) names.push(m[1]);
  }
  return names;
}

// Fetch the scene's OBJ files next to its URL into the engine's files (under
// "scene/"); a missing one is left for the scene parser to report.
async function fetchObjFiles(bytes, url) {
  const files = state.engine.files;
  files.clear();
  for (const name of objFiles(bytes)) {
    try {
      files.set(`scene/${name}`, await fetchBytes(new URL(name, new URL(url, location.href)).href));
    } catch {
      // reported by the parser: "mesh obj NAME: cannot open the file"
    }
  }
}

async function loadUrl(url) {
  const bytes = await fetchBytes(url);
  await fetchObjFiles(bytes, url);
  return load(bytes, url.split('/').pop());
}

function load(bytes, name) {
  const e = state.engine;
  showError('');
  state.verifyToken = null;
  try {
    e.open(VIEW, bytes, 'scene');
  } catch (err) {
    showError(`${name}: ${err.message}`);
    return false;
  }
  state.name = name;
  state.replay = e.isReplay(VIEW);
  state.ticks = e.ticks(VIEW);
  state.tickRate = e.tickRate(VIEW) || 60;
  state.selected = -1;
  state.playing = false;
  $('info').style.display = 'none';
  $('source').textContent = `${name} (${state.replay ? 'replay' : 'scene'}, ${e.bodyCount(VIEW)} bodies, ${state.ticks} ticks)`;
  $('timeline').max = String(state.ticks);
  state.claims = state.replay ? e.claims(VIEW) : [];
  state.claimAt = new Map(state.claims.map((c) => [c.tick, c]));
  state.diverged = new Set();
  state.divergedAt = null;
  state.verify.mismatch = null;
  drawMarks();
  buildWorld();
  if (state.replay) {
    startVerify(bytes);
  } else {
    e.close(VERIFY);
    state.verify = { done: true, ok: true, verified: 0, text: 'scene: nothing recorded to verify', final: null, mismatch: null, disputes: '' };
    setBadge();
  }
  refresh();
  return true;
}

// ------------------------------------------------------------------ playback
function seek(t) {
  const e = state.engine;
  t = Math.max(0, Math.min(state.replay ? state.ticks : 1 << 30, t));
  try {
    e.seek(VIEW, t);
  } catch (err) {
    showError(err.message);
  }
  refresh();
}

function stepOnce() {
  const e = state.engine;
  if (state.replay && e.tick(VIEW) >= state.ticks) return false;
  e.run(VIEW, 1);
  return true;
}

function refresh() {
  const e = state.engine;
  const t = e.tick(VIEW);
  updatePoses();
  $('timeline').value = String(Math.min(t, state.ticks));
  // Ticks run (the state after tick t - 1), as `verified N ticks` and `render --tick N`.
  $('tick').textContent = `${t} / ${state.ticks} ticks`;
  let hud = `ticks     ${t}\nchecksum  ${e.checksum(VIEW)}`;
  if (state.replay && t > 0) {
    // The state after t ticks is the truth of tick t - 1: at a tick with claims,
    // the recorded checksum may be a wrong claim (a disputed tick records the
    // lowest player's), and each claim is right or wrong.
    const rec = e.recorded(VIEW, t - 1);
    const sum = e.checksum(VIEW);
    const c = state.claimAt.get(t - 1);
    const backed = c && c.players.some((p) => p.claim === sum);
    hud += `\nrecorded  ${rec}  ${rec === sum ? 'match' : backed ? 'a wrong claim (see below)' : 'MISMATCH'}`;
    if (c) {
      hud += `\nclaims    tick ${c.tick}, ${c.disputed ? 'disputed' : 'majority'}`;
      for (const p of c.players) hud += `\n  player ${p.player}  ${p.claim}  ${p.claim === sum ? 'right' : 'WRONG'}`;
    }
  }
  const m = state.verify.mismatch;
  if (m) {
    const ids = [...state.diverged].map((i) => i + 1).join(', ');
    hud += `\ndesync    tick ${m.tick} (state at ${m.tick + 1})`;
    if (state.divergedAt !== null) hud += `\ndiverged  ${ids || 'none'} (at keyframe ${state.divergedAt})`;
  }
  const asleep = state.bodies.filter((b) => b.asleep).length;
  hud += `\nbodies    ${state.bodies.length} (${asleep} asleep)`;
  $('hud').textContent = hud;
  if (state.selected >= 0) showInfo(state.selected);
  $('play').innerHTML = state.playing ? '&#10074;&#10074;' : '&#9654;';
}

function showInfo(i) {
  const b = state.bodies[i];
  const s = b.shape;
  const d = state.engine.detail(VIEW, i);
  const p = b.object ? b.object.position : new THREE.Vector3();
  const f = (v) => v.map((x) => x.toFixed(3)).join(', ');
  let what = `${s.type} ${s.shape}, ${describe(s.parts[0] ?? s)}`;
  if (s.parts.length > 1) {
    what = `${s.type} compound, ${s.parts.length} shapes:\n` +
      s.parts.map((q) => `  ${q.shape} ${describe(q)} at ${f(q.position)}`).join('\n');
  }
  $('info').textContent =
    `body ${s.id}${s.player >= 0 ? ` (player ${s.player})` : ''}\n` +
    `${what}\n` +
    `position  ${f([p.x, p.y, p.z])}\n` +
    `velocity  ${f(d.linearVelocity)}\n` +
    `angular   ${f(d.angularVelocity)}\n` +
    `mass      ${d.mass.toFixed(3)} kg\n` +
    `asleep    ${b.asleep ? 'yes' : 'no'}`;
  $('info').style.display = 'block';
}

let last = performance.now();
function frame(now) {
  const dt = Math.min(0.25, (now - last) / 1000);
  last = now;
  if (state.engine && state.playing) {
    state.acc += dt * state.speed * state.tickRate;
    let stepped = false;
    while (state.acc >= 1) {
      state.acc -= 1;
      if (!stepOnce()) {
        state.playing = false;
        state.acc = 0;
        break;
      }
      stepped = true;
    }
    if (stepped || !state.playing) refresh();
  }
  controls.update();
  renderer.render(scene3, camera);
  requestAnimationFrame(frame);
}

// ------------------------------------------------------------------ input
$('play').addEventListener('click', () => {
  if (state.replay && state.engine.tick(VIEW) >= state.ticks) seek(0);
  state.playing = !state.playing;
  refresh();
});
$('step').addEventListener('click', () => {
  state.playing = false;
  stepOnce();
  refresh();
});
$('speed').addEventListener('change', (ev) => {
  state.speed = Number(ev.target.value);
});
$('timeline').addEventListener('input', (ev) => {
  seek(Number(ev.target.value));
});
$('file').addEventListener('change', async (ev) => {
  const f = ev.target.files[0];
  // Several files may be chosen: the scene or replay, and the OBJ files it names.
  const files = [...ev.target.files];
  const main = files.find((x) => /\.(lsr|scene)$/i.test(x.name)) ?? files[0];
  if (!main) return;
  state.engine.files.clear();
  for (const x of files) {
    if (x !== main) state.engine.files.set(`scene/${x.name}`, new Uint8Array(await x.arrayBuffer()));
  }
  load(new Uint8Array(await main.arrayBuffer()), main.name);
});
window.addEventListener('keydown', (ev) => {
  if (ev.target instanceof HTMLInputElement && ev.target.type !== 'range') return;
  if (ev.key === ' ') {
    ev.preventDefault();
    $('play').click();
  } else if (ev.key === '.') {
    $('step').click();
  } else if (ev.key === ',') {
    seek(state.engine.tick(VIEW) - 1);
  }
});

const raycaster = new THREE.Raycaster();
let downAt = null;
renderer.domElement.addEventListener('pointerdown', (ev) => {
  downAt = [ev.clientX, ev.clientY];
});
renderer.domElement.addEventListener('pointerup', (ev) => {
  if (!downAt || Math.hypot(ev.clientX - downAt[0], ev.clientY - downAt[1]) > 4) return;
  pick(ev.clientX, ev.clientY);
});

/** Select the body under client pixel (x, y); returns its 1-based id or 0. */
function pick(x, y) {
  const r = renderer.domElement.getBoundingClientRect();
  const ndc = new THREE.Vector2(((x - r.left) / r.width) * 2 - 1, -((y - r.top) / r.height) * 2 + 1);
  raycaster.setFromCamera(ndc, camera);
  const hit = raycaster
    .intersectObjects(world.children, true)
    .find((h) => h.object.userData.body !== undefined);
  state.selected = hit ? hit.object.userData.body : -1;
  if (state.selected < 0) $('info').style.display = 'none';
  refresh();
  return state.selected + 1;
}

// ------------------------------------------------------------------ bench and test hooks
/** Re-simulate a replay from tick 0 to its end `repeats` times in handle BENCH; best ticks/s. */
async function bench(url, repeats = 3) {
  const bytes = await fetchBytes(url);
  const e = state.engine;
  let best = 0;
  let ticks = 0;
  let final = '';
  for (let r = 0; r < repeats; r++) {
    e.open(BENCH, bytes);
    const t0 = performance.now();
    ticks = e.run(BENCH, e.ticks(BENCH));
    const rate = ticks / ((performance.now() - t0) / 1000);
    if (e.mismatch(BENCH) || e.verified(BENCH) !== e.ticks(BENCH)) throw new Error('bench replay did not verify');
    final = e.checksum(BENCH);
    best = Math.max(best, rate);
    await new Promise((res) => setTimeout(res, 0));
  }
  e.close(BENCH);
  return { ticks, ticksPerSecond: best, final };
}

window.__lockstep = {
  state,
  seek,
  step: () => $('step').click(),
  pick,
  bench,
  /** Client pixel of body i's centre. */
  screenOf: (i) => {
    const p = state.bodies[i].object.position.clone().project(camera);
    const r = renderer.domElement.getBoundingClientRect();
    return { x: r.left + ((p.x + 1) / 2) * r.width, y: r.top + ((1 - p.y) / 2) * r.height };
  },
  load: loadUrl,
  verdict: () => ({ ...state.verify, name: state.name, tick: state.engine?.tick(VIEW) ?? 0, error: state.error }),
  hex64,
};

// ------------------------------------------------------------------ start
async function main() {
  resize();
  requestAnimationFrame(frame);
  try {
    state.engine = await Engine.load('lockstep.wasm');
  } catch (err) {
    showError(`engine: ${err.message}`);
    return;
  }
  const params = new URLSearchParams(location.search);
  const url = params.get('replay') || params.get('scene');
  if (url) {
    try {
      if (await loadUrl(url)) {
        const t = Number(params.get('tick') || 0);
        if (t > 0) seek(t);
        if (params.get('play') === '1') state.playing = true;
      }
    } catch (err) {
      showError(err.message);
    }
  }
  window.__lockstep.ready = true;
}
main();
