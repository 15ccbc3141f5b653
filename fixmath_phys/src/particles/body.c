// SPDX-License-Identifier: MIT
// Particle rigid bodies (SPEC.md §25.7; Jakobsen §5, seed §2.5, §5.9): a
// rigid shape carried by particles kept rigid by sticks between every pair.
//
// Arrangements, in the body frame (centred on the body origin):
// - tetra: the seed's "axis" tetrahedron, particle 0 at p0 = -(s/4)(1,1,1)
//   and particle k = 1..3 at p0 + s e_k, so edges are s, s, s, s*sqrt(2) x 3
//   and the centroid is the origin (s is a multiple of 4 raw). The frame is
//   read straight from the particles: x1 - x0 and x2 - x0, Gram-Schmidt.
//   s = the shape's thickness (kind table: sphere and capsule radius, box
//   smallest half extent, hull smallest centroid-to-face distance), so the
//   particles lie inside the shape.
// - box: 8 particles at the corners (+-hx, +-hy, +-hz), particle index bits
//   x = 1, y = 2, z = 4; the frame from the sums of the four edges along x
//   and along y. h = the box's half extents; other shapes use the cube of
//   half side thickness/sqrt(3) (inscribed in a sphere of that radius), a
//   capsule stretched by its half height along y.
// Weights (seed §2.5 "embedding"): a body-frame point p is sum c_k x_k with
// tetra barycentric c_k = (p - p0)_k / s (k = 1..3), c_0 = 1 - c_1 - c_2 -
// c_3, box trilinear weights with t = (p + h) / 2h per axis, the last corner
// taking 1 minus the others; both reproduce every point of a rigid
// arrangement exactly (affine), and sum to exactly 1. Collisions of the
// embedded shape (collide.c) move the particles by these weights (seed §5.9,
// lambda = 1 / sum c^2). The inertia is the particles', not the shape's.
#include "../collision/shape_kind.h"
#include "particles_internal.h"

#include <string.h>

#define INV_SQRT3 37837 // 1/sqrt(3), Q16.16

ls_particle_body_def ls_default_particle_body_def(void)
{
    ls_particle_body_def d;
    memset(&d, 0, sizeof d);
    d.system = ls_default_particle_system_def();
    d.kind = LS_PARTICLE_BODY_TETRA;
    d.shape = ls_default_shape_def();
    d.shape.half_extents = ls_vec3_make(LS_FX_HALF / 2, LS_FX_HALF / 2, LS_FX_HALF / 2);
    d.position = ls_vec3_make(0, LS_FX_ONE, 0);
    d.orientation = ls_quat_identity();
    d.mass = LS_FX_ONE;
    d.cookie = LS_DEF_COOKIE;
    return d;
}

static ls_geom geom_of(const ls_shape_def *s)
{
    ls_geom g;
    memset(&g, 0, sizeof g);
    g.kind = s->type;
    g.radius = s->radius;
    g.half_height = s->half_height;
    g.half_extents = s->half_extents;
    g.hull = s->type == LS_SHAPE_HULL ? (const struct ls_hull *)s->hull : NULL;
    return g;
}

// The particles' arrangement size (see the top of the file).
static ls_vec3 extent_of(ls_particle_body_kind kind, const ls_geom *g)
{
    ls_fx t = ls_shape_kind_of(g->kind)->thickness(g);
    if (kind == LS_PARTICLE_BODY_TETRA) {
        ls_fx s = t & ~3;
        return ls_vec3_make(s, s, s);
    }
    if (g->kind == LS_SHAPE_BOX) {
        return g->half_extents;
    }
    ls_fx c = ls_fx_mul(t, INV_SQRT3);
    ls_fx y = g->kind == LS_SHAPE_CAPSULE ? ls_fx_add(c, g->half_height) : c;
    return ls_vec3_make(c, y, c);
}

// Particle k of an arrangement, in the body frame.
static ls_vec3 local_particle(uint8_t arrangement, ls_vec3 e, uint32_t k)
{
    if (arrangement == LS_PARTICLE_BODY_TETRA) {
        ls_fx q = e.x / 4;
        ls_vec3 p = ls_vec3_make(-q, -q, -q);
        if (k == 1) {
            p.x += e.x;
        } else if (k == 2) {
            p.y += e.x;
        } else if (k == 3) {
            p.z += e.x;
        }
        return p;
    }
    return ls_vec3_make((k & 1) ? e.x : -e.x, (k & 2) ? e.y : -e.y, (k & 4) ? e.z : -e.z);
}

