// SPDX-License-Identifier: MIT
// `make bench-browser-peer`, the wasm side: bp_bench (api.c) in the wasm module,
// in Node.js (V8) and in headless Chromium (puppeteer-core; the page's folder
// served on 127.0.0.1), the best of REPEATS runs each after one warm-up run.
//   node bench.mjs ROOT SCENE_FILE TICKS REPEATS
// prints "node MS_PER_TICK CHECKSUM" and "chromium MS_PER_TICK CHECKSUM".
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import puppeteer from 'puppeteer-core';
import { Peer, hex64 } from './peer.js';
import { serve } from '../viewer/serve.mjs';

const [root, sceneFile, ticksArg, repeatsArg] = process.argv.slice(2);
const ticks = Number(ticksArg);
const repeats = Number(repeatsArg);

// Runs where it is evaluated (Node or the page): no crypto is called by bp_bench.
async function bench(wasm, scene, ticks, repeats, PeerClass, hex) {
  const p = await PeerClass.load(wasm, null, () => {});
  const bytes = new TextEncoder().encode(scene);
  const ptr = p.put(bytes);
  let best = Infinity;
  let sum = p.x.bp_bench(ptr, bytes.length, ticks, 1); // warm-up: the engine tiers up its code
  for (let r = 0; r < repeats; r++) {
    const t0 = performance.now();
    sum = p.x.bp_bench(ptr, bytes.length, ticks, 1);
    best = Math.min(best, performance.now() - t0);
  }
  p.x.bp_free(ptr);
  return `${(best / ticks).toFixed(4)} ${hex(sum)}`;
}

const scene = readFileSync(sceneFile, 'utf8');
console.log(`node ${await bench(readFileSync(path.join(root, 'peer.wasm')), scene, ticks, repeats, Peer, hex64)}`);

const profile = await mkdtemp(path.join(os.tmpdir(), 'lockstep-bp-bench-'));
const { server, url } = await serve(root, 0);
const browser = await puppeteer.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', `--user-data-dir=${profile}`] });
try {
  const page = await browser.newPage();
  await page.goto(`${url}index.html`); // no fragment: the page only says how to join
  const line = await page.evaluate(async (src, sceneText, n, reps) => {
    const { Peer: P, hex64: h } = await import('./peer.js');
    const wasm = await (await fetch('peer.wasm')).arrayBuffer();
    // eslint-disable-next-line no-new-func
    const run = new Function(`return (${src})`)();
    return run(wasm, sceneText, n, reps, P, h);
  }, bench.toString(), scene, ticks, repeats);
  console.log(`chromium ${line}`);
} finally {
  await browser.close();
  server.close();
  await rm(profile, { recursive: true, force: true });
}
