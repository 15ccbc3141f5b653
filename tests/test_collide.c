// SPDX-License-Identifier: MIT
// Narrow phase: contact manifolds for every pair of shape kinds. Checks the
// conventions the solver relies on (normal from A to B, depth > 0 when
// overlapping, point midway between the surfaces, unique stable feature ids)
// against hand-computed geometry, with the tolerance stated per assertion.
#include "../fixmath_phys/src/collision/collide.h"
#include "ls/rng.h"
#include "test_util.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define PI 3.14159265358979323846

/// One Q16.16 ulp in metres.
#define ULP (1.0 / 65536.0)

static double val(ls_fx v)
{
    return (double)v / 65536.0;
}

static ls_geom sphere(double r)
{
    ls_geom g = {.kind = LS_SHAPE_SPHERE, .radius = fx(r)};
    return g;
}

static ls_geom box(double hx, double hy, double hz)
{
    ls_geom g = {.kind = LS_SHAPE_BOX, .half_extents = v3(hx, hy, hz)};
    return g;
}

static ls_geom capsule(double r, double half_height)
{
    ls_geom g = {.kind = LS_SHAPE_CAPSULE, .radius = fx(r), .half_height = fx(half_height)};
    return g;
}

static ls_geom ground(void)
{
    ls_geom g = {.kind = LS_SHAPE_PLANE, .normal = v3(0, 1, 0), .plane_d = 0};
    return g;
}

/// Transform at (x, y, z) rotated by angle (radians) about the unit axis.
static ls_xform at_rot(double x, double y, double z, double ax, double ay, double az, double angle)
{
    double s = sin(angle / 2), c = cos(angle / 2);
    ls_quat q = ls_quat_normalize(ls_quat_make(fx(ax * s), fx(ay * s), fx(az * s), fx(c)));
    return ls_xform_make_(v3(x, y, z), q);
}

static ls_xform at(double x, double y, double z)
{
    return ls_xform_make_(v3(x, y, z), ls_quat_identity());
}

/// Capsule axis (local +Y) turned onto world X (rotation of 90 deg about Z).
static ls_xform along_x(double x, double y, double z)
{
    return at_rot(x, y, z, 0, 0, 1, PI / 2);
}

/// Capsule axis turned onto world Z (rotation of 90 deg about X).
static ls_xform along_z(double x, double y, double z)
{
    return at_rot(x, y, z, 1, 0, 0, PI / 2);
}

static const ls_fx MARGIN = 1311; // 0.02 m

static void assert_near(double got, double want, double tol, const char *what)
{
    cr_assert(fabs(got - want) <= tol, "%s: got %.7f, want %.7f (tol %.7f)", what, got, want, tol);
}

static void assert_vec_near(ls_vec3 v, double x, double y, double z, double tol, const char *what)
{
    assert_near(val(v.x), x, tol, what);
    assert_near(val(v.y), y, tol, what);
    assert_near(val(v.z), z, tol, what);
}

/// Invariants of every manifold: unit normal, ids unique, depths > -margin.
static void assert_well_formed(const ls_manifold *m)
{
    cr_assert(m->count >= 0 && m->count <= LS_MANIFOLD_MAX);
    if (m->count == 0) {
        return;
    }
    double len =
        sqrt(pow(val(m->normal.x), 2) + pow(val(m->normal.y), 2) + pow(val(m->normal.z), 2));
    assert_near(len, 1.0, 4 * ULP, "normal length");
    for (int i = 0; i < m->count; i++) {
        cr_assert(m->points[i].depth > -MARGIN, "depth %d beyond margin", i);
        for (int j = i + 1; j < m->count; j++) {
            cr_assert_neq(m->points[i].feature, m->points[j].feature, "duplicate feature id");
        }
    }
}

static int collide(const ls_geom *a, const ls_xform *xa, const ls_geom *b, const ls_xform *xb,
                   ls_manifold *m)
{
    int n = ls_collide_(a, xa, b, xb, MARGIN, m);
    cr_assert_eq(n, m->count);
    assert_well_formed(m);
    return n;
}

/// Index of the point whose coordinates are nearest (x, y, z); -1 if none is
/// within tol.
static int find_point(const ls_manifold *m, double x, double y, double z, double tol)
{
    for (int i = 0; i < m->count; i++) {
        ls_vec3 p = m->points[i].point;
        if (fabs(val(p.x) - x) <= tol && fabs(val(p.y) - y) <= tol && fabs(val(p.z) - z) <= tol) {
            return i;
        }
    }
    return -1;
}

/// Area (x-z plane) of the convex hull of 4 points: the largest of the three
/// cyclic orders' shoelace areas.
static double quad_area(const ls_manifold *m)
{
    static const int order[3][4] = {{0, 1, 2, 3}, {0, 2, 1, 3}, {0, 1, 3, 2}};
    double best = 0;
    for (int o = 0; o < 3; o++) {
        double a2 = 0;
        for (int i = 0; i < 4; i++) {
            ls_vec3 p = m->points[order[o][i]].point, q = m->points[order[o][(i + 1) % 4]].point;
            a2 += val(p.x) * val(q.z) - val(q.x) * val(p.z);
        }
        best = fmax(best, fabs(a2) / 2);
    }
    return best;
}

// ------------------------------------------------------------ sphere pairs

Test(collide, sphere_resting_on_plane_has_exact_depth_and_downward_normal)
{
    ls_geom s = sphere(0.5), p = ground();
    ls_xform xs = at(3, 0.49, -2), xp = at(0, 0, 0);
    ls_manifold m;
    cr_assert_eq(collide(&s, &xs, &p, &xp, &m), 1);
    // Normal from sphere to plane is -Y; depth 0.01 m; both to 2 ulp.
    cr_assert(abs(m.normal.x) <= 2 && abs(m.normal.z) <= 2 && abs(m.normal.y + LS_FX_ONE) <= 2);
    cr_assert(abs(m.points[0].depth - (fx(0.5) - fx(0.49))) <= 2, "depth %d", m.points[0].depth);
    // Midway between the sphere bottom (-0.01) and the plane (0): y = -0.005.
    assert_vec_near(m.points[0].point, 3, -0.005, -2, 2 * ULP, "point");
}

