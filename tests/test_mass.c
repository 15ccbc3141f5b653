// SPDX-License-Identifier: MIT
// Mass properties against the analytic values (issue 29): every shape kind,
// across the documented size range (0.05..64 m) and mass range (0.01..1000
// kg), gets its mass within 0.1 % and its inertia within 0.1 % of the exact
// value for its (quantized) sizes and density. The body's inverse inertia is
// stored in Q16.16, so it is checked within 0.1 % or 0.6 ulp, whichever is
// larger (beyond 655 kg m^2 one ulp of 1/I is more than 0.1 %). Also: the
// two cases the issue measured (a 5 cm box of water weighed 0.9766 kg, a
// 5 cm sphere 3.8 % light), read back through the public API, and compounds.
#include "../fixmath_phys/src/collision/geom.h"
#include "../fixmath_phys/src/collision/shape_kind.h"
#include "../fixmath_phys/src/dynamics/mass.h"
#include "ls/hull.h"
#include "ls/world.h"
#include "test_util.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>

#define PI 3.14159265358979323846

typedef struct analytic {
    double m;    // kg
    double i[3]; // principal moments about the centre, kg m^2 (body axes)
} analytic;

static double q16(ls_fx v)
{
    return v / 65536.0;
}

static double rel(double got, double want)
{
    return fabs(got - want) / fabs(want);
}

// Sizes tried for each kind: the documented range's ends and points between.
static const double sizes[] = {0.05, 0.06, 0.08, 0.1, 0.15, 0.25, 0.4, 0.5, 0.75, 1,
                               1.5,  2,    3,    5,   8,    10,   16,  25,  40,   64};
static const double masses[] = {0.01, 0.03, 0.1, 0.5, 1, 5, 20, 100, 400, 1000};

static bool in_range(const analytic *a)
{
    if (a->m < 0.0101 || a->m > 999.0) {
        return false;
    }
    for (int k = 0; k < 3; k++) {
        if (a->i[k] < 1.0 / 1024 * 1.01 || a->i[k] > 32767 * 0.99) {
            return false;
        }
    }
    return true;
}

// Checks one shape at one density: shape mass (0.1 %), shape inertia
// (0.1 %), and the body's mass and inverse inertia through ls_mass_compute_.
static int check(const ls_geom *g, ls_fx density, const analytic *a, const char *what, double s,
                 double *worst_m, double *worst_i)
{
    ls_shape_mass sm;
    cr_assert(ls_shape_kind_of(g->kind)->mass(g, density, &sm), "%s %.3f m: mass refused", what, s);
    double m = (double)sm.mass / 65536.0;
    cr_assert_leq(rel(m, a->m), 0.001, "%s %.3f m, density %.6f: mass %.6f kg, analytic %.6f", what,
                  s, q16(density), m, a->m);
    *worst_m = fmax(*worst_m, rel(m, a->m));
    for (int k = 0; k < 3; k++) {
        double i = (double)sm.inertia[k] / 4294967296.0;
        cr_assert_leq(rel(i, a->i[k]), 0.001,
                      "%s %.3f m, %.4f kg: inertia[%d] %.8f kg m^2, analytic %.8f", what, s, a->m,
                      k, i, a->i[k]);
        *worst_i = fmax(*worst_i, rel(i, a->i[k]));
    }
    ls_mass_part part = {g, density, ls_vec3_zero(), ls_quat_identity()};
    ls_mass_props mp;
    ls_error err;
    cr_assert_eq(ls_mass_compute_(&part, 1, &mp, &err), LS_OK, "%s %.3f m: %s", what, s,
                 err.message);
    cr_assert_leq(rel(q16(mp.mass), a->m), 0.001, "%s %.3f m: body mass %.6f, analytic %.6f", what,
                  s, q16(mp.mass), a->m);
    const ls_fx inv[3] = {mp.inv_inertia.row[0].x, mp.inv_inertia.row[1].y,
                          mp.inv_inertia.row[2].z};
    for (int k = 0; k < 3; k++) {
        double want = 1.0 / a->i[k], got = q16(inv[k]);
        double tol = fmax(0.001 * want, 0.6 / 65536.0);
        cr_assert_leq(fabs(got - want), tol,
                      "%s %.3f m, %.4f kg: inverse inertia[%d] %.8f, analytic %.8f (tolerance "
                      "%.8f)",
                      what, s, a->m, k, got, want, tol);
    }
    return 1;
}

