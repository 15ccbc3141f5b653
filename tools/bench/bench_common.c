// SPDX-License-Identifier: MIT
// Scene conversion (our parser, Q16.16 -> double; hull faces and mesh
// triangles read back from our shapes; centre of mass, inertia and principal
// axes of every dynamic body in double), timing helpers and the driver every
// physics engine binary shares, so each engine is timed and judged by exactly
// the same code.
#define _POSIX_C_SOURCE 200809L
#include "bench.h"
#include "ls/hull.h"
#include "ls/joint.h"
#include "ls/mesh.h"
#include "ls/scene.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BENCH_PI 3.14159265358979323846

static double d(ls_fx v)
{
    return (double)v / 65536.0;
}

static void d3(ls_vec3 v, double *out)
{
    out[0] = d(v.x), out[1] = d(v.y), out[2] = d(v.z);
}

static void base_name(const char *path, char *out, size_t size)
{
    const char *slash = strrchr(path, '/');
    const char *b = slash ? slash + 1 : path;
    size_t n = strcspn(b, ".");
    if (n >= size) {
        n = size - 1;
    }
    memcpy(out, b, n);
    out[n] = '\0';
}

// ---- small double-precision geometry (bench only) -------------------------

void bench_quat_mul(const double a[4], const double b[4], double out[4])
{
    double x = a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1];
    double y = a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0];
    double z = a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3];
    double w = a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2];
    out[0] = x, out[1] = y, out[2] = z, out[3] = w;
}

// Rotation matrix (row-major) of a unit quaternion.
static void quat_to_mat(const double q[4], double m[3][3])
{
    double x = q[0], y = q[1], z = q[2], w = q[3];
    m[0][0] = 1 - 2 * (y * y + z * z), m[0][1] = 2 * (x * y - w * z), m[0][2] = 2 * (x * z + w * y);
    m[1][0] = 2 * (x * y + w * z), m[1][1] = 1 - 2 * (x * x + z * z), m[1][2] = 2 * (y * z - w * x);
    m[2][0] = 2 * (x * z - w * y), m[2][1] = 2 * (y * z + w * x), m[2][2] = 1 - 2 * (x * x + y * y);
}

void bench_quat_rotate(const double q[4], const double v[3], double out[3])
{
    double m[3][3], r[3];
    quat_to_mat(q, m);
    for (int i = 0; i < 3; i++) {
        r[i] = m[i][0] * v[0] + m[i][1] * v[1] + m[i][2] * v[2];
    }
    out[0] = r[0], out[1] = r[1], out[2] = r[2];
}

// Unit quaternion of a proper rotation matrix (row-major).
void bench_mat_to_quat(double m[3][3], double q[4])
{
    double tr = m[0][0] + m[1][1] + m[2][2];
    if (tr > 0) {
        double s = sqrt(tr + 1.0) * 2;
        q[3] = 0.25 * s;
        q[0] = (m[2][1] - m[1][2]) / s, q[1] = (m[0][2] - m[2][0]) / s;
        q[2] = (m[1][0] - m[0][1]) / s;
    } else if (m[0][0] > m[1][1] && m[0][0] > m[2][2]) {
        double s = sqrt(1.0 + m[0][0] - m[1][1] - m[2][2]) * 2;
        q[3] = (m[2][1] - m[1][2]) / s, q[0] = 0.25 * s;
        q[1] = (m[0][1] + m[1][0]) / s, q[2] = (m[0][2] + m[2][0]) / s;
    } else if (m[1][1] > m[2][2]) {
        double s = sqrt(1.0 + m[1][1] - m[0][0] - m[2][2]) * 2;
        q[3] = (m[0][2] - m[2][0]) / s, q[0] = (m[0][1] + m[1][0]) / s;
        q[1] = 0.25 * s, q[2] = (m[1][2] + m[2][1]) / s;
    } else {
        double s = sqrt(1.0 + m[2][2] - m[0][0] - m[1][1]) * 2;
        q[3] = (m[1][0] - m[0][1]) / s, q[0] = (m[0][2] + m[2][0]) / s;
        q[1] = (m[1][2] + m[2][1]) / s, q[2] = 0.25 * s;
    }
    double l = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    for (int i = 0; i < 4; i++) {
        q[i] /= l;
    }
}

// Eigen-decomposition of a symmetric 3x3 matrix by cyclic Jacobi rotations:
// a = V diag(e) V^T, V's columns the eigenvectors, det V = +1.
static void sym_eigen(double a_in[3][3], double e[3], double v[3][3])
{
    double a[3][3];
    memcpy(a, a_in, sizeof a);
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++) {
            v[i][j] = i == j;
        }
    }
    for (int sweep = 0; sweep < 50; sweep++) {
        double off = fabs(a[0][1]) + fabs(a[0][2]) + fabs(a[1][2]);
        double scale = fabs(a[0][0]) + fabs(a[1][1]) + fabs(a[2][2]);
        if (off <= 1e-15 * scale) {
            break;
        }
        for (int p = 0; p < 2; p++) {
            for (int q = p + 1; q < 3; q++) {
                if (a[p][q] == 0) {
                    continue;
                }
                double theta = (a[q][q] - a[p][p]) / (2 * a[p][q]);
                double t = (theta >= 0 ? 1 : -1) / (fabs(theta) + sqrt(theta * theta + 1));
                double c = 1 / sqrt(t * t + 1), sn = t * c;
                for (int k = 0; k < 3; k++) { // a = J^T a J
                    double akp = a[k][p], akq = a[k][q];
                    a[k][p] = c * akp - sn * akq, a[k][q] = sn * akp + c * akq;
                }
                for (int k = 0; k < 3; k++) {
                    double apk = a[p][k], aqk = a[q][k];
                    a[p][k] = c * apk - sn * aqk, a[q][k] = sn * apk + c * aqk;
                }
                for (int k = 0; k < 3; k++) {
                    double vkp = v[k][p], vkq = v[k][q];
                    v[k][p] = c * vkp - sn * vkq, v[k][q] = sn * vkp + c * vkq;
                }
            }
        }
    }
    e[0] = a[0][0], e[1] = a[1][1], e[2] = a[2][2];
    double det = v[0][0] * (v[1][1] * v[2][2] - v[1][2] * v[2][1]) -
                 v[0][1] * (v[1][0] * v[2][2] - v[1][2] * v[2][0]) +
                 v[0][2] * (v[1][0] * v[2][1] - v[1][1] * v[2][0]);
    if (det < 0) {
        for (int k = 0; k < 3; k++) {
            v[k][2] = -v[k][2];
        }
    }
}

