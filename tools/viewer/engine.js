// SPDX-License-Identifier: MIT
// The simulation in the browser: loads lockstep.wasm (tools/viewer/api.c and
// the engine, built for wasm32-wasi as a reactor) with a tiny WASI shim, and
// wraps its exports. 64-bit checksums come back as BigInt.

// The module only writes to stdout/stderr (fd_write) and never opens files;
// every other WASI call answers ENOSYS.
function wasiShim(getMemory, log) {
  const ENOSYS = 52;
  const EBADF = 8;
  const decoder = new TextDecoder();
  const pending = { 1: '', 2: '' };
  return new Proxy(
    {
      fd_write(fd, iovs, iovsLen, nwrittenPtr) {
        const mem = getMemory();
        const view = new DataView(mem.buffer);
        let total = 0;
        let text = '';
        for (let i = 0; i < iovsLen; i++) {
          const ptr = view.getUint32(iovs + i * 8, true);
          const len = view.getUint32(iovs + i * 8 + 4, true);
          text += decoder.decode(new Uint8Array(mem.buffer, ptr, len));
          total += len;
        }
        view.setUint32(nwrittenPtr, total, true);
        if (fd !== 1 && fd !== 2) return EBADF;
        pending[fd] += text;
        const lines = pending[fd].split('\n');
        pending[fd] = lines.pop();
        for (const line of lines) log(fd, line);
        return 0;
      },
      fd_close() {
        return 0;
      },
      fd_seek() {
        return ENOSYS;
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

const BODY_INTS = 8;
const SHAPE_INTS = 12;
const DETAIL_INTS = 7;
const FX = 1 / 65536;

export const SHAPES = ['sphere', 'box', 'capsule', 'plane'];
export const BODY_TYPES = ['static', 'kinematic', 'dynamic'];

export function hex64(v) {
  return BigInt.asUintN(64, v).toString(16).padStart(16, '0');
}

export class Engine {
  static async load(url = 'lockstep.wasm') {
    let memory = null;
    const imports = {
      wasi_snapshot_preview1: wasiShim(
        () => memory,
        (fd, line) => (fd === 2 ? console.warn : console.log)(`[wasm] ${line}`),
      ),
    };
    const response = await fetch(url);
    if (!response.ok) throw new Error(`cannot fetch ${url}: HTTP ${response.status}`);
    const { instance } = await WebAssembly.instantiate(await response.arrayBuffer(), imports);
    memory = instance.exports.memory;
    instance.exports._initialize();
    return new Engine(instance.exports);
  }

  constructor(x) {
    this.x = x;
  }

  i32(ptr, count) {
    return new Int32Array(this.x.memory.buffer, ptr, count);
  }

  cstring(ptr) {
    const bytes = new Uint8Array(this.x.memory.buffer, ptr);
    return new TextDecoder().decode(bytes.subarray(0, bytes.indexOf(0)));
  }

  /** Open scene text or replay bytes in handle h; throws with the engine's message. */
  open(h, bytes) {
    const ptr = this.x.vw_alloc(bytes.length);
    new Uint8Array(this.x.memory.buffer, ptr, bytes.length).set(bytes);
    const r = this.x.vw_open(h, ptr, bytes.length);
    this.x.vw_free(ptr);
    if (r !== 0) throw new Error(this.cstring(this.x.vw_error()));
  }

  close(h) {
    this.x.vw_close(h);
  }

  isReplay(h) {
    return this.x.vw_is_replay(h) !== 0;
  }

  ticks(h) {
    return this.x.vw_ticks(h) >>> 0;
  }

  tick(h) {
    return this.x.vw_tick(h) >>> 0;
  }

  tickRate(h) {
    return this.x.vw_tick_rate(h) >>> 0;
  }

  /** Step up to n ticks (stops after a checksum mismatch); returns ticks stepped. */
  run(h, n) {
    return this.x.vw_run(h, n) >>> 0;
  }

  seek(h, tick) {
    if (this.x.vw_seek(h, tick) !== 0) throw new Error(this.cstring(this.x.vw_error()));
  }

  checksum(h) {
    return hex64(this.x.vw_checksum(h));
  }

  /** Recorded checksum of tick t (the state after t + 1 ticks). */
  recorded(h, t) {
    return hex64(this.x.vw_recorded(h, t));
  }

  verified(h) {
    return this.x.vw_verified(h) >>> 0;
  }

  /** The first divergent tick, or null. */
  mismatch(h) {
    const t = this.x.vw_mismatch_tick(h);
    if (t < 0n) return null;
    return {
      tick: Number(t),
      recorded: hex64(this.x.vw_mismatch_recorded(h)),
      computed: hex64(this.x.vw_mismatch_computed(h)),
    };
  }

  keyframes(h) {
    const n = this.x.vw_keyframes(h);
    const out = [];
    for (let i = 0; i < n; i++) out.push(this.x.vw_keyframe_tick(h, i) >>> 0);
    return out;
  }

  bodyCount(h) {
    return this.x.vw_body_count(h) >>> 0;
  }

  /** Shapes of every body, in file order (ids are index + 1). */
  shapes(h) {
    const n = this.bodyCount(h);
    const a = this.i32(this.x.vw_shapes(h), n * SHAPE_INTS);
    const out = [];
    for (let i = 0; i < n; i++) {
      const s = a.subarray(i * SHAPE_INTS);
      out.push({
        id: i + 1,
        shape: SHAPES[s[0]] ?? `kind ${s[0]}`,
        type: BODY_TYPES[s[1]] ?? `type ${s[1]}`,
        radius: s[2] * FX,
        halfHeight: s[3] * FX,
        halfExtents: [s[4] * FX, s[5] * FX, s[6] * FX],
        normal: [s[7] * FX, s[8] * FX, s[9] * FX],
        planeD: s[10] * FX,
        player: s[11],
      });
    }
    return out;
  }

  /** Raw poses: BODY_INTS ints per body (Q16.16 position, orientation, asleep). */
  poses(h) {
    const n = this.bodyCount(h);
    return { data: this.i32(this.x.vw_bodies(h), n * BODY_INTS), stride: BODY_INTS, scale: FX };
  }

  detail(h, i) {
    const d = this.i32(this.x.vw_body_detail(h, i), DETAIL_INTS);
    return {
      linearVelocity: [d[0] * FX, d[1] * FX, d[2] * FX],
      angularVelocity: [d[3] * FX, d[4] * FX, d[5] * FX],
      mass: d[6] * FX,
    };
  }
}
