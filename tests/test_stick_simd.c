// SPDX-License-Identifier: MIT
// The AVX2 stick kernel gives the scalar reference's bits (SPEC.md §25.4,
// particles/stick_avx2.c).
//
// Why a suite of its own: test_simd.c steps every shipped scene on every
// vector path, but shipped scenes keep their cloths small and well behaved.
// Here the kernels meet random batches (every rest length from 0.001 m to
// 128 m, stretched and squashed from 0 to 30 times, coincident particles,
// pinned and one-sided masses, disabled sticks, positions beyond the range
// the lanes take, which must go back to the scalar code, and tails shorter
// than eight), then whole worlds: the shipped particle scenes and a 64 x 64
// cloth that is torn, pinned, cut and grown while it runs, tick by tick.
#include "../fixmath_phys/src/particles/stick.h"
#include "ls/particles.h"
#include "ls/rng.h"
#include "ls/scene.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// ---------------------------------------------------------------------------
// Kernels on random batches.

#define MAX_STICKS 77

typedef struct batch {
    uint32_t n;
    ls_pcon c[MAX_STICKS];
    ls_vec3 x[2 * MAX_STICKS + 5];
} batch;

static int32_t rnd_range(ls_rng *r, int32_t lo, int32_t hi)
{
    return lo + (int32_t)(ls_rng_next_u32(r) % (uint32_t)((int64_t)hi - lo + 1));
}

// A value spread over many octaves: lo + (a random number of 0..24 bits), at most hi.
static int64_t rnd_log(ls_rng *r, int64_t lo, int64_t hi)
{
    int bits = rnd_range(r, 0, 24);
    int64_t v = lo + (int64_t)(ls_rng_next_u32(r) & (((uint32_t)1 << bits) - 1));
    return v > hi ? hi : v;
}

// Rest lengths at and near the ends of 66..2^23 and everywhere between.
static ls_fx random_rest(ls_rng *r)
{
    switch (rnd_range(r, 0, 5)) {
    case 0:
        return LS_PARTICLE_LEN_MIN + rnd_range(r, 0, 3);
    case 1:
        return LS_PARTICLE_LEN_MAX - rnd_range(r, 0, 3);
    case 2:
        return 1 << rnd_range(r, 7, 23); // powers of two: q = 2^28 exactly
    default:
        return (ls_fx)rnd_log(r, LS_PARTICLE_LEN_MIN, LS_PARTICLE_LEN_MAX);
    }
}

// Effective inverse masses: immovable, tiny, equal, huge.
static ls_fx random_w(ls_rng *r)
{
    switch (rnd_range(r, 0, 4)) {
    case 0:
        return 0;
    case 1:
        return 66;
    case 2:
        return LS_FX_ONE;
    default:
        return rnd_range(r, 66, 1000 * 65536);
    }
}

