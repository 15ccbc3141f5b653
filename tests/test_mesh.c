// SPDX-License-Identifier: MIT
// Static triangle meshes: validation, OBJ reading, adjacency and active
// edges, the BVH query against brute force, triangle manifolds against
// hand-computed answers, the internal-edge rule on triangulated floors, and
// ray casts (SPEC.md §21).
#include "../fixmath_phys/src/collision/collide.h"
#include "../fixmath_phys/src/collision/hull.h"
#include "../fixmath_phys/src/collision/mesh.h"
#include "ls/rng.h"
#include "test_util.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define PI  3.14159265358979323846
#define ULP (1.0 / 65536.0)

static const ls_fx MARGIN = 1311; // 0.02 m

static double val(ls_fx v)
{
    return (double)v / 65536.0;
}

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

/// Manifold invariants: unit normal, unique ids, depths beyond -margin.
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

static int collide_tri(const ls_mesh *mesh, uint32_t t, const ls_xform *xm, const ls_geom *g,
                       const ls_xform *xg, ls_manifold *m)
{
    int n = ls_collide_mesh_triangle_(mesh, t, xm, g, xg, MARGIN, m);
    cr_assert_eq(n, m->count);
    assert_well_formed(m);
    return n;
}

/// One big triangle in the y = 0 plane, normal +y: (-10,0,-10) (-10,0,30)
/// (30,0,-10), so x >= -10, z >= -10, x + z <= 20 on it.
static ls_mesh *big_triangle(void)
{
    ls_vec3 v[3] = {v3(-10, 0, -10), v3(-10, 0, 30), v3(30, 0, -10)};
    uint32_t idx[3] = {0, 1, 2};
    ls_mesh *m = ls_mesh_create(v, 3, idx, 1, NULL);
    cr_assert_not_null(m);
    return m;
}

/// A flat floor of n x n cells of `cell` metres centred at the origin,
/// 2 triangles per cell, normal +y.
static ls_mesh *grid_floor(int n, double cell)
{
    int w = n + 1;
    ls_vec3 *v = malloc(sizeof *v * (size_t)(w * w));
    uint32_t *idx = malloc(sizeof *idx * (size_t)(6 * n * n));
    double o = -n * cell / 2;
    for (int z = 0; z < w; z++) {
        for (int x = 0; x < w; x++) {
            v[z * w + x] = v3(o + x * cell, 0, o + z * cell);
        }
    }
    int k = 0;
    for (int z = 0; z < n; z++) {
        for (int x = 0; x < n; x++) {
            uint32_t v00 = (uint32_t)(z * w + x), v10 = v00 + 1, v01 = v00 + (uint32_t)w,
                     v11 = v01 + 1;
            uint32_t t[6] = {v00, v01, v10, v10, v01, v11};
            memcpy(idx + k, t, sizeof t);
            k += 6;
        }
    }
    ls_error err;
    ls_mesh *m = ls_mesh_create(v, (uint32_t)(w * w), idx, (uint32_t)(2 * n * n), &err);
    cr_assert_not_null(m, "%s", err.message);
    free(v);
    free(idx);
    return m;
}

// ---------------------------------------------------------------- creation

static void expect_create_error(const ls_vec3 *v, uint32_t nv, const uint32_t *idx, uint32_t nt,
                                ls_result code, const char *needle, const char *field)
{
    ls_error err;
    ls_mesh *m = ls_mesh_create(v, nv, idx, nt, &err);
    cr_assert_null(m, "accepted a mesh that should fail with '%s'", needle);
    cr_assert_eq(err.code, code, "code %d for '%s' (message: %s)", err.code, needle, err.message);
    cr_assert(strstr(err.message, needle), "message '%s' lacks '%s'", err.message, needle);
    if (field) {
        cr_assert_str_eq(err.field, field);
    }
}

Test(mesh, create_refuses_bad_input_naming_the_triangle_or_vertex)
{
    ls_vec3 v[5] = {v3(0, 0, 0), v3(0, 0, 1), v3(1, 0, 0), v3(2, 0, 0), v3(0.001, 0, 0.001)};
    uint32_t out_of_range[6] = {0, 1, 2, 0, 1, 7};
    expect_create_error(v, 4, out_of_range, 2, LS_ERR_OUT_OF_RANGE,
                        "triangle 1: vertex index 7 is out of range", "triangles[1]");
    uint32_t repeated[3] = {2, 1, 2};
    expect_create_error(v, 4, repeated, 1, LS_ERR_INVALID_ARGUMENT,
                        "triangle 0 is degenerate: it uses vertex 2 twice", "triangles[0]");
    uint32_t collinear[6] = {0, 1, 2, 0, 2, 3}; // (0,0,0) (1,0,0) (2,0,0)
    expect_create_error(v, 4, collinear, 2, LS_ERR_INVALID_ARGUMENT,
                        "triangle 1 (vertices 0 2 3) is degenerate", "triangles[1]");
    // Twice the area 0.001 * 1 = 2^-9.97 m^2 passes; 1 mm legs (1e-6 m^2) do not.
    ls_vec3 tiny[3] = {v3(0, 0, 0), v3(0, 0, 0.001), v3(0.001, 0, 0)};
    uint32_t t0[3] = {0, 1, 2};
    expect_create_error(tiny, 3, t0, 1, LS_ERR_INVALID_ARGUMENT, "is degenerate", NULL);
    ls_vec3 far[3] = {v3(0, 0, 0), v3(0, 0, 1), v3(2048.5, 0, 0)};
    expect_create_error(far, 3, t0, 1, LS_ERR_OUT_OF_RANGE, "vertex 2: x = 2048.500000",
                        "vertices[2].x");
    ls_vec3 longe[3] = {v3(0, 0, 0), v3(0, 0, 1), v3(0, 130, 0)};
    expect_create_error(longe, 3, t0, 1, LS_ERR_OUT_OF_RANGE,
                        "edge from vertex 1 to vertex 2 is 130.0", "triangles[0]");
    expect_create_error(v, 4, t0, 0, LS_ERR_INVALID_ARGUMENT, "at least one triangle",
                        "triangle_count");
    expect_create_error(v, LS_MESH_MAX_VERTICES + 1, t0, 1, LS_ERR_CAPACITY, "too many vertices",
                        "vertex_count");
    expect_create_error(v, 4, t0, LS_MESH_MAX_TRIANGLES + 1, LS_ERR_CAPACITY, "too many triangles",
                        "triangle_count");
    // Exactly 128 m edges and the +-2048 m corners are accepted.
    ls_vec3 edge_ok[3] = {v3(2048, -2048, 2048), v3(2048, -2048, 1920), v3(2048, -1990, 1984)};
    ls_mesh *m = ls_mesh_create(edge_ok, 3, t0, 1, NULL);
    cr_assert_not_null(m);
    ls_mesh_destroy(m);
    ls_mesh_destroy(NULL);
}