// Density giving about `mass` kg to a volume, quantized to Q16.16 (>= 1 ulp).
static ls_fx density_for(double mass, double volume)
{
    ls_fx d = fx(mass / volume);
    return d < 1 ? 1 : d;
}

Test(mass, boxes_have_the_analytic_mass_and_inertia_across_the_size_range)
{
    int n = 0;
    double wm = 0, wi = 0;
    for (size_t a = 0; a < sizeof sizes / sizeof sizes[0]; a++) {
        for (size_t b = 0; b < sizeof masses / sizeof masses[0]; b++) {
            // Three different half extents: s, 0.7 s (at least 0.05) and 1.3 s (at most 64).
            ls_geom g = {0};
            g.kind = LS_SHAPE_BOX;
            g.half_extents = v3(sizes[a], fmax(0.05, 0.7 * sizes[a]), fmin(64, 1.3 * sizes[a]));
            double x = q16(g.half_extents.x), y = q16(g.half_extents.y), z = q16(g.half_extents.z);
            double v = 8 * x * y * z;
            ls_fx d = density_for(masses[b], v);
            double m = q16(d) * v;
            analytic an = {
                m, {m / 3 * (y * y + z * z), m / 3 * (x * x + z * z), m / 3 * (x * x + y * y)}};
            if (in_range(&an)) {
                n += check(&g, d, &an, "box", sizes[a], &wm, &wi);
            }
        }
    }
    fprintf(stderr, "mass: %d boxes, worst mass error %.5f %%, worst inertia error %.5f %%\n", n,
            100 * wm, 100 * wi);
    cr_assert_geq(n, 60, "only %d boxes in range", n);
}

Test(mass, spheres_have_the_analytic_mass_and_inertia_across_the_size_range)
{
    int n = 0;
    double wm = 0, wi = 0;
    for (size_t a = 0; a < sizeof sizes / sizeof sizes[0]; a++) {
        for (size_t b = 0; b < sizeof masses / sizeof masses[0]; b++) {
            ls_geom g = {0};
            g.kind = LS_SHAPE_SPHERE;
            g.radius = fx(sizes[a]);
            double r = q16(g.radius), v = 4.0 / 3.0 * PI * r * r * r;
            ls_fx d = density_for(masses[b], v);
            double m = q16(d) * v, i = 0.4 * m * r * r;
            analytic an = {m, {i, i, i}};
            if (in_range(&an)) {
                n += check(&g, d, &an, "sphere", sizes[a], &wm, &wi);
            }
        }
    }
    fprintf(stderr, "mass: %d spheres, worst mass error %.5f %%, worst inertia error %.5f %%\n", n,
            100 * wm, 100 * wi);
    cr_assert_geq(n, 60, "only %d spheres in range", n);
}

