// SPDX-License-Identifier: MIT
// A mixed match: a relay with --ws, N native `lockstep bot`s on UDP (slots
// 0..N-1, rollback) and M pages (index.html, page.js) in Debian's headless
// Chromium through puppeteer-core (slots N..N+M-1, rollback, over WebSockets),
// as `make viewer-test` drives Chromium. The first page's car is driven with
// the keyboard (puppeteer presses keys) and drawn with three.js (WebGL on
// SwiftShader, on the CPU), the others driven by the soccer bot in wasm and
// drawn with the 2D canvas (render=2d, the fallback without WebGL: one software
// WebGL page is what two shared cores afford beside the match); each page gets
// its credential in the URL fragment. Prints the peers' table
// (which are browsers), then passes when every peer ends on the same final
// checksum with 0 desyncs, the first page drew with three.js (WebGL through
// SwiftShader), and the relay's recording verifies natively and in the replay
// viewer's page (ROOT/viewer/, `make browser-peer-page`) in the same Chromium.
//   node browser_match.mjs TOOL ROOT SCENE TICKS TICK_RATE NATIVE PAGES [SHOT.png]
//        [--spectators S] [-- FAULTS]
// --spectators S: S more pages join with spectator credentials and watch; they
// must simulate every tick to the same final checksum with 0 mismatches; they
// draw with the 2D canvas too.
// --reload TICK: the last page is reloaded (its URL with the fragment put back, then
// a reload) at its tick TICK; the new load must rejoin (SPEC.md §17.10) and end equal.
// The relay then runs with --timeout 1500 --rejoin-ms 20000.
// FAULTS (--loss P --jitter MS ...) go to the relay and to the native bots: the
// UDP side (the relay never faults a WebSocket). Used by `make browser-peer-test`
// (2 + 2, then 1 + 2 with --reload) and `make browser-match` (2 + 2).
import { spawn, spawnSync } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import process from 'node:process';
import puppeteer from 'puppeteer-core';
import { CHROMIUM, FLAGS as CHROMIUM_FLAGS, openAndVerify } from '../viewer/chromium.mjs';
import { serve } from '../viewer/serve.mjs';

const argv = process.argv.slice(2);
const dash = argv.indexOf('--');
const faults = dash >= 0 ? argv.splice(dash).slice(1) : [];
const sp = argv.indexOf('--spectators');
const spectators = sp >= 0 ? Number(argv.splice(sp, 2)[1]) : 0;
const rl = argv.indexOf('--reload');
const reloadTick = rl >= 0 ? Number(argv.splice(rl, 2)[1]) : 0;
const [tool, root, scene, ticks, rate, nativeArg, pagesArg, shot] = argv;
const natives = Number(nativeArg);
const pages = Number(pagesArg);
const slots = natives + pages;
if (!tool || !(natives >= 0 && pages >= 1 && slots >= 2 && slots <= 16) || !(spectators >= 0 && spectators <= 16)) {
  console.error('usage: node browser_match.mjs TOOL ROOT SCENE TICKS TICK_RATE NATIVE PAGES [SHOT.png] [-- FAULTS]');
  process.exit(2);
}
const FLAGS = [...CHROMIUM_FLAGS, // WebGL through SwiftShader, as the viewer's test
  // Every page plays in real time, visible or not.
  '--disable-background-timer-throttling', '--disable-renderer-backgrounding',
  '--disable-backgrounding-occluded-windows'];
