// SPDX-License-Identifier: MIT
// World queries (ls/query.h, SPEC.md §22): ray
// casts against every shape kind, filters, shape casts and overlap tests
// against hand-computed answers; the query tree against testing every shape
// (same hits, same order, same bits) on a random world of 500 bodies; no
// allocation; the same answers after a snapshot restore; timing against
// brute force in a pile of 1000 boxes. Tolerances are stated at each check.
#define _POSIX_C_SOURCE 200809L
#include "../fixmath_phys/src/world/query_tree.h"
#include "alloc_count.h"
#include "ls/query.h"
#include "ls/scene.h"
#include "test_util.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PI 3.14159265358979323846

static double val(ls_fx v)
{
    return (double)v / 65536.0;
}

static ls_quat rot(double ax, double ay, double az, double angle)
{
    double s = sin(angle / 2), c = cos(angle / 2);
    return ls_quat_normalize(ls_quat_make(fx(ax * s), fx(ay * s), fx(az * s), fx(c)));
}

static void near(double got, double want, double tol, const char *what)
{
    cr_assert(fabs(got - want) <= tol, "%s: got %.7f, want %.7f (tol %.7f)", what, got, want, tol);
}

static void vec_near(ls_vec3 v, double x, double y, double z, double tol, const char *what)
{
    near(val(v.x), x, tol, what);
    near(val(v.y), y, tol, what);
    near(val(v.z), z, tol, what);
}

static ls_world *new_world(uint32_t max_bodies, uint32_t max_shapes)
{
    ls_world_def d = ls_default_world_def();
    d.max_bodies = max_bodies;
    d.max_shapes = max_shapes;
    d.max_contacts = 8192;
    ls_error err;
    ls_world *w = ls_world_create(&d, &err);
    cr_assert_not_null(w, "%s", err.message);
    return w;
}

static ls_shape_def sphere(double r)
{
    ls_shape_def s = ls_default_shape_def();
    s.type = LS_SHAPE_SPHERE;
    s.radius = fx(r);
    return s;
}

static ls_shape_def box(double hx, double hy, double hz)
{
    ls_shape_def s = ls_default_shape_def();
    s.type = LS_SHAPE_BOX;
    s.half_extents = v3(hx, hy, hz);
    return s;
}

static ls_shape_def capsule(double r, double hh)
{
    ls_shape_def s = ls_default_shape_def();
    s.type = LS_SHAPE_CAPSULE;
    s.radius = fx(r);
    s.half_height = fx(hh);
    return s;
}

static ls_shape_def plane(double nx, double ny, double nz, double d)
{
    ls_shape_def s = ls_default_shape_def();
    s.type = LS_SHAPE_PLANE;
    s.normal = v3(nx, ny, nz);
    s.plane_d = fx(d);
    return s;
}

static ls_shape_def hull_shape(const ls_hull *h)
{
    ls_shape_def s = ls_default_shape_def();
    s.type = LS_SHAPE_HULL;
    s.hull = h;
    return s;
}

static ls_shape_def mesh_shape(const ls_mesh *m)
{
    ls_shape_def s = ls_default_shape_def();
    s.type = LS_SHAPE_MESH;
    s.mesh = m;
    return s;
}

static ls_body_id add(ls_world *w, ls_body_type type, ls_shape_def s, ls_vec3 pos, ls_quat q)
{
    ls_body_def b = ls_default_body_def();
    b.type = type;
    b.shape = s;
    b.position = pos;
    b.orientation = q;
    ls_error err;
    ls_body_id id = ls_body_create(w, &b, &err);
    cr_assert_neq(id.index1, 0u, "%s (%s)", err.message, err.field);
    return id;
}

static ls_body_id add_static(ls_world *w, ls_shape_def s, ls_vec3 pos)
{
    return add(w, LS_BODY_STATIC, s, pos, ls_quat_identity());
}

// The octahedron |x| + |y| + |z| <= s.
static ls_hull *octahedron(double s)
{
    ls_vec3 p[6] = {v3(s, 0, 0),  v3(-s, 0, 0), v3(0, s, 0),
                    v3(0, -s, 0), v3(0, 0, s),  v3(0, 0, -s)};
    ls_error err;
    ls_hull *h = ls_hull_create(p, 6, &err);
    cr_assert_not_null(h, "%s", err.message);
    return h;
}

// A floor over [x0, x1] x [z0, z1] of n x n quads, front side up; heights
// from height(i, j) (or flat at y when NULL).
static ls_mesh *floor_mesh(double x0, double x1, double z0, double z1, double y, int n,
                           double (*height)(int, int))
{
    int nv = (n + 1) * (n + 1);
    ls_vec3 *v = malloc(sizeof *v * (size_t)nv);
    uint32_t *idx = malloc(sizeof *idx * (size_t)(6 * n * n));
    for (int j = 0; j <= n; j++) {
        for (int i = 0; i <= n; i++) {
            double h = height ? height(i, j) : 0;
            v[j * (n + 1) + i] = v3(x0 + (x1 - x0) * i / n, y + h, z0 + (z1 - z0) * j / n);
        }
    }
    int k = 0;
    for (int j = 0; j < n; j++) {
        for (int i = 0; i < n; i++) {
            uint32_t a = (uint32_t)(j * (n + 1) + i), b = a + 1, d = a + (uint32_t)(n + 1),
                     c = d + 1;
            // (a, c, b) and (a, d, c) are counter-clockwise seen from +y.
            uint32_t t[6] = {a, c, b, a, d, c};
            memcpy(idx + k, t, sizeof t);
            k += 6;
        }
    }
    ls_error err;
    ls_mesh *m = ls_mesh_create(v, (uint32_t)nv, idx, (uint32_t)(2 * n * n), &err);
    cr_assert_not_null(m, "%s", err.message);
    free(v);
    free(idx);
    return m;
}

static bool same_id(ls_body_id a, ls_body_id b)
{
    return a.index1 == b.index1 && a.generation == b.generation;
}

static bool same_shape(ls_shape_id a, ls_shape_id b)
{
    return a.index1 == b.index1 && a.generation == b.generation;
}

// ---------------------------------------------------------------- rays

static void ray_down(const ls_world *w, double x, double z, ls_ray_hit *hit)
{
    cr_assert(ls_world_ray_cast_filtered(w, v3(x, 10, z), v3(x, -10, z), NULL, hit),
              "a ray down at (%g, %g) hits", x, z);
}

