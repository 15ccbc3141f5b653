// SPDX-License-Identifier: MIT
// Particle statements in scene files (SPEC.md §14: cloth, rope,
// ragdoll_particles, particle_body): parsing, writing back bit for bit,
// defaults, instantiation in file order, capacities and errors; then the six
// shipped particle scenes (tools/scenes/, tools/gen/scenes.py), each checked
// for its visible outcome with numbers (tolerances stated in each test).
// Floating point here is only for measuring.
#define _POSIX_C_SOURCE 200809L
#include "ls/hull.h"
#include "ls/particles.h"
#include "ls/scene.h"
#include "test_util.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Every particle statement with most of its properties (and a hull).
static const char ALL[] =
    "world gravity 0 -9.81 0\n"
    "body static box half 0.2 0.2 0.2 pos 0 5 0 label hook\n"
    "body dynamic sphere radius 0.3 pos 3 5 0\n"
    "cloth origin -1 2 -1 axis_u 1 0 0.1 axis_v 0 0 1 grid 10 12 spacing 0.1 mass 2 radius 0.01 "
    "no_shear bend_stiffness 0.5 tear 1.5 pins corner00+edge_u1 iterations 6 stick exact "
    "damping 0.01 gravity_scale 0.5 friction 0.3 wind 1 0 0.5 turbulence 3 "
    "seed 18446744073709551615 filter 2 5 no_particle_collision pinned 3 4 7 9\n"
    "rope from 0 4.5 0 to 3 4.5 0 segments 12 mass 1 end_mass 5 radius 0.05 slack "
    "no_long_range tear 2 pin none attach_start hook attach_end 1\n"
    "ragdoll_particles pos 0 3 2 quat 0 0 0.2 1 height 1.7 mass 60 radius 0.05 vel 1 0 0 "
    "iterations 10\n"
    "particle_body hull points 4 0 0 0 1 0 0 0 1 0 0 0 1 at 0.1 0 0 rot 0 0.1 0 1 "
    "particles box pos 0 4 4 quat 0.1 0 0 1 vel 0 0 1 angvel 1 0 0 mass 3 "
    "particle_radius 0.01 friction 0.2 filter 1 3\n"
    "particle_body capsule radius 0.1 half_height 0.3 pos 1 1 1\n";

static char *write_scene(const ls_scene *s, size_t *len)
{
    size_t n = ls_scene_write(s, NULL, 0);
    char *text = malloc(n + 1);
    cr_assert_not_null(text);
    cr_assert_eq(ls_scene_write(s, text, n + 1), n);
    *len = n;
    return text;
}

static void parse_ok(const char *text, size_t len, ls_scene *s)
{
    ls_error err;
    cr_assert_eq(ls_scene_parse(text, len, s, &err), LS_OK, "%u:%u %s", err.line, err.column,
                 err.message);
}