Test(mesh, accessors_normals_clone_and_bounds)
{
    ls_vec3 v[4] = {v3(0, 0, 0), v3(0, 0, 1), v3(1, 0, 0), v3(0, 3, 0)};
    uint32_t idx[6] = {0, 1, 2, 0, 3, 1}; // floor (+y) and a wall in x = 0 (normal +x)
    ls_error err;
    ls_mesh *m = ls_mesh_create(v, 4, idx, 2, &err);
    cr_assert_not_null(m, "%s", err.message);
    cr_assert_eq(err.code, LS_OK);
    cr_assert_eq(ls_mesh_vertex_count(m), 4);
    cr_assert_eq(ls_mesh_triangle_count(m), 2);
    cr_assert(ls_vec3_equal(ls_mesh_vertex(m, 3), v[3]));
    uint32_t t[3];
    ls_mesh_triangle(m, 1, t);
    cr_assert(t[0] == 0 && t[1] == 3 && t[2] == 1);
    cr_assert(ls_vec3_equal(m->tris[0].normal, ls_vec3_make(0, LS_FX_ONE, 0)));
    cr_assert(m->tris[0].n30[1] == (1 << 30));
    cr_assert(ls_vec3_equal(m->tris[1].normal, ls_vec3_make(LS_FX_ONE, 0, 0)));
    ls_aabb b = ls_mesh_bounds_(m);
    cr_assert(ls_vec3_equal(b.min, v3(0, 0, 0)) && ls_vec3_equal(b.max, v3(1, 3, 1)));
    ls_mesh *c = ls_mesh_clone_(m);
    cr_assert_not_null(c);
    cr_assert_eq(ls_mesh_memory_size_(c), ls_mesh_memory_size_(m));
    cr_assert_eq(memcmp(c->tris, m->tris, sizeof(ls_mesh_tri) * 2), 0);
    cr_assert_eq(memcmp(c->nodes, m->nodes, sizeof(ls_mesh_node) * m->node_count), 0);
    cr_assert(c->vertices != m->vertices);
    ls_mesh_destroy(m);
    cr_assert(ls_vec3_equal(ls_mesh_vertex(c, 3), v[3])); // the clone stands alone
    ls_mesh_destroy(c);
}

/// Active flags of the edge of triangle t that joins vertices a and b.
static bool edge_active(const ls_mesh *m, uint32_t t, uint32_t a, uint32_t b)
{
    for (int e = 0; e < 3; e++) {
        uint32_t p = m->tris[t].v[e], q = m->tris[t].v[(e + 1) % 3];
        if ((p == a && q == b) || (p == b && q == a)) {
            return m->tris[t].active >> e & 1;
        }
    }
    cr_assert_fail("no such edge");
    return false;
}

/// Two triangles sharing the edge (0,0,0)-(0,0,1): the first in the floor
/// (x >= 0), the second bent about the shared edge by `deg` (positive: down,
/// a convex ridge; negative: up, a concave valley).
static ls_mesh *hinge(double deg)
{
    double a = deg * PI / 180;
    ls_vec3 v[4] = {v3(0, 0, 0), v3(0, 0, 1), v3(1, 0, 0), v3(-cos(a), -sin(a), 0.5)};
    uint32_t idx[6] = {0, 1, 2, 1, 0, 3};
    ls_mesh *m = ls_mesh_create(v, 4, idx, 2, NULL);
    cr_assert_not_null(m);
    return m;
}

Test(mesh, adjacency_and_active_edges)
{
    ls_mesh *flat = hinge(0);
    cr_assert_eq(flat->tris[0].adj[0], 1);
    cr_assert_eq(flat->tris[1].adj[0], 0);
    cr_assert_eq(flat->tris[0].adj[1], LS_MESH_NONE);
    cr_assert(!edge_active(flat, 0, 0, 1) && !edge_active(flat, 1, 0, 1), "flat: inactive");
    cr_assert(edge_active(flat, 0, 1, 2) && edge_active(flat, 0, 2, 0), "boundary: active");
    // Vertex 0 of triangle 0 touches boundary edge 2-0: active; every vertex is.
    cr_assert_eq(flat->tris[0].active >> 3, 7);
    ls_mesh_destroy(flat);
    static const struct {
        double deg;
        bool active;
    } cases[] = {{4.5, false}, {5.5, true},  {30, true},   {90, true},
                 {-3, false},  {-30, false}, {-90, false}, {179.5, true}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ls_mesh *m = hinge(cases[i].deg);
        cr_assert_eq(edge_active(m, 0, 0, 1), cases[i].active, "bend %.1f deg", cases[i].deg);
        cr_assert_eq(edge_active(m, 1, 0, 1), cases[i].active, "bend %.1f deg (other side)",
                     cases[i].deg);
        ls_mesh_destroy(m);
    }
    // A 2x2 grid: a vertex of a triangle is active when one of that
    // triangle's edges at it is (a boundary edge): never the centre vertex.
    ls_mesh *g = grid_floor(2, 1);
    int inactive_vertices = 0;
    for (uint32_t t = 0; t < 8; t++) {
        uint8_t a = g->tris[t].active;
        for (int k = 0; k < 3; k++) {
            bool va = a >> (3 + k) & 1;
            cr_assert_eq(va, (bool)((a >> k & 1) | (a >> ((k + 2) % 3) & 1)));
            cr_assert(!va || g->tris[t].v[k] != 4);
            inactive_vertices += !va;
        }
    }
    cr_assert_eq(inactive_vertices,
                 10); // centre x 6, plus 2 x 2 in the two triangles without a boundary edge
    ls_mesh_destroy(g);
}

// ---------------------------------------------------------------- OBJ

static ls_mesh *obj(const char *text)
{
    ls_error err;
    ls_mesh *m = ls_mesh_create_obj(text, strlen(text), &err);
    cr_assert_not_null(m, "OBJ refused: %u:%u %s", err.line, err.column, err.message);
    cr_assert_eq(err.code, LS_OK);
    return m;
}

static void tri_is(const ls_mesh *m, uint32_t t, uint32_t a, uint32_t b, uint32_t c)
{
    uint32_t o[3];
    ls_mesh_triangle(m, t, o);
    cr_assert(o[0] == a && o[1] == b && o[2] == c, "triangle %u is %u %u %u, want %u %u %u", t,
              o[0], o[1], o[2], a, b, c);
}

