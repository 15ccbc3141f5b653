// SPDX-License-Identifier: MIT
// `make viewer-test` and `make bench-viewer`: drive Debian's headless Chromium
// (/usr/bin/chromium, through puppeteer-core; no browser download) against the
// built viewer served on 127.0.0.1.
//
//   node test.mjs test ROOT REPLAY EXPECT_LINE EXPECT_FINAL TAMPERED EXPECT_TAMPERED SHOT.png
//                 DISPUTED EXPECT_DISPUTED_LINE EXPECT_DISPUTES EXPECT_BODY
//     REPLAY must report EXPECT_LINE ("verified N ticks", as `lockstep replay
//     verify` prints it) with final checksum EXPECT_FINAL; TAMPERED must report
//     EXPECT_TAMPERED ("DESYNC at tick T: recorded X computed Y"); the screenshot
//     (saved to SHOT.png) must show the scene; step, seek and picking must work;
//     compound bodies, hulls and meshes (inline and OBJ) are built and listed.
//     DISPUTED (a relay's recording with claims, format 2) must report
//     EXPECT_DISPUTED_LINE and the tool's summary EXPECT_DISPUTES ("disputes: N
//     ticks (D disputed) from tick T; wrong: player P (K ticks)"), mark the claimed
//     ticks on the timeline from T, and list the claims of tick T as right or WRONG.
//     The tampered recording's divergent tick is marked on the timeline and
//     EXPECT_BODY (the first divergent body of `replay verify --json`) is drawn
//     in the desync colour.
//   node test.mjs bench ROOT REPLAY REPEATS
//     prints "TICKS TICKS_PER_S FINAL" for re-simulating REPLAY in the page.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import process from 'node:process';
import puppeteer from 'puppeteer-core';
import { CHROMIUM, FLAGS, openAndVerify } from './chromium.mjs';
import { serve } from './serve.mjs';

let failures = 0;
function check(ok, what) {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
  if (!ok) failures++;
}

async function withPage(root, fn) {
  const profile = await mkdtemp(path.join(os.tmpdir(), 'lockstep-viewer-chromium-'));
  const { server, url } = await serve(root, 0);
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [...FLAGS, `--user-data-dir=${profile}`],
    defaultViewport: { width: 1024, height: 640 },
  });
  try {
    const page = await browser.newPage();
    page.on('console', (m) => {
      if ((m.type() === 'error' || m.type() === 'warn') && !m.text().includes('GL Driver Message')) {
        console.log(`  [page ${m.type()}] ${m.text()}`);
      }
    });
    page.on('pageerror', (e) => console.log(`  [page error] ${e.message}`));
    return await fn(page, url);
  } finally {
    await browser.close();
    server.close();
    await rm(profile, { recursive: true, force: true });
  }
}

// Fraction of the screenshot's central region that is not background, and the
// number of distinct colours there (decoded in the page from the PNG bytes).
async function screenshotStats(page, png) {
  return page.evaluate(async (b64) => {
    const img = new Image();
    img.src = `data:image/png;base64,${b64}`;
    await img.decode();
    const c = document.createElement('canvas');
    c.width = img.width;
    c.height = img.height;
    const g = c.getContext('2d');
    g.drawImage(img, 0, 0);
    const r = document.getElementById('view').getBoundingClientRect();
    const x0 = Math.round(r.left + r.width * 0.2), x1 = Math.round(r.left + r.width * 0.8);
    const y0 = Math.round(r.top + r.height * 0.2), y1 = Math.round(r.top + r.height * 0.8);
    const d = g.getImageData(x0, y0, x1 - x0, y1 - y0).data;
    // Background = the most common colour there (sky or ground); the scene is what differs.
    const counts = new Map();
    for (let i = 0; i < d.length; i += 4) {
      const q = ((d[i] >> 4) << 8) | ((d[i + 1] >> 4) << 4) | (d[i + 2] >> 4);
      counts.set(q, (counts.get(q) || 0) + 1);
    }
    const mode = [...counts.entries()].sort((a, b) => b[1] - a[1])[0][0];
    const bg = [(mode >> 8) * 16 + 8, ((mode >> 4) & 15) * 16 + 8, (mode & 15) * 16 + 8];
    let scene = 0;
    for (let i = 0; i < d.length; i += 4) {
      const diff = Math.abs(d[i] - bg[0]) + Math.abs(d[i + 1] - bg[1]) + Math.abs(d[i + 2] - bg[2]);
      if (diff > 48) scene++;
    }
    return { fraction: scene / (d.length / 4), colours: counts.size, region: [x0, y0, x1, y1] };
  }, png.toString('base64'));
}