Test(query, ray_hits_every_shape_kind_with_analytic_fraction_and_normal)
{
    // Rays of length 20 m: one ulp of fraction is 0.3 mm. Fractions within
    // 3 ulp of the exact value, axis normals within 4 ulp, others 1e-3.
    ls_world *w = new_world(16, 0);
    ls_hull *octa = octahedron(1);
    ls_mesh *floor = floor_mesh(45, 55, -5, 5, 2, 4, NULL);
    ls_body_id bs = add_static(w, sphere(1), v3(0, 0, 0));
    ls_body_id bb = add_static(w, box(1, 0.5, 2), v3(10, 0, 0));
    add(w, LS_BODY_STATIC, box(1, 1, 1), v3(15, 0, 0), rot(0, 0, 1, PI / 4));
    ls_body_id bc = add_static(w, capsule(0.5, 1), v3(20, 0, 0));
    ls_body_id bh = add_static(w, hull_shape(octa), v3(30, 0, 0));
    ls_body_id bp = add_static(w, plane(0, 1, 0, -5), v3(0, 0, 0));
    ls_body_id bm = add_static(w, mesh_shape(floor), v3(0, 0, 0));
    ls_hull_destroy(octa); // the world keeps its own copies
    ls_mesh_destroy(floor);
    ls_ray_hit hit;
    const double F = 3.0 / 65536, N = 4.0 / 65536;

    ray_down(w, 0, 0, &hit); // sphere top at y = 1
    cr_assert(same_id(hit.body, bs));
    cr_assert(same_shape(hit.shape, ls_body_shape_id(w, bs, 0)));
    near(val(hit.fraction), 9.0 / 20, F, "sphere fraction");
    vec_near(hit.normal, 0, 1, 0, N, "sphere normal");
    vec_near(hit.point, 0, 1, 0, 1e-3, "sphere point");

    ray_down(w, 10.5, 1.5, &hit); // box top at y = 0.5
    cr_assert(same_id(hit.body, bb));
    near(val(hit.fraction), 9.5 / 20, F, "box fraction");
    vec_near(hit.normal, 0, 1, 0, N, "box normal");

    ray_down(w, 15.25, 0, &hit); // box turned 45 degrees about z: face x + y = sqrt 2
    near(val(hit.fraction), (10 - (sqrt(2) - 0.25)) / 20, 1e-4, "turned box fraction");
    vec_near(hit.normal, sqrt(0.5), sqrt(0.5), 0, 1e-3, "turned box normal");

    ray_down(w, 20, 0, &hit); // capsule cap top at y = 1.5
    cr_assert(same_id(hit.body, bc));
    near(val(hit.fraction), 8.5 / 20, F, "capsule cap fraction");
    vec_near(hit.normal, 0, 1, 0, N, "capsule cap normal");
    cr_assert(ls_world_ray_cast_filtered(w, v3(17, 0.2, 0), v3(23, 0.2, 0), NULL, &hit));
    cr_assert(same_id(hit.body, bc)); // capsule wall at x = 19.5
    near(val(hit.fraction), 2.5 / 6, F, "capsule wall fraction");
    vec_near(hit.normal, -1, 0, 0, N, "capsule wall normal");

    ray_down(w, 30.25, 0.25, &hit); // octahedron face x + y + z = 1 at y = 0.5
    cr_assert(same_id(hit.body, bh));
    near(val(hit.fraction), 9.5 / 20, F, "hull fraction");
    vec_near(hit.normal, 1 / sqrt(3), 1 / sqrt(3), 1 / sqrt(3), 1e-3, "hull normal");

    ray_down(w, 40, 0, &hit); // only the plane y = -5 below
    cr_assert(same_id(hit.body, bp));
    near(val(hit.fraction), 15.0 / 20, F, "plane fraction");
    vec_near(hit.normal, 0, 1, 0, 0, "plane normal");
    vec_near(hit.point, 40, -5, 0, 1e-3, "plane point");

    ray_down(w, 50.3, 0.7, &hit); // mesh floor at y = 2
    cr_assert(same_id(hit.body, bm));
    near(val(hit.fraction), 8.0 / 20, F, "mesh fraction");
    vec_near(hit.normal, 0, 1, 0, N, "mesh normal");
    // Mesh triangles are one-sided: from below the ray passes through.
    cr_assert_not(ls_world_ray_cast_filtered(w, v3(50, -4, 0), v3(50, 10, 0), NULL, &hit));
    // Nothing on the way, segment too short.
    cr_assert_not(ls_world_ray_cast_filtered(w, v3(40, 10, 0), v3(40, -4.9, 0), NULL, &hit));
    // The unfiltered ls_world_ray_cast agrees.
    ls_ray_hit h2;
    ray_down(w, 30.25, 0.25, &hit);
    cr_assert(ls_world_ray_cast(w, v3(30.25, 10, 0.25), v3(30.25, -10, 0.25), &h2));
    cr_assert_eq(memcmp(&hit, &h2, sizeof hit), 0);
    ls_world_destroy(w);
}

Test(query, ray_ties_go_to_the_lower_shape_slot_not_the_lower_body)
{
    ls_world *w = new_world(8, 8);
    ls_body_id a = add_static(w, sphere(0.5), v3(-20, 0, 0)); // body 0, shape 0
    ls_body_id b = add_static(w, box(1, 1, 1), v3(0, 0, 0));  // body 1, shape 1
    cr_assert_eq(ls_body_destroy(w, a), LS_OK);
    // A compound body takes body slot 0 again and shape slots 0 and 2; its
    // second shape is a copy of body 1's box.
    ls_shape_def parts[2] = {sphere(0.5), box(1, 1, 1)};
    parts[0].local_position = v3(-20, 0, 0);
    ls_body_def bd = ls_default_body_def();
    bd.type = LS_BODY_STATIC;
    bd.shapes = parts;
    bd.shape_count = 2;
    ls_body_id c = ls_body_create(w, &bd, NULL);
    cr_assert_eq(c.index1, 1u, "body slot 0 reused");
    cr_assert_eq(ls_body_shape_id(w, c, 1).index1, 3u, "its box is shape slot 2");
    ls_ray_hit hit, h2;
    cr_assert(ls_world_ray_cast_filtered(w, v3(0.2, 5, 0.1), v3(0.2, -5, 0.1), NULL, &hit));
    cr_assert(same_id(hit.body, b), "equal fractions: shape slot 1 (body slot 1) wins");
    cr_assert_eq(hit.shape.index1, 2u);
    cr_assert(ls_world_ray_cast(w, v3(0.2, 5, 0.1), v3(0.2, -5, 0.1), &h2));
    cr_assert_eq(memcmp(&hit, &h2, sizeof hit), 0);
    ls_world_destroy(w);
}