Test(mesh, obj_reads_vertices_faces_fans_negative_indices_and_crlf)
{
    ls_mesh *m = obj("# a quad and a triangle\n"
                     "mtllib scene.mtl\n"
                     "o floor\n"
                     "v -1 0 -1\n"
                     "v -1 0 1   # comment after a vertex\n"
                     "v 1 0 1\n"
                     "v 1.5 0 -1.25 1.0\n"
                     "vt 0 0\n"
                     "vn 0 1 0\n"
                     "g group\n"
                     "usemtl stone\n"
                     "s off\n"
                     "f 1/1/1 2/1/1 3//1 4\n"
                     "\n"
                     "v 0 1 0\n"
                     "f -5 -1 -4\n");
    cr_assert_eq(ls_mesh_vertex_count(m), 5);
    cr_assert_eq(ls_mesh_triangle_count(m), 3);
    tri_is(m, 0, 0, 1, 2);
    tri_is(m, 1, 0, 2, 3);
    tri_is(m, 2, 0, 4, 1);
    cr_assert(ls_vec3_equal(ls_mesh_vertex(m, 3), v3(1.5, 0, -1.25)));
    ls_mesh_destroy(m);
    // CRLF line ends and tabs; a last line without its line end.
    m = obj("v 0 0 0\r\nv 0 0 1\r\n\tv\t1 0 0\r\nf 1 2 3\r\nf 3 2 -3");
    cr_assert_eq(ls_mesh_triangle_count(m), 2);
    tri_is(m, 1, 2, 1, 0);
    ls_mesh_destroy(m);
    // Raw literals of §9 are numbers too; a pentagon gives 3 triangles.
    m = obj("v 0x0 0 0\nv raw:0 0 1\nv 1 0 1\nv 1.5 0 0.5\nv 1 0 0\nf 1 2 3 4 5\n");
    cr_assert_eq(ls_mesh_triangle_count(m), 3);
    tri_is(m, 2, 0, 3, 4);
    ls_mesh_destroy(m);
}

static void expect_obj_error(const char *text, ls_result code, uint32_t line, uint32_t column,
                             const char *needle)
{
    ls_error err;
    ls_mesh *m = ls_mesh_create_obj(text, strlen(text), &err);
    cr_assert_null(m, "accepted: %s", text);
    cr_assert_eq(err.code, code, "code %d (%s) for '%s'", err.code, err.message, needle);
    cr_assert(err.line == line && err.column == column, "'%s' at %u:%u, want %u:%u (%s)", needle,
              err.line, err.column, line, column, err.message);
    cr_assert(strstr(err.message, needle), "message '%s' lacks '%s'", err.message, needle);
}

Test(mesh, obj_errors_name_line_column_and_what)
{
    const char *tri = "v 0 0 0\nv 0 0 1\nv 1 0 0\n";
    char buf[8192];
    expect_obj_error("v 0 0 0\nv 1 x 0\n", LS_ERR_PARSE, 2, 5, "bad number 'x'");
    expect_obj_error("v 0 0 1e3\n", LS_ERR_PARSE, 1, 7, "bad number '1e3'");
    expect_obj_error("v 0 0 40000\n", LS_ERR_OUT_OF_RANGE, 1, 7, "outside the Q16.16 range");
    expect_obj_error("v 0 2049 0\n", LS_ERR_OUT_OF_RANGE, 1, 5, "vertex 1: y = 2049");
    expect_obj_error("v 0 0\n", LS_ERR_PARSE, 1, 6, "vertex 1 has 2 coordinates");
    expect_obj_error("v 0 0 0 1 1 1 1 1\n", LS_ERR_PARSE, 1, 17, "too many values");
    snprintf(buf, sizeof buf, "%sf 1 2 4\n", tri);
    expect_obj_error(buf, LS_ERR_OUT_OF_RANGE, 4, 7, "vertex index 4 is out of range");
    snprintf(buf, sizeof buf, "%sf 1 2 -4\n", tri);
    expect_obj_error(buf, LS_ERR_OUT_OF_RANGE, 4, 7, "vertex index -4 is out of range");
    snprintf(buf, sizeof buf, "%sf 0 1 2\n", tri);
    expect_obj_error(buf, LS_ERR_OUT_OF_RANGE, 4, 3, "vertex index 0");
    snprintf(buf, sizeof buf, "%sf 1 2\n", tri);
    expect_obj_error(buf, LS_ERR_PARSE, 4, 1, "face with 2 vertices");
    snprintf(buf, sizeof buf, "%sf 1 2/ 3\n", tri);
    expect_obj_error(buf, LS_ERR_PARSE, 4, 5, "bad vertex reference '2/'");
    snprintf(buf, sizeof buf, "%sf 1 2 3a\n", tri);
    expect_obj_error(buf, LS_ERR_PARSE, 4, 7, "bad vertex reference '3a'");
    snprintf(buf, sizeof buf, "%sf 1 2 3\nf 1 2 2\n", tri);
    expect_obj_error(buf, LS_ERR_INVALID_ARGUMENT, 5, 7,
                     "triangle 1 is degenerate: it uses vertex 1 twice (OBJ vertices 1 2 2)");
    snprintf(buf, sizeof buf, "%sv 2 0 0\nf 1 2 3\nf 1 3 4\n", tri);
    expect_obj_error(buf, LS_ERR_INVALID_ARGUMENT, 6, 7, "(OBJ vertices 1 3 4)");
    expect_obj_error("v 0 0 0\ncurv 0 1\n", LS_ERR_PARSE, 2, 1, "unknown statement 'curv'");
    expect_obj_error("v 0 0 0\n", LS_ERR_PARSE, 1, 1, "no faces");
    expect_obj_error("", LS_ERR_PARSE, 1, 1, "no faces");
    expect_obj_error("v 0 0 0\nv 0\x01 0 0\n", LS_ERR_PARSE, 2, 4, "control character 0x01");
    char lng[5000];
    memset(lng, ' ', sizeof lng);
    memcpy(lng, "# long", 6);
    lng[sizeof lng - 1] = 0;
    expect_obj_error(lng, LS_ERR_PARSE, 1, 4097, "line longer than 4096 bytes");
    // A NUL inside the text is a control character, not an end.
    ls_error err;
    ls_mesh *m = ls_mesh_create_obj("v 0 0 0\0\n", 9, &err);
    cr_assert_null(m);
    cr_assert(err.line == 1 && err.column == 8, "%u:%u", err.line, err.column);
}

Test(mesh, obj_limits_are_enforced_in_linear_time)
{
    // One vertex past the limit: refused on that line, without quadratic work.
    size_t lines = (size_t)LS_MESH_MAX_VERTICES + 1;
    char *text = malloc(lines * 8 + 1);
    for (size_t i = 0; i < lines; i++) {
        memcpy(text + 8 * i, "v 0 0 0\n", 8);
    }
    ls_error err;
    cr_assert_null(ls_mesh_create_obj(text, lines * 8, &err));
    cr_assert_eq(err.code, LS_ERR_CAPACITY);
    cr_assert(err.line == LS_MESH_MAX_VERTICES + 1 && err.column == 1, "%u:%u", err.line,
              err.column);
    cr_assert(strstr(err.message, "too many vertices"), "%s", err.message);
    free(text);
    // A 256 x 256 grid (131072 triangles) reads and builds.
    int n = 256, w = n + 1;
    size_t cap = (size_t)(w * w) * 32 + (size_t)(n * n) * 48;
    text = malloc(cap);
    size_t len = 0;
    for (int z = 0; z < w; z++) {
        for (int x = 0; x < w; x++) {
            len += (size_t)snprintf(text + len, cap - len, "v %d 0 %d\n", x - 128, z - 128);
        }
    }
    for (int z = 0; z < n; z++) {
        for (int x = 0; x < n; x++) {
            int a = z * w + x + 1, b = a + 1, c = a + w, d = c + 1;
            len += (size_t)snprintf(text + len, cap - len, "f %d %d %d %d\n", a, c, d, b);
        }
    }
    ls_mesh *m = ls_mesh_create_obj(text, len, &err);
    cr_assert_not_null(m, "%u:%u %s", err.line, err.column, err.message);
    cr_assert_eq(ls_mesh_triangle_count(m), 2u * (uint32_t)(n * n));
    ls_mesh_destroy(m);
    free(text);
}