void bench_shape_world_pose(const bench_body *b, const bench_shape *sh, double pos[3],
                            double quat[4])
{
    double r[3];
    bench_quat_rotate(b->quat, sh->pos, r);
    pos[0] = b->pos[0] + r[0], pos[1] = b->pos[1] + r[1], pos[2] = b->pos[2] + r[2];
    bench_quat_mul(b->quat, sh->quat, quat);
}

// ---- conversion ------------------------------------------------------------

static void quat_of(ls_quat q, double out[4])
{
    if (q.x == 0 && q.y == 0 && q.z == 0 && q.w == 0) { // all zero = identity
        out[0] = out[1] = out[2] = 0, out[3] = 1;
        return;
    }
    double l = sqrt(d(q.x) * d(q.x) + d(q.y) * d(q.y) + d(q.z) * d(q.z) + d(q.w) * d(q.w));
    out[0] = d(q.x) / l, out[1] = d(q.y) / l, out[2] = d(q.z) / l, out[3] = d(q.w) / l;
}

// Hull data from our hull: vertices, faces (counter-clockwise from outside),
// ODE's polygon layout and face planes (Newell normal, d through the centroid).
static int convert_hull(const ls_hull *h, bench_shape *o)
{
    uint32_t nv = ls_hull_vertex_count(h), nf = ls_hull_face_count(h);
    uint32_t idx[LS_HULL_MAX_VERTICES], total = 0;
    o->vertex_count = nv;
    o->face_count = nf;
    o->vertices = calloc(3 * (size_t)nv, sizeof *o->vertices);
    o->face_sizes = calloc(nf, sizeof *o->face_sizes);
    o->planes = calloc(4 * (size_t)nf, sizeof *o->planes);
    for (uint32_t f = 0; f < nf; f++) {
        total += ls_hull_face_vertices(h, f, idx, LS_HULL_MAX_VERTICES);
    }
    o->face_indices = calloc(total, sizeof *o->face_indices);
    o->polygons = calloc(total + nf, sizeof *o->polygons);
    if (!o->vertices || !o->face_sizes || !o->planes || !o->face_indices || !o->polygons) {
        return 1;
    }
    for (uint32_t i = 0; i < nv; i++) {
        d3(ls_hull_vertex(h, i), o->vertices + 3 * i);
    }
    uint32_t at = 0, pat = 0;
    for (uint32_t f = 0; f < nf; f++) {
        uint32_t n = ls_hull_face_vertices(h, f, idx, LS_HULL_MAX_VERTICES);
        o->face_sizes[f] = n;
        o->polygons[pat++] = n;
        double nrm[3] = {0, 0, 0}, c[3] = {0, 0, 0};
        for (uint32_t k = 0; k < n; k++) {
            const double *a = o->vertices + 3 * idx[k], *b = o->vertices + 3 * idx[(k + 1) % n];
            nrm[0] += (a[1] - b[1]) * (a[2] + b[2]);
            nrm[1] += (a[2] - b[2]) * (a[0] + b[0]);
            nrm[2] += (a[0] - b[0]) * (a[1] + b[1]);
            c[0] += a[0] / n, c[1] += a[1] / n, c[2] += a[2] / n;
            o->face_indices[at++] = idx[k];
            o->polygons[pat++] = idx[k];
        }
        double l = sqrt(nrm[0] * nrm[0] + nrm[1] * nrm[1] + nrm[2] * nrm[2]);
        double *pl = o->planes + 4 * f;
        pl[0] = nrm[0] / l, pl[1] = nrm[1] / l, pl[2] = nrm[2] / l;
        pl[3] = pl[0] * c[0] + pl[1] * c[1] + pl[2] * c[2];
    }
    return 0;
}

static int convert_mesh(const ls_mesh *m, bench_shape *o)
{
    uint32_t nv = ls_mesh_vertex_count(m), nt = ls_mesh_triangle_count(m);
    o->vertex_count = nv;
    o->triangle_count = nt;
    o->vertices = calloc(3 * (size_t)nv, sizeof *o->vertices);
    o->triangles = calloc(3 * (size_t)nt, sizeof *o->triangles);
    if (!o->vertices || !o->triangles) {
        return 1;
    }
    for (uint32_t i = 0; i < nv; i++) {
        d3(ls_mesh_vertex(m, i), o->vertices + 3 * i);
    }
    for (uint32_t t = 0; t < nt; t++) {
        ls_mesh_triangle(m, t, o->triangles + 3 * t);
    }
    return 0;
}