Test(collide, plane_first_against_sphere_gives_upward_normal)
{
    ls_geom s = sphere(0.5), p = ground();
    ls_xform xs = at(0, 0.49, 0), xp = at(0, 0, 0);
    ls_manifold m;
    cr_assert_eq(collide(&p, &xp, &s, &xs, &m), 1);
    cr_assert(ls_vec3_equal(m.normal, ls_vec3_make(0, LS_FX_ONE, 0)));
}

Test(collide, sphere_sphere_normal_points_from_a_to_b_with_overlap_depth)
{
    // Seed 003 case: centres 1.5 apart, radii 1: depth 0.5 along +X.
    ls_geom a = sphere(1), b = sphere(1);
    ls_xform xa = at(0, 0, 0), xb = at(1.5, 0, 0);
    ls_manifold m;
    cr_assert_eq(collide(&a, &xa, &b, &xb, &m), 1);
    assert_vec_near(m.normal, 1, 0, 0, 2 * ULP, "normal");
    assert_near(val(m.points[0].depth), 0.5, 2 * ULP, "depth");
    // Surface points (1,0,0) and (0.5,0,0): midpoint 0.75.
    assert_vec_near(m.points[0].point, 0.75, 0, 0, 2 * ULP, "point");
    cr_assert_eq(m.points[0].feature, 0u);
}

Test(collide, sphere_sphere_diagonal_normal_is_unit_and_depth_matches_distance)
{
    ls_geom a = sphere(0.7), b = sphere(0.4);
    ls_xform xa = at(100, 5, -7), xb = at(100.6, 5.5, -7.3);
    ls_manifold m;
    cr_assert_eq(collide(&a, &xa, &b, &xb, &m), 1);
    double d = sqrt(0.36 + 0.25 + 0.09);
    assert_vec_near(m.normal, 0.6 / d, 0.5 / d, -0.3 / d, 3 * ULP, "normal");
    assert_near(val(m.points[0].depth), 1.1 - d, 3 * ULP, "depth");
}

Test(collide, coincident_sphere_centres_use_the_up_fallback_normal)
{
    ls_geom a = sphere(1), b = sphere(0.5);
    ls_xform x = at(1, 2, 3);
    ls_manifold m;
    cr_assert_eq(collide(&a, &x, &b, &x, &m), 1);
    cr_assert(ls_vec3_equal(m.normal, ls_vec3_make(0, LS_FX_ONE, 0)));
    assert_near(val(m.points[0].depth), 1.5, ULP, "depth");
}

Test(collide, sphere_on_box_face_uses_the_face_normal)
{
    ls_geom s = sphere(0.5), b = box(1, 0.5, 1);
    ls_xform xs = at(0.3, 0.99, -0.2), xb = at(0, 0, 0);
    ls_manifold m;
    cr_assert_eq(collide(&s, &xs, &b, &xb, &m), 1);
    assert_vec_near(m.normal, 0, -1, 0, 2 * ULP, "normal");
    assert_near(val(m.points[0].depth), 0.01, 2 * ULP, "depth");
    assert_vec_near(m.points[0].point, 0.3, 0.495, -0.2, 2 * ULP, "point");
}

Test(collide, sphere_near_rotated_box_edge_points_at_the_edge)
{
    // Box rotated 45 deg about Z: its top is an edge along Z at y = sqrt(2)/2.
    ls_geom s = sphere(0.25), b = box(0.5, 0.5, 0.5);
    double top = sqrt(0.5);
    ls_xform xs = at(0, top + 0.24, 0), xb = at_rot(0, 0, 0, 0, 0, 1, PI / 4);
    ls_manifold m;
    cr_assert_eq(collide(&s, &xs, &b, &xb, &m), 1);
    assert_vec_near(m.normal, 0, -1, 0, 1e-4, "normal");
    assert_near(val(m.points[0].depth), 0.01, 1e-4, "depth");
}

Test(collide, sphere_centre_inside_box_leaves_through_nearest_face)
{
    ls_geom s = sphere(0.2), b = box(1, 0.5, 1);
    ls_xform xs = at(0.9, 0.1, 0), xb = at(0, 0, 0);
    ls_manifold m;
    cr_assert_eq(collide(&s, &xs, &b, &xb, &m), 1);
    // Nearest face is +X (0.1 away): sphere must move +X, so normal A->B is -X.
    assert_vec_near(m.normal, -1, 0, 0, 0, "normal");
    assert_near(val(m.points[0].depth), 0.3, 2 * ULP, "depth");
}

Test(collide, sphere_against_capsule_side_uses_closest_axis_point)
{
    ls_geom s = sphere(0.5), c = capsule(0.25, 1);
    ls_xform xs = at(0.4, 0.7, 0), xc = along_x(0, 0, 0);
    ls_manifold m;
    cr_assert_eq(collide(&s, &xs, &c, &xc, &m), 1);
    assert_vec_near(m.normal, 0, -1, 0, 2 * ULP, "normal");
    assert_near(val(m.points[0].depth), 0.05, 3 * ULP, "depth");
    assert_vec_near(m.points[0].point, 0.4, 0.225, 0, 3 * ULP, "point");
}

Test(collide, sphere_against_capsule_end_cap_uses_the_endpoint)
{
    ls_geom s = sphere(0.5), c = capsule(0.25, 1);
    ls_xform xs = at(0, 1.7, 0), xc = at(0, 0, 0); // capsule upright, top end at y = 1
    ls_manifold m;
    cr_assert_eq(collide(&s, &xs, &c, &xc, &m), 1);
    assert_vec_near(m.normal, 0, -1, 0, 2 * ULP, "normal");
    assert_near(val(m.points[0].depth), 0.05, 2 * ULP, "depth");
}

// ------------------------------------------------------------ box pairs

