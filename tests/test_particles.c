// SPDX-License-Identifier: MIT
// Verlet particle systems (SPEC.md §25; seed 001 §4): integration, sticks
// (exact and sqrt-free), ranges, pins, angles, tearing, builders, the step
// pipeline, snapshots and checksums. The seed's bit-exact items are checked
// by equality; the others with the tolerance stated in the test's name or
// comment. Floating point is used only to measure.
#define _POSIX_C_SOURCE 200809L
#include "../fixmath_phys/src/particles/distance.h"
#include "alloc_count.h"
#include "ls/particles.h"
#include "test_util.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FX(i) ((ls_fx)((i)*65536))

// Exact length of b - a in raw units (double of an exact int64 sum).
static double raw_len(ls_vec3 a, ls_vec3 b)
{
    double dx = (double)b.x - a.x, dy = (double)b.y - a.y, dz = (double)b.z - a.z;
    return sqrt(dx * dx + dy * dy + dz * dz);
}

static ls_world *new_world(ls_vec3 gravity)
{
    ls_world_def wd = ls_default_world_def();
    wd.max_bodies = 64;
    wd.max_contacts = 256;
    wd.gravity = gravity;
    wd.max_particles = 8192;
    wd.max_particle_constraints = 32768;
    ls_error err;
    ls_world *w = ls_world_create(&wd, &err);
    cr_assert_not_null(w, "%s", err.message);
    return w;
}

static ls_world *zero_g(void)
{
    return new_world(ls_vec3_zero());
}

static ls_world *earth(void)
{
    return new_world(ls_vec3_make(0, -642908, 0)); // -9.81
}

static ls_particle_system_id new_system(ls_world *w, uint32_t particles, uint32_t constraints,
                                        uint32_t iterations, ls_stick_mode mode)
{
    ls_particle_system_def d = ls_default_particle_system_def();
    d.max_particles = particles;
    d.max_constraints = constraints;
    d.iterations = iterations;
    d.stick_mode = mode;
    ls_error err;
    ls_particle_system_id id = ls_particle_system_create(w, &d, &err);
    cr_assert_neq(id.index1, 0, "%s (%s)", err.message, err.field);
    return id;
}

static uint32_t add_particle(ls_world *w, ls_particle_system_id s, ls_vec3 p, ls_fx mass)
{
    ls_particle_def d = ls_default_particle_def();
    d.position = p;
    d.mass = mass;
    ls_error err;
    uint32_t i = ls_particle_add(w, s, &d, &err);
    cr_assert_neq(i, UINT32_MAX, "%s (%s)", err.message, err.field);
    return i;
}

static uint32_t add_constraint(ls_world *w, ls_particle_system_id s,
                               const ls_particle_constraint_def *d)
{
    ls_error err;
    uint32_t k = ls_particle_constraint_add(w, s, d, &err);
    cr_assert_neq(k, UINT32_MAX, "%s (%s)", err.message, err.field);
    return k;
}

// Hold a particle in place: x* = x (zero velocity).
static void set_at_rest(ls_world *w, ls_particle_system_id s, uint32_t i, ls_vec3 p)
{
    cr_assert_eq(ls_particle_set_position(w, s, i, p, p), LS_OK);
}

static double dist(const ls_world *w, ls_particle_system_id s, uint32_t a, uint32_t b)
{
    return raw_len(ls_particle_position(w, s, a), ls_particle_position(w, s, b));
}

// The per-tick displacement of an acceleration (raw), as SPEC.md §25.3 defines it.
static int64_t accel_step(int64_t a, int64_t dt)
{
    int64_t p = a * dt * dt;
    int64_t q = ((p < 0 ? -p : p) + ((int64_t)1 << 31)) >> 32;
    return p < 0 ? -q : q;
}

static ls_cloth_def hanging_cloth(uint32_t n, double spacing, uint32_t iterations)
{
    ls_cloth_def c = ls_default_cloth_def();
    c.nu = c.nv = n;
    c.spacing = fx_of(spacing);
    c.origin = v3(0, 10, 0);
    c.mass = FX(1);
    c.pins = LS_CLOTH_PIN_CORNER_00 | LS_CLOTH_PIN_CORNER_10;
    c.system.iterations = iterations;
    return c;
}

static ls_particle_system_id make_cloth(ls_world *w, const ls_cloth_def *c)
{
    ls_error err;
    ls_particle_system_id id = ls_cloth_create(w, c, &err);
    cr_assert_neq(id.index1, 0, "%s (%s)", err.message, err.field);
    return id;
}

// Largest |L - r| / r over a cloth's structural sticks (rest = spacing).
static double max_strain(const ls_world *w, ls_particle_system_id s, uint32_t n, double spacing)
{
    double m = 0, r = spacing * 65536.0;
    for (uint32_t j = 0; j < n; j++) {
        for (uint32_t i = 0; i < n; i++) {
            uint32_t p = j * n + i;
            if (i + 1 < n) {
                m = fmax(m, fabs(dist(w, s, p, p + 1) - r) / r);
            }
            if (j + 1 < n) {
                m = fmax(m, fabs(dist(w, s, p, p + n) - r) / r);
            }
        }
    }
    return m;
}

// Largest |x - x*| component, raw.
static int32_t max_speed_raw(const ls_world *w, ls_particle_system_id s)
{
    int32_t m = 0;
    for (uint32_t i = 0; i < ls_particle_count(w, s); i++) {
        ls_vec3 a = ls_particle_position(w, s, i), b = ls_particle_previous(w, s, i);
        int32_t c[3] = {abs(a.x - b.x), abs(a.y - b.y), abs(a.z - b.z)};
        for (int k = 0; k < 3; k++) {
            m = c[k] > m ? c[k] : m;
        }
    }
    return m;
}

static ls_particle_system_id spinning_tetra(ls_world *w, uint32_t iterations, ls_stick_mode mode,
                                            ls_vec3 omega)
{
    ls_particle_body_def d = ls_default_particle_body_def();
    d.system.iterations = iterations;
    d.system.stick_mode = mode;
    d.position = v3(0, 2, 0);
    d.orientation = ls_quat_normalize(ls_quat_make(fx_of(0.2), fx_of(0.1), fx_of(-0.3), FX(1)));
    d.angular_velocity = omega;
    ls_error err;
    ls_particle_system_id id = ls_particle_body_create(w, &d, &err);
    cr_assert_neq(id.index1, 0, "%s (%s)", err.message, err.field);
    return id;
}

// ---- Seed §4 item 1: the Verlet golden vector ----

Test(particles, verlet_golden_vector_is_bit_exact_in_raw_units_and_in_q16)
{
    // Raw units: an acceleration whose per-tick displacement is exactly 1 raw.
    int64_t dt = ls_tick_dt(60);
    cr_assert_eq(accel_step(3602, dt), 1);
    ls_world *w = new_world(ls_vec3_make(0, 0, 3602));
    ls_particle_system_id s = new_system(w, 1, 0, 1, LS_STICK_APPROX);
    uint32_t i = add_particle(w, s, ls_vec3_zero(), FX(1));
    cr_assert_eq(ls_particle_set_position(w, s, i, ls_vec3_make(1, 0, 0), ls_vec3_zero()), LS_OK);
    const int32_t want[5][3] = {{2, 0, 1}, {3, 0, 3}, {4, 0, 6}, {5, 0, 10}, {6, 0, 15}};
    for (int n = 0; n < 5; n++) {
        ls_world_step(w);
        ls_vec3 p = ls_particle_position(w, s, i);
        cr_assert(p.x == want[n][0] && p.y == want[n][1] && p.z == want[n][2],
                  "raw step %d: (%d, %d, %d)", n + 1, p.x, p.y, p.z);
    }
    ls_world_destroy(w);
    // Q16.16: a = 1.0 per tick^2 from a force on a 1 kg particle.
    int64_t a = ((((int64_t)65536) << 32) + dt * dt / 2) / (dt * dt);
    cr_assert_eq(accel_step(a, dt), 65536);
    w = zero_g();
    s = new_system(w, 1, 0, 1, LS_STICK_APPROX);
    i = add_particle(w, s, ls_vec3_zero(), FX(1));
    cr_assert_eq(ls_particle_set_position(w, s, i, ls_vec3_make(FX(1), 0, 0), ls_vec3_zero()),
                 LS_OK);
    for (int n = 0; n < 5; n++) {
        cr_assert_eq(ls_particle_apply_force(w, s, i, ls_vec3_make(0, 0, (ls_fx)a)), LS_OK);
        ls_world_step(w);
        ls_vec3 p = ls_particle_position(w, s, i);
        cr_assert(p.x == FX(want[n][0]) && p.y == 0 && p.z == FX(want[n][2]),
                  "q16 step %d: (%d, %d, %d)", n + 1, p.x, p.y, p.z);
    }
    ls_world_destroy(w);
}

// ---- Item 2: free fall from rest drops exactly G n (n + 1) / 2 ----

Test(particles, free_fall_from_rest_is_closed_form_g_n_n_plus_1_over_2)
{
    ls_world *w = earth();
    int64_t g = accel_step(-642908, ls_tick_dt(60));
    cr_assert_eq(g, -178, "G = round(-9.81 raw * dt_raw^2 / 2^32) = %lld", (long long)g);
    ls_particle_system_id s = new_system(w, 1, 0, 1, LS_STICK_APPROX);
    uint32_t i = add_particle(w, s, v3(0, 1000, 0), FX(1));
    ls_fx y0 = ls_particle_position(w, s, i).y;
    for (int64_t n = 1; n <= 240; n++) {
        ls_world_step(w);
        cr_assert_eq((int64_t)ls_particle_position(w, s, i).y - y0, g * n * (n + 1) / 2,
                     "tick %lld", (long long)n);
    }
    // 60 ticks: 178 * 1830 = 325 740 raw = 4.970 m (the seed's G = 179 gives 4.998 m).
    ls_world_destroy(w);
}

// ---- Item 3: projection onto a floor (needs the collision code, collide.c) ----

