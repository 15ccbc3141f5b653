// SPDX-License-Identifier: MIT
// Bodies' shapes as three.js objects, from what engine.js hands out
// (Engine.shapes: kinds, dimensions, parts; Engine.geometry: hull and mesh
// vertices with faces or triangles). Shared by the replay viewer (viewer.js)
// and the browser peer's page (tools/browser_peer/render3d.js). Floats here
// are for drawing only: nothing goes back into a simulation.
//
// ctx: { geometry(index) -> THREE.BufferGeometry | null (a hull or mesh,
//        cached by the caller; see polyGeometry), renderer (for a plane's grid texture) }
import * as THREE from 'three';

/** One shape as a three.js mesh in its own frame, or null for a kind not drawn. */
export function meshFor(s, material, ctx) {
  switch (s.shape) {
    case 'sphere':
      return new THREE.Mesh(new THREE.SphereGeometry(s.radius, 24, 16), material);
    case 'box':
      return new THREE.Mesh(
        new THREE.BoxGeometry(2 * s.halfExtents[0], 2 * s.halfExtents[1], 2 * s.halfExtents[2]),
        material,
      );
    case 'capsule':
      return new THREE.Mesh(new THREE.CapsuleGeometry(s.radius, 2 * s.halfHeight, 8, 20), material);
    case 'plane': {
      // A large square of the boundary plane with a 1 m grid (a repeated
      // texture: long GL lines vanish under SwiftShader), facing along the normal.
      const n = new THREE.Vector3(...s.normal).normalize();
      const size = 400;
      material.map = gridTexture(size / 5, ctx.renderer);
      const plane = new THREE.Mesh(new THREE.PlaneGeometry(size, size), material);
      plane.geometry.rotateX(-Math.PI / 2);
      plane.quaternion.setFromUnitVectors(new THREE.Vector3(0, 1, 0), n);
      plane.position.copy(n.clone().multiplyScalar(s.planeD));
      return plane;
    }
    case 'hull':
    case 'mesh': {
      const g = s.geometry >= 0 ? ctx.geometry(s.geometry) : null;
      return g ? new THREE.Mesh(g, material) : null;
    }
    default:
      return null; // a shape kind this page does not know yet: not drawn
  }
}

/**
 * Flat-shaded triangles of a hull (its faces fanned from their first vertex) or
 * a mesh (its triangles), from Engine.geometry's { vertices, faces | triangles }:
 * one normal per face, as the software renderer draws them.
 */
export function polyGeometry(g) {
  const tris = [];
  if (g.faces) {
    for (const f of g.faces) for (let k = 1; k + 1 < f.length; k++) tris.push(f[0], f[k], f[k + 1]);
  } else {
    tris.push(...g.triangles);
  }
  const pos = new Float32Array(tris.length * 3);
  tris.forEach((v, i) => pos.set(g.vertices.subarray(v * 3, v * 3 + 3), i * 3));
  const geo = new THREE.BufferGeometry();
  geo.setAttribute('position', new THREE.BufferAttribute(pos, 3));
  geo.computeVertexNormals(); // not indexed: each triangle gets its own face normal
  geo.userData = { vertices: g.vertices.length / 3, faces: g.faces ? g.faces.length : tris.length / 3 };
  return geo;
}

/**
 * Body s's object: the one shape's mesh for a body of one centred shape, else
 * a Group at the body's pose holding one child per shape at its local pose.
 * Planes and meshes are ground: drawn with `ground`, the rest with `material`.
 */
export function bodyObject(s, material, ground, ctx) {
  const single = s.parts.length === 1 && s.parts[0].position.every((v) => v === 0) &&
    s.parts[0].quaternion[3] === 1;
  const child = (p) => {
    const m = meshFor(p, p.shape === 'plane' || p.shape === 'mesh' ? ground : material, ctx);
    if (m && p.shape !== 'plane') {
      m.position.add(new THREE.Vector3(...p.position));
      m.quaternion.premultiply(new THREE.Quaternion(...p.quaternion));
    }
    return m;
  };
  if (single || s.parts.length === 0) return child(s.parts[0] ?? s);
  const group = new THREE.Group();
  for (const p of s.parts) {
    const m = child(p);
    if (m) group.add(m);
  }
  return group;
}

/** 5 m x 5 m of ground, repeated: 1 m lines, a darker line every 5 m. */
export function gridTexture(repeat, renderer) {
  const c = document.createElement('canvas');
  c.width = c.height = 320;
  const g = c.getContext('2d');
  g.fillStyle = '#ffffff';
  g.fillRect(0, 0, 320, 320);
  g.fillStyle = '#c4c4bc';
  for (let i = 0; i < 5; i++) {
    g.fillRect(i * 64, 0, 2, 320);
    g.fillRect(0, i * 64, 320, 2);
  }
  g.fillStyle = '#8e8e86';
  g.fillRect(0, 0, 4, 320);
  g.fillRect(0, 0, 320, 4);
  const t = new THREE.CanvasTexture(c);
  t.wrapS = t.wrapT = THREE.RepeatWrapping;
  t.repeat.set(repeat, repeat);
  if (renderer) t.anisotropy = renderer.capabilities.getMaxAnisotropy();
  t.colorSpace = THREE.SRGBColorSpace;
  return t;
}