Test(mass, capsules_have_the_analytic_mass_and_inertia_across_the_size_range)
{
    int n = 0;
    double wm = 0, wi = 0;
    const double ratios[] = {0, 0.5, 1, 3}; // half height / radius
    for (size_t a = 0; a < sizeof sizes / sizeof sizes[0]; a++) {
        for (size_t q = 0; q < sizeof ratios / sizeof ratios[0]; q++) {
            for (size_t b = 0; b < sizeof masses / sizeof masses[0]; b++) {
                ls_geom g = {0};
                g.kind = LS_SHAPE_CAPSULE;
                g.radius = fx(sizes[a]);
                g.half_height = fx(fmin(64, ratios[q] * sizes[a]));
                double r = q16(g.radius), h = q16(g.half_height);
                double vc = PI * r * r * 2 * h, vs = 4.0 / 3.0 * PI * r * r * r;
                ls_fx d = density_for(masses[b], vc + vs);
                double mc = q16(d) * vc, ms = q16(d) * vs;
                double iy = mc * r * r / 2 + ms * 0.4 * r * r;
                double ix =
                    mc * (r * r / 4 + h * h / 3) + ms * (0.4 * r * r + h * h + 0.75 * h * r);
                analytic an = {mc + ms, {ix, iy, ix}};
                if (in_range(&an)) {
                    n += check(&g, d, &an, "capsule", sizes[a], &wm, &wi);
                }
            }
        }
    }
    fprintf(stderr, "mass: %d capsules, worst mass error %.5f %%, worst inertia error %.5f %%\n", n,
            100 * wm, 100 * wi);
    cr_assert_geq(n, 200, "only %d capsules in range", n);
}

Test(mass, hulls_have_the_analytic_mass_and_inertia_across_the_size_range)
{
    // Box hulls (half extents s, 0.7 s, 0.5 s) and regular octahedra (vertices
    // at +-s on the axes: volume 4 s^3 / 3, <x^2> = s^2 / 10, so I = m s^2 / 5
    // about every axis),
    // within the hull coordinate range (+-64 m).
    int n = 0;
    double wm = 0, wi = 0;
    for (size_t a = 0; a < sizeof sizes / sizeof sizes[0]; a++) {
        for (int kind = 0; kind < 2; kind++) {
            ls_vec3 p[8];
            uint32_t count;
            double x, y, z, v;
            if (kind == 0) {
                ls_vec3 h = v3(sizes[a], fmax(0.05, 0.7 * sizes[a]), fmax(0.05, 0.5 * sizes[a]));
                x = q16(h.x), y = q16(h.y), z = q16(h.z);
                for (int i = 0; i < 8; i++) {
                    p[i] = ls_vec3_make(i & 4 ? h.x : -h.x, i & 2 ? h.y : -h.y, i & 1 ? h.z : -h.z);
                }
                count = 8;
                v = 8 * x * y * z;
            } else {
                ls_fx s = fx(sizes[a]);
                x = y = z = q16(s);
                p[0] = ls_vec3_make(s, 0, 0), p[1] = ls_vec3_make(-s, 0, 0);
                p[2] = ls_vec3_make(0, s, 0), p[3] = ls_vec3_make(0, -s, 0);
                p[4] = ls_vec3_make(0, 0, s), p[5] = ls_vec3_make(0, 0, -s);
                count = 6;
                v = 4.0 / 3.0 * x * x * x;
            }
            ls_hull *hull = ls_hull_create(p, count, NULL);
            cr_assert_not_null(hull);
            for (size_t b = 0; b < sizeof masses / sizeof masses[0]; b++) {
                ls_geom g = {0};
                g.kind = LS_SHAPE_HULL;
                g.hull = hull;
                ls_fx d = density_for(masses[b], v);
                double m = q16(d) * v;
                analytic an = {
                    m, {m / 3 * (y * y + z * z), m / 3 * (x * x + z * z), m / 3 * (x * x + y * y)}};
                if (kind == 1) {
                    an.i[0] = an.i[1] = an.i[2] = m * x * x / 5;
                }
                if (in_range(&an)) {
                    n += check(&g, d, &an, kind ? "octahedron hull" : "box hull", sizes[a], &wm,
                               &wi);
                }
            }
            ls_hull_destroy(hull);
        }
    }
    fprintf(stderr, "mass: %d hulls, worst mass error %.5f %%, worst inertia error %.5f %%\n", n,
            100 * wm, 100 * wi);
    cr_assert_geq(n, 100, "only %d hulls in range", n);
}