Test(query, filters_select_by_category_mask_and_ignored_body)
{
    ls_world *w = new_world(8, 0);
    ls_shape_def s1 = box(1, 0.25, 1), s2 = box(1, 0.25, 1), s4 = box(1, 0.25, 1),
                 ghost = box(1, 0.25, 1);
    s1.category = 1;
    s2.category = 2;
    s2.mask = 1; // accepts queries of category 1 only
    s4.category = 4;
    ghost.mask = 0; // collides with nothing
    ls_body_id g = add_static(w, ghost, v3(0, 8, 0));
    ls_body_id b1 = add_static(w, s1, v3(0, 6, 0));
    ls_body_id b2 = add_static(w, s2, v3(0, 4, 0));
    ls_body_id b4 = add_static(w, s4, v3(0, 2, 0));
    ls_vec3 from = v3(0, 10, 0), to = v3(0, -10, 0);
    ls_ray_hit hit;
    cr_assert(ls_world_ray_cast(w, from, to, &hit));
    cr_assert(same_id(hit.body, g), "ls_world_ray_cast sees every shape");
    cr_assert(ls_world_ray_cast_filtered(w, from, to, NULL, &hit));
    cr_assert(same_id(hit.body, b1), "the default filter skips a shape of mask 0");
    ls_query_filter f = ls_default_query_filter();
    f.mask = ~1u;
    cr_assert(ls_world_ray_cast_filtered(w, from, to, &f, &hit));
    cr_assert(same_id(hit.body, b2));
    f.category = 4; // shape 2 accepts category 1 only
    cr_assert(ls_world_ray_cast_filtered(w, from, to, &f, &hit));
    cr_assert(same_id(hit.body, b4));
    f = ls_default_query_filter();
    f.ignore = b1;
    cr_assert(ls_world_ray_cast_filtered(w, from, to, &f, &hit));
    cr_assert(same_id(hit.body, b2), "the ignored body is skipped");
    f.ignore.generation += 1; // a stale id ignores nothing
    cr_assert(ls_world_ray_cast_filtered(w, from, to, &f, &hit));
    cr_assert(same_id(hit.body, b1));
    f = ls_default_query_filter();
    f.mask = 8;
    cr_assert_not(ls_world_ray_cast_filtered(w, from, to, &f, &hit));

    // The same filters in shape casts and overlaps.
    ls_shape_def probe = sphere(0.5);
    f = ls_default_query_filter();
    f.ignore = b1;
    cr_assert(ls_world_shape_cast(w, &probe, from, ls_quat_identity(), v3(0, -20, 0), &f, &hit));
    cr_assert(same_id(hit.body, b2));
    f.mask = 4;
    cr_assert(ls_world_shape_cast(w, &probe, from, ls_quat_identity(), v3(0, -20, 0), &f, &hit));
    cr_assert(same_id(hit.body, b4));
    ls_shape_def tall = box(0.5, 5, 0.5);
    ls_shape_id ids[8];
    cr_assert_eq(ls_world_overlap_shape(w, &tall, v3(0, 5, 0), ls_quat_identity(), NULL, ids, 8),
                 3u, "all but the ghost");
    cr_assert(same_shape(ids[0], ls_body_shape_id(w, b1, 0)));
    cr_assert(same_shape(ids[2], ls_body_shape_id(w, b4, 0)));
    f = ls_default_query_filter();
    f.mask = 2 | 4;
    f.category = 1;
    cr_assert_eq(ls_world_overlap_shape(w, &tall, v3(0, 5, 0), ls_quat_identity(), &f, ids, 8), 2u);
    cr_assert(same_shape(ids[0], ls_body_shape_id(w, b2, 0)));
    ls_world_destroy(w);
}

// ---------------------------------------------------------- shape casts

// Cast `s` from p by move and check body, fraction (exact value minus up to
// 1/2048 m of path plus 2 ulp of rounding, never more than 1 ulp past),
// normal (1e-3) and, when given, the point (2e-3 m).
static void cast_check(const ls_world *w, ls_shape_def s, ls_vec3 p, ls_quat q, ls_vec3 move,
                       ls_body_id want, double t, double nx, double ny, double nz,
                       const double *point, const char *what)
{
    ls_ray_hit hit;
    cr_assert(ls_world_shape_cast(w, &s, p, q, move, NULL, &hit), "%s: hit", what);
    cr_assert(same_id(hit.body, want), "%s: body %u, want %u", what, hit.body.index1, want.index1);
    double len = sqrt(pow(val(move.x), 2) + pow(val(move.y), 2) + pow(val(move.z), 2));
    double early = (1.0 / 2048) / len + 2.0 / 65536, late = 1.0 / 65536;
    double got = val(hit.fraction);
    cr_assert(got >= t - early && got <= t + late, "%s: fraction %.7f, want %.7f (-%.7f +%.7f)",
              what, got, t, early, late);
    vec_near(hit.normal, nx, ny, nz, 1e-3, what);
    if (point) {
        vec_near(hit.point, point[0], point[1], point[2], 2e-3, what);
    }
}

