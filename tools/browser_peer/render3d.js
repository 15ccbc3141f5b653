// SPDX-License-Identifier: MIT
// The page's three.js view of the predicted world (page.js keeps its 2D canvas
// as the fallback when there is no WebGL). Display only: the peer's Q16.16
// poses (peer.js, bp_body_pose) are divided into floats here and nothing goes
// back into the simulation.
//
// The bodies' shapes come from the scene through the replay viewer's engine
// (viewer/lockstep.wasm and viewer/engine.js, `make browser-peer-page` links
// them in: the scene is parsed once, never stepped) and become meshes with the
// viewer's own code (viewer/shapes3d.js), so a box is a box in both pages. The
// soccer arena (one static mesh) is coloured by its triangles' slope: grass,
// banks, walls, and each goal in the colour of the team that defends it.
// Cameras (key C switches): a broadcast view from the side following the ball
// (the page's car marked), or behind the page's car.
import * as THREE from 'three';
import { Engine } from './viewer/engine.js';
import { bodyObject, polyGeometry } from './viewer/shapes3d.js';

const TEAM = [0x3a8ee0, 0xe0603a]; // as the 2D canvas: team = slot % 2
const FX = 1 / 65536;
const SKY = 0x9fbfe0;
const ROOM_MIN = new THREE.Vector3(-14, 2, -21);
const ROOM_MAX = new THREE.Vector3(14, 9.5, 21);

// A static mesh (the soccer arena) coloured by its triangles' slope and place:
// grass, banks, and each goal in the colour of the team that defends it (goals
// beyond |z| = 22; team 0 attacks +z, so team 1 defends the +z goal), then the
// walls, see-through, in a second group (material 1).
function arenaGeometry(src) {
  const pos = src.attributes.position;
  const nor = src.attributes.normal;
  const c = new THREE.Color();
  const solid = [];
  const walls = [];
  for (let t = 0; t < pos.count; t += 3) {
    const ny = nor.getY(t);
    const z = (pos.getZ(t) + pos.getZ(t + 1) + pos.getZ(t + 2)) / 3;
    let list = solid;
    if (Math.abs(z) > 22.01) c.setHex(TEAM[z > 0 ? 1 : 0]).lerp(new THREE.Color(0xffffff), 0.35);
    else if (ny > 0.95) c.setHex(0x3f8f4a);
    else if (ny > 0.2) c.setHex(0x6aa86f);
    else {
      c.setHex(0xdde6f0);
      list = walls;
    }
    list.push([t, c.r, c.g, c.b]);
  }
  const n = pos.count;
  const p = new Float32Array(n * 3);
  const m = new Float32Array(n * 3);
  const col = new Float32Array(n * 3);
  [...solid, ...walls].forEach(([t, r, g, b], i) => {
    for (let k = 0; k < 3; k++) {
      p.set([pos.getX(t + k), pos.getY(t + k), pos.getZ(t + k)], (i * 3 + k) * 3);
      m.set([nor.getX(t + k), nor.getY(t + k), nor.getZ(t + k)], (i * 3 + k) * 3);
      col.set([r, g, b], (i * 3 + k) * 3);
    }
  });
  const geo = new THREE.BufferGeometry();
  geo.setAttribute('position', new THREE.BufferAttribute(p, 3));
  geo.setAttribute('normal', new THREE.BufferAttribute(m, 3));
  geo.setAttribute('color', new THREE.BufferAttribute(col, 3));
  geo.addGroup(0, solid.length * 3, 0);
  geo.addGroup(solid.length * 3, walls.length * 3, 1);
  return geo;
}