// Mass properties of one shape of uniform density in its own frame: mass,
// centre and inertia tensor about that centre (the formulas our engine uses,
// evaluated in double). Hulls: sum over tetrahedra (centroid, fan of each face).
static void shape_mass(const bench_shape *s, double density, double *mass, double c[3],
                       double t[3][3])
{
    memset(t, 0, 9 * sizeof(double));
    c[0] = c[1] = c[2] = 0;
    double m = 0;
    switch (s->kind) {
    case BENCH_SPHERE:
        m = density * 4.0 / 3.0 * BENCH_PI * s->radius * s->radius * s->radius;
        t[0][0] = t[1][1] = t[2][2] = 0.4 * m * s->radius * s->radius;
        break;
    case BENCH_BOX: {
        const double *h = s->half;
        m = density * 8 * h[0] * h[1] * h[2];
        t[0][0] = m / 3 * (h[1] * h[1] + h[2] * h[2]);
        t[1][1] = m / 3 * (h[0] * h[0] + h[2] * h[2]);
        t[2][2] = m / 3 * (h[0] * h[0] + h[1] * h[1]);
        break;
    }
    case BENCH_CAPSULE: { // core along local Y: cylinder + two hemispheres
        double r = s->radius, hh = s->half_height;
        double mc = density * BENCH_PI * r * r * 2 * hh,
               ms = density * 4.0 / 3.0 * BENCH_PI * r * r * r;
        m = mc + ms;
        t[1][1] = mc * r * r / 2 + ms * 0.4 * r * r;
        t[0][0] = t[2][2] =
            mc * (3 * r * r + 4 * hh * hh) / 12 + ms * (0.4 * r * r + hh * hh + 0.75 * hh * r);
        break;
    }
    case BENCH_HULL: {
        double ref[3] = {0, 0, 0}, vol = 0, mom[3] = {0, 0, 0}, cov[3][3] = {{0}};
        for (uint32_t i = 0; i < s->vertex_count; i++) {
            for (int k = 0; k < 3; k++) {
                ref[k] += s->vertices[3 * (size_t)i + (size_t)k] / s->vertex_count;
            }
        }
        uint32_t at = 0;
        for (uint32_t f = 0; f < s->face_count; f++) {
            uint32_t n = s->face_sizes[f];
            const uint32_t *fi = s->face_indices + at;
            at += n;
            for (uint32_t k = 1; k + 1 < n; k++) {
                double a[3], b[3], e[3];
                for (int j = 0; j < 3; j++) {
                    a[j] = s->vertices[3 * (size_t)fi[0] + (size_t)j] - ref[j];
                    b[j] = s->vertices[3 * (size_t)fi[k] + (size_t)j] - ref[j];
                    e[j] = s->vertices[3 * (size_t)fi[k + 1] + (size_t)j] - ref[j];
                }
                double det = a[0] * (b[1] * e[2] - b[2] * e[1]) -
                             a[1] * (b[0] * e[2] - b[2] * e[0]) +
                             a[2] * (b[0] * e[1] - b[1] * e[0]);
                vol += det / 6;
                for (int i = 0; i < 3; i++) {
                    mom[i] += det / 24 * (a[i] + b[i] + e[i]);
                    for (int j = 0; j < 3; j++) { // integral of x x^T over the tetrahedron
                        cov[i][j] += det / 120 *
                                     (a[i] * a[j] + b[i] * b[j] + e[i] * e[j] +
                                      (a[i] + b[i] + e[i]) * (a[j] + b[j] + e[j]));
                    }
                }
            }
        }
        m = density * vol;
        double cc[3] = {mom[0] / vol, mom[1] / vol, mom[2] / vol};
        for (int i = 0; i < 3; i++) {
            for (int j = 0; j < 3; j++) {
                cov[i][j] = density * (cov[i][j] - vol * cc[i] * cc[j]); // about the centroid
            }
        }
        double tr = cov[0][0] + cov[1][1] + cov[2][2];
        for (int i = 0; i < 3; i++) {
            for (int j = 0; j < 3; j++) {
                t[i][j] = (i == j ? tr : 0) - cov[i][j];
            }
            c[i] = ref[i] + cc[i];
        }
        break;
    }
    default:
        break;
    }
    *mass = m;
}

static int is_identity_pose(const double p[3], const double q[4])
{
    return fabs(p[0]) < 1e-12 && fabs(p[1]) < 1e-12 && fabs(p[2]) < 1e-12 && fabs(q[0]) < 1e-12 &&
           fabs(q[1]) < 1e-12 && fabs(q[2]) < 1e-12;
}

