// SPDX-License-Identifier: MIT
// Physical-outcome tests of the contact solver (issue 13, "Solver v2"): the
// goals the soft-step solver must meet, each with the issue's number and the
// theory behind its tolerance. They use the public API only and the world's
// default solver settings (or a shipped scene's own settings), so they judge
// whatever solver the library has. Every test logs its measured value
// (cr_log_info, shown with --verbose) so a run is also a measurement.
//
// Double precision appears here only to measure (energies, momenta, a
// reference integration of Euler's equations); the simulation stays Q16.16.
// Random placements come from seeded PCG32 streams (ls/rng.h).
//
//   imperfect_tower_seed_{1,2,3}   top drift <= 1 cm, all asleep at tick 2000
//   heavy_box_on_a_100_times_...   penetration <= 5 mm, the stack holds
//   dzhanibekov_...                first flip at the theoretical time +- 30 %
//   free_box_spun_off_axis_...     |dL|/|L| <= 2 % over 10 s, kinetic energy <= +1 %
//   pyramid_, pile_1000_...        regression guards: no worse than before issue 13
//   sliding_box_, dropped_stack_   no tick gains more than 1 % of the total energy
#include "ls/scene.h"
#include "test_util.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

// ---------------------------------------------------------------------------
// Helpers: conversions, world and body construction, rigid-body measures.

static double to_d(ls_fx v)
{
    return (double)v / 65536.0;
}

// A world with the default solver settings (whatever the library's default
// solver is) and the given gravity.
static ls_world *make_world(double gravity_y)
{
    ls_world_def d = ls_default_world_def();
    d.gravity = v3(0, gravity_y, 0);
    d.max_bodies = 64;
    d.max_contacts = 1024;
    ls_error err;
    ls_world *w = ls_world_create(&d, &err);
    cr_assert_not_null(w, "%s", err.message);
    return w;
}

static void add_ground(ls_world *w)
{
    ls_body_def bd = ls_default_body_def();
    bd.type = LS_BODY_STATIC;
    bd.shape.type = LS_SHAPE_PLANE;
    bd.shape.normal = v3(0, 1, 0);
    bd.shape.plane_d = 0;
    bd.shape.friction = fx(0.6);
    ls_error err;
    ls_body_id id = ls_body_create(w, &bd, &err);
    cr_assert_neq(id.index1, 0u, "%s", err.message);
}

// A dynamic box of half extents h at p, yawed by `yaw` (raw Q16.16 radians)
// about +y, with the given density (kg/m^3) and friction 0.6.
static ls_body_id add_box(ls_world *w, ls_vec3 h, ls_vec3 p, ls_fx yaw, double density)
{
    ls_body_def bd = ls_default_body_def();
    bd.position = p;
    bd.orientation = ls_quat_from_axis_angle(v3(0, 1, 0), yaw);
    bd.shape.type = LS_SHAPE_BOX;
    bd.shape.half_extents = h;
    bd.shape.density = fx(density);
    bd.shape.friction = fx(0.6);
    ls_error err;
    ls_body_id id = ls_body_create(w, &bd, &err);
    cr_assert_neq(id.index1, 0u, "%s", err.message);
    return id;
}

static void step_n(ls_world *w, int n)
{
    for (int t = 0; t < n; t++) {
        ls_world_step(w);
    }
}

// Rotation matrix of a (normalised in double) quaternion.
static void quat_to_mat(ls_quat q, double r[3][3])
{
    double x = to_d(q.x), y = to_d(q.y), z = to_d(q.z), s = to_d(q.w);
    double n = sqrt(x * x + y * y + z * z + s * s);
    x /= n, y /= n, z /= n, s /= n;
    r[0][0] = 1 - 2 * (y * y + z * z), r[0][1] = 2 * (x * y - s * z), r[0][2] = 2 * (x * z + s * y);
    r[1][0] = 2 * (x * y + s * z), r[1][1] = 1 - 2 * (x * x + z * z), r[1][2] = 2 * (y * z - s * x);
    r[2][0] = 2 * (x * z - s * y), r[2][1] = 2 * (y * z + s * x), r[2][2] = 1 - 2 * (x * x + y * y);
}

// Principal moments of a uniform box about its centre, from its half extents:
// I_x = m (hy^2 + hz^2) / 3, and so on.
static void box_inertia(double m, ls_vec3 h, double inertia[3])
{
    double x = to_d(h.x), y = to_d(h.y), z = to_d(h.z);
    inertia[0] = m * (y * y + z * z) / 3.0;
    inertia[1] = m * (x * x + z * z) / 3.0;
    inertia[2] = m * (x * x + y * y) / 3.0;
}