// ---------------------------------------------------------------- query

static ls_mesh *random_mesh(ls_rng *rng, uint32_t nt, ls_vec3 **vout)
{
    ls_vec3 *v = malloc(sizeof *v * 3 * nt);
    uint32_t *idx = malloc(sizeof *idx * 3 * nt);
    for (uint32_t t = 0; t < nt; t++) {
        ls_vec3 c =
            ls_vec3_make(ls_rng_range(rng, fx(-50), fx(50)), ls_rng_range(rng, fx(-10), fx(10)),
                         ls_rng_range(rng, fx(-50), fx(50)));
        for (int k = 0; k < 3; k++) {
            v[3 * t + (uint32_t)k] = ls_vec3_add(c, ls_vec3_make(ls_rng_range(rng, fx(-3), fx(3)),
                                                                 ls_rng_range(rng, fx(-3), fx(3)),
                                                                 ls_rng_range(rng, fx(-3), fx(3))));
            idx[3 * t + (uint32_t)k] = 3 * t + (uint32_t)k;
        }
    }
    ls_error err;
    ls_mesh *m = ls_mesh_create(v, 3 * nt, idx, nt, &err);
    cr_assert_not_null(m, "%s", err.message);
    free(idx);
    *vout = v;
    return m;
}

Test(mesh, query_equals_brute_force_in_ascending_order)
{
    ls_rng rng = ls_rng_make(7, 1);
    ls_vec3 *v;
    const uint32_t nt = 3000;
    ls_mesh *m = random_mesh(&rng, nt, &v);
    static uint32_t got[3000], want[3000], few[7];
    uint64_t total_hits = 0;
    for (int q = 0; q < 1000; q++) {
        ls_vec3 c =
            ls_vec3_make(ls_rng_range(&rng, fx(-60), fx(60)), ls_rng_range(&rng, fx(-15), fx(15)),
                         ls_rng_range(&rng, fx(-60), fx(60)));
        ls_vec3 h = ls_vec3_make(ls_rng_range(&rng, 0, fx(12)), ls_rng_range(&rng, 0, fx(12)),
                                 ls_rng_range(&rng, 0, fx(12)));
        ls_aabb b = {ls_vec3_sub(c, h), ls_vec3_add(c, h)};
        uint32_t nw = 0;
        for (uint32_t t = 0; t < nt; t++) {
            ls_vec3 a = v[3 * t], bb = v[3 * t + 1], cc = v[3 * t + 2];
            ls_vec3 lo = ls_vec3_min(a, ls_vec3_min(bb, cc)),
                    hi = ls_vec3_max(a, ls_vec3_max(bb, cc));
            if (lo.x <= b.max.x && b.min.x <= hi.x && lo.y <= b.max.y && b.min.y <= hi.y &&
                lo.z <= b.max.z && b.min.z <= hi.z) {
                want[nw++] = t;
            }
        }
        uint32_t n = ls_mesh_query_(m, b, got, nt);
        cr_assert_eq(n, nw, "query %d: %u hits, brute force %u", q, n, nw);
        cr_assert_eq(memcmp(got, want, sizeof *got * n), 0, "query %d: different triangles", q);
        uint32_t k = ls_mesh_query_(m, b, few, 7);
        cr_assert_eq(k, nw);
        cr_assert_eq(memcmp(few, want, sizeof *few * (nw < 7 ? nw : 7)), 0,
                     "query %d: truncated result is not the smallest indices", q);
        cr_assert_eq(ls_mesh_query_(m, b, NULL, 0), nw);
        total_hits += nw;
    }
    cr_assert(total_hits > 5000, "the boxes hit too little to mean anything (%llu)",
              (unsigned long long)total_hits);
    // A box touching a triangle's AABB corner exactly counts (closed intervals).
    ls_vec3 lo = ls_vec3_min(v[0], ls_vec3_min(v[1], v[2]));
    ls_aabb corner = {ls_vec3_sub(lo, v3(1, 1, 1)), lo};
    uint32_t n = ls_mesh_query_(m, corner, got, nt);
    bool found = false;
    for (uint32_t i = 0; i < n; i++) {
        found = found || got[i] == 0;
    }
    cr_assert(found);
    free(v);
    ls_mesh_destroy(m);
}

// ---------------------------------------------------------------- manifolds

Test(mesh, sphere_against_a_triangle_face_edge_vertex_and_behind)
{
    ls_mesh *mesh = big_triangle();
    ls_xform xm = at(0, 0, 0);
    ls_geom s = sphere(0.5);
    ls_manifold m;
    ls_xform xs = at(1, 0.4, 2);
    cr_assert_eq(collide_tri(mesh, 0, &xm, &s, &xs, &m), 1);
    cr_assert(ls_vec3_equal(m.normal, v3(0, 1, 0)));
    assert_near(val(m.points[0].depth), 0.1, ULP, "face depth");
    assert_vec_near(m.points[0].point, 1, -0.05, 2, ULP, "face point");
    // Beyond the boundary edge x = -10 (active): the normal points from the edge to the centre.
    xs = at(-10.3, 0.3, 0);
    cr_assert_eq(collide_tri(mesh, 0, &xm, &s, &xs, &m), 1);
    assert_vec_near(m.normal, -sqrt(0.5), sqrt(0.5), 0, 2 * ULP, "edge normal");
    assert_near(val(m.points[0].depth), 0.5 - sqrt(0.18), 2 * ULP, "edge depth");
    // Beyond vertex (30, 0, -10).
    xs = at(30.2, 0.2, -10.2);
    cr_assert_eq(collide_tri(mesh, 0, &xm, &s, &xs, &m), 1);
    double l = sqrt(0.12);
    assert_vec_near(m.normal, 0.2 / l, 0.2 / l, -0.2 / l, 2 * ULP, "vertex normal");
    assert_near(val(m.points[0].depth), 0.5 - l, 2 * ULP, "vertex depth");
    // Within the margin only: a negative depth.
    xs = at(0, 0.51, 0);
    cr_assert_eq(collide_tri(mesh, 0, &xm, &s, &xs, &m), 1);
    assert_near(val(m.points[0].depth), -0.01, ULP, "speculative depth");
    xs = at(0, 0.53, 0);
    cr_assert_eq(collide_tri(mesh, 0, &xm, &s, &xs, &m), 0);
    // One-sided: centre below the plane but touching still pushes up...
    xs = at(0, -0.2, 0);
    cr_assert_eq(collide_tri(mesh, 0, &xm, &s, &xs, &m), 1);
    cr_assert(ls_vec3_equal(m.normal, v3(0, 1, 0)));
    assert_near(val(m.points[0].depth), 0.7, ULP, "depth from below");
    // ...entirely behind gives nothing, nor does an edge seen from below.
    xs = at(0, -0.51, 0);
    cr_assert_eq(collide_tri(mesh, 0, &xm, &s, &xs, &m), 0);
    xs = at(-10.3, -0.3, 0);
    cr_assert_eq(collide_tri(mesh, 0, &xm, &s, &xs, &m), 0);
    // On a moved and turned mesh the answer moves with it.
    ls_xform xr = at_rot(5, 1, -3, 0, 0, 1, PI / 2); // the floor becomes the wall x = 5, normal -x
    ls_xform xw = at(4.6, 1, -1);
    cr_assert_eq(collide_tri(mesh, 0, &xr, &s, &xw, &m), 1);
    assert_vec_near(m.normal, -1, 0, 0, 2 * ULP, "turned normal");
    assert_near(val(m.points[0].depth), 0.1, 2 * ULP, "turned depth");
    ls_mesh_destroy(mesh);
}