// Particles 2k, 2k + 1 (shuffled) for stick k: a batch shares no particle.
// `wide` puts some particles beyond +-2^29 raw (the lanes hand those groups
// to the scalar code) or beyond +-2^30 apart (the clamped delta).
static void random_batch(ls_rng *r, batch *b, bool wide)
{
    memset(b, 0, sizeof *b);
    b->n = (uint32_t)rnd_range(r, 1, MAX_STICKS);
    uint32_t perm[2 * MAX_STICKS];
    for (uint32_t i = 0; i < 2 * b->n; i++) {
        perm[i] = i;
    }
    for (uint32_t i = 2 * b->n - 1; i > 0; i--) {
        uint32_t j = ls_rng_next_u32(r) % (i + 1), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    for (uint32_t k = 0; k < b->n; k++) {
        ls_pcon *c = &b->c[k];
        c->type = LS_PARTICLE_STICK;
        c->flags = LS_PCON_F_ENABLED;
        c->a = perm[2 * k];
        c->b = perm[2 * k + 1];
        c->rest = random_rest(r);
        c->stiffness = rnd_range(r, 0, 3) == 0 ? rnd_range(r, 1, LS_FX_ONE) : LS_FX_ONE;
        ls_pcon_pair_weights_(random_w(r), random_w(r), c->stiffness, &c->wa, &c->wb);
        if (rnd_range(r, 0, 15) == 0) {
            c->wa = c->wb = 0; // disabled or torn
        }
        c->inv_rest = ls_stick_inv_rest_(c->rest, &c->ishift);
        int32_t lim = wide && rnd_range(r, 0, 7) == 0 ? INT32_MAX / 2 : (1 << 27);
        ls_vec3 pa =
            ls_vec3_make(rnd_range(r, -lim, lim), rnd_range(r, -lim, lim), rnd_range(r, -lim, lim));
        // b at a + ratio r along a random direction: ratio 0 (coincident) .. 30.
        int64_t len;
        switch (rnd_range(r, 0, 6)) {
        case 0:
            len = 0;
            break;
        case 1:
            len = (int64_t)c->rest + rnd_range(r, -3, 3); // at rest, within a few LSB
            break;
        case 2:
            len = (int64_t)c->rest * rnd_range(r, 0, 30);
            break;
        default:
            len = (int64_t)c->rest * rnd_range(r, 0, 4096) / 1024; // 0..4 r
            break;
        }
        int32_t dir[3];
        do {
            for (int i = 0; i < 3; i++) {
                dir[i] = rnd_range(r, -65536, 65536);
            }
        } while (dir[0] == 0 && dir[1] == 0 && dir[2] == 0);
        double n =
            sqrt((double)dir[0] * dir[0] + (double)dir[1] * dir[1] + (double)dir[2] * dir[2]);
        int64_t q[3] = {pa.x, pa.y, pa.z};
        for (int i = 0; i < 3; i++) {
            int64_t v = q[i] + (int64_t)((double)len * dir[i] / n);
            q[i] = v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : v;
        }
        b->x[c->a] = pa;
        b->x[c->b] = ls_vec3_make((ls_fx)q[0], (ls_fx)q[1], (ls_fx)q[2]);
    }
}

static void skip_without_avx2(void)
{
    if (!ls_stick_avx2_supported_()) {
        cr_skip_test("no AVX2 on this machine");
    }
}

// Both kernels on copies of b, `passes` times; every coordinate compared.
static void compare(const batch *b, int passes, const char *what, int trial)
{
    static batch s, v; // static: too large for Criterion's default stack with 8 copies
    s = *b;
    v = *b;
    for (int p = 0; p < passes; p++) {
        ls_stick_project_scalar_(s.x, s.c, s.n);
        ls_stick_project_avx2_(v.x, v.c, v.n);
        for (uint32_t i = 0; i < 2 * b->n; i++) {
            cr_assert(ls_vec3_equal(s.x[i], v.x[i]),
                      "%s trial %d pass %d particle %u: scalar (%d %d %d) avx2 (%d %d %d)", what,
                      trial, p, i, s.x[i].x, s.x[i].y, s.x[i].z, v.x[i].x, v.x[i].y, v.x[i].z);
        }
    }
}

Test(stick_simd, random_batches_give_the_scalar_bits)
{
    skip_without_avx2();
    ls_rng r = ls_rng_make(20261128, 1);
    static batch b;
    for (int t = 0; t < 4000; t++) {
        random_batch(&r, &b, false);
        compare(&b, 8, "ordinary", t);
    }
}

Test(stick_simd, batches_beyond_the_lane_range_give_the_scalar_bits)
{
    skip_without_avx2();
    ls_rng r = ls_rng_make(20261128, 2);
    static batch b;
    for (int t = 0; t < 2000; t++) {
        random_batch(&r, &b, true);
        compare(&b, 4, "wide", t);
    }
}

// Every stick of a group at one extreme at once (one lane alone can hide a
// lane mix-up): shortest and longest rests, 30 times stretched, coincident,
// both pinned, one pinned.
Test(stick_simd, extreme_groups_give_the_scalar_bits)
{
    skip_without_avx2();
    static batch b;
    const ls_fx rests[] = {LS_PARTICLE_LEN_MIN, 4096, LS_PARTICLE_LEN_MAX};
    const int64_t ratios_1024[] = {0, 1, 512, 1024, 1025, 1448, 2048, 4096, 16384, 30720};
    const ls_fx ws[][2] = {
        {0, 0}, {0, LS_FX_ONE}, {LS_FX_ONE, 0}, {LS_FX_ONE, LS_FX_ONE}, {66, 1000 * 65536}};
    int trial = 0;
    for (size_t ri = 0; ri < sizeof rests / sizeof rests[0]; ri++) {
        for (size_t k = 0; k < sizeof ratios_1024 / sizeof ratios_1024[0]; k++) {
            for (size_t wi = 0; wi < sizeof ws / sizeof ws[0]; wi++, trial++) {
                memset(&b, 0, sizeof b);
                b.n = 16;
                for (uint32_t s = 0; s < b.n; s++) {
                    ls_pcon *c = &b.c[s];
                    c->a = 2 * s;
                    c->b = 2 * s + 1;
                    c->rest = rests[ri];
                    ls_pcon_pair_weights_(ws[wi][0], ws[wi][1], LS_FX_ONE, &c->wa, &c->wb);
                    c->inv_rest = ls_stick_inv_rest_(c->rest, &c->ishift);
                    int64_t len = (int64_t)c->rest * ratios_1024[k] / 1024;
                    int64_t lim = (int64_t)1 << 28; // within the lanes' range
                    len = len > lim ? lim : len;
                    // Along an axis, a diagonal and the negative axis by lane.
                    int64_t dx = (s % 3 == 0) ? len : (s % 3 == 1) ? len * 7 / 10 : -len;
                    int64_t dy = (s % 3 == 1) ? len * 7 / 10 : 0;
                    b.x[c->a] = ls_vec3_make((ls_fx)(-(1 << 27) + (int32_t)s), 12345, -777);
                    b.x[c->b] = ls_vec3_make((ls_fx)(b.x[c->a].x + dx), (ls_fx)(12345 + dy), -777);
                }
                compare(&b, 8, "extreme", trial);
            }
        }
    }
}

// The division-free projection does what SPEC.md §25.4 says of an isolated
// stick: from anywhere in [0.1, 8] r, six projections with equal weights
// reach r within 2 LSB, and the coincident pair is pushed apart along +x.
Test(stick_simd, an_isolated_stick_converges_and_coincident_particles_separate)
{
    const ls_fx r = 65536;
    for (int ratio = 102; ratio <= 8 * 1024; ratio += 37) {
        ls_pcon c;
        memset(&c, 0, sizeof c);
        c.a = 0;
        c.b = 1;
        c.rest = r;
        ls_pcon_pair_weights_(LS_FX_ONE, LS_FX_ONE, LS_FX_ONE, &c.wa, &c.wb);
        c.inv_rest = ls_stick_inv_rest_(c.rest, &c.ishift);
        ls_vec3 x[2] = {ls_vec3_zero(),
                        ls_vec3_make(r * 3 / 5 * ratio / 1024, 0, r * 4 / 5 * ratio / 1024)};
        for (int p = 0; p < 6; p++) {
            ls_stick_project_scalar_(x, &c, 1);
        }
        double dx = (double)x[1].x - x[0].x, dy = (double)x[1].y - x[0].y,
               dz = (double)x[1].z - x[0].z;
        double L = sqrt(dx * dx + dy * dy + dz * dz);
        cr_assert(fabs(L - r) <= 2.0, "L/r %.3f: %.2f after 6 projections", ratio / 1024.0, L);
    }
    ls_pcon c;
    memset(&c, 0, sizeof c);
    c.b = 1;
    c.rest = 4096;
    ls_pcon_pair_weights_(LS_FX_ONE, LS_FX_ONE, LS_FX_ONE, &c.wa, &c.wb);
    c.inv_rest = ls_stick_inv_rest_(c.rest, &c.ishift);
    ls_vec3 x[2] = {ls_vec3_make(5, 6, 7), ls_vec3_make(5, 6, 7)};
    ls_stick_project_scalar_(x, &c, 1);
    cr_assert(x[0].x < 5 && x[1].x > 5 && x[0].y == 6 && x[1].z == 7);
    cr_assert_eq(x[0].x + x[1].x, 10, "equal weights: the sum is kept");
}

// ---------------------------------------------------------------------------
// Worlds: scalar against AVX2, tick by tick.

static ls_world *instantiate(const ls_scene *s, ls_simd simd)
{
    ls_scene copy = *s;
    copy.world.simd = simd;
    ls_error err;
    ls_world *w = ls_scene_instantiate(&copy, &err);
    cr_assert_not_null(w, "%s", err.message);
    return w;
}

Test(stick_simd, shipped_particle_scenes_step_the_same_on_both_paths)
{
    skip_without_avx2();
    const char *scenes[] = {"cloth_drape",     "cloth_tear",        "flag",
                            "trampoline",      "rope_swing",        "ragdoll_stairs",
                            "ball_into_cloth", "rope_bridge_loaded"};
    for (size_t i = 0; i < sizeof scenes / sizeof scenes[0]; i++) {
        char path[96];
        snprintf(path, sizeof path, "tools/scenes/%s.scene", scenes[i]);
        ls_scene scene;
        ls_error err;
        cr_assert_eq(ls_scene_load(path, &scene, &err), LS_OK, "%s: %s", path, err.message);
        ls_world *ref = instantiate(&scene, LS_SIMD_SCALAR);
        ls_world *vec = instantiate(&scene, LS_SIMD_AVX2);
        for (uint32_t t = 1; t <= 240; t++) {
            ls_world_step(ref);
            ls_world_step(vec);
            uint64_t a = ls_world_checksum(ref), b = ls_world_checksum(vec);
            cr_assert_eq(a, b, "%s: avx2 differs from scalar at tick %u", scenes[i], t);
        }
        ls_world_destroy(ref);
        ls_world_destroy(vec);
        ls_scene_free(&scene);
    }
}

typedef struct cloth_world {
    ls_world *w;
    ls_particle_system_id cloth, extra;
} cloth_world;

// A 64 x 64 cloth (tearing at 1.25 x rest) over a sphere, and a small system
// that grows while it runs.
static cloth_world make_cloth_world(ls_simd simd)
{
    ls_world_def wd = ls_default_world_def();
    wd.simd = simd;
    wd.max_particles = 4096 + 64;
    wd.max_particle_constraints = 24000 + 256;
    ls_error err;
    cloth_world cw;
    cw.w = ls_world_create(&wd, &err);
    cr_assert_not_null(cw.w, "%s", err.message);
    ls_body_def bd = ls_default_body_def();
    bd.type = LS_BODY_STATIC;
    bd.position = ls_vec3_make(0, 98304, 32768);
    bd.shape = ls_default_shape_def();
    bd.shape.type = LS_SHAPE_SPHERE;
    bd.shape.radius = 65536;
    cr_assert_neq(ls_body_create(cw.w, &bd, &err).index1, 0, "%s", err.message);
    ls_cloth_def cd = ls_default_cloth_def();
    cd.nu = cd.nv = 64;
    cd.spacing = 4096; // 0.0625 m
    cd.origin = ls_vec3_make(-129024, 196608, -129024);
    cd.mass = LS_FX_INT(8);
    cd.radius = 655;
    cd.pins = LS_CLOTH_PIN_CORNER_00 | LS_CLOTH_PIN_CORNER_10;
    cd.tear_ratio = 81920; // 1.25
    cd.system.iterations = 8;
    cw.cloth = ls_cloth_create(cw.w, &cd, &err);
    cr_assert_neq(cw.cloth.index1, 0, "%s", err.message);
    ls_particle_system_def sd = ls_default_particle_system_def();
    sd.max_particles = 64;
    sd.max_constraints = 256;
    sd.iterations = 4;
    cw.extra = ls_particle_system_create(cw.w, &sd, &err);
    cr_assert_neq(cw.extra.index1, 0, "%s", err.message);
    return cw;
}

// What happens to both worlds at tick t (the same calls in the same order).
static void change(cloth_world *cw, uint32_t t)
{
    ls_error err;
    if (t % 10 == 0 && ls_particle_count(cw->w, cw->extra) < 64) { // grow a chain
        ls_particle_def pd = ls_default_particle_def();
        uint32_t n = ls_particle_count(cw->w, cw->extra);
        pd.position = ls_vec3_make((ls_fx)(n * 6000), 262144, 0);
        pd.mass = n == 0 ? 0 : LS_FX_ONE / 4;
        uint32_t i = ls_particle_add(cw->w, cw->extra, &pd, &err);
        cr_assert_neq(i, UINT32_MAX, "%s", err.message);
        if (i > 0) {
            cr_assert_neq(ls_particle_stick_add(cw->w, cw->extra, i - 1, i, &err), UINT32_MAX, "%s",
                          err.message);
        }
    }
    if (t == 60) { // pin a third corner, free one of the first two
        cr_assert_eq(ls_particle_set_mass(cw->w, cw->cloth, 64 * 63, 0), LS_OK);
        cr_assert_eq(ls_particle_set_mass(cw->w, cw->cloth, 63, LS_FX_ONE / 512), LS_OK);
    }
    if (t == 90) { // cut a line of structural sticks
        for (uint32_t k = 100; k < 400; k += 3) {
            cr_assert_eq(ls_particle_constraint_set_enabled(cw->w, cw->cloth, k, false), LS_OK);
        }
    }
    if (t == 120) { // yank a particle 3 m away: the sticks around it tear
        ls_vec3 p = ls_particle_position(cw->w, cw->cloth, 2080);
        ls_vec3 q = ls_vec3_add(p, ls_vec3_make(0, 0, LS_FX_INT(3)));
        cr_assert_eq(ls_particle_set_position(cw->w, cw->cloth, 2080, q, q), LS_OK);
    }
    if (t == 150) { // re-enable the cut (the torn stay torn)
        for (uint32_t k = 100; k < 400; k += 3) {
            cr_assert_eq(ls_particle_constraint_set_enabled(cw->w, cw->cloth, k, true), LS_OK);
        }
    }
}

Test(stick_simd, a_64x64_cloth_changed_while_running_steps_the_same_on_both_paths)
{
    skip_without_avx2();
    cloth_world ref = make_cloth_world(LS_SIMD_SCALAR), vec = make_cloth_world(LS_SIMD_AVX2);
    uint32_t torn = 0;
    for (uint32_t t = 1; t <= 220; t++) {
        change(&ref, t);
        change(&vec, t);
        ls_world_step(ref.w);
        ls_world_step(vec.w);
        uint64_t a = ls_world_checksum(ref.w), b = ls_world_checksum(vec.w);
        cr_assert_eq(a, b, "avx2 differs from scalar at tick %u", t);
        torn += ls_world_particle_events(ref.w).torn_count;
    }
    cr_assert_gt(torn, 0, "the yank tore sticks");
    ls_world_destroy(ref.w);
    ls_world_destroy(vec.w);
}
