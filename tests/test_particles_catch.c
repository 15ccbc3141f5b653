// SPDX-License-Identifier: MIT
// Bodies caught by a cloth (SPEC.md §25.6 "Cloth triangles"; issue 29): a
// dynamic body's shape collides with the cloth's triangles, not only with its
// particles, and sweeps over the tick, so a ball wider than the cloth's
// spacing is caught at any speed up to 30 m/s.
//
// The cloth of every case: 21 x 21 particles 0.05 m apart (1 m square) at
// y = 1, 0.5 kg (1/882 kg a particle: a 1 kg ball weighs 882 of them),
// radius 0.01 m, 8 iterations, its four corners pinned. A body starts above
// it, a little off centre, at rest ("gently": its bottom 5 cm above the
// cloth) or thrown straight down. Caught: in every tick of 6 s the body's
// centre stays above the cloth's lowest particle (tolerance 0: the cloth
// wraps under a caught ball) while it is over the cloth (|x|, |z| < 0.5 m: a
// ball that bounces out over an edge may fall past it).
//
// Measured (8 iterations; before the triangles, with the particles alone: the
// 0.1 m ball fell through dropped gently, every 1 kg ball thrown at 10 m/s
// fell through in the first tick): caught are the 1 kg balls of 0.1, 0.15 and
// 0.2 m dropped gently and thrown at 10 m/s, the 10 kg balls of 0.15 and 0.2
// m and the 1 kg boxes of 0.15 and 0.2 m dropped gently, the 0.2 m box at 10
// m/s (those thrown at 10 m/s are thrown back up and leave over an edge a
// second later). Not caught (the goal of issue 29 is missed there): every body at 20
// and 30 m/s, the 10 kg balls at 10 m/s and the 0.1 m 10 kg ball, the 0.1 m
// box. Those stretch the cloth's sticks 30-fold before the corners can stop
// them (a 0.5 kg cloth whose sticks are relaxed 8 times a tick; the coupling
// passes on only what the iterations pushed, SPEC.md §25.6): the cloth is too
// weak there, its surface is no longer the problem. A ball narrower than the
// spacing cannot be made (a sphere shape is at least 0.05 m in radius, twice
// this spacing); a particle-sphere cloth lets such a ball through.
#include "ls/particles.h"
#include "ls/world.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TestSuite(particles_catch);

static ls_fx fx_from(double v)
{
    return (ls_fx)(v * 65536.0 + (v >= 0 ? 0.5 : -0.5));
}

static double fx_to(ls_fx v)
{
    return v / 65536.0;
}

static ls_world *make_world(void)
{
    ls_world_def d = ls_default_world_def();
    d.gravity = ls_vec3_make(0, -642908, 0);
    d.max_bodies = 16;
    d.max_contacts = 256;
    d.max_particle_systems = 4;
    d.max_particles = 1024;
    d.max_particle_constraints = 8192;
    ls_error err;
    ls_world *w = ls_world_create(&d, &err);
    cr_assert(w, "%s", err.message);
    return w;
}

#define CLOTH_N 21
#define CLOTH_Y 1.0

static ls_particle_system_id make_cloth(ls_world *w)
{
    ls_cloth_def cd = ls_default_cloth_def();
    cd.nu = CLOTH_N;
    cd.nv = CLOTH_N;
    cd.spacing = fx_from(0.05);
    cd.origin = ls_vec3_make(fx_from(-0.5), fx_from(CLOTH_Y), fx_from(-0.5));
    cd.mass = fx_from(0.5);
    cd.radius = fx_from(0.01);
    cd.system.iterations = 8;
    cd.pins = LS_CLOTH_PIN_CORNER_00 | LS_CLOTH_PIN_CORNER_10 | LS_CLOTH_PIN_CORNER_01 |
              LS_CLOTH_PIN_CORNER_11;
    ls_error err;
    ls_particle_system_id s = ls_cloth_create(w, &cd, &err);
    cr_assert(s.index1, "%s", err.message);
    return s;
}