static ls_quat local_orientation(ls_quat q)
{
    bool zero = q.x == 0 && q.y == 0 && q.z == 0 && q.w == 0;
    return zero ? ls_quat_identity() : ls_quat_normalize(q);
}

static ls_result check(const ls_particle_body_def *d, ls_error *err)
{
    if ((uint32_t)d->kind > (uint32_t)LS_PARTICLE_BODY_BOX) {
        return ls_particles_fail_(err, LS_ERR_INVALID_ARGUMENT, "kind",
                                  "kind must be LS_PARTICLE_BODY_TETRA or _BOX");
    }
    ls_shape_type t = d->shape.type;
    if (t != LS_SHAPE_SPHERE && t != LS_SHAPE_BOX && t != LS_SHAPE_CAPSULE && t != LS_SHAPE_HULL) {
        return ls_particles_fail_(err, LS_ERR_INVALID_ARGUMENT, "shape.type",
                                  "a particle body embeds a sphere, box, capsule or hull");
    }
    ls_geom g = geom_of(&d->shape);
    if (!ls_shape_kind_of(t)->check(&g, err)) {
        return err ? err->code : LS_ERR_OUT_OF_RANGE;
    }
    const ls_fx r = LS_FX_INT(64);
    ls_vec3 lp = d->shape.local_position;
    if (ls_fx_abs(lp.x) > r || ls_fx_abs(lp.y) > r || ls_fx_abs(lp.z) > r) {
        return ls_particles_fail_(err, LS_ERR_OUT_OF_RANGE, "shape.local_position",
                                  "shape.local_position components must be within +-64 m");
    }
    const ls_fx p = LS_FX_INT(1900);
    if (ls_fx_abs(d->position.x) > p || ls_fx_abs(d->position.y) > p ||
        ls_fx_abs(d->position.z) > p) {
        return ls_particles_fail_(err, LS_ERR_OUT_OF_RANGE, "position",
                                  "particle body position must be within +-1900 m");
    }
    if (ls_vec3_len_sq_q32(d->linear_velocity) >
            (uint64_t)LS_FX_INT(256) * (uint64_t)LS_FX_INT(256) ||
        ls_vec3_len_sq_q32(d->angular_velocity) >
            (uint64_t)LS_FX_INT(128) * (uint64_t)LS_FX_INT(128)) {
        return ls_particles_fail_(err, LS_ERR_OUT_OF_RANGE,
                                  ls_vec3_len_sq_q32(d->linear_velocity) >
                                          (uint64_t)LS_FX_INT(256) * (uint64_t)LS_FX_INT(256)
                                      ? "linear_velocity"
                                      : "angular_velocity",
                                  "speed must be at most 256 m/s and 128 rad/s");
    }
    uint32_t n = d->kind == LS_PARTICLE_BODY_TETRA ? 4 : 8;
    int64_t each = ((int64_t)d->mass + n / 2) / n;
    if (each < 66 || each > LS_FX_INT(1000)) {
        return ls_particles_fail_(err, LS_ERR_OUT_OF_RANGE, "mass",
                                  "particle body mass / %u particles must be 0.001..1000 kg", n);
    }
    if (d->radius < 0 || d->radius > LS_FX_INT(64)) {
        return ls_particles_fail_(err, LS_ERR_OUT_OF_RANGE, "radius", "radius must be 0..64 m");
    }
    return LS_OK;
}