// World angular momentum L = R I_body R^T w and kinetic energy 1/2 w . L of a
// box body (w in the world frame, as the API reports it).
static double box_momentum(const ls_world *w, ls_body_id id, double out_l[3])
{
    ls_body_state s;
    cr_assert_eq(ls_body_get_state(w, id, &s, NULL), LS_OK);
    double inertia[3], r[3][3],
        om[3] = {to_d(s.angular_velocity.x), to_d(s.angular_velocity.y),
                 to_d(s.angular_velocity.z)};
    box_inertia(to_d(s.mass), s.shape.half_extents, inertia);
    quat_to_mat(s.orientation, r);
    double body[3]; // R^T w, then I_body R^T w
    for (int i = 0; i < 3; i++) {
        body[i] = (r[0][i] * om[0] + r[1][i] * om[1] + r[2][i] * om[2]) * inertia[i];
    }
    double ke = 0;
    for (int i = 0; i < 3; i++) {
        out_l[i] = r[i][0] * body[0] + r[i][1] * body[1] + r[i][2] * body[2];
        ke += 0.5 * om[i] * out_l[i];
    }
    return ke;
}

// Kinetic (translation and rotation) plus potential energy m g y of a box,
// potential measured from the ground plane y = 0.
static double box_energy(const ls_world *w, ls_body_id id, double g)
{
    double l[3];
    double ke = box_momentum(w, id, l);
    ls_body_state s;
    cr_assert_eq(ls_body_get_state(w, id, &s, NULL), LS_OK);
    double m = to_d(s.mass), vx = to_d(s.linear_velocity.x), vy = to_d(s.linear_velocity.y);
    double vz = to_d(s.linear_velocity.z);
    return ke + 0.5 * m * (vx * vx + vy * vy + vz * vz) + m * g * to_d(s.position.y);
}

// Horizontal (x, z) distance between two points, m.
static double horizontal(ls_vec3 a, ls_vec3 b)
{
    double dx = to_d(b.x - a.x), dz = to_d(b.z - a.z);
    return sqrt(dx * dx + dz * dz);
}

// Corner k (0..7) of a box body in world coordinates.
static void box_corner(const ls_body_state *s, int k, double out[3])
{
    double r[3][3];
    quat_to_mat(s->orientation, r);
    double h[3] = {to_d(s->shape.half_extents.x), to_d(s->shape.half_extents.y),
                   to_d(s->shape.half_extents.z)};
    double c[3] = {k & 4 ? h[0] : -h[0], k & 2 ? h[1] : -h[1], k & 1 ? h[2] : -h[2]};
    double p[3] = {to_d(s->position.x), to_d(s->position.y), to_d(s->position.z)};
    for (int i = 0; i < 3; i++) {
        out[i] = p[i] + r[i][0] * c[0] + r[i][1] * c[1] + r[i][2] * c[2];
    }
}

// ---------------------------------------------------------------------------
// 1. Imperfect towers.
//
// Twelve 1 m cubes (density 1000, friction 0.6), each placed on the column
// axis with a seeded offset uniform in [-1 cm, +1 cm] in x and z and a yaw
// uniform in [-3 deg, +3 deg], every box resting exactly on the one below
// (yaw keeps the faces horizontal, so they start touching, not overlapping),
// on a static plane. The issue's goal: after 2000 ticks at 60 Hz (33 s) the top
// box's horizontal drift (final minus initial centre, x and z) is at most
// 1 cm and every box is asleep. Theory: a column whose every centre lies
// within 1.4 cm of the axis is statically stable (the supporting faces are
// 1 m wide: the combined centre of mass of the boxes above any face stays
// far inside it), and friction 0.6 holds any tilt below 31 deg, so the exact
// answer is zero drift; the 1 cm is the issue's allowance for solver sway.

static void imperfect_tower(uint64_t seed)
{
    enum { N = 12 };
    ls_world *w = make_world(-9.81);
    add_ground(w);
    ls_rng rng = ls_rng_make(seed, 13); // stream 13: the issue's number
    ls_fx cm = fx(0.01), deg3 = fx(3.0 * 3.14159265358979 / 180.0);
    ls_body_id box[N];
    for (int i = 0; i < N; i++) {
        ls_fx ox = ls_rng_range(&rng, -cm, cm + 1), oz = ls_rng_range(&rng, -cm, cm + 1);
        ls_fx yaw = ls_rng_range(&rng, -deg3, deg3 + 1);
        ls_vec3 p = ls_vec3_make(ox, fx(0.5 + i), oz);
        box[i] = add_box(w, v3(0.5, 0.5, 0.5), p, yaw, 1000);
    }
    ls_vec3 top0 = ls_body_position(w, box[N - 1]);
    step_n(w, 2000);
    double drift = horizontal(top0, ls_body_position(w, box[N - 1]));
    int asleep = 0;
    for (int i = 0; i < N; i++) {
        asleep += ls_body_is_asleep(w, box[i]);
    }
    cr_log_info("solver: tower seed %llu: top drift %.5f m, %d/%d asleep, overflow %u",
                (unsigned long long)seed, drift, asleep, N, ls_world_info(w).overflow_count);
    cr_expect_leq(drift, 0.01, "seed %llu: top box drifted %.5f m (limit 1 cm)",
                  (unsigned long long)seed, drift);
    cr_expect_eq(asleep, N, "seed %llu: %d of %d boxes asleep at tick 2000",
                 (unsigned long long)seed, asleep, N);
    ls_world_destroy(w);
}

Test(solver, imperfect_tower_seed_1_drifts_under_1_cm_and_sleeps)
{
    imperfect_tower(1);
}

