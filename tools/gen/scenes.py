#!/usr/bin/env python3
# Generates the larger shipped scenes under tools/scenes/ (exact decimal text;
# positions are multiples of 1/1000 m so every value is written as given).
import math
import os

HERE = os.path.join(os.path.dirname(__file__), "..", "scenes")
GROUND = "body static plane normal 0 1 0 d 0 friction 0.6\n"


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
          "world gravity 0 -9.81 0 tick_rate 60 iterations 8 3 ticks 1000\n", bodies)


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
          "world gravity 0 -9.81 0 tick_rate 60 iterations 8 3 ticks 600 max_contacts 65536\n", bodies)


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
          "world gravity 0 -9.81 0 tick_rate 60 iterations 8 3 ticks 600\n", bodies)


def dominoes():
    bodies = []
    for i in range(20):
        bodies.append("body dynamic box half 0.1 1 0.5 pos %.3f 1 0 density 500 friction 0.6\n" % (i * 1.2))
    bodies.append("body dynamic sphere radius 0.3 pos -1.5 2 0 vel 4 0 0 density 500\n")
    write("dominoes.scene", "# A row of 20 dominoes knocked over by a ball.\n"
          "world gravity 0 -9.81 0 tick_rate 60 iterations 8 3 ticks 900\n", bodies)


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
          "world gravity 0 -9.81 0 tick_rate 60 iterations 8 3 ticks 1200\n", bodies)


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
          "world gravity 0 -9.81 0 tick_rate 60 iterations 8 3 ticks 600 max_contacts 65536\n", bodies)


def tower_struck():
    # seed_000 scene02: a six-high tower of 1 m boxes hit at mid-height by a heavy ball.
    bodies = ["body dynamic box half 0.5 0.5 0.5 pos 0 %.1f 0 density 100 friction 0.6\n" % (0.5 + k)
              for k in range(6)]
    bodies.append("body dynamic sphere radius 0.4 pos -6 2.6 0.1 vel 9 1.5 0 density 600 friction 0.4\n")
    write("tower_struck.scene", "# A six-box tower struck at mid-height by a ball (seed_000 scene02).\n"
          "world gravity 0 -9.81 0 tick_rate 60 iterations 8 3 ticks 600\n", bodies)


def catapult():
    # seed_000 scene04: a plank balanced on a fulcrum with a light box on its left
    # end; a heavy box dropped on the right end flings the light box up and away.
    bodies = ["body static box half 0.3 0.5 0.6 pos 0 0.5 0 friction 0.8\n",
              "body dynamic box half 3 0.05 0.5 pos 0 1.05 0 density 200 friction 0.8\n",
              "body dynamic box half 0.25 0.25 0.25 pos -2.6 1.35 0 density 100 friction 0.8\n",
              "body dynamic box half 0.4 0.4 0.4 pos 2.6 4 0 density 800 friction 0.8\n"]
    write("catapult.scene", "# Catapult: a heavy box dropped on a plank launches a light one (seed_000 scene04).\n"
          "world gravity 0 -9.81 0 tick_rate 60 iterations 8 3 ticks 600\n", bodies)


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
          "world gravity 0 -9.81 0 tick_rate 60 iterations 8 3 ticks 900\n", bodies)


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
          "world gravity 0 -9.81 0 tick_rate 60 iterations 8 3 ticks 600\n", bodies)


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
          "world gravity 0 -9.81 0 tick_rate 60 iterations 8 3 ticks 600\n", bodies)


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
                "world gravity 0 -9.81 0 tick_rate 60 iterations 8 3 ticks 600\n")
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
          "world gravity 0 -9.81 0 tick_rate 60 iterations 8 3 ticks 240\n", bodies)


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
