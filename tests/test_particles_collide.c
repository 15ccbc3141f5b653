// SPDX-License-Identifier: MIT
// Particle collisions, friction and two-way coupling (SPEC.md §25.6; seed 001
// §4 items 3, 9, 13-17, 26). Bit-exact items by equality; the others state
// their tolerance in the test name or the comment next to the assertion.
#include "../fixmath_phys/src/particles/pcollide.h"
#include "alloc_count.h"
#include "ls/hull.h"
#include "ls/mesh.h"
#include "ls/particles.h"
#include "ls/world.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TestSuite(particles_collide);

#define MM 66 // 1 mm in raw Q16.16 (65.5)

// ------------------------------------------------------------ helpers

static ls_world *make_world(ls_vec3 gravity)
{
    ls_world_def d = ls_default_world_def();
    d.gravity = gravity;
    d.max_bodies = 64;
    d.max_contacts = 256;
    d.max_particle_systems = 8;
    d.max_particles = 8192;
    d.max_particle_constraints = 65536;
    ls_error err;
    ls_world *w = ls_world_create(&d, &err);
    cr_assert(w, "%s", err.message);
    return w;
}

static ls_world *make_world_g(void)
{
    return make_world(ls_vec3_make(0, -642908, 0));
}

/// A static body with one shape.
static ls_body_id add_static(ls_world *w, ls_shape_def sh, ls_vec3 pos)
{
    ls_body_def bd = ls_default_body_def();
    bd.type = LS_BODY_STATIC;
    bd.position = pos;
    bd.shape = sh;
    ls_error err;
    ls_body_id id = ls_body_create(w, &bd, &err);
    cr_assert(id.index1, "%s", err.message);
    return id;
}

/// The floor: the plane y <= 0 (normal +y).
static ls_body_id add_floor(ls_world *w, ls_fx friction)
{
    ls_shape_def sh = ls_default_shape_def();
    sh.type = LS_SHAPE_PLANE;
    sh.normal = ls_vec3_make(0, LS_FX_ONE, 0);
    sh.plane_d = 0;
    sh.friction = friction;
    return add_static(w, sh, ls_vec3_zero());
}

static ls_particle_system_id add_system(ls_world *w, uint32_t n, uint32_t iterations,
                                        ls_fx friction)
{
    ls_particle_system_def sd = ls_default_particle_system_def();
    sd.max_particles = n;
    sd.max_constraints = n * n;
    sd.iterations = iterations;
    sd.friction = friction;
    ls_error err;
    ls_particle_system_id id = ls_particle_system_create(w, &sd, &err);
    cr_assert(id.index1, "%s", err.message);
    return id;
}

static uint32_t add_particle(ls_world *w, ls_particle_system_id s, ls_vec3 p, ls_fx radius)
{
    ls_particle_def pd = ls_default_particle_def();
    pd.position = p;
    pd.radius = radius;
    ls_error err;
    uint32_t i = ls_particle_add(w, s, &pd, &err);
    cr_assert(i != UINT32_MAX, "%s", err.message);
    return i;
}

static ls_vec3 pos(const ls_world *w, ls_particle_system_id s, uint32_t i)
{
    return ls_particle_position(w, s, i);
}

static ls_vec3 vel(const ls_world *w, ls_particle_system_id s, uint32_t i)
{
    return ls_vec3_sub(ls_particle_position(w, s, i), ls_particle_previous(w, s, i));
}

static ls_fx fx_from(double v)
{
    return (ls_fx)(v * 65536.0 + (v >= 0 ? 0.5 : -0.5));
}

// ------------------------------------------------------- seed item 3

// A particle dropped 1 m onto the floor: never below it, never above it after
// the first contact, and x == x* (bit-exact) from the tick after contact on.
Test(particles_collide, drop_on_floor_zero_restitution_bit_exact)
{
    ls_world *w = make_world_g();
    add_floor(w, LS_FX_ONE / 2);
    ls_particle_system_id s = add_system(w, 1, 4, 0);
    add_particle(w, s, ls_vec3_make(0, LS_FX_ONE, 0), 0);
    int first = -1;
    for (int t = 1; t <= 200; t++) {
        ls_world_step(w);
        ls_vec3 p = pos(w, s, 0);
        cr_assert(p.y >= 0, "tick %d: y = %d below the floor", t, p.y);
        if (first < 0 && p.y == 0) {
            first = t;
        }
        if (first > 0) {
            cr_assert_eq(p.y, 0, "tick %d: rose to %d after contact", t, p.y);
        }
        if (first > 0 && t > first) {
            cr_assert(ls_vec3_equal(p, ls_particle_previous(w, s, 0)), "tick %d: x != x*", t);
        }
    }
    cr_assert_gt(first, 0, "never touched the floor");
    ls_world_destroy(w);
}

// ------------------------------------------------------- seed item 15

// A particle resting on the floor and sliding at 655 raw/tick with mu = 0.5
// and G = 179 raw (gravity 9.810089 m/s^2 at 60 Hz): d_p = G each tick, so
// mu d_p = 90 raw: 655, 565, ..., 25, then 0 at tick 8, never reversing.
Test(particles_collide, friction_stops_in_exactly_8_ticks)
{
    ls_world *w = make_world(ls_vec3_make(0, -642914, 0));
    add_floor(w, LS_FX_ONE / 2);
    ls_particle_system_id s = add_system(w, 1, 4, LS_FX_ONE / 2);
    add_particle(w, s, ls_vec3_zero(), 0);
    ls_particle_set_position(w, s, 0, ls_vec3_zero(), ls_vec3_make(-655, 0, 0));
    int32_t expect = 655;
    for (int t = 1; t <= 12; t++) {
        ls_world_step(w);
        ls_vec3 v = vel(w, s, 0);
        expect = expect > 90 ? expect - 90 : 0;
        cr_assert_eq(v.x, expect, "tick %d: vx = %d, expected %d", t, v.x, expect);
        cr_assert_eq(v.y, 0, "tick %d: vy = %d", t, v.y);
        cr_assert_eq(pos(w, s, 0).y, 0);
        if (t == 8) {
            cr_assert_eq(v.x, 0, "not stopped at tick 8");
        }
    }
    // Position-level friction shortens this tick's own displacement, so the
    // particle slides 565 + 475 + ... + 25 = 2065 raw (the prototype, which
    // shortened the velocity through x* after moving, slid 655 more: 2720).
    cr_assert_eq(pos(w, s, 0).x, 2065);
    ls_world_destroy(w);
}

// ------------------------------------------------- seed items 13, 14

/// The seed prototype's tetrahedron: edge ~0.5 m, tilted, 2 m up, with a
/// small spin; 4 particles (radius 0) and 6 sticks.
static ls_particle_system_id make_tetra(ls_world *w, uint32_t iterations, ls_fx friction,
                                        ls_stick_mode mode)
{
    ls_particle_system_def sd = ls_default_particle_system_def();
    sd.max_particles = 4;
    sd.max_constraints = 6;
    sd.iterations = iterations;
    sd.friction = friction;
    sd.stick_mode = mode;
    ls_error err;
    ls_particle_system_id s = ls_particle_system_create(w, &sd, &err);
    cr_assert(s.index1, "%s", err.message);
    const double p[4][3] = {
        {0.0, 2.0, 0.0}, {0.5, 2.1, 0.0}, {0.25, 2.05, 0.433}, {0.25, 2.45, 0.144}};
    for (int i = 0; i < 4; i++) {
        add_particle(w, s, ls_vec3_make(fx_from(p[i][0]), fx_from(p[i][1]), fx_from(p[i][2])), 0);
    }
    for (uint32_t a = 0; a < 4; a++) {
        for (uint32_t b = a + 1; b < 4; b++) {
            cr_assert_neq(ls_particle_stick_add(w, s, a, b, &err), UINT32_MAX, "%s", err.message);
        }
    }
    ls_vec3 top = pos(w, s, 3);
    ls_particle_set_position(w, s, 3, top, ls_vec3_make(top.x - fx_from(0.01), top.y, top.z));
    return s;
}

