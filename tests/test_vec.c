// SPDX-License-Identifier: MIT
// vec3, quat, mat3: exact wide accumulation, normalisation of tiny and zero
// vectors, rotation accuracy and the SPD inverse.
#include "ls/mat3.h"
#include "ls/rng.h"
#include "test_util.h"

#include <criterion/criterion.h>
#include <math.h>

#define PI 3.14159265358979323846

static double val(ls_fx v)
{
    return (double)v / 65536.0;
}

Test(vec3, dot_is_exact_sum_rounded_once_beyond_the_q16_square_limit)
{
    // 200 * 200 overflows Q16.16 as a single product, but the dot of (200, 200, 0)
    // with (200, -199, 0) is 200, representable: a wide accumulator must get it.
    ls_vec3 a = ls_vec3_make(200 << 16, 200 << 16, 0), b = ls_vec3_make(200 << 16, -(199 << 16), 0);
    cr_assert_eq(ls_vec3_dot(a, b), 200 << 16);
    // Sum of three products each below half an ulp: rounding once keeps it.
    ls_vec3 c = ls_vec3_make(128, 128, 128), d = ls_vec3_make(128, 128, 128);
    cr_assert_eq(ls_vec3_dot(c, d), 1); // 3 * 2^14 / 2^16 = 0.75 ulp -> 1
}

Test(vec3, cross_is_exact_for_large_components_without_overflow)
{
    ls_vec3 a = ls_vec3_make(LS_FX_MAX, LS_FX_MIN, LS_FX_MAX);
    ls_vec3 b = ls_vec3_make(LS_FX_MAX, LS_FX_MAX, LS_FX_MIN);
    ls_vec3 c = ls_vec3_cross(a, b); // saturates, must not trip UBSan
    cr_assert(c.x == LS_FX_MAX || c.x == LS_FX_MIN || c.x == 0);
    ls_vec3 x = ls_vec3_make(LS_FX_ONE, 0, 0), y = ls_vec3_make(0, LS_FX_ONE, 0);
    cr_assert(ls_vec3_equal(ls_vec3_cross(x, y), ls_vec3_make(0, 0, LS_FX_ONE)));
}

Test(vec3, length_is_nearest_ulp_even_when_the_square_overflows_q16)
{
    ls_vec3 v = ls_vec3_make(3000 << 16, 4000 << 16, 0);
    cr_assert_eq(ls_vec3_len(v), 5000 << 16);
    ls_rng r = ls_rng_make(5, 5);
    for (int i = 0; i < 100000; i++) {
        ls_vec3 w = ls_vec3_make(ls_rng_range(&r, -(1 << 28), 1 << 28),
                                 ls_rng_range(&r, -(1 << 28), 1 << 28),
                                 ls_rng_range(&r, -(1 << 28), 1 << 28));
        double exact = sqrt(val(w.x) * val(w.x) + val(w.y) * val(w.y) + val(w.z) * val(w.z));
        cr_assert_leq(fabs(val(ls_vec3_len(w)) - exact), 0.5 / 65536 + 1e-9);
    }
}

Test(vec3, normalize_gives_unit_length_within_2_ulp_for_tiny_and_huge_vectors)
{
    ls_rng r = ls_rng_make(6, 6);
    for (int i = 0; i < 100000; i++) {
        int shift = (int)ls_rng_below(&r, 30);
        ls_vec3 w = ls_vec3_make((ls_fx)((int32_t)ls_rng_next_u32(&r) >> shift),
                                 (ls_fx)((int32_t)ls_rng_next_u32(&r) >> shift),
                                 (ls_fx)((int32_t)ls_rng_next_u32(&r) >> shift));
        if (ls_vec3_equal(w, ls_vec3_zero())) {
            continue;
        }
        ls_vec3 n = ls_vec3_normalize(w, ls_vec3_zero());
        double len = sqrt(val(n.x) * val(n.x) + val(n.y) * val(n.y) + val(n.z) * val(n.z));
        cr_assert_leq(fabs(len - 1.0), 2.0 / 65536, "|n| = %.8f for (%d %d %d)", len, w.x, w.y,
                      w.z);
    }
    // A vector of one raw unit normalises exactly.
    cr_assert(ls_vec3_equal(ls_vec3_normalize(ls_vec3_make(0, -1, 0), ls_vec3_zero()),
                            ls_vec3_make(0, -LS_FX_ONE, 0)));
}