const dir = await mkdtemp(path.join(os.tmpdir(), 'lockstep-browser-match-'));
const children = [];
let failures = 0;
const check = (ok, what) => {
  if (!ok) failures++;
  console.log(`browser-match: ${ok ? 'ok  ' : 'FAIL'} ${what}`);
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function run(args) {
  const out = [];
  const child = spawn(tool, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.on('data', (d) => out.push(d));
  child.stderr.on('data', (d) => out.push(d));
  children.push(child);
  const exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  return { text: () => Buffer.concat(out).toString(), exited };
}
const field = (line, key) => (line.match(new RegExp(` ${key}=(\\S+)`)) || [])[1];
const pct = (hits, n) => (n ? ((100 * hits) / n).toFixed(1) : '100.0') + ' %';

// --reload: at its tick `tick`, the page is loaded again as a user's reload would (the
// fragment back in the address bar, then reload: a new document, a new WebSocket, a new
// wasm peer that remembers nothing); it must come back with a rejoin.
async function reloadScenario(page, pageUrl, tick) {
  const playing = (t) => window.__peer.ticks >= t || !['loading', 'joining', 'running'].includes(window.__peer.state);
  await page.waitForFunction(playing, { timeout: 120000, polling: 10 }, tick);
  const at = await page.evaluate(() => window.__peer.ticks);
  const t0 = Date.now();
  await page.evaluate((u) => history.replaceState(null, '', u), pageUrl);
  await page.reload();
  await page.waitForFunction(() => window.__peer.stats.rejoins > 0 ||
    ['error', 'left', 'disconnected', 'finished'].includes(window.__peer.state), { timeout: 60000, polling: 10 });
  const ms = Date.now() - t0;
  const st = await page.evaluate(() => ({ restarted: window.__peer.restarted, rejoins: window.__peer.stats.rejoins, ticks: window.__peer.ticks }));
  check(st.restarted && st.rejoins === 1,
    `the page reloaded at tick ${at} rejoined ${ms} ms after the reload (now at tick ${st.ticks})`);
}

const { server, url } = await serve(root, 0);
const origin = url.replace(/\/$/, '');
let browser = null;
let replayCopy = null;
try {
  const relay = run(['relay', '--ws', '127.0.0.1:0', '--ws-origin', origin, '--workers', '1',
    '--slots', String(slots), '--ticks', ticks, '--tick-rate', rate, '--credentials', dir,
    '--record', path.join(dir, 'm.lsr'), '--scene', scene, '--seed', '1', '--exit-when-done',
    ...(spectators ? ['--spectators', String(spectators)] : []),
    ...(reloadTick ? ['--timeout', '1500', '--rejoin-ms', '20000'] : []), ...faults]);
  for (let i = 0; i < 100 && !/^ready/m.test(relay.text()); i++) await sleep(100);
  const udp = (relay.text().match(/^listening (\S+)/m) || [])[1];
  const ws = (relay.text().match(/^ws (\S+)/m) || [])[1];
  if (!udp || !ws) throw new Error(`the relay did not start:\n${relay.text()}`);
  globalThis.relayForDiagnosis = relay;
  const cred = (k) => path.join(dir, `session-1-slot-${k}.cred`);

  const bots = [];
  for (let k = 0; k < natives; k++) {
    bots.push(run(['bot', '--relay', udp, '--credential', cred(k), '--scene', scene, '--mode', 'rollback', ...faults]));
  }
  browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true,
    args: [...FLAGS, `--user-data-dir=${path.join(dir, 'chromium')}`], defaultViewport: { width: 900, height: 700 } });
  const tabs = [];
  const tabUrls = [];
  globalThis.tabsForDiagnosis = tabs;
  for (let i = 0; i < pages; i++) {
    const page = await browser.newPage();
    page.on('pageerror', (e) => console.log(`  [page ${natives + i} error] ${e.message}`));
    page.on('console', (m) => m.type() === 'error' && console.log(`  [page ${natives + i} error] ${m.text()}`));
    const params = { ws: `ws://${ws}`, cred: await readFile(cred(natives + i), 'utf8'), scene: 'soccer.scene' };
    if (i > 0) Object.assign(params, { bot: '1', render: '2d' });
    tabs.push(page);
    tabUrls.push(`${url}index.html#${new URLSearchParams(params)}`);
    await page.goto(tabUrls[i]);
  }
  const watchers = [];
  for (let i = 0; i < spectators; i++) {
    const page = await browser.newPage();
    page.on('pageerror', (e) => console.log(`  [spectator ${i} error] ${e.message}`));
    const c = await readFile(path.join(dir, `session-1-spectator-${i}.cred`), 'utf8');
    watchers.push(page);
    await page.goto(`${url}index.html#${new URLSearchParams({ ws: `ws://${ws}`, cred: c, scene: 'soccer.scene', render: '2d' })}`);
  }
  const started = Date.now();
  const first = tabs[0];
  await first.bringToFront(); // the tab in front draws frames (requestAnimationFrame) all match long
  check(await first.evaluate(() => location.hash === ''), 'the credential is gone from the address bar');
  const reloading = reloadTick ? reloadScenario(tabs[pages - 1], tabUrls[pages - 1], reloadTick) : null;
  await first.waitForFunction(() => ['running', 'finished', 'error'].includes(window.__peer.state), { timeout: 30000, polling: 50 });
  // The first page's keys: throttle throughout, steer left, boost, steer right.
  const n = Number(ticks);
  const at = (tick) => first.waitForFunction((t) => window.__peer.ticks >= t || window.__peer.state !== 'running',
    { timeout: 300000, polling: 20 }, tick);
  await first.keyboard.down('KeyW');
  await at(n * 0.2);
  await first.keyboard.down('KeyA');
  await at(n * 0.35);
  await first.keyboard.up('KeyA');
  await first.keyboard.down('ShiftLeft');
  await at(n * 0.5);
  if (shot) await first.screenshot({ path: shot });
  await first.keyboard.up('ShiftLeft');
  await first.keyboard.down('KeyD');
  await at(n * 0.7);
  await first.keyboard.up('KeyD');
  await reloading;
  const states = [];
  for (const t of tabs) {
    await t.waitForFunction(() => !['loading', 'joining', 'running'].includes(window.__peer.state),
      { timeout: 300000, polling: 50 });
    states.push(await t.evaluate(() => JSON.parse(JSON.stringify(window.__peer))));
  }
  const watched = [];
  for (const t of watchers) {
    await t.waitForFunction(() => !['loading', 'joining', 'running'].includes(window.__peer.state),
      { timeout: 300000, polling: 50 });
    watched.push(await t.evaluate(() => JSON.parse(JSON.stringify(window.__peer))));
  }
  const ms = Date.now() - started;
  const codes = await Promise.all(bots.map((b) => b.exited));
  const relayCode = await Promise.race([relay.exited, sleep(10000).then(() => 'still running')]);

  const rows = [];
  bots.forEach((b, k) => {
    const r = b.text().split('\n').filter((l) => l.startsWith('result ')).pop() || '';
    const f = (key) => field(r, key);
    rows.push({ slot: k, kind: 'native (UDP)', ticks: f('ticks'), sum: f('checksum'), rtt: Number(f('rtt_us')) / 1000,
      rollbacks: f('rollbacks'), resim: Number(f('resimulated')) / Math.max(1, Number(f('frames'))),
      hit: pct(Number(f('predicted_hits')), Number(f('predicted'))), desyncs: f('desyncs'), state: f('state'), code: codes[k] });
  });
  states.forEach((st, i) => {
    const s = st.stats;
    rows.push({ slot: st.slot, kind: `browser (WebSocket${i === 0 ? ', keys' : ', bot'})`, ticks: String(st.ticks),
      sum: st.checksum, rtt: s.rtt_us / 1000, rollbacks: String(s.rollbacks), resim: s.frames ? s.resimulated / s.frames : 0,
      hit: pct(s.predicted_hits, s.predicted), desyncs: String(s.desyncs), state: st.state + (st.error ? `: ${st.error}` : ''),
      code: st.state === 'finished' ? 0 : 1 });
  });
  watched.forEach((st) => {
    rows.push({ slot: `s${st.slot}`, kind: 'browser spectator', ticks: String(st.ticks), sum: st.checksum,
      rtt: null, rollbacks: '-', resim: null, hit: '-', desyncs: String(st.stats.desyncs),
      state: st.state + (st.error ? `: ${st.error}` : ''), code: st.state === 'finished' ? 0 : 1 });
  });
  console.log(`\nmatch: ${natives} native + ${pages} browser peers${spectators ? ` + ${spectators} browser spectators` : ''}, ${ticks} ticks at ${rate} Hz, soccer, rollback` +
    `${faults.length ? `, UDP faults ${faults.join(' ')}` : ''} (${ms} ms)\n`);
  const pad = (v, w) => String(v).padEnd(w);
  console.log([pad('peer', 5), pad('kind', 27), pad('ticks', 6), pad('final checksum', 18), pad('rtt(relay)', 11),
    pad('rollbacks', 10), pad('resim/frame', 12), pad('hit rate', 9), pad('desyncs', 8), 'status'].join(''));
  for (const r of rows) {
    console.log([pad(r.slot, 5), pad(r.kind, 27), pad(r.ticks, 6), pad(r.sum, 18), pad(r.rtt === null ? '-' : `${r.rtt.toFixed(3)} ms`, 11),
      pad(r.rollbacks, 10), pad(r.resim === null ? '-' : r.resim.toFixed(3), 12), pad(r.hit, 9), pad(r.desyncs, 8), r.state].join(''));
  }
  console.log('');
  const sums = new Set(rows.map((r) => r.sum));
  check(rows.every((r) => r.code === 0 && r.state === 'finished'), 'every peer finished');
  check(relayCode === 0, `the relay exited ${relayCode}`);
  check(rows.every((r) => r.ticks === ticks), `every peer played ${ticks} ticks`);
  check(sums.size === 1, `all ${rows.length} final checksums equal: ${[...sums].join(' ')}`);
  check(rows.every((r) => r.desyncs === '0') && !/^event desync/m.test(relay.text()),
    `desyncs: 0${spectators ? ', spectators\' mismatches: 0' : ''}`);
  check(states[0].renderer.startsWith('three.js') && states[0].draw?.frames > 0 &&
    [...states.slice(1), ...watched].every((st) => st.renderer === '2d canvas'),
    `page ${states[0].slot} drawn with ${states[0].renderer}` +
    `${states[0].draw ? ` (${states[0].draw.frames} frames, ${(states[0].draw.ms / Math.max(1, states[0].draw.frames)).toFixed(1)} ms each)` : ''}` +
    `${states.length + watched.length > 1 ? ', the others with the 2D canvas' : ''}`);
  const v = spawnSync(tool, ['replay', 'verify', path.join(dir, 'm.lsr'), '--no-progress'], { encoding: 'utf8' });
  const verified = (v.stdout || v.stderr).split('\n')[0];
  check(v.status === 0, `replay verify: ${verified}`);
  // The same recording in the replay viewer (re-simulated from its inputs in wasm, every tick's checksum checked).
  const t0 = Date.now();
  await mkdir(path.join(root, 'viewer', 'replays'), { recursive: true });
  replayCopy = path.join(root, 'viewer', 'replays', `browser-match-${process.pid}.lsr`);
  await copyFile(path.join(dir, 'm.lsr'), replayCopy);
  const viewer = await browser.newPage();
  viewer.on('pageerror', (e) => console.log(`  [viewer error] ${e.message}`));
  const vv = await openAndVerify(viewer, `${url}viewer/`, `replays/${path.basename(replayCopy)}`);
  check(vv.ok && vv.text === verified && vv.badge === verified && sums.has(vv.final),
    `viewer: ${vv.text}, final checksum ${vv.final} (${Date.now() - t0} ms in the page)`);
  console.log(`browser-match: relay: ${(relay.text().match(/^stats ws (.*)$/m) || [])[1]}`);
} catch (e) {
  check(false, e.message);
  for (const [i, t] of (globalThis.tabsForDiagnosis || []).entries()) {
    const st = await t.evaluate(() => window.__peer).catch(() => null);
    console.log(`  page ${i}: ${JSON.stringify(st && { state: st.state, ticks: st.ticks, error: st.error, stats: st.stats })}`);
  }
  if (globalThis.relayForDiagnosis) console.log(`  relay:\n${globalThis.relayForDiagnosis.text().split('\n').slice(-15).join('\n')}`);
} finally {
  if (browser) await browser.close();
  server.close();
  if (replayCopy) await rm(replayCopy, { force: true });
  for (const c of children) if (c.exitCode === null) c.kill();
  await rm(dir, { recursive: true, force: true });
}
console.log(failures ? `browser-match: ${failures} FAILED` : 'browser-match: OK');
process.exit(failures ? 1 : 0);