Test(query, shape_casts_of_sphere_box_and_hull_meet_box_plane_and_mesh_analytically)
{
    ls_world *w = new_world(16, 0);
    ls_hull *octa = octahedron(1);
    ls_mesh *floor = floor_mesh(40, 60, -10, 10, 1, 8, NULL);
    ls_body_id top = add_static(w, box(2, 0.5, 2), v3(0, 0, 0)); // top face y = 0.5
    ls_body_id ground = add_static(w, plane(0, 1, 0, 0), v3(0, 0, 0));
    ls_body_id mesh = add_static(w, mesh_shape(floor), v3(0, 0, 0)); // y = 1
    ls_mesh_destroy(floor);
    ls_quat id = ls_quat_identity();
    ls_vec3 down = v3(0, -10, 0);
    const double p_box[3] = {0, 0.5, 0}, p_plane[3] = {20, 0, 0}, p_mesh[3] = {50.3, 1, 0.4};

    // Against the box top (y = 0.5).
    cast_check(w, sphere(0.5), v3(0, 5, 0), id, down, top, 0.4, 0, 1, 0, p_box, "sphere on box");
    cast_check(w, box(0.5, 0.5, 0.5), v3(0.3, 5, 0.2), id, down, top, 0.4, 0, 1, 0, NULL,
               "box on box");
    cast_check(w, hull_shape(octa), v3(0, 5, 0), id, down, top, 0.35, 0, 1, 0, p_box,
               "hull on box");
    // Against the plane y = 0 (nothing else below x = 20).
    cast_check(w, sphere(0.5), v3(20, 5, 0), id, down, ground, 0.45, 0, 1, 0, p_plane,
               "sphere on plane");
    cast_check(w, box(0.5, 0.5, 0.5), v3(20, 5, 0), id, down, ground, 0.45, 0, 1, 0, NULL,
               "box on plane");
    cast_check(w, box(0.5, 0.5, 0.5), v3(20, 5, 0), rot(0, 0, 1, PI / 4), down, ground,
               (5 - sqrt(0.5)) / 10, 0, 1, 0, NULL, "turned box on plane (an edge)");
    cast_check(w, hull_shape(octa), v3(20, 5, 0), id, down, ground, 0.4, 0, 1, 0, p_plane,
               "hull on plane");
    cast_check(w, sphere(0.5), v3(15, 5, 0), id, v3(10, -10, 0), ground, 0.45, 0, 1, 0, NULL,
               "sphere on plane, slanted");
    // Against the mesh floor (y = 1, above the plane).
    cast_check(w, sphere(0.5), v3(50.3, 5, 0.4), id, down, mesh, 0.35, 0, 1, 0, p_mesh,
               "sphere on mesh");
    cast_check(w, box(0.5, 0.5, 0.5), v3(50.3, 5, 0.4), id, down, mesh, 0.35, 0, 1, 0, NULL,
               "box on mesh");
    cast_check(w, hull_shape(octa), v3(50.3, 5, 0.4), id, down, mesh, 0.3, 0, 1, 0, p_mesh,
               "hull on mesh");

    ls_ray_hit hit;
    ls_shape_def ball = sphere(0.5);
    // Already overlapping at the start: fraction 0, whatever the direction,
    // normal out of the box.
    cr_assert(ls_world_shape_cast(w, &ball, v3(0, 0.8, 0), id, v3(0, 5, 0), NULL, &hit));
    cr_assert(same_id(hit.body, top));
    cr_assert_eq(hit.fraction, 0);
    vec_near(hit.normal, 0, 1, 0, 1e-3, "start overlap normal");
    // Moving away or passing beside: nothing.
    cr_assert_not(ls_world_shape_cast(w, &ball, v3(0, 3, 0), id, v3(0, 5, 0), NULL, &hit));
    cr_assert_not(ls_world_shape_cast(w, &ball, v3(30, 3, 0), id, v3(5, 0, 0), NULL, &hit));
    // A mesh is met from its front side only: from just below, up through it.
    ls_shape_def small = sphere(0.3);
    cr_assert_not(ls_world_shape_cast(w, &small, v3(51, 0.6, 0), id, v3(0, 1, 0), NULL, &hit));
    cr_assert(ls_world_shape_cast(w, &small, v3(51, 1.6, 0), id, v3(0, -1, 0), NULL, &hit));
    cr_assert(same_id(hit.body, mesh));
    // Planes, meshes and invalid shapes do not sweep.
    ls_shape_def bad = plane(0, 1, 0, 0);
    cr_assert_not(ls_world_shape_cast(w, &bad, v3(0, 5, 0), id, down, NULL, &hit));
    bad = mesh_shape(NULL);
    cr_assert_not(ls_world_shape_cast(w, &bad, v3(0, 5, 0), id, down, NULL, &hit));
    bad = sphere(0.01); // below 0.05 m
    cr_assert_not(ls_world_shape_cast(w, &bad, v3(0, 5, 0), id, down, NULL, &hit));
    bad = hull_shape(NULL);
    cr_assert_not(ls_world_shape_cast(w, &bad, v3(0, 5, 0), id, down, NULL, &hit));
    cr_assert_not(ls_world_shape_cast(w, &ball, v3(0, 2040, 0), id, v3(0, 10, 0), NULL, &hit),
                  "the end is beyond 2048 m");
    ls_hull_destroy(octa);
    ls_world_destroy(w);
}

// -------------------------------------------------------------- overlap