ls_particle_system_id ls_particle_body_create(ls_world *w, const ls_particle_body_def *def,
                                              ls_error *err)
{
    if (ls_world_locked_(w, err)) {
        return (ls_particle_system_id){0, 0};
    }
    ls_particle_system_id none = {0, 0};
    if (!w || !def) {
        ls_error_set(err, LS_ERR_INVALID_ARGUMENT, "no world or no particle body definition");
        return none;
    }
    if (ls_def_missing_(def->cookie, "particle_body_def", err)) {
        return none;
    }
    if (check(def, err) != LS_OK) {
        return none;
    }
    uint32_t n = def->kind == LS_PARTICLE_BODY_TETRA ? 4 : 8;
    ls_particle_system_def sd = def->system;
    sd.max_particles = n;
    sd.max_constraints = n * (n - 1) / 2;
    if (ls_particles_check_system_def_(w, &sd, "system.", true, err) != LS_OK) {
        return none;
    }
    ls_geom g = geom_of(&def->shape);
    uint32_t geometry = UINT32_MAX;
    if (g.kind == LS_SHAPE_HULL) {
        geometry = ls_world_geometry_add_(w, &g, err); // allocates: creation only
        if (geometry == UINT32_MAX) {
            return none;
        }
        ls_world_geometry_bind_(w, &g, geometry);
    }
    uint32_t slot;
    ls_particle_system *s = ls_particles_new_system_(w, &sd, LS_PARTICLES_BODY, &slot);
    ls_particle_embed *e = &s->embed;
    e->arrangement = (uint8_t)def->kind;
    e->extent = extent_of(def->kind, &g);
    e->geom = g;
    e->geometry = geometry;
    e->local_p = def->shape.local_position;
    e->local_q = local_orientation(def->shape.local_orientation);
    ls_quat q = ls_quat_normalize(def->orientation);
    ls_particle_def pd = ls_default_particle_def();
    pd.radius = def->radius;
    pd.mass = (ls_fx)(((int64_t)def->mass + n / 2) / n);
    for (uint32_t k = 0; k < n; k++) {
        ls_vec3 r = ls_quat_rotate(q, local_particle(e->arrangement, e->extent, k));
        pd.position = ls_vec3_add(def->position, r);
        pd.velocity = ls_vec3_add(def->linear_velocity, ls_vec3_cross(def->angular_velocity, r));
        ls_particles_push_(w, s, &pd);
    }
    bool ok = true;
    for (uint32_t a = 0; a < n && ok; a++) {
        for (uint32_t b = a + 1; b < n && ok; b++) {
            ls_particle_constraint_def c = ls_default_particle_constraint_def();
            c.a = a;
            c.b = b;
            ok = ls_particles_push_constraint_(w, s, &c, err) != UINT32_MAX;
        }
    }
    ls_particle_system_id id = ls_particle_system_id_of_(w, slot);
    if (!ok) {
        ls_particle_system_destroy(w, id);
        return none;
    }
    ls_error_clear(err);
    return id;
}

// Rotation matrix (columns e1, e2, e3) to a unit quaternion (Shepperd: the
// largest of w, x, y, z is computed from the diagonal, the others from it).
static ls_quat quat_of(const ls_mat3 *m)
{
    ls_fx m00 = m->row[0].x, m11 = m->row[1].y, m22 = m->row[2].z;
    ls_fx m01 = m->row[0].y, m02 = m->row[0].z, m10 = m->row[1].x;
    ls_fx m12 = m->row[1].z, m20 = m->row[2].x, m21 = m->row[2].y;
    ls_fx tr = ls_fx_add(ls_fx_add(m00, m11), m22);
    ls_quat q;
    if (tr > 0) {
        ls_fx s = 2 * ls_fx_sqrt(ls_fx_add(tr, LS_FX_ONE)); // 4w
        q = ls_quat_make(ls_fx_div(m21 - m12, s), ls_fx_div(m02 - m20, s), ls_fx_div(m10 - m01, s),
                         s / 4);
    } else if (m00 > m11 && m00 > m22) {
        ls_fx s = 2 * ls_fx_sqrt(ls_fx_add(LS_FX_ONE, m00 - m11 - m22)); // 4x
        q = ls_quat_make(s / 4, ls_fx_div(m01 + m10, s), ls_fx_div(m02 + m20, s),
                         ls_fx_div(m21 - m12, s));
    } else if (m11 > m22) {
        ls_fx s = 2 * ls_fx_sqrt(ls_fx_add(LS_FX_ONE, m11 - m00 - m22)); // 4y
        q = ls_quat_make(ls_fx_div(m01 + m10, s), s / 4, ls_fx_div(m12 + m21, s),
                         ls_fx_div(m02 - m20, s));
    } else {
        ls_fx s = 2 * ls_fx_sqrt(ls_fx_add(LS_FX_ONE, m22 - m00 - m11)); // 4z
        q = ls_quat_make(ls_fx_div(m02 + m20, s), ls_fx_div(m12 + m21, s), s / 4,
                         ls_fx_div(m10 - m01, s));
    }
    return ls_quat_normalize(q);
}