// One body: shapes, and for a dynamic body its peer frame (centre of mass,
// principal axes) and principal moments. `com_ours` is the centre of mass our
// engine computed (body frame), used as a cross-check.
static int convert_body(const ls_body_def *bd, ls_fx mass, const double com_ours[3], bench_body *o,
                        const char *path, uint32_t index)
{
    memset(o, 0, sizeof *o);
    const ls_shape_def *defs = bd->shape_count ? bd->shapes : &bd->shape;
    uint32_t n = bd->shape_count ? bd->shape_count : 1;
    o->type = (int)bd->type;
    o->shapes = calloc(n, sizeof *o->shapes);
    if (!o->shapes) {
        return 1;
    }
    o->shape_count = n;
    double q_body[4], origin[3], local_pos[LS_BODY_MAX_SHAPES][3], local_q[LS_BODY_MAX_SHAPES][4];
    quat_of(bd->orientation, q_body);
    d3(bd->position, origin);
    for (uint32_t k = 0; k < n; k++) {
        const ls_shape_def *sd = &defs[k];
        bench_shape *sh = &o->shapes[k];
        sh->kind = (int)sd->type;
        sh->radius = d(sd->radius);
        sh->half_height = d(sd->half_height);
        d3(sd->half_extents, sh->half);
        d3(sd->normal, sh->normal);
        double nl = sqrt(sh->normal[0] * sh->normal[0] + sh->normal[1] * sh->normal[1] +
                         sh->normal[2] * sh->normal[2]);
        if (nl > 0) {
            sh->normal[0] /= nl, sh->normal[1] /= nl, sh->normal[2] /= nl;
        }
        sh->plane_d = d(sd->plane_d);
        sh->friction = d(sd->friction);
        sh->restitution = d(sd->restitution);
        sh->category = sd->category;
        sh->mask = sd->mask;
        sh->body = index;
        d3(sd->local_position, local_pos[k]);
        quat_of(sd->local_orientation, local_q[k]);
        if ((sh->kind == BENCH_HULL && (!sd->hull || convert_hull(sd->hull, sh) != 0)) ||
            (sh->kind == BENCH_MESH && (!sd->mesh || convert_mesh(sd->mesh, sh) != 0))) {
            fprintf(stderr, "%s: body %u: cannot read its hull/mesh\n", path, index + 1);
            return 1;
        }
    }
    o->principal[0] = o->principal[1] = o->principal[2] = 0, o->principal[3] = 1;
    if (bd->type != LS_BODY_DYNAMIC) { // peer frame = body frame
        memcpy(o->pos, origin, sizeof o->pos);
        memcpy(o->quat, q_body, sizeof o->quat);
        for (uint32_t k = 0; k < n; k++) {
            memcpy(o->shapes[k].pos, local_pos[k], sizeof local_pos[k]);
            memcpy(o->shapes[k].quat, local_q[k], sizeof local_q[k]);
            o->shapes[k].identity = is_identity_pose(local_pos[k], local_q[k]);
        }
    } else {
        // Sum the shapes in the body frame (parallel-axis theorem), as ls_mass_compute_ does.
        double m_tot = 0, mom[3] = {0, 0, 0}, cs[LS_BODY_MAX_SHAPES][3], ms[LS_BODY_MAX_SHAPES];
        double ts[LS_BODY_MAX_SHAPES][3][3];
        for (uint32_t k = 0; k < n; k++) {
            double c[3], t[3][3], r[3][3], rt[3][3];
            shape_mass(&o->shapes[k], d(defs[k].density), &ms[k], c, t);
            quat_to_mat(local_q[k], r);
            bench_quat_rotate(local_q[k], c, cs[k]);
            for (int j = 0; j < 3; j++) {
                cs[k][j] += local_pos[k][j];
                mom[j] += ms[k] * cs[k][j];
            }
            for (int i = 0; i < 3; i++) { // R t R^T
                for (int j = 0; j < 3; j++) {
                    rt[i][j] = 0;
                    for (int l = 0; l < 3; l++) {
                        rt[i][j] += r[i][l] * t[l][j];
                    }
                }
            }
            for (int i = 0; i < 3; i++) {
                for (int j = 0; j < 3; j++) {
                    ts[k][i][j] = 0;
                    for (int l = 0; l < 3; l++) {
                        ts[k][i][j] += rt[i][l] * r[j][l];
                    }
                }
            }
            m_tot += ms[k];
        }
        double com[3] = {mom[0] / m_tot, mom[1] / m_tot, mom[2] / m_tot}, tt[3][3] = {{0}};
        for (uint32_t k = 0; k < n; k++) {
            double dd[3] = {cs[k][0] - com[0], cs[k][1] - com[1], cs[k][2] - com[2]};
            double d2 = dd[0] * dd[0] + dd[1] * dd[1] + dd[2] * dd[2];
            for (int i = 0; i < 3; i++) {
                for (int j = 0; j < 3; j++) {
                    tt[i][j] += ts[k][i][j] + ms[k] * ((i == j ? d2 : 0) - dd[i] * dd[j]);
                }
            }
        }
        double dc = sqrt((com[0] - com_ours[0]) * (com[0] - com_ours[0]) +
                         (com[1] - com_ours[1]) * (com[1] - com_ours[1]) +
                         (com[2] - com_ours[2]) * (com[2] - com_ours[2]));
        if (dc > 1e-3 || fabs(m_tot - d(mass)) > 0.01 * d(mass)) {
            fprintf(stderr,
                    "%s: body %u: mass properties differ from our engine's (mass %.4f vs %.4f "
                    "kg, centre of mass %.5f m apart)\n",
                    path, index + 1, m_tot, d(mass), dc);
            return 1;
        }
        // Exactly our mass; the tensor scaled alike.
        double k_m = d(mass) / m_tot;
        for (int i = 0; i < 3; i++) {
            for (int j = 0; j < 3; j++) {
                tt[i][j] *= k_m;
            }
        }
        double e[3], v[3][3], qp[4] = {0, 0, 0, 1};
        double offd = fabs(tt[0][1]) + fabs(tt[0][2]) + fabs(tt[1][2]);
        if (offd <= 1e-12 * (tt[0][0] + tt[1][1] + tt[2][2])) { // already principal: no rotation
            e[0] = tt[0][0], e[1] = tt[1][1], e[2] = tt[2][2];
        } else {
            sym_eigen(tt, e, v);
            bench_mat_to_quat(v, qp);
        }
        o->mass = d(mass);
        memcpy(o->inertia, e, sizeof e);
        double rc[3];
        bench_quat_rotate(q_body, com, rc);
        for (int j = 0; j < 3; j++) {
            o->pos[j] = origin[j] + rc[j];
        }
        bench_quat_mul(q_body, qp, o->quat);
        memcpy(o->principal, qp, sizeof o->principal);
        double qpi[4] = {-qp[0], -qp[1], -qp[2], qp[3]};
        for (uint32_t k = 0; k < n; k++) {
            double dl[3] = {local_pos[k][0] - com[0], local_pos[k][1] - com[1],
                            local_pos[k][2] - com[2]};
            bench_shape *sh = &o->shapes[k];
            bench_quat_rotate(qpi, dl, sh->pos);
            bench_quat_mul(qpi, local_q[k], sh->quat);
            sh->identity = is_identity_pose(sh->pos, sh->quat);
        }
    }
    d3(bd->linear_velocity, o->vel);
    d3(bd->angular_velocity, o->angvel);
    o->lin_damp = d(bd->linear_damping);
    o->ang_damp = d(bd->angular_damping);
    o->allow_sleep = bd->allow_sleep;
    return 0;
}