Test(query, overlap_counts_touching_shapes_in_slot_order)
{
    ls_world *w = new_world(16, 0);
    ls_hull *octa = octahedron(1);
    ls_mesh *floor = floor_mesh(-5, 15, -5, 5, -2, 4, NULL);
    ls_body_id bs = add_static(w, sphere(1), v3(0, 0, 0));
    ls_body_id bb = add_static(w, box(1, 1, 1), v3(3, 0, 0));
    ls_body_id bc = add_static(w, capsule(0.5, 1), v3(6, 0, 0));
    ls_body_id bh = add_static(w, hull_shape(octa), v3(9, 0, 0));
    ls_body_id bp = add_static(w, plane(0, 1, 0, -3), v3(0, 0, 0));
    ls_body_id bm = add_static(w, mesh_shape(floor), v3(0, 0, 0));
    ls_hull_destroy(octa);
    ls_mesh_destroy(floor);
    ls_quat id = ls_quat_identity();
    ls_shape_id out[8];
    ls_shape_def s = sphere(0.5);
    // Touching counts: 1.5 m from the sphere's centre (radii 1 + 0.5), 0.5 m
    // from the box face (both exact in Q16.16).
    cr_assert_eq(ls_world_overlap_shape(w, &s, v3(1.5, 0, 0), id, NULL, out, 8), 2u);
    cr_assert(same_shape(out[0], ls_body_shape_id(w, bs, 0)));
    cr_assert(same_shape(out[1], ls_body_shape_id(w, bb, 0)));
    cr_assert_eq(ls_world_overlap_shape(w, &s, v3(1.5, 0.3, 0), id, NULL, out, 8), 1u,
                 "off the line of centres the sphere no longer touches the sphere");
    cr_assert(same_shape(out[0], ls_body_shape_id(w, bb, 0)));
    ls_shape_def cube = box(0.5, 0.5, 0.5);
    cr_assert_eq(ls_world_overlap_shape(w, &cube, v3(4.5, 0, 0), id, NULL, out, 8), 1u,
                 "face to face with the box; 0.5 m short of the capsule");
    cr_assert_eq(ls_world_overlap_shape(w, &cube, v3(5.0, 0, 0), id, NULL, out, 8), 1u,
                 "face to the capsule's side; 0.5 m from the box");
    cr_assert(same_shape(out[0], ls_body_shape_id(w, bc, 0)));
    ls_hull *small = octahedron(0.5);
    ls_shape_def h = hull_shape(small);
    cr_assert_eq(ls_world_overlap_shape(w, &h, v3(9, 1.5, 0), id, NULL, out, 8), 1u,
                 "octahedra tip to tip");
    cr_assert(same_shape(out[0], ls_body_shape_id(w, bh, 0)));
    ls_hull_destroy(small);
    // The mesh from above and from below; the plane.
    cr_assert_eq(ls_world_overlap_shape(w, &s, v3(9, -1.6, 0), id, NULL, out, 8), 1u);
    cr_assert(same_shape(out[0], ls_body_shape_id(w, bm, 0)));
    cr_assert_eq(ls_world_overlap_shape(w, &s, v3(9, -2.2, 0), id, NULL, out, 8), 1u);
    cr_assert(same_shape(out[0], ls_body_shape_id(w, bm, 0)));
    cr_assert_eq(ls_world_overlap_shape(w, &s, v3(20, -2.6, 0), id, NULL, out, 8), 1u);
    cr_assert(same_shape(out[0], ls_body_shape_id(w, bp, 0)));
    cr_assert_eq(ls_world_overlap_shape(w, &s, v3(20, 0, 0), id, NULL, out, 8), 0u);
    // Everything at once; only max_out are written, the total is returned.
    ls_shape_def all = box(20, 10, 10);
    cr_assert_eq(ls_world_overlap_shape(w, &all, v3(5, 0, 0), id, NULL, out, 3), 6u);
    cr_assert(same_shape(out[0], ls_body_shape_id(w, bs, 0)));
    cr_assert(same_shape(out[2], ls_body_shape_id(w, bc, 0)));
    cr_assert_eq(ls_world_overlap_shape(w, &all, v3(5, 0, 0), id, NULL, NULL, 0), 6u);
    // Planes, meshes and invalid shapes overlap nothing.
    ls_shape_def bad = plane(0, 1, 0, 0);
    cr_assert_eq(ls_world_overlap_shape(w, &bad, v3(5, 0, 0), id, NULL, out, 8), 0u);
    cr_assert_eq(ls_world_overlap_shape(w, NULL, v3(5, 0, 0), id, NULL, out, 8), 0u);
    // ls_world_query_aabb: bodies by slot, with the plane's infinite box.
    ls_body_id ids[8];
    cr_assert_eq(ls_world_query_aabb(w, v3(2.5, -0.5, -0.5), v3(6, 0.5, 0.5), ids, 8), 3u);
    cr_assert(same_id(ids[0], bb));
    cr_assert(same_id(ids[1], bc));
    cr_assert(same_id(ids[2], bp));
    cr_assert_eq(ls_world_query_aabb(w, v3(2.5, -2, -0.5), v3(6, 0.5, 0.5), ids, 8), 4u);
    cr_assert(same_id(ids[3], bm), "the flat mesh's box at y = -2 is touched");
    ls_world_destroy(w);
}

// ------------------------------------------------ tree against brute force

static double rnd(ls_rng *r, double lo, double hi)
{
    return lo + (hi - lo) * (double)ls_rng_next_u32(r) / 4294967296.0;
}

static ls_quat rnd_rot(ls_rng *r)
{
    return ls_quat_normalize(
        ls_quat_make(fx(rnd(r, -1, 1)), fx(rnd(r, -1, 1)), fx(rnd(r, -1, 1)), fx(rnd(r, -1, 1))));
}

static ls_hull *g_hulls[3];

// Density 10 and sizes from 0.3 m: every random body stays within the mass
// and inertia ranges of SPEC.md §5.
static ls_shape_def rnd_shape(ls_rng *r)
{
    ls_shape_def s;
    switch (ls_rng_next_u32(r) % 4) {
    case 0:
        s = sphere(rnd(r, 0.3, 1.5));
        break;
    case 1:
        s = box(rnd(r, 0.3, 1.5), rnd(r, 0.3, 1.5), rnd(r, 0.3, 1.5));
        break;
    case 2:
        s = capsule(rnd(r, 0.3, 0.8), rnd(r, 0, 1.5));
        break;
    default:
        s = hull_shape(g_hulls[ls_rng_next_u32(r) % 3]);
        break;
    }
    s.density = fx(10);
    return s;
}

static double bumps(int i, int j)
{
    return 0.7 * sin(i * 0.9) * cos(j * 0.7);
}