static double edge_strain(const ls_world *w, ls_particle_system_id s, const double rest[6])
{
    double worst = 0;
    int k = 0;
    for (uint32_t a = 0; a < 4; a++) {
        for (uint32_t b = a + 1; b < 4; b++, k++) {
            ls_vec3 d = ls_vec3_sub(pos(w, s, b), pos(w, s, a));
            double l = (double)ls_vec3_len(d) / 65536.0;
            double e = l / rest[k] - 1;
            e = e < 0 ? -e : e;
            worst = e > worst ? e : worst;
        }
    }
    return worst;
}

// Item 13: dropped on the floor, no particle ever ends a tick below it, and
// once settled (frictionless, 4 iterations) the edges are within 0.05 %.
Test(particles_collide, tetrahedron_never_below_floor_and_stays_rigid)
{
    ls_world *w = make_world_g();
    add_floor(w, 0);
    ls_particle_system_id s = make_tetra(w, 4, 0, LS_STICK_APPROX);
    double rest[6];
    int k = 0;
    for (uint32_t a = 0; a < 4; a++) {
        for (uint32_t b = a + 1; b < 4; b++, k++) {
            rest[k] = (double)ls_vec3_len(ls_vec3_sub(pos(w, s, b), pos(w, s, a))) / 65536.0;
        }
    }
    for (int t = 1; t <= 1200; t++) {
        ls_world_step(w);
        for (uint32_t i = 0; i < 4; i++) {
            cr_assert(pos(w, s, i).y >= 0, "tick %d particle %u below the floor", t, i);
        }
    }
    double strain = edge_strain(w, s, rest);
    cr_assert(strain <= 0.0005, "edge strain %.5f%% after settling", strain * 100);
    ls_world_destroy(w);
}

// Item 14: with friction (mu 0.5, applied once after the loop) the resting
// tetrahedron does not creep: once settled (tick 1000), over the next 5000
// ticks no coordinate moves more than 1 raw from where it was, and every
// |x - x*| is at most 1 raw (a 1 LSB limit cycle), for 1, 4 and 10
// iterations of approximate sticks and 1 and 4 of exact ones. Exact sticks
// at 10 iterations keep a bounded +-1.5 LSB cycle in the top particle (which
// friction does not hold: it touches nothing) with no net drift: there the
// bound is 3 raw. The friction post-pass runs after the constraints and
// freezes their last error while static friction holds (seed §4 item 14's
// side effect): edge strain at rest stays below 1 %.
Test(particles_collide, resting_tetrahedron_does_not_creep)
{
    const struct {
        uint32_t iters;
        ls_stick_mode mode;
        int bound;
    } cases[6] = {{1, LS_STICK_APPROX, 1}, {4, LS_STICK_APPROX, 1}, {10, LS_STICK_APPROX, 1},
                  {1, LS_STICK_EXACT, 1},  {4, LS_STICK_EXACT, 1},  {10, LS_STICK_EXACT, 3}};
    for (int c = 0; c < 6; c++) {
        ls_world *w = make_world_g();
        add_floor(w, LS_FX_ONE / 2);
        ls_particle_system_id s = make_tetra(w, cases[c].iters, LS_FX_ONE / 2, cases[c].mode);
        double rest[6];
        int e = 0;
        for (uint32_t a = 0; a < 4; a++) {
            for (uint32_t b = a + 1; b < 4; b++, e++) {
                rest[e] = (double)ls_vec3_len(ls_vec3_sub(pos(w, s, b), pos(w, s, a))) / 65536.0;
            }
        }
        for (int t = 0; t < 1000; t++) {
            ls_world_step(w);
        }
        ls_vec3 start[4];
        for (uint32_t i = 0; i < 4; i++) {
            start[i] = pos(w, s, i);
        }
        const int b = cases[c].bound;
        for (int t = 0; t < 5000; t++) {
            ls_world_step(w);
            for (uint32_t i = 0; i < 4; i++) {
                ls_vec3 v = vel(w, s, i), d = ls_vec3_sub(pos(w, s, i), start[i]);
                cr_assert(abs(v.x) <= b && abs(v.y) <= b && abs(v.z) <= b,
                          "case %d tick %d particle %u: |x - x*| = (%d %d %d)", c, 1001 + t, i, v.x,
                          v.y, v.z);
                cr_assert(abs(d.x) <= b && abs(d.y) <= b && abs(d.z) <= b,
                          "case %d tick %d particle %u drifted (%d %d %d) raw", c, 1001 + t, i, d.x,
                          d.y, d.z);
            }
        }
        double strain = edge_strain(w, s, rest);
        cr_assert(strain < 0.01, "case %d: strain %.3f%% at rest", c, strain * 100);
        ls_world_destroy(w);
    }
}

// ------------------------------------------------------- seed item 9

// The world is the inside of a 10 m cube (six planes); a 1 m rod (scaled
// from the article's 100 in 1000) thrown around in it. Every particle stays
// inside after every tick (exact clamps), and once the rod rests on the
// floor (frictionless, damping 0.02 per tick to bring it to rest) its length
// error is at most 2 raw. (With friction the post-pass freezes whatever
// error the last relaxation left while static friction holds both ends:
// seed §4 item 14's side effect, measured in friction_leaves_small_strain.)
Test(particles_collide, rod_in_the_box)
{
    ls_world *w = make_world_g();
    const ls_fx size = LS_FX_INT(10);
    const ls_vec3 normals[6] = {{LS_FX_ONE, 0, 0},  {-LS_FX_ONE, 0, 0}, {0, LS_FX_ONE, 0},
                                {0, -LS_FX_ONE, 0}, {0, 0, LS_FX_ONE},  {0, 0, -LS_FX_ONE}};
    for (int k = 0; k < 6; k++) {
        // Solid outside the box: x <= 0 (normal +x), x >= 10 (normal -x, d = -10)...
        ls_shape_def sh = ls_default_shape_def();
        sh.type = LS_SHAPE_PLANE;
        sh.normal = normals[k];
        sh.plane_d = (k % 2) ? -size : 0;
        sh.friction = LS_FX_ONE / 2;
        add_static(w, sh, ls_vec3_zero());
    }
    ls_particle_system_def sd = ls_default_particle_system_def();
    sd.max_particles = 2;
    sd.max_constraints = 1;
    sd.friction = 0;
    sd.damping = fx_from(0.02);
    ls_particle_system_id s = ls_particle_system_create(w, &sd, NULL);
    cr_assert(s.index1);
    add_particle(w, s, ls_vec3_make(LS_FX_INT(4), LS_FX_INT(5), LS_FX_INT(5)), 0);
    add_particle(w, s, ls_vec3_make(LS_FX_INT(5), LS_FX_INT(5), LS_FX_INT(5)), 0);
    ls_error err;
    ls_particle_stick_add(w, s, 0, 1, &err);
    // Thrown: 0.3 m and 0.2 m per tick (18 and 12 m/s) in different directions.
    ls_particle_set_position(
        w, s, 0, pos(w, s, 0),
        ls_vec3_sub(pos(w, s, 0), ls_vec3_make(fx_from(0.3), fx_from(0.1), 0)));
    ls_particle_set_position(
        w, s, 1, pos(w, s, 1),
        ls_vec3_sub(pos(w, s, 1), ls_vec3_make(0, fx_from(-0.2), fx_from(0.25))));
    for (int t = 1; t <= 1800; t++) {
        ls_world_step(w);
        for (uint32_t i = 0; i < 2; i++) {
            ls_vec3 p = pos(w, s, i);
            cr_assert(p.x >= 0 && p.x <= size && p.y >= 0 && p.y <= size && p.z >= 0 && p.z <= size,
                      "tick %d particle %u left the box (%d %d %d)", t, i, p.x, p.y, p.z);
        }
    }
    ls_fx len = ls_vec3_len(ls_vec3_sub(pos(w, s, 1), pos(w, s, 0)));
    cr_assert(abs(len - LS_FX_ONE) <= 2, "rest length error %d raw", len - LS_FX_ONE);
    cr_assert_eq(pos(w, s, 0).y, 0);
    cr_assert_eq(pos(w, s, 1).y, 0);
    ls_world_destroy(w);
}

// ------------------------------------------- resting on every shape kind

