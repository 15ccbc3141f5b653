// SPDX-License-Identifier: MIT
// ls/render_float.h: Q16.16 -> float/double for renderers. Exact where the
// format allows it, one rounding to nearest elsewhere, components in the
// documented order, and pose matrices that are rigid column-major transforms.
#include "ls/render_float.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>

Test(render_float, simple_values_are_exact_in_float_and_double)
{
    const struct {
        ls_fx raw;
        double value;
    } cases[] = {
        {0, 0.0},
        {LS_FX_ONE, 1.0},
        {98304, 1.5},                     // 1.5
        {-98304, -1.5},                   // -1.5
        {1, 1.0 / 65536.0},               // the smallest step, 2^-16
        {-1, -1.0 / 65536.0},             // its negative
        {-6553600, -100.0},               // -100
        {16777215, 255.9999847412109375}, // 2^24 - 1 raw: the last exact float
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cr_assert_eq(ls_render_double(cases[i].raw), cases[i].value, "double of raw %d",
                     (int)cases[i].raw);
        cr_assert_eq(ls_render_float(cases[i].raw), (float)cases[i].value, "float of raw %d",
                     (int)cases[i].raw);
        cr_assert_eq((double)ls_render_float(cases[i].raw), cases[i].value,
                     "float of raw %d is not exact", (int)cases[i].raw);
    }
}

Test(render_float, extremes_are_exact_in_double_and_rounded_to_nearest_in_float)
{
    // +32767.99998 and -32768: the largest and smallest Q16.16 values.
    cr_assert_eq(ls_render_double(INT32_MAX), 32767.9999847412109375);
    cr_assert_eq(ls_render_double(INT32_MIN), -32768.0);
    cr_assert_eq(ls_render_double(-INT32_MAX), -32767.9999847412109375);
    // 31 significant bits do not fit a float's 24: the nearest float is 32768.
    cr_assert_eq(ls_render_float(INT32_MAX), 32768.0f);
    cr_assert_eq(ls_render_float(-INT32_MAX), -32768.0f);
    cr_assert_eq(ls_render_float(INT32_MIN), -32768.0f);
    // Just above 256 floats are 2^-15 apart: a raw half-way value rounds to even.
    cr_assert_eq(ls_render_float(16777217), 256.0f);                   // 256 + 2^-16
    cr_assert_eq(ls_render_float(16777219), 256.0f + 1.0f / 16384.0f); // 256 + 3 * 2^-16
}

Test(render_float, every_value_below_256_is_exact_and_every_other_rounds_once)
{
    // Exhaustive where a float holds the value exactly (|raw| <= 2^24).
    for (int32_t raw = -(1 << 24); raw <= (1 << 24); raw++) {
        if ((double)ls_render_float(raw) != ls_render_double(raw)) {
            cr_assert_fail("raw %d: float %.9g, exact %.17g", (int)raw,
                           (double)ls_render_float(raw), ls_render_double(raw));
        }
    }
    // Beyond: a stride through the whole range. The double is exact, so
    // (float) of it is the correctly rounded float; ours must be that one.
    for (int64_t r = INT32_MIN; r <= INT32_MAX; r += 4099) {
        ls_fx raw = (ls_fx)r;
        float f = ls_render_float(raw);
        double d = ls_render_double(raw);
        if (f != (float)d ||
            fabs((double)f - d) > 0.5 * ((double)nextafterf(fabsf(f), INFINITY) - fabsf(f))) {
            cr_assert_fail("raw %d: float %.9g, exact %.17g", (int)raw, (double)f, d);
        }
    }
}

Test(render_float, vectors_and_quaternions_keep_their_component_order)
{
    ls_vec3 v = ls_vec3_make(LS_FX_ONE, -98304, INT32_MAX);
    float vf[3];
    double vd[3];
    ls_render_vec3f(v, vf);
    ls_render_vec3d(v, vd);
    cr_assert(vf[0] == 1.0f && vf[1] == -1.5f && vf[2] == 32768.0f);
    cr_assert(vd[0] == 1.0 && vd[1] == -1.5 && vd[2] == 32767.9999847412109375);

    ls_quat q = ls_quat_make(1, 2, 3, LS_FX_ONE); // x, y, z, w
    float qf[4];
    double qd[4];
    ls_render_quatf(q, qf);
    ls_render_quatd(q, qd);
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(qd[i], (i + 1) / 65536.0, "component %d", i);
        cr_assert_eq(qf[i], (float)((i + 1) / 65536.0), "component %d", i);
    }
    cr_assert(qd[3] == 1.0 && qf[3] == 1.0f);
}