// Shapes v2 in the page: a compound body (a Group of one child per shape, each
// at its local pose), a convex hull and two static meshes (inline, and from an
// OBJ file the page fetches next to the scene) are built from the engine's
// exported geometry, and the info panel lists a compound's shapes.
const SHAPES_SCENE = `# viewer-test: compound, hull, inline mesh, OBJ mesh
world gravity 0 -9.81 0 tick_rate 60 ticks 120
body static mesh vertices 4 -4 0 -4  0 0 -4  0 0 4  -4 0 4 triangles 2 0 3 2 0 2 1
body static mesh obj ground.obj
body dynamic box half 0.5 0.5 0.5 pos -2 1 0 density 500
shape sphere radius 0.35 at 0 1 0 density 500
body dynamic hull points 6 0.5 0 0 -0.5 0 0 0 0.5 0 0 -0.5 0 0 0 0.5 0 0 -0.5 pos 2 1 0
`;
const SHAPES_OBJ = `# a quad, fanned into two triangles
v 0 0 -4
v 4 0 -4
v 4 0 4
v 0 0 4
f 1 4 3 2
`;

async function shapesCheck(page, root) {
  await mkdir(path.join(root, 'shapes-test'), { recursive: true });
  await writeFile(path.join(root, 'shapes-test', 'shapes.scene'), SHAPES_SCENE);
  await writeFile(path.join(root, 'shapes-test', 'ground.obj'), SHAPES_OBJ);
  const r = await page.evaluate(async () => {
    const l = window.__lockstep;
    const loaded = await l.load('shapes-test/shapes.scene');
    const s = l.state;
    const count = (b) => b.object?.geometry?.attributes.position.count ?? -1;
    const compound = s.bodies[2].object;
    return {
      loaded,
      error: l.verdict().error,
      bodies: s.bodies.length,
      kinds: s.bodies.map((b) => b.shape.parts.map((p) => p.shape).join('+')).join(' '),
      inlineMesh: count(s.bodies[0]),
      objMesh: count(s.bodies[1]),
      compoundChildren: compound?.isGroup ? compound.children.map((c) => c.position.y.toFixed(2)).join(' ') : 'not a group',
      hull: count(s.bodies[3]),
      at: l.screenOf(2),
    };
  });
  check(r.loaded && r.bodies === 4 && r.kinds === 'mesh mesh box+sphere hull',
    `shapes scene: ${r.bodies} bodies (${r.kinds})${r.error ? `, error ${r.error}` : ''}`);
  check(r.inlineMesh === 6 && r.objMesh === 6, `meshes: inline ${r.inlineMesh / 3} triangles, from ground.obj ${r.objMesh / 3} triangles`);
  check(r.hull === 24, `hull: an octahedron of ${r.hull / 3} triangles`);
  // Children relative to the centre of mass (between the box and the sphere above it).
  const ys = r.compoundChildren.split(' ').map(Number);
  check(ys.length === 2 && ys[0] < 0 && ys[1] > 0.5 && Math.abs(ys[1] - ys[0] - 1) < 1e-3,
    `compound: a group of 2 children at local y ${r.compoundChildren}`);
  await page.mouse.click(r.at.x, r.at.y);
  const info = await page.evaluate(() => document.getElementById('info').textContent);
  check(info.startsWith('body 3\ndynamic compound, 2 shapes:\n  box half extents 0.500, 0.500, 0.500') &&
    /\n {2}sphere radius 0\.350 at/.test(info), `click on the compound lists its shapes: "${info.split('\n').slice(1, 4).join(' / ')}"`);
}