static void free_shape(bench_shape *s)
{
    free(s->vertices);
    free(s->face_sizes);
    free(s->face_indices);
    free(s->polygons);
    free(s->planes);
    free(s->triangles);
}

// ---- joints ----------------------------------------------------------------
// The scene's joints (our parser's ls_joint_defs, SPEC.md §14 and §23) as
// bench_joints: Q16.16 -> double, body references as file indices, local
// anchors in the peer frames, effective masses for the peers' springs.

void bench_basis(const double e[3], int primary, double m[3][3])
{
    // u: a unit vector perpendicular to e; v = e x u. Columns (e, u, v) for
    // primary X, (u, v, e) for primary Z: both right-handed.
    double t[3] = {0, 0, 0};
    t[fabs(e[0]) < 0.6 ? 0 : fabs(e[1]) < 0.6 ? 1 : 2] = 1;
    double u[3] = {e[1] * t[2] - e[2] * t[1], e[2] * t[0] - e[0] * t[2], e[0] * t[1] - e[1] * t[0]};
    double l = sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
    u[0] /= l, u[1] /= l, u[2] /= l;
    double v[3] = {e[1] * u[2] - e[2] * u[1], e[2] * u[0] - e[0] * u[2], e[0] * u[1] - e[1] * u[0]};
    const double *col[3] = {e, u, v};
    if (primary == 2) {
        col[0] = u, col[1] = v, col[2] = e;
    }
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++) {
            m[i][j] = col[j][i];
        }
    }
}

void bench_pose_point(const double *pose, const double local[3], double out[3])
{
    double r[3];
    bench_quat_rotate(pose + 3, local, r);
    out[0] = pose[0] + r[0], out[1] = pose[1] + r[1], out[2] = pose[2] + r[2];
}

static void to_local(const bench_body *b, const double w[3], double out[3])
{
    double qi[4] = {-b->quat[0], -b->quat[1], -b->quat[2], b->quat[3]};
    double dlt[3] = {w[0] - b->pos[0], w[1] - b->pos[1], w[2] - b->pos[2]};
    bench_quat_rotate(qi, dlt, out);
}

// a . I^-1 . a of a body about the world axis a (0 for a static body).
static double inv_inertia_along(const bench_body *b, const double a[3])
{
    if (b->type != BENCH_DYNAMIC) {
        return 0;
    }
    double qi[4] = {-b->quat[0], -b->quat[1], -b->quat[2], b->quat[3]}, l[3];
    bench_quat_rotate(qi, a, l);
    return l[0] * l[0] / b->inertia[0] + l[1] * l[1] / b->inertia[1] + l[2] * l[2] / b->inertia[2];
}

static int cmp_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
}

// The scene's joints against the converted bodies of `out`: local anchors,
// effective masses, the no-collide pair list.
static int convert_joints(const char *path, const ls_scene *sc, bench_scene *out)
{
    uint32_t n = sc->joint_count;
    out->joints = calloc(n ? n : 1, sizeof *out->joints);
    out->no_collide = calloc(n ? n : 1, sizeof *out->no_collide);
    if (!out->joints || !out->no_collide) {
        return 1;
    }
    for (uint32_t k = 0; k < n; k++) {
        const ls_joint_def *jd = &sc->joints[k];
        bench_joint *j = &out->joints[k];
        memset(j, 0, sizeof *j);
        j->kind = (int)jd->type;
        j->a = jd->body_a.index1 - 1; // 1-based file index until instantiated
        j->b = jd->body_b.index1 - 1;
        if (jd->body_a.index1 == 0 || jd->body_b.index1 == 0 || j->a >= out->count ||
            j->b >= out->count || j->kind < 0 || j->kind > BENCH_JOINT_CONE) {
            fprintf(stderr, "%s: joint %u: bad body or type\n", path, k + 1);
            return 1;
        }
        const bench_body *ba = &out->bodies[j->a], *bb = &out->bodies[j->b];
        d3(jd->anchor, j->anchor);
        if (j->kind == BENCH_JOINT_DISTANCE) {
            d3(jd->anchor_b, j->anchor_b);
        } else {
            memcpy(j->anchor_b, j->anchor, sizeof j->anchor);
        }
        d3(jd->axis, j->axis);
        double l =
            sqrt(j->axis[0] * j->axis[0] + j->axis[1] * j->axis[1] + j->axis[2] * j->axis[2]);
        if (l > 0) {
            j->axis[0] /= l, j->axis[1] /= l, j->axis[2] /= l;
        } else {
            j->axis[0] = 1, j->axis[1] = j->axis[2] = 0;
        }
        j->enable_limit = jd->enable_limit;
        j->lower = d(jd->lower), j->upper = d(jd->upper);
        j->enable_motor = jd->enable_motor;
        j->motor_speed = d(jd->motor_speed), j->max_motor = d(jd->max_motor_torque);
        j->enable_spring = jd->enable_spring;
        j->spring_hertz = d(jd->spring_hertz), j->spring_damping = d(jd->spring_damping_ratio);
        j->cone = d(jd->cone_angle);
        j->enable_twist = !(jd->twist_lower <= -LS_FX_PI && jd->twist_upper >= LS_FX_PI);
        j->twist_lower = d(jd->twist_lower), j->twist_upper = d(jd->twist_upper);
        j->break_force = d(jd->break_force), j->break_torque = d(jd->break_torque);
        j->collide = jd->collide_connected;
        to_local(ba, j->anchor, j->local_a);
        to_local(bb, j->anchor_b, j->local_b);
        double qi[4] = {-ba->quat[0], -ba->quat[1], -ba->quat[2], ba->quat[3]};
        bench_quat_rotate(qi, j->axis, j->axis_a);
        double dx = j->anchor_b[0] - j->anchor[0], dy = j->anchor_b[1] - j->anchor[1],
               dz = j->anchor_b[2] - j->anchor[2];
        j->rest_length = sqrt(dx * dx + dy * dy + dz * dz);
        if (jd->min_length == 0 && jd->max_length == 0) { // a rod (soft with a spring)
            j->min_length = j->max_length = j->rest_length;
        } else {
            j->min_length = d(jd->min_length), j->max_length = d(jd->max_length);
        }
        double ia = inv_inertia_along(ba, j->axis) + inv_inertia_along(bb, j->axis);
        j->eff_inertia = ia > 0 ? 1 / ia : 0;
        double im = (ba->type == BENCH_DYNAMIC ? 1 / ba->mass : 0) +
                    (bb->type == BENCH_DYNAMIC ? 1 / bb->mass : 0);
        j->eff_mass = im > 0 ? 1 / im : 0;
        if (!j->collide) {
            uint32_t lo = j->a < j->b ? j->a : j->b, hi = j->a < j->b ? j->b : j->a;
            out->no_collide[out->no_collide_count++] = (uint64_t)lo << 32 | hi;
        }
    }
    out->joint_count = n;
    qsort(out->no_collide, out->no_collide_count, sizeof *out->no_collide, cmp_u64);
    return 0;
}