Test(mesh, capsule_lying_standing_and_at_an_edge)
{
    ls_mesh *mesh = big_triangle();
    ls_xform xm = at(0, 0, 0);
    ls_geom c = capsule(0.25, 1);
    ls_manifold m;
    // Lying along x at height 0.2: two points at the segment ends, depth 0.05.
    ls_xform xc = at_rot(0, 0.2, 0, 0, 0, 1, PI / 2);
    cr_assert_eq(collide_tri(mesh, 0, &xm, &c, &xc, &m), 2);
    cr_assert(ls_vec3_equal(m.normal, v3(0, 1, 0)));
    for (int i = 0; i < 2; i++) {
        assert_near(val(m.points[i].depth), 0.05, 2 * ULP, "lying depth");
        assert_near(fabs(val(m.points[i].point.x)), 1, 2 * ULP, "lying end");
        assert_near(val(m.points[i].point.y), -0.025, 2 * ULP, "lying point height");
    }
    // Standing: one point under the lower end.
    xc = at(2, 1.2, 3);
    cr_assert_eq(collide_tri(mesh, 0, &xm, &c, &xc, &m), 1);
    cr_assert(ls_vec3_equal(m.normal, v3(0, 1, 0)));
    assert_near(val(m.points[0].depth), 0.05, 2 * ULP, "standing depth");
    assert_vec_near(m.points[0].point, 2, -0.025, 3, 2 * ULP, "standing point");
    // Lying across the boundary edge x = -10, half over the void: clipped to the triangle.
    xc = at_rot(-10, 0.2, 0, 0, 0, 1, PI / 2);
    cr_assert_eq(collide_tri(mesh, 0, &xm, &c, &xc, &m), 2);
    cr_assert(ls_vec3_equal(m.normal, v3(0, 1, 0)));
    double xs[2] = {val(m.points[0].point.x), val(m.points[1].point.x)};
    cr_assert(fabs(fmin(xs[0], xs[1]) + 10) < 4 * ULP && fabs(fmax(xs[0], xs[1]) + 9) < 4 * ULP,
              "clipped ends %f %f", xs[0], xs[1]);
    // Parallel to and outside the boundary edge: the edge normal.
    xc = at_rot(-10.2, 0.1, 0, 1, 0, 0, PI / 2); // axis along z
    cr_assert_eq(collide_tri(mesh, 0, &xm, &c, &xc, &m), 1);
    double l = sqrt(0.05);
    assert_vec_near(m.normal, -0.2 / l, 0.1 / l, 0, 2 * ULP, "edge normal");
    assert_near(val(m.points[0].depth), 0.25 - l, 2 * ULP, "edge depth");
    ls_mesh_destroy(mesh);
}

Test(mesh, box_resting_tilted_and_at_a_boundary_edge)
{
    ls_mesh *mesh = big_triangle();
    ls_xform xm = at(0, 0, 0);
    ls_geom b = box(0.5, 0.25, 0.5);
    ls_manifold m;
    ls_xform xb = at(1, 0.24, 1);
    cr_assert_eq(collide_tri(mesh, 0, &xm, &b, &xb, &m), 4);
    cr_assert(ls_vec3_equal(m.normal, v3(0, 1, 0)));
    for (int i = 0; i < 4; i++) {
        assert_near(val(m.points[i].depth), 0.01, ULP, "resting depth");
        assert_near(val(m.points[i].point.y), -0.005, ULP, "resting point height");
        assert_near(fabs(val(m.points[i].point.x) - 1), 0.5, ULP, "corner x");
        assert_near(fabs(val(m.points[i].point.z) - 1), 0.5, ULP, "corner z");
    }
    // On an edge (45 degrees about z), 1 cm deep: the two ends of the lowest edge.
    double hd = sqrt(0.5 * 0.5 + 0.25 * 0.25) * sin(atan2(0.25, 0.5) + PI / 4);
    xb = at_rot(0, hd - 0.01, 0, 0, 0, 1, PI / 4);
    cr_assert_eq(collide_tri(mesh, 0, &xm, &b, &xb, &m), 2);
    cr_assert(ls_vec3_equal(m.normal, v3(0, 1, 0)));
    for (int i = 0; i < 2; i++) {
        assert_near(val(m.points[i].depth), 0.01, 4 * ULP, "edge-down depth");
        assert_near(fabs(val(m.points[i].point.z)), 0.5, 4 * ULP, "edge-down ends");
    }
    // Hanging over the boundary edge x = -10 and below its top: the box side
    // face (normal -x) pushes... only if the edge is active; it is.
    xb = at(-10.49, 0, 0);
    cr_assert(collide_tri(mesh, 0, &xm, &b, &xb, &m) > 0);
    assert_vec_near(m.normal, -1, 0, 0, ULP, "boundary edge normal");
    assert_near(val(m.points[0].depth), 0.01, 2 * ULP, "boundary edge depth");
    // Entirely below the plane: nothing.
    xb = at(0, -0.26, 0);
    cr_assert_eq(collide_tri(mesh, 0, &xm, &b, &xb, &m), 0);
    // Above by more than the margin: nothing.
    xb = at(0, 0.28, 0);
    cr_assert_eq(collide_tri(mesh, 0, &xm, &b, &xb, &m), 0);
    ls_mesh_destroy(mesh);
}