Test(collide, box_resting_on_plane_gives_its_four_bottom_corners)
{
    ls_geom b = box(0.5, 0.25, 0.75), p = ground();
    ls_xform xb = at(10, 0.24, 20), xp = at(0, 0, 0);
    ls_manifold m;
    cr_assert_eq(collide(&b, &xb, &p, &xp, &m), 4);
    cr_assert(ls_vec3_equal(m.normal, ls_vec3_make(0, -LS_FX_ONE, 0)));
    for (int i = 0; i < 4; i++) {
        cr_assert(abs(m.points[i].depth - (fx(0.25) - fx(0.24))) <= 2);
    }
    for (int sx = -1; sx <= 1; sx += 2) {
        for (int sz = -1; sz <= 1; sz += 2) {
            cr_assert(find_point(&m, 10 + 0.5 * sx, -0.005, 20 + 0.75 * sz, 2 * ULP) >= 0,
                      "corner %d %d", sx, sz);
        }
    }
}

Test(collide, box_tilted_on_plane_touches_with_its_lowest_edge_only)
{
    // Rotated 30 deg about Z: two vertices (an edge along Z) are lowest.
    ls_geom b = box(0.5, 0.5, 0.5), p = ground();
    double low = 0.5 * cos(PI / 6) + 0.5 * sin(PI / 6);
    ls_xform xb = at_rot(0, low - 0.01, 0, 0, 0, 1, PI / 6), xp = at(0, 0, 0);
    ls_manifold m;
    cr_assert_eq(collide(&b, &xb, &p, &xp, &m), 2);
    assert_near(val(m.points[0].depth), 0.01, 1e-4, "depth");
    assert_near(val(m.points[1].depth), 0.01, 1e-4, "depth");
}

Test(collide, box_resting_flat_on_box_gives_four_points)
{
    ls_geom a = box(1, 0.5, 1), b = box(0.5, 0.5, 0.5);
    ls_xform xa = at(0, 0, 0), xb = at(0.2, 0.99, -0.1);
    ls_manifold m;
    cr_assert_eq(collide(&a, &xa, &b, &xb, &m), 4);
    assert_vec_near(m.normal, 0, 1, 0, 0, "normal");
    for (int i = 0; i < 4; i++) {
        assert_near(val(m.points[i].depth), 0.01, 1e-3, "depth");
    }
    // The four bottom corners of the small box, midway into the overlap.
    for (int sx = -1; sx <= 1; sx += 2) {
        for (int sz = -1; sz <= 1; sz += 2) {
            cr_assert(find_point(&m, 0.2 + 0.5 * sx, 0.495, -0.1 + 0.5 * sz, 1e-3) >= 0);
        }
    }
}

Test(collide, equal_boxes_stacked_exactly_give_four_points)
{
    ls_geom a = box(0.5, 0.5, 0.5);
    ls_xform xa = at(0, 0.5, 0), xb = at(0, 1.5 - 0.005, 0);
    ls_manifold m;
    cr_assert_eq(collide(&a, &xa, &a, &xb, &m), 4);
    assert_vec_near(m.normal, 0, 1, 0, 0, "normal");
    for (int i = 0; i < 4; i++) {
        assert_near(val(m.points[i].depth), 0.005, 1e-3, "depth");
    }
}

Test(collide, box_overhanging_edge_gives_the_clipped_rectangle)
{
    // Seed 003: equal boxes, top one shifted 0.75 so only x in [0.25, 0.5] overlaps.
    ls_geom a = box(0.5, 0.5, 0.5);
    ls_xform xa = at(0, 0, 0), xb = at(0.75, 0.99, 0);
    ls_manifold m;
    cr_assert_eq(collide(&a, &xa, &a, &xb, &m), 4);
    assert_vec_near(m.normal, 0, 1, 0, 0, "normal");
    double xs[2] = {0.25, 0.5}, zs[2] = {-0.5, 0.5};
    for (int i = 0; i < 2; i++) {
        for (int j = 0; j < 2; j++) {
            cr_assert(find_point(&m, xs[i], 0.495, zs[j], 1e-3) >= 0, "corner %d %d", i, j);
        }
    }
}

Test(collide, box_rotated_45_about_y_on_box_still_gives_four_points)
{
    // The incident square turned 45 deg clips to an octagon: reduced to 4.
    ls_geom a = box(1, 0.5, 1);
    ls_xform xa = at(0, 0, 0), xb = at_rot(0, 0.99, 0, 0, 1, 0, PI / 4);
    ls_manifold m;
    cr_assert_eq(collide(&a, &xa, &a, &xb, &m), 4);
    assert_vec_near(m.normal, 0, 1, 0, 1e-4, "normal");
    for (int i = 0; i < 4; i++) {
        assert_near(val(m.points[i].depth), 0.01, 1e-3, "depth");
        assert_near(val(m.points[i].point.y), 0.495, 1e-3, "height");
    }
    // The octagon (area 3.31) is nearly regular: the best 4 of its corners
    // span 2.343; a poor choice (adjacent corners) spans much less.
    cr_assert(quad_area(&m) > 2.3, "area %f", quad_area(&m));
}

Test(collide, box_edges_crossing_give_one_point_between_the_edges)
{
    // A turned 45 deg about Z (top edge along Z), B turned 45 deg about X
    // (bottom edge along X) and 0.02 m lower than touching.
    ls_geom a = box(0.5, 0.5, 0.5);
    double e = sqrt(0.5);
    ls_xform xa = at_rot(0, 0, 0, 0, 0, 1, PI / 4);
    ls_xform xb = at_rot(0.1, 2 * e - 0.02, -0.05, 1, 0, 0, PI / 4);
    ls_manifold m;
    cr_assert_eq(collide(&a, &xa, &a, &xb, &m), 1);
    assert_vec_near(m.normal, 0, 1, 0, 1e-3, "normal");
    assert_near(val(m.points[0].depth), 0.02, 1e-3, "depth");
    // A's edge runs along Z at x = 0, B's along X at z = -0.05: they cross there.
    assert_vec_near(m.points[0].point, 0, e - 0.01, -0.05, 1e-3, "point");
}