Test(particles, a_particle_dropped_on_a_plane_stops_dead_zero_restitution)
{
    // Uses the particle collisions (fixmath_phys/src/particles/collide.c): the
    // particle is projected out of the static plane y <= 0 in each iteration.
    ls_world *w = earth();
    ls_body_def bd = ls_default_body_def();
    bd.type = LS_BODY_STATIC;
    bd.shape.type = LS_SHAPE_PLANE;
    bd.shape.normal = ls_vec3_make(0, FX(1), 0);
    bd.shape.plane_d = 0;
    ls_error err;
    cr_assert_neq(ls_body_create(w, &bd, &err).index1, 0, "%s", err.message);
    ls_particle_system_id s = new_system(w, 1, 0, 4, LS_STICK_APPROX);
    ls_particle_def pd = ls_default_particle_def();
    pd.position = v3(0.3, 1, -0.2);
    pd.radius = 0;
    uint32_t i = ls_particle_add(w, s, &pd, &err);
    int contact = -1;
    for (int t = 1; t <= 240; t++) {
        ls_world_step(w);
        ls_vec3 x = ls_particle_position(w, s, i), xo = ls_particle_previous(w, s, i);
        cr_assert_geq(x.y, 0, "tick %d: below the floor (%d raw)", t, x.y);
        if (contact < 0 && x.y == 0) {
            contact = t;
        } else if (contact >= 0) {
            cr_assert_eq(x.y, 0, "tick %d: rose above the floor after contact", t);
            cr_assert(ls_vec3_equal(x, xo), "tick %d: x != x* after the contact tick", t);
        }
    }
    cr_assert_gt(contact, 0, "never reached the floor");
    ls_world_destroy(w);
}

// ---- Item 4: one exact projection fixes the length; the printed sign fails ----

// The article's printed update: the engine's moves applied with the opposite signs.
static void printed_sign_projection(ls_vec3 *xa, ls_vec3 *xb, ls_fx rest)
{
    ls_vec3 a = *xa, b = *xb;
    ls_pcon_project_(&a, &b, rest, LS_FX_HALF, LS_FX_HALF, LS_STICK_EXACT, 0);
    *xa = ls_vec3_sub(*xa, ls_vec3_sub(a, *xa));
    *xb = ls_vec3_sub(*xb, ls_vec3_sub(b, *xb));
}

Test(particles, one_exact_projection_fixes_a_stick_to_3_lsb_and_the_printed_sign_fails)
{
    // The seed's case: rest 1, length 2. Corrected sign: 1; printed: 3.
    ls_vec3 a = ls_vec3_zero(), b = ls_vec3_make(FX(2), 0, 0);
    printed_sign_projection(&a, &b, FX(1));
    cr_assert_eq(b.x - a.x, FX(3), "printed sign: 2 -> %f", d_of(b.x - a.x));
    ls_rng rng = ls_rng_make(14, 1);
    for (int trial = 0; trial < 200; trial++) {
        ls_world *w = zero_g();
        ls_particle_system_id s = new_system(w, 2, 1, 1, LS_STICK_EXACT);
        // Random rest pair, then a random new pose at 0.5..2 times the rest
        // length (much shorter, the rounding of |d| is magnified by r / L).
        ls_vec3 p[4];
        for (int k = 0; k < 3; k++) {
            p[k] =
                ls_vec3_make(ls_rng_range(&rng, -FX(5), FX(5)), ls_rng_range(&rng, -FX(5), FX(5)),
                             ls_rng_range(&rng, -FX(5), FX(5)));
        }
        ls_vec3 dir = ls_vec3_normalize(ls_vec3_make(ls_rng_range(&rng, -FX(1), FX(1)),
                                                     ls_rng_range(&rng, -FX(1), FX(1)),
                                                     ls_rng_range(&rng, -FX(1), FX(1))),
                                        ls_vec3_make(FX(1), 0, 0));
        double ratio = 0.5 + 1.5 * ls_rng_unit(&rng) / 65536.0;
        p[3] = ls_vec3_add(p[2], ls_vec3_scale(dir, fx_of(ratio * raw_len(p[0], p[1]) / 65536.0)));
        uint32_t i0 = add_particle(w, s, p[0], FX(1)), i1 = add_particle(w, s, p[1], FX(1));
        add_constraint(w, s,
                       &(ls_particle_constraint_def){.cookie = LS_DEF_COOKIE,
                                                     .type = LS_PARTICLE_STICK,
                                                     .a = i0,
                                                     .b = i1,
                                                     .stiffness = LS_FX_ONE});
        double rest = (double)lround(raw_len(p[0], p[1])); // the stored rest length
        set_at_rest(w, s, i0, p[2]);
        set_at_rest(w, s, i1, p[3]);
        ls_world_step(w);
        double got = dist(w, s, i0, i1);
        cr_assert_leq(fabs(got - rest), 3.0, "trial %d: |L - r| = %.2f LSB", trial,
                      fabs(got - rest));
        // The printed sign from the same state moves the length from L to
        // 2L - r (signed along the old direction): the error doubles.
        ls_vec3 xa = p[2], xb = p[3];
        printed_sign_projection(&xa, &xb, (ls_fx)lround(rest));
        double before = raw_len(p[2], p[3]);
        double u[3] = {(double)p[3].x - p[2].x, (double)p[3].y - p[2].y, (double)p[3].z - p[2].z};
        double along = (((double)xb.x - xa.x) * u[0] + ((double)xb.y - xa.y) * u[1] +
                        ((double)xb.z - xa.z) * u[2]) /
                       before;
        cr_assert_leq(fabs(along - (2 * before - rest)), 4.0,
                      "trial %d: printed sign %.1f -> %.1f (rest %.1f)", trial, before, along,
                      rest);
        cr_assert(fabs(before - rest) <= 1.5 || fabs(raw_len(xa, xb) - rest) > 3.0,
                  "trial %d: the printed sign passed", trial);
        ls_world_destroy(w);
    }
}

// A 10 x 10 cloth with the printed sign: Verlet and sticks written out here
// (the engine has no such mode). Returns the worst strain within `steps`.
static double printed_sign_cloth_strain(int steps)
{
    enum { N = 10 };
    ls_vec3 x[N * N], xo[N * N];
    ls_fx r = fx_of(0.1), g = -178;
    for (int j = 0; j < N; j++) {
        for (int i = 0; i < N; i++) {
            x[j * N + i] = xo[j * N + i] = ls_vec3_make(i * r, FX(10), j * r);
        }
    }
    double worst = 0;
    for (int t = 0; t < steps && worst < 1000; t++) {
        for (int p = 2; p < N * N; p++) { // 0 and 1... pinned: corners 0 and N-1
            if (p == N - 1) {
                continue;
            }
            ls_vec3 c = x[p];
            x[p] = ls_vec3_add(ls_vec3_add(c, ls_vec3_sub(c, xo[p])), ls_vec3_make(0, g, 0));
            xo[p] = c;
        }
        ls_vec3 c1 = x[1];
        x[1] = ls_vec3_add(ls_vec3_add(c1, ls_vec3_sub(c1, xo[1])), ls_vec3_make(0, g, 0));
        xo[1] = c1;
        for (int j = 0; j < N; j++) {
            for (int i = 0; i < N; i++) {
                int p = j * N + i;
                if (i + 1 < N) {
                    printed_sign_projection(&x[p], &x[p + 1], r);
                }
                if (j + 1 < N) {
                    printed_sign_projection(&x[p], &x[p + N], r);
                }
            }
        }
        x[0] = xo[0];
        x[N - 1] = xo[N - 1];
        for (int p = 0; p + 1 < N * N; p++) {
            if ((p + 1) % N) {
                worst = fmax(worst, fabs(raw_len(x[p], x[p + 1]) - r) / r);
            }
        }
    }
    return worst;
}

Test(particles, the_printed_sign_blows_a_cloth_up_within_50_steps_ours_stays_below_1_3)
{
    double printed = printed_sign_cloth_strain(50);
    cr_assert_gt(printed, 10.0, "printed-sign cloth strain after 50 steps: %.2f", printed);
    ls_world *w = earth();
    ls_cloth_def c = hanging_cloth(10, 0.1, 1);
    ls_particle_system_id s = make_cloth(w, &c);
    double worst = 0;
    for (int t = 0; t < 50; t++) {
        ls_world_step(w);
        worst = fmax(worst, max_strain(w, s, 10, 0.1));
    }
    cr_assert_lt(worst, 1.3, "engine cloth strain %.3f", worst);
    ls_world_destroy(w);
}

// ---- Item 5: the sqrt-free stick never overshoots and converges quadratically ----
// Sticks in approx mode are division-free (SPEC.md §25.4): k = (s - 1) y with
// y two Newton steps toward 1/(1 + s), s = (L/r)^2 capped at 15, which is the
// seed's (s - 1)/(s + 1) within 1.2 %. An isolated stick goes to L (1 - k(s)),
// never beyond r from anywhere up to 8 r (like the seed's 2r^2L/(r^2 + L^2)),
// and to L / 8 beyond (s capped).

// k(s) in doubles from the bands and Newton steps of SPEC.md §25.4.
static double newton_k(double s)
{
    s = s < 15 ? s : 15;
    double x = 1 + s;
    double y = x < 4.0 / 3    ? 0.75
               : x < 8.0 / 3  ? 0.5
               : x < 16.0 / 3 ? 0.25
               : x < 32.0 / 3 ? 0.125
                              : 0.0625;
    for (int i = 0; i < 2; i++) {
        y *= 2 - x * y;
    }
    return (s - 1) * y;
}

Test(particles, sqrt_free_stick_matches_2r2L_over_r2_plus_L2_within_2_lsb_never_overshoots)
{
    const double r = 65536.0; // 1 m
    for (double ratio = 0.1; ratio <= 10.0001; ratio += 0.05) {
        ls_world *w = zero_g();
        ls_particle_system_id s = new_system(w, 2, 1, 1, LS_STICK_APPROX);
        uint32_t a = add_particle(w, s, v3(0, 0, 0), FX(1));
        uint32_t b = add_particle(w, s, v3(0.6, 0, 0.8), FX(1));
        add_constraint(w, s,
                       &(ls_particle_constraint_def){
                           .cookie = LS_DEF_COOKIE, .a = a, .b = b, .stiffness = FX(1)});
        ls_vec3 pb = v3(0.6 * ratio, 0, 0.8 * ratio);
        set_at_rest(w, s, b, pb);
        double L = raw_len(ls_vec3_zero(), pb);
        ls_world_step(w);
        double got = dist(w, s, a, b), want = L * (1 - newton_k(L * L / (r * r)));
        double seed = 2 * r * r * L / (r * r + L * L);
        cr_assert_leq(fabs(got - want), 2.0, "L/r %.2f: %.2f vs %.2f", ratio, got, want);
        if (L * L <= 15 * r * r) {
            cr_assert_leq(fabs(got - seed), 0.013 * L + 2.0, "L/r %.2f: %.2f vs the seed's %.2f",
                          ratio, got, seed);
        }
        if (L <= 8 * r) {
            cr_assert_leq(got, r + 1.0, "L/r %.2f overshoots: %.2f", ratio, got);
        } else { // s capped at 15: 7/8 of L removed
            cr_assert_leq(fabs(got - L / 8), 2.0, "L/r %.2f: %.2f", ratio, got);
        }
        // Six iterations reach r within 2 LSB from anywhere in [0.1, 8] r.
        cr_assert_eq(ls_particle_system_set_iterations(w, s, 6), LS_OK);
        set_at_rest(w, s, a, ls_vec3_zero());
        set_at_rest(w, s, b, pb);
        ls_world_step(w);
        got = dist(w, s, a, b);
        if (ratio <= 8.0001) {
            cr_assert_leq(fabs(got - r), 2.0, "L/r %.2f after 6 iterations: %.2f", ratio, got);
        }
        ls_world_destroy(w);
    }
}