/// Drop one particle (radius 2 cm) from 0.3 m above (0, top, 0); after 5 s it
/// must rest at top + radius within 1 mm, moving less than 1 raw per tick.
static void rest_on(ls_world *w, ls_fx top, const char *what)
{
    const ls_fx r = fx_from(0.02);
    ls_particle_system_id s = add_system(w, 1, 4, LS_FX_ONE / 2);
    add_particle(w, s, ls_vec3_make(0, ls_fx_add(top, fx_from(0.3)), 0), r);
    for (int t = 0; t < 300; t++) {
        ls_world_step(w);
    }
    ls_vec3 p = pos(w, s, 0), v = vel(w, s, 0);
    ls_fx want = ls_fx_add(top, r);
    cr_assert(abs(p.y - want) <= MM, "%s: rests at y %d raw, surface + radius %d (off %d raw)",
              what, p.y, want, p.y - want);
    cr_assert(abs(p.x) <= MM && abs(p.z) <= MM, "%s: slid to (%d, %d)", what, p.x, p.z);
    cr_assert(abs(v.x) <= 1 && abs(v.y) <= 1 && abs(v.z) <= 1, "%s: still moving (%d %d %d)", what,
              v.x, v.y, v.z);
}

Test(particles_collide, particle_rests_on_every_shape_kind_within_1mm)
{
    const ls_vec3 at = ls_vec3_zero();
    {
        ls_world *w = make_world_g();
        add_floor(w, LS_FX_ONE / 2);
        rest_on(w, 0, "plane");
        ls_world_destroy(w);
    }
    {
        ls_world *w = make_world_g();
        ls_shape_def sh = ls_default_shape_def();
        sh.type = LS_SHAPE_SPHERE;
        sh.radius = LS_FX_HALF;
        add_static(w, sh, at);
        rest_on(w, LS_FX_HALF, "sphere");
        ls_world_destroy(w);
    }
    {
        ls_world *w = make_world_g();
        ls_shape_def sh = ls_default_shape_def();
        sh.type = LS_SHAPE_BOX;
        sh.half_extents = ls_vec3_make(LS_FX_HALF, fx_from(0.25), LS_FX_HALF);
        add_static(w, sh, at);
        rest_on(w, fx_from(0.25), "box");
        ls_world_destroy(w);
    }
    {
        ls_world *w = make_world_g();
        ls_shape_def sh = ls_default_shape_def();
        sh.type = LS_SHAPE_CAPSULE;
        sh.radius = fx_from(0.3);
        sh.half_height = fx_from(0.4);
        add_static(w, sh, at);
        rest_on(w, fx_from(0.7), "capsule");
        ls_world_destroy(w);
    }
    {
        ls_world *w = make_world_g();
        // A square frustum: base 1 x 1 at y = -0.5, top 0.6 x 0.6 at y = 0.4.
        const ls_vec3 pts[8] = {{-LS_FX_HALF, -LS_FX_HALF, -LS_FX_HALF},
                                {LS_FX_HALF, -LS_FX_HALF, -LS_FX_HALF},
                                {LS_FX_HALF, -LS_FX_HALF, LS_FX_HALF},
                                {-LS_FX_HALF, -LS_FX_HALF, LS_FX_HALF},
                                {-19661, 26214, -19661},
                                {19661, 26214, -19661},
                                {19661, 26214, 19661},
                                {-19661, 26214, 19661}};
        ls_error err;
        ls_hull *h = ls_hull_create(pts, 8, &err);
        cr_assert(h, "%s", err.message);
        ls_shape_def sh = ls_default_shape_def();
        sh.type = LS_SHAPE_HULL;
        sh.hull = h;
        add_static(w, sh, at);
        ls_hull_destroy(h);
        rest_on(w, 26214, "hull");
        ls_world_destroy(w);
    }
    {
        ls_world *w = make_world_g();
        // A 4 x 4 grid of 0.5 m cells (32 triangles) at y = 0.1, centred.
        enum { N = 4 };
        ls_vec3 v[(N + 1) * (N + 1)];
        uint32_t idx[N * N * 6];
        uint32_t k = 0;
        for (int j = 0; j <= N; j++) {
            for (int i = 0; i <= N; i++) {
                v[j * (N + 1) + i] =
                    ls_vec3_make(LS_FX_HALF * (i - N / 2), fx_from(0.1), LS_FX_HALF * (j - N / 2));
            }
        }
        for (uint32_t j = 0; j < N; j++) {
            for (uint32_t i = 0; i < N; i++) {
                uint32_t a = j * (N + 1) + i, b = a + 1, c = a + N + 1, d = c + 1;
                // Counter-clockwise seen from +y (the front).
                idx[k++] = a;
                idx[k++] = c;
                idx[k++] = b;
                idx[k++] = b;
                idx[k++] = c;
                idx[k++] = d;
            }
        }
        ls_error err;
        ls_mesh *m = ls_mesh_create(v, (N + 1) * (N + 1), idx, N * N * 2, &err);
        cr_assert(m, "%s", err.message);
        ls_shape_def sh = ls_default_shape_def();
        sh.type = LS_SHAPE_MESH;
        sh.mesh = m;
        add_static(w, sh, at);
        ls_mesh_destroy(m);
        rest_on(w, fx_from(0.1), "mesh (on a shared vertex)");
        ls_world_destroy(w);
    }
}

// ------------------------------------------------------ seed item 26

/// A particle of radius 1 cm fired at 1 m per tick (50x its size) along +x
/// from x = -1.5 at a wall whose front face is at x = -0.05 (no gravity):
/// it never ends a tick beyond the front face minus its radius.
static void fire_at(ls_world *w, const char *what)
{
    const ls_fx r = fx_from(0.01);
    ls_particle_system_id s = add_system(w, 1, 4, 0);
    add_particle(w, s, ls_vec3_make(fx_from(-1.5), 0, 0), r);
    ls_particle_set_position(w, s, 0, ls_vec3_make(fx_from(-1.5), 0, 0),
                             ls_vec3_make(fx_from(-2.5), 0, 0));
    for (int t = 1; t <= 60; t++) {
        ls_world_step(w);
        ls_fx x = pos(w, s, 0).x;
        cr_assert(x <= fx_from(-0.05) - r + 1, "%s: tick %d: x = %d went through", what, t, x);
    }
}

Test(particles_collide, fast_particle_does_not_tunnel)
{
    {
        ls_world *w = make_world(ls_vec3_zero());
        ls_shape_def sh = ls_default_shape_def();
        sh.type = LS_SHAPE_BOX;
        sh.half_extents = ls_vec3_make(fx_from(0.05), LS_FX_ONE, LS_FX_ONE);
        add_static(w, sh, ls_vec3_zero());
        fire_at(w, "thin box");
        ls_world_destroy(w);
    }
    {
        ls_world *w = make_world(ls_vec3_zero());
        ls_shape_def sh = ls_default_shape_def();
        sh.type = LS_SHAPE_PLANE; // solid x >= -0.05: normal -x, d = 0.05
        sh.normal = ls_vec3_make(-LS_FX_ONE, 0, 0);
        sh.plane_d = fx_from(0.05);
        add_static(w, sh, ls_vec3_zero());
        fire_at(w, "plane");
        ls_world_destroy(w);
    }
    {
        ls_world *w = make_world(ls_vec3_zero());
        // One-sided quad at x = -0.05 facing -x (zero thickness).
        const ls_fx x0 = fx_from(-0.05);
        const ls_vec3 v[4] = {{x0, -LS_FX_ONE, -LS_FX_ONE},
                              {x0, LS_FX_ONE, -LS_FX_ONE},
                              {x0, LS_FX_ONE, LS_FX_ONE},
                              {x0, -LS_FX_ONE, LS_FX_ONE}};
        // Counter-clockwise seen from -x.
        const uint32_t idx[6] = {0, 2, 1, 0, 3, 2};
        ls_error err;
        ls_mesh *m = ls_mesh_create(v, 4, idx, 2, &err);
        cr_assert(m, "%s", err.message);
        ls_shape_def sh = ls_default_shape_def();
        sh.type = LS_SHAPE_MESH;
        sh.mesh = m;
        add_static(w, sh, ls_vec3_zero());
        ls_mesh_destroy(m);
        fire_at(w, "mesh triangle");
        ls_world_destroy(w);
    }
}