Test(collide, box_box_beyond_margin_gives_nothing_and_within_margin_is_speculative)
{
    ls_geom a = box(0.5, 0.5, 0.5);
    ls_xform xa = at(0, 0, 0), far = at(0, 1.03, 0), near = at(0, 1.01, 0);
    ls_manifold m;
    cr_assert_eq(collide(&a, &xa, &a, &far, &m), 0);
    cr_assert_eq(collide(&a, &xa, &a, &near, &m), 4);
    assert_near(val(m.points[0].depth), -0.01, 2 * ULP, "speculative depth");
}

Test(collide, boxes_far_from_origin_still_rest_with_four_points)
{
    ls_geom a = box(2, 0.5, 2), b = box(0.5, 0.5, 0.5);
    ls_xform xa = at(2000, 5, -2040), xb = at_rot(2000.3, 5.99, -2040.2, 0, 1, 0, 0.3);
    ls_manifold m;
    cr_assert_eq(collide(&a, &xa, &b, &xb, &m), 4);
    assert_vec_near(m.normal, 0, 1, 0, 1e-4, "normal");
    for (int i = 0; i < 4; i++) {
        assert_near(val(m.points[i].depth), 0.01, 1e-3, "depth");
    }
}

Test(collide, box_box_feature_ids_stay_the_same_when_the_box_moves_slightly)
{
    ls_geom a = box(1, 0.5, 1), b = box(0.5, 0.5, 0.5);
    ls_xform xa = at(0, 0, 0);
    ls_xform x1 = at_rot(0.7, 0.99, 0.3, 0, 1, 0, 0.2);
    ls_xform x2 = at_rot(0.701, 0.9895, 0.299, 0, 1, 0, 0.2005);
    ls_manifold m1, m2;
    cr_assert_eq(collide(&a, &xa, &b, &x1, &m1), 4);
    cr_assert_eq(collide(&a, &xa, &b, &x2, &m2), 4);
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(m1.points[i].feature, m2.points[i].feature, "point %d", i);
    }
}

Test(collide, box_plane_feature_ids_are_vertex_indices_and_stable)
{
    ls_geom b = box(0.5, 0.5, 0.5), p = ground();
    ls_xform x1 = at(0, 0.49, 0), x2 = at(0.003, 0.492, -0.001), xp = at(0, 0, 0);
    ls_manifold m1, m2;
    cr_assert_eq(collide(&b, &x1, &p, &xp, &m1), 4);
    cr_assert_eq(collide(&b, &x2, &p, &xp, &m2), 4);
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(m1.points[i].feature, m2.points[i].feature);
        cr_assert_eq(m1.points[i].feature & 2u, 0u, "bottom vertices have -Y");
    }
}

// ------------------------------------------------------------ capsule pairs

Test(collide, capsule_lying_on_plane_gives_two_end_points)
{
    ls_geom c = capsule(0.25, 1), p = ground();
    ls_xform xc = along_x(0, 0.24, 0), xp = at(0, 0, 0);
    ls_manifold m;
    cr_assert_eq(collide(&c, &xc, &p, &xp, &m), 2);
    cr_assert(ls_vec3_equal(m.normal, ls_vec3_make(0, -LS_FX_ONE, 0)));
    cr_assert(find_point(&m, -1, -0.005, 0, 2 * ULP) >= 0);
    cr_assert(find_point(&m, 1, -0.005, 0, 2 * ULP) >= 0);
    for (int i = 0; i < 2; i++) {
        assert_near(val(m.points[i].depth), 0.01, 2 * ULP, "depth");
    }
    cr_assert_eq(m.points[0].feature, 0u);
    cr_assert_eq(m.points[1].feature, 1u);
}

Test(collide, capsule_standing_on_plane_gives_one_point)
{
    ls_geom c = capsule(0.25, 1), p = ground();
    ls_xform xc = at(0, 1.24, 0), xp = at(0, 0, 0);
    ls_manifold m;
    cr_assert_eq(collide(&c, &xc, &p, &xp, &m), 1);
    assert_near(val(m.points[0].depth), 0.01, 2 * ULP, "depth");
}

Test(collide, capsules_crossing_give_one_point_at_the_right_distance)
{
    ls_geom a = capsule(0.25, 1), b = capsule(0.25, 1);
    ls_xform xa = along_x(0, 0, 0), xb = along_z(0.3, 0.45, -0.2);
    ls_manifold m;
    cr_assert_eq(collide(&a, &xa, &b, &xb, &m), 1);
    assert_vec_near(m.normal, 0, 1, 0, 2 * ULP, "normal");
    assert_near(val(m.points[0].depth), 0.05, 3 * ULP, "depth");
    // A's axis passes x = 0.3 at z = 0, B's axis lies at x = 0.3: closest at z = 0.
    assert_vec_near(m.points[0].point, 0.3, 0.225, 0, 3 * ULP, "point");
}

Test(collide, parallel_capsules_side_by_side_give_two_points_over_the_overlap)
{
    ls_geom a = capsule(0.25, 1), b = capsule(0.25, 1);
    ls_xform xa = along_x(0, 0, 0), xb = along_x(0.5, 0.45, 0);
    ls_manifold m;
    cr_assert_eq(collide(&a, &xa, &b, &xb, &m), 2);
    assert_vec_near(m.normal, 0, 1, 0, 2 * ULP, "normal");
    cr_assert(find_point(&m, -0.5, 0.225, 0, 3 * ULP) >= 0);
    cr_assert(find_point(&m, 1, 0.225, 0, 3 * ULP) >= 0);
    for (int i = 0; i < 2; i++) {
        assert_near(val(m.points[i].depth), 0.05, 3 * ULP, "depth");
    }
}

Test(collide, capsule_lying_on_box_gives_two_points)
{
    ls_geom b = box(2, 0.5, 2), c = capsule(0.25, 1);
    ls_xform xb = at(0, 0, 0), xc = along_x(0.1, 0.74, 0.3);
    ls_manifold m;
    cr_assert_eq(collide(&b, &xb, &c, &xc, &m), 2);
    assert_vec_near(m.normal, 0, 1, 0, 2 * ULP, "normal");
    cr_assert(find_point(&m, -0.9, 0.495, 0.3, 1e-4) >= 0);
    cr_assert(find_point(&m, 1.1, 0.495, 0.3, 1e-4) >= 0);
    for (int i = 0; i < 2; i++) {
        assert_near(val(m.points[i].depth), 0.01, 1e-4, "depth");
    }
}