// ---- Item 6: equal masses conserve the sum of positions bit for bit ----

Test(particles, equal_mass_sticks_conserve_sum_x_bit_exactly_over_20000_steps, .timeout = 120)
{
    const uint32_t iters[] = {1, 4, 10};
    for (int m = 0; m < 2; m++) {
        for (int k = 0; k < 3; k++) {
            ls_world *w = zero_g();
            ls_particle_system_id s =
                spinning_tetra(w, iters[k], m ? LS_STICK_EXACT : LS_STICK_APPROX, v3(1, 3, -2));
            int64_t sum0[3] = {0, 0, 0}, vel[3] = {0, 0, 0};
            for (uint32_t i = 0; i < 4; i++) {
                ls_vec3 x = ls_particle_position(w, s, i), xo = ls_particle_previous(w, s, i);
                sum0[0] += x.x, sum0[1] += x.y, sum0[2] += x.z;
                vel[0] += x.x - xo.x, vel[1] += x.y - xo.y, vel[2] += x.z - xo.z;
            }
            for (int64_t t = 1; t <= 20000; t++) {
                ls_world_step(w);
                int64_t sum[3] = {0, 0, 0};
                for (uint32_t i = 0; i < 4; i++) {
                    ls_vec3 x = ls_particle_position(w, s, i);
                    sum[0] += x.x, sum[1] += x.y, sum[2] += x.z;
                }
                for (int c = 0; c < 3; c++) {
                    cr_assert_eq(sum[c], sum0[c] + t * vel[c], "mode %d iters %u tick %lld", m,
                                 iters[k], (long long)t);
                }
            }
            ls_world_destroy(w);
        }
    }
}

// ---- Item 7: immovable particles never move ----

Test(particles, pinned_particles_keep_bit_identical_positions_every_step)
{
    ls_world *w = earth();
    ls_cloth_def c = hanging_cloth(12, 0.1, 4);
    ls_particle_system_id s = make_cloth(w, &c);
    ls_vec3 p0 = ls_particle_position(w, s, 0), p1 = ls_particle_position(w, s, 11);
    // A stick between two immovable particles is skipped (no division by 0).
    ls_particle_system_id t = new_system(w, 2, 1, 4, LS_STICK_EXACT);
    add_particle(w, t, v3(0, 0, 0), 0);
    add_particle(w, t, v3(0, 0, 1), 0);
    add_constraint(
        w, t,
        &(ls_particle_constraint_def){.cookie = LS_DEF_COOKIE, .a = 0, .b = 1, .stiffness = FX(1)});
    set_at_rest(w, t, 1, v3(0, 0, 3)); // stretched: still nothing moves
    // A ragdoll hung by its immovable head (mass 0).
    ls_particle_ragdoll_def rd = ls_default_particle_ragdoll_def();
    rd.position = v3(5, 3, 0);
    ls_error err;
    ls_particle_system_id r = ls_particle_ragdoll_create(w, &rd, &err);
    cr_assert_neq(r.index1, 0, "%s", err.message);
    cr_assert_eq(ls_particle_set_mass(w, r, 0, 0), LS_OK);
    ls_vec3 head = ls_particle_position(w, r, 0);
    // A chain whose top particle is dragged by a pin (IK): exactly at the target each step.
    ls_particle_system_id drag = new_system(w, 3, 3, 8, LS_STICK_APPROX);
    uint32_t h = add_particle(w, drag, v3(5, 4, 0), FX(1));
    uint32_t body = add_particle(w, drag, v3(5, 3.5, 0), FX(5));
    uint32_t feet = add_particle(w, drag, v3(5, 2.5, 0), FX(5));
    add_constraint(w, drag,
                   &(ls_particle_constraint_def){
                       .cookie = LS_DEF_COOKIE, .a = h, .b = body, .stiffness = FX(1)});
    add_constraint(w, drag,
                   &(ls_particle_constraint_def){
                       .cookie = LS_DEF_COOKIE, .a = body, .b = feet, .stiffness = FX(1)});
    uint32_t pin = add_constraint(
        w, drag,
        &(ls_particle_constraint_def){
            .cookie = LS_DEF_COOKIE, .type = LS_PARTICLE_PIN, .a = h, .target = v3(5, 4, 0)});
    for (int step = 1; step <= 1200; step++) {
        ls_vec3 target = v3(5 + 0.01 * (step % 200), 4 + 0.005 * (step % 50), 0);
        cr_assert_eq(ls_particle_pin_set_target(w, drag, pin, target), LS_OK);
        ls_world_step(w);
        cr_assert(ls_vec3_equal(ls_particle_position(w, s, 0), p0), "step %d", step);
        cr_assert(ls_vec3_equal(ls_particle_position(w, s, 11), p1), "step %d", step);
        cr_assert(ls_vec3_equal(ls_particle_position(w, t, 0), v3(0, 0, 0)));
        cr_assert(ls_vec3_equal(ls_particle_position(w, t, 1), v3(0, 0, 3)));
        cr_assert(ls_vec3_equal(ls_particle_position(w, drag, h), target), "step %d", step);
        cr_assert(ls_vec3_equal(ls_particle_position(w, r, 0), head), "step %d", step);
    }
    // Released, the dragged particle keeps the target's last motion.
    cr_assert_eq(ls_particle_constraint_set_enabled(w, drag, pin, false), LS_OK);
    ls_particle_state st;
    cr_assert_eq(ls_particle_get_state(w, drag, h, &st, NULL), LS_OK);
    cr_assert_gt(st.inv_mass, 0);
    cr_assert_eq(ls_world_info(w).overflow_count, 0u);
    ls_world_destroy(w);
}

// ---- Item 8: mass-weighted split ----

Test(particles, masses_3_to_1_split_the_correction_1_to_3_within_1_lsb_and_fix_the_length)
{
    ls_world *w = zero_g();
    ls_particle_system_id s = new_system(w, 2, 1, 1, LS_STICK_EXACT);
    uint32_t a = add_particle(w, s, v3(0, 0, 0), FX(3));
    uint32_t b = add_particle(w, s, v3(1, 0, 0), FX(1));
    add_constraint(
        w, s,
        &(ls_particle_constraint_def){.cookie = LS_DEF_COOKIE, .a = a, .b = b, .stiffness = FX(1)});
    ls_vec3 pa = v3(0.1, 0.2, 0.3), pb = v3(1.7, -0.4, 0.9);
    set_at_rest(w, s, a, pa);
    set_at_rest(w, s, b, pb);
    ls_world_step(w);
    ls_vec3 da = ls_vec3_sub(ls_particle_position(w, s, a), pa);
    ls_vec3 db = ls_vec3_sub(ls_particle_position(w, s, b), pb);
    cr_assert_leq(abs(3 * da.x + db.x), 3, "x: %d vs %d", da.x, db.x); // db = -3 da (+-1 LSB each)
    cr_assert_leq(abs(3 * da.y + db.y), 3, "y: %d vs %d", da.y, db.y);
    cr_assert_leq(abs(3 * da.z + db.z), 3, "z: %d vs %d", da.z, db.z);
    cr_assert_leq(fabs(dist(w, s, a, b) - 65536.0), 3.0, "length %.2f", dist(w, s, a, b));
    ls_world_destroy(w);
}

// ---- Item 10: residuals fall with iterations ----

Test(particles, more_iterations_give_monotonically_smaller_residuals, .timeout = 120)
{
    const uint32_t its[] = {1, 2, 4, 8, 16};
    double after[5];
    for (int k = 0; k < 5; k++) {
        ls_world *w = earth();
        ls_cloth_def c = hanging_cloth(10, 0.1, its[k]);
        ls_particle_system_id s = make_cloth(w, &c);
        for (int t = 0; t < 1200; t++) {
            ls_world_step(w);
        }
        after[k] = max_strain(w, s, 10, 0.1);
        cr_assert(k == 0 || after[k] <= after[k - 1], "%u iterations: %.4f > %.4f", its[k],
                  after[k], after[k - 1]);
        ls_world_destroy(w);
    }
    // One disturbed state relaxed once with 1..16 iterations: the worst
    // residual never grows with the iteration count.
    ls_world *w = earth();
    ls_cloth_def c = hanging_cloth(10, 0.1, 1);
    ls_particle_system_id s = make_cloth(w, &c);
    for (int t = 0; t < 30; t++) {
        ls_world_step(w);
    }
    size_t n = ls_world_snapshot_size(w);
    uint8_t *snap = malloc(n);
    cr_assert_eq(ls_world_snapshot_save(w, snap, n), n);
    double prev = 1e9;
    for (uint32_t it = 1; it <= 16; it++) {
        cr_assert_eq(ls_world_snapshot_restore(w, snap, n, NULL), LS_OK);
        cr_assert_eq(ls_particle_system_set_iterations(w, s, it), LS_OK);
        ls_world_step(w);
        double m = max_strain(w, s, 10, 0.1);
        cr_assert_leq(m, prev + 1e-9, "%u iterations: %.5f > %.5f", it, m, prev);
        prev = m;
    }
    free(snap);
    ls_world_destroy(w);
}

// ---- Item 11: a hanging cloth does not explode ----

