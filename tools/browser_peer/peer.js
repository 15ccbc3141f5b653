// SPDX-License-Identifier: MIT
// The browser peer in JavaScript: loads peer.wasm (tools/browser_peer/api.c, the
// sans-IO peer and the engine built for wasm32-wasi as a reactor) and wraps its
// exports. The same file runs in Node.js (node_peer.mjs) and in a page
// (index.html): the caller brings the wasm bytes, a ready libsodium-wrappers
// object and the clock; this file owns no socket and no timer.
//
// libsodium: the module imports "ls_sodium" (tools/browser_peer/sodium_shim.c);
// every cryptographic operation is libsodium-wrappers' (libsodium compiled to
// WebAssembly by its authors), on copies of the bytes: ChaCha20-Poly1305 IETF
// tags over the datagram with an empty message (SPEC.md §17.3), BLAKE2b of a
// rejoin snapshot. Nothing here computes a cipher, a MAC or a hash by hand.

/** Names of bp_stat's counters, in its order (api.c). */
export const STATS = [
  'rtt_us', 'packets_in', 'packets_out', 'bytes_in', 'bytes_out', 'dropped', 'malformed',
  'bad_mac', 'replayed', 'stale', 'stalls', 'desyncs', 'named', 'disputes', 'frames',
  'rollbacks', 'resimulated', 'max_resim_frame', 'max_rollback', 'predicted',
  'predicted_hits', 'waits', 'time_sync_skips', 'frames_ahead', 'rejoins', 'interruptions',
  'kbps_in', 'kbps_out',
];
/** ls_peer_state names. */
export const STATES = ['joining', 'running', 'finished', 'left', 'rejoining'];
/** ls_spectator_state names (a spectator credential). */
export const SPECTATOR_STATES = ['joining', 'watching', 'finished', 'dropped'];

/**
 * A first sequence number from the clock (SPEC.md §17.3): Unix time in microseconds
 * x 4096, above every number an earlier process of the same credential sent unless it
 * sent 4096 datagrams per microsecond of its life; below 2^64 until the year 2112.
 */
export function clockFirstSeq(nowMs = Date.now()) {
  return BigInt(Math.floor(nowMs)) * 1000n * 4096n;
}

/** A 64-bit checksum (BigInt) as 16 hex digits, as the native tool prints it. */
export function hex64(v) {
  return BigInt.asUintN(64, v).toString(16).padStart(16, '0');
}

// The module reads no file: no preopened directory (fd_prestat_get: EBADF ends
// wasi-libc's search), fd_write logged by line, proc_exit thrown, every other
// WASI call ENOSYS.
function wasiShim(getMemory, log) {
  const ENOSYS = 52;
  const decoder = new TextDecoder();
  const pending = { 1: '', 2: '' };
  return new Proxy(
    {
      fd_write(fd, iovs, iovsLen, nwrittenPtr) {
        const mem = getMemory();
        const dv = new DataView(mem.buffer);
        let total = 0;
        let text = '';
        for (let i = 0; i < iovsLen; i++) {
          const ptr = dv.getUint32(iovs + i * 8, true);
          const len = dv.getUint32(iovs + i * 8 + 4, true);
          text += decoder.decode(new Uint8Array(mem.buffer, ptr, len));
          total += len;
        }
        dv.setUint32(nwrittenPtr, total, true);
        if (fd !== 1 && fd !== 2) return 8; // EBADF
        pending[fd] += text;
        const lines = pending[fd].split('\n');
        pending[fd] = lines.pop();
        for (const line of lines) log(fd, line);
        return 0;
      },
      fd_prestat_get() {
        return 8; // EBADF: no preopened directory
      },
      proc_exit(code) {
        throw new Error(`wasm called proc_exit(${code})`);
      },
    },
    {
      get(target, name) {
        return name in target ? target[name] : () => ENOSYS;
      },
    },
  );
}

// The "ls_sodium" imports (sodium_shim.c): pointers into the module's memory.
function sodiumImports(getMemory, sodium) {
  const bytes = (ptr, len) => new Uint8Array(getMemory().buffer, ptr >>> 0, len >>> 0);
  const copy = (ptr, len) => bytes(ptr, len).slice();
  const empty = new Uint8Array(0);
  return {
    ready: () => (sodium && typeof sodium.crypto_aead_chacha20poly1305_ietf_encrypt_detached === 'function' ? 1 : 0),
    aead_tag(tag, ad, adlen, npub, key) {
      try {
        const r = sodium.crypto_aead_chacha20poly1305_ietf_encrypt_detached(
          empty, copy(ad, adlen), null, copy(npub, 12), copy(key, 32));
        bytes(tag, 16).set(r.mac);
        return 0;
      } catch {
        return -1;
      }
    },
    aead_verify(tag, ad, adlen, npub, key) {
      try {
        sodium.crypto_aead_chacha20poly1305_ietf_decrypt_detached(
          null, empty, copy(tag, 16), copy(ad, adlen), copy(npub, 12), copy(key, 32));
        return 0;
      } catch {
        return -1; // libsodium-wrappers throws when the tag does not verify
      }
    },
    generichash(out, outlen, input, inlen, key, keylen) {
      try {
        const h = sodium.crypto_generichash(outlen, copy(input, inlen), keylen ? copy(key, keylen) : null);
        bytes(out, outlen).set(h);
        return 0;
      } catch {
        return -1;
      }
    },
    memcmp(a, b, n) {
      try {
        return sodium.memcmp(copy(a, n), copy(b, n)) ? 0 : -1;
      } catch {
        return -1;
      }
    },
    random(buf, n) {
      bytes(buf, n).set(sodium.randombytes_buf(n));
    },
  };
}