Test(collide, capsule_standing_on_box_gives_one_point)
{
    ls_geom b = box(2, 0.5, 2), c = capsule(0.25, 1);
    ls_xform xb = at(0, 0, 0), xc = at(0.5, 1.74, -0.5);
    ls_manifold m;
    cr_assert_eq(collide(&b, &xb, &c, &xc, &m), 1);
    assert_vec_near(m.normal, 0, 1, 0, 2 * ULP, "normal");
    assert_near(val(m.points[0].depth), 0.01, 1e-4, "depth");
    assert_vec_near(m.points[0].point, 0.5, 0.495, -0.5, 1e-4, "point");
}

Test(collide, capsule_over_box_edge_gives_one_point_toward_the_edge)
{
    // Capsule along Z above the box's +X top edge, offset outwards diagonally.
    ls_geom b = box(0.5, 0.5, 0.5), c = capsule(0.25, 1);
    double k = 0.24 / sqrt(2);
    ls_xform xb = at(0, 0, 0), xc = along_z(0.5 + k, 0.5 + k, 0);
    ls_manifold m;
    cr_assert_eq(collide(&b, &xb, &c, &xc, &m), 1);
    assert_vec_near(m.normal, sqrt(0.5), sqrt(0.5), 0, 1e-4, "normal");
    assert_near(val(m.points[0].depth), 0.01, 1e-4, "depth");
}

Test(collide, capsule_axis_through_box_pushes_out_of_the_nearest_face)
{
    ls_geom b = box(1, 0.5, 1), c = capsule(0.25, 3);
    ls_xform xb = at(0, 0, 0), xc = along_x(0, 0.4, 0);
    ls_manifold m;
    cr_assert_eq(collide(&b, &xb, &c, &xc, &m), 2);
    assert_vec_near(m.normal, 0, 1, 0, 2 * ULP, "normal");
    for (int i = 0; i < 2; i++) {
        assert_near(val(m.points[i].depth), 0.35, 1e-4, "depth");
    }
    cr_assert(find_point(&m, -1, 0.5 - 0.175, 0, 1e-4) >= 0);
    cr_assert(find_point(&m, 1, 0.5 - 0.175, 0, 1e-4) >= 0);
}

// ------------------------------------------------------------ all pairs

/// One shape per kind, all overlapping a region near (0, 0.5, 0).
typedef struct scene_shape {
    ls_geom g;
    ls_xform x;
} scene_shape;

static void all_shapes(scene_shape s[4])
{
    s[0].g = sphere(0.4);
    s[0].x = at(0.1, 0.35, 0.05);
    s[1].g = box(0.5, 0.3, 0.4);
    s[1].x = at_rot(-0.2, 0.25, 0.1, 0, 1, 0, 0.3);
    s[2].g = capsule(0.2, 0.6);
    s[2].x = at_rot(0.3, 0.15, -0.1, 0.6, 0, 0.8, 1.2);
    s[3].g = ground();
    s[3].x = at(0, 0, 0);
}

Test(collide, every_pair_kind_collides_and_swapping_flips_only_the_normal)
{
    scene_shape s[4];
    all_shapes(s);
    for (int i = 0; i < 4; i++) {
        for (int j = 0; j < 4; j++) {
            if (i == 3 && j == 3) {
                continue;
            }
            ls_manifold ab, ba;
            const scene_shape *a = &s[i], *b = &s[j];
            ls_xform xb = b->x;
            if (i == j) { // same kind: move the second copy so they overlap off-centre
                xb.p = ls_vec3_add(xb.p, v3(0.3, 0.2, 0.1));
            }
            int n = collide(&a->g, &a->x, &b->g, &xb, &ab);
            cr_assert_gt(n, 0, "pair %d %d", i, j);
            cr_assert_eq(collide(&b->g, &xb, &a->g, &a->x, &ba), n, "pair %d %d", i, j);
            if (i != j) { // different kinds: swapped call is exactly the same routine
                cr_assert(ls_vec3_equal(ab.normal, ls_vec3_neg(ba.normal)), "pair %d %d", i, j);
                for (int k = 0; k < n; k++) {
                    cr_assert(ls_vec3_equal(ab.points[k].point, ba.points[k].point));
                    cr_assert_eq(ab.points[k].depth, ba.points[k].depth);
                    cr_assert_eq(ab.points[k].feature, ba.points[k].feature);
                }
            } else { // same kind: the geometry is mirrored, the normal within rounding
                assert_vec_near(ab.normal, -val(ba.normal.x), -val(ba.normal.y), -val(ba.normal.z),
                                2e-3, "mirrored normal");
            }
        }
    }
}

Test(collide, same_call_twice_gives_bit_identical_manifolds)
{
    scene_shape s[4];
    all_shapes(s);
    for (int i = 0; i < 4; i++) {
        for (int j = 0; j < 4; j++) {
            ls_manifold m1, m2;
            memset(&m1, 0xAB, sizeof m1); // stale contents must not leak through
            memset(&m2, 0x5C, sizeof m2);
            ls_collide_(&s[i].g, &s[i].x, &s[j].g, &s[j].x, MARGIN, &m1);
            ls_collide_(&s[i].g, &s[i].x, &s[j].g, &s[j].x, MARGIN, &m2);
            cr_assert_eq(memcmp(&m1, &m2, sizeof m1), 0, "pair %d %d", i, j);
        }
    }
}

Test(collide, separated_shapes_beyond_margin_give_zero_for_every_pair)
{
    scene_shape s[4];
    all_shapes(s);
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 4; j++) {
            ls_xform xa = s[i].x;
            ls_xform xb = s[j].x;
            xa.p = ls_vec3_add(xa.p, v3(0, 5, 0)); // 5 m up: away from the plane too
            if (j != 3) {
                xb.p = ls_vec3_add(xb.p, v3(0, 2, 0));
            }
            ls_manifold m;
            cr_assert_eq(collide(&s[i].g, &xa, &s[j].g, &xb, &m), 0, "pair %d %d", i, j);
            cr_assert_eq(m.normal.x | m.normal.y | m.normal.z, 0);
        }
    }
}