Test(particles, a_hanging_cloth_at_1_iteration_stays_bounded_for_1200_steps_and_damping_calms_it,
     .timeout = 120)
{
    int32_t speed[2];
    for (int damped = 0; damped < 2; damped++) {
        ls_world *w = earth();
        ls_cloth_def c = hanging_cloth(10, 0.1, 1);
        c.system.damping = damped ? 655 : 0; // 0.01 per tick: the article's "2 -> 1.99"
        ls_particle_system_id s = make_cloth(w, &c);
        ls_vec3 pin0 = ls_particle_position(w, s, 0), pin1 = ls_particle_position(w, s, 9);
        double worst = 0;
        for (int t = 1; t <= (damped ? 6000 : 1200); t++) {
            ls_world_step(w);
            if (t <= 1200) {
                worst = fmax(worst, max_strain(w, s, 10, 0.1));
            }
            if (t == 1200) {
                speed[damped] = max_speed_raw(w, s);
            }
        }
        cr_assert_lt(worst, 1.3, "max strain %.3f (seed: 1.29)", worst);
        cr_assert(ls_vec3_equal(ls_particle_position(w, s, 0), pin0));
        cr_assert(ls_vec3_equal(ls_particle_position(w, s, 9), pin1));
        cr_assert_eq(ls_world_info(w).overflow_count, 0u);
        if (damped) {
            cr_assert_lt(max_speed_raw(w, s), speed[1], "damped speed keeps falling");
        }
        ls_world_destroy(w);
    }
    cr_assert_lt(speed[1], speed[0], "damped %d raw vs undamped %d raw at 20 s", speed[1],
                 speed[0]);
}

// ---- Item 12: stopping early does not accumulate error ----

Test(particles, one_iteration_per_frame_removes_a_50_percent_stretch_over_frames)
{
    ls_world *w = zero_g();
    ls_cloth_def c = hanging_cloth(10, 0.1, 1);
    c.pins = 0;
    ls_particle_system_id s = make_cloth(w, &c);
    ls_vec3 p = ls_particle_position(w, s, 55);
    p.x += fx_of(0.05); // link 55-56 shortened by 50 %, 54-55 stretched by 50 %
    set_at_rest(w, s, 55, p);
    double first = max_strain(w, s, 10, 0.1), window = 1e9;
    cr_assert_gt(first, 0.49);
    // Better the next frames: Verlet carries the corrections as velocity, so
    // the residual rings a little from frame to frame, but its maximum over
    // each window of 10 frames never grows (measured: 0.019, 0.0012, 0.0005,
    // 0.0003, 0.0003, 0.0003 for frames 1-10, ..., 51-60).
    for (int k = 0; k < 6; k++) {
        double m = 0;
        for (int t = 0; t < 10; t++) {
            ls_world_step(w);
            m = fmax(m, max_strain(w, s, 10, 0.1));
        }
        // 1 LSB of a 0.1 m link is a strain of 1/6554 = 0.00015.
        cr_assert_leq(m, window + 0.00016, "frames %d-%d: %.5f after %.5f", 10 * k + 1, 10 * k + 10,
                      m, window);
        window = m;
        if (k == 0) {
            cr_assert_lt(m, first / 20, "frames 1-10: %.4f", m);
        }
    }
    cr_assert_lt(window, 0.001, "frames 51-60: %.5f", window);
    ls_world_destroy(w);
}

// ---- Item 13 (rigidity): the tetrahedron body stays rigid ----

Test(particles, a_spinning_tetrahedron_at_4_iterations_keeps_its_edges_within_0_05_percent)
{
    for (int arrangement = 0; arrangement < 2; arrangement++) {
        ls_world *w = zero_g();
        ls_particle_body_def d = ls_default_particle_body_def();
        d.kind = arrangement ? LS_PARTICLE_BODY_BOX : LS_PARTICLE_BODY_TETRA;
        d.system.iterations = 4;
        d.angular_velocity = v3(0.5, 2, -1);
        d.linear_velocity = v3(1, 2, 3);
        ls_error err;
        ls_particle_system_id s = ls_particle_body_create(w, &d, &err);
        cr_assert_neq(s.index1, 0, "%s", err.message);
        uint32_t n = ls_particle_count(w, s);
        double rest[8][8];
        for (uint32_t a = 0; a < n; a++) {
            for (uint32_t b = a + 1; b < n; b++) {
                rest[a][b] = dist(w, s, a, b);
            }
        }
        double worst = 0;
        for (int t = 1; t <= 600; t++) {
            ls_world_step(w);
            for (uint32_t a = 0; a < n && t > 10; a++) {
                for (uint32_t b = a + 1; b < n; b++) {
                    worst = fmax(worst, fabs(dist(w, s, a, b) - rest[a][b]) / rest[a][b]);
                }
            }
        }
        cr_assert_leq(worst, 0.0005, "arrangement %d: worst edge error %.5f %%", arrangement,
                      worst * 100);
        ls_world_destroy(w);
    }
}

// ---- Item 19: pin joint and hinge from shared particles ----

static double line_distance(ls_vec3 p, ls_vec3 a, ls_vec3 b)
{
    double ab[3] = {(double)b.x - a.x, (double)b.y - a.y, (double)b.z - a.z};
    double ap[3] = {(double)p.x - a.x, (double)p.y - a.y, (double)p.z - a.z};
    double c[3] = {ab[1] * ap[2] - ab[2] * ap[1], ab[2] * ap[0] - ab[0] * ap[2],
                   ab[0] * ap[1] - ab[1] * ap[0]};
    return sqrt(c[0] * c[0] + c[1] * c[1] + c[2] * c[2]) /
           sqrt(ab[0] * ab[0] + ab[1] * ab[1] + ab[2] * ab[2]);
}

Test(particles, tetrahedra_sharing_one_particle_stay_rigid_around_it_within_0_1_percent)
{
    ls_world *w = zero_g();
    ls_particle_system_id s = new_system(w, 7, 12, 8, LS_STICK_EXACT);
    const double pts[7][3] = {{0, 0.5, 0.3},    {0.4, -0.3, 0.2}, {0.3, 0.4, -0.4},  {0, 0, 0},
                              {-0.5, 0.1, 0.5}, {0.1, -0.6, 0.6}, {-0.4, -0.2, -0.5}};
    for (int i = 0; i < 7; i++) {
        add_particle(w, s, v3(pts[i][0], pts[i][1], pts[i][2]), FX(1));
    }
    // Tetrahedra (0, 1, 2, 3) and (3, 4, 5, 6): particle 3 is the ball joint,
    // the one particle both bodies move (a shared particle is shared exactly).
    const uint32_t tets[2][4] = {{0, 1, 2, 3}, {3, 4, 5, 6}};
    double rest[7][7];
    for (int k = 0; k < 2; k++) {
        for (int a = 0; a < 4; a++) {
            for (int b = a + 1; b < 4; b++) {
                uint32_t i = tets[k][a], j = tets[k][b];
                add_constraint(w, s,
                               &(ls_particle_constraint_def){
                                   .cookie = LS_DEF_COOKIE, .a = i, .b = j, .stiffness = FX(1)});
                rest[i][j] = dist(w, s, i, j);
            }
        }
    }
    cr_assert_eq(ls_particle_set_position(w, s, 0, v3(0, 0.5, 0.3), v3(0.01, 0.5, 0.29)), LS_OK);
    cr_assert_eq(ls_particle_set_position(w, s, 5, v3(0.1, -0.6, 0.6), v3(0.1, -0.59, 0.61)),
                 LS_OK);
    double worst = 0;
    for (int t = 1; t <= 1000; t++) {
        ls_world_step(w);
        for (int k = 0; k < 2 && t > 5; k++) {
            for (int a = 0; a < 4; a++) {
                for (int b = a + 1; b < 4; b++) {
                    uint32_t i = tets[k][a], j = tets[k][b];
                    worst = fmax(worst, fabs(dist(w, s, i, j) - rest[i][j]) / rest[i][j]);
                }
            }
        }
    }
    cr_assert_leq(worst, 0.001, "worst edge error %.4f %%", worst * 100);
    ls_world_destroy(w);
}

Test(particles, tetrahedra_sharing_two_particles_turn_only_about_the_hinge_within_0_5_percent)
{
    ls_world *w = zero_g();
    ls_particle_system_id s = new_system(w, 6, 12, 8, LS_STICK_EXACT);
    const double pts[6][3] = {{0, 0.5, 0.3}, {0.4, -0.3, 0.2}, {0, 0, 0},
                              {0, 0, 1},     {-0.5, 0.1, 0.5}, {0.1, -0.6, 0.6}};
    for (int i = 0; i < 6; i++) {
        add_particle(w, s, v3(pts[i][0], pts[i][1], pts[i][2]), FX(1));
    }
    // Tetrahedra (0, 1, 2, 3) and (2, 3, 4, 5): particles 2 and 3 are the hinge.
    const uint32_t tets[2][4] = {{0, 1, 2, 3}, {2, 3, 4, 5}};
    for (int k = 0; k < 2; k++) {
        for (int a = 0; a < 4; a++) {
            for (int b = a + 1; b < 4; b++) {
                if (k == 1 && a == 0 && b == 1) {
                    continue; // the hinge stick once
                }
                add_constraint(w, s,
                               &(ls_particle_constraint_def){.cookie = LS_DEF_COOKIE,
                                                             .a = tets[k][a],
                                                             .b = tets[k][b],
                                                             .stiffness = FX(1)});
            }
        }
    }
    double r0[6];
    for (uint32_t i = 0; i < 6; i++) {
        r0[i] = line_distance(ls_particle_position(w, s, i), ls_particle_position(w, s, 2),
                              ls_particle_position(w, s, 3));
    }
    // Flap the two wings against each other and tumble the whole.
    set_at_rest(w, s, 0, v3(0.02, 0.5, 0.3));
    cr_assert_eq(ls_particle_set_position(w, s, 4, v3(-0.5, 0.1, 0.5), v3(-0.5, 0.12, 0.49)),
                 LS_OK);
    double worst = 0;
    for (int t = 1; t <= 1000; t++) {
        ls_world_step(w);
        for (uint32_t i = 0; i < 6; i++) {
            if (i == 2 || i == 3 || t < 5) {
                continue;
            }
            double d = line_distance(ls_particle_position(w, s, i), ls_particle_position(w, s, 2),
                                     ls_particle_position(w, s, 3));
            worst = fmax(worst, fabs(d - r0[i]) / r0[i]);
        }
    }
    cr_assert_leq(worst, 0.005, "distance to the hinge axis changed by %.3f %%", worst * 100);
    ls_world_destroy(w);
}

// ---- Item 20: one-sided sticks ----