Test(particles_scene, every_statement_parses_to_the_builders_definitions)
{
    ls_scene s;
    parse_ok(ALL, strlen(ALL), &s);
    cr_assert_eq(s.particle_count, 5u);
    const ls_scene_particles *p = s.particles;
    cr_assert_eq(p[0].kind, LS_SCENE_CLOTH);
    cr_assert_eq(p[0].line, 4u);
    const ls_cloth_def *c = &p[0].cloth;
    cr_assert_eq(c->origin.x, fx_of(-1));
    cr_assert_eq(c->axis_u.z, fx_of(0.1));
    cr_assert_eq(c->nu, 10u);
    cr_assert_eq(c->nv, 12u);
    cr_assert_eq(c->spacing, fx_of(0.1));
    cr_assert_eq(c->mass, fx_of(2));
    cr_assert(!c->shear && c->bend);
    cr_assert_eq(c->bend_stiffness, fx_of(0.5));
    cr_assert_eq(c->tear_ratio, fx_of(1.5));
    cr_assert_eq(c->pins, LS_CLOTH_PIN_CORNER_00 | LS_CLOTH_PIN_EDGE_U1);
    cr_assert_eq(c->system.iterations, 6u);
    cr_assert_eq(c->system.stick_mode, LS_STICK_EXACT);
    cr_assert_eq(c->system.damping, fx_of(0.01));
    cr_assert_eq(c->system.gravity_scale, fx_of(0.5));
    cr_assert_eq(c->system.acceleration.z, fx_of(0.5));
    cr_assert_eq(c->system.turbulence, fx_of(3));
    cr_assert_eq(c->system.seed, UINT64_MAX);
    cr_assert_eq(c->system.category, 2u);
    cr_assert_eq(c->system.mask, 5u);
    cr_assert(!c->system.collide_particles);
    cr_assert_eq(p[0].pinned_count, 3u);
    cr_assert(p[0].pinned[0] == 4 && p[0].pinned[1] == 7 && p[0].pinned[2] == 9);
    const ls_rope_def *r = &p[1].rope;
    cr_assert_eq(p[1].kind, LS_SCENE_ROPE);
    cr_assert_eq(r->segments, 12u);
    cr_assert_eq(r->end_mass, fx_of(5));
    cr_assert(r->slack && !r->pin_start && !r->pin_end && !r->long_range);
    cr_assert_eq(r->attach_start.index1, 1u, "the label `hook` is body 0: index1 1");
    cr_assert_eq(r->attach_end.index1, 2u);
    const ls_particle_ragdoll_def *g = &p[2].ragdoll;
    cr_assert_eq(g->height, fx_of(1.7));
    cr_assert_eq(g->orientation.z, fx_of(0.2), "stored as written (the builder normalises)");
    cr_assert_eq(g->velocity.x, fx_of(1));
    cr_assert_eq(g->system.iterations, 10u);
    const ls_particle_body_def *b = &p[3].body;
    cr_assert_eq(b->kind, LS_PARTICLE_BODY_BOX);
    cr_assert_eq(b->shape.type, LS_SHAPE_HULL);
    cr_assert_not_null(b->shape.hull);
    cr_assert_eq(b->shape.local_position.x, fx_of(0.1));
    cr_assert_eq(b->angular_velocity.x, fx_of(1));
    cr_assert_eq(b->radius, fx_of(0.01));
    cr_assert_eq(b->system.friction, fx_of(0.2), "friction is the system's");
    cr_assert_eq(p[4].body.shape.type, LS_SHAPE_CAPSULE);
    cr_assert_eq(p[4].body.kind, LS_PARTICLE_BODY_TETRA);
    ls_scene_free(&s);
}

Test(particles_scene, write_then_parse_is_a_fixed_point)
{
    ls_scene s, t;
    parse_ok(ALL, strlen(ALL), &s);
    size_t n, m;
    char *a = write_scene(&s, &n);
    parse_ok(a, n, &t);
    char *b = write_scene(&t, &m);
    cr_assert_eq(m, n);
    cr_assert(memcmp(a, b, n) == 0, "%s\n---\n%s", a, b);
    cr_assert(strstr(a, "pins corner00+edge_u1") != NULL, "%s", a);
    cr_assert(strstr(a, "seed 18446744073709551615") != NULL, "%s", a);
    cr_assert(strstr(a, "attach_start hook attach_end 1") != NULL, "labels kept: %s", a);
    cr_assert(strstr(a, "pinned 3 4 7 9\n") != NULL, "%s", a);
    // The values, not just the text: the second parse holds the same definitions.
    cr_assert_eq(t.particle_count, s.particle_count);
    cr_assert_eq(t.particles[0].cloth.pins, s.particles[0].cloth.pins);
    cr_assert_eq(t.particles[2].ragdoll.orientation.w, s.particles[2].ragdoll.orientation.w);
    cr_assert_eq(ls_hull_vertex_count(t.particles[3].body.shape.hull), 4u);
    free(a);
    free(b);
    ls_scene_free(&s);
    ls_scene_free(&t);
}

Test(particles_scene, a_bare_statement_takes_the_builders_defaults)
{
    const char *text = "cloth\nrope\nragdoll_particles\nparticle_body\n";
    ls_scene s;
    parse_ok(text, strlen(text), &s);
    cr_assert_eq(s.particle_count, 4u);
    ls_cloth_def c = ls_default_cloth_def();
    ls_rope_def r = ls_default_rope_def();
    ls_particle_ragdoll_def g = ls_default_particle_ragdoll_def();
    ls_particle_body_def b = ls_default_particle_body_def();
    const ls_scene_particles *p = s.particles;
    cr_assert(p[0].cloth.nu == c.nu && p[0].cloth.nv == c.nv && p[0].cloth.spacing == c.spacing &&
              p[0].cloth.mass == c.mass && p[0].cloth.pins == c.pins &&
              p[0].cloth.shear == c.shear && ls_vec3_equal(p[0].cloth.origin, c.origin) &&
              p[0].cloth.system.iterations == c.system.iterations);
    cr_assert(p[1].rope.segments == r.segments && p[1].rope.pin_start == r.pin_start &&
              ls_vec3_equal(p[1].rope.end, r.end) && p[1].rope.attach_start.index1 == 0);
    cr_assert(p[2].ragdoll.height == g.height && p[2].ragdoll.mass == g.mass &&
              p[2].ragdoll.system.iterations == g.system.iterations);
    cr_assert(p[3].body.kind == b.kind && p[3].body.shape.type == b.shape.type &&
              p[3].body.mass == b.mass && ls_vec3_equal(p[3].body.position, b.position));
    cr_assert_null(p[0].pinned);
    ls_scene_free(&s);
}

