// SPDX-License-Identifier: MIT
// `make browser-peer-test`, last part: the page (index.html, page.js) in Debian's
// headless Chromium (puppeteer-core, as `make viewer-test`) plays a soccer match
// through `lockstep relay --ws` against a native `lockstep bot` on UDP. Its car is
// driven with the keyboard (puppeteer presses keys); the credential reaches the
// page in the URL fragment. Passes when both end on the same final checksum with
// 0 desyncs and the relay's recording verifies; saves a screenshot mid-match.
//   node page_test.mjs TOOL ROOT SCENE TICKS TICK_RATE SHOT.png
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import process from 'node:process';
import puppeteer from 'puppeteer-core';
import { serve } from '../viewer/serve.mjs';

const [tool, root, scene, ticks, rate, shot] = process.argv.slice(2);
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
  '--disable-background-timer-throttling', '--disable-renderer-backgrounding'];
const dir = await mkdtemp(path.join(os.tmpdir(), 'lockstep-browser-page-'));
const children = [];
let failures = 0;
const check = (ok, what) => {
  if (!ok) failures++;
  console.log(`page-test: ${ok ? 'ok  ' : 'FAIL'} ${what}`);
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function run(args, name) {
  const out = [];
  const child = spawn(tool, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.on('data', (d) => out.push(d));
  child.stderr.on('data', (d) => out.push(d));
  children.push(child);
  const exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, text: () => Buffer.concat(out).toString(), exited, name };
}
const field = (line, key) => (line.match(new RegExp(` ${key}=(\\S+)`)) || [])[1];

const { server, url } = await serve(root, 0);
const origin = url.replace(/\/$/, '');
let browser = null;
try {
  const relay = run(['relay', '--ws', '127.0.0.1:0', '--ws-origin', origin, '--workers', '1', '--slots', '2',
    '--ticks', ticks, '--tick-rate', rate, '--credentials', dir, '--record', path.join(dir, 'm.lsr'),
    '--scene', scene, '--seed', '1', '--exit-when-done'], 'relay');
  for (let i = 0; i < 100 && !/^ready/m.test(relay.text()); i++) await sleep(100);
  const udp = (relay.text().match(/^listening (\S+)/m) || [])[1];
  const ws = (relay.text().match(/^ws (\S+)/m) || [])[1];
  if (!udp || !ws) throw new Error(`the relay did not start:\n${relay.text()}`);
  const cred = await readFile(path.join(dir, 'session-1-slot-1.cred'), 'utf8');

  const bot = run(['bot', '--relay', udp, '--credential', path.join(dir, 'session-1-slot-0.cred'),
    '--scene', scene, '--mode', 'rollback'], 'bot');
  const profile = path.join(dir, 'chromium');
  browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true,
    args: [...FLAGS, `--user-data-dir=${profile}`], defaultViewport: { width: 900, height: 700 } });
  const page = await browser.newPage();
  page.on('pageerror', (e) => console.log(`  [page error] ${e.message}`));
  page.on('console', (m) => m.type() === 'error' && console.log(`  [page error] ${m.text()}`));
  const fragment = new URLSearchParams({ ws: `ws://${ws}`, cred, scene: 'soccer.scene' }).toString();
  const started = Date.now();
  await page.goto(`${url}index.html#${fragment}`);
  check(await page.evaluate(() => location.hash === ''), 'the credential is gone from the address bar');
  // Keys: throttle throughout, steer left then right, a boost.
  await page.waitForFunction(() => ['running', 'finished', 'error'].includes(window.__peer.state), { timeout: 30000 });
  await page.keyboard.down('KeyW');
  const n = Number(ticks);
  const at = async (tick) => page.waitForFunction((t) => window.__peer.ticks >= t || window.__peer.state !== 'running',
    { timeout: 120000, polling: 20 }, tick);
  await at(n * 0.2);
  await page.keyboard.down('KeyA');
  await at(n * 0.35);
  await page.keyboard.up('KeyA');
  await page.keyboard.down('ShiftLeft');
  await at(n * 0.5);
  await page.screenshot({ path: shot });
  await page.keyboard.up('ShiftLeft');
  await page.keyboard.down('KeyD');
  await at(n * 0.7);
  await page.keyboard.up('KeyD');
  await page.waitForFunction(() => !['loading', 'joining', 'running'].includes(window.__peer.state),
    { timeout: 120000, polling: 50 });
  const st = await page.evaluate(() => JSON.parse(JSON.stringify(window.__peer)));
  const ms = Date.now() - started;
  const botCode = await bot.exited;
  const relayCode = await Promise.race([relay.exited, sleep(10000).then(() => 'still running')]);
  const rb = bot.text().split('\n').filter((l) => l.startsWith('result ')).pop() || '';
  const s = st.stats;
  console.log(`page-test: native bot (UDP, slot 0):  ticks ${field(rb, 'ticks')} checksum ${field(rb, 'checksum')} ` +
    `desyncs ${field(rb, 'desyncs')} rollbacks ${field(rb, 'rollbacks')} state ${field(rb, 'state')}`);
  console.log(`page-test: page in Chromium (WebSocket, slot ${st.slot}): ticks ${st.ticks} checksum ${st.checksum} ` +
    `desyncs ${s.desyncs} rollbacks ${s.rollbacks} resim/frame ${(s.frames ? s.resimulated / s.frames : 0).toFixed(2)} ` +
    `prediction ${s.predicted ? ((100 * s.predicted_hits) / s.predicted).toFixed(1) : '-'} % ` +
    `rtt ${(s.rtt_us / 1000).toFixed(2)} ms score ${st.score.join('-')} state ${st.state} (${ms} ms)`);
  check(st.state === 'finished' && !st.error, `the page finished (${st.state}${st.error ? ': ' + st.error : ''})`);
  check(botCode === 0, `the native bot exited ${botCode}`);
  check(relayCode === 0, `the relay exited ${relayCode}`);
  check(st.ticks === n && field(rb, 'ticks') === ticks, `both played ${ticks} ticks`);
  check(st.checksum === field(rb, 'checksum'), `equal final checksums: ${st.checksum}`);
  check(s.desyncs === 0 && field(rb, 'desyncs') === '0' && !/^event desync/m.test(relay.text()), '0 desyncs');
  const v = spawnSync(tool, ['replay', 'verify', path.join(dir, 'm.lsr'), '--no-progress'], { encoding: 'utf8' });
  check(v.status === 0, `replay verify: ${(v.stdout || v.stderr).split('\n')[0]}`);
  console.log(`page-test: relay: ${(relay.text().match(/^stats ws (.*)$/m) || [])[1]}`);
} catch (e) {
  check(false, e.message);
} finally {
  if (browser) await browser.close();
  server.close();
  for (const c of children) if (c.exitCode === null) c.kill();
  await rm(dir, { recursive: true, force: true });
}
console.log(failures ? `page-test: ${failures} FAILED` : 'page-test: OK');
process.exit(failures ? 1 : 0);