Test(particles, a_one_sided_stick_is_inert_above_its_minimum_and_holds_it_below)
{
    // Two particles closing on each other: with and without a range of min 1 m
    // they move bit-identically while 1 m apart or more.
    ls_world *with = zero_g(), *without = zero_g();
    ls_particle_system_id s[2];
    ls_world *ws[2] = {with, without};
    for (int k = 0; k < 2; k++) {
        s[k] = new_system(ws[k], 2, 1, 4, LS_STICK_EXACT);
        add_particle(ws[k], s[k], v3(0, 0, 0), FX(1));
        add_particle(ws[k], s[k], v3(3, 0, 0), FX(1));
        cr_assert_eq(ls_particle_set_position(ws[k], s[k], 1, v3(3, 0, 0), v3(3.05, 0, 0)), LS_OK);
    }
    add_constraint(with, s[0],
                   &(ls_particle_constraint_def){.cookie = LS_DEF_COOKIE,
                                                 .type = LS_PARTICLE_RANGE,
                                                 .a = 0,
                                                 .b = 1,
                                                 .min_length = FX(1),
                                                 .stiffness = FX(1)});
    bool apart = true; // the range has never had to act
    for (int t = 1; t <= 100; t++) {
        ls_world_step(with);
        ls_world_step(without);
        apart = apart && dist(without, s[1], 0, 1) >= 65536.0;
        if (apart) {
            cr_assert(ls_vec3_equal(ls_particle_position(with, s[0], 1),
                                    ls_particle_position(without, s[1], 1)),
                      "tick %d", t);
        }
        cr_assert_geq(dist(with, s[0], 0, 1), 65536.0 - 2, "tick %d: %.1f", t,
                      dist(with, s[0], 0, 1));
    }
    ls_world_destroy(with);
    ls_world_destroy(without);
    // Ragdolls kicked at random: the knees never come closer than their
    // minimum (0.12 m at 1.8 m) minus 1 %.
    ls_rng rng = ls_rng_make(20, 2);
    for (int trial = 0; trial < 10; trial++) {
        ls_world *w = earth();
        ls_particle_ragdoll_def rd = ls_default_particle_ragdoll_def();
        rd.orientation = ls_quat_normalize(ls_quat_make(ls_rng_range(&rng, -FX(1), FX(1)),
                                                        ls_rng_range(&rng, -FX(1), FX(1)),
                                                        ls_rng_range(&rng, -FX(1), FX(1)), FX(1)));
        ls_error err;
        ls_particle_system_id r = ls_particle_ragdoll_create(w, &rd, &err);
        cr_assert_neq(r.index1, 0, "%s", err.message);
        for (uint32_t i = 0; i < 16; i++) {
            ls_vec3 x = ls_particle_position(w, r, i);
            ls_vec3 kick =
                ls_vec3_make(ls_rng_range(&rng, -2000, 2000), ls_rng_range(&rng, -2000, 2000),
                             ls_rng_range(&rng, -2000, 2000));
            cr_assert_eq(ls_particle_set_position(w, r, i, x, ls_vec3_sub(x, kick)), LS_OK);
        }
        for (int t = 1; t <= 300; t++) {
            ls_world_step(w);
            double knees = dist(w, r, 12, 13) / 65536.0;
            cr_assert_geq(knees, 0.12 * 0.99, "trial %d tick %d: knees %.4f m", trial, t, knees);
        }
        ls_world_destroy(w);
    }
}

// ---- Item 21: angle limits ----

Test(particles, an_angle_limit_holds_the_dot_product_and_equals_the_one_sided_stick)
{
    ls_world *w = zero_g();
    ls_particle_system_id s = new_system(w, 3, 3, 8, LS_STICK_EXACT);
    add_particle(w, s, v3(0, 0, 0), FX(1));   // vertex
    add_particle(w, s, v3(1, 0, 0), FX(1));   // arm b, L1 = 1
    add_particle(w, s, v3(0, 0.8, 0), FX(1)); // arm c, L2 = 0.8 (90 degrees now)
    add_constraint(
        w, s,
        &(ls_particle_constraint_def){.cookie = LS_DEF_COOKIE, .a = 0, .b = 1, .stiffness = FX(1)});
    add_constraint(
        w, s,
        &(ls_particle_constraint_def){.cookie = LS_DEF_COOKIE, .a = 0, .b = 2, .stiffness = FX(1)});
    ls_fx min_angle = 68629; // 60 degrees
    add_constraint(w, s,
                   &(ls_particle_constraint_def){.cookie = LS_DEF_COOKIE,
                                                 .type = LS_PARTICLE_ANGLE,
                                                 .a = 0,
                                                 .b = 1,
                                                 .c = 2,
                                                 .min_angle = min_angle,
                                                 .max_angle = LS_FX_PI,
                                                 .stiffness = FX(1)});
    // Fold the arm to 20 degrees and let it relax.
    set_at_rest(w, s, 2, v3(0.8 * cos(0.349), 0.8 * sin(0.349), 0));
    const double l1 = 1.0, l2 = 0.8, alpha = l1 * l2 * 0.5; // cos 60 degrees
    for (int t = 1; t <= 60; t++) {
        ls_world_step(w);
        ls_vec3 a = ls_particle_position(w, s, 0), b = ls_particle_position(w, s, 1),
                c = ls_particle_position(w, s, 2);
        double ab[3] = {d_of(b.x - a.x), d_of(b.y - a.y), d_of(b.z - a.z)};
        double ac[3] = {d_of(c.x - a.x), d_of(c.y - a.y), d_of(c.z - a.z)};
        double dot = ab[0] * ac[0] + ab[1] * ac[1] + ab[2] * ac[2];
        double bc2 = pow(raw_len(b, c) / 65536.0, 2);
        // With the sticks at rest the two forms are the same constraint.
        cr_assert_leq(bc2, l1 * l1 + l2 * l2 - 2 * dot + 0.02, "tick %d", t);
        if (t >= 20) {
            cr_assert_leq(dot, alpha + 0.002, "tick %d: dot %.4f > alpha %.4f", t, dot, alpha);
            cr_assert_geq(bc2, l1 * l1 + l2 * l2 - 2 * alpha - 0.004, "tick %d", t);
        }
    }
    ls_world_destroy(w);
}

// ---- Item 23: soft constraints ----

Test(particles, a_half_stiff_stick_goes_60_80_90_95_97_5_within_1_lsb)
{
    const double want[] = {80, 90, 95, 97.5, 98.75};
    // Frame by frame (damping 1: no velocity carried, so only the projection acts).
    ls_world *w = zero_g();
    ls_particle_system_def d = ls_default_particle_system_def();
    d.max_particles = 2;
    d.max_constraints = 1;
    d.iterations = 1;
    d.stick_mode = LS_STICK_EXACT;
    d.damping = LS_FX_ONE;
    ls_particle_system_id s = ls_particle_system_create(w, &d, NULL);
    add_particle(w, s, v3(0, 0, 0), FX(1));
    add_particle(w, s, v3(100, 0, 0), FX(1));
    add_constraint(w, s,
                   &(ls_particle_constraint_def){
                       .cookie = LS_DEF_COOKIE, .a = 0, .b = 1, .stiffness = LS_FX_HALF});
    set_at_rest(w, s, 1, v3(60, 0, 0));
    for (int t = 0; t < 5; t++) {
        ls_world_step(w);
        cr_assert_leq(fabs(dist(w, s, 0, 1) - want[t] * 65536), 1.0, "frame %d: %.4f", t + 1,
                      dist(w, s, 0, 1) / 65536);
    }
    // The same per iteration within one tick.
    for (uint32_t it = 1; it <= 5; it++) {
        set_at_rest(w, s, 0, v3(0, 0, 0));
        set_at_rest(w, s, 1, v3(60, 0, 0));
        cr_assert_eq(ls_particle_system_set_iterations(w, s, it), LS_OK);
        ls_world_step(w);
        cr_assert_leq(fabs(dist(w, s, 0, 1) - want[it - 1] * 65536), 1.0, "%u iterations", it);
    }
    ls_world_destroy(w);
}

// ---- Item 25: motion inherited from two animation frames ----

Test(particles, x_star_and_x_from_two_frames_continue_by_x_minus_x_star_plus_g_exactly)
{
    ls_world *w = earth();
    ls_particle_system_id s = new_system(w, 8, 0, 1, LS_STICK_APPROX);
    ls_rng rng = ls_rng_make(25, 3);
    ls_vec3 x[8], xo[8];
    for (uint32_t i = 0; i < 8; i++) {
        x[i] = ls_vec3_make(ls_rng_range(&rng, -FX(3), FX(3)), ls_rng_range(&rng, -FX(3), FX(3)),
                            ls_rng_range(&rng, -FX(3), FX(3)));
        xo[i] = ls_vec3_sub(x[i], ls_vec3_make(ls_rng_range(&rng, -5000, 5000),
                                               ls_rng_range(&rng, -5000, 5000),
                                               ls_rng_range(&rng, -5000, 5000)));
        add_particle(w, s, ls_vec3_zero(), FX(1));
        cr_assert_eq(ls_particle_set_position(w, s, i, x[i], xo[i]), LS_OK);
    }
    ls_world_step(w);
    for (uint32_t i = 0; i < 8; i++) {
        ls_vec3 want =
            ls_vec3_add(ls_vec3_add(x[i], ls_vec3_sub(x[i], xo[i])), ls_vec3_make(0, -178, 0));
        cr_assert(ls_vec3_equal(ls_particle_position(w, s, i), want), "particle %u", i);
        cr_assert(ls_vec3_equal(ls_particle_previous(w, s, i), x[i]));
    }
    ls_world_destroy(w);
}

// ---- Item 27: the constraint order is part of the input ----

static uint64_t chain_run(bool reversed)
{
    ls_world *w = earth();
    ls_particle_system_id s = new_system(w, 4, 3, 2, LS_STICK_APPROX);
    add_particle(w, s, v3(0, 5, 0), 0);
    add_particle(w, s, v3(0.5, 5, 0), FX(1));
    add_particle(w, s, v3(1, 5, 0), FX(1));
    add_particle(w, s, v3(1.5, 5, 0), FX(1));
    for (int k = 0; k < 3; k++) {
        uint32_t a = reversed ? (uint32_t)(2 - k) : (uint32_t)k;
        add_constraint(w, s,
                       &(ls_particle_constraint_def){
                           .cookie = LS_DEF_COOKIE, .a = a, .b = a + 1, .stiffness = FX(1)});
    }
    for (int t = 0; t < 120; t++) {
        ls_world_step(w);
    }
    uint64_t h = ls_world_checksum(w);
    ls_world_destroy(w);
    return h;
}