Test(vec3, normalize_of_zero_returns_the_fallback)
{
    ls_vec3 f = ls_vec3_make(0, LS_FX_ONE, 0);
    cr_assert(ls_vec3_equal(ls_vec3_normalize(ls_vec3_zero(), f), f));
}

Test(quat, rotation_matches_double_precision_within_4_ulp_per_unit_length)
{
    ls_rng r = ls_rng_make(8, 8);
    for (int i = 0; i < 20000; i++) {
        ls_vec3 axis = ls_vec3_normalize(ls_vec3_make(ls_rng_range(&r, -LS_FX_ONE, LS_FX_ONE),
                                                      ls_rng_range(&r, -LS_FX_ONE, LS_FX_ONE),
                                                      ls_rng_range(&r, -LS_FX_ONE, LS_FX_ONE)),
                                         ls_vec3_make(LS_FX_ONE, 0, 0));
        ls_fx angle = ls_rng_range(&r, -LS_FX_PI, LS_FX_PI);
        ls_quat q = ls_quat_from_axis_angle(axis, angle);
        ls_vec3 v = ls_vec3_make(ls_rng_range(&r, -(10 << 16), 10 << 16),
                                 ls_rng_range(&r, -(10 << 16), 10 << 16),
                                 ls_rng_range(&r, -(10 << 16), 10 << 16));
        ls_vec3 got = ls_quat_rotate(q, v);
        // Reference: rotate with the same (rounded) quaternion in double.
        double qx = val(q.x), qy = val(q.y), qz = val(q.z), qw = val(q.w);
        double vx = val(v.x), vy = val(v.y), vz = val(v.z);
        double tx = 2 * (qy * vz - qz * vy), ty = 2 * (qz * vx - qx * vz),
               tz = 2 * (qx * vy - qy * vx);
        double ex = vx + qw * tx + (qy * tz - qz * ty);
        double ey = vy + qw * ty + (qz * tx - qx * tz);
        double ez = vz + qw * tz + (qx * ty - qy * tx);
        double err =
            fmax(fabs(val(got.x) - ex), fmax(fabs(val(got.y) - ey), fabs(val(got.z) - ez)));
        cr_assert_leq(err, 40.0 / 65536, "rotation error %.3g",
                      err); // |v| <= 17.3 -> 4 ulp per unit
    }
}

Test(quat, mul_by_conjugate_is_identity_within_2_ulp)
{
    ls_quat q = ls_quat_from_axis_angle(ls_vec3_make(0, LS_FX_ONE, 0), fx(0.7));
    ls_quat p = ls_quat_mul(q, ls_quat_conj(q));
    cr_assert_leq(abs(p.w - LS_FX_ONE), 2);
    cr_assert_leq(abs(p.x) + abs(p.y) + abs(p.z), 2);
}

Test(quat, integration_of_constant_spin_tracks_the_exact_angle)
{
    // 1 rad/s about Y for 600 ticks of 1/60 s = 10 rad.
    ls_quat q = ls_quat_identity();
    ls_vec3 w = ls_vec3_make(0, LS_FX_ONE, 0);
    ls_fx dt = ls_fx_from_ratio(1, 60);
    for (int i = 0; i < 600; i++) {
        q = ls_quat_integrate(q, w, dt);
    }
    double angle = 2 * atan2(val(q.y), val(q.w));
    double expected = fmod(600 * val(dt), 2 * PI);
    double diff = fmod(angle - expected + 4 * PI, 2 * PI);
    diff = diff > PI ? diff - 2 * PI : diff;
    // First-order integration loses |w dt|^2 / 12 per step in angle: 600 * 2.3e-5.
    cr_assert_leq(fabs(diff), 0.02, "angle drift %.5f rad", diff);
    double norm =
        sqrt(val(q.x) * val(q.x) + val(q.y) * val(q.y) + val(q.z) * val(q.z) + val(q.w) * val(q.w));
    cr_assert_leq(fabs(norm - 1), 2.0 / 65536);
}

Test(quat, normalize_of_zero_is_identity)
{
    cr_assert(ls_quat_equal(ls_quat_normalize(ls_quat_make(0, 0, 0, 0)), ls_quat_identity()));
}