// 500 bodies in a 60 m cube: statics and dynamics, single and compound,
// random categories and masks, a ground plane and a bumpy mesh floor.
// Hulls: three clouds of 12 random points, or (regular) an octahedron, a
// wedge and a pyramid.
static ls_world *random_world(uint64_t seed, bool regular)
{
    ls_rng r = ls_rng_make(seed, 7);
    ls_world *w = new_world(600, 1400);
    ls_vec3 pts[12];
    for (int h = 0; h < 3; h++) {
        for (int i = 0; i < 12; i++) {
            pts[i] = v3(rnd(&r, -1, 1), rnd(&r, -1, 1), rnd(&r, -1, 1));
        }
        g_hulls[h] = ls_hull_create(pts, 12, NULL);
        cr_assert_not_null(g_hulls[h]);
    }
    if (regular) {
        ls_vec3 wedge[6] = {v3(-1, 0, -0.5), v3(1, 0, -0.5), v3(-1, 0, 0.5),
                            v3(1, 0, 0.5),   v3(-1, 1, 0),   v3(1, 1, 0)};
        ls_vec3 pyramid[5] = {v3(-1, 0, -1), v3(1, 0, -1), v3(-1, 0, 1), v3(1, 0, 1),
                              v3(0, 1.5, 0)};
        for (int h = 0; h < 3; h++) {
            ls_hull_destroy(g_hulls[h]);
        }
        g_hulls[0] = octahedron(0.9);
        g_hulls[1] = ls_hull_create(wedge, 6, NULL);
        g_hulls[2] = ls_hull_create(pyramid, 5, NULL);
        cr_assert(g_hulls[1] && g_hulls[2]);
    }
    add_static(w, plane(0, 1, 0, -32), v3(0, 0, 0));
    ls_mesh *m = floor_mesh(-30, 30, -30, 30, -28, 12, bumps);
    add_static(w, mesh_shape(m), v3(0, 0, 0));
    ls_mesh_destroy(m);
    for (int i = 0; i < 498; i++) {
        ls_body_def bd = ls_default_body_def();
        bd.type = ls_rng_next_u32(&r) % 3 == 0 ? LS_BODY_STATIC : LS_BODY_DYNAMIC;
        bd.position = v3(rnd(&r, -25, 25), rnd(&r, -25, 25), rnd(&r, -25, 25));
        bd.orientation = rnd_rot(&r);
        ls_shape_def parts[3];
        uint32_t n = ls_rng_next_u32(&r) % 5 == 0 ? 2 + ls_rng_next_u32(&r) % 2 : 1;
        for (uint32_t k = 0; k < n; k++) {
            parts[k] = rnd_shape(&r);
            parts[k].category = 1u << (ls_rng_next_u32(&r) % 4);
            parts[k].mask = ls_rng_next_u32(&r) % 4 == 0 ? 0x5u : UINT32_MAX;
            if (n > 1) {
                parts[k].local_position = v3(rnd(&r, -2, 2), rnd(&r, -2, 2), rnd(&r, -2, 2));
                parts[k].local_orientation = rnd_rot(&r);
            }
        }
        bd.shapes = parts;
        bd.shape_count = n;
        ls_error err;
        cr_assert_neq(ls_body_create(w, &bd, &err).index1, 0u, "%s", err.message);
    }
    return w;
}

static void free_hulls(void)
{
    for (int h = 0; h < 3; h++) {
        ls_hull_destroy(g_hulls[h]);
    }
}

typedef struct compare_stats {
    uint32_t rays, ray_hits, casts, cast_hits, cast_zero, overlaps, overlap_ids, boxes, box_ids;
} compare_stats;

static void hits_equal(bool a, const ls_ray_hit *ha, bool b, const ls_ray_hit *hb, int i,
                       const char *what)
{
    cr_assert_eq(a, b, "%s %d: tree %d, brute force %d", what, i, a, b);
    if (a) {
        cr_assert_eq(memcmp(ha, hb, sizeof *ha), 0,
                     "%s %d: tree shape %u t %d, brute force shape %u t %d", what, i,
                     ha->shape.index1, ha->fraction, hb->shape.index1, hb->fraction);
    }
}

// A random filter; *none: use NULL instead.
static ls_query_filter rnd_filter(ls_rng *r, const ls_world *w, bool *none)
{
    ls_query_filter f = ls_default_query_filter();
    uint32_t kind = ls_rng_next_u32(r) % 4;
    *none = kind == 0;
    if (kind == 1) {
        f.mask = 1u + ls_rng_next_u32(r) % 15;
        f.category = 1u << (ls_rng_next_u32(r) % 4);
    } else if (kind == 2) {
        f.ignore = ls_world_body_at(w, ls_rng_next_u32(r) % 500);
    }
    return f;
}

// n random queries of each kind, tree against brute force.
static void compare_queries(const ls_world *w, uint64_t seed, int n, compare_stats *st)
{
    ls_rng r = ls_rng_make(seed, 11);
    for (int i = 0; i < n; i++) {
        bool none;
        ls_query_filter f = rnd_filter(&r, w, &none);
        const ls_query_filter *fp = none ? NULL : &f;
        // Rays: long ones from outside through the cloud of bodies, short
        // ones inside it.
        ls_vec3 from, to;
        if (i % 2) {
            from = v3(rnd(&r, -40, 40), rnd(&r, -40, 40), rnd(&r, -40, 40));
            ls_vec3 aim = v3(rnd(&r, -20, 20), rnd(&r, -20, 20), rnd(&r, -20, 20));
            to = ls_vec3_add(aim, ls_vec3_sub(aim, from));
        } else {
            from = v3(rnd(&r, -25, 25), rnd(&r, -25, 25), rnd(&r, -25, 25));
            to = ls_vec3_add(from, v3(rnd(&r, -8, 8), rnd(&r, -8, 8), rnd(&r, -8, 8)));
        }
        ls_ray_hit ha, hb;
        memset(&ha, 0, sizeof ha);
        memset(&hb, 0, sizeof hb);
        bool a = ls_world_ray_cast_ex_(w, from, to, fp, &ha, false);
        bool b = ls_world_ray_cast_ex_(w, from, to, fp, &hb, true);
        hits_equal(a, &ha, b, &hb, i, "ray");
        st->rays++;
        st->ray_hits += a;
        if (!fp) {
            ls_ray_hit hc;
            memset(&hc, 0, sizeof hc);
            bool c = ls_world_ray_cast(w, from, to, &hc);
            hits_equal(a, &ha, c, &hc, i, "ls_world_ray_cast");
        }
        // Shape casts.
        ls_shape_def s = rnd_shape(&r);
        ls_vec3 p = v3(rnd(&r, -30, 30), rnd(&r, -30, 30), rnd(&r, -30, 30));
        ls_body_id near_body = ls_world_body_at(w, ls_rng_next_u32(&r) % 500);
        if (i % 2 && near_body.index1 != 0) { // near a body half of the time
            p = ls_vec3_add(ls_body_position(w, near_body),
                            v3(rnd(&r, -1.5, 1.5), rnd(&r, -1.5, 1.5), rnd(&r, -1.5, 1.5)));
        }
        ls_quat q = rnd_rot(&r);
        double len = i % 3 == 0 ? 30 : 6;
        ls_vec3 move = v3(rnd(&r, -len, len), rnd(&r, -len, len), rnd(&r, -len, len));
        memset(&ha, 0, sizeof ha);
        memset(&hb, 0, sizeof hb);
        a = ls_world_shape_cast_ex_(w, &s, p, q, move, fp, &ha, false);
        b = ls_world_shape_cast_ex_(w, &s, p, q, move, fp, &hb, true);
        hits_equal(a, &ha, b, &hb, i, "shape cast");
        st->casts++;
        st->cast_hits += a;
        st->cast_zero += a && ha.fraction == 0;
        // Overlaps.
        ls_shape_id oa[32], ob[32];
        memset(oa, 0, sizeof oa);
        memset(ob, 0, sizeof ob);
        uint32_t na = ls_world_overlap_shape_ex_(w, &s, p, q, fp, oa, 32, false);
        uint32_t nb = ls_world_overlap_shape_ex_(w, &s, p, q, fp, ob, 32, true);
        cr_assert_eq(na, nb, "overlap %d: tree %u, brute force %u", i, na, nb);
        cr_assert_eq(memcmp(oa, ob, sizeof oa), 0, "overlap %d: ids differ", i);
        st->overlaps++;
        st->overlap_ids += na;
        // AABB queries.
        ls_vec3 c = v3(rnd(&r, -35, 35), rnd(&r, -35, 35), rnd(&r, -35, 35));
        ls_vec3 e = v3(rnd(&r, 0, 6), rnd(&r, 0, 6), rnd(&r, 0, 6));
        ls_body_id ba[64], bb[64];
        memset(ba, 0, sizeof ba);
        memset(bb, 0, sizeof bb);
        na = ls_world_query_aabb_ex_(w, ls_vec3_sub(c, e), ls_vec3_add(c, e), ba, 64, false);
        nb = ls_world_query_aabb_ex_(w, ls_vec3_sub(c, e), ls_vec3_add(c, e), bb, 64, true);
        cr_assert_eq(na, nb, "aabb %d: tree %u, brute force %u", i, na, nb);
        cr_assert_eq(memcmp(ba, bb, sizeof ba), 0, "aabb %d: ids differ", i);
        st->boxes++;
        st->box_ids += na;
    }
}