Test(solver, imperfect_tower_seed_2_drifts_under_1_cm_and_sleeps)
{
    imperfect_tower(2);
}

Test(solver, imperfect_tower_seed_3_drifts_under_1_cm_and_sleeps)
{
    imperfect_tower(3);
}

// ---------------------------------------------------------------------------
// 2. Mass ratio 100:1.
//
// A 1 m box of 1000 kg (density 1000) rests on a 1 m box of 10 kg (density 10)
// on the ground, both placed exactly touching. The light box carries 100 times
// its own weight: an iterative solver converges slowly at such ratios and
// lets the heavy box sink into the light one (or squeeze it out sideways).
// Goal: after 300 ticks of settling, over the next 300 ticks, the deepest
// penetration is at most 5 mm, measured three ways and all bounded:
// ls_world_info().max_penetration (deepest manifold point before each solve),
// the light box's lowest corner below the ground plane, and the heavy box's
// deepest bottom corner inside the light box's top face (in the light box's
// frame, corners within its face extents). The stack holds: the light box
// moves less than 1 cm horizontally from where it started and the heavy box
// stays on top of it: its centre above the light box's top face (more than
// 0.5 m above the light box's centre) and within that face's 0.5 m
// half-width horizontally.

// Depth of box `top`'s deepest corner below the top face of box `bottom`.
static double depth_into_top_face(const ls_body_state *top, const ls_body_state *bottom)
{
    double r[3][3], deepest = -1e9;
    quat_to_mat(bottom->orientation, r);
    double hb = to_d(bottom->shape.half_extents.y), hx = to_d(bottom->shape.half_extents.x);
    double hz = to_d(bottom->shape.half_extents.z);
    double pb[3] = {to_d(bottom->position.x), to_d(bottom->position.y), to_d(bottom->position.z)};
    for (int k = 0; k < 8; k++) {
        double c[3], d[3], local[3];
        box_corner(top, k, c);
        for (int i = 0; i < 3; i++) {
            d[i] = c[i] - pb[i];
        }
        for (int i = 0; i < 3; i++) {
            local[i] = r[0][i] * d[0] + r[1][i] * d[1] + r[2][i] * d[2];
        }
        if (local[1] > 0 && fabs(local[0]) <= hx + 1e-3 && fabs(local[2]) <= hz + 1e-3) {
            deepest = fmax(deepest, hb - local[1]);
        }
    }
    return deepest;
}

static double depth_below_ground(const ls_body_state *s)
{
    double lowest = 1e9;
    for (int k = 0; k < 8; k++) {
        double c[3];
        box_corner(s, k, c);
        lowest = fmin(lowest, c[1]);
    }
    return -lowest;
}

Test(solver, heavy_box_on_a_100_times_lighter_box_penetrates_at_most_5_mm_and_holds)
{
    ls_world *w = make_world(-9.81);
    add_ground(w);
    ls_body_id light = add_box(w, v3(0.5, 0.5, 0.5), v3(0, 0.5, 0), 0, 10);
    ls_body_id heavy = add_box(w, v3(0.5, 0.5, 0.5), v3(0, 1.5, 0), 0, 1000);
    cr_assert_eq(ls_body_mass(w, heavy), 100 * ls_body_mass(w, light), "mass ratio 100:1");
    ls_vec3 light0 = ls_body_position(w, light);
    step_n(w, 300);
    double info_pen = 0, ground_pen = -1e9, box_pen = -1e9;
    for (int t = 0; t < 300; t++) {
        ls_world_step(w);
        info_pen = fmax(info_pen, to_d(ls_world_info(w).max_penetration));
        ls_body_state sl, sh;
        cr_assert_eq(ls_body_get_state(w, light, &sl, NULL), LS_OK);
        cr_assert_eq(ls_body_get_state(w, heavy, &sh, NULL), LS_OK);
        ground_pen = fmax(ground_pen, depth_below_ground(&sl));
        box_pen = fmax(box_pen, depth_into_top_face(&sh, &sl));
    }
    ls_vec3 pl = ls_body_position(w, light), ph = ls_body_position(w, heavy);
    double squeeze = horizontal(light0, pl), offset = horizontal(pl, ph);
    double lift = to_d(ph.y - pl.y);
    cr_log_info("solver: 100:1 stack: max_penetration %.5f m, ground %.5f m, "
                "box-box %.5f m, "
                "light drift %.5f m, heavy offset %.5f m, height %.5f m",
                info_pen, ground_pen, box_pen, squeeze, offset, lift);
    cr_expect_leq(info_pen, 0.005, "deepest contact %.5f m (limit 5 mm)", info_pen);
    cr_expect_leq(ground_pen, 0.005, "light box %.5f m into the ground (limit 5 mm)", ground_pen);
    cr_expect_leq(box_pen, 0.005, "heavy box %.5f m into the light one (limit 5 mm)", box_pen);
    cr_expect_lt(squeeze, 0.01, "light box squeezed %.5f m sideways (limit 1 cm)", squeeze);
    cr_expect(lift > 0.5 && offset < 0.5, "heavy box not on top: height %.4f m, offset %.4f m",
              lift, offset);
    ls_world_destroy(w);
}

