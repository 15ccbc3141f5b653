// SPDX-License-Identifier: MIT
// `make browser-peer-test`, first part: the wasm peer refuses bad credentials and
// scenes with the engine's message, and bad bytes from the network are counted
// and dropped, never fatal (SPEC.md §17.17). No relay needed.
//   node selftest.mjs WASM SCENE
import { readFileSync } from 'node:fs';
import sodium from 'libsodium-wrappers';
import { Peer } from './peer.js';

const [wasmPath, scenePath] = process.argv.slice(2);
await sodium.ready;
const wasm = readFileSync(wasmPath);
const scene = readFileSync(scenePath, 'utf8');
const key = 'a1'.repeat(32);
const cred = (rest) => `lockstep-credential 2 session=7 slot=1 role=${rest}\n`;
let failures = 0;
const check = (ok, what) => {
  if (!ok) failures++;
  console.log(`selftest: ${ok ? 'ok  ' : 'FAIL'} ${what}`);
};

const peer = await Peer.load(wasm, sodium);
const refuses = (opts, pattern, what) => {
  try {
    peer.create({ scene, ...opts });
    check(false, `${what}: accepted`);
  } catch (e) {
    check(pattern.test(e.message), `${what}: ${e.message}`);
  }
};
refuses({ credential: 'hello' }, /not a credential/, 'garbage credential');
refuses({ credential: cred(`player key=${key.slice(1)}`) }, /64 hex digits/, '63 hex digits');
refuses({ credential: cred(`player key=${key}0`) }, /64 hex digits/, '65 hex digits');
refuses({ credential: cred(`player key=${key.slice(2)}zz`) }, /64 hex digits/, 'a non-hex digit');
refuses({ credential: 'x'.repeat(5000) }, /too long/, 'an oversized credential');
try {
  peer.create({ scene: 'body nonsense', credential: cred(`player key=${key}`) });
  check(false, 'a bad scene: accepted');
} catch (e) {
  check(/scene/.test(e.message), `a bad scene: ${e.message}`);
}

peer.create({ scene, credential: cred(`spectator key=${key}`) });
peer.poll(1000n);
check(peer.spectator && peer.state === 'joining' && peer.drain().length >= 1,
  'a spectator credential makes a spectator (SPECTATE sent)');
peer.create({ scene, credential: cred(`player key=${key.toUpperCase()}`) });
check(!peer.spectator && peer.slot === 1 && peer.state === 'joining', 'an upper-case key is a key (as libsodium reads it)');
let now = 1000000n;
peer.poll(now);
const joins = peer.drain();
check(joins.length >= 1 && joins[0].length >= 36, `JOIN sent (${joins[0]?.length} bytes)`);

// Bad bytes: empty, short, oversized, random, our own JOIN (the wrong direction's
// nonce: its tag fails), a forged tag. Each is dropped and counted.
let seed = 12345;
const rnd = () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 8) & 0xff;
const junk = [new Uint8Array(0), new Uint8Array(1), new Uint8Array(5000).map(rnd), joins[0]];
for (let i = 0; i < 200; i++) junk.push(new Uint8Array(1 + (rnd() * 5) % 1300).map(rnd));
const forged = joins[0].slice();
forged[forged.length - 1] ^= 1;
junk.push(forged);
const before = peer.stats().dropped;
for (const j of junk) {
  now += 1000n;
  peer.receive(j, now);
  peer.poll(now);
  peer.drain();
}
const s = peer.stats();
check(s.dropped - before === junk.length,
  `${junk.length} bad messages dropped: ${s.dropped - before} (malformed ${s.malformed}, bad tag ${s.bad_mac})`);
check(peer.state === 'joining' && s.packets_in === 0, 'nothing accepted, still joining');
peer.destroy();
console.log(failures ? `selftest: ${failures} FAILED` : 'selftest: OK');
process.exit(failures ? 1 : 0);
