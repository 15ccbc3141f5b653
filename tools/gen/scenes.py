#!/usr/bin/env python3
# Generates the larger shipped scenes under tools/scenes/ (exact decimal text;
# positions are multiples of 1/1000 m so every value is written as given), and
# the bench-only tools/bench/scenes/joint_grid.scene. Run from anywhere:
#   python3 tools/gen/scenes.py
# Every file is a pure function of this script: randomness comes from seeded
# streams (random.Random(seed) for hull_pile, the script's own splitmix64 Rng
# for the Solver v2 scenes), never from global state, so the files come out
# byte-identical on every run and every Python 3.
import math
import os

HERE = os.path.join(os.path.dirname(__file__), "..", "scenes")
BENCH_HERE = os.path.join(os.path.dirname(__file__), "..", "bench", "scenes")
GROUND = "body static plane normal 0 1 0 d 0 friction 0.6\n"
# The Solver v2 world line: 4 sub-steps, 1 solve + 1 relax iteration each.
WORLD = "world gravity 0 -9.81 0 tick_rate 60 substeps 8 iterations 1 1 ticks %d%s\n"


def write(name, header, bodies):
    with open(os.path.join(HERE, name), "w") as f:
        f.write(header)
        f.write(GROUND)
        f.writelines(bodies)


def pyramid():
    # 10-level square pyramid: level k (0 = bottom) is a (10-k) x (10-k) layer of 1 m boxes.
    bodies = []
    for k in range(10):
        n = 10 - k
        for i in range(n):
            for j in range(n):
                x = (i - (n - 1) / 2) * 1.0
                z = (j - (n - 1) / 2) * 1.0
                bodies.append("body dynamic box half 0.5 0.5 0.5 pos %.3f %.3f %.3f density 100 friction 0.6\n"
                              % (x, 0.5 + k, z))
    write("pyramid.scene", "# 10-level square box pyramid (385 boxes).\n"
          "world gravity 0 -9.81 0 tick_rate 60 substeps 8 iterations 1 1 ticks 1000\n", bodies)