// ------------------------------------------------- seed items 16, 17

/// Project one weighted contact of the given particles once (no shape): the
/// point sum c x must reach dot(n, p) >= dot(n, p0) + depth.
static void project_once(ls_world *w, ls_particle_system_id s, const uint32_t *idx, const ls_fx *c,
                         uint32_t n, ls_vec3 normal, ls_fx depth)
{
    ls_particle_store *ps = w->particles;
    struct ls_particle_collide *pc = ps->collide;
    ls_particle_system *sys = ls_particle_system_(w, s);
    uint32_t si = (uint32_t)(sys - ps->systems);
    uint32_t store[LS_PCOLLIDE_WEIGHTS];
    ls_vec3 p0 = ls_vec3_zero();
    for (uint32_t k = 0; k < n; k++) {
        store[k] = sys->first + idx[k];
        p0 = ls_vec3_add(p0, ls_vec3_scale(ps->x[store[k]], c[k]));
    }
    pc->contact_count = pc->wt_count = pc->pair_count = 0;
    for (uint32_t k = 0; k < ps->system_high; k++) {
        pc->sys_first[k] = pc->sys_count[k] = pc->act_count[k] = pc->pend_count[k] = 0;
    }
    int64_t bound = ls_vec3_dot_q32(normal, p0) + (int64_t)depth * 65536;
    cr_assert(ls_pcollide_weighted_(w, UINT32_MAX, normal, bound, p0, store, c, n, NULL, 0));
    pc->sys_count[si] = pc->act_count[si] = 1;
    pc->active[0] = 0;
    ls_particles_collide_iteration_(w, sys, 0);
}

// Stick over a bump (Figs. 4-5): c = (1, 0) moves only x1, by the depth;
// c = (0.75, 0.25) gives lambda = 1.6: x1 moves 1.2 d, x2 0.4 d, and the
// point reaches the surface within 2 LSB. A tiny depth (1.5 mm) divides by
// nothing (lambda = 1 / sum c^2 has no length in it). Relaxation then
// restores the stick's length.
Test(particles_collide, stick_over_bump_weights)
{
    ls_world *w = make_world(ls_vec3_zero());
    ls_particle_system_id s = add_system(w, 2, 4, 0);
    add_particle(w, s, ls_vec3_zero(), 0);
    add_particle(w, s, ls_vec3_make(LS_FX_ONE, 0, 0), 0);
    ls_error err;
    ls_particle_stick_add(w, s, 0, 1, &err);
    const uint32_t idx[2] = {0, 1};
    const ls_vec3 up = ls_vec3_make(0, LS_FX_ONE, 0);
    const ls_fx d = fx_from(0.1);
    {
        const ls_fx c[2] = {LS_FX_ONE, 0};
        project_once(w, s, idx, c, 2, up, d);
        cr_assert_eq(pos(w, s, 0).y, d);
        cr_assert_eq(pos(w, s, 1).y, 0);
    }
    ls_particle_set_position(w, s, 0, ls_vec3_zero(), ls_vec3_zero());
    {
        const ls_fx c[2] = {fx_from(0.75), fx_from(0.25)};
        project_once(w, s, idx, c, 2, up, d);
        ls_fx y1 = pos(w, s, 0).y, y2 = pos(w, s, 1).y;
        cr_assert(abs(y1 - ls_fx_mul(fx_from(1.2), d)) <= 2, "x1 moved %d", y1);
        cr_assert(abs(y2 - ls_fx_mul(fx_from(0.4), d)) <= 2, "x2 moved %d", y2);
        ls_fx py = ls_fx_add(ls_fx_mul(c[0], y1), ls_fx_mul(c[1], y2));
        cr_assert(abs(py - d) <= 2, "p' - q = %d raw", py - d);
    }
    ls_particle_set_position(w, s, 0, ls_vec3_zero(), ls_vec3_zero());
    ls_particle_set_position(w, s, 1, ls_vec3_make(LS_FX_ONE, 0, 0), ls_vec3_make(LS_FX_ONE, 0, 0));
    {
        const ls_fx c[2] = {fx_from(0.75), fx_from(0.25)};
        const ls_fx tiny = 98; // 1.5 mm
        project_once(w, s, idx, c, 2, up, tiny);
        ls_fx y1 = pos(w, s, 0).y, y2 = pos(w, s, 1).y;
        cr_assert(abs(y1 - ls_fx_mul(fx_from(1.2), tiny)) <= 1 &&
                  abs(y2 - ls_fx_mul(fx_from(0.4), tiny)) <= 1);
    }
    // Relaxation restores the length (no gravity, no shapes).
    for (int t = 0; t < 10; t++) {
        ls_world_step(w);
    }
    ls_fx len = ls_vec3_len(ls_vec3_sub(pos(w, s, 1), pos(w, s, 0)));
    cr_assert(abs(len - LS_FX_ONE) <= 2, "length %d", len);
    ls_world_destroy(w);
}

// Tetrahedron penetration with barycentric weights: for points in a face the
// weights sum to 1 within 1 LSB, one projection brings the point to the
// surface within 2 LSB, and equal weights (0.25 each) translate the body
// rigidly by the depth (every particle moves by exactly the same vector).
Test(particles_collide, tetrahedron_penetration_barycentric)
{
    ls_world *w = make_world(ls_vec3_zero());
    ls_particle_body_def bd = ls_default_particle_body_def();
    bd.position = ls_vec3_make(0, LS_FX_INT(2), 0);
    ls_error err;
    ls_particle_system_id s = ls_particle_body_create(w, &bd, &err);
    cr_assert(s.index1, "%s", err.message);
    ls_particle_system *sys = ls_particle_system_(w, s);
    cr_assert_eq(sys->count, 4);
    const uint32_t idx[4] = {0, 1, 2, 3};
    ls_vec3 before[4];
    for (uint32_t i = 0; i < 4; i++) {
        before[i] = pos(w, s, i);
    }
    const ls_fx quarter[4] = {LS_FX_ONE / 4, LS_FX_ONE / 4, LS_FX_ONE / 4, LS_FX_ONE / 4};
    const ls_vec3 n = ls_vec3_make(0, LS_FX_ONE, 0);
    project_once(w, s, idx, quarter, 4, n, fx_from(0.05));
    for (uint32_t i = 0; i < 4; i++) {
        ls_vec3 d = ls_vec3_sub(pos(w, s, i), before[i]);
        cr_assert(d.x == 0 && d.z == 0 && d.y == fx_from(0.05), "particle %u moved (%d %d %d)", i,
                  d.x, d.y, d.z);
    }
    // Random points inside face (0, 1, 2): barycentric weights from the body.
    uint32_t seed = 12345;
    for (int trial = 0; trial < 200; trial++) {
        seed = seed * 1664525u + 1013904223u;
        ls_fx u = (ls_fx)((seed >> 8) & 0x7FFF);
        seed = seed * 1664525u + 1013904223u;
        ls_fx v = (ls_fx)((seed >> 8) & 0x7FFF);
        if (u + v > LS_FX_ONE) {
            continue;
        }
        for (uint32_t i = 0; i < 4; i++) { // the undeformed body again
            ls_particle_set_position(w, s, i, before[i], before[i]);
        }
        ls_vec3 x0 = pos(w, s, 0), x1 = pos(w, s, 1), x2 = pos(w, s, 2);
        ls_vec3 p = ls_vec3_add(x0, ls_vec3_add(ls_vec3_scale(ls_vec3_sub(x1, x0), u),
                                                ls_vec3_scale(ls_vec3_sub(x2, x0), v)));
        ls_fx c[8];
        ls_xform xf;
        ls_particle_body_xform_(w, sys, &xf);
        uint32_t nw =
            ls_particle_body_weights_(sys, ls_mat3_mul_tvec(xf.r, ls_vec3_sub(p, xf.p)), c);
        cr_assert_eq(nw, 4);
        cr_assert(abs(c[0] + c[1] + c[2] + c[3] - LS_FX_ONE) <= 1, "sum of weights %d",
                  c[0] + c[1] + c[2] + c[3]);
        ls_vec3 rec = ls_vec3_zero();
        for (uint32_t i = 0; i < 4; i++) {
            rec = ls_vec3_add(rec, ls_vec3_scale(pos(w, s, i), c[i]));
        }
        cr_assert(abs(rec.x - p.x) <= 3 && abs(rec.y - p.y) <= 3 && abs(rec.z - p.z) <= 3,
                  "trial %d: sum c x = (%d %d %d), p = (%d %d %d), c = %d %d %d %d", trial, rec.x,
                  rec.y, rec.z, p.x, p.y, p.z, c[0], c[1], c[2], c[3]);
        ls_vec3 dir = ls_vec3_normalize(ls_vec3_make(1000, 3000, -2000), n);
        int64_t want = ls_vec3_dot_q32(dir, p) + (int64_t)fx_from(0.01) * 65536;
        project_once(w, s, idx, c, 4, dir, fx_from(0.01));
        ls_vec3 q = ls_vec3_zero();
        for (uint32_t i = 0; i < 4; i++) {
            q = ls_vec3_add(q, ls_vec3_scale(pos(w, s, i), c[i]));
        }
        int64_t got = ls_vec3_dot_q32(dir, q);
        cr_assert(llabs(got - want) <= (int64_t)3 << 16, "trial %d: p' misses q by %lld raw", trial,
                  (long long)((got - want) >> 16));
    }
    ls_world_destroy(w);
}