Test(particles_scene, instantiation_builds_the_systems_in_file_order)
{
    ls_scene s;
    parse_ok(ALL, strlen(ALL), &s);
    ls_error err;
    ls_world *w = ls_scene_instantiate(&s, &err);
    cr_assert_not_null(w, "%u: %s (%s)", err.line, err.message, err.field);
    cr_assert_eq(ls_world_particle_system_count(w), 5u);
    static const ls_particle_system_kind kinds[] = {LS_PARTICLES_CLOTH, LS_PARTICLES_ROPE,
                                                    LS_PARTICLES_RAGDOLL, LS_PARTICLES_BODY,
                                                    LS_PARTICLES_BODY};
    static const uint32_t counts[] = {120, 13, 16, 8, 4};
    for (uint32_t i = 0; i < 5; i++) {
        ls_particle_system_id id = ls_world_particle_system_at(w, i);
        cr_assert(ls_particle_system_is_valid(w, id), "system %u", i);
        cr_assert_eq(ls_particle_system_kind_of(w, id), kinds[i], "system %u", i);
        cr_assert_eq(ls_particle_count(w, id), counts[i], "system %u", i);
    }
    // Cloth pins: corner00 and the column i = 9 (edge_u1), plus `pinned 3 4 7 9`.
    ls_particle_system_id cloth = ls_world_particle_system_at(w, 0);
    for (uint32_t k = 0; k < 120; k++) {
        ls_particle_state st;
        cr_assert_eq(ls_particle_get_state(w, cloth, k, &st, NULL), LS_OK);
        bool pinned = k == 0 || k % 10 == 9 || k == 4 || k == 7;
        cr_assert_eq(st.inv_mass == 0, pinned, "cloth particle %u: inv_mass %d", k, st.inv_mass);
    }
    // The rope's first particle is attached to the static `hook`: it does not move.
    ls_particle_system_id rope = ls_world_particle_system_at(w, 1);
    ls_vec3 start = ls_particle_position(w, rope, 0);
    for (int t = 0; t < 30; t++) {
        ls_world_step(w);
    }
    cr_assert(ls_vec3_equal(ls_particle_position(w, rope, 0), start));
    ls_world_destroy(w);
    ls_scene_free(&s);
}

Test(particles_scene, the_world_gets_the_capacity_the_statements_need)
{
    const char *none = "body static plane normal 0 1 0 d 0\nbody dynamic box pos 0 1 0\n";
    ls_scene s;
    parse_ok(none, strlen(none), &s);
    ls_world_def d = ls_scene_world_def(&s), file = ls_default_world_def();
    cr_assert_eq(d.max_particles, file.max_particles, "no statement: the file's values");
    cr_assert_eq(d.max_particle_systems, file.max_particle_systems);
    cr_assert_eq(d.max_particle_constraints, file.max_particle_constraints);
    ls_scene_free(&s);
    // 200 x 200 = 40000 particles and 238 002 sticks: above every default.
    const char *big = "cloth grid 200 200 spacing 0.05 mass 100\nrope segments 100\n";
    parse_ok(big, strlen(big), &s);
    d = ls_scene_world_def(&s);
    cr_assert_geq(d.max_particles, 40000u + 101u);
    cr_assert_geq(d.max_particle_constraints, 238002u + 100u);
    cr_assert_geq(d.max_particle_systems, 2u);
    ls_error err;
    ls_world *w = ls_scene_instantiate(&s, &err);
    cr_assert_not_null(w, "%s", err.message);
    ls_particle_system_id cloth = ls_world_particle_system_at(w, 0);
    cr_assert_eq(ls_particle_count(w, cloth), 40000u);
    cr_assert_eq(ls_particle_constraint_count(w, cloth), 238002u);
    ls_world_destroy(w);
    ls_scene_free(&s);
}