Test(query, tree_gives_exactly_the_brute_force_answers_on_a_random_world, .timeout = 300)
{
    ls_world *w = random_world(42, false);
    compare_stats st;
    memset(&st, 0, sizeof st);
    compare_queries(w, 1, 2000, &st);
    // After the world moved: steps, then teleports, creations and
    // destructions between steps (caught by the body stamps).
    for (int t = 0; t < 30; t++) {
        ls_world_step(w);
    }
    compare_queries(w, 2, 300, &st);
    ls_rng r = ls_rng_make(3, 3);
    for (int round = 0; round < 10; round++) {
        ls_body_id b = ls_world_body_at(w, 2 + ls_rng_next_u32(&r) % 498);
        if (b.index1 == 0) {
            continue;
        }
        if (round % 3 == 0) {
            cr_assert_eq(ls_body_destroy(w, b), LS_OK);
        } else if (round % 3 == 1) {
            cr_assert_eq(
                ls_body_set_transform(w, b, v3(rnd(&r, -20, 20), 0, rnd(&r, -20, 20)), rnd_rot(&r)),
                LS_OK);
        } else {
            add(w, LS_BODY_DYNAMIC, rnd_shape(&r), v3(rnd(&r, -20, 20), 5, rnd(&r, -20, 20)),
                rnd_rot(&r));
        }
        compare_queries(w, 10 + (uint64_t)round, 30, &st);
    }
    cr_log_info("query: %u rays (%u hit), %u shape casts (%u hit, %u at 0), %u overlaps (%u ids), "
                "%u aabb (%u ids): tree == brute force",
                st.rays, st.ray_hits, st.casts, st.cast_hits, st.cast_zero, st.overlaps,
                st.overlap_ids, st.boxes, st.box_ids);
    fprintf(stderr,
            "query: %u rays (%u hit), %u shape casts (%u hit, %u at 0), %u overlaps (%u ids), "
            "%u aabb (%u ids): tree == brute force\n",
            st.rays, st.ray_hits, st.casts, st.cast_hits, st.cast_zero, st.overlaps, st.overlap_ids,
            st.boxes, st.box_ids);
    // Not vacuous: a good share of every kind of query finds something.
    cr_assert_gt(st.ray_hits, st.rays / 5);
    cr_assert_gt(st.cast_hits, st.casts / 5);
    cr_assert_gt(st.overlap_ids, st.overlaps / 10);
    cr_assert_gt(st.box_ids, st.boxes / 5);
    ls_world_destroy(w);
    free_hulls();
}

Test(query, queries_allocate_nothing_even_when_they_rebuild_the_tree)
{
    ls_world *w = random_world(5, false);
    ls_world_step(w);
    compare_stats st;
    memset(&st, 0, sizeof st);
    alloc_count_reset();
    compare_queries(w, 4, 50, &st); // the first one rebuilds after the step
    ls_world_step(w);
    ls_ray_hit hit;
    ls_body_id ids[4];
    ls_shape_id sids[4];
    ls_shape_def s = sphere(3);
    (void)ls_world_ray_cast(w, v3(0, 40, 0), v3(0, -40, 0), &hit);
    (void)ls_world_query_aabb(w, v3(-5, -5, -5), v3(5, 5, 5), ids, 4);
    (void)ls_world_overlap_shape(w, &s, v3(0, 0, 0), ls_quat_identity(), NULL, sids, 4);
    (void)ls_world_shape_cast(w, &s, v3(0, 30, 0), ls_quat_identity(), v3(0, -60, 0), NULL, &hit);
    cr_assert_eq(alloc_count_get(), 0u, "%llu heap allocations in queries",
                 (unsigned long long)alloc_count_get());
    ls_world_destroy(w);
    free_hulls();
}