// A particle body (tetrahedron embedding a 0.5 m box) dropped on the floor
// comes to rest on the box: the lowest box corner within 1 mm of the floor.
Test(particles_collide, particle_body_rests_on_its_embedded_box)
{
    ls_world *w = make_world_g();
    add_floor(w, LS_FX_ONE / 2);
    ls_particle_body_def bd = ls_default_particle_body_def();
    bd.position = ls_vec3_make(0, LS_FX_ONE, 0);
    bd.orientation = ls_quat_normalize(ls_quat_make(3000, 0, 1000, LS_FX_ONE));
    ls_error err;
    ls_particle_system_id s = ls_particle_body_create(w, &bd, &err);
    cr_assert(s.index1, "%s", err.message);
    for (int t = 0; t < 600; t++) {
        ls_world_step(w);
    }
    ls_vec3 p;
    ls_quat q;
    cr_assert_eq(ls_particle_body_get_transform(w, s, &p, &q), LS_OK);
    ls_mat3 r = ls_mat3_from_quat(q);
    ls_vec3 h = bd.shape.half_extents;
    ls_fx lowest = LS_FX_MAX;
    for (int k = 0; k < 8; k++) {
        ls_vec3 c = ls_vec3_make(k & 4 ? h.x : -h.x, k & 2 ? h.y : -h.y, k & 1 ? h.z : -h.z);
        ls_vec3 wc = ls_vec3_add(p, ls_mat3_mul_vec(r, ls_vec3_add(bd.shape.local_position, c)));
        lowest = ls_fx_min(lowest, wc.y);
    }
    cr_assert(abs(lowest) <= MM, "lowest box corner at %d raw", lowest);
    ls_world_destroy(w);
}

// ------------------------------------------------------------ coupling

static ls_body_id add_dynamic_box(ls_world *w, ls_vec3 at, ls_vec3 half, ls_fx density)
{
    ls_body_def bd = ls_default_body_def();
    bd.type = LS_BODY_DYNAMIC;
    bd.position = at;
    bd.shape.type = LS_SHAPE_BOX;
    bd.shape.half_extents = half;
    bd.shape.density = density;
    bd.allow_sleep = false;
    ls_error err;
    ls_body_id id = ls_body_create(w, &bd, &err);
    cr_assert(id.index1, "%s", err.message);
    return id;
}

/// Momentum (N s, as doubles) of the particles of s (m (x - x*) / dt) plus the body's m v.
static void momentum(const ls_world *w, ls_particle_system_id s, ls_body_id b, double out[3])
{
    double dt = (double)ls_tick_dt(60) / 65536.0;
    out[0] = out[1] = out[2] = 0;
    for (uint32_t i = 0; i < ls_particle_count(w, s); i++) {
        ls_particle_state st;
        cr_assert_eq(ls_particle_get_state(w, s, i, &st, NULL), LS_OK);
        double m = 65536.0 / (double)st.inv_mass;
        ls_vec3 d = ls_vec3_sub(st.position, st.previous);
        out[0] += m * d.x / 65536.0 / dt;
        out[1] += m * d.y / 65536.0 / dt;
        out[2] += m * d.z / 65536.0 / dt;
    }
    double mb = (double)ls_body_mass(w, b) / 65536.0;
    ls_vec3 v = ls_body_linear_velocity(w, b);
    out[0] += mb * v.x / 65536.0;
    out[1] += mb * v.y / 65536.0;
    out[2] += mb * v.z / 65536.0;
}

// No gravity, no static contact: a 0.5 kg particle at 3 m/s hits a free 2 kg
// box (off centre, so the box also turns). The momentum of particle + box is
// conserved within 0.2 % of the incoming 1.5 N s over the collision and the
// 60 ticks after it; the box moves off along +x, the particle is slowed.
Test(particles_collide, coupling_conserves_momentum)
{
    ls_world *w = make_world(ls_vec3_zero());
    ls_body_id b =
        add_dynamic_box(w, ls_vec3_zero(), ls_vec3_make(LS_FX_HALF, LS_FX_HALF, LS_FX_HALF),
                        LS_FX_INT(2)); // 1 m^3 at 2 kg/m^3
    ls_particle_system_def sd = ls_default_particle_system_def();
    sd.max_particles = 1;
    sd.friction = 0;
    ls_particle_system_id s = ls_particle_system_create(w, &sd, NULL);
    ls_particle_def pd = ls_default_particle_def();
    pd.position = ls_vec3_make(fx_from(-1.5), fx_from(0.2), 0);
    pd.velocity = ls_vec3_make(LS_FX_INT(3), 0, 0);
    pd.mass = LS_FX_HALF;
    pd.radius = fx_from(0.05);
    cr_assert_neq(ls_particle_add(w, s, &pd, NULL), UINT32_MAX);
    double p0[3];
    momentum(w, s, b, p0);
    cr_assert(p0[0] > 1.49 && p0[0] < 1.51, "incoming momentum %f", p0[0]);
    for (int t = 0; t < 90; t++) {
        ls_world_step(w);
        double p[3];
        momentum(w, s, b, p);
        for (int k = 0; k < 3; k++) {
            cr_assert(p[k] - p0[k] < 0.003 && p0[k] - p[k] < 0.003,
                      "tick %d: momentum[%d] %f, was %f", t, k, p[k], p0[k]);
        }
    }
    cr_assert_gt(ls_body_linear_velocity(w, b).x, LS_FX_HALF, "the box did not move off");
    cr_assert_neq(ls_body_angular_velocity(w, b).z, 0, "an off-centre hit turns the box");
    cr_assert_lt(vel(w, s, 0).x, ls_fx_mul(LS_FX_INT(3), ls_tick_dt(60)),
                 "the particle was not slowed");
    ls_world_destroy(w);
}