int bench_no_collide(const bench_scene *s, uint32_t a, uint32_t b)
{
    if (s->no_collide_count == 0) {
        return 0;
    }
    uint64_t key = a < b ? (uint64_t)a << 32 | b : (uint64_t)b << 32 | a;
    return bsearch(&key, s->no_collide, s->no_collide_count, sizeof key, cmp_u64) != NULL;
}

// Position error of every joint at the given poses, the largest (m): anchor
// separation for ball/hinge/fixed/cone, the part across the axis (plus any
// limit overshoot) for prismatic, the length outside [min, max] for distance
// (soft distance joints without a length are not counted).
static double joint_error(const bench_scene *s, const double *poses)
{
    double worst = 0;
    for (uint32_t k = 0; k < s->joint_count; k++) {
        const bench_joint *j = &s->joints[k];
        double pa[3], pb[3], ax[3], e = 0;
        bench_pose_point(poses + 7 * (size_t)j->a, j->local_a, pa);
        bench_pose_point(poses + 7 * (size_t)j->b, j->local_b, pb);
        double dv[3] = {pb[0] - pa[0], pb[1] - pa[1], pb[2] - pa[2]};
        double len = sqrt(dv[0] * dv[0] + dv[1] * dv[1] + dv[2] * dv[2]);
        if (j->kind == BENCH_JOINT_PRISMATIC) {
            bench_quat_rotate(poses + 7 * (size_t)j->a + 3, j->axis_a, ax);
            double along = dv[0] * ax[0] + dv[1] * ax[1] + dv[2] * ax[2];
            double across = len * len - along * along;
            e = sqrt(across > 0 ? across : 0);
            if (j->enable_limit) {
                double over = along > j->upper   ? along - j->upper
                              : along < j->lower ? j->lower - along
                                                 : 0;
                e = e > over ? e : over;
            }
        } else if (j->kind == BENCH_JOINT_DISTANCE) {
            if (!j->enable_spring || j->min_length != j->rest_length ||
                j->max_length != j->rest_length) {
                e = len > j->max_length   ? len - j->max_length
                    : len < j->min_length ? j->min_length - len
                                          : 0;
            }
        } else {
            e = len;
        }
        worst = e > worst ? e : worst;
    }
    return worst;
}