// ---------------------------------------------------------------------------
// 3. Dzhanibekov effect (tennis-racket theorem).
//
// A free box (no gravity) with half extents (0.1, 0.4, 0.7) m has principal
// moments I_x = m (0.4^2 + 0.7^2)/3, I_y = m (0.1^2 + 0.7^2)/3,
// I_z = m (0.1^2 + 0.4^2)/3, so I1 = I_z < I2 = I_y < I3 = I_x and y is the
// intermediate axis. It spins at W = 4 rad/s about y with a perturbation
// eps W about z (the smallest axis): w0 = (0, W, eps W), eps = 0.01 (0.57 deg).
//
// Linearised Euler equations about w = (0, W, 0): w1'' = lambda^2 w1 with
// lambda = W sqrt((I2 - I1)(I3 - I2) / (I1 I3)) = 0.6693 W = 2.677 /s. From
// w1(0) = eps W, w3(0) = 0 the solution is w1 = eps W cosh(lambda t): the
// growing mode has amplitude eps W / 2. The crude "grow eps to O(1)" time
// ln(1/eps)/lambda = 1.72 s leaves the O(1) undefined (a 23 % ambiguity here,
// almost the whole tolerance), so the test pins it: the growing mode joins the
// separatrix solution w1 = A sech(lambda (t - T)), w2 = W tanh(lambda (T - t))
// whose peak A = W sqrt(I2 (I3 - I2) / (I1 (I3 - I1))) follows from conserving
// |L|^2 and 2E; matching eps W / 2 e^{lambda t} = 2 A e^{lambda (t - T)} gives
//
//     T = (ln(1/eps) + ln(4 A / W)) / lambda = 2.222 s  (133 ticks at 60 Hz),
//
// the time at which w2 crosses zero: the body's intermediate axis R e_y then
// turns perpendicular to L and its dot with its initial direction goes
// negative. (The next flips follow every 2T; the first flip is the quantity
// asserted because it does not depend on how well a solver keeps the orbit
// over several periods, and test 4 covers conservation.) T is computed at run
// time from the body's actual (Q16.16-rounded) w0 and checked against a double
// precision RK4 integration of Euler's equations and q' = q (0, w)/2
// (h = 1e-4 s), which must agree within 1 %: they agree to 0.05 %.
// Goal (issue 13): the engine's flip time within T +- 30 %.

typedef struct rigid_state {
    double w[3]; // body-frame angular velocity
    double q[4]; // orientation (w, x, y, z)
} rigid_state;

static rigid_state euler_rate(const rigid_state *s, const double in[3])
{
    rigid_state d;
    const double *w = s->w, *q = s->q;
    d.w[0] = (in[1] - in[2]) * w[1] * w[2] / in[0];
    d.w[1] = (in[2] - in[0]) * w[2] * w[0] / in[1];
    d.w[2] = (in[0] - in[1]) * w[0] * w[1] / in[2];
    d.q[0] = 0.5 * (-q[1] * w[0] - q[2] * w[1] - q[3] * w[2]);
    d.q[1] = 0.5 * (q[0] * w[0] + q[2] * w[2] - q[3] * w[1]);
    d.q[2] = 0.5 * (q[0] * w[1] + q[3] * w[0] - q[1] * w[2]);
    d.q[3] = 0.5 * (q[0] * w[2] + q[1] * w[1] - q[2] * w[0]);
    return d;
}

static rigid_state rigid_add(const rigid_state *s, const rigid_state *d, double h)
{
    rigid_state r;
    for (int i = 0; i < 3; i++) {
        r.w[i] = s->w[i] + h * d->w[i];
    }
    for (int i = 0; i < 4; i++) {
        r.q[i] = s->q[i] + h * d->q[i];
    }
    return r;
}

// Reference: first time (s) the body y axis turns against its start, by RK4.
static double reference_flip_time(const double in[3], const double w0[3], double limit)
{
    rigid_state s = {{w0[0], w0[1], w0[2]}, {1, 0, 0, 0}};
    const double h = 1e-4;
    for (double t = h; t < limit; t += h) {
        rigid_state k1 = euler_rate(&s, in);
        rigid_state s2 = rigid_add(&s, &k1, h / 2);
        rigid_state k2 = euler_rate(&s2, in);
        rigid_state s3 = rigid_add(&s, &k2, h / 2);
        rigid_state k3 = euler_rate(&s3, in);
        rigid_state s4 = rigid_add(&s, &k3, h);
        rigid_state k4 = euler_rate(&s4, in);
        for (int i = 0; i < 3; i++) {
            s.w[i] += h / 6 * (k1.w[i] + 2 * k2.w[i] + 2 * k3.w[i] + k4.w[i]);
        }
        double n = 0;
        for (int i = 0; i < 4; i++) {
            s.q[i] += h / 6 * (k1.q[i] + 2 * k2.q[i] + 2 * k3.q[i] + k4.q[i]);
            n += s.q[i] * s.q[i];
        }
        // (R e_y) . e_y = 1 - 2 (x^2 + z^2) for a unit quaternion
        if (1 - 2 * (s.q[1] * s.q[1] + s.q[3] * s.q[3]) / n < 0) {
            return t;
        }
    }
    return limit;
}