Test(collide, plane_against_plane_never_collides)
{
    ls_geom p = ground();
    ls_xform x = at(0, 0, 0);
    ls_manifold m;
    cr_assert_eq(collide(&p, &x, &p, &x, &m), 0);
}

// ------------------------------------------------------------ AABBs

Test(collide, aabb_of_sphere_box_capsule_and_plane)
{
    ls_fx margin = fx(0.1);
    ls_geom s = sphere(0.5);
    ls_xform xs = at(1, 2, 3);
    ls_aabb a = ls_geom_aabb_(&s, &xs, margin);
    assert_vec_near(a.min, 0.4, 1.4, 2.4, ULP, "sphere min");
    assert_vec_near(a.max, 1.6, 2.6, 3.6, ULP, "sphere max");

    ls_geom b = box(1, 0.5, 1);
    ls_xform xb = at_rot(0, 0, 0, 0, 1, 0, PI / 4);
    a = ls_geom_aabb_(&b, &xb, 0);
    assert_vec_near(a.max, sqrt(2), 0.5, sqrt(2), 1e-4, "rotated box max");

    ls_geom c = capsule(0.25, 1);
    ls_xform xc = at(0, 0, 0);
    a = ls_geom_aabb_(&c, &xc, 0);
    assert_vec_near(a.max, 0.25, 1.25, 0.25, ULP, "capsule max");
    assert_vec_near(a.min, -0.25, -1.25, -0.25, ULP, "capsule min");

    ls_geom p = ground();
    a = ls_geom_aabb_(&p, &xc, margin);
    cr_assert_eq(a.max.x, LS_FX_MAX / 2);
    cr_assert_eq(a.min.y, -(LS_FX_MAX / 2));
}

Test(collide, offset_shape_centre_is_rotated_with_the_body)
{
    // A sphere offset 1 m along local +X on a body turned 90 deg about Y sits
    // at world -Z from the body.
    ls_geom s = sphere(0.5);
    s.offset = v3(1, 0, 0);
    ls_xform x = at_rot(0, 0, 0, 0, 1, 0, PI / 2);
    ls_aabb a = ls_geom_aabb_(&s, &x, 0);
    assert_vec_near(a.min, -0.5, -0.5, -1.5, 2 * ULP, "min");
}

// ------------------------------------------------------------ random poses

/// A random shape of kind k (sizes 0.05..2 m) on a random pose near base.
static scene_shape random_shape(ls_rng *r, int k, ls_vec3 base)
{
    scene_shape s;
    ls_fx lo = fx(0.05), hi = fx(2);
    if (k == 0) {
        s.g = sphere(0);
        s.g.radius = ls_rng_range(r, lo, hi);
    } else if (k == 1) {
        s.g = box(0, 0, 0);
        s.g.half_extents =
            ls_vec3_make(ls_rng_range(r, lo, hi), ls_rng_range(r, lo, hi), ls_rng_range(r, lo, hi));
    } else if (k == 2) {
        s.g = capsule(0, 0);
        s.g.radius = ls_rng_range(r, lo, hi);
        s.g.half_height = ls_rng_range(r, 0, hi);
    } else {
        s.g = ground();
        s.g.plane_d = base.y;
    }
    ls_fx one = LS_FX_ONE;
    ls_quat q =
        ls_quat_normalize(ls_quat_make(ls_rng_range(r, -one, one), ls_rng_range(r, -one, one),
                                       ls_rng_range(r, -one, one), ls_rng_range(r, -one, one)));
    ls_fx span = fx(1.5);
    ls_vec3 p =
        ls_vec3_add(base, ls_vec3_make(ls_rng_range(r, -span, span), ls_rng_range(r, -span, span),
                                       ls_rng_range(r, -span, span)));
    s.x = ls_xform_make_(p, q);
    return s;
}

static bool inside_grown(ls_aabb b, ls_vec3 p, ls_fx grow)
{
    return p.x >= b.min.x - grow && p.y >= b.min.y - grow && p.z >= b.min.z - grow &&
           p.x <= b.max.x + grow && p.y <= b.max.y + grow && p.z <= b.max.z + grow;
}

Test(collide, random_poses_give_well_formed_symmetric_manifolds_inside_both_aabbs)
{
    ls_rng r = ls_rng_make(12345, 7);
    int hits = 0;
    for (int it = 0; it < 4000; it++) {
        int ka = (int)ls_rng_below(&r, 3), kb = (int)ls_rng_below(&r, 4);
        ls_vec3 base = ls_vec3_make(ls_rng_range(&r, fx(-2000), fx(2000)), fx(3),
                                    ls_rng_range(&r, fx(-2000), fx(2000)));
        scene_shape a = random_shape(&r, ka, base), b = random_shape(&r, kb, base);
        ls_manifold ab, ba;
        int n = collide(&a.g, &a.x, &b.g, &b.x, &ab);
        cr_assert_eq(collide(&b.g, &b.x, &a.g, &a.x, &ba), n);
        hits += n > 0;
        ls_aabb bxa = ls_geom_aabb_(&a.g, &a.x, 0), bxb = ls_geom_aabb_(&b.g, &b.x, 0);
        for (int i = 0; i < n; i++) {
            ls_vec3 p = ab.points[i].point;
            ls_fx grow = ls_fx_add(MARGIN, ls_fx_abs(ab.points[i].depth)) + fx(1e-3);
            cr_assert(inside_grown(bxa, p, grow) && inside_grown(bxb, p, grow),
                      "it %d kinds %d %d point %d outside the shapes", it, ka, kb, i);
            // Deepest possible: a box corner (sqrt(12) * 2 m) 1.5 m into a plane.
            cr_assert_lt(ab.points[i].depth, fx(kb == 3 ? 8.5 : 7.0), "it %d kinds %d %d deep", it,
                         ka, kb);
            if (ka != kb) {
                cr_assert(ls_vec3_equal(p, ba.points[i].point));
            }
        }
        if (ka != kb && n > 0) {
            cr_assert(ls_vec3_equal(ab.normal, ls_vec3_neg(ba.normal)));
        }
    }
    cr_assert_gt(hits, 400, "the random scene should produce many contacts (%d)", hits);
}