// True when WebGL is drawn by the CPU (SwiftShader in headless Chromium, llvmpipe):
// then half the resolution, no antialiasing and at most 30 frames/s, so that
// drawing leaves the page's 2 ms poll of the peer its time (at full resolution
// SwiftShader drew ~6 frames/s on the loaded 2-core machine and a 1200-tick
// match at 120 Hz took 31-35 s instead of 13-18 s).
function softwareGL() {
  const gl = document.createElement('canvas').getContext('webgl2');
  if (!gl) return false;
  const info = gl.getExtension('WEBGL_debug_renderer_info');
  const name = String(gl.getParameter(info ? info.UNMASKED_RENDERER_WEBGL : gl.RENDERER));
  gl.getExtension('WEBGL_lose_context')?.loseContext();
  return /swiftshader|llvmpipe|software/i.test(name);
}

// Centre line and circle, a little above the grass; land below.
function markings() {
  const m = new THREE.MeshBasicMaterial({ color: 0xe8f0e8 });
  const g = new THREE.Group();
  const line = new THREE.Mesh(new THREE.PlaneGeometry(20, 0.3), m);
  line.rotation.x = -Math.PI / 2;
  const ring = new THREE.Mesh(new THREE.RingGeometry(3.3, 3.6, 48), m);
  ring.rotation.x = -Math.PI / 2;
  g.add(line, ring);
  g.position.y = 0.02;
  // The land around the arena, so that it does not float in the sky.
  const land = new THREE.Mesh(new THREE.PlaneGeometry(400, 400), new THREE.MeshLambertMaterial({ color: 0x5f7d62 }));
  land.rotation.x = -Math.PI / 2;
  land.position.y = -0.3;
  g.add(land);
  return g;
}

/**
 * A three.js view in `container` of `peer`'s world for scene text `sceneText`.
 * Throws when WebGL or the viewer's engine is not there (the caller draws 2D).
 * Returns { kind, canvas, draw(), stats: { frames, ms } }: draw() renders the
 * peer's current poses; stats counts the frames drawn and their time.
 */