Test(solver, dzhanibekov_box_flips_its_intermediate_axis_at_the_theoretical_time)
{
    ls_world *w = make_world(0);
    ls_body_def bd = ls_default_body_def();
    bd.shape.half_extents = v3(0.1, 0.4, 0.7);
    bd.shape.density = fx(100);
    bd.allow_sleep = false;
    bd.angular_velocity = v3(0, 4.0, 0.04);
    ls_error err;
    ls_body_id id = ls_body_create(w, &bd, &err);
    cr_assert_neq(id.index1, 0u, "%s", err.message);

    // Theory from the values the body actually holds.
    ls_body_state s;
    cr_assert_eq(ls_body_get_state(w, id, &s, NULL), LS_OK);
    double in[3];
    box_inertia(to_d(s.mass), s.shape.half_extents, in);
    double i1 = in[2], i2 = in[1], i3 = in[0];
    double big_w = to_d(s.angular_velocity.y), eps = to_d(s.angular_velocity.z) / big_w;
    double lambda = big_w * sqrt((i2 - i1) * (i3 - i2) / (i1 * i3));
    double amp = sqrt(i2 * (i3 - i2) / (i1 * (i3 - i1))); // A / W
    double theory = (log(1 / eps) + log(4 * amp)) / lambda;
    double w0[3] = {to_d(s.angular_velocity.x), big_w, to_d(s.angular_velocity.z)};
    double reference = reference_flip_time(in, w0, 3 * theory);
    cr_assert(fabs(reference - theory) <= 0.01 * theory,
              "theory %.4f s vs RK4 %.4f s: the derivation above is wrong", theory, reference);

    // The engine: first tick at which (R e_y) . e_y < 0 (R e_y starts as e_y).
    double dt = to_d(ls_tick_dt(60));
    int limit = (int)(3 * theory / dt), flip = -1;
    for (int t = 1; t <= limit && flip < 0; t++) {
        ls_world_step(w);
        double r[3][3];
        quat_to_mat(ls_body_orientation(w, id), r);
        if (r[1][1] < 0) {
            flip = t;
        }
    }
    double measured = flip < 0 ? INFINITY : flip * dt;
    cr_log_info("solver: dzhanibekov: eps %.5f, lambda %.4f /s, theory %.4f s, "
                "RK4 %.4f s, "
                "engine %.4f s (tick %d)",
                eps, lambda, theory, reference, measured, flip);
    cr_expect(flip >= 0, "no flip within %.2f s (theory %.3f s)", 3 * theory, theory);
    cr_expect(fabs(measured - theory) <= 0.3 * theory,
              "flip at %.3f s, theory %.3f s +- 30 %% [%.3f, %.3f]", measured, theory, 0.7 * theory,
              1.3 * theory);
    ls_world_destroy(w);
}

// ---------------------------------------------------------------------------
// 4. Angular momentum of a free box.
//
// A box of half extents (0.2, 0.3, 0.5) m (three distinct moments), density
// 100, no gravity, spun at w0 = (1, 2, 3) rad/s (world frame, identity
// orientation): not a principal axis, so the body tumbles (w precesses in
// the body frame). With no torque the world angular momentum
// L = R I_body R^T w is exactly conserved and so is the kinetic energy
// 1/2 w . L. Both are computed here in double from the body's reported mass,
// its dimensions (I_x = m (hy^2 + hz^2)/3, ...), orientation and angular
// velocity. Goals (issue 13) over 10 s (600 ticks): |L(t) - L(0)| / |L(0)|
// at most 2 % at every tick, and the kinetic energy never above its initial
// value by more than 1 % (an implicit gyroscopic term may lose energy; it
// must not gain it). A solver that keeps w fixed in the world frame (no
// gyroscopic term) fails both: L = R I R^T w turns with the body.

Test(solver, free_box_spun_off_axis_keeps_angular_momentum_within_2_percent_and_gains_no_energy)
{
    ls_world *w = make_world(0);
    ls_body_def bd = ls_default_body_def();
    bd.shape.half_extents = v3(0.2, 0.3, 0.5);
    bd.shape.density = fx(100);
    bd.allow_sleep = false;
    bd.angular_velocity = v3(1, 2, 3);
    ls_error err;
    ls_body_id id = ls_body_create(w, &bd, &err);
    cr_assert_neq(id.index1, 0u, "%s", err.message);
    double l0[3], l[3];
    double ke0 = box_momentum(w, id, l0);
    double l0_len = sqrt(l0[0] * l0[0] + l0[1] * l0[1] + l0[2] * l0[2]);
    double worst_dl = 0, worst_ke = 0, last_dl = 0;
    int worst_dl_tick = 0, worst_ke_tick = 0;
    for (int t = 1; t <= 600; t++) {
        ls_world_step(w);
        double ke = box_momentum(w, id, l);
        double dx = l[0] - l0[0], dy = l[1] - l0[1], dz = l[2] - l0[2];
        last_dl = sqrt(dx * dx + dy * dy + dz * dz) / l0_len;
        if (last_dl > worst_dl) {
            worst_dl = last_dl, worst_dl_tick = t;
        }
        if ((ke - ke0) / ke0 > worst_ke) {
            worst_ke = (ke - ke0) / ke0, worst_ke_tick = t;
        }
    }
    cr_log_info("solver: free box: |dL|/|L| max %.5f (tick %d), at 10 s %.5f; KE "
                "gain max "
                "%.5f (tick %d); |L0| %.4f, KE0 %.4f",
                worst_dl, worst_dl_tick, last_dl, worst_ke, worst_ke_tick, l0_len, ke0);
    cr_expect_leq(worst_dl, 0.02, "|dL|/|L| reached %.4f at tick %d (limit 2 %%)", worst_dl,
                  worst_dl_tick);
    cr_expect_leq(worst_ke, 0.01, "kinetic energy rose %.4f at tick %d (limit 1 %%)", worst_ke,
                  worst_ke_tick);
    ls_world_destroy(w);
}