Test(particles, constraints_relax_in_creation_order_same_order_same_bits_other_order_other_bits)
{
    cr_assert_eq(chain_run(false), chain_run(false));
    cr_assert_eq(chain_run(true), chain_run(true));
    cr_assert_neq(chain_run(false), chain_run(true), "Gauss-Seidel depends on the order");
}

// ---- Item 28: one LSB anywhere changes every later checksum ----

Test(particles, flipping_one_lsb_of_x_or_of_x_star_changes_every_later_checksum)
{
    for (int which = 0; which < 2; which++) {
        ls_world *a = earth(), *b = earth();
        ls_cloth_def c = hanging_cloth(8, 0.1, 4);
        ls_particle_system_id sa = make_cloth(a, &c), sb = make_cloth(b, &c);
        for (int t = 0; t < 10; t++) {
            ls_world_step(a);
            ls_world_step(b);
        }
        cr_assert_eq(ls_world_checksum(a), ls_world_checksum(b));
        ls_vec3 x = ls_particle_position(b, sb, 37), xo = ls_particle_previous(b, sb, 37);
        if (which == 0) {
            x.y ^= 1;
        } else {
            xo.y ^= 1; // same x, different x*: a different state
        }
        cr_assert_eq(ls_particle_set_position(b, sb, 37, x, xo), LS_OK);
        cr_assert_neq(ls_world_checksum(a), ls_world_checksum(b));
        for (int t = 0; t < 200; t++) {
            ls_world_step(a);
            ls_world_step(b);
            cr_assert_neq(ls_world_checksum(a), ls_world_checksum(b), "which %d tick %d", which, t);
        }
        (void)sa;
        ls_world_destroy(a);
        ls_world_destroy(b);
    }
}

// ---- Item 29: a free spinning body never gains energy ----

static int64_t spin_energy(const ls_world *w, ls_particle_system_id s)
{
    int64_t v[4][3], cm[3] = {0, 0, 0};
    for (uint32_t i = 0; i < 4; i++) {
        ls_vec3 x = ls_particle_position(w, s, i), xo = ls_particle_previous(w, s, i);
        v[i][0] = x.x - xo.x, v[i][1] = x.y - xo.y, v[i][2] = x.z - xo.z;
        for (int c = 0; c < 3; c++) {
            cm[c] += v[i][c];
        }
    }
    int64_t e = 0;
    for (uint32_t i = 0; i < 4; i++) {
        for (int c = 0; c < 3; c++) {
            int64_t r = 4 * v[i][c] - cm[c]; // 4 x (v - v_cm), exact
            e += r * r;
        }
    }
    return e;
}

Test(particles, a_spinning_tetrahedron_in_zero_g_never_gains_energy_and_slowly_loses_it,
     .timeout = 120)
{
    // The proxy sum |4(v_i - v_cm)|^2 (raw) trades between rotation and the
    // bodies' small stick vibrations, so it is not monotonic tick by tick;
    // it never exceeds its start, and it decays (SPEC.md §25.9: measured
    // 26.0e6 at tick 1, 4.4e6 at 500, 0.62e6 at 3000, 0.2e6 at 20 000).
    for (int mode = 0; mode < 2; mode++) {
        ls_world *w = zero_g();
        ls_particle_system_id s =
            spinning_tetra(w, 4, mode ? LS_STICK_EXACT : LS_STICK_APPROX, v3(0.5, 4, 1));
        ls_world_step(w);
        int64_t e0 = spin_energy(w, s), first_window = 0, window = 0;
        for (int t = 2; t <= 20000; t++) {
            ls_world_step(w);
            int64_t e = spin_energy(w, s);
            cr_assert_leq(e, e0 + 16 * 48, "mode %d tick %d: %lld > %lld", mode, t, (long long)e,
                          (long long)e0);
            window = e > window ? e : window;
            if (t == 1000) {
                first_window = window;
                window = 0;
            }
        }
        cr_assert_lt(window, first_window, "mode %d: ticks 1001-20000 peak %lld vs %lld", mode,
                     (long long)window, (long long)first_window);
        cr_assert_lt(spin_energy(w, s), e0 / 4, "mode %d: the algorithm dissipates rotation", mode);
        ls_world_destroy(w);
    }
}

// ---- Snapshots, checksums, allocation ----

static ls_world *mixed_world(void)
{
    ls_world *w = earth();
    ls_body_def bd = ls_default_body_def();
    bd.type = LS_BODY_KINEMATIC;
    bd.position = v3(4, 6, 0);
    bd.angular_velocity = v3(0, 1, 0);
    bd.shape.type = LS_SHAPE_SPHERE;
    bd.shape.radius = fx_of(0.2);
    ls_error err;
    ls_body_id body = ls_body_create(w, &bd, &err);
    cr_assert_neq(body.index1, 0, "%s", err.message);
    ls_cloth_def c = hanging_cloth(12, 0.1, 4);
    c.system.turbulence = FX(3);
    c.system.acceleration = v3(2, 0, 1);
    c.system.seed = 99;
    c.tear_ratio = fx_of(1.6);
    make_cloth(w, &c);
    ls_rope_def r = ls_default_rope_def();
    r.start = v3(4.5, 6, 0);
    r.end = v3(4.5, 3, 0);
    r.pin_start = false;
    r.attach_start = body;
    r.slack = true;
    r.end_mass = FX(2);
    cr_assert_neq(ls_rope_create(w, &r, &err).index1, 0, "%s", err.message);
    ls_particle_ragdoll_def rd = ls_default_particle_ragdoll_def();
    rd.position = v3(-3, 5, 0);
    rd.velocity = v3(1, 3, 0);
    cr_assert_neq(ls_particle_ragdoll_create(w, &rd, &err).index1, 0, "%s", err.message);
    ls_particle_body_def pb = ls_default_particle_body_def();
    pb.kind = LS_PARTICLE_BODY_BOX;
    pb.angular_velocity = v3(1, 2, 3);
    cr_assert_neq(ls_particle_body_create(w, &pb, &err).index1, 0, "%s", err.message);
    return w;
}

Test(particles, snapshot_restore_mid_run_equals_the_uninterrupted_run_every_tick)
{
    ls_world *a = mixed_world(), *b = mixed_world();
    uint64_t want[300];
    uint8_t *snap = NULL;
    size_t n = 0;
    for (int t = 0; t < 300; t++) {
        if (t == 120) {
            n = ls_world_snapshot_size(a);
            snap = malloc(n);
            cr_assert_eq(ls_world_snapshot_save(a, snap, n), n);
            cr_assert_eq(ls_get_u32le(snap + 4), 6u, "one format (version 6, Solver v3)");
        }
        ls_world_step(a);
        want[t] = ls_world_checksum(a);
    }
    for (int t = 0; t < 7; t++) {
        ls_world_step(b); // b is elsewhere; restore must take it back exactly
    }
    ls_error err;
    cr_assert_eq(ls_world_snapshot_restore(b, snap, n, &err), LS_OK, "%s", err.message);
    uint8_t *again = malloc(n);
    cr_assert_eq(ls_world_snapshot_save(b, again, n), n);
    cr_assert_eq(memcmp(snap, again, n), 0, "restore-then-save is the identity");
    for (int t = 120; t < 300; t++) {
        ls_world_step(b);
        cr_assert_eq(ls_world_checksum(b), want[t], "tick %d", t + 1);
    }
    free(snap);
    free(again);
    ls_world_destroy(a);
    ls_world_destroy(b);
}

Test(particles, a_world_without_particle_systems_hashes_and_snapshots_as_before)
{
    ls_world_def with = ls_default_world_def(), without = ls_default_world_def();
    without.max_particles = 0;
    without.max_particle_systems = 0;
    without.max_particle_constraints = 0;
    ls_world *a = ls_world_create(&with, NULL), *b = ls_world_create(&without, NULL);
    ls_body_def bd = ls_default_body_def();
    bd.position = v3(0, 3, 0);
    ls_body_create(a, &bd, NULL);
    ls_body_create(b, &bd, NULL);
    for (int t = 0; t < 30; t++) {
        ls_world_step(a);
        ls_world_step(b);
        cr_assert_eq(ls_world_checksum(a), ls_world_checksum(b));
    }
    size_t n = ls_world_snapshot_size(a);
    cr_assert_eq(n, ls_world_snapshot_size(b));
    uint8_t *sa = malloc(n), *sb = malloc(n);
    ls_world_snapshot_save(a, sa, n);
    ls_world_snapshot_save(b, sb, n);
    cr_assert_eq(ls_get_u32le(sa + 4), 6u, "one format (version 6, Solver v3)");
    cr_assert_eq(ls_get_u32le(sa + n - 4), 0u, "no particle system: the section word is 0, last");
    cr_assert_eq(memcmp(sa, sb, n), 0);
    // A snapshot without particles restored into a world with systems removes them.
    ls_particle_system_id s = new_system(a, 4, 0, 1, LS_STICK_APPROX);
    cr_assert_eq(ls_world_snapshot_restore(a, sb, n, NULL), LS_OK);
    cr_assert(!ls_particle_system_is_valid(a, s));
    cr_assert_eq(ls_world_checksum(a), ls_world_checksum(b));
    // A snapshot with particles cannot go into a world without capacity.
    ls_particle_system_id s2 = new_system(a, 4, 0, 1, LS_STICK_APPROX);
    (void)s2;
    size_t m = ls_world_snapshot_size(a);
    uint8_t *sp = malloc(m);
    ls_world_snapshot_save(a, sp, m);
    ls_error err;
    cr_assert_eq(ls_world_snapshot_restore(b, sp, m, &err), LS_ERR_INCOMPATIBLE);
    free(sa);
    free(sb);
    free(sp);
    ls_world_destroy(a);
    ls_world_destroy(b);
}

Test(particles, a_corrupt_particle_section_is_refused_and_leaves_the_world_empty)
{
    ls_world *w = mixed_world();
    for (int t = 0; t < 5; t++) {
        ls_world_step(w);
    }
    size_t n = ls_world_snapshot_size(w);
    uint8_t *snap = malloc(n), *bad = malloc(n);
    ls_world_snapshot_save(w, snap, n);
    // Flip each of the last 4000 words' top bit in turn: every restore either
    // succeeds (a value a world may hold) or is refused; none crashes.
    uint32_t refused = 0;
    for (size_t off = n > 16000 ? n - 16000 : 16; off + 4 <= n; off += 4) {
        memcpy(bad, snap, n);
        bad[off + 3] ^= 0x80;
        ls_error err;
        if (ls_world_snapshot_restore(w, bad, n, &err) != LS_OK) {
            refused++;
            cr_assert_eq(ls_world_particle_system_count(w), 0u);
        } else {
            ls_world_step(w);
        }
    }
    cr_assert_gt(refused, 100u);
    cr_assert_eq(ls_world_snapshot_restore(w, snap, n - 4, NULL), LS_ERR_CORRUPT);
    free(snap);
    free(bad);
    ls_world_destroy(w);
}