/// A box-shaped hull of half extents h built by hand (8 vertices, 6 faces, 12 edges).
static void hand_box_hull(ls_vec3 h, struct ls_hull *hl)
{
    memset(hl, 0, sizeof *hl);
    hl->vertex_count = 8;
    for (int id = 0; id < 8; id++) {
        hl->vertices[id] =
            ls_vec3_make((id & 1) ? h.x : -h.x, (id & 2) ? h.y : -h.y, (id & 4) ? h.z : -h.z);
    }
    // Faces +x -x +y -y +z -z, counter-clockwise from outside.
    static const uint8_t loops[6][4] = {{1, 3, 7, 5}, {0, 4, 6, 2}, {2, 6, 7, 3},
                                        {0, 1, 5, 4}, {4, 5, 7, 6}, {0, 2, 3, 1}};
    hl->face_count = 6;
    for (int f = 0; f < 6; f++) {
        int k = f / 2;
        ls_fx s = (f & 1) ? -LS_FX_ONE : LS_FX_ONE;
        hl->faces[f].normal = ls_vec3_make(k == 0 ? s : 0, k == 1 ? s : 0, k == 2 ? s : 0);
        hl->faces[f].d = k == 0 ? h.x : k == 1 ? h.y : h.z;
        hl->faces[f].first = (uint16_t)(4 * f);
        hl->faces[f].count = 4;
        memcpy(hl->face_vertices + 4 * f, loops[f], 4);
    }
    int e = 0;
    for (int k = 0; k < 3; k++) {
        for (int id = 0; id < 8; id++) {
            if (!(id & (1 << k))) {
                int k1 = (k + 1) % 3, k2 = (k + 2) % 3;
                hl->edges[e].v[0] = (uint8_t)id;
                hl->edges[e].v[1] = (uint8_t)(id | 1 << k);
                hl->edges[e].f[0] = (uint8_t)(2 * k1 + !(id >> k1 & 1));
                hl->edges[e].f[1] = (uint8_t)(2 * k2 + !(id >> k2 & 1));
                e++;
            }
        }
    }
    hl->edge_count = 12;
    hl->radius = ls_vec3_len(h);
}

Test(mesh, hull_against_a_triangle_matches_the_box)
{
    ls_mesh *mesh = big_triangle();
    ls_xform xm = at(0, 0, 0);
    static struct ls_hull hl;
    hand_box_hull(v3(0.5, 0.25, 0.5), &hl);
    ls_geom gh = {.kind = LS_SHAPE_HULL, .hull = &hl};
    ls_geom gb = box(0.5, 0.25, 0.5);
    ls_rng rng = ls_rng_make(3, 3);
    int contacts = 0;
    for (int i = 0; i < 300; i++) {
        double x = ((double)ls_rng_below(&rng, 2000) - 1000) / 100.0;
        double z = ((double)ls_rng_below(&rng, 2000) - 1000) / 100.0;
        double y = (ls_rng_below(&rng, 800)) / 1000.0 - 0.3;
        double ang = ls_rng_below(&rng, 6283) / 1000.0;
        ls_xform xb = at_rot(x, y, z, 0.6, 0.8, 0, ang);
        ls_manifold mb, mh;
        int nb = collide_tri(mesh, 0, &xm, &gb, &xb, &mb);
        int nh = collide_tri(mesh, 0, &xm, &gh, &xb, &mh);
        cr_assert_eq(nh, nb, "case %d: hull %d points, box %d", i, nh, nb);
        if (nb) {
            cr_assert(abs(mh.normal.x - mb.normal.x) <= 4 && abs(mh.normal.y - mb.normal.y) <= 4 &&
                          abs(mh.normal.z - mb.normal.z) <= 4,
                      "case %d: normals differ", i);
            ls_fx db = LS_FX_MIN, dh = LS_FX_MIN;
            for (int k = 0; k < nb; k++) {
                db = ls_fx_max(db, mb.points[k].depth);
                dh = ls_fx_max(dh, mh.points[k].depth);
            }
            cr_assert(abs(db - dh) <= 4, "case %d: depth %d vs %d", i, dh, db);
            contacts++;
        }
    }
    cr_assert(contacts > 150, "only %d contacts", contacts);
    // A resting hull: 4 points at the exact depth with the exact normal.
    ls_xform xb = at(2, 0.24, -3);
    ls_manifold mh;
    cr_assert_eq(collide_tri(mesh, 0, &xm, &gh, &xb, &mh), 4);
    cr_assert(ls_vec3_equal(mh.normal, v3(0, 1, 0)));
    for (int k = 0; k < 4; k++) {
        assert_near(val(mh.points[k].depth), 0.01, ULP, "hull depth");
    }
    ls_mesh_destroy(mesh);
}

// ---------------------------------------------------------------- internal edges

/// Every manifold between the floor's triangles under shape g and g: the
/// normal is exactly +y; returns the number of points and the deepest depth.
static int floor_contacts(const ls_mesh *mesh, const ls_geom *g, const ls_xform *xg, ls_fx *deepest)
{
    ls_xform xm = at(0, 0, 0);
    ls_aabb wb = ls_geom_aabb_(g, xg, MARGIN);
    uint32_t tris[64];
    uint32_t n = ls_mesh_query_(mesh, ls_mesh_local_aabb_(&xm, wb), tris, 64);
    cr_assert(n <= 64);
    int points = 0;
    *deepest = LS_FX_MIN;
    for (uint32_t i = 0; i < n; i++) {
        ls_manifold m;
        int c = collide_tri(mesh, tris[i], &xm, g, xg, &m);
        if (c) {
            cr_assert(ls_vec3_equal(m.normal, v3(0, 1, 0)),
                      "triangle %u: normal (%d %d %d), not the face normal", tris[i], m.normal.x,
                      m.normal.y, m.normal.z);
        }
        for (int k = 0; k < c; k++) {
            *deepest = ls_fx_max(*deepest, m.points[k].depth);
        }
        points += c;
    }
    return points;
}

/// A position near grid lines and vertices: x, z on multiples of `cell`
/// plus an offset of at most ~2 mm, or anywhere.
static double near_line(ls_rng *rng, double range, double cell)
{
    double base =
        (double)((int)ls_rng_below(rng, (uint32_t)(2 * range / cell)) - (int)(range / cell)) * cell;
    switch (ls_rng_below(rng, 3)) {
    case 0:
        return base;
    case 1:
        return base + ((double)ls_rng_below(rng, 4001) - 2000) / 1e6;
    default:
        return base + ls_rng_below(rng, 10000) * cell / 10000;
    }
}

static void slide_over_floor(ls_mesh *mesh, double range, double cell, int samples)
{
    ls_rng rng = ls_rng_make(11, (uint64_t)samples);
    for (int i = 0; i < samples; i++) {
        double hx = 0.2 + ls_rng_below(&rng, 800) / 1000.0;
        double hy = 0.1 + ls_rng_below(&rng, 500) / 1000.0;
        double hz = 0.2 + ls_rng_below(&rng, 800) / 1000.0;
        double pen = ls_rng_below(&rng, 50) / 10000.0; // 0 .. 5 mm deep
        double x = near_line(&rng, range, cell), z = near_line(&rng, range, cell);
        double yaw;
        switch (ls_rng_below(&rng, 3)) {
        case 0:
            yaw = 0;
            break;
        case 1:
            yaw = PI / 4 * ls_rng_below(&rng, 8);
            break;
        default:
            yaw = ls_rng_below(&rng, 62832) / 10000.0;
        }
        ls_geom b = box(hx, hy, hz);
        ls_xform xb = at_rot(x, hy - pen, z, 0, 1, 0, yaw);
        ls_fx deepest;
        int n = floor_contacts(mesh, &b, &xb, &deepest);
        cr_assert(n > 0, "box %d at (%f, %f) yaw %f has no contact", i, x, z, yaw);
        assert_near(val(deepest), pen, 4 * ULP, "box depth");
        // Spheres and lying capsules too.
        ls_geom s = sphere(hx);
        ls_xform xs = at(x, hx - pen, z);
        n = floor_contacts(mesh, &s, &xs, &deepest);
        cr_assert(n > 0);
        assert_near(val(deepest), pen, 2 * ULP, "sphere depth");
        ls_geom c = capsule(hy, hx);
        ls_xform xc = at_rot(x, hy - pen, z, sin(yaw), 0, cos(yaw), PI / 2);
        n = floor_contacts(mesh, &c, &xc, &deepest);
        cr_assert(n > 0);
        assert_near(val(deepest), pen, 4 * ULP, "capsule depth");
    }
}