Test(mat3, from_quat_rotates_like_the_quaternion_within_3_ulp)
{
    ls_quat q = ls_quat_from_axis_angle(
        ls_vec3_normalize(ls_vec3_make(LS_FX_ONE, 2 * LS_FX_ONE, -LS_FX_ONE), ls_vec3_zero()),
        fx(1.1));
    ls_mat3 m = ls_mat3_from_quat(q);
    ls_vec3 v = ls_vec3_make(fx(1.5), fx(-0.25), fx(2.0));
    ls_vec3 a = ls_mat3_mul_vec(m, v), b = ls_quat_rotate(q, v);
    cr_assert_leq(abs(a.x - b.x) + abs(a.y - b.y) + abs(a.z - b.z), 9);
    ls_vec3 back = ls_mat3_mul_tvec(m, a);
    cr_assert_leq(abs(back.x - v.x) + abs(back.y - v.y) + abs(back.z - v.z), 9);
}

Test(mat3, spd_inverse_times_matrix_is_identity_for_inertia_tensors)
{
    ls_rng r = ls_rng_make(11, 11);
    for (int i = 0; i < 2000; i++) {
        // World inertia of a random box: R diag(I) R^T with moments 0.01 .. 2000.
        ls_vec3 d =
            ls_vec3_make(ls_rng_range(&r, fx(0.01), fx(2000)), ls_rng_range(&r, fx(0.01), fx(2000)),
                         ls_rng_range(&r, fx(0.01), fx(2000)));
        ls_fx hi = ls_fx_max(d.x, ls_fx_max(d.y, d.z)), lo = ls_fx_min(d.x, ls_fx_min(d.y, d.z));
        if (val(hi) / val(lo) > 100) {
            continue; // keep the condition number where Q16.16 can represent the inverse
        }
        ls_quat q = ls_quat_from_axis_angle(ls_vec3_make(0, 0, LS_FX_ONE),
                                            ls_rng_range(&r, -LS_FX_PI, LS_FX_PI));
        ls_mat3 m = ls_mat3_rotate_diag(ls_mat3_from_quat(q), d), inv;
        cr_assert(ls_mat3_inverse_spd(m, &inv));
        // Compare with the inverse computed in double from the same Q16.16 entries.
        double a[3][3], id[3][3];
        for (int k = 0; k < 3; k++) {
            ls_vec3 row = m.row[k];
            a[k][0] = val(row.x), a[k][1] = val(row.y), a[k][2] = val(row.z);
        }
        for (int k = 0; k < 3; k++) {
            ls_vec3 row = inv.row[k];
            double ir[3] = {val(row.x), val(row.y), val(row.z)};
            for (int j = 0; j < 3; j++) {
                id[k][j] = ir[0] * a[0][j] + ir[1] * a[1][j] + ir[2] * a[2][j];
            }
        }
        for (int k = 0; k < 3; k++) {
            for (int j = 0; j < 3; j++) {
                double want = k == j ? 1.0 : 0.0;
                // Inverse entries carry 0.5 ulp of rounding, amplified by |m| entries.
                double tol = 0.6 / 65536 * (fabs(a[0][j]) + fabs(a[1][j]) + fabs(a[2][j])) + 1e-3;
                cr_assert_leq(fabs(id[k][j] - want), tol, "inv*m[%d][%d] = %.6f", k, j, id[k][j]);
            }
        }
    }
}

Test(mat3, spd_inverse_refuses_singular_and_indefinite_matrices)
{
    ls_mat3 out;
    cr_assert(!ls_mat3_inverse_spd(ls_mat3_diag(ls_vec3_make(LS_FX_ONE, 0, LS_FX_ONE)), &out));
    cr_assert(
        !ls_mat3_inverse_spd(ls_mat3_diag(ls_vec3_make(LS_FX_ONE, -LS_FX_ONE, LS_FX_ONE)), &out));
    cr_assert(!ls_mat3_inverse_spd(ls_mat3_diag(ls_vec3_zero()), &out));
    cr_assert(ls_mat3_inverse_spd(
        ls_mat3_diag(ls_vec3_make(4 * LS_FX_ONE, 2 * LS_FX_ONE, LS_FX_ONE)), &out));
    cr_assert(ls_vec3_equal(out.row[0], ls_vec3_make(LS_FX_ONE / 4, 0, 0)));
    cr_assert(ls_vec3_equal(out.row[1], ls_vec3_make(0, LS_FX_ONE / 2, 0)));
}