Test(particles, stepping_particle_systems_never_allocates_after_creation)
{
    ls_world *w = mixed_world();
    for (int t = 0; t < 10; t++) {
        ls_world_step(w);
    }
    alloc_count_reset();
    for (int t = 0; t < 200; t++) {
        ls_world_step(w);
        (void)ls_world_checksum(w);
    }
    cr_assert_eq(alloc_count_get(), 0u, "%llu allocations", (unsigned long long)alloc_count_get());
    ls_world_destroy(w);
}

Test(particles, identical_worlds_give_identical_checksums_and_the_wind_seed_matters)
{
    ls_world *a = mixed_world(), *b = mixed_world();
    for (int t = 0; t < 200; t++) {
        ls_world_step(a);
        ls_world_step(b);
        cr_assert_eq(ls_world_checksum(a), ls_world_checksum(b), "tick %d", t + 1);
    }
    ls_world_destroy(a);
    ls_world_destroy(b);
    uint64_t h[2];
    for (int k = 0; k < 2; k++) {
        ls_world *w = earth();
        ls_cloth_def c = hanging_cloth(8, 0.1, 2);
        c.system.turbulence = FX(5);
        c.system.seed = (uint64_t)k;
        make_cloth(w, &c);
        for (int t = 0; t < 20; t++) {
            ls_world_step(w);
        }
        h[k] = ls_world_checksum(w);
        ls_world_destroy(w);
    }
    cr_assert_neq(h[0], h[1]);
}

Test(particles, a_cloth_gives_the_same_bits_with_1_2_and_3_worker_threads)
{
    uint64_t h[3][60];
    for (uint32_t workers = 1; workers <= 3; workers++) {
        ls_world_def wd = ls_default_world_def();
        wd.max_bodies = 8;
        wd.max_contacts = 64;
        wd.worker_count = workers;
        ls_world *w = ls_world_create(&wd, NULL);
        ls_cloth_def c = hanging_cloth(48, 0.05, 8); // batches of 1128..1152 sticks: split
        c.mass = FX(10);
        c.system.turbulence = FX(2);
        make_cloth(w, &c);
        for (int t = 0; t < 60; t++) {
            ls_world_step(w);
            h[workers - 1][t] = ls_world_checksum(w);
        }
        ls_world_destroy(w);
    }
    for (int t = 0; t < 60; t++) {
        cr_assert(h[0][t] == h[1][t] && h[0][t] == h[2][t], "tick %d", t + 1);
    }
}

// ---- Tearing, overflow, destruction ----

Test(particles, a_stick_stretched_past_its_tear_ratio_breaks_once_with_one_event)
{
    ls_world *w = zero_g();
    ls_particle_system_id s = new_system(w, 3, 2, 1, LS_STICK_EXACT);
    add_particle(w, s, v3(0, 0, 0), 0);
    add_particle(w, s, v3(0.1, 0, 0), FX(1));
    add_particle(w, s, v3(0.2, 0, 0), FX(1));
    add_constraint(w, s,
                   &(ls_particle_constraint_def){.cookie = LS_DEF_COOKIE,
                                                 .a = 0,
                                                 .b = 1,
                                                 .stiffness = fx_of(0.1),
                                                 .tear_ratio = fx_of(1.5)});
    add_constraint(
        w, s,
        &(ls_particle_constraint_def){.cookie = LS_DEF_COOKIE, .a = 1, .b = 2, .stiffness = FX(1)});
    // Fling particle 1 away: 1 m in one tick.
    cr_assert_eq(ls_particle_set_position(w, s, 1, v3(0.1, 0, 0), v3(-0.9, 0, 0)), LS_OK);
    ls_world_step(w);
    ls_particle_events ev = ls_world_particle_events(w);
    cr_assert_eq(ev.torn_count, 1u);
    cr_assert(ev.torn[0].system.index1 == s.index1 && ev.torn[0].constraint == 0 &&
              ev.torn[0].a == 0 && ev.torn[0].b == 1);
    cr_assert(ls_particle_constraint_is_torn(w, s, 0));
    cr_assert(!ls_particle_constraint_is_active(w, s, 0));
    cr_assert(ls_particle_constraint_is_active(w, s, 1));
    ls_world_step(w);
    cr_assert_eq(ls_world_particle_events(w).torn_count, 0u);
    // A torn constraint stays torn even if enabled again.
    cr_assert_eq(ls_particle_constraint_set_enabled(w, s, 0, true), LS_OK);
    cr_assert(!ls_particle_constraint_is_active(w, s, 0));
    ls_world_destroy(w);
}

Test(particles, a_particle_leaving_the_range_is_clamped_stopped_and_reported_with_its_tick)
{
    ls_world *w = zero_g();
    ls_particle_system_id s = new_system(w, 2, 0, 1, LS_STICK_APPROX);
    add_particle(w, s, v3(0, 0, 0), FX(1));
    add_particle(w, s, v3(0, 0, 0), FX(1));
    cr_assert_eq(ls_particle_set_position(w, s, 1, v3(2047, 0, 0), v3(2045, 0, 0)), LS_OK);
    ls_world_step(w);
    ls_world_step(w);
    ls_step_info info = ls_world_info(w);
    cr_assert_eq(info.overflow_count, 1u);
    cr_assert_eq(info.overflow_tick, 1u);
    cr_assert(info.overflow_system.index1 == s.index1 &&
              info.overflow_system.generation == s.generation);
    cr_assert_eq(info.overflow_particle, 1u);
    cr_assert_eq(info.overflow_body.index1, 0u);
    ls_vec3 x = ls_particle_position(w, s, 1);
    cr_assert_eq(x.x, FX(2048));
    cr_assert(ls_vec3_equal(x, ls_particle_previous(w, s, 1)));
    ls_world_destroy(w);
}

Test(particles, destroying_a_system_compacts_the_pools_and_keeps_the_others_intact)
{
    ls_world *w = earth();
    ls_cloth_def c = hanging_cloth(6, 0.1, 2);
    ls_particle_system_id a = make_cloth(w, &c);
    c.origin = v3(3, 10, 0);
    ls_particle_system_id b = make_cloth(w, &c);
    c.origin = v3(6, 10, 0);
    ls_particle_system_id d = make_cloth(w, &c);
    for (int t = 0; t < 20; t++) {
        ls_world_step(w);
    }
    ls_vec3 before[36];
    for (uint32_t i = 0; i < 36; i++) {
        before[i] = ls_particle_position(w, d, i);
    }
    cr_assert_eq(ls_particle_system_destroy(w, b), LS_OK);
    cr_assert_eq(ls_particle_system_destroy(w, b), LS_ERR_INVALID_ID);
    cr_assert(!ls_particle_system_is_valid(w, b));
    cr_assert_eq(ls_world_particle_system_count(w), 2u);
    for (uint32_t i = 0; i < 36; i++) {
        cr_assert(ls_vec3_equal(ls_particle_position(w, d, i), before[i]));
    }
    // The freed slot is reused (LIFO) with the next generation.
    c.origin = v3(9, 10, 0);
    ls_particle_system_id e = make_cloth(w, &c);
    cr_assert_eq(e.index1, b.index1);
    cr_assert_eq(e.generation, b.generation + 1);
    for (int t = 0; t < 20; t++) {
        ls_world_step(w);
    }
    cr_assert(ls_particle_system_is_valid(w, a) && ls_particle_system_is_valid(w, d));
    cr_assert_eq(ls_world_info(w).overflow_count, 0u);
    ls_world_destroy(w);
}

Test(particles, a_particle_body_reports_its_pose_and_its_weights_rebuild_its_particles)
{
    for (int arrangement = 0; arrangement < 2; arrangement++) {
        ls_world *w = zero_g();
        ls_particle_body_def d = ls_default_particle_body_def();
        d.kind = arrangement ? LS_PARTICLE_BODY_BOX : LS_PARTICLE_BODY_TETRA;
        d.position = v3(1, 2, 3);
        d.orientation = ls_quat_normalize(ls_quat_make(fx_of(0.3), fx_of(-0.2), fx_of(0.5), FX(1)));
        ls_error err;
        ls_particle_system_id s = ls_particle_body_create(w, &d, &err);
        cr_assert_neq(s.index1, 0, "%s", err.message);
        ls_vec3 p;
        ls_quat q;
        cr_assert_eq(ls_particle_body_get_transform(w, s, &p, &q), LS_OK);
        cr_assert_leq(raw_len(p, d.position), 2.0);
        double dq = fabs(d_of(q.x) * d_of(d.orientation.x) + d_of(q.y) * d_of(d.orientation.y) +
                         d_of(q.z) * d_of(d.orientation.z) + d_of(q.w) * d_of(d.orientation.w));
        cr_assert_gt(dq, 0.99999, "orientation off: |q . q0| = %.6f", dq);
        // The weights of each particle's body-frame position are one-hot and sum to 1.
        const ls_particle_system *sys = ls_particle_system_(w, s);
        uint32_t n = ls_particle_count(w, s);
        for (uint32_t k = 0; k < n; k++) {
            ls_vec3 local = ls_quat_rotate_inv(q, ls_vec3_sub(ls_particle_position(w, s, k), p));
            ls_fx c[8];
            cr_assert_eq(ls_particle_body_weights_(sys, local, c), n);
            int64_t sum = 0;
            for (uint32_t j = 0; j < n; j++) {
                sum += c[j];
                cr_assert_leq(abs(c[j] - (j == k ? FX(1) : 0)), 40, "particle %u weight %u = %d", k,
                              j, c[j]);
            }
            cr_assert_eq(sum, FX(1));
        }
        ls_world_destroy(w);
    }
}

// ---- Bad definitions are refused with the field named ----

static void expect_refused(const ls_error *err, ls_result code, const char *field)
{
    cr_assert_eq(err->code, code, "%s: got %s (%s)", field, ls_result_name(err->code),
                 err->message);
    cr_assert_str_eq(err->field, field, "message: %s", err->message);
}