// Run a fixed set of queries and fold every answer into one digest.
static uint64_t query_digest(const ls_world *w, uint64_t seed)
{
    ls_rng r = ls_rng_make(seed, 5);
    uint64_t h = 1469598103934665603u;
#define MIX(p, n)                                                                                  \
    for (size_t m_ = 0; m_ < (n); m_++) {                                                          \
        h = (h ^ ((const uint8_t *)(p))[m_]) * 1099511628211u;                                     \
    }
    for (int i = 0; i < 300; i++) {
        ls_ray_hit hit;
        memset(&hit, 0, sizeof hit);
        ls_vec3 from = v3(rnd(&r, -40, 40), 40, rnd(&r, -40, 40));
        ls_vec3 to = v3(rnd(&r, -40, 40), -40, rnd(&r, -40, 40));
        bool a = ls_world_ray_cast_filtered(w, from, to, NULL, &hit);
        MIX(&a, 1);
        MIX(&hit, sizeof hit);
        ls_shape_def s = rnd_shape(&r);
        ls_vec3 p = v3(rnd(&r, -30, 30), 30, rnd(&r, -30, 30));
        memset(&hit, 0, sizeof hit);
        a = ls_world_shape_cast(w, &s, p, ls_quat_identity(), v3(0, -60, 0), NULL, &hit);
        MIX(&a, 1);
        MIX(&hit, sizeof hit);
        ls_shape_id ids[16];
        memset(ids, 0, sizeof ids);
        uint32_t n = ls_world_overlap_shape(w, &s, ls_vec3_mad(p, v3(0, -1, 0), fx(rnd(&r, 0, 60))),
                                            ls_quat_identity(), NULL, ids, 16);
        MIX(&n, sizeof n);
        MIX(ids, sizeof ids);
    }
#undef MIX
    return h;
}

Test(query, a_restored_world_answers_exactly_as_the_original)
{
    // Regular hulls: a snapshot of some random-cloud hulls is refused on
    // restore (hull validation, not a query matter; see the report).
    ls_world *w = random_world(9, true);
    for (int t = 0; t < 60; t++) {
        ls_world_step(w);
    }
    size_t size = ls_world_snapshot_size(w);
    uint8_t *buf = malloc(size);
    cr_assert_eq(ls_world_snapshot_save(w, buf, size), size);
    uint64_t want = query_digest(w, 77);
    ls_world_def d = ls_default_world_def();
    d.max_bodies = 600;
    d.max_shapes = 1400;
    d.max_contacts = 8192;
    ls_world *fresh = ls_world_create(&d, NULL);
    ls_error err;
    cr_assert_eq(ls_world_snapshot_restore(fresh, buf, size, &err), LS_OK, "%s", err.message);
    cr_assert_eq(query_digest(fresh, 77), want, "a fresh world restored from the snapshot");
    // The original, moved on (its tree rebuilt), then restored.
    for (int t = 0; t < 30; t++) {
        ls_world_step(w);
    }
    cr_assert_neq(query_digest(w, 77), want, "the world moved");
    cr_assert_eq(ls_world_snapshot_restore(w, buf, size, NULL), LS_OK);
    cr_assert_eq(query_digest(w, 77), want, "the original after restoring");
    free(buf);
    ls_world_destroy(fresh);
    ls_world_destroy(w);
    free_hulls();
}

// ----------------------------------------------------------------- timing

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

Test(query, pile_1000_ten_thousand_rays_tree_against_brute_force, .timeout = 300)
{
    ls_scene sc;
    ls_error err;
    cr_assert_eq(ls_scene_load("tools/scenes/pile_1000.scene", &sc, &err), LS_OK, "%s",
                 err.message);
    ls_world *w = ls_scene_instantiate(&sc, &err);
    cr_assert_not_null(w, "%s", err.message);
    for (int t = 0; t < 120; t++) {
        ls_world_step(w);
    }
    enum { N = 10000 };
    static ls_vec3 from[N], to[N];
    ls_rng r = ls_rng_make(1000, 1);
    for (int i = 0; i < N; i++) {
        // Half straight down into the pile, half across it in any direction.
        if (i % 2) {
            double x = rnd(&r, -8, 8), z = rnd(&r, -8, 8);
            from[i] = v3(x, 30, z);
            to[i] = v3(x + rnd(&r, -2, 2), -1, z + rnd(&r, -2, 2));
        } else {
            from[i] = v3(rnd(&r, -15, 15), rnd(&r, 0, 10), rnd(&r, -15, 15));
            to[i] = v3(rnd(&r, -15, 15), rnd(&r, 0, 10), rnd(&r, -15, 15));
        }
    }
    static ls_ray_hit ha[N], hb[N];
    static bool a[N], b[N];
    double t0 = now_s();
    ls_ray_hit first;
    (void)ls_world_ray_cast(w, from[0], to[0], &first); // builds the tree
    double t1 = now_s();
    for (int i = 0; i < N; i++) {
        a[i] = ls_world_ray_cast_ex_(w, from[i], to[i], NULL, &ha[i], false);
    }
    double t2 = now_s();
    for (int i = 0; i < N; i++) {
        b[i] = ls_world_ray_cast_ex_(w, from[i], to[i], NULL, &hb[i], true);
    }
    double t3 = now_s();
    int hits = 0;
    for (int i = 0; i < N; i++) {
        hits_equal(a[i], &ha[i], b[i], &hb[i], i, "pile ray");
        hits += a[i];
    }
    // Shape casts of a 0.3 m sphere, straight down into the pile.
    ls_shape_def ball = sphere(0.3);
    double t4 = now_s();
    int cast_hits = 0;
    for (int i = 1; i < 2000; i += 2) {
        cast_hits += ls_world_shape_cast_ex_(w, &ball, from[i], ls_quat_identity(),
                                             ls_vec3_sub(to[i], from[i]), NULL, &ha[i], false);
    }
    double t5 = now_s();
    for (int i = 1; i < 2000; i += 2) {
        b[i] = ls_world_shape_cast_ex_(w, &ball, from[i], ls_quat_identity(),
                                       ls_vec3_sub(to[i], from[i]), NULL, &hb[i], true);
    }
    double t6 = now_s();
    char line[400];
    snprintf(line, sizeof line,
             "pile_1000 after 120 ticks: tree build %.3f ms; %d rays (%d hit): tree %.1f ms "
             "(%.2f us/ray), brute force %.1f ms (%.2f us/ray), x%.1f; 1000 sphere casts (%d "
             "hit): tree %.1f ms, brute force %.1f ms",
             (t1 - t0) * 1e3, N, hits, (t2 - t1) * 1e3, (t2 - t1) * 1e6 / N, (t3 - t2) * 1e3,
             (t3 - t2) * 1e6 / N, (t3 - t2) / (t2 - t1), cast_hits, (t5 - t4) * 1e3,
             (t6 - t5) * 1e3);
    cr_log_info("%s", line);
    fprintf(stderr, "%s\n", line);
    cr_assert_gt(hits, N / 4);
    ls_world_destroy(w);
    ls_scene_free(&sc);
}