// A relay's recording where bot 0 diverged: verified, with the tool's verdicts;
// the timeline marks the claimed ticks; the HUD at the first one names the liar.
async function claimsCheck(page, url, disputed, expectLine, expectDisputes) {
  const v = await openAndVerify(page, url, disputed);
  const header = await page.evaluate(() => document.getElementById('disputes').textContent);
  console.log(`  ${disputed}: badge "${v.badge}", "${header}"`);
  check(v.text === expectLine && v.badge === expectLine, `${disputed} reports "${expectLine}"`);
  check(v.disputes === expectDisputes && header === expectDisputes, `${disputed} says "${expectDisputes}"`);
  const first = Number((expectDisputes.match(/from tick (\d+)/) || [])[1]);
  const wrong = Number((expectDisputes.match(/wrong: player (\d+)/) || [])[1]);
  const marks = await page.evaluate(() =>
    [...document.querySelectorAll('#marks .mark')].map((m) => ({ tick: Number(m.dataset.tick), count: Number(m.dataset.count), cls: m.className })));
  check(marks.length > 0 && marks[0].tick === first && marks[0].cls === 'mark',
    `timeline: ${marks.length} mark(s), the first at tick ${marks[0]?.tick} (${marks[0]?.count} ticks, ${marks[0]?.cls})`);
  const hud = await page.evaluate((t) => {
    window.__lockstep.seek(t + 1);
    return document.getElementById('hud').textContent;
  }, first);
  const lines = hud.split('\n');
  const liar = lines.find((l) => l.startsWith(`  player ${wrong} `)) ?? '';
  const right = lines.filter((l) => / right$/.test(l));
  check(lines.includes(`claims    tick ${first}, disputed`) && / WRONG$/.test(liar) && right.length === 1 &&
    /a wrong claim/.test(hud) && !/MISMATCH/.test(hud),
    `HUD at tick ${first + 1}: "${liar.trim()}", "${(right[0] ?? '').trim()}"`);
}