Test(particles, bad_definitions_are_refused_naming_the_field)
{
    ls_error err;
    ls_world_def wd = ls_default_world_def();
    wd.max_particle_systems = 5000;
    cr_assert_null(ls_world_create(&wd, &err));
    expect_refused(&err, LS_ERR_OUT_OF_RANGE, "max_particle_systems");
    wd = ls_default_world_def();
    wd.max_particles = (1u << 22) + 1;
    cr_assert_null(ls_world_create(&wd, &err));
    expect_refused(&err, LS_ERR_OUT_OF_RANGE, "max_particles");

    ls_world *w = zero_g();
    ls_particle_system_def sd = ls_default_particle_system_def();
    sd.iterations = 0;
    cr_assert_eq(ls_particle_system_create(w, &sd, &err).index1, 0u);
    expect_refused(&err, LS_ERR_OUT_OF_RANGE, "iterations");
    sd = ls_default_particle_system_def();
    sd.damping = FX(2);
    ls_particle_system_create(w, &sd, &err);
    expect_refused(&err, LS_ERR_OUT_OF_RANGE, "damping");
    sd = ls_default_particle_system_def();
    sd.max_particles = 9000;
    ls_particle_system_create(w, &sd, &err);
    expect_refused(&err, LS_ERR_CAPACITY, "max_particles");

    ls_particle_system_id s = new_system(w, 3, 4, 1, LS_STICK_APPROX);
    ls_particle_def pd = ls_default_particle_def();
    pd.position = v3(0, 3000, 0);
    cr_assert_eq(ls_particle_add(w, s, &pd, &err), UINT32_MAX);
    expect_refused(&err, LS_ERR_OUT_OF_RANGE, "position");
    pd = ls_default_particle_def();
    pd.mass = 10; // 0.00015 kg
    ls_particle_add(w, s, &pd, &err);
    expect_refused(&err, LS_ERR_OUT_OF_RANGE, "mass");
    add_particle(w, s, v3(0, 0, 0), FX(1));
    add_particle(w, s, v3(200, 0, 0), FX(1));
    add_particle(w, s, v3(0, 0, 0.00001), FX(1));
    cr_assert_eq(ls_particle_add(w, s, &pd, &err), UINT32_MAX);
    expect_refused(&err, LS_ERR_OUT_OF_RANGE, "mass");
    pd.mass = FX(1);
    ls_particle_add(w, s, &pd, &err);
    expect_refused(&err, LS_ERR_CAPACITY, "max_particles");

    ls_particle_constraint_def cd = ls_default_particle_constraint_def();
    cd.a = 0;
    cd.b = 1; // 200 m apart: longer than 128 m
    ls_particle_constraint_add(w, s, &cd, &err);
    expect_refused(&err, LS_ERR_OUT_OF_RANGE, "length");
    cd.b = 2; // 0.00001 m apart: shorter than 0.001 m
    ls_particle_constraint_add(w, s, &cd, &err);
    expect_refused(&err, LS_ERR_OUT_OF_RANGE, "length");
    cd.b = 7;
    ls_particle_constraint_add(w, s, &cd, &err);
    expect_refused(&err, LS_ERR_OUT_OF_RANGE, "b");
    cd = ls_default_particle_constraint_def();
    cd.length = FX(1);
    cd.tear_ratio = LS_FX_HALF;
    ls_particle_constraint_add(w, s, &cd, &err);
    expect_refused(&err, LS_ERR_OUT_OF_RANGE, "tear_ratio");
    cd.tear_ratio = 0;
    cd.stiffness = 0;
    ls_particle_constraint_add(w, s, &cd, &err);
    expect_refused(&err, LS_ERR_OUT_OF_RANGE, "stiffness");
    cd = ls_default_particle_constraint_def();
    cd.type = LS_PARTICLE_PIN;
    cd.body = (ls_body_id){5, 1};
    ls_particle_constraint_add(w, s, &cd, &err);
    expect_refused(&err, LS_ERR_INVALID_ID, "body");
    cd = ls_default_particle_constraint_def();
    cd.type = LS_PARTICLE_RANGE;
    ls_particle_constraint_add(w, s, &cd, &err);
    expect_refused(&err, LS_ERR_INVALID_ARGUMENT, "max_length");
    cd = ls_default_particle_constraint_def();
    cd.type = LS_PARTICLE_ANGLE;
    cd.min_angle = FX(2);
    cd.max_angle = FX(1);
    ls_particle_constraint_add(w, s, &cd, &err);
    expect_refused(&err, LS_ERR_OUT_OF_RANGE, "max_angle");

    ls_cloth_def c = ls_default_cloth_def();
    c.nu = 1;
    cr_assert_eq(ls_cloth_create(w, &c, &err).index1, 0u);
    expect_refused(&err, LS_ERR_OUT_OF_RANGE, "nu");
    c = ls_default_cloth_def();
    c.spacing = 0;
    ls_cloth_create(w, &c, &err);
    expect_refused(&err, LS_ERR_OUT_OF_RANGE, "spacing");
    c = ls_default_cloth_def();
    c.system.iterations = 65;
    ls_cloth_create(w, &c, &err);
    expect_refused(&err, LS_ERR_OUT_OF_RANGE, "system.iterations");
    c = ls_default_cloth_def();
    c.nu = c.nv = 100; // 10 000 particles: more than the world's 8192
    c.mass = FX(100);
    ls_cloth_create(w, &c, &err);
    expect_refused(&err, LS_ERR_CAPACITY, "system.max_particles");
    c = ls_default_cloth_def();
    c.origin = v3(2047, 0, 0);
    ls_cloth_create(w, &c, &err);
    expect_refused(&err, LS_ERR_OUT_OF_RANGE, "origin");
    ls_rope_def r = ls_default_rope_def();
    r.segments = 0;
    cr_assert_eq(ls_rope_create(w, &r, &err).index1, 0u);
    expect_refused(&err, LS_ERR_OUT_OF_RANGE, "segments");
    r = ls_default_rope_def();
    r.end = r.start; // zero-length segments
    ls_rope_create(w, &r, &err);
    expect_refused(&err, LS_ERR_OUT_OF_RANGE, "length");
    ls_particle_ragdoll_def rd = ls_default_particle_ragdoll_def();
    rd.height = FX(20);
    cr_assert_eq(ls_particle_ragdoll_create(w, &rd, &err).index1, 0u);
    expect_refused(&err, LS_ERR_OUT_OF_RANGE, "height");
    ls_particle_body_def bd = ls_default_particle_body_def();
    bd.shape.type = LS_SHAPE_PLANE;
    cr_assert_eq(ls_particle_body_create(w, &bd, &err).index1, 0u);
    expect_refused(&err, LS_ERR_INVALID_ARGUMENT, "shape.type");
    // Nothing above left a system behind.
    cr_assert_eq(ls_world_particle_system_count(w), 1u);
    ls_world_destroy(w);
}

// Heavy-end ropes (SPEC.md §25.7): a 2 m rope of 20 segments, 0.1 kg in all,
// pinned at the top, ends in a particle of `ratio` times a segment particle's
// mass. Theory: an inextensible rope keeps its length. Goal (issue 29): the
// path length along the particles stretches at most 3 % at its peak, released
// horizontal (the swing's bottom pulls hardest; 10 s), and at most 1 % at rest,
// hanging (the last second of 10 s), for 10:1, 100:1 and 1000:1 ends, with the
// rope's default iterations (24; 0 below). Fewer are measured too.
static double heavy_rope(double ratio, bool swing, uint32_t iterations)
{
    ls_world *w = earth();
    ls_rope_def r = ls_default_rope_def();
    iterations = iterations ? iterations : r.system.iterations;
    r.start = v3(0, 10, 0);
    r.end = swing ? v3(2, 10, 0) : v3(0, 8, 0);
    r.segments = 20;
    r.mass = fx_of(0.1 * 21 / 20);
    double each = 0.1 / 20;
    r.end_mass = fx_of(each * ratio);
    r.system.iterations = iterations;
    ls_error err;
    ls_particle_system_id s = ls_rope_create(w, &r, &err);
    cr_assert_neq(s.index1, 0, "%s", err.message);
    double worst = 0;
    for (int t = 1; t <= 600; t++) {
        ls_world_step(w);
        if (!swing && t <= 540) {
            continue;
        }
        double len = 0;
        for (uint32_t k = 0; k < 20; k++) {
            ls_vec3 a = ls_particle_position(w, s, k), b = ls_particle_position(w, s, k + 1);
            double d[3] = {d_of(b.x - a.x), d_of(b.y - a.y), d_of(b.z - a.z)};
            len += sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
        }
        worst = fmax(worst, len / 2 - 1);
    }
    ls_world_destroy(w);
    return worst;
}

Test(particles, heavy_end_ropes_stretch_at_most_3_percent_at_peak_and_1_at_rest)
{
    cr_assert_eq(ls_default_rope_def().system.iterations, 24u);
    const double ratios[] = {10, 100, 1000};
    for (size_t i = 0; i < 3; i++) {
        double rest = heavy_rope(ratios[i], false, 0), rest4 = heavy_rope(ratios[i], false, 4);
        double peak = heavy_rope(ratios[i], true, 0), peak4 = heavy_rope(ratios[i], true, 4);
        fprintf(stderr,
                "rope, end %.0f:1: stretch at rest %.2f %% (default 24 iterations), %.2f %% (4); "
                "at the swing's peak %.2f %% (24), %.2f %% (4)\n",
                ratios[i], 100 * rest, 100 * rest4, 100 * peak, 100 * peak4);
        cr_expect_leq(rest, 0.01, "%.0f:1: rest stretch %.2f %% (goal 1 %%)", ratios[i],
                      100 * rest);
        cr_expect_leq(rest4, 0.01, "%.0f:1: rest stretch %.2f %% at 4 iterations (goal 1 %%)",
                      ratios[i], 100 * rest4);
        cr_expect_leq(peak, 0.03, "%.0f:1: peak stretch %.2f %% (goal 3 %%)", ratios[i],
                      100 * peak);
        // With 4 iterations the swing's whip stretches the sticks between the
        // anchored ranges by up to 7.7 % (SPEC §25.7): a tripwire, not the goal.
        cr_expect_leq(peak4, 0.08, "%.0f:1: peak stretch %.2f %% at 4 iterations (tripwire 8 %%)",
                      ratios[i], 100 * peak4);
    }
}
