// SPDX-License-Identifier: MIT
// Headless Chromium for the pages' tests (Debian's /usr/bin/chromium through
// puppeteer-core; no browser download): its flags, and the replay viewer's
// verification of a recording in a page. Used by test.mjs (`make viewer-test`)
// and tools/browser_peer/browser_match.mjs (a live match's recording).

import process from 'node:process';

export const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

export const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  // WebGL without a GPU: SwiftShader, which Chromium only enables on request.
  '--enable-unsafe-swiftshader',
  '--use-angle=swiftshader',
];

/**
 * Open the viewer (index.html under `url`) on `replay` (a URL relative to it) and
 * wait until it has re-simulated and checked every tick: the verdict
 * ({ done, ok, text as `lockstep replay verify` prints it, final, disputes, ... })
 * and the badge's text.
 */
export async function openAndVerify(page, url, replay) {
  await page.goto(`${url}index.html?replay=${encodeURIComponent(replay)}`);
  await page.waitForFunction(() => window.__lockstep && window.__lockstep.ready, { timeout: 60000 });
  await page.waitForFunction(() => window.__lockstep.verdict().done, { timeout: 300000, polling: 100 });
  return page.evaluate(() => ({ ...window.__lockstep.verdict(), badge: document.getElementById('badge').textContent }));
}