export class Peer {
  /**
   * Instantiate the module. wasm: its bytes (ArrayBuffer or typed array);
   * sodium: libsodium-wrappers after `await sodium.ready`.
   */
  static async load(wasm, sodium, log = (fd, line) => console.log(line)) {
    let memory = null;
    const getMemory = () => memory;
    const imports = {
      wasi_snapshot_preview1: wasiShim(getMemory, log),
      ls_sodium: sodiumImports(getMemory, sodium),
    };
    const { instance } = await WebAssembly.instantiate(wasm, imports);
    memory = instance.exports.memory;
    instance.exports._initialize();
    return new Peer(instance.exports);
  }

  constructor(x) {
    this.x = x;
    this.encoder = new TextEncoder();
  }

  // Copy bytes into a fresh allocation; the caller frees it.
  put(bytes) {
    const p = this.x.bp_alloc(bytes.length);
    if (!p) throw new Error('out of wasm memory');
    new Uint8Array(this.x.memory.buffer, p, bytes.length).set(bytes);
    return p;
  }

  cstring(ptr) {
    const mem = new Uint8Array(this.x.memory.buffer);
    let end = ptr;
    while (mem[end]) end++;
    return new TextDecoder().decode(mem.subarray(ptr, end));
  }

  /**
   * Create the peer: scene and credential are texts (a .scene file, a credential
   * as `lockstep relay` writes it). firstSeq (BigInt): the number of our first
   * datagram, 0n = 1 (clockFirstSeq() for a peer that may be a credential's second
   * process); restarted: a previous process of this credential may hold the slot
   * (a page loaded again): rejoin instead of playing from tick 0 (SPEC.md §17.10).
   * Throws with the engine's message.
   */
  create({ scene, credential, rollback = true, maxPrediction = 8, seed = 1, bot = true,
    firstSeq = 0n, restarted = false }) {
    const s = this.encoder.encode(scene);
    const c = this.encoder.encode(credential);
    const sp = this.put(s);
    const cp = this.put(c);
    const r = this.x.bp_create(sp, s.length, cp, c.length, rollback ? 1 : 0, maxPrediction, seed, bot ? 1 : 0,
      BigInt.asUintN(64, BigInt(firstSeq)), restarted ? 1 : 0);
    new Uint8Array(this.x.memory.buffer, cp, c.length).fill(0); // the key's text
    this.x.bp_free(sp);
    this.x.bp_free(cp);
    if (r !== 0) throw new Error(this.cstring(this.x.bp_error()));
  }

  /** One binary message from the relay at nowUs (BigInt microseconds). */
  receive(data, nowUs) {
    const bytes = data instanceof Uint8Array ? data : new Uint8Array(data);
    const p = this.put(bytes);
    this.x.bp_receive(p, bytes.length, nowUs);
    this.x.bp_free(p);
  }

  poll(nowUs) {
    this.x.bp_poll(nowUs);
  }

  leave() {
    this.x.bp_leave();
  }

  /** Every datagram waiting to be sent, each a copy. */
  drain() {
    const out = [];
    for (let n; (n = this.x.bp_next_datagram()) > 0;) {
      out.push(new Uint8Array(this.x.memory.buffer, this.x.bp_datagram(), n).slice());
    }
    return out;
  }

  /** Our input byte (soccer: throttle 1, reverse 2, left 4, right 8, handbrake 16, boost 32). */
  setInput(byte, bot = false) {
    this.x.bp_set_input(byte & 0xff, bot ? 1 : 0);
  }

  get state() {
    return (this.spectator ? SPECTATOR_STATES : STATES)[this.x.bp_state()] ?? 'none';
  }
  /** True when the credential was a spectator's: it watches (stats: desyncs = mismatches). */
  get spectator() {
    return this.x.bp_spectator() === 1;
  }
  get slot() {
    return this.x.bp_slot();
  }
  get ticks() {
    return this.x.bp_ticks();
  }
  get confirmed() {
    return this.x.bp_confirmed();
  }
  /** Checksum of the last tick reported to the relay, 16 hex digits. */
  get checksum() {
    return hex64(this.x.bp_checksum());
  }
  get worldChecksum() {
    return hex64(this.x.bp_world_checksum());
  }
  session() {
    const v = (k) => this.x.bp_session(k);
    return { slots: v(0), inputSize: v(1), delay: v(2), tickRate: v(3), ticks: v(4) };
  }
  stats() {
    const s = {};
    STATS.forEach((name, i) => {
      s[name] = Number(BigInt.asIntN(64, this.x.bp_stat(i)));
    });
    return s;
  }
  score() {
    return [this.x.bp_score(0), this.x.bp_score(1)];
  }
  /** Every body's position (metres, for drawing only) and its Q16.16 quaternion w x y z. */
  poses() {
    const n = this.x.bp_body_count();
    const p = this.x.bp_alloc(28);
    const out = [];
    for (let i = 0; i < n; i++) {
      this.x.bp_body_pose(i, p);
      const v = new Int32Array(this.x.memory.buffer, p, 7);
      out.push({ x: v[0] / 65536, y: v[1] / 65536, z: v[2] / 65536, q: [v[3], v[4], v[5], v[6]] });
    }
    this.x.bp_free(p);
    return out;
  }
  playerBody(slot) {
    return this.x.bp_player_body(slot);
  }
  destroy() {
    this.x.bp_destroy();
  }
}