typedef enum { BALL, BOX } body_kind;

/// A body of `mass` kg (ball of radius `size`, or box of half extent `size`)
/// whose bottom is 5 cm above the cloth, moving down at `speed` m/s.
static ls_body_id drop_body(ls_world *w, body_kind kind, double size, double mass, double speed)
{
    ls_body_def bd = ls_default_body_def();
    bd.type = LS_BODY_DYNAMIC;
    bd.position = ls_vec3_make(fx_from(0.013), fx_from(CLOTH_Y + size + 0.05), fx_from(-0.021));
    bd.linear_velocity = ls_vec3_make(0, fx_from(-speed), 0);
    if (kind == BALL) {
        bd.shape.type = LS_SHAPE_SPHERE;
        bd.shape.radius = fx_from(size);
        bd.shape.density = fx_from(mass / (4.0 / 3.0 * 3.14159265358979 * size * size * size));
    } else {
        bd.shape.type = LS_SHAPE_BOX;
        bd.shape.half_extents = ls_vec3_make(fx_from(size), fx_from(size), fx_from(size));
        bd.shape.density = fx_from(mass / (8.0 * size * size * size));
    }
    bd.allow_sleep = false;
    ls_error err;
    ls_body_id b = ls_body_create(w, &bd, &err);
    cr_assert(b.index1, "%s", err.message);
    return b;
}

typedef struct catch_result {
    bool caught;    ///< never below the lowest particle
    int through;    ///< first tick below it (-1: none)
    double lowest;  ///< the body's lowest centre, m
    double rest_v;  ///< speed at the end, m/s
    double final_y; ///< centre at the end
    double stretch; ///< largest structural stick strain at the end, fraction
} catch_result;

static const char *kind_name(body_kind k)
{
    return k == BALL ? "ball" : "box";
}

static ls_fx lowest_particle(const ls_world *w, ls_particle_system_id s)
{
    ls_fx low = LS_FX_MAX;
    for (uint32_t i = 0; i < CLOTH_N * CLOTH_N; i++) {
        low = ls_fx_min(low, ls_particle_position(w, s, i).y);
    }
    return low;
}

static double max_strain(const ls_world *w, ls_particle_system_id s)
{
    double worst = 0;
    for (uint32_t j = 0; j < CLOTH_N; j++) {
        for (uint32_t i = 0; i + 1 < CLOTH_N; i++) {
            ls_vec3 a = ls_particle_position(w, s, j * CLOTH_N + i);
            ls_vec3 b = ls_particle_position(w, s, j * CLOTH_N + i + 1);
            double dx = fx_to(b.x - a.x), dy = fx_to(b.y - a.y), dz = fx_to(b.z - a.z);
            double l = __builtin_sqrt(dx * dx + dy * dy + dz * dz) / 0.05 - 1;
            worst = l > worst ? l : worst;
        }
    }
    return worst;
}

static catch_result run_catch(body_kind kind, double size, double mass, double speed, int ticks)
{
    ls_world *w = make_world();
    ls_particle_system_id s = make_cloth(w);
    ls_body_id b = drop_body(w, kind, size, mass, speed);
    catch_result r = {true, -1, 1e9, 0, 0, 0};
    for (int t = 0; t < ticks; t++) {
        ls_world_step(w);
        ls_fx by = ls_body_position(w, b).y;
        ls_vec3 bp = ls_body_position(w, b);
        r.lowest = fx_to(by) < r.lowest ? fx_to(by) : r.lowest;
        bool inside = ls_fx_abs(bp.x) < fx_from(0.5) && ls_fx_abs(bp.z) < fx_from(0.5);
        if (r.caught && inside && by < lowest_particle(w, s)) {
            r.caught = false;
            r.through = t;
        }
    }
    ls_vec3 v = ls_body_linear_velocity(w, b);
    r.rest_v =
        __builtin_sqrt(fx_to(v.x) * fx_to(v.x) + fx_to(v.y) * fx_to(v.y) + fx_to(v.z) * fx_to(v.z));
    r.final_y = fx_to(ls_body_position(w, b).y);
    r.stretch = max_strain(w, s);
    ls_world_destroy(w);
    return r;
}