// ---------------------------------------------------------------------------
// 5. Resting quality regression guards.
//
// The shipped pyramid (385 boxes in 10 levels, placed exactly touching) and
// pile (1000 boxes dropped), each with its own scene settings. The bounds are
// the values the solver at the start of issue 13 (8 velocity + 3 split-impulse
// iterations, no sub-steps) measured, rounded up in the last digit stated:
// the new solver must keep them or do better. Recorded here so that a
// regression shows as a failure, not as a drift in a log.

static ls_world *open_scene(const char *path, ls_scene *s)
{
    ls_error err;
    cr_assert_eq(ls_scene_load(path, s, &err), LS_OK, "%s:%u:%u %s", path, err.line, err.column,
                 err.message);
    ls_error ierr;
    ls_world *w = ls_scene_instantiate(s, &ierr);
    cr_assert_not_null(w, "%s", ierr.message);
    return w;
}

// First tick (1-based) after which every dynamic body is asleep, or 0.
static uint32_t note_settled(const ls_world *w, uint32_t dynamic, uint32_t tick, uint32_t settled)
{
    return settled == 0 && ls_world_info(w).asleep_bodies == dynamic ? tick : settled;
}

// Pyramid, all 1000 ticks of the scene: the deepest contact at any tick
// (ls_world_info().max_penetration), the top box's (highest start) horizontal
// drift, and the boxes asleep at the end. The tick at which all are asleep is
// logged, not asserted. Measured before issue 13: 0.001541 m, 0.001167 m,
// 385 of 385 asleep (all from tick 33).
#define PYRAMID_MAX_PENETRATION 0.00155 // m
#define PYRAMID_TOP_DRIFT       0.00117 // m
#define PYRAMID_MIN_ASLEEP      385u    // bodies: all

Test(solver, pyramid_rests_no_worse_than_before_issue_13)
{
    ls_scene s;
    ls_world *w = open_scene("tools/scenes/pyramid.scene", &s);
    uint32_t n = ls_world_body_count(w), top = 0, dynamic = 0;
    for (uint32_t i = 0; i < n; i++) {
        ls_body_id id = ls_world_body_at(w, i);
        if (ls_body_type_of(w, id) != LS_BODY_DYNAMIC) {
            continue;
        }
        dynamic++;
        if (ls_body_position(w, id).y > ls_body_position(w, ls_world_body_at(w, top)).y) {
            top = i;
        }
    }
    ls_body_id top_id = ls_world_body_at(w, top);
    ls_vec3 top0 = ls_body_position(w, top_id);
    double pen = 0;
    uint32_t settled = 0;
    for (uint32_t t = 1; t <= 1000; t++) {
        ls_world_step(w);
        pen = fmax(pen, to_d(ls_world_info(w).max_penetration));
        settled = note_settled(w, dynamic, t, settled);
    }
    double drift = horizontal(top0, ls_body_position(w, top_id));
    uint32_t asleep = ls_world_info(w).asleep_bodies;
    cr_log_info("solver: pyramid: max penetration %.6f m, top drift %.6f m, asleep %u/%u "
                "(all asleep from tick %u; 0: not in the run)",
                pen, drift, asleep, dynamic, settled);
    cr_expect_leq(pen, PYRAMID_MAX_PENETRATION, "deepest contact %.6f m (bound %.6f)", pen,
                  PYRAMID_MAX_PENETRATION);
    cr_expect_leq(drift, PYRAMID_TOP_DRIFT, "top drift %.6f m (bound %.6f)", drift,
                  PYRAMID_TOP_DRIFT);
    cr_expect_geq(asleep, PYRAMID_MIN_ASLEEP, "%u asleep (bound %u)", asleep, PYRAMID_MIN_ASLEEP);
    ls_world_destroy(w);
    ls_scene_free(&s);
}