// Sum over the particles whose index has `bit` set minus the others, / 4.
static ls_vec3 box_edge(const ls_vec3 *x, uint32_t bit)
{
    int64_t a[3] = {0, 0, 0};
    for (uint32_t k = 0; k < 8; k++) {
        int64_t sg = (k & bit) ? 1 : -1;
        a[0] += sg * x[k].x;
        a[1] += sg * x[k].y;
        a[2] += sg * x[k].z;
    }
    return ls_vec3_make((ls_fx)(a[0] / 4), (ls_fx)(a[1] / 4), (ls_fx)(a[2] / 4));
}

void ls_particle_body_xform_(const ls_world *w, const ls_particle_system *s, ls_xform *xf)
{
    const ls_vec3 *x = w->particles->x + s->first;
    uint32_t n = s->embed.arrangement == LS_PARTICLE_BODY_TETRA ? 4 : 8;
    int64_t c[3] = {0, 0, 0};
    for (uint32_t k = 0; k < n; k++) {
        c[0] += x[k].x;
        c[1] += x[k].y;
        c[2] += x[k].z;
    }
    int64_t h = n / 2;
    for (int i = 0; i < 3; i++) {
        c[i] = (c[i] >= 0 ? c[i] + h : c[i] - h) / (int64_t)n;
    }
    ls_vec3 a, b;
    if (n == 4) {
        a = ls_vec3_sub(x[1], x[0]);
        b = ls_vec3_sub(x[2], x[0]);
    } else {
        a = box_edge(x, 1);
        b = box_edge(x, 2);
    }
    ls_vec3 e1 = ls_vec3_normalize(a, ls_vec3_make(LS_FX_ONE, 0, 0));
    ls_vec3 bp = ls_vec3_sub(b, ls_vec3_scale(e1, ls_vec3_dot(b, e1)));
    ls_vec3 e2 = ls_vec3_normalize(bp, ls_vec3_make(0, LS_FX_ONE, 0));
    ls_vec3 e3 = ls_vec3_cross(e1, e2);
    ls_mat3 m;
    m.row[0] = ls_vec3_make(e1.x, e2.x, e3.x);
    m.row[1] = ls_vec3_make(e1.y, e2.y, e3.y);
    m.row[2] = ls_vec3_make(e1.z, e2.z, e3.z);
    xf->p = ls_vec3_make((ls_fx)c[0], (ls_fx)c[1], (ls_fx)c[2]);
    xf->q = quat_of(&m);
    xf->r = ls_mat3_from_quat(xf->q);
}

uint32_t ls_particle_body_weights_(const ls_particle_system *s, ls_vec3 p, ls_fx *c)
{
    ls_vec3 e = s->embed.extent;
    if (s->embed.arrangement == LS_PARTICLE_BODY_TETRA) {
        ls_fx q = e.x / 4;
        c[1] = ls_fx_div(ls_fx_add(p.x, q), e.x);
        c[2] = ls_fx_div(ls_fx_add(p.y, q), e.x);
        c[3] = ls_fx_div(ls_fx_add(p.z, q), e.x);
        c[0] = ls_fx_sub(ls_fx_sub(ls_fx_sub(LS_FX_ONE, c[1]), c[2]), c[3]);
        return 4;
    }
    ls_fx t[3] = {ls_fx_div(ls_fx_add(p.x, e.x), 2 * e.x), ls_fx_div(ls_fx_add(p.y, e.y), 2 * e.y),
                  ls_fx_div(ls_fx_add(p.z, e.z), 2 * e.z)};
    ls_fx sum = 0;
    for (uint32_t k = 0; k < 8; k++) {
        ls_fx v = LS_FX_ONE;
        for (uint32_t i = 0; i < 3; i++) {
            v = ls_fx_mul(v, (k >> i) & 1 ? t[i] : ls_fx_sub(LS_FX_ONE, t[i]));
        }
        c[k] = k < 7 ? v : ls_fx_sub(LS_FX_ONE, sum);
        sum = ls_fx_add(sum, v);
    }
    return 8;
}

ls_result ls_particle_body_get_transform(const ls_world *w, ls_particle_system_id id,
                                         ls_vec3 *position, ls_quat *orientation)
{
    const ls_particle_system *s = ls_particle_system_(w, id);
    if (!s) {
        return LS_ERR_INVALID_ID;
    }
    if (s->kind != LS_PARTICLES_BODY) {
        return LS_ERR_INVALID_ARGUMENT;
    }
    ls_xform xf;
    ls_particle_body_xform_(w, s, &xf);
    if (position) {
        *position = xf.p;
    }
    if (orientation) {
        *orientation = xf.q;
    }
    return LS_OK;
}