// ------------------------------------------------------------ double references

typedef struct dvec {
    double x, y, z;
} dvec;

static dvec dv(ls_vec3 v)
{
    dvec d = {val(v.x), val(v.y), val(v.z)};
    return d;
}

static dvec dsub(dvec a, dvec b)
{
    dvec d = {a.x - b.x, a.y - b.y, a.z - b.z};
    return d;
}

static double ddot(dvec a, dvec b)
{
    return a.x * b.x + a.y * b.y + a.z * b.z;
}

static dvec dcross(dvec a, dvec b)
{
    dvec d = {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
    return d;
}

/// Capsule core segment end points (world, double).
static void dsegment(const scene_shape *s, dvec *p0, dvec *p1)
{
    dvec c = dv(ls_vec3_add(s->x.p, ls_mat3_mul_vec(s->x.r, s->g.offset)));
    dvec u = dv(ls_mat3_col(s->x.r, 1));
    double h = val(s->g.half_height);
    *p0 = (dvec){c.x - u.x * h, c.y - u.y * h, c.z - u.z * h};
    *p1 = (dvec){c.x + u.x * h, c.y + u.y * h, c.z + u.z * h};
}

/// Distance from p to a box shape (0 inside).
static double dbox_dist(const scene_shape *b, dvec p)
{
    dvec d = dsub(p, dv(b->x.p));
    double s = 0;
    for (int k = 0; k < 3; k++) {
        double c = ddot(d, dv(ls_mat3_col(b->x.r, k)));
        ls_vec3 h = b->g.half_extents;
        double ex = fabs(c) - val(k == 0 ? h.x : k == 1 ? h.y : h.z);
        s += ex > 0 ? ex * ex : 0;
    }
    return sqrt(s);
}

/// Distance between the core segment of capsule a and a point set given by
/// closest(p): sampled along a's core (error second order in the spacing).
static double dsampled(const scene_shape *a, const scene_shape *b)
{
    dvec p0, p1;
    dsegment(a, &p0, &p1);
    double best = 1e9;
    for (int i = 0; i <= 2000; i++) {
        double t = i / 2000.0;
        dvec p = {p0.x + (p1.x - p0.x) * t, p0.y + (p1.y - p0.y) * t, p0.z + (p1.z - p0.z) * t};
        double d;
        if (b->g.kind == LS_SHAPE_BOX) {
            d = dbox_dist(b, p);
        } else {
            dvec q0, q1;
            dsegment(b, &q0, &q1);
            dvec e = dsub(q1, q0);
            double l2 = ddot(e, e);
            double s = l2 > 0 ? fmin(1, fmax(0, ddot(dsub(p, q0), e) / l2)) : 0;
            dvec q = {q0.x + e.x * s, q0.y + e.y * s, q0.z + e.z * s};
            dvec w = dsub(p, q);
            d = sqrt(ddot(w, w));
        }
        best = fmin(best, d);
    }
    return best;
}

Test(collide, capsule_depths_match_a_double_reference_on_random_poses)
{
    ls_rng r = ls_rng_make(999, 3);
    int checked = 0;
    for (int it = 0; it < 1500; it++) {
        int kb = ls_rng_below(&r, 2) ? 2 : 1; // capsule or box against a capsule
        ls_vec3 base = ls_vec3_make(ls_rng_range(&r, fx(-2000), fx(2000)), 0,
                                    ls_rng_range(&r, fx(-2000), fx(2000)));
        scene_shape a = random_shape(&r, 2, base), b = random_shape(&r, kb, base);
        double dist = dsampled(&a, &b);
        double ref = val(a.g.radius) + (kb == 2 ? val(b.g.radius) : 0) - dist;
        if (dist < 1e-3) {
            continue; // cores intersect: depth comes from a different rule
        }
        ls_manifold m;
        int n = collide(&b.g, &b.x, &a.g, &a.x, &m);
        if (ref < -val(MARGIN) - 1e-3) {
            cr_assert_eq(n, 0, "it %d kinds %d: separated by %f", it, kb, -ref);
            continue;
        }
        if (ref > -val(MARGIN) + 1e-3) {
            cr_assert_gt(n, 0, "it %d kinds %d: missed contact of depth %f", it, kb, ref);
            double deepest = -1e9;
            for (int i = 0; i < n; i++) {
                deepest = fmax(deepest, val(m.points[i].depth));
            }
            // 1 mm: sampling plus Q16.16 rounding of long lever arms.
            assert_near(deepest, ref, 1e-3, "deepest depth");
            checked++;
        }
    }
    cr_assert_gt(checked, 100, "checked %d", checked);
}

/// Double-precision SAT separation of two boxes (near-parallel edges skipped).
static double dsat(const scene_shape *a, const scene_shape *b)
{
    dvec ua[3], ub[3];
    double ha[3], hb[3];
    for (int k = 0; k < 3; k++) {
        ua[k] = dv(ls_mat3_col(a->x.r, k));
        ub[k] = dv(ls_mat3_col(b->x.r, k));
        ls_vec3 x = a->g.half_extents, y = b->g.half_extents;
        ha[k] = val(k == 0 ? x.x : k == 1 ? x.y : x.z);
        hb[k] = val(k == 0 ? y.x : k == 1 ? y.y : y.z);
    }
    dvec t = dsub(dv(b->x.p), dv(a->x.p));
    dvec axes[15];
    int n = 0;
    for (int i = 0; i < 3; i++) {
        axes[n++] = ua[i];
        axes[n++] = ub[i];
        for (int j = 0; j < 3; j++) {
            dvec l = dcross(ua[i], ub[j]);
            double len = sqrt(ddot(l, l));
            if (len > 0.05) {
                axes[n++] = (dvec){l.x / len, l.y / len, l.z / len};
            }
        }
    }
    double best = -1e9;
    for (int i = 0; i < n; i++) {
        double ra = 0, rb = 0;
        for (int k = 0; k < 3; k++) {
            ra += ha[k] * fabs(ddot(axes[i], ua[k]));
            rb += hb[k] * fabs(ddot(axes[i], ub[k]));
        }
        best = fmax(best, fabs(ddot(t, axes[i])) - ra - rb);
    }
    return best;
}

Test(collide, box_box_contact_agrees_with_a_double_sat_on_random_poses)
{
    ls_rng r = ls_rng_make(4242, 1);
    int touching = 0;
    for (int it = 0; it < 3000; it++) {
        ls_vec3 base = ls_vec3_make(ls_rng_range(&r, fx(-2000), fx(2000)), 0,
                                    ls_rng_range(&r, fx(-2000), fx(2000)));
        scene_shape a = random_shape(&r, 1, base), b = random_shape(&r, 1, base);
        double sep = dsat(&a, &b);
        ls_manifold m;
        int n = collide(&a.g, &a.x, &b.g, &b.x, &m);
        if (sep > val(MARGIN) + 1e-3) {
            cr_assert_eq(n, 0, "it %d: separated by %f", it, sep);
        } else if (sep < -1e-3) {
            cr_assert_gt(n, 0, "it %d: overlap %f missed", it, -sep);
            touching++;
            // The normal must point from A towards B.
            dvec t = dsub(dv(b.x.p), dv(a.x.p));
            cr_assert_geq(ddot(t, dv(m.normal)), -1e-3, "it %d normal points back", it);
        }
    }
    cr_assert_gt(touching, 300, "touching %d", touching);
}

/// A random vector of up to 100 m per component, less its part along unit n.
static ls_vec3 random_offset_in_plane(ls_rng *r, ls_vec3 n)
{
    ls_fx s = fx(100);
    ls_vec3 w =
        ls_vec3_make(ls_rng_range(r, -s, s), ls_rng_range(r, -s, s), ls_rng_range(r, -s, s));
    return ls_vec3_sub(w, ls_vec3_scale(n, ls_vec3_dot(n, w)));
}

Test(collide, a_box_beyond_the_cheap_plane_reject_has_no_vertex_within_the_margin)
{
    // ls_collide_box_plane_ rejects a box whose centre is higher than
    // (1 + 1/64) (hx + hy + hz) + 2 raw above the margin (+ 256 raw) before
    // it builds the box's axes, claiming the vertex test would find none of
    // the eight vertices within the margin either. Check it with centres
    // just beyond that bound, random boxes and tilted planes, and
    // orientations with |q|^2 = 1 +- 1/256 (the least unit a snapshot holds).
    // The bound is loose by design (hx + hy + hz against the box's projected
    // half width): the printed least height shows how much room it leaves.
    ls_rng r = ls_rng_make(2026, 30);
    double least = 1e9;
    for (int it = 0; it < 100000; it++) {
        ls_fx one = LS_FX_ONE;
        ls_quat q = ls_quat_normalize(
            ls_quat_make(ls_rng_range(&r, -one, one), ls_rng_range(&r, -one, one),
                         ls_rng_range(&r, -one, one), ls_rng_range(&r, -one, one)));
        double k = sqrt(1.0 + (double)ls_rng_range(&r, -one, one) / 65536.0 / 256.0);
        q = ls_quat_make((ls_fx)lround(q.x * k), (ls_fx)lround(q.y * k), (ls_fx)lround(q.z * k),
                         (ls_fx)lround(q.w * k));
        ls_vec3 nn =
            ls_vec3_normalize(ls_vec3_make(ls_rng_range(&r, -one, one), ls_rng_range(&r, -one, one),
                                           ls_rng_range(&r, -one, one)),
                              v3(0, 1, 0));
        ls_geom pl = {
            .kind = LS_SHAPE_PLANE, .normal = nn, .plane_d = ls_rng_range(&r, -fx(50), fx(50))};
        ls_geom bx = box(0.01 + (double)ls_rng_below(&r, 5000) / 100.0,
                         0.01 + (double)ls_rng_below(&r, 5000) / 100.0,
                         0.01 + (double)ls_rng_below(&r, 5000) / 100.0);
        ls_fx margin = (ls_fx)ls_rng_range(&r, 0, fx(0.2));
        ls_vec3 h = bx.half_extents;
        int64_t sum = (int64_t)h.x + h.y + h.z;
        int64_t height = sum + (sum >> 6) + 2 + margin + 257 + (int64_t)ls_rng_below(&r, 64);
        // The centre: a random point of the plane moved `height` along n.
        ls_vec3 base = ls_vec3_add(ls_vec3_scale(nn, pl.plane_d), random_offset_in_plane(&r, nn));
        ls_xform xf = ls_xform_make_(ls_vec3_add(base, ls_vec3_scale(nn, (ls_fx)height)), q);
        ls_fx centre = ls_fx_sub(ls_vec3_dot(nn, xf.p), pl.plane_d);
        if ((int64_t)centre - (sum + (sum >> 6) + 2) - 256 <= margin) {
            continue; // rounding put it inside the bound: not a case of the claim
        }
        ls_manifold m;
        ls_xform origin = at(0, 0, 0);
        cr_assert_eq(ls_collide_(&bx, &xf, &pl, &origin, margin, &m), 0);
        for (int v = 0; v < 8; v++) {
            ls_vec3 local =
                ls_vec3_make((v & 1) ? h.x : -h.x, (v & 2) ? h.y : -h.y, (v & 4) ? h.z : -h.z);
            ls_vec3 p = ls_vec3_add(xf.p, ls_mat3_mul_vec(xf.r, local));
            ls_fx above = ls_fx_sub(ls_vec3_dot(nn, p), pl.plane_d);
            cr_assert_geq(above, margin, "iteration %d: vertex %d at %.6f m, margin %.6f m", it, v,
                          val(above), val(margin));
            least = fmin(least, val(above) - val(margin));
        }
    }
    printf("box-plane cheap reject: least vertex height above the margin %.5f m\n", least);
}
