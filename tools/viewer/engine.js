// SPDX-License-Identifier: MIT
// The simulation in the browser: loads lockstep.wasm (tools/viewer/api.c and
// the engine, built for wasm32-wasi as a reactor) with a tiny WASI shim, and
// wraps its exports. 64-bit checksums come back as BigInt.

// The module writes to stdout/stderr (fd_write) and reads only the files the
// page put in `files` (a scene's `mesh obj FILE`, fetched next to the scene):
// they appear under one preopened directory "/" (fd 3), read-only. Every other
// WASI call answers ENOSYS.
function wasiShim(getMemory, log, files) {
  const ENOSYS = 52;
  const EBADF = 8;
  const ENOENT = 44;
  const PREOPEN = 3;
  const decoder = new TextDecoder();
  const pending = { 1: '', 2: '' };
  const open = new Map(); // fd -> { data, pos }
  let nextFd = PREOPEN + 1;
  const view = () => new DataView(getMemory().buffer);
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
        if (fd !== 1 && fd !== 2) return EBADF;
        pending[fd] += text;
        const lines = pending[fd].split('\n');
        pending[fd] = lines.pop();
        for (const line of lines) log(fd, line);
        return 0;
      },
      fd_prestat_get(fd, buf) {
        if (fd !== PREOPEN) return EBADF;
        const dv = view();
        dv.setUint8(buf, 0); // a directory
        dv.setUint32(buf + 4, 1, true); // its name "/" is 1 byte
        return 0;
      },
      fd_prestat_dir_name(fd, path, len) {
        if (fd !== PREOPEN || len < 1) return EBADF;
        view().setUint8(path, 0x2f);
        return 0;
      },
      fd_fdstat_get(fd, buf) {
        const type = fd === PREOPEN ? 3 : open.has(fd) ? 4 : fd <= 2 ? 2 : -1;
        if (type < 0) return EBADF;
        const dv = view();
        dv.setUint8(buf, type); // directory, regular file or character device
        dv.setUint16(buf + 2, 0, true);
        dv.setBigUint64(buf + 8, 0xffffffffffffffffn, true);
        dv.setBigUint64(buf + 16, 0xffffffffffffffffn, true);
        return 0;
      },
      path_open(dirFd, dirFlags, pathPtr, pathLen, oflags, rightsBase, rightsInh, fdFlags, fdPtr) {
        if (dirFd !== PREOPEN) return EBADF;
        const name = decoder.decode(new Uint8Array(getMemory().buffer, pathPtr, pathLen)).replace(/^\.?\/+/, '');
        const data = files.get(name);
        if (!data || oflags !== 0) return ENOENT;
        const fd = nextFd++;
        open.set(fd, { data, pos: 0 });
        view().setUint32(fdPtr, fd, true);
        return 0;
      },
      fd_read(fd, iovs, iovsLen, nreadPtr) {
        const f = open.get(fd);
        if (!f) return EBADF;
        const mem = getMemory();
        const dv = new DataView(mem.buffer);
        let total = 0;
        for (let i = 0; i < iovsLen; i++) {
          const ptr = dv.getUint32(iovs + i * 8, true);
          const len = dv.getUint32(iovs + i * 8 + 4, true);
          const chunk = f.data.subarray(f.pos, f.pos + len);
          new Uint8Array(mem.buffer, ptr, chunk.length).set(chunk);
          f.pos += chunk.length;
          total += chunk.length;
          if (chunk.length < len) break;
        }
        dv.setUint32(nreadPtr, total, true);
        return 0;
      },
      fd_seek(fd, offset, whence, newOffsetPtr) {
        const f = open.get(fd);
        if (!f) return fd <= 2 ? ENOSYS : EBADF;
        const base = whence === 0 ? 0 : whence === 1 ? f.pos : f.data.length;
        f.pos = Math.max(0, base + Number(offset));
        view().setBigUint64(newOffsetPtr, BigInt(f.pos), true);
        return 0;
      },
      fd_close(fd) {
        open.delete(fd);
        return 0;
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
const SHAPE_INTS = 14;
const PART_INTS = 19;
const GEOMETRY_HEAD = 4;
const DETAIL_INTS = 7;
const FX = 1 / 65536;

export const SHAPES = ['sphere', 'box', 'capsule', 'plane', 'hull', 'mesh'];
export const BODY_TYPES = ['static', 'kinematic', 'dynamic'];

export function hex64(v) {
  return BigInt.asUintN(64, v).toString(16).padStart(16, '0');
}

export class Engine {
  static async load(url = 'lockstep.wasm') {
    let memory = null;
    const files = new Map();
    const imports = {
      wasi_snapshot_preview1: wasiShim(
        () => memory,
        (fd, line) => (fd === 2 ? console.warn : console.log)(`[wasm] ${line}`),
        files,
      ),
    };
    const response = await fetch(url);
    if (!response.ok) throw new Error(`cannot fetch ${url}: HTTP ${response.status}`);
    const { instance } = await WebAssembly.instantiate(await response.arrayBuffer(), imports);
    memory = instance.exports.memory;
    instance.exports._initialize();
    return new Engine(instance.exports, files);
  }

  constructor(x, files = new Map()) {
    this.x = x;
    /** Files the module may read (path without a leading '/' -> Uint8Array). */
    this.files = files;
  }

  i32(ptr, count) {
    return new Int32Array(this.x.memory.buffer, ptr, count);
  }

  cstring(ptr) {
    const bytes = new Uint8Array(this.x.memory.buffer, ptr);
    return new TextDecoder().decode(bytes.subarray(0, bytes.indexOf(0)));
  }

  /**
   * Open scene text or replay bytes in handle h; throws with the engine's message.
   * A scene's `mesh obj FILE` is read from this.files as DIR/FILE (dir without a
   * leading '/'); without dir such a scene is refused.
   */
  open(h, bytes, dir = null) {
    const ptr = this.x.vw_alloc(bytes.length);
    new Uint8Array(this.x.memory.buffer, ptr, bytes.length).set(bytes);
    let dirPtr = 0;
    if (dir !== null) {
      const d = new TextEncoder().encode(`/${dir}\0`);
      dirPtr = this.x.vw_alloc(d.length);
      new Uint8Array(this.x.memory.buffer, dirPtr, d.length).set(d);
    }
    const r = this.x.vw_open_in(h, ptr, bytes.length, dirPtr);
    this.x.vw_free(ptr);
    if (dirPtr) this.x.vw_free(dirPtr);
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

  /**
   * The ticks where the players' checksums disagreed (a relay's recording, format 2):
   * [{ tick, disputed, players: [{ player, claim (hex) }] }] in tick order.
   */
  claims(h) {
    const n = this.x.vw_claims_count(h) >>> 0;
    const out = [];
    for (let i = 0; i < n; i++) {
      const flags = this.x.vw_claims_flags(h, i);
      const players = [];
      for (let p = 0; p < 16; p++) {
        if ((flags >> p) & 1) players.push({ player: p, claim: hex64(this.x.vw_claim(h, i, p)) });
      }
      out.push({ tick: this.x.vw_claims_tick(h, i) >>> 0, disputed: ((flags >> 16) & 1) === 1, players });
    }
    return out;
  }

  /**
   * What re-simulation says about the claimed ticks verified in order so far:
   * { ticks, disputed, first (tick or null), wrong: [{ player, ticks, first }] }.
   */
  verdicts(h) {
    const wrong = [];
    for (let p = 0; p < 16; p++) {
      const ticks = this.x.vw_wrong_ticks(h, p) >>> 0;
      if (ticks) wrong.push({ player: p, ticks, first: this.x.vw_first_wrong(h, p) >>> 0 });
    }
    const first = this.x.vw_verdict_first(h);
    return {
      ticks: this.x.vw_verdict_ticks(h) >>> 0,
      disputed: this.x.vw_verdict_disputed(h) >>> 0,
      first: first < 0n ? null : Number(first),
      wrong,
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

  /**
   * Every body in file order (ids are index + 1): its type, player and first
   * shape's kind and dimensions (shape, radius, ...), and `parts`: all its shapes
   * (one, or several for a compound), each with its kind, dimensions, pose
   * relative to the body's centre-of-mass frame (position, quaternion) and
   * `geometry` (index for geometry(), or -1).
   */
  shapes(h) {
    const n = this.bodyCount(h);
    const a = this.i32(this.x.vw_shapes(h), n * SHAPE_INTS);
    const np = this.x.vw_part_count(h) >>> 0;
    const pa = this.i32(this.x.vw_parts(h), np * PART_INTS);
    const dims = (s) => ({
      radius: s[0] * FX,
      halfHeight: s[1] * FX,
      halfExtents: [s[2] * FX, s[3] * FX, s[4] * FX],
      normal: [s[5] * FX, s[6] * FX, s[7] * FX],
      planeD: s[8] * FX,
    });
    const out = [];
    for (let i = 0; i < n; i++) {
      const s = a.subarray(i * SHAPE_INTS);
      const parts = [];
      for (let k = 0; k < s[12]; k++) {
        const p = pa.subarray((s[13] + k) * PART_INTS);
        parts.push({
          shape: SHAPES[p[0]] ?? `kind ${p[0]}`,
          ...dims(p.subarray(1)),
          position: [p[10] * FX, p[11] * FX, p[12] * FX],
          quaternion: [p[13] * FX, p[14] * FX, p[15] * FX, p[16] * FX],
          geometry: p[17],
        });
      }
      out.push({
        id: i + 1,
        shape: SHAPES[s[0]] ?? `kind ${s[0]}`,
        type: BODY_TYPES[s[1]] ?? `type ${s[1]}`,
        ...dims(s.subarray(2)),
        player: s[11],
        parts,
      });
    }
    return out;
  }

  /**
   * Hull or mesh g of handle h: { shape: 'hull' | 'mesh', vertices (Float32Array,
   * x y z each, m, in the shape's frame), faces (hulls: arrays of vertex indices,
   * counter-clockwise from outside) or triangles (meshes: Uint32Array, 3 each) }.
   */
  geometry(h, g) {
    const ptr = this.x.vw_geometry(h, g);
    if (!ptr) return null;
    const head = this.i32(ptr, GEOMETRY_HEAD);
    const [kind, nv, ne, len] = head;
    const d = this.i32(ptr + GEOMETRY_HEAD * 4, len);
    const vertices = new Float32Array(nv * 3);
    for (let i = 0; i < nv * 3; i++) vertices[i] = d[i] * FX;
    let o = nv * 3;
    if (SHAPES[kind] === 'hull') {
      const faces = [];
      for (let f = 0; f < ne; f++) {
        const size = d[o++];
        faces.push(Array.from(d.subarray(o, o + size)));
        o += size;
      }
      return { shape: 'hull', vertices, faces };
    }
    return { shape: SHAPES[kind] ?? `kind ${kind}`, vertices, triangles: new Uint32Array(d.subarray(o, o + ne * 3)) };
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