def pile():
    # 1000 boxes dropped in a 10 x 10 x 10 lattice with small per-box offsets.
    bodies = []
    for n in range(1000):
        i, j, k = n % 10, (n // 10) % 10, n // 100
        dx = ((n * 37) % 11 - 5) * 0.02
        dz = ((n * 53) % 13 - 6) * 0.02
        bodies.append("body dynamic box half 0.4 0.4 0.4 pos %.3f %.3f %.3f density 100 friction 0.6\n"
                      % ((i - 4.5) * 1.2 + dx, 1.0 + k * 1.2, (j - 4.5) * 1.2 + dz))
    write("pile_1000.scene", "# 1000 boxes dropped into a pile.\n"
          "world gravity 0 -9.81 0 tick_rate 60 substeps 8 iterations 1 1 ticks 600 max_contacts 65536\n", bodies)


def slope():
    # Two blocks on a 30 degree ramp: mu 0.7 > tan 30 (holds), mu 0.3 < tan 30 (slides).
    a = math.radians(30)
    q = "quat 0 0 %.5f %.5f" % (math.sin(a / 2), math.cos(a / 2))
    n = (-math.sin(a), math.cos(a))
    bodies = ["body static box half 10 0.5 4 pos 0 6 0 %s friction 1\n" % q]
    # Pairs mix friction as sqrt(a*b) and the ramp has 1, so a block of mu^2 gives mu.
    for z, mu in ((-2, 0.49), (2, 0.09)):
        x, y = n[0] * 1.0 + 4, 6 + n[1] * 1.0 + 4 * math.tan(a)  # 4 m up the ramp
        bodies.append("body dynamic box half 0.5 0.5 0.5 pos %.4f %.4f %d %s friction %.2f no_sleep\n"
                      % (x, y, z, q, mu))
    write("slope.scene", "# Blocks on a 30 degree slope: the mu 0.7 one holds, the mu 0.3 one slides.\n"
          "world gravity 0 -9.81 0 tick_rate 60 substeps 8 iterations 1 1 ticks 600\n", bodies)


def dominoes():
    bodies = []
    for i in range(20):
        bodies.append("body dynamic box half 0.1 1 0.5 pos %.3f 1 0 density 500 friction 0.6\n" % (i * 1.2))
    bodies.append("body dynamic sphere radius 0.3 pos -1.5 2 0 vel 4 0 0 density 500\n")
    write("dominoes.scene", "# A row of 20 dominoes knocked over by a ball.\n"
          "world gravity 0 -9.81 0 tick_rate 60 substeps 8 iterations 1 1 ticks 900\n", bodies)


def arena():
    bodies = ["body static box half 10 1 0.5 pos 0 1 10.5\n", "body static box half 10 1 0.5 pos 0 1 -10.5\n",
              "body static box half 0.5 1 10 pos 10.5 1 0\n", "body static box half 0.5 1 10 pos -10.5 1 0\n"]
    # Players weigh 2 kg so a 20 N push (seed_000) beats friction (0.4 * 2 kg * g = 7.8 N).
    for k, (x, z) in enumerate(((-5, -5), (5, -5), (-5, 5), (5, 5))):
        bodies.append("body dynamic box half 0.5 0.5 0.5 pos %d 0.5 %d density 2 friction 0.4 no_sleep player %d\n"
                      % (x, z, k))
    for i in range(8):
        bodies.append("body dynamic sphere radius 0.4 pos %.1f 0.4 0 density 50\n" % (-3.5 + i))
    write("arena.scene", "# Arena: four player boxes (player 0..3), walls, balls.\n"
          "world gravity 0 -9.81 0 tick_rate 60 substeps 8 iterations 1 1 ticks 1200\n", bodies)


def rain():
    # 2000 spheres (r 0.25 m) rain into a static open box: 4 walls on the ground plane,
    # inner floor 8 x 8 m, walls 4 m high. The spheres start in a 10 x 10 x 20 grid
    # (0.7 m pitch, small per-sphere offsets so columns do not balance) and fall.
    bodies = ["body static box half 4.25 2 0.25 pos 0 2 4.25 friction 0.6\n",
              "body static box half 4.25 2 0.25 pos 0 2 -4.25 friction 0.6\n",
              "body static box half 0.25 2 4 pos 4.25 2 0 friction 0.6\n",
              "body static box half 0.25 2 4 pos -4.25 2 0 friction 0.6\n"]
    for n in range(2000):
        i, j, k = n % 10, (n // 10) % 10, n // 100
        dx = ((n * 37) % 11 - 5) * 0.01
        dz = ((n * 53) % 13 - 6) * 0.01
        bodies.append("body dynamic sphere radius 0.25 pos %.3f %.3f %.3f density 100 friction 0.6\n"
                      % ((i - 4.5) * 0.7 + dx, 1.0 + k * 0.7, (j - 4.5) * 0.7 + dz))
    write("rain_2000.scene", "# 2000 spheres raining into a box (walls + ground plane).\n"
          "world gravity 0 -9.81 0 tick_rate 60 substeps 8 iterations 1 1 ticks 600 max_contacts 65536\n", bodies)


def tower_struck():
    # seed_000 scene02: a six-high tower of 1 m boxes hit at mid-height by a heavy ball.
    bodies = ["body dynamic box half 0.5 0.5 0.5 pos 0 %.1f 0 density 100 friction 0.6\n" % (0.5 + k)
              for k in range(6)]
    bodies.append("body dynamic sphere radius 0.4 pos -6 2.6 0.1 vel 9 1.5 0 density 600 friction 0.4\n")
    write("tower_struck.scene", "# A six-box tower struck at mid-height by a ball (seed_000 scene02).\n"
          "world gravity 0 -9.81 0 tick_rate 60 substeps 8 iterations 1 1 ticks 600\n", bodies)


def catapult():
    # seed_000 scene04: a plank balanced on a fulcrum with a light box on its left
    # end; a heavy box dropped on the right end flings the light box up and away.
    bodies = ["body static box half 0.3 0.5 0.6 pos 0 0.5 0 friction 0.8\n",
              "body dynamic box half 3 0.05 0.5 pos 0 1.05 0 density 200 friction 0.8\n",
              "body dynamic box half 0.25 0.25 0.25 pos -2.6 1.35 0 density 100 friction 0.8\n",
              "body dynamic box half 0.4 0.4 0.4 pos 2.6 4 0 density 800 friction 0.8\n"]
    write("catapult.scene", "# Catapult: a heavy box dropped on a plank launches a light one (seed_000 scene04).\n"
          "world gravity 0 -9.81 0 tick_rate 60 substeps 8 iterations 1 1 ticks 600\n", bodies)


def two_ramps():
    # seed_000 scene06: narrow bodies (thin boxes and capsules) slide down two facing
    # 25 degree ramps and pile up in the valley between them.
    a = math.radians(25)
    bodies = []
    for side in (-1, 1):
        q = "quat 0 0 %.5f %.5f" % (math.sin(side * a / 2), math.cos(side * a / 2))
        bodies.append("body static box half 4 0.2 2 pos %.3f 2 0 %s friction 0.5\n" % (side * 3.9, q))
    for i in range(6):
        side = -1 if i % 2 == 0 else 1
        x = side * (5.5 - 0.9 * (i // 2))
        y = 2 + math.tan(a) * (abs(x) - 0.3) + 0.6
        z = -1.2 + 0.5 * (i // 2) + (0.1 if side > 0 else -0.1)
        if i % 3 == 0:
            bodies.append("body dynamic capsule radius 0.08 half_height 0.4 pos %.3f %.3f %.3f density 400 "
                          "friction 0.3\n" % (x, y, z))
        else:
            bodies.append("body dynamic box half 0.06 0.4 0.06 pos %.3f %.3f %.3f density 400 friction 0.3\n"
                          % (x, y, z))
    write("two_ramps.scene", "# Narrow bodies on two facing ramps (seed_000 scene06).\n"
          "world gravity 0 -9.81 0 tick_rate 60 substeps 8 iterations 1 1 ticks 900\n", bodies)


def f3(v):
    # Three decimals, no "-0.000".
    t = "%.3f" % v
    return "0.000" if t == "-0.000" else t


def hull_pile():
    # 200 convex hulls of 4..32 random points on spheres of radius 0.3..0.45 m,
    # dropped in a 5 x 5 column grid into a walled bin. random.Random(seed) is
    # Python's Mersenne Twister: the same file on every Python 3.
    import random
    rng = random.Random(20261123)
    bodies = []
    half = 3.5
    for (x, z, hx, hz) in ((half + 0.25, 0, 0.25, half + 0.5), (-half - 0.25, 0, 0.25, half + 0.5),
                           (0, half + 0.25, half, 0.25), (0, -half - 0.25, half, 0.25)):
        bodies.append("body static box half %s 2 %s pos %s 2 %s friction 0.6\n"
                      % (f3(hx), f3(hz), f3(x), f3(z)))
    for k in range(200):
        layer, cell = divmod(k, 25)
        i, j = divmod(cell, 5)
        n = rng.randint(4, 32)
        r = rng.uniform(0.3, 0.45)
        pts = []
        # A jittered regular tetrahedron first, so even a 4-point hull has volume.
        for t in ((1, 1, 1), (1, -1, -1), (-1, 1, -1), (-1, -1, 1)):
            v = [c + rng.uniform(-0.2, 0.2) for c in t]
            ln = math.sqrt(sum(c * c for c in v))
            pts.append(tuple(f3(r * c / ln) for c in v))
        while len(pts) < n:
            # Uniform on the sphere (Marsaglia), rounded to the millimetre.
            a, b = rng.uniform(-1, 1), rng.uniform(-1, 1)
            q = a * a + b * b
            if q >= 1:
                continue
            s = 2 * math.sqrt(1 - q)
            p = (f3(r * a * s), f3(r * b * s), f3(r * (1 - 2 * q)))
            if p not in pts:
                pts.append(p)
        x = (i - 2) * 1.2 + rng.uniform(-0.1, 0.1)
        z = (j - 2) * 1.2 + rng.uniform(-0.1, 0.1)
        y = 1.0 + layer * 1.1
        bodies.append("body dynamic hull points %d %s pos %s %s %s density 500 friction 0.6\n"
                      % (n, " ".join(" ".join(p) for p in pts), f3(x), f3(y), f3(z)))
    write("hull_pile.scene", "# 200 random convex hulls (4..32 points) dropped into a walled bin.\n"
          "world gravity 0 -9.81 0 tick_rate 60 substeps 8 iterations 1 1 ticks 600\n", bodies)


def compound_stairs():
    # Compound bodies tumbling down 8 stairs (0.4 m rise, 1 m run) towards +x:
    # an L-shape of two boxes, a table of five boxes, a dumbbell of two spheres
    # and a capsule.
    bodies = []
    for k in range(8):
        h = 0.2 * (k + 1)
        bodies.append("body static box half 0.5 %s 3 pos %s %s 0 friction 0.6\n"
                      % (f3(h), f3(-k * 1.0), f3(h)))
    top = 0.4 * 8
    bodies.append("body dynamic box half 0.6 0.15 0.3 pos -6.8 %s -1.8 density 400 vel 4 0 0 angvel 0 0 -3\n"
                  % f3(top + 0.6))
    bodies.append("shape box half 0.15 0.45 0.3 at 0.45 0.6 0 density 400\n")
    bodies.append("body dynamic box half 0.5 0.06 0.35 pos -6.8 %s 0 density 300 vel 4.5 0 0 angvel 0 0 -2\n"
                  % f3(top + 0.8))
    for (x, z) in ((0.42, 0.28), (-0.42, 0.28), (0.42, -0.28), (-0.42, -0.28)):
        bodies.append("shape box half 0.05 0.25 0.05 at %s -0.31 %s density 300\n" % (f3(x), f3(z)))
    bodies.append("body dynamic sphere radius 0.25 pos -6.8 %s 1.2 density 500 vel 3 0 0.2\n"
                  % f3(top + 0.7))
    bodies.append("shape capsule radius 0.08 half_height 0.4 at 0 0 0.45 rot 0.7071068 0 0 0.7071068"
                  " density 500\n")
    bodies.append("shape sphere radius 0.25 at 0 0 0.9 density 500\n")
    write("compound_stairs.scene", "# Compound bodies (an L-shape, a table, a dumbbell) tumbling down stairs.\n"
          "world gravity 0 -9.81 0 tick_rate 60 substeps 8 iterations 1 1 ticks 600\n", bodies)


def terrain_obj():
    # A 24 x 24 m heightfield of gentle hills, 1 m cells, two triangles each,
    # counter-clockwise seen from above (normals up); heights to the millimetre.
    n = 24
    lines = ["# Terrain for mesh_terrain.scene: 25 x 25 vertices, 1 m cells (tools/gen/scenes.py).\n"]
    for j in range(n + 1):
        for i in range(n + 1):
            x, z = i - n / 2, j - n / 2
            # Gentle hills in a basin whose rim rises ~2 m, so rolling bodies stay on it.
            h = 0.5 * math.sin(x / 3.0) * math.cos(z / 4.0) + 0.014 * (x * x + z * z)
            lines.append("v %s %s %s\n" % (f3(x), f3(h), f3(z)))
    for j in range(n):
        for i in range(n):
            a = j * (n + 1) + i + 1
            b, c, d = a + 1, a + n + 1, a + n + 2
            lines.append("f %d %d %d\n" % (a, c, b))
            lines.append("f %d %d %d\n" % (b, c, d))
    with open(os.path.join(HERE, "terrain.obj"), "w") as f:
        f.writelines(lines)


def mesh_terrain():
    # A triangulated ramp (inline mesh, 2 x 8 cells) down onto a mesh terrain
    # (terrain.obj); a box, a sphere and a hull slide and roll down it.
    terrain_obj()
    verts, tris = [], []
    cols, rows = 2, 8
    for j in range(rows + 1):
        for i in range(cols + 1):
            x = -14.0 + j * 1.0
            verts.append((f3(x), f3(6.0 - j * 0.45), f3(-3.0 + i * 3.0)))
    for j in range(rows):
        for i in range(cols):
            a = j * (cols + 1) + i
            b, c, d = a + 1, a + cols + 1, a + cols + 2
            tris += [(a, b, c), (b, d, c)]
    ramp = "body static mesh vertices %d %s triangles %d %s friction 0.5\n" % (
        len(verts), " ".join(" ".join(v) for v in verts), len(tris),
        " ".join("%d %d %d" % t for t in tris))
    bodies = ["body static mesh obj terrain.obj friction 0.6\n", ramp]
    # A low wall around the terrain keeps what rolls far on it.
    for (x, z, hx, hz) in ((12.25, 0, 0.25, 12.5), (-12.25, 0, 0.25, 12.5), (0, 12.25, 12.5, 0.25),
                           (0, -12.25, 12.5, 0.25)):
        bodies.append("body static box half %s 3.5 %s pos %s 1 %s friction 0.6\n"
                      % (f3(hx), f3(hz), f3(x), f3(z)))
    slope = "0 0 -0.2114 0.9774"  # about z by -24.4 degrees (the ramp's 0.45/1 slope)
    bodies.append("body dynamic box half 0.3 0.3 0.3 pos -13.5 6.5 -1.5 quat %s friction 0.3\n" % slope)
    bodies.append("body dynamic sphere radius 0.3 pos -13.5 6.6 0 friction 0.5\n")
    bodies.append("body dynamic hull points 8 -0.3 -0.25 -0.3 0.3 -0.25 -0.3 -0.3 -0.25 0.3 0.3 -0.25 0.3"
                  " -0.2 0.25 -0.2 0.2 0.25 -0.2 -0.2 0.25 0.2 0.2 0.25 0.2 pos -13.5 6.6 1.5 quat %s"
                  " friction 0.3\n" % slope)
    with open(os.path.join(HERE, "mesh_terrain.scene"), "w") as f:
        f.write("# A box, a sphere and a hull sliding down a triangulated ramp onto a mesh terrain.\n"
                "world gravity 0 -9.81 0 tick_rate 60 substeps 8 iterations 1 1 ticks 600\n")
        f.writelines(bodies)


def ccd():
    # Continuous collision: a 0.1 m sphere at 100 m/s at a 10 cm static wall,
    # and 500 m/s bodies into the ground (SPEC.md §11 stage 6b).
    bodies = ["body static box half 0.05 2 2 pos 5 2 0\n",
              "body dynamic sphere radius 0.1 pos 0 1 0 vel 100 0 0\n",
              "body dynamic sphere radius 0.1 pos 0 20 5 vel 0 -500 0\n",
              "body dynamic box half 0.2 0.2 0.2 pos 3 30 -5 vel 0 -500 0\n",
              "body dynamic capsule radius 0.1 half_height 0.3 pos -3 25 -2 vel 20 -480 0 bullet\n"]
    write("ccd.scene", "# Continuous collision: fast bodies against a thin wall and the ground.\n"
          "world gravity 0 -9.81 0 tick_rate 60 substeps 8 iterations 1 1 ticks 240\n", bodies)


# ---- Solver v2 scenes (issue 13): joints, mass ratios, imperfect stacks ----

M64 = (1 << 64) - 1


class Rng:
    """splitmix64: a seeded stream of its own (no global state, the same
    numbers on every Python, every platform)."""

    def __init__(self, seed):
        self.s = seed & M64

    def next64(self):
        self.s = (self.s + 0x9E3779B97F4A7C15) & M64
        z = self.s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        return z ^ (z >> 31)

    def uniform(self, lo, hi):
        return lo + (hi - lo) * (self.next64() >> 11) / float(1 << 53)


def f4(v):
    # Four decimals (sub-millimetre offsets), no "-0.0000".
    t = "%.4f" % v
    return "0.0000" if t == "-0.0000" else t


def v3(v):
    return " ".join(f3(c) for c in v)


def quat_axis_angle(axis, angle):
    n = math.sqrt(sum(c * c for c in axis))
    s = math.sin(angle / 2) / n
    return (axis[0] * s, axis[1] * s, axis[2] * s, math.cos(angle / 2))


def quat_mul(a, b):
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return (aw * bx + ax * bw + ay * bz - az * by, aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw, aw * bw - ax * bx - ay * by - az * bz)


def rotate(q, v):
    # v' = q v q*
    p = quat_mul(quat_mul(q, (v[0], v[1], v[2], 0.0)), (-q[0], -q[1], -q[2], q[3]))
    return p[:3]


def qtext(q):
    # Canonical sign (w >= 0), five decimals; the engine normalises at creation.
    if q[3] < 0:
        q = tuple(-c for c in q)
    t = ["%.5f" % c for c in q]
    return " ".join("0.00000" if c == "-0.00000" else c for c in t)


def write_scene(path, comment, world, lines):
    with open(path, "w") as f:
        f.write(comment)
        f.write(world)
        f.writelines(lines)


def falling_hinges():
    # Box2D v3's determinism scene (shared/determinism.c, CreateFallingHinges) in
    # 3D: 4 leaning columns of 20 boxes (h = 0.25 m), box (column j, row i) at
    # x = -3.75 + 10h j + 0.4h i, y = h + 2h i, turned about z by +-0.1 rad
    # (alternating); rows 2k and 2k+1 of a column share a hinge about z at the
    # lower box's upper-left edge (-h, +h) with limits [-0.1 pi, 0.2 pi] =
    # [-18, 36] degrees, a 1 Hz spring (damping ratio 1) and a motor of speed 0
    # whose torque limit (25 N m for these 25 kg boxes; Box2D: 0.25 for 0.25 kg)
    # acts as joint friction. The columns topple into each other and settle;
    # the crosscheck's hinges+sleep job steps it until every body sleeps and
    # pins the pair (sleep tick, checksum), like Box2D's EXPECTED_SLEEP_STEP/HASH.
    h = 0.25
    bodies, joints = [], []
    index = {}
    for j in range(4):
        for i in range(20):
            a = 0.1 if (i + j) % 2 == 0 else -0.1
            x, y = -3.75 + 10 * h * j + 0.4 * h * i, h + 2 * h * i
            index[(j, i)] = 1 + len(bodies)  # body 0 is the ground
            bodies.append("body dynamic box half 0.25 0.25 0.25 pos %s %s 0 quat 0 0 %.5f %.5f "
                          "density 200 friction 0.6\n" % (f3(x), f3(y), math.sin(a / 2), math.cos(a / 2)))
            if i % 2 == 1:
                # Anchor: the lower box's local (-h, +h) corner edge, in world space.
                al = 0.1 if (i - 1 + j) % 2 == 0 else -0.1
                xl, yl = x - 0.4 * h, y - 2 * h
                ax = xl - h * math.cos(al) - h * math.sin(al)
                ay = yl - h * math.sin(al) + h * math.cos(al)
                joints.append("joint hinge %d %d anchor %s %s 0 axis 0 0 1 limits -18 36 motor 0 25 "
                              "spring 1 1\n" % (index[(j, i - 1)], index[(j, i)], f3(ax), f3(ay)))
    write("falling_hinges.scene",
          "# Falling hinges (Box2D v3's determinism scene in 3D): 4 leaning columns of 20 boxes\n"
          "# turned by +-0.1 rad, pairs joined by hinges with limits, springs and motors; they\n"
          "# topple, settle and sleep (crosscheck job hinges+sleep: sleep tick + checksum).\n"
          + WORLD % (900, ""), bodies + joints)


# One ragdoll standing with its feet at y = 0: 11 bodies (pelvis, torso, head,
# upper/lower arms, upper/lower legs) and 10 joints (cones at waist, neck,
# shoulders and hips; hinges with friction motors at elbows and knees).
RAGDOLL_BODIES = [
    ("box half 0.15 0.1 0.1", (0, 1.0, 0)),            # 0 pelvis
    ("box half 0.17 0.2 0.1", (0, 1.3, 0)),            # 1 torso
    ("sphere radius 0.11", (0, 1.63, 0)),              # 2 head
    ("capsule radius 0.05 half_height 0.1", (-0.24, 1.31, 0)),    # 3 upper arm L
    ("capsule radius 0.05 half_height 0.1", (-0.24, 1.01, 0)),  # 4 lower arm L
    ("capsule radius 0.05 half_height 0.1", (0.24, 1.31, 0)),     # 5 upper arm R
    ("capsule radius 0.05 half_height 0.1", (0.24, 1.01, 0)),   # 6 lower arm R
    ("capsule radius 0.07 half_height 0.15", (-0.09, 0.70, 0)),   # 7 upper leg L
    ("capsule radius 0.06 half_height 0.16", (-0.09, 0.26, 0)),   # 8 lower leg L
    ("capsule radius 0.07 half_height 0.15", (0.09, 0.70, 0)),    # 9 upper leg R
    ("capsule radius 0.06 half_height 0.16", (0.09, 0.26, 0)),    # 10 lower leg R
]
# (type, a, b, anchor, axis, options); the knees bend one way, the elbows the other.
RAGDOLL_JOINTS = [
    ("cone", 0, 1, (0, 1.1, 0), (0, 1, 0), "cone 25 twist -20 20"),
    ("cone", 1, 2, (0, 1.51, 0), (0, 1, 0), "cone 40 twist -45 45"),
    ("cone", 1, 3, (-0.24, 1.46, 0), (0, -1, 0), "cone 80 twist -30 30"),
    ("hinge", 3, 4, (-0.24, 1.16, 0), (1, 0, 0), "limits 0 140 motor 0 0.5"),
    ("cone", 1, 5, (0.24, 1.46, 0), (0, -1, 0), "cone 80 twist -30 30"),
    ("hinge", 5, 6, (0.24, 1.16, 0), (1, 0, 0), "limits 0 140 motor 0 0.5"),
    ("cone", 0, 7, (-0.09, 0.92, 0), (0, -1, 0), "cone 60 twist -20 20"),
    ("hinge", 7, 8, (-0.09, 0.48, 0), (1, 0, 0), "limits -140 0 motor 0 1.5"),
    ("cone", 0, 9, (0.09, 0.92, 0), (0, -1, 0), "cone 60 twist -20 20"),
    ("hinge", 9, 10, (0.09, 0.48, 0), (1, 0, 0), "limits -140 0 motor 0 1.5"),
]


def ragdolls():
    # 6 ragdolls (66 bodies, 60 joints) dropped in seeded poses (tilted
    # 60..90 degrees, any yaw) onto 10 stairs (0.25 m rise, 0.6 m run, going
    # down towards +x), then tumbling down onto the ground.
    rng = Rng(20261201)
    lines = []
    steps, rise, run = 10, 0.25, 0.6
    for k in range(steps):
        top = rise * (steps - k)
        lines.append("body static box half 0.3 %s 4 pos %s %s 0 friction 0.7\n"
                     % (f3(top / 2), f3(k * run), f3(top / 2)))

    def stair_top(x):
        k = max(0, min(steps - 1, int(math.floor((x + 0.3) / run))))
        return rise * (steps - k) if x >= -0.3 else rise * steps

    joints = []
    spots = [(0.3, -2.6, 0.0), (0.3, 0.0, 0.0), (0.3, 2.6, 0.0),
             (2.4, -1.3, 1.0), (2.4, 1.3, 1.0), (4.5, 0.0, 2.0)]
    centre = (0, 0.9, 0)  # the standing ragdoll's middle: rotations turn about it
    for (x, z, extra) in spots:
        yaw = quat_axis_angle((0, 1, 0), rng.uniform(-math.pi, math.pi))
        tilt_axis = (1, 0, 0) if rng.uniform(0, 1) < 0.5 else (0, 0, 1)
        tilt = quat_axis_angle(tilt_axis, rng.uniform(math.radians(60), math.radians(90)) *
                               (1 if rng.uniform(0, 1) < 0.5 else -1))
        q = quat_mul(yaw, tilt)
        # Above the highest stair under it (it spans at most 0.9 m around its middle).
        y = max(stair_top(x - 1.0), stair_top(x + 1.0)) + 1.3 + extra
        base = 1 + len(lines)  # body 0 is the ground plane; lines holds every body so far
        for (shape, p) in RAGDOLL_BODIES:
            r = rotate(q, tuple(p[i] - centre[i] for i in range(3)))
            lines.append("body dynamic %s pos %s quat %s density 1000 friction 0.6\n"
                         % (shape, v3((x + r[0], y + r[1], z + r[2])), qtext(q)))
        for (kind, a, b, anchor, axis, opts) in RAGDOLL_JOINTS:
            r = rotate(q, tuple(anchor[i] - centre[i] for i in range(3)))
            ax = rotate(q, axis)
            joints.append("joint %s %d %d anchor %s axis %s %s\n"
                          % (kind, base + a, base + b, v3((x + r[0], y + r[1], z + r[2])),
                             " ".join("%.4f" % c if abs(c) >= 5e-5 else "0" for c in ax), opts))
    write("ragdolls.scene",
          "# Six 11-body ragdolls (capsule limbs, box pelvis and torso, sphere head; cone joints\n"
          "# at waist, neck, shoulders and hips, hinges with friction motors at elbows and knees)\n"
          "# dropped in seeded poses onto 10 stairs.\n"
          + WORLD % (900, ""), lines + joints)


def rope_bridge(name="rope_bridge.scene", density=200, ticks=900,
                header="# Rope bridge: 30 planks hanging slack between two static posts, joined by two ball\n"
                       "# joints per gap (the ropes); three boxes drop onto it.\n"):
    # 30 planks (0.4 x 0.1 x 1.2 m) between two static posts, joined by pairs
    # of ball joints at z = +-0.5 (the two ropes), hanging slack (30 links of
    # 0.5 m over a 14 m gap) in a symmetric curve; three boxes drop onto it.
    n, pitch, span, top = 30, 0.5, 14.0, 6.0

    def shape(alpha):  # slope angle of link i, linear in i from -alpha to +alpha
        return [alpha * ((2 * i + 1) / n - 1) for i in range(n)]

    lo, hi = 0.0, 1.5
    for _ in range(60):  # bisection: horizontal length of the curve = span
        mid = (lo + hi) / 2
        if sum(pitch * math.cos(t) for t in shape(mid)) > span:
            lo = mid
        else:
            hi = mid
    angles = shape((lo + hi) / 2)
    pts = [(-span / 2, top)]
    for t in angles:
        pts.append((pts[-1][0] + pitch * math.cos(t), pts[-1][1] + pitch * math.sin(t)))
    pts[-1] = (span / 2, top)  # the bisection leaves < 1e-12 m
    lines = ["body static box half 0.25 3 0.8 pos %s 3 0 friction 0.6 label post_left\n" % f3(-span / 2 - 0.25),
             "body static box half 0.25 3 0.8 pos %s 3 0 friction 0.6 label post_right\n" % f3(span / 2 + 0.25)]
    first = 3
    for i, t in enumerate(angles):
        cx, cy = (pts[i][0] + pts[i + 1][0]) / 2, (pts[i][1] + pts[i + 1][1]) / 2
        lines.append("body dynamic box half 0.2 0.05 0.6 pos %s %s 0 quat 0 0 %.5f %.5f density 500 "
                     "friction 0.8\n" % (f3(cx), f3(cy), math.sin(t / 2), math.cos(t / 2)))
    low = min(p[1] for p in pts)
    for x in (-3.0, 0.0, 3.0):
        lines.append("body dynamic box half 0.25 0.25 0.25 pos %s %s 0 density %d friction 0.6\n"
                     % (f3(x), f3(low + 2.5), density))
    for i in range(n + 1):
        a = "post_left" if i == 0 else str(first + i - 1)
        b = "post_right" if i == n else str(first + i)
        for z in (-0.5, 0.5):
            lines.append("joint ball %s %s anchor %s %s %s\n" % (a, b, f3(pts[i][0]), f3(pts[i][1]), f3(z)))
    write(name, header + WORLD % (ticks, ""), lines)


def chain_50():
    # 50 capsule links (0.3 m tip to tip) on ball joints, hanging from a static
    # anchor 16 m up, released from horizontal: the chain swings down and whips.
    lines = ["body static sphere radius 0.1 pos 0 16 0 label anchor\n"]
    joints = []
    for i in range(50):
        lines.append("body dynamic capsule radius 0.05 half_height 0.1 pos %s 16 0 quat 0 0 0.70711 0.70711 "
                     "density 1000 friction 0.4\n" % f3(0.15 + 0.3 * i))
        joints.append("joint ball %s %d anchor %s 16 0\n" % ("anchor" if i == 0 else str(i + 1), i + 2, f3(0.3 * i)))
    write("chain_50.scene",
          "# A 50-link capsule chain on ball joints hanging from a static anchor, released sideways.\n"
          + WORLD % (600, ""), lines + joints)


def spinner():
    # A paddle (5.4 x 0.7 x 0.16 m) on a motorised vertical hinge (1.5 rad/s,
    # at most 5000 N m) at the centre of a walled 6 x 6 m bin stirs 150 boxes
    # and spheres dropped onto it.
    rng = Rng(20261202)
    lines = ["body static box half 3.25 1 0.25 pos 0 1 3.25 friction 0.6\n",
             "body static box half 3.25 1 0.25 pos 0 1 -3.25 friction 0.6\n",
             "body static box half 0.25 1 3 pos 3.25 1 0 friction 0.6\n",
             "body static box half 0.25 1 3 pos -3.25 1 0 friction 0.6\n",
             "body static box half 0.15 0.6 0.15 pos 0 0.6 0 friction 0.6\n",
             "body dynamic box half 2.7 0.35 0.08 pos 0 0.45 0 density 500 friction 0.4 no_sleep\n"]
    for n in range(150):
        i, j, k = n % 5, (n // 5) % 5, n // 25
        x = (i - 2) * 1.1 + rng.uniform(-0.05, 0.05)
        z = (j - 2) * 1.1 + rng.uniform(-0.05, 0.05)
        y = 1.3 + 0.6 * k
        if n % 2 == 0:
            lines.append("body dynamic box half 0.15 0.15 0.15 pos %s %s %s density 300 friction 0.6\n"
                         % (f3(x), f3(y), f3(z)))
        else:
            lines.append("body dynamic sphere radius 0.15 pos %s %s %s density 300 friction 0.6\n"
                         % (f3(x), f3(y), f3(z)))
    lines.append("joint hinge 5 6 anchor 0 0.45 0 axis 0 1 0 motor 1.5 5000\n")  # pillar, paddle
    write("spinner.scene",
          "# Spinner: a paddle on a motorised hinge stirs 150 boxes and spheres in a walled bin.\n"
          + WORLD % (600, ""), lines)


def heavy_light():
    # A 1000 kg box resting on a 10 kg box (1 m cubes) on the ground: the
    # 100:1 mass ratio a soft step must hold without sinking or squeezing out.
    lines = ["body dynamic box half 0.5 0.5 0.5 pos 0 0.5 0 density 10 friction 0.6\n",
             "body dynamic box half 0.5 0.5 0.5 pos 0 1.5 0 density 1000 friction 0.6\n"]
    write("heavy_light.scene", "# Heavy on light: a 1000 kg box on a 10 kg box on the ground (100:1).\n"
          + WORLD % (600, ""), lines)


def tower_imperfect():
    # 16 one-metre boxes stacked with seeded offsets up to +-1 cm in x and z
    # and yaws up to +-3 degrees: must stand, settle and sleep.
    rng = Rng(20261203)
    lines = []
    for k in range(16):
        dx, dz = rng.uniform(-0.01, 0.01), rng.uniform(-0.01, 0.01)
        yaw = math.radians(rng.uniform(-3, 3))
        lines.append("body dynamic box half 0.5 0.5 0.5 pos %s %s %s quat 0 %.5f 0 %.5f density 1000 "
                     "friction 0.6\n" % (f4(dx), f3(0.5 + k), f4(dz), math.sin(yaw / 2), math.cos(yaw / 2)))
    write("tower_imperfect.scene",
          "# A 16-box tower with seeded offsets up to +-1 cm and yaws up to +-3 degrees.\n"
          + WORLD % (2000, ""), lines)


def joint_grid():
    # Bench only (tools/bench/scenes/): Box2D's joint_grid benchmark at 40 x 40:
    # 1600 spheres (r 0.4 m, 1 m apart) in a vertical x-y grid, each joined to
    # its right and lower neighbour by a hinge about z (3120 hinges), the two
    # top corners static; grid bodies do not collide with each other (filter
    # category 2, mask ~2) and never sleep, so every tick solves every joint.
    n = 40
    lines = []
    for j in range(n):
        for i in range(n):
            kind = "static" if j == 0 and i in (0, n - 1) else "dynamic"
            extra = "" if kind == "static" else " no_sleep"
            lines.append("body %s sphere radius 0.4 pos %s %s 0 density 100 filter 2 4294967293%s\n"
                         % (kind, f3(i - (n - 1) / 2), f3(100 - j), extra))
    joints = []
    for j in range(n):
        for i in range(n):
            me = j * n + i
            x, y = i - (n - 1) / 2, 100 - j
            if i + 1 < n:
                joints.append("joint hinge %d %d anchor %s %s 0 axis 0 0 1\n" % (me, me + 1, f3(x + 0.5), f3(y)))
            if j + 1 < n:
                joints.append("joint hinge %d %d anchor %s %s 0 axis 0 0 1\n" % (me, me + n, f3(x), f3(y - 0.5)))
    os.makedirs(BENCH_HERE, exist_ok=True)
    write_scene(os.path.join(BENCH_HERE, "joint_grid.scene"),
                "# Joint grid (bench only): 40 x 40 spheres joined by 3120 hinges, pinned at the two\n"
                "# top corners, hanging and swinging; no contacts between grid bodies, no sleep.\n",
                WORLD % (500, ""), lines + joints)


# ---- Verlet particle scenes (issue 14): cloth, rope, particle ragdoll ----
# Particle statements (SPEC.md §14): `cloth`, `rope`, `ragdoll_particles`,
# `particle_body`. Each scene stays at most 2000 particles (the crosscheck runs
# every scene on 9 targets, -O0 and emulators included); the 64 x 64 cloth is
# bench only (tools/bench/scenes/cloth_64.scene).
PWORLD = "world gravity 0 -9.81 0 tick_rate 60 substeps 8 iterations 1 1 ticks %d\n"


def flag():
    # A 32 x 32 flag (1.55 m square) hanging from a pole by its two pole-side
    # corners, blown along +x by a mean wind with seeded turbulence (the
    # system's own PRNG, seed 20261204): it streams out and flutters.
    lines = ["body static capsule radius 0.05 half_height 1.6 pos -0.07 2.2 0 friction 0.5\n"]
    lines.append("cloth origin 0 3.6 0 axis_u 1 0 0 axis_v 0 -1 0 grid 32 32 spacing 0.05 mass 1.2 "
                 "radius 0.01 pins corner00+corner01 iterations 6 damping 0.01 wind 6 0 0.8 "
                 "turbulence 12 seed 20261204\n")
    write("flag.scene", "# A 32 x 32 flag pinned at two corners to a pole, in a seeded gusty wind.\n"
          + PWORLD % 600, lines)


def cloth_drape():
    # A 40 x 40 cloth (2 m square) dropped flat onto a static sphere and a
    # dynamic box side by side: it drapes over both and weighs on the box.
    lines = ["body static sphere radius 0.45 pos -0.5 0.45 0 friction 0.6\n",
             "body dynamic box half 0.3 0.3 0.3 pos 0.55 0.3 0 density 200 friction 0.6\n",
             "cloth origin -0.975 1.4 -0.975 grid 40 40 spacing 0.05 mass 2 radius 0.015 "
             "iterations 6 damping 0.02 friction 0.6\n"]
    write("cloth_drape.scene", "# A cloth draped over a static sphere and a dynamic box.\n"
          + PWORLD % 480, lines)


def rope_swing():
    # A 4 m rope pinned at (0, 6, 0), released horizontally, with a 12 kg end
    # particle: it swings down through the top of a tower of six 0.4 m boxes
    # standing in its path (the weight passes x = -0.6 m about 2 m up).
    lines = []
    for k in range(6):
        lines.append("body dynamic box half 0.2 0.2 0.2 pos -0.6 %s 0 density 150 friction 0.6\n"
                     % f3(0.2 + 0.4 * k))
    lines.append("rope from 0 6 0 to 4 6 0 segments 10 mass 3 end_mass 12 radius 0.05 pin start "
                 "iterations 20\n")
    write("rope_swing.scene", "# A rope with a heavy end swinging into a tower of boxes.\n"
          + PWORLD % 480, lines)


def ragdoll_stairs():
    # A Jakobsen particle ragdoll (16 particles) pushed off the top of 8 steep
    # stairs (0.3 m rise, 0.35 m run, going down towards +x) at 2 m/s, leaning
    # forward 30 degrees: it tumbles down them to the ground.
    steps, rise, run = 8, 0.3, 0.35
    lines = []
    for k in range(steps):
        top = rise * (steps - k)
        lines.append("body static box half %s %s 2 pos %s %s 0 friction 0.7\n"
                     % (f3(run / 2), f3(top / 2), f3(k * run), f3(top / 2)))
    lines.append("ragdoll_particles pos -0.1 %s 0 quat 0 0 -0.25882 0.96593 height 1.8 mass 70 "
                 "radius 0.06 vel 2 0 0 iterations 8 friction 0.3\n" % f3(rise * steps + 1.1))
    write("ragdoll_stairs.scene", "# A particle ragdoll falling down stairs.\n" + PWORLD % 480, lines)


def trampoline():
    # A 20 x 20 cloth (1.9 m square, 3 kg) pinned along its four edges 1 m up,
    # and a 3.4 kg ball (r 0.3 m) dropped on it from 2.2 m: the cloth sags
    # and throws it back, again and again.
    lines = ["body dynamic sphere radius 0.3 pos 0 2.2 0 density 30 friction 0.5 no_sleep\n",
             "cloth origin -0.95 1 -0.95 grid 20 20 spacing 0.1 mass 3 radius 0.02 pins edges "
             "iterations 8 no_bend\n"]
    write("trampoline.scene", "# A trampoline: a cloth pinned at its edges with a ball bouncing on it.\n"
          + PWORLD % 480, lines)


def cloth_tear():
    # A 30 x 30 cloth (2.9 m square, 2 kg) held by two opposite edges 3 m up,
    # with structural and shear sticks that tear above 1.6 x their rest
    # length; a 50 kg box dropped on its middle from 1 m above tears through
    # it and lands on the ground, the torn halves hanging from their edges.
    lines = ["body dynamic box half 0.25 0.25 0.25 pos 0 4 0 density 400 friction 0.5\n",
             "cloth origin -1.45 3 -1.45 grid 30 30 spacing 0.1 mass 2 radius 0.02 "
             "pins edge_u0+edge_u1 tear 1.6 iterations 6\n"]
    write("cloth_tear.scene", "# A cloth that tears under a falling weight.\n" + PWORLD % 360, lines)


def ball_into_cloth():
    # A 21 x 21 cloth (1 m square, 0.5 kg: 1/882 kg a particle, 5 cm apart)
    # pinned at its four corners 1 m up, and a 1 kg ball (r 0.15 m, three
    # spacings wide) dropped into it from 0.5 m above: the cloth's triangles
    # catch it (SPEC.md section 25.6); its particles alone let it slip through.
    lines = ["body dynamic sphere radius 0.15 pos 0.013 1.65 -0.021 density 70.7355 friction 0.5 "
             "no_sleep\n",
             "cloth origin -0.5 1 -0.5 grid 21 21 spacing 0.05 mass 0.5 radius 0.01 pins corners "
             "iterations 8\n"]
    write("ball_into_cloth.scene", "# A ball dropped into a cloth pinned at its corners.\n"
          + PWORLD % 360, lines)


def rope_bridge_loaded():
    # rope_bridge (30 planks on two ropes of ball joints, 15 m of rope over a
    # 14 m gap) loaded with three 50 kg boxes (0.5 m, density 400) instead of
    # 25 kg ones: the ropes must hold (stretch at most 3 % at peak, 1 % at
    # rest) and the boxes must not reach the ground.
    rope_bridge("rope_bridge_loaded.scene", 400, 600,
                "# Rope bridge loaded: rope_bridge with three 50 kg boxes dropped onto it.\n")


def cloth_64():
    # Bench only (tools/bench/scenes/): the cloth row of `make bench`: a 64 x 64
    # cloth (4096 particles, 23 938 structural + shear + bend sticks, 8
    # iterations) pinned at two corners of one edge, falling onto a static
    # sphere (a static box is the ground: Bullet's soft bodies collide with
    # convex shapes only).
    lines = ["body static box half 8 0.5 8 pos 0 -0.5 0 friction 0.6\n",
             "body static sphere radius 1 pos 0 1.5 0.5 friction 0.6\n",
             "cloth origin -1.96875 3 -1.96875 grid 64 64 spacing 0.0625 mass 8 radius 0.01 "
             "pins corner00+corner10 iterations 8 damping 0.01 friction 0.3\n"]
    os.makedirs(BENCH_HERE, exist_ok=True)
    write_scene(os.path.join(BENCH_HERE, "cloth_64.scene"),
                "# Cloth bench (bench only): 64 x 64 particles, structural + shear + bend sticks,\n"
                "# 8 iterations, pinned at two corners, falling onto a static sphere.\n",
                PWORLD % 600, lines)


if __name__ == "__main__":
    pyramid()
    pile()
    slope()
    dominoes()
    arena()
    rain()
    tower_struck()
    catapult()
    two_ramps()
    hull_pile()
    compound_stairs()
    mesh_terrain()
    ccd()
    falling_hinges()
    ragdolls()
    rope_bridge()
    chain_50()
    spinner()
    heavy_light()
    tower_imperfect()
    joint_grid()
    flag()
    cloth_drape()
    rope_swing()
    ragdoll_stairs()
    trampoline()
    cloth_tear()
    ball_into_cloth()
    rope_bridge_loaded()
    cloth_64()