export async function create3d(container, sceneText, peer, engineUrl = 'viewer/lockstep.wasm') {
  const software = softwareGL();
  // three.js r163 and later need WebGL2; this throws without it.
  const renderer = new THREE.WebGLRenderer({ antialias: !software });
  const kind = `three.js r${THREE.REVISION} (WebGL2${software ? ', software' : ''})`;
  let shapes;
  const geometries = new Map();
  try {
    const engine = await Engine.load(engineUrl);
    engine.open(0, new TextEncoder().encode(sceneText));
    shapes = engine.shapes(0);
    for (const s of shapes) {
      for (const p of s.parts) {
        if (p.geometry >= 0 && !geometries.has(p.geometry)) geometries.set(p.geometry, polyGeometry(engine.geometry(0, p.geometry)));
      }
    }
    engine.close(0);
  } catch (e) {
    renderer.dispose();
    throw new Error(`the scene's shapes: ${e.message}`);
  }

  renderer.setPixelRatio(software ? 0.5 : Math.min(window.devicePixelRatio || 1, 2));
  renderer.domElement.className = 'view3d';
  container.prepend(renderer.domElement);
  const scene = new THREE.Scene();
  scene.background = new THREE.Color(SKY);
  scene.fog = new THREE.Fog(SKY, 70, 160);
  scene.add(new THREE.HemisphereLight(0xffffff, 0x556655, 1.5));
  const sun = new THREE.DirectionalLight(0xffffff, 1.6);
  sun.position.set(0.4, 1, 0.25);
  scene.add(sun);
  scene.add(markings());
  const camera = new THREE.PerspectiveCamera(55, 1, 0.1, 400);

  const ctx = { geometry: (i) => geometries.get(i) ?? null, renderer };
  const slotOf = new Map();
  for (let s = 0; s < 16; s++) {
    const b = peer.playerBody(s);
    if (b >= 0) slotOf.set(b, s);
  }
  const bodies = shapes.map((s, i) => {
    const slot = slotOf.get(i);
    let material;
    if (s.parts.some((p) => p.shape === 'mesh')) {
      for (const p of s.parts) if (p.shape === 'mesh') geometries.set(p.geometry, arenaGeometry(ctx.geometry(p.geometry)));
      // Front faces only: a wall between the camera and the pitch shows its back and is not drawn.
      material = [new THREE.MeshLambertMaterial({ vertexColors: true }),
        new THREE.MeshLambertMaterial({ vertexColors: true, transparent: true, opacity: 0.3, depthWrite: false })];
    } else {
      const color = slot !== undefined ? TEAM[slot % 2] : s.type === 'static' ? 0x9a9ca3 : 0xf4f4f4;
      material = new THREE.MeshLambertMaterial({ color });
    }
    const object = bodyObject(s, material, material, ctx);
    if (object) scene.add(object);
    return { object, slot, ball: slot === undefined && s.type === 'dynamic' && s.shape === 'sphere' };
  });
  // The page's own car: a marker above it.
  const marker = new THREE.Mesh(new THREE.ConeGeometry(0.45, 0.9, 16), new THREE.MeshBasicMaterial({ color: 0xffeb3b }));
  marker.rotation.x = Math.PI; // pointing down
  marker.visible = false;
  scene.add(marker);

  let mode = 'broadcast';
  addEventListener('keydown', (e) => {
    if (e.code === 'KeyC') mode = mode === 'chase' ? 'broadcast' : 'chase';
  });
  const eye = new THREE.Vector3();
  const look = new THREE.Vector3();
  let placed = false;
  let last = performance.now();
  let drawn = 0;
  const stats = { frames: 0, ms: 0 }; // frames drawn and the time they took on the page's thread
  const q = new THREE.Quaternion();
  const fwd = new THREE.Vector3();

  function draw() {
    const now = performance.now();
    if (software && now - drawn < 33) return;
    drawn = now;
    stats.frames++;
    const w = container.clientWidth || 640;
    const h = container.clientHeight || 400;
    const size = renderer.getSize(new THREE.Vector2());
    if (size.x !== w || size.y !== h) {
      renderer.setSize(w, h, false);
      camera.aspect = w / h;
      camera.updateProjectionMatrix();
    }
    const poses = peer.poses();
    let own = null;
    let ball = null;
    bodies.forEach((b, i) => {
      const p = poses[i];
      if (!b.object || !p) return;
      b.object.position.set(p.x, p.y, p.z);
      b.object.quaternion.set(p.q[1] * FX, p.q[2] * FX, p.q[3] * FX, p.q[0] * FX);
      if (b.slot !== undefined && b.slot === peer.slot && !peer.spectator) own = b.object;
      if (b.ball) ball = b.object;
    });
    marker.visible = own !== null;
    if (own) marker.position.copy(own.position).add(new THREE.Vector3(0, 1.6, 0));

    // Where the camera wants to be, then an exponential approach (frame-rate independent).
    const dt = Math.min(0.25, (now - last) / 1000);
    last = now;
    const goalEye = new THREE.Vector3();
    const goalLook = new THREE.Vector3();
    if (mode === 'chase' && own) {
      q.copy(own.quaternion);
      fwd.set(0, 0, 1).applyQuaternion(q).setY(0);
      if (fwd.lengthSq() < 1e-4) fwd.set(0, 0, 1);
      fwd.normalize();
      goalEye.copy(own.position).addScaledVector(fwd, -13).add(new THREE.Vector3(0, 7, 0));
      goalLook.copy(own.position).addScaledVector(fwd, 9);
      goalEye.clamp(ROOM_MIN, ROOM_MAX); // inside the arena (soccer: 30 x 44 m, walls 10 m high)
    } else {
      const z = ball ? ball.position.z * 0.3 : 0;
      goalEye.set(40, 26, z);
      goalLook.set(0, 0, z);
    }
    const k = placed ? 1 - Math.exp(-dt * 5) : 1;
    eye.lerp(goalEye, k);
    look.lerp(goalLook, k);
    placed = true;
    camera.position.copy(eye);
    camera.lookAt(look);
    renderer.render(scene, camera);
    stats.ms += performance.now() - now;
  }
  return { kind, canvas: renderer.domElement, draw, stats, camera: () => mode };
}
