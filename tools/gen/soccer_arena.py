#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Generate tools/scenes/soccer.scene: the car soccer arena (SPEC.md §15.2).

A closed triangle-mesh arena (one static `mesh` body, inline): a height-field
floor with banked side walls and corner ramps, vertical walls and a ceiling,
and two goals (an opening in each end wall with a box behind it). Four cars
(players 0..3, team = player % 2; team 0 starts at -z facing +z and attacks
the goal at +z) and a light bouncy ball on the centre spot.

Every mesh triangle is one-sided (SPEC.md §21): its normal
(v1 - v0) x (v2 - v0) points into the arena. Numbers are written with three
decimals, which the scene parser reads exactly (§9).

Usage: python3 tools/gen/soccer_arena.py [OUT]   (default tools/scenes/soccer.scene)
"""
import os
import sys

HALF_X = 15.0  # side walls at x = +-15
HALF_Z = 22.0  # end walls (goal lines) at z = +-22
BANK_X = 13.0  # the side banks rise from |x| = 13 to the wall
BANK_H = 2.0  # ... by 2 m
END_H = 1.5  # the end banks (beside the goals) rise by 1.5 m over the last 2 m
CORNER_H = 3.0  # the corner ramps reach 3 m at the corner
WALL_H = 10.0  # walls up to the ceiling
GOAL_HW = 5.0  # goal mouth |x| < 5
GOAL_H = 3.5  # ... and y < 3.5
GOAL_DEPTH = 4.0  # the box behind the goal line
BALL_R = 1.0

XS = [-15.0, -13.0, -10.0, -5.0, 0.0, 5.0, 10.0, 13.0, 15.0]
ZS = [-22.0, -20.0, -16.0, -11.0, -5.5, 0.0, 5.5, 11.0, 16.0, 20.0, 22.0]


def height(x, z):
    ax, az = abs(x), abs(z)
    h = 0.0
    if ax > BANK_X:  # side bank
        h = max(h, BANK_H * (ax - BANK_X) / (HALF_X - BANK_X))
    if az > HALF_Z - 2.0 and ax > GOAL_HW:  # end bank beside the goal mouth
        h = max(h, END_H * (az - (HALF_Z - 2.0)) / 2.0)
    if ax >= 10.0 and az >= 16.0:  # corner ramp, rising towards the corner
        t = min((ax - 10.0) / (HALF_X - 10.0), 1.0) * min((az - 16.0) / (HALF_Z - 16.0), 1.0)
        h = max(h, CORNER_H * t)
    return h


class Mesh:
    def __init__(self):
        self.v = []
        self.index = {}
        self.t = []

    def vert(self, p):
        key = tuple(round(c, 3) for c in p)
        if key not in self.index:
            self.index[key] = len(self.v)
            self.v.append(key)
        return self.index[key]

    def tri(self, a, b, c, inward):
        """Add triangle a b c, wound so that its normal has a positive dot with `inward`."""
        ia, ib, ic = self.vert(a), self.vert(b), self.vert(c)
        pa, pb, pc = self.v[ia], self.v[ib], self.v[ic]
        e1 = [pb[k] - pa[k] for k in range(3)]
        e2 = [pc[k] - pa[k] for k in range(3)]
        n = [e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2], e1[0] * e2[1] - e1[1] * e2[0]]
        d = sum(n[k] * inward[k] for k in range(3))
        assert d != 0, (a, b, c, inward)
        self.t.append((ia, ib, ic) if d > 0 else (ia, ic, ib))

    def quad(self, a, b, c, d, inward):
        """Quad a b c d (in order round its edge) as two triangles."""
        self.tri(a, b, c, inward)
        self.tri(a, c, d, inward)


def build():
    m = Mesh()
    up, down = (0, 1, 0), (0, -1, 0)
    # Floor, banks and corner ramps: a height field, each cell split along the
    # diagonal whose heights differ least (flat cells either way).
    for i in range(len(XS) - 1):
        for j in range(len(ZS) - 1):
            x0, x1, z0, z1 = XS[i], XS[i + 1], ZS[j], ZS[j + 1]
            p00 = (x0, height(x0, z0), z0)
            p10 = (x1, height(x1, z0), z0)
            p01 = (x0, height(x0, z1), z1)
            p11 = (x1, height(x1, z1), z1)
            if abs(p00[1] - p11[1]) <= abs(p10[1] - p01[1]):
                m.tri(p00, p10, p11, up)
                m.tri(p00, p11, p01, up)
            else:
                m.tri(p00, p10, p01, up)
                m.tri(p10, p11, p01, up)
    # Side walls from y = 0 (the bank's top edge touches them) to the ceiling.
    for s in (-1, 1):
        x = s * HALF_X
        m.quad((x, 0, -HALF_Z), (x, 0, HALF_Z), (x, WALL_H, HALF_Z), (x, WALL_H, -HALF_Z), (-s, 0, 0))
    # End walls with the goal mouth left open, and the goal boxes.
    for s in (-1, 1):
        z = s * HALF_Z
        inward = (0, 0, -s)
        m.quad((-HALF_X, 0, z), (-GOAL_HW, 0, z), (-GOAL_HW, WALL_H, z), (-HALF_X, WALL_H, z), inward)
        m.quad((GOAL_HW, 0, z), (HALF_X, 0, z), (HALF_X, WALL_H, z), (GOAL_HW, WALL_H, z), inward)
        m.quad((-GOAL_HW, GOAL_H, z), (GOAL_HW, GOAL_H, z), (GOAL_HW, WALL_H, z), (-GOAL_HW, WALL_H, z), inward)
        zb = s * (HALF_Z + GOAL_DEPTH)
        m.quad((-GOAL_HW, 0, z), (GOAL_HW, 0, z), (GOAL_HW, 0, zb), (-GOAL_HW, 0, zb), up)  # floor
        m.quad((-GOAL_HW, GOAL_H, z), (GOAL_HW, GOAL_H, z), (GOAL_HW, GOAL_H, zb), (-GOAL_HW, GOAL_H, zb), down)
        m.quad((-GOAL_HW, 0, zb), (GOAL_HW, 0, zb), (GOAL_HW, GOAL_H, zb), (-GOAL_HW, GOAL_H, zb), inward)  # net
        for g in (-1, 1):  # the box's sides
            x = g * GOAL_HW
            m.quad((x, 0, z), (x, 0, zb), (x, GOAL_H, zb), (x, GOAL_H, z), (-g, 0, 0))
    # Ceiling: nothing leaves the arena.
    m.quad((-HALF_X, WALL_H, -HALF_Z), (HALF_X, WALL_H, -HALF_Z), (HALF_X, WALL_H, HALF_Z),
           (-HALF_X, WALL_H, HALF_Z), down)
    return m


def fmt(v):
    s = "%.3f" % v
    return "0" if s in ("0.000", "-0.000") else s


def scene_text():
    m = build()
    assert len(m.t) < 600, len(m.t)
    out = []
    out.append("# Car soccer (SPEC.md §15.2), generated by tools/gen/soccer_arena.py: do not edit.")
    out.append("# A closed mesh arena (%d triangles): banked sides, corner ramps, two goals;" % len(m.t))
    out.append("# four cars (team = player % 2; team 0 attacks +z) and a ball on the centre spot.")
    out.append("world gravity 0 -9.81 0 tick_rate 60 substeps 8 iterations 1 1 ticks 3600")
    verts = " ".join("%s %s %s" % (fmt(x), fmt(y), fmt(z)) for x, y, z in m.v)
    tris = " ".join("%d %d %d" % t for t in m.t)
    out.append("body static mesh vertices %d %s triangles %d %s friction 0.6 label arena"
               % (len(m.v), verts, len(m.t), tris))
    # Cars: a 2 x 0.7 x 4 m chassis of 840 kg (density 150), the default car
    # (ls_default_car_def: four wheels at the bottom corners, front steering, AWD)
    # with a stronger engine and a boost (more goals in a minute of bot play).
    cars = [(-6.0, -12.0, False), (6.0, 12.0, True), (6.0, -12.0, False), (-6.0, 12.0, True)]
    for k, (x, z, turned) in enumerate(cars):
        quat = " quat 0 1 0 0" if turned else ""
        out.append("body dynamic box half 1 0.35 2 pos %s 1 %s%s density 150 friction 0.5 no_sleep "
                   "player %d label car%d" % (fmt(x), fmt(z), quat, k, k))
        out.append("vehicle car%d car engine 8000 boost 6000" % k)
    # The ball: radius 1 m, 20 kg (density 4.77), bouncy.
    out.append("body dynamic sphere radius %s pos 0 %s 0 density 4.77 friction 0.3 restitution 0.7 "
               "linear_damping 0.05 angular_damping 0.05 no_sleep label ball" % (fmt(BALL_R), fmt(BALL_R)))
    out.append("game soccer ball ball goal_z %s goal_half_width %s goal_height %s kickoff 90"
               % (fmt(HALF_Z + BALL_R), fmt(GOAL_HW), fmt(GOAL_H)))
    return "\n".join(out) + "\n"


def main():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "tools", "scenes", "soccer.scene")
    with open(path, "w") as f:
        f.write(scene_text())
    print("wrote %s" % path)


if __name__ == "__main__":
    main()