Test(mesh, box_on_a_two_triangle_floor_gets_only_the_face_normal)
{
    ls_mesh *mesh = grid_floor(1, 8); // one 8 m square, diagonal from (-4,4) to (4,-4)
    slide_over_floor(mesh, 2.5, 0.5, 3000);
    // Right across the diagonal, yawed along it and slightly off it.
    for (int k = -20; k <= 20; k++) {
        ls_geom b = box(1, 0.25, 0.3);
        ls_xform xb = at_rot(k * 0.0005, 0.245, 0, 0, 1, 0, PI / 4 + k * 0.01);
        ls_fx deepest;
        cr_assert(floor_contacts(mesh, &b, &xb, &deepest) > 0);
        assert_near(val(deepest), 0.005, 4 * ULP, "diagonal depth");
    }
    ls_mesh_destroy(mesh);
}

Test(mesh, box_on_a_16x16_grid_gets_only_the_face_normal)
{
    ls_mesh *mesh = grid_floor(16, 1);
    slide_over_floor(mesh, 6, 1, 3000);
    ls_mesh_destroy(mesh);
}

Test(mesh, hull_on_a_grid_gets_only_the_face_normal)
{
    ls_mesh *mesh = grid_floor(16, 1);
    static struct ls_hull hl;
    hand_box_hull(v3(0.4, 0.2, 0.3), &hl);
    ls_geom gh = {.kind = LS_SHAPE_HULL, .hull = &hl};
    ls_rng rng = ls_rng_make(5, 5);
    for (int i = 0; i < 500; i++) {
        double x = near_line(&rng, 5, 1), z = near_line(&rng, 5, 1);
        ls_xform xh = at_rot(x, 0.198, z, 0, 1, 0, ls_rng_below(&rng, 62832) / 10000.0);
        ls_fx deepest;
        cr_assert(floor_contacts(mesh, &gh, &xh, &deepest) > 0);
        assert_near(val(deepest), 0.002, 4 * ULP, "hull depth");
    }
    ls_mesh_destroy(mesh);
}

Test(mesh, a_wall_next_to_a_floor_keeps_its_own_normal)
{
    // Floor (x in [0, 2]) meeting a wall at x = 0 rising to y = 2: a concave
    // edge, inactive for both. A box pushed into the corner still gets +x
    // from the wall and +y from the floor.
    ls_vec3 v[6] = {v3(0, 0, -2), v3(0, 0, 2),  v3(2, 0, -2),
                    v3(2, 0, 2),  v3(0, 2, -2), v3(0, 2, 2)};
    uint32_t idx[12] = {0, 1, 2, 2, 1, 3, 0, 4, 1, 1, 4, 5};
    ls_mesh *mesh = ls_mesh_create(v, 6, idx, 4, NULL);
    cr_assert_not_null(mesh);
    cr_assert(!edge_active(mesh, 0, 0, 1) && !edge_active(mesh, 2, 0, 1));
    ls_xform xm = at(0, 0, 0);
    ls_geom b = box(0.5, 0.5, 0.5);
    ls_xform xb = at(0.49, 0.49, 0);
    bool floor = false, wall = false;
    for (uint32_t t = 0; t < 4; t++) {
        ls_manifold m;
        if (collide_tri(mesh, t, &xm, &b, &xb, &m)) {
            bool up = ls_vec3_equal(m.normal, v3(0, 1, 0));
            bool side = ls_vec3_equal(m.normal, v3(1, 0, 0));
            cr_assert(up || side, "triangle %u: normal (%d %d %d)", t, m.normal.x, m.normal.y,
                      m.normal.z);
            floor = floor || up;
            wall = wall || side;
            for (int k = 0; k < m.count; k++) {
                assert_near(val(m.points[k].depth), 0.01, 2 * ULP, "corner depth");
            }
        }
    }
    cr_assert(floor && wall);
    ls_mesh_destroy(mesh);
}

/// A heightfield of n x n one-metre cells whose faces bend by about a degree
/// between neighbours (every internal edge inactive).
static ls_mesh *gentle_terrain(int n)
{
    int w = n + 1;
    ls_vec3 *v = malloc(sizeof *v * (size_t)(w * w));
    uint32_t *idx = malloc(sizeof *idx * (size_t)(6 * n * n));
    for (int z = 0; z < w; z++) {
        for (int x = 0; x < w; x++) {
            v[z * w + x] = v3(x - n / 2.0, 0.02 * sin(x * 1.3) * cos(z * 0.7), z - n / 2.0);
        }
    }
    int k = 0;
    for (int z = 0; z < n; z++) {
        for (int x = 0; x < n; x++) {
            uint32_t v00 = (uint32_t)(z * w + x), v10 = v00 + 1, v01 = v00 + (uint32_t)w,
                     v11 = v01 + 1;
            uint32_t t[6] = {v00, v01, v10, v10, v01, v11};
            memcpy(idx + k, t, sizeof t);
            k += 6;
        }
    }
    ls_mesh *m = ls_mesh_create(v, (uint32_t)(w * w), idx, (uint32_t)(2 * n * n), NULL);
    cr_assert_not_null(m);
    free(v);
    free(idx);
    return m;
}