typedef struct catch_case {
    body_kind kind;
    double size, mass, speed;
} catch_case;

static void expect_caught(const catch_case *c, int n)
{
    for (int k = 0; k < n; k++) {
        catch_result r = run_catch(c[k].kind, c[k].size, c[k].mass, c[k].speed, 360);
        printf("catch %s %.2f m %4.0f kg %3.0f m/s: %s, lowest centre %.3f m, end %.3f m\n",
               kind_name(c[k].kind), c[k].size, c[k].mass, c[k].speed,
               r.caught ? "caught" : "THROUGH", r.lowest, r.final_y);
        cr_expect(r.caught, "a %s of %.2f m, %.0f kg at %.0f m/s went through at tick %d",
                  kind_name(c[k].kind), c[k].size, c[k].mass, c[k].speed, r.through);
    }
}

Test(particles_catch, one_kg_balls_dropped_gently_are_caught, .timeout = 120)
{
    const catch_case c[] = {{BALL, 0.1, 1, 0}, {BALL, 0.15, 1, 0}, {BALL, 0.2, 1, 0}};
    expect_caught(c, 3);
}

Test(particles_catch, one_kg_balls_thrown_at_10_m_s_are_caught, .timeout = 120)
{
    const catch_case c[] = {{BALL, 0.1, 1, 10}, {BALL, 0.15, 1, 10}, {BALL, 0.2, 1, 10}};
    expect_caught(c, 3);
}

Test(particles_catch, ten_kg_balls_dropped_gently_are_caught, .timeout = 120)
{
    const catch_case c[] = {{BALL, 0.15, 10, 0}, {BALL, 0.2, 10, 0}};
    expect_caught(c, 2);
}

Test(particles_catch, boxes_are_caught, .timeout = 120)
{
    const catch_case c[] = {{BOX, 0.15, 1, 0}, {BOX, 0.2, 1, 0}, {BOX, 0.2, 1, 10}};
    expect_caught(c, 3);
}

// Snapshot and restore in the middle of the contact (tick 40: the 0.15 m
// ball deep in the cloth) reproduce the next 60 ticks' checksums bit for bit,
// in the same world and in a second world made the same way (the triangle
// contacts are scratch, rebuilt from the state every tick).
Test(particles_catch, snapshot_restore_mid_contact_reproduces_checksums, .timeout = 120)
{
    ls_world *w = make_world();
    make_cloth(w);
    drop_body(w, BALL, 0.15, 1, 0);
    for (int t = 0; t < 40; t++) {
        ls_world_step(w);
    }
    size_t size = ls_world_snapshot_size(w);
    uint8_t *buf = malloc(size);
    cr_assert(buf);
    cr_assert_eq(ls_world_snapshot_save(w, buf, size), size);
    uint64_t sum[60];
    for (int t = 0; t < 60; t++) {
        ls_world_step(w);
        sum[t] = ls_world_checksum(w);
    }
    ls_world *v = make_world();
    make_cloth(v);
    drop_body(v, BALL, 0.15, 1, 0);
    ls_world *both[2] = {w, v};
    for (int k = 0; k < 2; k++) {
        ls_error err;
        cr_assert_eq(ls_world_snapshot_restore(both[k], buf, size, &err), LS_OK, "%s", err.message);
        for (int t = 0; t < 60; t++) {
            ls_world_step(both[k]);
            cr_assert_eq(ls_world_checksum(both[k]), sum[t], "world %d, tick %d after restore", k,
                         t);
        }
    }
    free(buf);
    ls_world_destroy(v);
    ls_world_destroy(w);
}