// A 1 kg cloth (9 x 9, 5 cm spacing) dropped on a 10 kg box resting on the
// floor. Once it rests, the impulse the particles give the box each tick
// (the coupling's sum, what is added to the box's velocity) averages the
// cloth's weight m g dt within 2 % over 1 s, and the box stays where it
// rested alone (within 0.5 mm): so its floor contacts carry the box's weight
// and the cloth's. (The solver's stored
// normal impulses are per sub-step and warm-started: an impulse that arrives
// once per tick is absorbed in the first sub-step and does not show in them.)
Test(particles_collide, draped_cloth_weighs_on_box)
{
    ls_world *w = make_world_g();
    add_floor(w, LS_FX_ONE / 2);
    ls_body_id b = add_dynamic_box(w, ls_vec3_make(0, LS_FX_HALF, 0),
                                   ls_vec3_make(LS_FX_HALF, LS_FX_HALF, LS_FX_HALF), LS_FX_INT(10));
    cr_assert_eq(ls_body_mass(w, b), LS_FX_INT(10));
    const double g = 642908.0 / 65536.0, dt = (double)ls_tick_dt(60) / 65536.0;
    for (int t = 0; t < 120; t++) {
        ls_world_step(w);
    }
    ls_fx rest_y = ls_body_position(w, b).y;
    ls_cloth_def cd = ls_default_cloth_def();
    cd.nu = 9;
    cd.nv = 9;
    cd.spacing = fx_from(0.05);
    cd.origin = ls_vec3_make(fx_from(-0.2), fx_from(1.2), fx_from(-0.2));
    cd.mass = LS_FX_ONE;
    cd.radius = fx_from(0.01);
    cd.system.iterations = 8;
    ls_error err;
    ls_particle_system_id s = ls_cloth_create(w, &cd, &err);
    cr_assert(s.index1, "%s", err.message);
    for (int t = 0; t < 240; t++) {
        ls_world_step(w);
    }
    const struct ls_particle_collide *pc = w->particles->collide;
    double push = 0;
    for (int t = 0; t < 60; t++) {
        ls_world_step(w);
        cr_assert_eq(pc->body_count, 1);
        cr_assert_eq(pc->body_list[0], b.index1 - 1);
        push -= (double)pc->impulse[b.index1 - 1].lin[1] / 65536.0;
        ls_fx y = ls_body_position(w, b).y;
        cr_assert(abs(y - rest_y) <= MM / 2, "tick %d: the box moved %d raw", t, y - rest_y);
    }
    push /= 60;
    cr_assert(push > g * dt * 0.98 && push < g * dt * 1.02,
              "particles push the box by %f N s per tick, the cloth weighs %f", push, g * dt);
    for (uint32_t i = 0; i < 81; i++) {
        cr_assert(pos(w, s, i).y >= LS_FX_ONE, "particle %u below the box top", i);
    }
    ls_world_destroy(w);
}

// A 2 kg ball (dynamic sphere, r 0.2 m) dropped from 1 m onto a trampoline:
// a 15 x 15 cloth (1.4 m, 1 kg) pinned along its four edges. The cloth
// sags under it (the centre goes at least 0.2 m down), the ball bounces
// (after touching the cloth it moves up at more than 2 m/s) and it never
// passes through during that first bounce (its centre stays above the
// cloth's centre particle). (Pinned particles do not collide: a ball that
// later lands on the pinned frame falls past it.)
Test(particles_collide, ball_bounces_on_trampoline)
{
    ls_world *w = make_world_g();
    ls_cloth_def cd = ls_default_cloth_def();
    cd.nu = 15;
    cd.nv = 15;
    cd.spacing = fx_from(0.1);
    cd.origin = ls_vec3_make(fx_from(-0.7), LS_FX_ONE, fx_from(-0.7));
    cd.mass = LS_FX_ONE;
    cd.radius = fx_from(0.02);
    cd.system.iterations = 8;
    cd.pins =
        LS_CLOTH_PIN_EDGE_U0 | LS_CLOTH_PIN_EDGE_U1 | LS_CLOTH_PIN_EDGE_V0 | LS_CLOTH_PIN_EDGE_V1;
    ls_error err;
    ls_particle_system_id s = ls_cloth_create(w, &cd, &err);
    cr_assert(s.index1, "%s", err.message);
    ls_body_def bd = ls_default_body_def();
    bd.type = LS_BODY_DYNAMIC;
    bd.position = ls_vec3_make(0, LS_FX_INT(2), 0);
    bd.shape.type = LS_SHAPE_SPHERE;
    bd.shape.radius = fx_from(0.2);
    bd.shape.density = fx_from(2.0 / (4.0 / 3.0 * 3.14159265 * 0.008));
    bd.allow_sleep = false;
    ls_body_id ball = ls_body_create(w, &bd, &err);
    cr_assert(ball.index1, "%s", err.message);
    const uint32_t centre = 7 * 15 + 7;
    bool touched = false, bounced = false;
    ls_fx lowest = LS_FX_MAX;
    for (int t = 0; t < 60; t++) {
        ls_world_step(w);
        ls_fx by = ls_body_position(w, ball).y, vy = ls_body_linear_velocity(w, ball).y;
        ls_fx cy = pos(w, s, centre).y;
        lowest = ls_fx_min(lowest, cy);
        if (by - cy < fx_from(0.25)) {
            touched = true;
        }
        if (touched && vy > LS_FX_INT(2)) {
            bounced = true;
        }
        cr_assert(by > cy, "tick %d: the ball went through the cloth", t);
    }
    cr_assert(touched, "the ball never reached the cloth");
    cr_assert(bounced, "the ball did not bounce");
    cr_assert(lowest < LS_FX_ONE - fx_from(0.2), "the trampoline sagged only to %d raw", lowest);
    ls_world_destroy(w);
}

// Particles of two systems collide (radius sum), those of one system do
// not: two 1 kg particles (r 5 cm) of different systems meet head on at
// 1 m/s each in zero gravity; they never come closer than 0.1 m minus 1 mm
// and, masses being equal, the sum of positions is conserved bit-exactly.
// Two particles of the same system pass through each other.
Test(particles_collide, particles_of_different_systems_collide)
{
    ls_world *w = make_world(ls_vec3_zero());
    ls_particle_system_id a = add_system(w, 2, 1, 0), b = add_system(w, 1, 1, 0);
    const ls_fx r = fx_from(0.05);
    ls_particle_def pd = ls_default_particle_def();
    pd.radius = r;
    pd.position = ls_vec3_make(-LS_FX_ONE, 0, 0);
    pd.velocity = ls_vec3_make(LS_FX_ONE, 0, 0);
    ls_particle_add(w, a, &pd, NULL);
    pd.position = ls_vec3_make(LS_FX_ONE, 0, 0);
    pd.velocity = ls_vec3_make(-LS_FX_ONE, 0, 0);
    ls_particle_add(w, b, &pd, NULL);
    // A second particle of system a on a collision course with the first.
    pd.position = ls_vec3_make(-LS_FX_ONE, 0, LS_FX_ONE);
    pd.velocity = ls_vec3_make(0, 0, -LS_FX_ONE);
    ls_particle_add(w, a, &pd, NULL);
    ls_vec3 sum0 = ls_vec3_add(pos(w, a, 0), pos(w, b, 0));
    bool passed = false;
    for (int t = 0; t < 120; t++) {
        ls_world_step(w);
        ls_fx d = ls_vec3_len(ls_vec3_sub(pos(w, b, 0), pos(w, a, 0)));
        cr_assert(d >= 2 * r - MM, "tick %d: distance %d raw", t, d);
        cr_assert(ls_vec3_equal(ls_vec3_add(pos(w, a, 0), pos(w, b, 0)), sum0), "tick %d", t);
        passed |= pos(w, a, 1).z < -fx_from(0.2);
    }
    cr_assert(passed, "particles of one system collided");
    cr_assert_lt(pos(w, a, 0).x, 0);
    ls_world_destroy(w);
}

// Nothing in the collision stage allocates: a cloth over a sphere and a
// dynamic box, a rope and a particle body falling on a mesh-free floor, two
// colliding systems; after 10 warm-up ticks, 100 ticks allocate nothing.
Test(particles_collide, step_with_collisions_does_not_allocate)
{
    ls_world *w = make_world_g();
    add_floor(w, LS_FX_ONE / 2);
    ls_shape_def sh = ls_default_shape_def();
    sh.type = LS_SHAPE_SPHERE;
    sh.radius = fx_from(0.4);
    add_static(w, sh, ls_vec3_make(0, fx_from(0.4), 0));
    add_dynamic_box(w, ls_vec3_make(LS_FX_ONE, fx_from(0.25), 0),
                    ls_vec3_make(fx_from(0.25), fx_from(0.25), fx_from(0.25)), LS_FX_INT(100));
    ls_cloth_def cd = ls_default_cloth_def();
    cd.origin = ls_vec3_make(fx_from(-0.5), fx_from(1.2), fx_from(-0.5));
    cd.nu = cd.nv = 20;
    cd.spacing = fx_from(0.08);
    ls_error err;
    cr_assert(ls_cloth_create(w, &cd, &err).index1, "%s", err.message);
    ls_rope_def rd = ls_default_rope_def();
    rd.start = ls_vec3_make(0, LS_FX_INT(2), 0);
    rd.end = ls_vec3_make(LS_FX_ONE, LS_FX_INT(2), 0);
    cr_assert(ls_rope_create(w, &rd, &err).index1, "%s", err.message);
    ls_particle_body_def bd = ls_default_particle_body_def();
    bd.position = ls_vec3_make(LS_FX_ONE, LS_FX_INT(1), 0);
    cr_assert(ls_particle_body_create(w, &bd, &err).index1, "%s", err.message);
    for (int t = 0; t < 10; t++) {
        ls_world_step(w);
    }
    alloc_count_reset();
    for (int t = 0; t < 100; t++) {
        ls_world_step(w);
    }
    cr_assert_eq(alloc_count_get(), 0, "%llu allocations in 100 ticks",
                 (unsigned long long)alloc_count_get());
    cr_assert(!ls_world_info(w).capacity_exceeded);
    ls_world_destroy(w);
}