Test(particles_scene, errors_name_line_column_and_field)
{
    static const struct {
        const char *text;
        uint32_t line, column;
        const char *fragment;
    } cases[] = {
        {"cloth grid 4 4 wobble 3\n", 1, 16, "unknown particle property: wobble"},
        {"rope segments 0\n", 1, 15, "integer out of range for: segments (got 0; allowed 1..4096)"},
        {"cloth pins corners+corner00\n", 1, 20, "cloth pin: corner00 (repeated"},
        {"body static\ncloth\nrope attach_start 2\n", 3, 19, "unknown body: attach_start"},
        {"ragdoll_particles angvel 1 0 0\n", 1, 19, "angvel: does not apply to ragdoll_particles"},
        {"particle_body sphere radius 0.2 density 5\n", 1, 33, "unknown particle property"},
        {"particle_body mesh\n", 1, 15, "mesh: a particle_body embeds"},
        {"cloth axis_v 0 0 0\n", 1, 7, "axis_v: zero vector has no direction"},
        {"ragdoll_particles quat 0 0 0 0\n", 1, 19, "quat: length below 1/256"},
        {"cloth friction 5\n", 1, 16, "friction (got 5; allowed 0..4)"},
        {"cloth gravity_scale -17\n", 1, 21, "gravity_scale (got -17; allowed -16..16)"},
        {"rope end_mass 2000\n", 1, 15, "end_mass (got 2000; allowed 0..1000)"},
        {"clothes\n", 1, 1, "particle systems: cloth, rope, ragdoll_particles, particle_body"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ls_scene s;
        ls_error err;
        ls_result r = ls_scene_parse(cases[i].text, strlen(cases[i].text), &s, &err);
        cr_assert_eq(r, LS_ERR_PARSE, "case %zu accepted", i);
        cr_assert_eq(err.line, cases[i].line, "case %zu: %u:%u %s", i, err.line, err.column,
                     err.message);
        cr_assert_eq(err.column, cases[i].column, "case %zu: %u:%u %s", i, err.line, err.column,
                     err.message);
        cr_assert(strstr(err.message, cases[i].fragment) != NULL, "case %zu: '%s' lacks '%s'", i,
                  err.message, cases[i].fragment);
    }
    // What one field cannot show is checked by the builder when instantiating:
    // the statement (the second cloth), its line and the field.
    const char *text = "body static plane normal 0 1 0 d 0\ncloth\ncloth grid 100 100 mass 1\n";
    ls_scene s;
    ls_error err;
    parse_ok(text, strlen(text), &s);
    cr_assert_null(ls_scene_instantiate(&s, &err));
    cr_assert_eq(err.line, 3u);
    cr_assert_eq(err.column, 1u);
    cr_assert_str_eq(err.field, "mass");
    cr_assert(strstr(err.message, "cloth 2: ") == err.message, "%s", err.message);
    ls_scene_free(&s);
}

Test(particles_scene, the_bench_cloth_has_4096_particles_and_23938_sticks)
{
    ls_scene s;
    ls_error err;
    cr_assert_eq(ls_scene_load("tools/bench/scenes/cloth_64.scene", &s, &err), LS_OK, "%s",
                 err.message);
    ls_world *w = ls_scene_instantiate(&s, &err);
    cr_assert_not_null(w, "%s", err.message);
    ls_particle_system_id id = ls_world_particle_system_at(w, 0);
    cr_assert_eq(ls_particle_count(w, id), 4096u);
    // 2 x 64 x 63 structural + 2 x 63 x 63 shear + 2 x 64 x 62 bend.
    cr_assert_eq(ls_particle_constraint_count(w, id), 8064u + 7938u + 7936u);
    ls_world_destroy(w);
    ls_scene_free(&s);
}

// ---- The shipped particle scenes -------------------------------------------

typedef struct run {
    ls_scene scene;
    ls_world *w;
} run;

static void open_scene(run *r, const char *name)
{
    char path[128];
    snprintf(path, sizeof path, "tools/scenes/%s.scene", name);
    ls_error err;
    cr_assert_eq(ls_scene_load(path, &r->scene, &err), LS_OK, "%s: %s", path, err.message);
    r->w = ls_scene_instantiate(&r->scene, &err);
    cr_assert_not_null(r->w, "%s: %s", path, err.message);
}

static void close_scene(run *r)
{
    ls_world_destroy(r->w);
    ls_scene_free(&r->scene);
}

static ls_particle_system_id system_at(const run *r, uint32_t i)
{
    return ls_world_particle_system_at(r->w, i);
}

static ls_body_id body_at(const run *r, uint32_t i)
{
    return ls_world_body_at(r->w, i);
}

static double px(const run *r, ls_particle_system_id id, uint32_t k, int axis)
{
    ls_vec3 p = ls_particle_position(r->w, id, k);
    return d_of(axis == 0 ? p.x : axis == 1 ? p.y : p.z);
}

// Lowest particle of a system, m.
static double lowest(const run *r, ls_particle_system_id id)
{
    double low = 1e9;
    for (uint32_t k = 0; k < ls_particle_count(r->w, id); k++) {
        double y = px(r, id, k, 1);
        low = y < low ? y : low;
    }
    return low;
}

// Fastest particle over the last tick, m/s.
static double fastest(const run *r, ls_particle_system_id id)
{
    double v = 0;
    for (uint32_t k = 0; k < ls_particle_count(r->w, id); k++) {
        ls_particle_state st;
        cr_assert_eq(ls_particle_get_state(r->w, id, k, &st, NULL), LS_OK);
        double s = sqrt(d_of(st.velocity.x) * d_of(st.velocity.x) +
                        d_of(st.velocity.y) * d_of(st.velocity.y) +
                        d_of(st.velocity.z) * d_of(st.velocity.z));
        v = s > v ? s : v;
    }
    return v;
}

static void no_overflow(const run *r, uint32_t tick)
{
    ls_step_info info = ls_world_info(r->w);
    cr_assert_eq(info.overflow_system.index1, 0u, "tick %u: overflow in particle %u", tick,
                 info.overflow_particle);
}

// flag: the two pole-side corners never move (bit for bit), the flag streams
// out along the wind (its free edge more than 0.8 m from the pole; the flag is
// 1.55 m long) and flutters (the free corner moves more than 5 cm over the
// last 200 ticks, and it is still moving at the end).
Test(particles_scene, flag_stays_attached_and_flutters, .timeout = 120)
{
    run r;
    open_scene(&r, "flag");
    ls_particle_system_id flag = system_at(&r, 0);
    cr_assert_eq(ls_particle_count(r.w, flag), 1024u);
    ls_vec3 pin0 = ls_particle_position(r.w, flag, 0), pin1 = ls_particle_position(r.w, flag, 992);
    double lo[3] = {1e9, 1e9, 1e9}, hi[3] = {-1e9, -1e9, -1e9};
    for (uint32_t t = 0; t < r.scene.ticks; t++) {
        ls_world_step(r.w);
        no_overflow(&r, t);
        cr_assert(ls_vec3_equal(ls_particle_position(r.w, flag, 0), pin0), "tick %u", t);
        cr_assert(ls_vec3_equal(ls_particle_position(r.w, flag, 992), pin1), "tick %u", t);
        if (t + 200 >= r.scene.ticks) {
            for (int a = 0; a < 3; a++) {
                double v = px(&r, flag, 1023, a);
                lo[a] = v < lo[a] ? v : lo[a];
                hi[a] = v > hi[a] ? v : hi[a];
            }
        }
    }
    double edge = 0;
    for (uint32_t j = 0; j < 32; j++) {
        edge += px(&r, flag, j * 32 + 31, 0) / 32;
    }
    cr_assert_gt(edge, 0.8, "the free edge's mean x is %.3f m", edge);
    double swing = fmax(hi[0] - lo[0], fmax(hi[1] - lo[1], hi[2] - lo[2]));
    cr_assert_gt(swing, 0.05, "the free corner moved %.3f m over the last 200 ticks", swing);
    cr_assert_gt(fastest(&r, flag), 0.05, "still fluttering at the end");
    cr_assert_gt(lowest(&r, flag), 0.0);
    close_scene(&r);
}

// cloth_drape: at the end the cloth rests (no particle faster than 0.1 m/s)
// on both the static sphere (more than 30 particles within 3 cm of its upper
// half) and the dynamic box (more than 30 particles on its top face), no
// particle more than 1 cm inside the sphere, and the box stands where it was
// (within 5 cm, upright within 3 degrees) carrying part of the cloth.
Test(particles_scene, cloth_drape_rests_on_the_sphere_and_the_box, .timeout = 120)
{
    run r;
    open_scene(&r, "cloth_drape");
    ls_particle_system_id cloth = system_at(&r, 0);
    ls_body_id box = body_at(&r, 2);
    ls_vec3 box0 = ls_body_position(r.w, box);
    for (uint32_t t = 0; t < r.scene.ticks; t++) {
        ls_world_step(r.w);
        no_overflow(&r, t);
    }
    const double sc[3] = {-0.5, 0.45, 0}, sr = 0.45, cr_ = 0.015;
    ls_vec3 bp = ls_body_position(r.w, box);
    uint32_t on_sphere = 0, on_box = 0;
    double deepest = 0;
    for (uint32_t k = 0; k < ls_particle_count(r.w, cloth); k++) {
        double x = px(&r, cloth, k, 0), y = px(&r, cloth, k, 1), z = px(&r, cloth, k, 2);
        double gap = sqrt((x - sc[0]) * (x - sc[0]) + (y - sc[1]) * (y - sc[1]) +
                          (z - sc[2]) * (z - sc[2])) -
                     sr - cr_;
        deepest = -gap > deepest ? -gap : deepest;
        on_sphere += gap < 0.03 && y > sc[1];
        double top = d_of(bp.y) + 0.3;
        on_box += fabs(x - d_of(bp.x)) < 0.3 && fabs(z - d_of(bp.z)) < 0.3 && y > top - 0.01 &&
                  y < top + 0.05;
    }
    cr_assert_gt(on_sphere, 30u, "%u particles on the sphere", on_sphere);
    cr_assert_gt(on_box, 30u, "%u particles on the box", on_box);
    cr_assert_lt(deepest, 0.01, "a particle is %.4f m inside the sphere", deepest);
    cr_assert_lt(fastest(&r, cloth), 0.1, "the cloth still moves");
    double moved = hypot(d_of(bp.x) - d_of(box0.x), d_of(bp.z) - d_of(box0.z));
    cr_assert_lt(moved, 0.05, "the box slid %.3f m", moved);
    ls_quat q = ls_body_orientation(r.w, box);
    cr_assert_gt(fabs(d_of(q.w)), cos(3.0 * 3.14159265358979 / 360), "the box tipped");
    close_scene(&r);
}

// rope_swing: the heavy end swings down through the top of the tower: at
// least two of the six boxes end more than 0.3 m from where they stood
// (knocked off; measured: the top two, 3.6 and 4.1 m away), not all six, and
// the rope is still attached to its pin.
Test(particles_scene, rope_swing_hits_and_topples_part_of_the_tower, .timeout = 120)
{
    run r;
    open_scene(&r, "rope_swing");
    ls_particle_system_id rope = system_at(&r, 0);
    ls_vec3 pin = ls_particle_position(r.w, rope, 0);
    ls_vec3 start[6];
    for (uint32_t i = 0; i < 6; i++) {
        start[i] = ls_body_position(r.w, body_at(&r, i + 1));
    }
    for (uint32_t t = 0; t < r.scene.ticks; t++) {
        ls_world_step(r.w);
        no_overflow(&r, t);
    }
    uint32_t moved = 0;
    for (uint32_t i = 0; i < 6; i++) {
        ls_vec3 p = ls_body_position(r.w, body_at(&r, i + 1));
        double dx = d_of(p.x) - d_of(start[i].x), dy = d_of(p.y) - d_of(start[i].y),
               dz = d_of(p.z) - d_of(start[i].z);
        moved += sqrt(dx * dx + dy * dy + dz * dz) > 0.3;
    }
    cr_assert_geq(moved, 2u, "%u boxes moved more than 0.3 m", moved);
    cr_assert_lt(moved, 6u, "the whole tower went, not a part of it");
    cr_assert(ls_vec3_equal(ls_particle_position(r.w, rope, 0), pin));
    close_scene(&r);
}

// ragdoll_stairs: the ragdoll tumbles down the 8 stairs (0.3 m rise, 0.35 m
// run) and ends at the bottom: its centroid past the middle of the lowest
// stair (x > 2.45 m) and below 0.35 m, no particle higher than 0.65 m (the
// lowest stair is 0.3 m high), none ever more than 2 cm below the ground,
// and the body whole (no particle farther than 1 m from the centroid).
Test(particles_scene, ragdoll_reaches_the_bottom_of_the_stairs, .timeout = 120)
{
    run r;
    open_scene(&r, "ragdoll_stairs");
    ls_particle_system_id doll = system_at(&r, 0);
    double ground_min = 1e9;
    for (uint32_t t = 0; t < r.scene.ticks; t++) {
        ls_world_step(r.w);
        no_overflow(&r, t);
        double low = lowest(&r, doll);
        ground_min = low < ground_min ? low : ground_min;
    }
    uint32_t n = ls_particle_count(r.w, doll);
    double c[3] = {0, 0, 0};
    for (uint32_t k = 0; k < n; k++) {
        for (int a = 0; a < 3; a++) {
            c[a] += px(&r, doll, k, a) / n;
        }
    }
    for (uint32_t k = 0; k < n; k++) {
        double y = px(&r, doll, k, 1);
        cr_assert_lt(y, 0.65, "particle %u at y %.3f: not at the bottom", k, y);
        double dx = px(&r, doll, k, 0) - c[0], dy = y - c[1], dz = px(&r, doll, k, 2) - c[2];
        cr_assert_lt(sqrt(dx * dx + dy * dy + dz * dz), 1.0, "particle %u far from the body", k);
    }
    cr_assert_gt(c[0], 2.45, "the centroid stops at x %.3f, on the stairs", c[0]);
    cr_assert_lt(c[1], 0.35, "the centroid stops at y %.3f", c[1]);
    cr_assert_gt(ground_min, -0.02, "the lowest particle reached y %.3f m", ground_min);
    close_scene(&r);
}

// trampoline: the ball bounces at least twice (its vertical velocity turns
// from below -0.5 m/s to above +0.5 m/s at least twice while it is over the
// cloth), the cloth sags (its middle goes more than 0.15 m below its pinned
// edges at 1 m) and the edges never move.
Test(particles_scene, trampoline_bounces_the_ball_and_sags, .timeout = 120)
{
    run r;
    open_scene(&r, "trampoline");
    ls_particle_system_id cloth = system_at(&r, 0);
    ls_body_id ball = body_at(&r, 1);
    ls_vec3 edge = ls_particle_position(r.w, cloth, 0);
    uint32_t bounces = 0, mid = 10 * 20 + 10;
    bool falling = false;
    double sag = 0;
    for (uint32_t t = 0; t < r.scene.ticks; t++) {
        ls_world_step(r.w);
        no_overflow(&r, t);
        double vy = d_of(ls_body_linear_velocity(r.w, ball).y);
        double y = d_of(ls_body_position(r.w, ball).y);
        if (vy < -0.5) {
            falling = true;
        } else if (vy > 0.5 && falling && y < 1.6) {
            bounces++;
            falling = false;
        }
        double s = 1.0 - px(&r, cloth, mid, 1);
        sag = s > sag ? s : sag;
        cr_assert(ls_vec3_equal(ls_particle_position(r.w, cloth, 0), edge), "tick %u", t);
    }
    cr_assert_geq(bounces, 2u, "%u bounces", bounces);
    cr_assert_gt(sag, 0.15, "the middle sagged %.3f m", sag);
    close_scene(&r);
}

// cloth_tear: the falling box tears the cloth (more than 10 sticks torn,
// reported as events in the ticks they tore) and falls through it to the
// ground (its centre below 0.5 m at the end; the cloth hangs at 3 m).
Test(particles_scene, cloth_tear_lets_the_weight_through, .timeout = 120)
{
    run r;
    open_scene(&r, "cloth_tear");
    ls_particle_system_id cloth = system_at(&r, 0);
    ls_body_id box = body_at(&r, 1);
    uint32_t events = 0;
    for (uint32_t t = 0; t < r.scene.ticks; t++) {
        ls_world_step(r.w);
        no_overflow(&r, t);
        events += ls_world_particle_events(r.w).torn_count;
    }
    uint32_t torn = 0;
    for (uint32_t k = 0; k < ls_particle_constraint_count(r.w, cloth); k++) {
        torn += ls_particle_constraint_is_torn(r.w, cloth, k);
    }
    cr_assert_gt(torn, 10u, "%u sticks torn", torn);
    // Every tear is an event, up to LS_PARTICLE_EVENTS_MAX listed per step.
    cr_assert(events > 0 && events <= torn, "%u events for %u torn sticks", events, torn);
    double y = d_of(ls_body_position(r.w, box).y);
    cr_assert_lt(y, 0.5, "the box is at y %.3f m: it did not fall through", y);
    close_scene(&r);
}

// ball_into_cloth: the 1 kg ball (r 0.15 m) dropped into the corner-pinned
// 0.05 m cloth is caught: in every tick its centre stays above the cloth's
// lowest particle (tolerance 0: the cloth wraps under it), it never drops
// more than 0.8 m below the cloth's plane (measured: 0.56 m), and it is in
// the cloth at the end (within 0.5 m of the middle, above 0.2 m).
Test(particles_scene, ball_into_cloth_is_caught, .timeout = 120)
{
    run r;
    open_scene(&r, "ball_into_cloth");
    ls_particle_system_id cloth = system_at(&r, 0);
    ls_body_id ball = body_at(&r, 1);
    double low = 1e9;
    for (uint32_t t = 0; t < r.scene.ticks; t++) {
        ls_world_step(r.w);
        no_overflow(&r, t);
        double by = d_of(ls_body_position(r.w, ball).y);
        low = by < low ? by : low;
        cr_assert_gt(by, lowest(&r, cloth), "tick %u: the ball is below the cloth", t);
    }
    ls_vec3 p = ls_body_position(r.w, ball);
    printf("ball_into_cloth: lowest centre %.3f m, end %.3f %.3f %.3f\n", low, d_of(p.x), d_of(p.y),
           d_of(p.z));
    cr_assert_gt(low, 0.2, "the ball dropped to %.3f m", low);
    cr_assert_lt(hypot(d_of(p.x), d_of(p.z)), 0.5);
    cr_assert_gt(d_of(p.y), 0.2);
    close_scene(&r);
}

/// World point of plank body b's local point (x, 0, z).
static void plank_point(const run *r, uint32_t b, double x, double z, double out[3])
{
    ls_body_id id = body_at(r, b);
    ls_vec3 p = ls_body_position(r->w, id);
    ls_quat q = ls_body_orientation(r->w, id);
    double qx = d_of(q.x), qy = d_of(q.y), qz = d_of(q.z), qw = d_of(q.w);
    // v' = v + 2 w (u x v) + 2 u x (u x v), u = (qx, qy, qz), v = (x, 0, z)
    double v[3] = {x, 0, z}, u[3] = {qx, qy, qz};
    double t[3] = {2 * (u[1] * v[2] - u[2] * v[1]), 2 * (u[2] * v[0] - u[0] * v[2]),
                   2 * (u[0] * v[1] - u[1] * v[0])};
    double c[3] = {u[1] * t[2] - u[2] * t[1], u[2] * t[0] - u[0] * t[2], u[0] * t[1] - u[1] * t[0]};
    out[0] = d_of(p.x) + v[0] + qw * t[0] + c[0];
    out[1] = d_of(p.y) + v[1] + qw * t[1] + c[1];
    out[2] = d_of(p.z) + v[2] + qw * t[2] + c[2];
}

static double dist3(const double a[3], const double b[3])
{
    return sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) +
                (a[2] - b[2]) * (a[2] - b[2]));
}

