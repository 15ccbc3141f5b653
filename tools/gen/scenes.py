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


if __name__ == "__main__":
    pyramid()
    pile()
    slope()
    dominoes()
    arena()