// The collision stage keeps no state between ticks: snapshot a world with
// cloth on a sphere, a dynamic box and two colliding systems mid-run,
// restore it into a fresh world, and every later checksum equals the
// uninterrupted run's.
Test(particles_collide, snapshot_restore_equals_uninterrupted_run)
{
    ls_world *w = make_world_g();
    add_floor(w, LS_FX_ONE / 2);
    ls_shape_def sh = ls_default_shape_def();
    sh.type = LS_SHAPE_SPHERE;
    sh.radius = fx_from(0.4);
    add_static(w, sh, ls_vec3_make(0, fx_from(0.4), 0));
    add_dynamic_box(w, ls_vec3_make(fx_from(0.6), fx_from(0.25), 0),
                    ls_vec3_make(fx_from(0.25), fx_from(0.25), fx_from(0.25)), LS_FX_INT(20));
    ls_cloth_def cd = ls_default_cloth_def();
    cd.origin = ls_vec3_make(fx_from(-0.5), fx_from(1.2), fx_from(-0.5));
    cd.nu = cd.nv = 12;
    ls_error err;
    cr_assert(ls_cloth_create(w, &cd, &err).index1, "%s", err.message);
    ls_rope_def rd = ls_default_rope_def();
    rd.start = ls_vec3_make(fx_from(-0.5), LS_FX_INT(2), 0);
    rd.end = ls_vec3_make(fx_from(0.8), LS_FX_INT(2), 0);
    rd.pin_start = false;
    cr_assert(ls_rope_create(w, &rd, &err).index1, "%s", err.message);
    for (int t = 0; t < 40; t++) {
        ls_world_step(w);
    }
    size_t size = ls_world_snapshot_size(w);
    uint8_t *buf = malloc(size);
    cr_assert_eq(ls_world_snapshot_save(w, buf, size), size);
    ls_world *r = make_world_g();
    cr_assert_eq(ls_world_snapshot_restore(r, buf, size, &err), LS_OK, "%s", err.message);
    free(buf);
    for (int t = 0; t < 120; t++) {
        ls_world_step(w);
        ls_world_step(r);
        cr_assert_eq(ls_world_checksum(w), ls_world_checksum(r), "tick %d after restore", t);
    }
    ls_world_destroy(w);
    ls_world_destroy(r);
}

// A 24 x 24 cloth (5 cm spacing, radius 1 cm, 8 iterations) falls on a
// static sphere (r 0.5 m) and a static box: no particle ends a tick deeper
// than 1 mm in either, and the cloth comes to rest draped (its centre on the
// sphere's top within 1 mm).
Test(particles_collide, cloth_drapes_over_sphere_and_box)
{
    ls_world *w = make_world_g();
    add_floor(w, LS_FX_ONE / 2);
    const ls_fx R = LS_FX_HALF, r = fx_from(0.01);
    ls_shape_def sh = ls_default_shape_def();
    sh.type = LS_SHAPE_SPHERE;
    sh.radius = R;
    const ls_vec3 c = ls_vec3_make(0, LS_FX_ONE, 0);
    add_static(w, sh, c);
    ls_shape_def bx = ls_default_shape_def();
    bx.type = LS_SHAPE_BOX;
    bx.half_extents = ls_vec3_make(fx_from(0.2), fx_from(0.4), fx_from(0.2));
    const ls_vec3 bc = ls_vec3_make(fx_from(0.5), fx_from(0.4), fx_from(0.45));
    add_static(w, bx, bc);
    ls_cloth_def cd = ls_default_cloth_def();
    cd.nu = cd.nv = 24;
    cd.spacing = fx_from(0.05);
    cd.origin = ls_vec3_make(fx_from(-0.575), fx_from(1.7), fx_from(-0.575));
    cd.radius = r;
    cd.mass = LS_FX_ONE;
    cd.system.iterations = 8;
    ls_error err;
    ls_particle_system_id s = ls_cloth_create(w, &cd, &err);
    cr_assert(s.index1, "%s", err.message);
    const uint64_t lim = (uint64_t)(R + r - MM);
    for (int t = 0; t < 360; t++) {
        ls_world_step(w);
        for (uint32_t i = 0; i < 576; i++) {
            ls_vec3 p = pos(w, s, i);
            cr_assert(ls_vec3_len_sq_q32(ls_vec3_sub(p, c)) >= lim * lim,
                      "tick %d particle %u is %d raw inside the sphere", t, i,
                      R + r - ls_vec3_len(ls_vec3_sub(p, c)));
            ls_vec3 l = ls_vec3_abs(ls_vec3_sub(p, bc));
            ls_fx in =
                ls_fx_min(ls_fx_min(bx.half_extents.x + r - l.x, bx.half_extents.y + r - l.y),
                          bx.half_extents.z + r - l.z);
            cr_assert(in <= MM, "tick %d particle %u is %d raw inside the box", t, i, in);
        }
    }
    ls_vec3 top = pos(w, s, 12 * 24 + 12);
    ls_fx d = ls_vec3_len(ls_vec3_sub(top, c));
    cr_assert(abs(d - (R + r)) <= MM, "centre particle %d raw off the sphere", d - (R + r));
    ls_world_destroy(w);
}

// A particle squeezed between a dynamic body and static geometry: a 12 kg
// box (0.4 m) dropped 0.3 m onto a 16 x 16 cloth lying on the floor. No
// particle ever ends a tick below the floor (immovable geometry projects
// last, and again after friction), and the box does not bounce off the
// squeezed particles: after landing it never rises more than 1 mm above its
// resting height on the floor (the pushes that fought the floor's are not
// all passed on: only the tick's approach is).
Test(particles_collide, particle_squeezed_under_a_body_stays_on_the_floor)
{
    ls_world *w = make_world_g();
    add_floor(w, LS_FX_ONE / 2);
    ls_cloth_def cd = ls_default_cloth_def();
    cd.nu = cd.nv = 16;
    cd.spacing = fx_from(0.05);
    cd.origin = ls_vec3_make(fx_from(-0.4), fx_from(0.01), fx_from(-0.4));
    cd.radius = fx_from(0.01);
    cd.mass = LS_FX_ONE;
    cd.system.iterations = 8;
    ls_error err;
    ls_particle_system_id s = ls_cloth_create(w, &cd, &err);
    cr_assert(s.index1, "%s", err.message);
    for (int t = 0; t < 60; t++) {
        ls_world_step(w);
    }
    ls_body_id b = add_dynamic_box(w, ls_vec3_make(0, fx_from(0.5), 0),
                                   ls_vec3_make(fx_from(0.2), fx_from(0.2), fx_from(0.2)),
                                   fx_from(12.0 / 0.064));
    bool landed = false;
    for (int t = 0; t < 300; t++) {
        ls_world_step(w);
        for (uint32_t i = 0; i < 256; i++) {
            cr_assert(pos(w, s, i).y >= 0, "tick %d particle %u below the floor", t, i);
        }
        ls_fx y = ls_body_position(w, b).y;
        landed |= y < fx_from(0.21);
        if (landed) {
            cr_assert(y <= fx_from(0.2) + MM, "tick %d: the box rose to %d raw", t, y);
        }
    }
    cr_assert(landed);
    ls_world_destroy(w);
}

