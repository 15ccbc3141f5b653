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
// Measured (8 iterations; SPEC.md §25.6 "Taut cloth" has the numbers): with
// the triangles, the taut-cloth contacts and the start side of a ball that
// passed a particle within the tick, every ball of 0.1/0.15/0.2 m, 1 and
// 10 kg, dropped gently or thrown at 10/20/30 m/s is caught and held (at rest
// in the cloth at the end, goals below). Before the start side the 0.1 m 1 kg
// ball at 20 m/s and the 0.2 m balls at 30 m/s were thrown back out (the
// particles the ball passed in the first tick were pushed onto its top, and
// the cloth tangled around it); before the taut-cloth contacts every body at
// 20 and 30 m/s and the 10 kg balls at 10 m/s went through (the sticks
// stretched 30-fold before the corners could stop them); with the particles
// alone the 0.1 m ball fell through dropped gently. A ball narrower than the
// spacing cannot be made (a sphere shape is at least 0.05 m in radius, twice
// this spacing).
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
    double peak;    ///< largest structural stick strain in any tick, fraction
    double mean_v;  ///< mean speed over the last second, m/s
    bool held;      ///< at the end over the cloth and above its lowest particle
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
    for (uint32_t k = 0; k < 2 * CLOTH_N * (CLOTH_N - 1); k++) {
        uint32_t j = k % (CLOTH_N * (CLOTH_N - 1)) / (CLOTH_N - 1), i = k % (CLOTH_N - 1);
        uint32_t pa = k < CLOTH_N * (CLOTH_N - 1) ? j * CLOTH_N + i : i * CLOTH_N + j;
        uint32_t pb = k < CLOTH_N * (CLOTH_N - 1) ? pa + 1 : pa + CLOTH_N;
        {
            ls_vec3 a = ls_particle_position(w, s, pa);
            ls_vec3 b = ls_particle_position(w, s, pb);
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
    catch_result r = {true, -1, 1e9, 0, 0, 0, 0, 0, false};
    bool inside = false;
    for (int t = 0; t < ticks; t++) {
        ls_world_step(w);
        ls_fx by = ls_body_position(w, b).y;
        ls_vec3 bp = ls_body_position(w, b);
        r.lowest = fx_to(by) < r.lowest ? fx_to(by) : r.lowest;
        inside = ls_fx_abs(bp.x) < fx_from(0.5) && ls_fx_abs(bp.z) < fx_from(0.5);
        if (r.caught && inside && by < lowest_particle(w, s)) {
            r.caught = false;
            r.through = t;
        }
        double st = max_strain(w, s);
        r.peak = st > r.peak ? st : r.peak;
        ls_vec3 v = ls_body_linear_velocity(w, b);
        if (t >= ticks - 60) {
            r.mean_v += __builtin_sqrt(fx_to(v.x) * fx_to(v.x) + fx_to(v.y) * fx_to(v.y) +
                                       fx_to(v.z) * fx_to(v.z)) /
                        60;
        }
    }
    ls_vec3 v = ls_body_linear_velocity(w, b);
    r.rest_v =
        __builtin_sqrt(fx_to(v.x) * fx_to(v.x) + fx_to(v.y) * fx_to(v.y) + fx_to(v.z) * fx_to(v.z));
    r.final_y = fx_to(ls_body_position(w, b).y);
    r.stretch = max_strain(w, s);
    r.held = inside && ls_body_position(w, b).y > lowest_particle(w, s);
    ls_world_destroy(w);
    return r;
}

typedef struct catch_case {
    body_kind kind;
    double size, mass, speed;
} catch_case;

/// Goals of a ball that is caught and held (issue 29): at the end it lies
/// over the cloth above its lowest particle, its mean speed over the last
/// second is at most HELD_SPEED (it keeps a wobble in the pocket: measured
/// 0.14-0.70 m/s), and the largest structural stick strain at the end is at
/// most REST_STRAIN (the cloth alone, hanging from its corners, rests at 0.40;
/// measured with a held ball 0.86-2.29).
#define HELD_SPEED  1.2
#define REST_STRAIN 2.5

static catch_result run_case(const catch_case *c)
{
    catch_result r = run_catch(c->kind, c->size, c->mass, c->speed, 360);
    printf("catch %s %.2f m %4.0f kg %3.0f m/s: %s, lowest centre %.3f m, end %.3f m, %s, "
           "mean speed %.3f m/s, strain peak %.2f end %.2f\n",
           kind_name(c->kind), c->size, c->mass, c->speed, r.caught ? "caught" : "THROUGH",
           r.lowest, r.final_y, r.held ? "held" : "LOST", r.mean_v, r.peak, r.stretch);
    cr_expect(r.caught, "a %s of %.2f m, %.0f kg at %.0f m/s went through at tick %d",
              kind_name(c->kind), c->size, c->mass, c->speed, r.through);
    return r;
}

static bool held(const catch_result *r)
{
    return r->caught && r->held && r->mean_v <= HELD_SPEED && r->stretch <= REST_STRAIN;
}

/// Caught (never through) only: the boxes' goal.
static void expect_caught(const catch_case *c, int n)
{
    for (int k = 0; k < n; k++) {
        run_case(&c[k]);
    }
}

/// Caught and held (the goals above).
static void expect_held(const catch_case *c, int n)
{
    for (int k = 0; k < n; k++) {
        catch_result r = run_case(&c[k]);
        cr_expect(held(&r),
                  "a ball of %.2f m, %.0f kg at %.0f m/s: %s at the end, mean speed %.3f m/s "
                  "(at most %.1f), strain %.2f (at most %.1f)",
                  c[k].size, c[k].mass, c[k].speed, r.held ? "held" : "not on the cloth", r.mean_v,
                  HELD_SPEED, r.stretch, REST_STRAIN);
    }
}

Test(particles_catch, one_kg_balls_dropped_gently_are_caught, .timeout = 120)
{
    const catch_case c[] = {{BALL, 0.1, 1, 0}, {BALL, 0.15, 1, 0}, {BALL, 0.2, 1, 0}};
    expect_held(c, 3);
}

Test(particles_catch, one_kg_balls_thrown_at_10_m_s_are_caught, .timeout = 120)
{
    const catch_case c[] = {{BALL, 0.1, 1, 10}, {BALL, 0.15, 1, 10}, {BALL, 0.2, 1, 10}};
    expect_held(c, 3);
}

Test(particles_catch, one_kg_balls_thrown_at_20_and_30_m_s_are_caught, .timeout = 120)
{
    const catch_case c[] = {{BALL, 0.1, 1, 20}, {BALL, 0.15, 1, 20}, {BALL, 0.2, 1, 20},
                            {BALL, 0.1, 1, 30}, {BALL, 0.15, 1, 30}, {BALL, 0.2, 1, 30}};
    expect_held(c, 6);
}

Test(particles_catch, ten_kg_balls_dropped_gently_are_caught, .timeout = 120)
{
    const catch_case c[] = {{BALL, 0.1, 10, 0}, {BALL, 0.15, 10, 0}, {BALL, 0.2, 10, 0}};
    expect_held(c, 3);
}

Test(particles_catch, ten_kg_balls_thrown_at_10_m_s_are_caught, .timeout = 120)
{
    const catch_case c[] = {{BALL, 0.1, 10, 10}, {BALL, 0.15, 10, 10}, {BALL, 0.2, 10, 10}};
    expect_held(c, 3);
}

Test(particles_catch, ten_kg_balls_thrown_at_20_and_30_m_s_are_caught, .timeout = 120)
{
    const catch_case c[] = {{BALL, 0.1, 10, 20}, {BALL, 0.15, 10, 20}, {BALL, 0.2, 10, 20},
                            {BALL, 0.1, 10, 30}, {BALL, 0.15, 10, 30}, {BALL, 0.2, 10, 30}};
    expect_held(c, 6);
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