int bench_scene_load(const char *path, bench_scene *out)
{
    memset(out, 0, sizeof *out);
    ls_scene *sc = calloc(1, sizeof *sc);
    ls_error err;
    if (!sc || ls_scene_load(path, sc, &err) != LS_OK) {
        fprintf(stderr, "%s:%u:%u: %s\n", path, err.line, err.column, err.message);
        free(sc);
        return 1;
    }
    // Instantiate once so the peers get exactly the masses our engine computed.
    ls_world *w = ls_scene_instantiate(sc, &err);
    if (!w) {
        fprintf(stderr, "%s: %s\n", path, err.message);
        ls_scene_free(sc);
        free(sc);
        return 1;
    }
    const ls_world_def *wd = &sc->world;
    base_name(path, out->name, sizeof out->name);
    out->path = path;
    d3(wd->gravity, out->gravity);
    out->dt = d(ls_tick_dt(wd->tick_rate));
    out->substeps = (int)wd->substeps;
    out->velocity_iterations = (int)wd->velocity_iterations;
    out->position_iterations = (int)wd->position_iterations;
    out->peer_iterations =
        (int)(wd->substeps * (wd->velocity_iterations + wd->position_iterations));
    out->sleep_linear = d(wd->sleep_linear);
    out->sleep_angular = d(wd->sleep_angular);
    out->sleep_time = d(wd->sleep_time);
    out->contact_margin = d(wd->contact_margin);
    out->linear_slop = d(wd->linear_slop);
    out->peer_erp = 0.2; // Bullet's and ODE's usual value; ours has no ERP any more
    out->restitution_thresh = d(wd->restitution_threshold);
    out->ticks = sc->ticks;
    out->max_bodies = wd->max_bodies;
    out->max_contacts = wd->max_contacts;
    out->threads = 1;
    out->bodies = calloc(sc->body_count ? sc->body_count : 1, sizeof *out->bodies);
    int bad = 0;
    for (uint32_t i = 0; i < sc->body_count && !bad; i++) {
        ls_body_id id = ls_world_body_at(w, i);
        ls_body_state st;
        double com[3] = {0, 0, 0};
        if (ls_body_get_state(w, id, &st, NULL) == LS_OK) { // centre of mass in the body frame
            double dw[3] = {d(st.position.x) - d(st.origin.x), d(st.position.y) - d(st.origin.y),
                            d(st.position.z) - d(st.origin.z)},
                   q[4], qi[4];
            quat_of(st.orientation, q);
            qi[0] = -q[0], qi[1] = -q[1], qi[2] = -q[2], qi[3] = q[3];
            bench_quat_rotate(qi, dw, com);
        }
        out->count = i + 1; // bench_scene_free frees what is converted so far
        bad = convert_body(&sc->bodies[i], ls_body_mass(w, id), com, &out->bodies[i], path, i);
        out->dynamic_count += sc->bodies[i].type == LS_BODY_DYNAMIC;
        if (!bad && sc->bodies[i].type == LS_BODY_KINEMATIC) {
            fprintf(stderr, "%s: body %u: kinematic bodies are not supported by the bench\n", path,
                    i + 1);
            bad = 1;
        }
    }
    ls_world_destroy(w);
    out->ls = sc;
    if (!bad) {
        bad = convert_joints(path, sc, out);
    }
    if (bad) {
        bench_scene_free(out);
        return 1;
    }
    return 0;
}

void bench_scene_free(bench_scene *s)
{
    if (s->ls) {
        ls_scene_free(s->ls);
        free(s->ls);
    }
    for (uint32_t i = 0; s->bodies && i < s->count; i++) {
        for (uint32_t k = 0; k < s->bodies[i].shape_count; k++) {
            free_shape(&s->bodies[i].shapes[k]);
        }
        free(s->bodies[i].shapes);
    }
    free(s->bodies);
    free(s->joints);
    free(s->no_collide);
    memset(s, 0, sizeof *s);
}

typedef struct run_result {
    double ms_tick[16]; // per repeat: total step time / ticks
    bench_stats stats;  // of the last repeat
    uint32_t moved;     // dynamic bodies that moved > 1 cm over the last 100 ticks
    uint32_t lost;      // dynamic bodies below y = -1 m or not finite at the end
    double joint_err;   // largest joint position error over the last 100 ticks, m
    double wall_s;      // whole section, including scene building
} run_result;

static void count_motion(const bench_scene *s, const double *before, const double *after,
                         run_result *r)
{
    r->moved = r->lost = 0;
    for (uint32_t i = 0; i < s->count; i++) {
        if (s->bodies[i].type != BENCH_DYNAMIC) {
            continue;
        }
        const double *p = before + 7 * (size_t)i, *q = after + 7 * (size_t)i;
        double dx = q[0] - p[0], dy = q[1] - p[1], dz = q[2] - p[2];
        r->moved += dx * dx + dy * dy + dz * dz > 0.01 * 0.01;
        r->lost += !(isfinite(q[0]) && isfinite(q[1]) && isfinite(q[2])) || q[1] < -1.0;
    }
}

// Runs the scene `repeats` times from a fresh world, timing only the steps.
// Over the last 100 ticks of the last run the poses are read after every
// step (untimed) for the joint error.
static int run_scene(const bench_engine *e, const bench_scene *s, uint32_t ticks, int repeats,
                     run_result *r)
{
    size_t n7 = 7 * (size_t)(s->count ? s->count : 1);
    double *before = calloc(n7, sizeof *before), *after = calloc(n7, sizeof *after);
    uint32_t mark = ticks > 100 ? ticks - 100 : 0;
    double t_start = bench_now_ns();
    for (int rep = 0; rep < repeats; rep++) {
        char err[256] = "";
        void *w = e->create(s, err, sizeof err);
        if (!w) {
            fprintf(stderr, "%s: %s: %s\n", e->name, s->path, err);
            free(before), free(after);
            return 1;
        }
        int last = rep == repeats - 1;
        double total = 0;
        r->joint_err = 0;
        for (uint32_t t = 0; t < ticks; t++) {
            if (t == mark) {
                e->poses(w, before);
            }
            double t0 = bench_now_ns();
            e->step(w);
            total += bench_now_ns() - t0;
            if (last && t >= mark && s->joint_count) {
                e->poses(w, after);
                double je = joint_error(s, after);
                r->joint_err = je > r->joint_err || !isfinite(je) ? je : r->joint_err;
            }
        }
        r->ms_tick[rep] = total / 1e6 / (double)(ticks ? ticks : 1);
        if (last) {
            e->poses(w, after);
            r->stats = e->stats(w);
            count_motion(s, before, after, r);
            if (getenv("BENCH_DUMP_POSES")) { // debugging aid: every body's final pose
                for (uint32_t i = 0; i < s->count; i++) {
                    const double *p = after + 7 * (size_t)i;
                    printf("  pose %s %u: %.4f %.4f %.4f  q %.4f %.4f %.4f %.4f\n", e->name, i,
                           p[0], p[1], p[2], p[3], p[4], p[5], p[6]);
                }
            }
        }
        e->destroy(w);
    }
    r->wall_s = (bench_now_ns() - t_start) / 1e9;
    free(before), free(after);
    return 0;
}