Test(render_float, mat3_is_column_major)
{
    ls_mat3 m;
    for (int r = 0; r < 3; r++) {
        m.row[r] = ls_vec3_make(ls_fx_from_int(r * 3 + 0), ls_fx_from_int(r * 3 + 1),
                                ls_fx_from_int(r * 3 + 2));
    }
    float out[9];
    ls_render_mat3f(m, out);
    for (int r = 0; r < 3; r++) {
        for (int c = 0; c < 3; c++) {
            cr_assert_eq(out[c * 3 + r], (float)(r * 3 + c), "row %d column %d", r, c);
        }
    }
}

// The world point of body-local point p under the column-major matrix m.
static void apply(const double m[16], const double p[3], double out[3])
{
    for (int r = 0; r < 3; r++) {
        out[r] = m[0 * 4 + r] * p[0] + m[1 * 4 + r] * p[1] + m[2 * 4 + r] * p[2] + m[3 * 4 + r];
    }
}

Test(render_float, transform_is_a_column_major_rigid_pose)
{
    // Identity orientation: the translation sits in out[12..14].
    double m[16];
    ls_render_transformd(ls_vec3_make(LS_FX_ONE, -98304, 3 * LS_FX_ONE), ls_quat_identity(), m);
    const double expected[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 1, -1.5, 3, 1};
    for (int i = 0; i < 16; i++) {
        cr_assert_eq(m[i], expected[i], "identity entry %d", i);
    }

    // 90 degrees about +y (Q16.16 sin 45 = cos 45 = 46341): the body's x axis
    // points along world -z, and a local point lands where ls_quat_rotate
    // (the simulation's own integer rotation) puts it, to its rounding.
    ls_quat q = ls_quat_make(0, 46341, 0, 46341);
    ls_vec3 pos = ls_vec3_make(ls_fx_from_int(10), ls_fx_from_int(2), ls_fx_from_int(-5));
    ls_render_transformd(pos, q, m);
    cr_assert(fabs(m[0]) < 1e-9 && fabs(m[1]) < 1e-9 && fabs(m[2] + 1.0) < 1e-9,
              "x axis (%g %g %g)", m[0], m[1], m[2]);
    ls_vec3 local = ls_vec3_make(ls_fx_from_int(2), LS_FX_ONE / 2, -LS_FX_ONE);
    ls_vec3 world = ls_vec3_add(ls_quat_rotate(q, local), pos);
    double p[3], w[3];
    ls_render_vec3d(local, p);
    apply(m, p, w);
    cr_assert(fabs(w[0] - ls_render_double(world.x)) < 1e-4 &&
                  fabs(w[1] - ls_render_double(world.y)) < 1e-4 &&
                  fabs(w[2] - ls_render_double(world.z)) < 1e-4,
              "(%g %g %g) vs (%g %g %g)", w[0], w[1], w[2], ls_render_double(world.x),
              ls_render_double(world.y), ls_render_double(world.z));

    // A quaternion 1e-4 off unit length (a Q16.16 orientation is unit only to
    // its rounding) still gives a pure rotation: orthonormal columns.
    ls_render_transformd(pos, ls_quat_make(20000, -30000, 12345, 51000), m);
    for (int a = 0; a < 3; a++) {
        for (int b = 0; b < 3; b++) {
            double dot =
                m[a * 4] * m[b * 4] + m[a * 4 + 1] * m[b * 4 + 1] + m[a * 4 + 2] * m[b * 4 + 2];
            cr_assert(fabs(dot - (a == b ? 1.0 : 0.0)) < 1e-12, "columns %d.%d = %.17g", a, b, dot);
        }
    }

    // The float matrix is the double one rounded once per entry.
    float mf[16];
    ls_render_transformf(pos, ls_quat_make(20000, -30000, 12345, 51000), mf);
    for (int i = 0; i < 16; i++) {
        cr_assert_eq(mf[i], (float)m[i], "entry %d", i);
    }
}