Test(mesh, gentle_terrain_gives_face_normals_never_edge_kicks)
{
    ls_mesh *mesh = gentle_terrain(12);
    int interior = 0;
    for (uint32_t t = 0; t < mesh->triangle_count; t++) {
        for (int e = 0; e < 3; e++) {
            if (mesh->tris[t].adj[e] != LS_MESH_NONE) {
                cr_assert(!(mesh->tris[t].active >> e & 1), "triangle %u edge %d active", t, e);
                interior++;
            }
        }
    }
    cr_assert(interior > 600);
    ls_xform xm = at(0, 0, 0);
    ls_rng rng = ls_rng_make(9, 9);
    int manifolds = 0, exact = 0;
    for (int i = 0; i < 1500; i++) {
        double x = near_line(&rng, 4, 1), z = near_line(&rng, 4, 1);
        double yaw = ls_rng_below(&rng, 62832) / 10000.0;
        ls_geom shapes[3] = {box(0.4, 0.2, 0.3), sphere(0.3), capsule(0.2, 0.4)};
        ls_xform xs[3] = {at_rot(x, 0.19, z, 0, 1, 0, yaw), at(x, 0.29, z),
                          at_rot(x, 0.19, z, sin(yaw), 0, cos(yaw), PI / 2)};
        for (int s = 0; s < 3; s++) {
            ls_aabb wb = ls_geom_aabb_(&shapes[s], &xs[s], MARGIN);
            uint32_t tris[64];
            uint32_t n = ls_mesh_query_(mesh, ls_mesh_local_aabb_(&xm, wb), tris, 64);
            int points = 0;
            for (uint32_t k = 0; k < n; k++) {
                ls_manifold m;
                if (collide_tri(mesh, tris[k], &xm, &shapes[s], &xs[s], &m)) {
                    // The triangle's face normal, or (a box face lying on the
                    // triangle) the box's own face normal: within the terrain's
                    // ~1 degree bends of it, never an edge's sideways normal.
                    ls_vec3 fn = mesh->tris[tris[k]].normal;
                    exact += ls_vec3_equal(m.normal, fn);
                    double c = val(ls_vec3_dot(m.normal, fn));
                    cr_assert(c >= cos(3 * PI / 180), "shape %d case %d triangle %u: %.3f deg off",
                              s, i, tris[k], acos(fmin(c, 1)) * 180 / PI);
                    points += m.count;
                    manifolds++;
                }
            }
            cr_assert(points > 0, "shape %d case %d: no contact", s, i);
        }
    }
    cr_assert(manifolds > 4500);
    cr_assert(exact > manifolds * 99 / 100, "%d of %d manifolds have the face normal", exact,
              manifolds);
    ls_mesh_destroy(mesh);
}

// ---------------------------------------------------------------- ray casts

Test(mesh, ray_cast_hits_the_nearest_front_face)
{
    ls_mesh *mesh = grid_floor(16, 1);
    ls_xform xm = at(0, 0, 0);
    ls_fx f;
    ls_vec3 n;
    uint32_t t;
    cr_assert(ls_mesh_ray_cast_(mesh, &xm, v3(0.3, 2, 0.6), v3(0.3, -2, 0.6), &f, &n, &t));
    assert_near(val(f), 0.5, ULP, "fraction");
    cr_assert(ls_vec3_equal(n, v3(0, 1, 0)));
    // Cell (8, 8) holds (0.3, 0.6): x + z - 0.9 < 1, the first triangle of the cell? 0.3+0.6<1.
    cr_assert_eq(t, 2 * (8 * 16 + 8), "triangle %u", t);
    // A slanted ray: from (-3, 1, 0) to (1, -1, 0) crosses y = 0 at x = -1.
    cr_assert(ls_mesh_ray_cast_(mesh, &xm, v3(-3, 1, 0.25), v3(1, -1, 0.25), &f, &n, &t));
    assert_near(val(f), 0.5, ULP, "slanted fraction");
    // From below (back faces), parallel, short of the floor, beyond the edge: no hit.
    cr_assert(!ls_mesh_ray_cast_(mesh, &xm, v3(0.3, -2, 0.6), v3(0.3, 2, 0.6), &f, &n, &t));
    cr_assert(!ls_mesh_ray_cast_(mesh, &xm, v3(-3, 0.5, 0), v3(3, 0.5, 0), &f, &n, &t));
    cr_assert(!ls_mesh_ray_cast_(mesh, &xm, v3(0.3, 2, 0.6), v3(0.3, 0.1, 0.6), &f, &n, &t));
    cr_assert(!ls_mesh_ray_cast_(mesh, &xm, v3(8.5, 2, 0), v3(8.5, -2, 0), &f, &n, &t));
    // Through a shared vertex: the lowest of the triangles that meet there.
    cr_assert(ls_mesh_ray_cast_(mesh, &xm, v3(1, 1, 1), v3(1, -1, 1), &f, &n, &t));
    assert_near(val(f), 0.5, ULP, "vertex fraction");
    cr_assert_eq(t, 2 * (8 * 16 + 8) + 1, "triangle %u", t); // lowest index touching (1, 0, 1)
    // Random rays against the analytic plane y = 0.
    ls_rng rng = ls_rng_make(2, 4);
    for (int i = 0; i < 1000; i++) {
        double x0 = ((double)ls_rng_below(&rng, 14000) - 7000) / 1000.0;
        double z0 = ((double)ls_rng_below(&rng, 14000) - 7000) / 1000.0;
        double y0 = 0.1 + ls_rng_below(&rng, 5000) / 1000.0;
        double dx = ((double)ls_rng_below(&rng, 2000) - 1000) / 1000.0;
        double dz = ((double)ls_rng_below(&rng, 2000) - 1000) / 1000.0;
        double dy = -(y0 + ls_rng_below(&rng, 3000) / 1000.0);
        ls_vec3 from = v3(x0, y0, z0), to = v3(x0 + dx, y0 + dy, z0 + dz);
        double fy = val(from.y), ty = val(to.y);
        double want = fy / (fy - ty);
        cr_assert(ls_mesh_ray_cast_(mesh, &xm, from, to, &f, &n, &t), "ray %d missed", i);
        assert_near(val(f), want, 1.5 * ULP, "random ray fraction");
        cr_assert(ls_vec3_equal(n, v3(0, 1, 0)));
        double hx = val(from.x) + (val(to.x) - val(from.x)) * want + 8;
        double hz = val(from.z) + (val(to.z) - val(from.z)) * want + 8;
        double fxr = hx - floor(hx), fzr = hz - floor(hz);
        if (fabs(fxr + fzr - 1) > 1e-3 && fxr > 1e-3 && fzr > 1e-3 && fxr < 0.999 && fzr < 0.999) {
            uint32_t want_t =
                2 * (uint32_t)((int)floor(hz) * 16 + (int)floor(hx)) + (fxr + fzr > 1 ? 1u : 0u);
            cr_assert_eq(t, want_t, "ray %d hit triangle %u, want %u", i, t, want_t);
        }
    }
    // Nearest of two layers; the mesh moved and turned.
    ls_vec3 v[6] = {v3(0, 0, 0), v3(0, 0, 1), v3(1, 0, 0), v3(0, 1, 0), v3(0, 1, 1), v3(1, 1, 0)};
    uint32_t idx[6] = {0, 1, 2, 3, 4, 5};
    ls_mesh *two = ls_mesh_create(v, 6, idx, 2, NULL);
    cr_assert(ls_mesh_ray_cast_(two, &xm, v3(0.2, 3, 0.2), v3(0.2, -1, 0.2), &f, &n, &t));
    cr_assert_eq(t, 1);
    assert_near(val(f), 0.5, ULP, "upper layer");
    ls_xform xr = at_rot(10, 0, 0, 0, 0, 1, -PI / 2); // local +y becomes world +x
    cr_assert(ls_mesh_ray_cast_(two, &xr, v3(13, -0.2, 0.2), v3(9, -0.2, 0.2), &f, &n, &t));
    cr_assert_eq(t, 1);
    assert_near(val(f), 0.5, 2 * ULP, "turned fraction");
    assert_vec_near(n, 1, 0, 0, 2 * ULP, "turned normal");
    ls_mesh_destroy(two);
    ls_mesh_destroy(mesh);
}