static void write_csv(FILE *f, const char *engine, const bench_scene *s, uint32_t ticks,
                      int repeats, const run_result *r)
{
#define ROW(metric, fmt, value, unit)                                                              \
    fprintf(f, "physics,%s,%s,%s," fmt ",%s\n", s->name, engine, metric, value, unit)
    for (int i = 0; i < repeats; i++) {
        ROW("ms_per_tick", "%.6f", r->ms_tick[i], "ms");
    }
    ROW("bodies", "%u", s->dynamic_count, "count");
    ROW("joints", "%u", s->joint_count, "count");
    ROW("ticks", "%u", ticks, "count");
    ROW("threads", "%u", s->threads, "count");
    ROW("max_penetration", "%.5f", r->stats.max_penetration, "m");
    ROW("moved_gt_1cm_last_100_ticks", "%u", r->moved, "bodies");
    ROW("asleep", "%u", r->stats.asleep, "bodies");
    ROW("contacts", "%u", r->stats.contacts, "pairs");
    ROW("lost", "%u", r->lost, "bodies");
    if (s->joint_count) {
        ROW("joint_error_last_100_ticks", "%.5f", r->joint_err, "m");
        ROW("joints_broken", "%u", r->stats.broken, "joints");
    }
#undef ROW
}

static int usage(const bench_engine *e)
{
    fprintf(stderr,
            "usage: bench_%s SCENE... [--ticks N] [--repeats R] [--threads N] [--csv FILE] "
            "[--quiet]\n"
            "  Times ls-scene files in %s %s: R fresh runs of N ticks (default: the scene's\n"
            "  ticks, R = 3); ms/tick = median over runs of (step time / ticks).\n"
            "  --threads N: worker threads (our engine only, 1..64; rows then name the engine\n"
            "  %s_Nw). --csv FILE appends rows `physics,scene,engine,metric,value,unit` (one\n"
            "  ms_per_tick row per run; the rest from the last run). --quiet: no table line.\n",
            e->name, e->name, e->version, e->name);
    return 2;
}

int bench_engine_main(const bench_engine *e, int argc, char **argv)
{
    const char *csv = NULL;
    long ticks = 0, repeats = 3, threads = 1;
    int nscenes = 0, quiet = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--ticks") == 0 && i + 1 < argc) {
            ticks = strtol(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--repeats") == 0 && i + 1 < argc) {
            repeats = strtol(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
            threads = strtol(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--csv") == 0 && i + 1 < argc) {
            csv = argv[++i];
        } else if (strcmp(argv[i], "--quiet") == 0) {
            quiet = 1;
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "bench_%s: unknown option or missing value: %s\n", e->name, argv[i]);
            return usage(e);
        } else {
            nscenes++;
        }
    }
    if (nscenes == 0 || repeats < 1 || repeats > 16 || ticks < 0 || ticks > 1000000 ||
        threads < 1 || threads > (long)e->max_threads) {
        if (nscenes == 0) {
            fprintf(stderr, "bench_%s: no scene file given\n", e->name);
        } else if (repeats < 1 || repeats > 16) {
            fprintf(stderr, "bench_%s: --repeats %ld: must be 1..16\n", e->name, repeats);
        } else if (ticks < 0 || ticks > 1000000) {
            fprintf(stderr, "bench_%s: --ticks %ld: must be 0..1000000 (0: the scene's)\n", e->name,
                    ticks);
        } else if (threads > (long)e->max_threads && e->max_threads == 1) {
            fprintf(stderr, "bench_%s: --threads %ld: this engine runs single-threaded here\n",
                    e->name, threads);
        } else {
            fprintf(stderr, "bench_%s: --threads %ld: must be 1..%u\n", e->name, threads,
                    (unsigned)e->max_threads);
        }
        return usage(e);
    }
    char engine[64];
    if (threads > 1) {
        snprintf(engine, sizeof engine, "%s_%ldw", e->name, threads);
    } else {
        snprintf(engine, sizeof engine, "%s", e->name);
    }
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] == '-') {
            i += strcmp(argv[i], "--quiet") != 0;
            continue;
        }
        bench_scene s;
        if (bench_scene_load(argv[i], &s) != 0) {
            return 1;
        }
        s.threads = (uint32_t)threads;
        uint32_t n = ticks ? (uint32_t)ticks : s.ticks;
        run_result r;
        memset(&r, 0, sizeof r);
        if (run_scene(e, &s, n, (int)repeats, &r) != 0) {
            bench_scene_free(&s);
            return 1;
        }
        double sorted[16];
        memcpy(sorted, r.ms_tick, sizeof sorted);
        double med = bench_median(sorted, (size_t)repeats);
        double lo = sorted[0], hi = sorted[repeats - 1];
        if (!quiet) {
            printf("  %-8s %-15s %5u bodies %5u joints %5u ticks x%ld  %8.3f ms/tick (min %.3f "
                   "max %.3f)  pen %.4f m  moved %u  asleep %u  lost %u",
                   engine, s.name, s.dynamic_count, s.joint_count, n, repeats, med, lo, hi,
                   r.stats.max_penetration, r.moved, r.stats.asleep, r.lost);
            if (s.joint_count) {
                printf("  joint_err %.4f m  broken %u", r.joint_err, r.stats.broken);
            }
            printf("  [%.1f s]\n", r.wall_s);
            fflush(stdout);
        }
        if (csv) {
            FILE *f = fopen(csv, "a");
            if (!f) {
                perror(csv);
                bench_scene_free(&s);
                return 1;
            }
            write_csv(f, engine, &s, n, (int)repeats, &r);
            fclose(f);
        }
        bench_scene_free(&s);
    }
    return 0;
}