async function test([root, replay, expectLine, expectFinal, tampered, expectTampered, shot, disputed,
  expectDisputedLine, expectDisputes, expectBody]) {
  await withPage(root, async (page, url) => {
    const t0 = Date.now();
    const v = await openAndVerify(page, url, replay);
    console.log(`  ${replay}: badge "${v.badge}", final ${v.final} (${Date.now() - t0} ms)`);
    check(v.text === expectLine && v.badge === expectLine, `${replay} reports "${expectLine}"`);
    check(v.ok && v.final === expectFinal, `${replay} final checksum ${v.final} equals native ${expectFinal}`);

    // Step from the start, then scrub through a keyframe: checksums still match the recording.
    const stepped = await page.evaluate(() => {
      window.__lockstep.step();
      window.__lockstep.step();
      return document.getElementById('hud').textContent;
    });
    check(/ticks\s+2\n/.test(stepped) && /match/.test(stepped) && !/MISMATCH/.test(stepped), 'step: tick 2, checksum matches');
    const sought = await page.evaluate(() => {
      window.__lockstep.seek(650);
      return document.getElementById('hud').textContent;
    });
    check(/ticks\s+650\n/.test(sought) && / match/.test(sought), 'seek to tick 650 (through keyframe 600): checksum matches');

    // Click the first sphere (the arena's middle row, in view at tick 650): the panel names it.
    const at = await page.evaluate(() => {
      const s = window.__lockstep.state;
      const i = s.bodies.findIndex((b) => b.shape.shape === 'sphere');
      return { i, ...window.__lockstep.screenOf(i) };
    });
    await page.mouse.click(at.x, at.y);
    const info = await page.evaluate(() => document.getElementById('info').textContent);
    check(info.startsWith(`body ${at.i + 1}\ndynamic sphere`), `click on body ${at.i + 1} shows "${info.split('\n').slice(0, 2).join(', ')}"`);

    await new Promise((r) => setTimeout(r, 300));
    const png = await page.screenshot({ type: 'png' });
    await writeFile(shot, png);
    const st = await screenshotStats(page, png);
    console.log(`  screenshot ${shot}: ${(st.fraction * 100).toFixed(1)} % of the centre differs from its commonest colour, ${st.colours} colours`);
    check(st.fraction > 0.1 && st.colours >= 12, 'the screenshot shows the scene (not one flat colour) in the centre of the view');

    // A scene (no recording): scrubbing back restores the viewer's own snapshots
    // and lands on the same state as going forward.
    const sc = await page.evaluate(async () => {
      const l = window.__lockstep;
      await l.load('scenes/catapult.scene');
      const hud = () => document.getElementById('hud').textContent.match(/checksum\s+([0-9a-f]+)/)[1];
      l.seek(130);
      const forward = hud();
      l.seek(400);
      l.seek(130);
      return { forward, back: hud(), verdict: l.verdict().text };
    });
    check(sc.forward === sc.back && sc.verdict.startsWith('scene'), `scene: tick 130 forward ${sc.forward}, after scrubbing back ${sc.back}`);

    await shapesCheck(page, root);

    const w = await openAndVerify(page, url, tampered);
    console.log(`  ${tampered}: badge "${w.badge}"`);
    check(w.text === expectTampered && w.badge === expectTampered, `${tampered} reports "${expectTampered}"`);
    check(w.disputes === '', `${tampered}: no claims, no disputes line`);
    // The divergent tick is marked on the timeline at the state after it, and
    // the body the native verifier names first (EXPECT_BODY, 1-based) is drawn
    // in the desync colour.
    const bad = Number((expectTampered.match(/DESYNC at tick (\d+)/) || [])[1]);
    const mark = await page.evaluate(() => {
      const m = document.querySelector('#marks .mark.desync');
      const l = window.__lockstep;
      const ticks = l.state.ticks;
      return m ? { tick: Number(m.dataset.tick), left: parseFloat(m.style.left), ticks } : null;
    });
    check(mark !== null && mark.tick === bad && Math.abs(mark.left - ((bad + 1) / mark.ticks) * 100) < 1e-6,
      `timeline: the desync mark at tick ${mark?.tick} (${mark?.left?.toFixed(2)} % of the track: the state after it)`);
    const lit = await page.evaluate((t) => {
      const l = window.__lockstep;
      l.seek(t + 1);
      const b = l.state.bodies;
      return {
        diverged: l.verdict().diverged ?? [],
        colour: b.map((x, i) => (x.material.color.getHex() === 0xff1ac7 ? i + 1 : 0)).filter((i) => i),
        hud: document.getElementById('hud').textContent,
      };
    }, bad);
    const body = Number(expectBody);
    check(lit.diverged.includes(body) && lit.colour.includes(body) && lit.hud.includes(`desync    tick ${bad} (state at ${bad + 1})`),
      `diverged bodies ${lit.diverged.join(', ')} (drawn in magenta: ${lit.colour.join(', ')}) include body ${body}, the verifier's first`);

    await claimsCheck(page, url, disputed, expectDisputedLine, expectDisputes);
  });
  if (failures) {
    console.log(`viewer-test: ${failures} check(s) failed`);
    process.exit(1);
  }
  console.log('viewer-test: all checks passed');
}

async function bench([root, replay, repeats]) {
  await withPage(root, async (page, url) => {
    await page.goto(`${url}index.html`);
    await page.waitForFunction(() => window.__lockstep && window.__lockstep.ready, { timeout: 60000 });
    const r = await page.evaluate((f, n) => window.__lockstep.bench(f, n), replay, Number(repeats));
    console.log(`${r.ticks} ${Math.round(r.ticksPerSecond)} ${r.final}`);
  });
}

const [mode, ...args] = process.argv.slice(2);
if (mode === 'test' && args.length === 11) await test(args);
else if (mode === 'bench' && args.length === 3) await bench(args);
else {
  console.error('usage: node test.mjs test ROOT REPLAY EXPECT_LINE EXPECT_FINAL TAMPERED EXPECT_TAMPERED SHOT.png\n' +
    '         DISPUTED EXPECT_DISPUTED_LINE EXPECT_DISPUTES EXPECT_BODY\n' +
    '       node test.mjs bench ROOT REPLAY REPEATS');
  process.exit(2);
}