static ls_world *one_body_world(void)
{
    ls_world_def def = ls_default_world_def();
    def.gravity = ls_vec3_zero();
    ls_error err;
    ls_world *w = ls_world_create(&def, &err);
    cr_assert_not_null(w, "%s", err.message);
    return w;
}

static double body_mass(ls_shape_def shape)
{
    ls_world *w = one_body_world();
    ls_body_def bd = ls_default_body_def();
    bd.type = LS_BODY_DYNAMIC;
    bd.shapes = &shape;
    bd.shape_count = 1;
    ls_error err;
    ls_body_id id = ls_body_create(w, &bd, &err);
    cr_assert(ls_body_is_valid(w, id), "%s", err.message);
    double m = q16(ls_body_mass(w, id));
    ls_world_destroy(w);
    return m;
}

Test(mass, a_5_cm_box_and_sphere_of_water_weigh_what_they_should)
{
    // The cases, through the public API: a box of half extent 0.05 m
    // and density 1000 is 1.000 kg (was 0.9766), a steel sphere of radius
    // 0.05 m is 4/3 pi 0.05^3 7800 = 4.084 kg (was 3.8 % light; in water its
    // moment of inertia would be below the supported 1/1024 kg m^2).
    ls_shape_def box = ls_default_shape_def();
    box.type = LS_SHAPE_BOX;
    box.half_extents = v3(0.05, 0.05, 0.05);
    box.density = fx(1000);
    double hb = q16(fx(0.05));
    double mb = body_mass(box), want_b = 8 * hb * hb * hb * 1000;
    cr_assert_leq(rel(mb, want_b), 0.001, "box %.5f kg, analytic %.5f", mb, want_b);
    ls_shape_def sphere = ls_default_shape_def();
    sphere.type = LS_SHAPE_SPHERE;
    sphere.radius = fx(0.05);
    sphere.density = fx(7800);
    double ms = body_mass(sphere), want_s = 4.0 / 3.0 * PI * hb * hb * hb * 7800;
    cr_assert_leq(rel(ms, want_s), 0.001, "sphere %.5f kg, analytic %.5f", ms, want_s);
    fprintf(stderr, "mass: 5 cm water box %.5f kg (analytic %.5f), steel sphere %.5f kg (%.5f)\n",
            mb, want_b, ms, want_s);
}

Test(mass, a_compound_of_two_small_boxes_has_the_parallel_axis_inertia)
{
    // Two 5 cm boxes of water side by side along x (centres at -+0.05 m):
    // together a 0.1 x 0.05 x 0.05 box, m = 2 kg, I_xx = m (0.05^2 +
    // 0.05^2) / 3, I_yy = I_zz = m (0.1^2 + 0.05^2) / 3, within 0.1 %.
    ls_geom g = {0};
    g.kind = LS_SHAPE_BOX;
    g.half_extents = v3(0.05, 0.05, 0.05);
    ls_mass_part parts[2] = {{&g, fx(1000), v3(-0.05, 0, 0), ls_quat_identity()},
                             {&g, fx(1000), v3(0.05, 0, 0), ls_quat_identity()}};
    ls_mass_props mp;
    ls_error err;
    cr_assert_eq(ls_mass_compute_(parts, 2, &mp, &err), LS_OK, "%s", err.message);
    double h = q16(fx(0.05)), m = 2 * 8 * h * h * h * 1000;
    double ixx = m * (2 * h * h) / 3, iyy = m * (4 * h * h + h * h) / 3;
    cr_assert_leq(rel(q16(mp.mass), m), 0.001);
    const double want[3] = {1 / ixx, 1 / iyy, 1 / iyy};
    const ls_fx got[3] = {mp.inv_inertia.row[0].x, mp.inv_inertia.row[1].y,
                          mp.inv_inertia.row[2].z};
    for (int k = 0; k < 3; k++) {
        cr_assert_leq(rel(q16(got[k]), want[k]), 0.001, "axis %d: 1/I %.4f, analytic %.4f", k,
                      q16(got[k]), want[k]);
    }
}