// Pile of 1000 boxes dropped, for the scene's own 600 ticks (about 4 s of CPU
// before issue 13): the deepest contact over the last 60 ticks (the pile has
// landed by tick 300) and the boxes asleep at the end. The tick at which all
// are asleep (if any) is logged, not asserted. Measured before issue 13:
// 0.007767 m, 840 of 1000 asleep (all 1000 by tick 780).
#define PILE_TICKS           600u
#define PILE_MAX_PENETRATION 0.00777 // m
#define PILE_MIN_ASLEEP      840u    // bodies

Test(solver, pile_1000_rests_no_worse_than_before_issue_13)
{
    ls_scene s;
    ls_world *w = open_scene("tools/scenes/pile_1000.scene", &s);
    double pen = 0;
    uint32_t settled = 0,
             dynamic = ls_world_body_count(w) - 1; // all but the ground plane
    for (uint32_t t = 1; t <= PILE_TICKS; t++) {
        ls_world_step(w);
        if (t > PILE_TICKS - 60) {
            pen = fmax(pen, to_d(ls_world_info(w).max_penetration));
        }
        settled = note_settled(w, dynamic, t, settled);
    }
    uint32_t asleep = ls_world_info(w).asleep_bodies;
    cr_log_info("solver: pile_1000: max penetration (last 60 ticks) %.6f m, asleep %u/%u "
                "(all asleep from tick %u; 0: not in the run), overflow %u",
                pen, asleep, dynamic, settled, ls_world_info(w).overflow_count);
    cr_expect_leq(pen, PILE_MAX_PENETRATION, "deepest contact %.6f m (bound %.6f)", pen,
                  PILE_MAX_PENETRATION);
    cr_expect_geq(asleep, PILE_MIN_ASLEEP, "%u asleep (bound %u)", asleep, PILE_MIN_ASLEEP);
    ls_world_destroy(w);
    ls_scene_free(&s);
}

// ---------------------------------------------------------------------------
// 6. Energy.
//
// Total energy E = sum of 1/2 m v^2 + 1/2 w . (R I R^T w) + m g y, potential
// measured from the ground plane (y = 0, the natural zero: E is then bounded
// below by the resting boxes' weight times their half heights, never near
// zero, so a relative bound is meaningful). Friction and inelastic
// (restitution 0) impacts only remove energy, so after contact starts no tick
// may add more than 1 % of the energy the world had at the previous tick:
// E(t+1) - E(t) <= 0.01 E(t) (issue 13). Position correction that lifts a
// box out of a penetration d adds m g d of potential energy, far below 1 % per
// tick at a bounded push speed; friction anchoring that springs a sliding box
// back, or a push that overshoots, would exceed it.

typedef struct energy_track {
    double worst;   // largest (E(t+1) - E(t)) / E(t) seen
    int worst_tick; // tick of it
    double first;   // E at the tick contact started
    double last;    // E at the end
} energy_track;

static double world_energy(const ls_world *w, const ls_body_id *ids, int n)
{
    double e = 0;
    for (int i = 0; i < n; i++) {
        e += box_energy(w, ids[i], 9.81);
    }
    return e;
}

static energy_track track_energy(ls_world *w, const ls_body_id *ids, int n, int ticks)
{
    energy_track tr = {0, 0, 0, 0};
    double prev = 0;
    bool started = false;
    for (int t = 1; t <= ticks; t++) {
        ls_world_step(w);
        double e = world_energy(w, ids, n);
        if (started) {
            double gain = (e - prev) / prev;
            if (gain > tr.worst) {
                tr.worst = gain, tr.worst_tick = t;
            }
        } else if (ls_world_info(w).contacts > 0) {
            started = true, tr.first = e;
        }
        prev = e;
    }
    cr_assert(started, "contact never started");
    tr.last = prev;
    return tr;
}

// One 1 m box (100 kg) resting on the ground, launched at (3, 0, 1.5) m/s:
// friction 0.6 stops it in |v| / (0.6 g) = 0.57 s; run 2 s.
Test(solver, sliding_box_never_gains_over_1_percent_energy_per_tick)
{
    ls_world *w = make_world(-9.81);
    add_ground(w);
    ls_body_def bd = ls_default_body_def();
    bd.position = v3(0, 0.5, 0);
    bd.linear_velocity = v3(3, 0, 1.5);
    bd.shape.density = fx(100);
    ls_error err;
    ls_body_id id = ls_body_create(w, &bd, &err);
    cr_assert_neq(id.index1, 0u, "%s", err.message);
    energy_track tr = track_energy(w, &id, 1, 120);
    cr_log_info("solver: sliding box: worst tick gain %.6f (tick %d), E %.2f J -> %.2f J", tr.worst,
                tr.worst_tick, tr.first, tr.last);
    cr_expect_leq(tr.worst, 0.01, "energy rose by %.4f of E at tick %d (limit 1 %%)", tr.worst,
                  tr.worst_tick);
    ls_world_destroy(w);
}