/// Stretch of rope_bridge's two ropes: the path post - joint anchors - post
/// (each plank's anchors at x = -+0.25, z = -+0.5 in its frame; a gap at a
/// joint lengthens it) over its rest length 15 m, minus 1; the larger rope.
static double bridge_stretch(const run *r)
{
    double worst = 0;
    for (int side = 0; side < 2; side++) {
        double z = side ? 0.5 : -0.5;
        double prev[3] = {-7, 6, z}, len = 0;
        for (uint32_t b = 3; b < 33; b++) {
            double a[3], e[3];
            plank_point(r, b, -0.25, z, a);
            plank_point(r, b, 0.25, z, e);
            len += dist3(prev, a) + dist3(a, e);
            memcpy(prev, e, sizeof prev);
        }
        const double end[3] = {7, 6, z};
        len += dist3(prev, end);
        worst = fmax(worst, len / 15.0 - 1);
    }
    return worst;
}

// rope_bridge_loaded: rope_bridge (30 planks on two ropes of ball joints, 15 m
// of rope over a 14 m gap) with three 50 kg boxes instead of 25 kg ones.
// Stretch: the ropes' length through the joint anchors over 15 m, minus 1
// (0.09 % at creation: the scene's 3-decimal anchors). Goal (issue 29): at
// most 3 % at peak, 1 % at rest (the last second), the boxes never near the
// ground. Measured with joint rows at 120 Hz (the default since issue 26's
// chains): peak 0.80 %, at rest 0.33 %, the boxes' centres never below 3.7 m
// (at 60 Hz: 1.95 % and 1.18 %, the joints of a 30-link chain under 270 kg
// each opening by 0.6 mm).
Test(particles_scene, rope_bridge_loaded_holds, .timeout = 120)
{
    run r;
    open_scene(&r, "rope_bridge_loaded");
    double start = bridge_stretch(&r);
    double peak = 0, rest = 0, low = 1e9;
    for (uint32_t t = 0; t < r.scene.ticks; t++) {
        ls_world_step(r.w);
        double s = bridge_stretch(&r);
        peak = fmax(peak, s);
        if (t + 60 >= r.scene.ticks) {
            rest = fmax(rest, s);
        }
        for (uint32_t b = 33; b < 36; b++) {
            low = fmin(low, d_of(ls_body_position(r.w, body_at(&r, b)).y));
        }
    }
    printf("rope_bridge_loaded: stretch peak %.3f %%, at rest %.3f %%, lowest box %.3f m\n",
           100 * peak, 100 * rest, low);
    cr_assert_lt(start, 0.001);
    cr_assert_lt(peak, 0.03, "the ropes stretched %.3f %% at peak (goal 3 %%)", 100 * peak);
    cr_assert_lt(rest, 0.01, "the ropes stretch %.3f %% at rest (goal 1 %%)", 100 * rest);
    cr_assert_gt(low, 3.0, "a box came down to %.3f m", low);
    close_scene(&r);
}