// Friction works on the motion relative to the touched body: a particle
// (mu 0.5) resting on a kinematic box that moves at 0.5 m/s along x rides
// with it: over 2 s it moves as far as the box (about 1 m) within 1 cm.
Test(particles_collide, particle_rides_a_moving_platform)
{
    ls_world *w = make_world_g();
    ls_body_def bd = ls_default_body_def();
    bd.type = LS_BODY_KINEMATIC;
    bd.position = ls_vec3_zero();
    bd.linear_velocity = ls_vec3_make(LS_FX_HALF, 0, 0);
    bd.shape.type = LS_SHAPE_BOX;
    bd.shape.half_extents = ls_vec3_make(LS_FX_INT(2), fx_from(0.1), LS_FX_ONE);
    ls_error err;
    ls_body_id b = ls_body_create(w, &bd, &err);
    cr_assert(b.index1, "%s", err.message);
    ls_particle_system_id s = add_system(w, 1, 4, LS_FX_HALF);
    add_particle(w, s, ls_vec3_make(0, fx_from(0.12), 0), fx_from(0.02));
    for (int t = 0; t < 30; t++) {
        ls_world_step(w);
    }
    ls_fx x0 = pos(w, s, 0).x, b0 = ls_body_position(w, b).x;
    for (int t = 0; t < 120; t++) {
        ls_world_step(w);
    }
    ls_fx moved = pos(w, s, 0).x - x0, carried = ls_body_position(w, b).x - b0;
    cr_assert(carried > fx_from(0.9), "the platform moved %d raw", carried);
    cr_assert(abs(moved - carried) <= 10 * MM, "the particle moved %d raw, the platform %d", moved,
              carried);
    ls_world_destroy(w);
}

// Pinned particles collide (SPEC.md §25.6): a row of 21 immovable particles
// (radius 0.05 m, 0.1 m apart, 1 m above the floor: a cloth's pinned edge)
// carries a 0.4 m box of 64 kg dropped on it from 0.5 m above: the box comes
// to rest on the row (its bottom within 2 cm of the particles' tops, never
// below their centres) and sleeps there, instead of falling through to the
// floor. Neighbouring cases: a box thrown sideways at 5 m/s into a vertical
// pinned column stops at its surface; a light box (0.5 kg) rests too.
static double lowest_y(const ls_world *w, ls_body_id b, double half)
{
    ls_vec3 p = ls_body_position(w, b);
    ls_quat q = ls_body_orientation(w, b);
    double lo = 1e9;
    for (int k = 0; k < 8; k++) {
        ls_vec3 c = ls_vec3_make(fx_from(k & 1 ? half : -half), fx_from(k & 2 ? half : -half),
                                 fx_from(k & 4 ? half : -half));
        double y = (double)ls_vec3_add(p, ls_quat_rotate(q, c)).y / 65536.0;
        lo = y < lo ? y : lo;
    }
    return lo;
}

static void box_on_pinned_row(double density, const char *what)
{
    ls_world *w = make_world_g();
    add_floor(w, LS_FX_ONE / 2);
    ls_particle_system_id s = add_system(w, 32, 4, LS_FX_ONE / 2);
    for (int k = 0; k < 21; k++) {
        ls_particle_def pd = ls_default_particle_def();
        pd.position = ls_vec3_make(fx_from(-1 + 0.1 * k), fx_from(1), 0);
        pd.radius = fx_from(0.05);
        pd.mass = 0;
        ls_error err;
        cr_assert(ls_particle_add(w, s, &pd, &err) != UINT32_MAX, "%s", err.message);
    }
    ls_body_id b =
        add_dynamic_box(w, ls_vec3_make(0, fx_from(1.75), 0),
                        ls_vec3_make(fx_from(0.2), fx_from(0.2), fx_from(0.2)), fx_from(density));
    double lowest = 1e9, last = 0;
    for (int t = 0; t < 300; t++) {
        ls_world_step(w);
        last = lowest_y(w, b, 0.2);
        lowest = last < lowest ? last : lowest;
    }
    fprintf(stderr,
            "pinned row, %s box: bottom at %.4f m after 5 s (particle tops at 1.05), lowest "
            "%.4f m\n",
            what, last, lowest);
    cr_assert_gt(lowest, 1.0, "%s box went below the row's centres: %.4f m", what, lowest);
    cr_assert(fabs(last - 1.05) < 0.02, "%s box rests at %.4f m, the row's top is 1.05 m", what,
              last);
    ls_world_destroy(w);
}

Test(particles_collide, a_box_rests_on_a_pinned_row)
{
    box_on_pinned_row(1000, "64 kg");
    box_on_pinned_row(7.8125, "0.5 kg");
}

Test(particles_collide, a_box_thrown_at_a_pinned_column_stops_at_its_surface)
{
    ls_world *w = make_world(ls_vec3_zero());
    ls_particle_system_id s = add_system(w, 32, 4, 0);
    for (int k = 0; k < 11; k++) {
        ls_particle_def pd = ls_default_particle_def();
        pd.position = ls_vec3_make(0, fx_from(-0.5 + 0.1 * k), 0);
        pd.radius = fx_from(0.05);
        pd.mass = 0;
        ls_error err;
        cr_assert(ls_particle_add(w, s, &pd, &err) != UINT32_MAX, "%s", err.message);
    }
    (void)s;
    ls_body_id b =
        add_dynamic_box(w, ls_vec3_make(fx_from(-1), 0, 0),
                        ls_vec3_make(fx_from(0.2), fx_from(0.2), fx_from(0.2)), fx_from(1000));
    ls_body_set_velocity(w, b, ls_vec3_make(fx_from(5), 0, 0), ls_vec3_zero());
    double most = -1e9;
    for (int t = 0; t < 60; t++) {
        ls_world_step(w);
        double x = (double)ls_body_position(w, b).x / 65536.0;
        most = x > most ? x : most;
    }
    double vx = (double)ls_body_linear_velocity(w, b).x / 65536.0;
    fprintf(stderr, "pinned column: box front at most %.4f m (column surface -0.05), vx %.3f\n",
            most + 0.2, vx);
    cr_assert_lt(most + 0.2, 0.0, "the box passed into the column: front at %.4f m", most + 0.2);
    cr_assert_leq(vx, 0.0, "the box still moves into the column: %.3f m/s", vx);
    ls_world_destroy(w);
}

// Particle-particle friction (SPEC.md §25.6): a particle (radius 0.05 m, of a
// system with friction mu) lies on a 1 m pinned particle of another system
// (friction mu too), 15 degrees from the top. Theory: it stays put while
// tan 15 = 0.27 <= mu (static friction), it slides off when mu is below.
// Measured: mu 0.5 and 0.3 hold within 1 mm over 2 s; mu 0.1 and 0 slide away.
static double slide_on_a_pinned_ball(double mu)
{
    ls_world *w = make_world_g();
    ls_particle_system_id big = add_system(w, 1, 4, fx_from(mu));
    ls_particle_system_id small = add_system(w, 1, 4, fx_from(mu));
    ls_particle_def pd = ls_default_particle_def();
    pd.radius = LS_FX_ONE;
    pd.mass = 0;
    ls_particle_add(w, big, &pd, NULL);
    const double a = 15 * 3.14159265358979 / 180, r = 1.05;
    pd = ls_default_particle_def();
    pd.radius = fx_from(0.05);
    pd.position = ls_vec3_make(fx_from(r * sin(a)), fx_from(r * cos(a)), 0);
    ls_particle_add(w, small, &pd, NULL);
    ls_vec3 p0 = pos(w, small, 0);
    for (int t = 0; t < 120; t++) {
        ls_world_step(w);
    }
    double moved = (double)ls_vec3_len(ls_vec3_sub(pos(w, small, 0), p0)) / 65536.0;
    fprintf(stderr, "particle on a pinned ball at 15 deg, mu %.1f: moved %.4f m in 2 s\n", mu,
            moved);
    ls_world_destroy(w);
    return moved;
}

Test(particles_collide, particle_pairs_have_friction)
{
    cr_assert_lt(slide_on_a_pinned_ball(0.5), 0.001);
    cr_assert_lt(slide_on_a_pinned_ball(0.3), 0.001);
    cr_assert_gt(slide_on_a_pinned_ball(0.1), 0.3);
    cr_assert_gt(slide_on_a_pinned_ball(0), 0.3);
}