// Four 1 m boxes (100 kg each) stacked with 5 cm gaps, the lowest 5 cm above
// the ground: they fall, hit one another inelastically and settle; run 5 s.
Test(solver, dropped_stack_never_gains_over_1_percent_energy_per_tick)
{
    enum { N = 4 };
    ls_world *w = make_world(-9.81);
    add_ground(w);
    ls_body_id ids[N];
    for (int i = 0; i < N; i++) {
        ids[i] = add_box(w, v3(0.5, 0.5, 0.5), v3(0, 0.55 + 1.05 * i, 0), 0, 100);
    }
    energy_track tr = track_energy(w, ids, N, 300);
    cr_log_info("solver: dropped stack: worst tick gain %.6f (tick %d), E %.2f J "
                "-> %.2f J",
                tr.worst, tr.worst_tick, tr.first, tr.last);
    cr_expect_leq(tr.worst, 0.01, "energy rose by %.4f of E at tick %d (limit 1 %%)", tr.worst,
                  tr.worst_tick);
    ls_world_destroy(w);
}

// The lightest bodies of SPEC.md §5 stay inside the solver's range (issue 26:
// with inverse masses in Q8.24 a body under 1/64 kg overflowed): a 0.012 kg
// sphere (radius 0.5 m, density 0.0229) and a 0.01 kg sphere resting on the
// ground and a 0.01 kg sphere stacked on a 1 kg box rest within 1 mm of their
// rest height, asleep, with no overflow.
Test(solver, the_lightest_bodies_rest_without_overflow)
{
    ls_world *w = make_world(-9.81);
    add_ground(w);
    const double mass[2] = {0.012, 0.01};
    ls_body_id s[2], box;
    for (int i = 0; i < 2; i++) {
        ls_body_def bd = ls_default_body_def();
        bd.position = v3(3.0 * i, 0.5, 0);
        bd.shape.type = LS_SHAPE_SPHERE;
        bd.shape.radius = fx(0.5);
        bd.shape.density = fx(mass[i] / (4.0 / 3.0 * 3.14159265358979 * 0.125));
        ls_error err;
        s[i] = ls_body_create(w, &bd, &err);
        cr_assert_neq(s[i].index1, 0u, "%s", err.message);
    }
    ls_body_def bb = ls_default_body_def();
    bb.position = v3(-3, 0.5, 0);
    bb.shape.type = LS_SHAPE_BOX;
    bb.shape.half_extents = v3(0.5, 0.5, 0.5);
    bb.shape.density = fx(1);
    ls_error err;
    box = ls_body_create(w, &bb, &err);
    cr_assert_neq(box.index1, 0u, "%s", err.message);
    ls_body_def top = ls_default_body_def();
    top.position = v3(-3, 1.5, 0);
    top.shape.type = LS_SHAPE_SPHERE;
    top.shape.radius = fx(0.5);
    top.shape.density = fx(0.01 / (4.0 / 3.0 * 3.14159265358979 * 0.125));
    ls_body_id on_box = ls_body_create(w, &top, &err);
    cr_assert_neq(on_box.index1, 0u, "%s", err.message);
    for (int t = 0; t < 300; t++) {
        ls_world_step(w);
    }
    cr_assert_eq(ls_world_info(w).overflow_count, 0u, "overflow at tick %u",
                 ls_world_info(w).overflow_tick);
    for (int i = 0; i < 2; i++) {
        cr_assert_lt(fabs(to_d(ls_body_position(w, s[i]).y) - 0.5), 0.001, "sphere %d at %.5f", i,
                     to_d(ls_body_position(w, s[i]).y));
        cr_assert(ls_body_is_asleep(w, s[i]), "sphere %d awake", i);
    }
    cr_assert_lt(fabs(to_d(ls_body_position(w, on_box).y) - 1.5), 0.001, "on the box at %.5f",
                 to_d(ls_body_position(w, on_box).y));
    cr_assert(ls_body_is_asleep(w, on_box));
    ls_world_destroy(w);
}

// Velocities enter the solver's 32-bit sweeps, so setting one beyond the
// creation limits (512 m/s, 128 rad/s) is refused and changes nothing, for a
// kinematic body (never clamped by the solver) as for a dynamic one.
Test(solver, a_velocity_beyond_the_limits_is_refused)
{
    ls_world *w = make_world(-9.81);
    ls_body_def bd = ls_default_body_def();
    bd.type = LS_BODY_KINEMATIC;
    bd.shape.type = LS_SHAPE_BOX;
    bd.shape.half_extents = v3(0.5, 0.5, 0.5);
    ls_error err;
    ls_body_id k = ls_body_create(w, &bd, &err);
    cr_assert_neq(k.index1, 0u, "%s", err.message);
    cr_assert_eq(ls_body_set_velocity(w, k, v3(512, 0, 0), v3(0, 0, 128)), LS_OK);
    cr_assert_eq(ls_body_set_velocity(w, k, v3(20000, 0, 0), v3(0, 0, 0)), LS_ERR_OUT_OF_RANGE);
    cr_assert_eq(ls_body_set_velocity(w, k, v3(0, 0, 0), v3(0, 129, 0)), LS_ERR_OUT_OF_RANGE);
    cr_assert_eq(ls_body_linear_velocity(w, k).x, LS_FX_INT(512), "unchanged");
    cr_assert_eq(ls_body_angular_velocity(w, k).z, LS_FX_INT(128), "unchanged");
    ls_world_destroy(w);
}
