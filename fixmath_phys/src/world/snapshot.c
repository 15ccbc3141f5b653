// SPDX-License-Identifier: MIT
// World checksum (SPEC.md §12) and snapshots (SPEC.md §13). Both walk bodies in
// slot order and write each field little-endian; nothing hashes or copies raw
// structs, so padding and byte order never leak in.
#include "../collision/hull.h"
#include "../collision/mesh.h"
#include "../collision/shape_kind.h"
#include "../dynamics/joint.h"
#include "../math/quat_check.h"
#include "../particles/particles_internal.h"
#include "../vehicle/vehicle_internal.h"
#include "ls/checksum.h"
#include "query_tree.h"
#include "world_internal.h"

#include <stdlib.h>
#include <string.h>

#define SNAP_MAGIC 0x4E53534Cu // "LSSN"
// Version 6 (Solver v3): contacts carry one friction, twist and rolling
// impulse per manifold; after the joints a section word says which of the
// particle (bit 0) and vehicle + game-word (bit 1) sections follow. Versions
// 3 to 5 were written by Solver v2 (engine 0.2): their contact impulses mean
// something else, so they are refused by name (SPEC.md §13).
#define SNAP_VERSION           6u
#define SNAP_SECTION_PARTICLES 1u
#define SNAP_SECTION_VEHICLES  2u

// Joints in slot order, every (state) field but user_data (SPEC.md §12). A
// world that never had a joint hashes nothing here, so its checksum is the
// one it had before joints existed.
static void hash_joints(ls_hasher *h, const ls_world *w)
{
    ls_hasher_put_u32(h, w->joint_count);
    for (uint32_t i = 0; i < w->joint_high; i++) {
        const ls_joint *j = &w->joints[i];
        if (!j->alive) {
            continue;
        }
        ls_hasher_put_u32(h, i);
        ls_hasher_put_u32(h, j->generation);
        ls_hasher_put_u32(h, (uint32_t)j->type | j->flags << 8);
        ls_hasher_put_u32(h, j->a);
        ls_hasher_put_u32(h, j->b);
        ls_hasher_put_vec3(h, j->local_a);
        ls_hasher_put_vec3(h, j->local_b);
        ls_hasher_put_quat(h, j->frame_a);
        ls_hasher_put_quat(h, j->frame_b);
        const ls_fx params[] = {j->lower,        j->upper,       j->motor_speed, j->max_motor,
                                j->spring_hertz, j->spring_zeta, j->length,      j->cone,
                                j->break_force,  j->break_torque};
        for (size_t k = 0; k < sizeof params / sizeof params[0]; k++) {
            ls_hasher_put_fx(h, params[k]);
        }
        ls_hasher_put_vec3(h, j->linear_impulse);
        ls_hasher_put_vec3(h, j->angular_impulse);
        ls_hasher_put_fx(h, j->spring_impulse);
        ls_hasher_put_fx(h, j->motor_impulse);
        ls_hasher_put_fx(h, j->lower_impulse);
        ls_hasher_put_fx(h, j->upper_impulse);
        ls_hasher_put_vec3(h, j->force);
        ls_hasher_put_vec3(h, j->torque);
    }
}

// One particle system (SPEC.md §12): every (state) field but user_data.
static void hash_particle_system(ls_hasher *h, const ls_particle_store *ps, uint32_t i)
{
    const ls_particle_system *s = &ps->systems[i];
    ls_hasher_put_u32(h, i);
    ls_hasher_put_u32(h, s->generation);
    ls_hasher_put_u32(h, (uint32_t)s->kind | (uint32_t)s->stick_mode << 8 | s->flags << 16);
    ls_hasher_put_u32(h, s->iterations);
    ls_hasher_put_fx(h, s->damping);
    ls_hasher_put_fx(h, s->gravity_scale);
    ls_hasher_put_fx(h, s->friction);
    ls_hasher_put_vec3(h, s->acceleration);
    ls_hasher_put_fx(h, s->turbulence);
    ls_hasher_put_u64(h, s->rng.state);
    ls_hasher_put_u64(h, s->rng.inc);
    ls_hasher_put_u32(h, s->category);
    ls_hasher_put_u32(h, s->mask);
    ls_hasher_put_u32(h, s->count);
    ls_hasher_put_u32(h, s->cap);
    ls_hasher_put_u32(h, s->con_count);
    ls_hasher_put_u32(h, s->con_cap);
    const ls_particle_embed *e = &s->embed;
    ls_hasher_put_u32(h, e->arrangement);
    ls_hasher_put_vec3(h, e->extent);
    ls_hasher_put_u32(h, (uint32_t)e->geom.kind);
    ls_hasher_put_u32(h, e->geometry);
    ls_hasher_put_fx(h, e->geom.radius);
    ls_hasher_put_fx(h, e->geom.half_height);
    ls_hasher_put_vec3(h, e->geom.half_extents);
    ls_hasher_put_vec3(h, e->local_p);
    ls_hasher_put_quat(h, e->local_q);
    for (uint32_t k = 0; k < s->count; k++) {
        const ls_particle *p = &ps->p[s->first + k];
        ls_hasher_put_vec3(h, ps->x[s->first + k]);
        ls_hasher_put_vec3(h, ps->x_old[s->first + k]);
        ls_hasher_put_fx(h, p->inv_mass);
        ls_hasher_put_fx(h, p->radius);
        ls_hasher_put_vec3(h, p->force);
    }
    for (uint32_t k = 0; k < s->con_count; k++) {
        const ls_pcon *c = &ps->con[s->con_first + k];
        ls_hasher_put_u32(h, (uint32_t)c->type | (uint32_t)c->flags << 8);
        ls_hasher_put_u32(h, c->a);
        ls_hasher_put_u32(h, c->b);
        ls_hasher_put_u32(h, c->c);
        ls_hasher_put_fx(h, c->rest);
        ls_hasher_put_fx(h, c->rest_max);
        ls_hasher_put_fx(h, c->stiffness);
        ls_hasher_put_fx(h, c->tear);
        ls_hasher_put_vec3(h, c->target);
        ls_hasher_put_u32(h, c->body);
        ls_hasher_put_u32(h, c->body_generation);
    }
}

// Particle systems in slot order (SPEC.md §12, §24). A world that never had a
// particle system hashes nothing here, so its checksum is the one it had
// before particles existed.
static void hash_particles(ls_hasher *h, const ls_world *w)
{
    const ls_particle_store *ps = w->particles;
    ls_hasher_put_u32(h, ps->system_count);
    for (uint32_t i = 0; i < ps->system_high; i++) {
        if (ps->systems[i].alive) {
            hash_particle_system(h, ps, i);
        }
    }
}

// True when the world has particle state to save and hash.
static bool has_particles(const ls_world *w)
{
    return w->particles && w->particles->system_high > 0;
}

// True when the world has vehicle or game-word state to save and hash
// (SPEC.md §26.7): otherwise it saves and hashes exactly as before vehicles.
static bool has_vehicles(const ls_world *w)
{
    return w->vehicle_high > 0 || w->game_words_used;
}

static void hash_vehicles(ls_hasher *h, const ls_world *w);

uint64_t ls_world_checksum(const ls_world *w)
{
    ls_hasher h;
    ls_hasher_init(&h);
    ls_hasher_put_u32(&h, w->tick);
    ls_hasher_put_u64(&h, w->rng.state);
    ls_hasher_put_u64(&h, w->rng.inc);
    ls_hasher_put_u32(&h, w->body_count);
    for (uint32_t i = 0; i < w->body_high; i++) {
        const ls_body *b = &w->bodies[i];
        if (!b->alive) {
            continue;
        }
        ls_hasher_put_u32(&h, i);
        ls_hasher_put_u32(&h, b->generation);
        ls_hasher_put_u32(&h, (uint32_t)b->type | (b->asleep ? 0x100u : 0u));
        ls_hasher_put_vec3(&h, b->p);
        ls_hasher_put_quat(&h, b->q);
        ls_hasher_put_vec3(&h, b->linear_velocity);
        ls_hasher_put_vec3(&h, b->angular_velocity);
        ls_hasher_put_fx(&h, b->sleep_timer);
        // The body's shapes in chain (creation) order: id, kind and pose in the body.
        ls_hasher_put_u32(&h, b->shape_count);
        for (uint32_t k = b->shape_head; k != UINT32_MAX; k = w->shapes[k].next) {
            const ls_shape *s = &w->shapes[k];
            ls_hasher_put_u32(&h, k);
            ls_hasher_put_u32(&h, s->generation);
            ls_hasher_put_u32(&h, (uint32_t)s->geom.kind);
            ls_hasher_put_vec3(&h, s->local_p);
            ls_hasher_put_quat(&h, s->local_q);
        }
    }
    if (w->joint_high > 0) {
        hash_joints(&h, w);
    }
    if (has_particles(w)) {
        hash_particles(&h, w);
    }
    if (has_vehicles(w)) {
        hash_vehicles(&h, w);
    }
    return ls_hasher_digest(&h);
}

// A bounded little-endian writer/reader over a caller buffer.
typedef struct cursor {
    uint8_t *w;
    const uint8_t *r;
    size_t pos, size;
    bool ok;
} cursor;

static void put32(cursor *c, uint32_t v)
{
    if (c->pos + 4 > c->size) {
        c->ok = false;
        return;
    }
    if (c->w) {
        ls_put_u32le(c->w + c->pos, v);
    }
    c->pos += 4;
}

static uint32_t get32(cursor *c)
{
    if (c->pos + 4 > c->size) {
        c->ok = false;
        return 0;
    }
    uint32_t v = ls_get_u32le(c->r + c->pos);
    c->pos += 4;
    return v;
}

// Every field is 32 bits wide in the snapshot; one function per direction keeps
// save and restore in lockstep with each other.
static void io32(cursor *c, bool save, void *field)
{
    uint32_t v;
    if (save) {
        memcpy(&v, field, 4);
        put32(c, v);
    } else {
        v = get32(c);
        memcpy(field, &v, 4);
    }
}

static void io_u64(cursor *c, bool save, uint64_t *v)
{
    uint32_t lo = (uint32_t)*v, hi = (uint32_t)(*v >> 32);
    io32(c, save, &lo);
    io32(c, save, &hi);
    *v = ((uint64_t)hi << 32) | lo;
}

static void io_vec3(cursor *c, bool save, ls_vec3 *v)
{
    io32(c, save, &v->x);
    io32(c, save, &v->y);
    io32(c, save, &v->z);
}

static void io_quat(cursor *c, bool save, ls_quat *q)
{
    io32(c, save, &q->x);
    io32(c, save, &q->y);
    io32(c, save, &q->z);
    io32(c, save, &q->w);
}

static void io_body_flags(cursor *c, bool save, ls_body *b)
{
    uint32_t f = (uint32_t)b->alive | (uint32_t)b->allow_sleep << 1 | (uint32_t)b->asleep << 2 |
                 (uint32_t)b->bullet << 3 | (uint32_t)b->type << 8;
    io32(c, save, &f);
    if (!save && (f & ~0x0000030Fu) != 0) {
        c->ok = false; // bits a world never writes: refused, so restore-save is the identity
    }
    b->alive = f & 1u;
    b->allow_sleep = (f >> 1) & 1u;
    b->asleep = (f >> 2) & 1u;
    b->bullet = (f >> 3) & 1u;
    b->type = (uint8_t)((f >> 8) & 3u);
}

// The symmetric inverse inertia tensor as xx, yy, zz, xy, xz, yz.
static void io_tensor(cursor *c, bool save, ls_mat3 *m)
{
    io32(c, save, &m->row[0].x);
    io32(c, save, &m->row[1].y);
    io32(c, save, &m->row[2].z);
    io32(c, save, &m->row[0].y);
    io32(c, save, &m->row[0].z);
    io32(c, save, &m->row[1].z);
    m->row[1].x = m->row[0].y;
    m->row[2].x = m->row[0].z;
    m->row[2].y = m->row[1].z;
}

static void io_body(cursor *c, bool save, ls_body *b)
{
    io32(c, save, &b->generation);
    io_body_flags(c, save, b);
    io_vec3(c, save, &b->p);
    io_quat(c, save, &b->q);
    io_vec3(c, save, &b->linear_velocity);
    io_vec3(c, save, &b->angular_velocity);
    io_vec3(c, save, &b->force);
    io_vec3(c, save, &b->torque);
    ls_fx *scalars[] = {&b->sleep_timer, &b->lin_damp, &b->ang_damp, &b->mass, &b->inv_mass};
    for (size_t k = 0; k < sizeof scalars / sizeof scalars[0]; k++) {
        io32(c, save, scalars[k]);
    }
    io_tensor(c, save, &b->inv_inertia);
    io_vec3(c, save, &b->com_local);
    io32(c, save, &b->shape_head);
    io32(c, save, &b->shape_count);
    io_u64(c, save, &b->user_data);
}

static void io_shape(cursor *c, bool save, ls_shape *s)
{
    io32(c, save, &s->generation);
    uint32_t f = (uint32_t)s->alive | (uint32_t)s->geom.kind << 8;
    io32(c, save, &f);
    if (!save && ((f & ~0x0000FF01u) != 0 || (f >> 8) >= LS_SHAPE_KIND_COUNT)) {
        c->ok = false;
    }
    s->alive = f & 1u;
    s->geom.kind = (ls_shape_type)((f >> 8) & 0xFFu);
    io32(c, save, &s->body);
    io32(c, save, &s->next);
    io32(c, save, &s->geometry);
    io_vec3(c, save, &s->local_p);
    io_quat(c, save, &s->local_q);
    io32(c, save, &s->geom.radius);
    io32(c, save, &s->geom.half_height);
    io_vec3(c, save, &s->geom.half_extents);
    io_vec3(c, save, &s->geom.normal);
    io32(c, save, &s->geom.plane_d);
    io32(c, save, &s->friction);
    io32(c, save, &s->restitution);
    io32(c, save, &s->density);
    io32(c, save, &s->category);
    io32(c, save, &s->mask);
}

static void io_contact(cursor *c, bool save, ls_contact *ct)
{
    io32(c, save, &ct->shape_a);
    io32(c, save, &ct->shape_b);
    io32(c, save, &ct->child);
    io_vec3(c, save, &ct->m.normal);
    io32(c, save, &ct->m.count);
    for (int i = 0; i < LS_MANIFOLD_MAX; i++) {
        io_vec3(c, save, &ct->m.points[i].point);
        io32(c, save, &ct->m.points[i].depth);
        io32(c, save, &ct->m.points[i].feature);
        io32(c, save, &ct->normal_impulse[i]);
        io_vec3(c, save, &ct->anchor_a[i]);
        io_vec3(c, save, &ct->anchor_b[i]);
        io32(c, save, &ct->base_depth[i]);
        io32(c, save, &ct->lever[i]);
    }
    io_vec3(c, save, &ct->friction_impulse);
    io32(c, save, &ct->twist_impulse);
    io_vec3(c, save, &ct->rolling_impulse);
    for (int k = 0; k < 2; k++) {
        io_vec3(c, save, &ct->pose_p[k]);
        io_quat(c, save, &ct->pose_q[k]);
        io_vec3(c, save, &ct->tangent[k]);
    }
    io32(c, save, &ct->friction);
    io32(c, save, &ct->restitution);
}

// One joint slot (SPEC.md §13): 46 words.
static void io_joint(cursor *c, bool save, ls_joint *j)
{
    io32(c, save, &j->generation);
    uint32_t f = (uint32_t)j->alive | (uint32_t)j->type << 8 | j->flags << 16;
    io32(c, save, &f);
    if (!save && (f & ~(0x1u | 0xFF00u | (uint32_t)LS_JOINT_F_ALL << 16)) != 0) {
        c->ok = false; // bits a world never writes
    }
    j->alive = f & 1u;
    j->type = (uint8_t)(f >> 8);
    j->flags = f >> 16;
    io32(c, save, &j->a);
    io32(c, save, &j->b);
    io_vec3(c, save, &j->local_a);
    io_vec3(c, save, &j->local_b);
    io_quat(c, save, &j->frame_a);
    io_quat(c, save, &j->frame_b);
    ls_fx *params[] = {&j->lower,        &j->upper,       &j->motor_speed, &j->max_motor,
                       &j->spring_hertz, &j->spring_zeta, &j->length,      &j->cone,
                       &j->break_force,  &j->break_torque};
    for (size_t k = 0; k < sizeof params / sizeof params[0]; k++) {
        io32(c, save, params[k]);
    }
    io_u64(c, save, &j->user_data);
    io_vec3(c, save, &j->linear_impulse);
    io_vec3(c, save, &j->angular_impulse);
    io32(c, save, &j->spring_impulse);
    io32(c, save, &j->motor_impulse);
    io32(c, save, &j->lower_impulse);
    io32(c, save, &j->upper_impulse);
    io_vec3(c, save, &j->force);
    io_vec3(c, save, &j->torque);
}

// --- Geometry table (hulls, meshes): saved through the public accessors;
// restored by rebuilding with the validating constructors, unless the world
// already holds exactly the same data (the usual case: a rollback restores
// into the world that saved), which costs a comparison and no allocation.

static void save_geometry(cursor *c, const ls_geometry *g)
{
    uint32_t kind = (uint32_t)g->kind;
    io32(c, true, &kind);
    if (g->kind == LS_SHAPE_HULL) {
        // Its vertices only: ls_hull_create builds the same hull from them
        // (its result depends only on the point set, SPEC.md §20).
        uint32_t nv = ls_hull_vertex_count(g->hull);
        io32(c, true, &nv);
        for (uint32_t i = 0; i < nv; i++) {
            ls_vec3 v = ls_hull_vertex(g->hull, i);
            io_vec3(c, true, &v);
        }
        return;
    }
    uint32_t nv = ls_mesh_vertex_count(g->mesh), nt = ls_mesh_triangle_count(g->mesh);
    io32(c, true, &nv);
    for (uint32_t i = 0; i < nv; i++) {
        ls_vec3 v = ls_mesh_vertex(g->mesh, i);
        io_vec3(c, true, &v);
    }
    io32(c, true, &nt);
    for (uint32_t t = 0; t < nt; t++) {
        uint32_t tri[3];
        ls_mesh_triangle(g->mesh, t, tri);
        for (int k = 0; k < 3; k++) {
            io32(c, true, &tri[k]);
        }
    }
}

// Reads one geometry entry and compares it with `have` (may be NULL) word by
// word, without allocating; false when it differs or the buffer is short.
static bool same_geometry(cursor *c, const ls_geometry *have)
{
    if (!have) {
        return false;
    }
    uint32_t kind = get32(c);
    if (!c->ok || kind != (uint32_t)have->kind) {
        return false;
    }
    if (have->kind == LS_SHAPE_HULL) {
        uint32_t nv = get32(c);
        if (nv != ls_hull_vertex_count(have->hull)) {
            return false;
        }
        for (uint32_t i = 0; i < nv && c->ok; i++) {
            ls_vec3 v;
            io_vec3(c, false, &v);
            if (!ls_vec3_equal(v, ls_hull_vertex(have->hull, i))) {
                return false;
            }
        }
        return c->ok;
    }
    uint32_t nv = get32(c);
    if (nv != ls_mesh_vertex_count(have->mesh)) {
        return false;
    }
    for (uint32_t i = 0; i < nv && c->ok; i++) {
        ls_vec3 v;
        io_vec3(c, false, &v);
        if (!ls_vec3_equal(v, ls_mesh_vertex(have->mesh, i))) {
            return false;
        }
    }
    uint32_t nt = get32(c);
    if (nt != ls_mesh_triangle_count(have->mesh)) {
        return false;
    }
    for (uint32_t t = 0; t < nt && c->ok; t++) {
        uint32_t tri[3];
        ls_mesh_triangle(have->mesh, t, tri);
        for (int k = 0; k < 3; k++) {
            if (get32(c) != tri[k]) {
                return false;
            }
        }
    }
    return c->ok;
}

// Reads one geometry entry and builds it (allocating). Counts are checked
// against the bytes left before anything is allocated, so a stranger's small
// buffer cannot ask for a large allocation.
static bool build_geometry(cursor *c, ls_geometry *out, ls_error *why)
{
    uint32_t kind = get32(c), nv = get32(c);
    size_t left = c->size - c->pos;
    memset(out, 0, sizeof *out);
    if (!c->ok || (kind != LS_SHAPE_HULL && kind != LS_SHAPE_MESH) || (size_t)nv * 12 > left ||
        (kind == LS_SHAPE_HULL && nv > LS_HULL_MAX_VERTICES)) {
        return false;
    }
    out->kind = (ls_shape_type)kind;
    ls_vec3 *v = malloc((nv ? nv : 1) * sizeof *v);
    bool ok = v != NULL;
    for (uint32_t i = 0; i < nv && ok; i++) {
        io_vec3(c, false, &v[i]);
    }
    ok = ok && c->ok;
    if (ok && kind == LS_SHAPE_HULL) {
        out->hull = ls_hull_create(v, nv, why);
        // A stranger's vertices that are not exactly some hull's own corners
        // build a different hull: refused, so restore-then-save is the identity.
        ok = out->hull && ls_hull_vertex_count(out->hull) == nv;
        for (uint32_t i = 0; ok && i < nv; i++) {
            ok = ls_vec3_equal(ls_hull_vertex(out->hull, i), v[i]);
        }
    } else if (ok) {
        uint32_t nt = get32(c), *idx = NULL;
        ok = c->ok && nt <= LS_MESH_MAX_TRIANGLES && (size_t)nt * 12 <= c->size - c->pos;
        if (ok) {
            idx = malloc((nt ? (size_t)nt * 3 : 1) * sizeof *idx);
            ok = idx != NULL;
        }
        for (size_t k = 0; ok && k < (size_t)nt * 3; k++) {
            idx[k] = get32(c);
        }
        if (ok && c->ok) {
            out->mesh = ls_mesh_create(v, nv, idx, nt, why);
            ok = out->mesh != NULL;
        }
        free(idx);
    }
    free(v);
    return ok && c->ok;
}

// Restore's geometry section: keep the world's table if the snapshot holds
// the same entries, else rebuild it.
static bool restore_geometry(cursor *c, ls_world *w, uint32_t count, ls_error *why)
{
    size_t start = c->pos;
    bool same = count == w->geometry_count;
    for (uint32_t i = 0; i < count && same; i++) {
        same = same_geometry(c, &w->geometry[i]);
    }
    if (same && c->ok) {
        return true;
    }
    c->pos = start;
    c->ok = true;
    ls_world_geometry_clear_(w);
    if (count == 0) {
        return true;
    }
    if ((size_t)count * 12 > c->size - c->pos) {
        return false;
    }
    w->geometry = calloc(count, sizeof *w->geometry);
    if (!w->geometry) {
        return false;
    }
    w->geometry_cap = count;
    for (uint32_t i = 0; i < count; i++) {
        if (!build_geometry(c, &w->geometry[i], why)) {
            free(w->geometry[i].hull);
            ls_mesh_destroy(w->geometry[i].mesh);
            return false;
        }
        w->geometry_count++;
    }
    return true;
}

// ---- Particle section (section word bit 0, since version 4; SPEC.md §13, §25.8) ----

// One particle system slot: 40 words (the next-free link follows).
static void io_particle_system(cursor *c, bool save, ls_particle_system *s)
{
    io32(c, save, &s->generation);
    uint32_t f = (uint32_t)s->alive | (uint32_t)s->kind << 8 | (uint32_t)s->stick_mode << 16 |
                 s->flags << 24;
    io32(c, save, &f);
    if (!save && ((f & 0xFEu) != 0 || ((f >> 8) & 0xFFu) >= LS_PARTICLES_KIND_COUNT ||
                  ((f >> 16) & 0xFFu) > LS_STICK_EXACT || (f >> 24) > LS_PSYS_F_ALL)) {
        c->ok = false;
    }
    s->alive = f & 1u;
    s->kind = (uint8_t)(f >> 8);
    s->stick_mode = (uint8_t)(f >> 16);
    s->flags = f >> 24;
    io32(c, save, &s->iterations);
    io32(c, save, &s->damping);
    io32(c, save, &s->gravity_scale);
    io32(c, save, &s->friction);
    io_vec3(c, save, &s->acceleration);
    io32(c, save, &s->turbulence);
    io_u64(c, save, &s->rng.state);
    io_u64(c, save, &s->rng.inc);
    io32(c, save, &s->category);
    io32(c, save, &s->mask);
    io_u64(c, save, &s->user_data);
    io32(c, save, &s->count);
    io32(c, save, &s->cap);
    io32(c, save, &s->con_count);
    io32(c, save, &s->con_cap);
    ls_particle_embed *e = &s->embed;
    uint32_t arrangement = e->arrangement, kind = (uint32_t)e->geom.kind;
    io32(c, save, &arrangement);
    io_vec3(c, save, &e->extent);
    io32(c, save, &kind);
    if (!save && (arrangement > LS_PARTICLE_BODY_BOX || kind >= LS_SHAPE_KIND_COUNT)) {
        c->ok = false;
    }
    e->arrangement = (uint8_t)arrangement;
    e->geom.kind = (ls_shape_type)(kind & 0xFFu);
    io32(c, save, &e->geometry);
    io32(c, save, &e->geom.radius);
    io32(c, save, &e->geom.half_height);
    io_vec3(c, save, &e->geom.half_extents);
    io_vec3(c, save, &e->local_p);
    io_quat(c, save, &e->local_q);
}

// One particle: 11 words.
static void io_particle(cursor *c, bool save, ls_particle_store *ps, uint32_t i)
{
    io_vec3(c, save, &ps->x[i]);
    io_vec3(c, save, &ps->x_old[i]);
    io32(c, save, &ps->p[i].inv_mass);
    io32(c, save, &ps->p[i].radius);
    io_vec3(c, save, &ps->p[i].force);
}

// One constraint: 13 words.
static void io_pcon(cursor *c, bool save, ls_pcon *k)
{
    uint32_t f = (uint32_t)k->type | (uint32_t)k->flags << 8;
    io32(c, save, &f);
    if (!save && ((f & 0xFFu) >= LS_PARTICLE_CONSTRAINT_KIND_COUNT || (f >> 8) > LS_PCON_F_ALL)) {
        c->ok = false;
    }
    k->type = (uint8_t)f;
    k->flags = (uint8_t)(f >> 8);
    io32(c, save, &k->a);
    io32(c, save, &k->b);
    io32(c, save, &k->c);
    io32(c, save, &k->rest);
    io32(c, save, &k->rest_max);
    io32(c, save, &k->stiffness);
    io32(c, save, &k->tear);
    io_vec3(c, save, &k->target);
    io32(c, save, &k->body);
    io32(c, save, &k->body_generation);
}

// Counts and the overflow record, every system slot with its free-list link,
// then each live system's particles and constraints (slot order). Restore
// checks the reserved capacities against the world's pools before reading
// any particle, then packs the systems' ranges in slot order.
static bool io_particles(cursor *c, bool save, ls_world *w)
{
    ls_particle_store *ps = w->particles;
    if (!ps) {
        return false; // a world without particle capacity cannot hold the section
    }
    io32(c, save, &ps->system_high);
    io32(c, save, &ps->system_count);
    io32(c, save, &ps->free_head);
    io32(c, save, &ps->overflow_system);
    io32(c, save, &ps->overflow_generation);
    io32(c, save, &ps->overflow_particle);
    if (!c->ok || ps->system_high == 0 || ps->system_high > ps->max_systems ||
        ps->system_count > ps->system_high) {
        return false;
    }
    for (uint32_t i = 0; i < ps->system_high && c->ok; i++) {
        io_particle_system(c, save, &ps->systems[i]);
        io32(c, save, &ps->next_free[i]);
    }
    if (!c->ok) {
        return false;
    }
    if (!save) {
        uint64_t np = 0, nc = 0;
        for (uint32_t i = 0; i < ps->system_high; i++) {
            const ls_particle_system *s = &ps->systems[i];
            if (s->alive) {
                if (s->count > s->cap || s->con_count > s->con_cap) {
                    return false;
                }
                np += s->cap;
                nc += s->con_cap;
            }
        }
        if (np > ps->max_particles || nc > ps->max_constraints) {
            return false;
        }
        ls_particles_rebuild_(w);
    }
    for (uint32_t i = 0; i < ps->system_high && c->ok; i++) {
        const ls_particle_system *s = &ps->systems[i];
        if (!s->alive) {
            continue;
        }
        for (uint32_t k = 0; k < s->count && c->ok; k++) {
            io_particle(c, save, ps, s->first + k);
        }
        for (uint32_t k = 0; k < s->con_count && c->ok; k++) {
            io_pcon(c, save, &ps->con[s->con_first + k]);
        }
    }
    return c->ok;
}

// ---- Vehicle and game-word section (section word bit 1, since version 5; SPEC.md §26.7) ----

// A bool as a 32-bit 0/1 word; other values are refused.
static void io_bool(cursor *c, bool save, bool *b)
{
    uint32_t v = *b ? 1u : 0u;
    io32(c, save, &v);
    if (!save && v > 1) {
        c->ok = false;
    }
    *b = v != 0;
}

static void io_wheel_def(cursor *c, bool save, ls_wheel_def *d)
{
    io_vec3(c, save, &d->mount);
    io_vec3(c, save, &d->axis);
    io_vec3(c, save, &d->forward);
    ls_fx *fx[] = {&d->radius,
                   &d->rest_length,
                   &d->max_travel,
                   &d->stiffness,
                   &d->damping,
                   &d->inertia,
                   &d->drive_share,
                   &d->brake_share,
                   &d->steer_share,
                   &d->static_friction,
                   &d->dynamic_friction,
                   &d->rolling_resistance,
                   &d->anti_roll_stiffness,
                   &d->peak_slip,
                   &d->slide_slip};
    for (size_t k = 0; k < sizeof fx / sizeof fx[0]; k++) {
        io32(c, save, fx[k]);
    }
    io_bool(c, save, &d->handbrake);
    io32(c, save, &d->anti_roll_pair);
}

static void io_wheel_state(cursor *c, bool save, ls_wheel_state *st)
{
    io_bool(c, save, &st->in_contact);
    io_vec3(c, save, &st->contact_point);
    io_vec3(c, save, &st->contact_normal);
    io32(c, save, &st->ground.index1);
    io32(c, save, &st->ground.generation);
    io32(c, save, &st->compression);
    io32(c, save, &st->suspension_speed);
    io32(c, save, &st->suspension_force);
    io32(c, save, &st->steer_angle);
    io32(c, save, &st->spin_speed);
    io32(c, save, &st->spin_angle);
    io_bool(c, save, &st->sliding);
    io_vec3(c, save, &st->center);
}

// One vehicle slot: generation, alive, definition (user_data last), controls,
// then all LS_VEHICLE_MAX_WHEELS wheel definitions and states (unused ones zero).
static void io_vehicle(cursor *c, bool save, ls_vehicle *v, bool with_user_data)
{
    io32(c, save, &v->generation);
    io_bool(c, save, &v->alive);
    ls_vehicle_def *d = &v->def;
    io32(c, save, &d->chassis.index1);
    io32(c, save, &d->chassis.generation);
    io32(c, save, &d->wheel_count);
    uint32_t probe = (uint32_t)d->probe;
    io32(c, save, &probe);
    d->probe = (ls_wheel_probe)(probe & 1u);
    if (!save && probe > 1) {
        c->ok = false;
    }
    io32(c, save, &d->engine_force);
    io32(c, save, &d->brake_force);
    io32(c, save, &d->max_steer);
    io32(c, save, &d->steer_rate);
    io32(c, save, &d->boost_force);
    io32(c, save, &d->filter.category);
    io32(c, save, &d->filter.mask);
    io32(c, save, &d->filter.ignore.index1);
    io32(c, save, &d->filter.ignore.generation);
    if (with_user_data) {
        io_u64(c, save, &d->user_data);
    }
    io32(c, save, &v->controls.throttle);
    io32(c, save, &v->controls.brake);
    io32(c, save, &v->controls.steer);
    io_bool(c, save, &v->controls.handbrake);
    io_bool(c, save, &v->controls.boost);
    io32(c, save, &v->steer);
    for (uint32_t k = 0; k < LS_VEHICLE_MAX_WHEELS && c->ok; k++) {
        io_wheel_def(c, save, &d->wheels[k]);
        io_wheel_state(c, save, &v->wheels[k]);
    }
}

// What the step relies on in a restored live vehicle: counts, indices and the
// divisors (radius, inertia) in range; anything else is just numbers.
static bool vehicle_ok(const ls_vehicle *v)
{
    const ls_vehicle_def *d = &v->def;
    if (d->wheel_count < 2 || d->wheel_count > LS_VEHICLE_MAX_WHEELS) {
        return false;
    }
    for (uint32_t k = 0; k < d->wheel_count; k++) {
        const ls_wheel_def *wd = &d->wheels[k];
        if (wd->radius < 3277 || wd->radius > LS_FX_INT(4) || wd->inertia < 655 ||
            wd->inertia > LS_FX_INT(100) || wd->rest_length < 655 ||
            wd->rest_length > LS_FX_INT(4) || wd->max_travel < 0 ||
            wd->max_travel > wd->rest_length || wd->anti_roll_pair > d->wheel_count) {
            return false;
        }
    }
    return true;
}

// Game words (used flag + LS_WORLD_GAME_WORDS), vehicle counts, then every
// slot ever used with its free-list link. Restore checks the free list.
static bool io_vehicles(cursor *c, bool save, ls_world *w)
{
    io_bool(c, save, &w->game_words_used);
    for (uint32_t k = 0; k < LS_WORLD_GAME_WORDS; k++) {
        io32(c, save, &w->game_words[k]);
    }
    io32(c, save, &w->vehicle_high);
    io32(c, save, &w->vehicle_count);
    io32(c, save, &w->vehicle_free_head);
    if (!c->ok || w->vehicle_high > w->def.max_vehicles || w->vehicle_count > w->vehicle_high) {
        return false;
    }
    for (uint32_t i = 0; i < w->vehicle_high && c->ok; i++) {
        io_vehicle(c, save, &w->vehicles[i], true);
        io32(c, save, &w->vehicle_next_free[i]);
    }
    if (save || !c->ok) {
        return c->ok;
    }
    uint32_t cap = w->def.max_vehicles ? w->def.max_vehicles : 1, alive = 0;
    for (uint32_t i = w->vehicle_high; i < cap; i++) {
        memset(&w->vehicles[i], 0, sizeof w->vehicles[i]); // as in a fresh world
        w->vehicle_next_free[i] = 0;
    }
    for (uint32_t i = 0; i < w->vehicle_high; i++) {
        if (w->vehicles[i].alive) {
            alive++;
            if (!vehicle_ok(&w->vehicles[i])) {
                return false;
            }
        }
    }
    // The free list visits each dead slot once and nothing else.
    uint32_t n = 0;
    for (uint32_t i = w->vehicle_free_head; i != UINT32_MAX; i = w->vehicle_next_free[i]) {
        if (i >= w->vehicle_high || w->vehicles[i].alive || ++n > w->vehicle_high) {
            return false;
        }
    }
    return alive == w->vehicle_count && n == w->vehicle_high - alive;
}

// Clear vehicles and game words (a snapshot without them, or a refused one).
static void clear_vehicles(ls_world *w)
{
    uint32_t cap = w->def.max_vehicles ? w->def.max_vehicles : 1;
    memset(w->vehicles, 0, cap * sizeof *w->vehicles);
    memset(w->vehicle_next_free, 0, cap * sizeof *w->vehicle_next_free);
    w->vehicle_high = w->vehicle_count = 0;
    w->vehicle_free_head = UINT32_MAX;
    memset(w->game_words, 0, sizeof w->game_words);
    w->game_words_used = false;
}

// The vehicle section's words in snapshot order (user_data left out), one
// vehicle at a time: the checksum and the snapshot cannot drift apart.
static void hash_vehicles(ls_hasher *h, const ls_world *w)
{
    uint8_t buf[4096];
    ls_hasher_put_u32(h, w->game_words_used);
    for (uint32_t k = 0; k < LS_WORLD_GAME_WORDS; k++) {
        ls_hasher_put_u32(h, (uint32_t)w->game_words[k]);
    }
    ls_hasher_put_u32(h, w->vehicle_count);
    for (uint32_t i = 0; i < w->vehicle_high; i++) {
        if (!w->vehicles[i].alive) {
            continue;
        }
        ls_vehicle copy = w->vehicles[i];
        cursor c = {buf, NULL, 0, sizeof buf, true};
        io_vehicle(&c, true, &copy, false);
        ls_hasher_put_u32(h, i);
        ls_hasher_put_bytes(h, buf, c.pos);
    }
}

// The whole state, in the order of SPEC.md §13. Restore validates counts
// before using them, so a corrupt buffer is refused instead of read past.
static bool io_world(cursor *c, bool save, ls_world *w, ls_error *why)
{
    uint32_t magic = SNAP_MAGIC, max_b = w->def.max_bodies;
    uint32_t version = SNAP_VERSION;
    uint32_t max_s = w->def.max_shapes, geometry_count = w->geometry_count;
    io32(c, save, &magic);
    io32(c, save, &version);
    io32(c, save, &max_b);
    io32(c, save, &max_s);
    if (!save && (magic != SNAP_MAGIC || version != SNAP_VERSION || max_b != w->def.max_bodies ||
                  max_s != w->def.max_shapes)) {
        return false;
    }
    io32(c, save, &w->tick);
    io_u64(c, save, &w->rng.state);
    io_u64(c, save, &w->rng.inc);
    io32(c, save, &w->body_high);
    io32(c, save, &w->body_count);
    io32(c, save, &w->free_head);
    io32(c, save, &w->shape_high);
    io32(c, save, &w->shape_count);
    io32(c, save, &w->shape_free_head);
    io32(c, save, &geometry_count);
    io32(c, save, &w->contact_count);
    io32(c, save, &w->info.overflow_count);
    io32(c, save, &w->info.overflow_tick);
    io32(c, save, &w->info.overflow_body.index1);
    io32(c, save, &w->info.overflow_body.generation);
    if (!c->ok || w->body_high > w->def.max_bodies || w->shape_high > w->def.max_shapes ||
        w->contact_count > w->def.max_contacts) {
        return false;
    }
    if (save) {
        for (uint32_t i = 0; i < w->geometry_count && c->ok; i++) {
            save_geometry(c, &w->geometry[i]);
        }
    } else if (!restore_geometry(c, w, geometry_count, why)) {
        return false;
    }
    for (uint32_t i = 0; i < w->body_high && c->ok; i++) {
        io_body(c, save, &w->bodies[i]);
        io32(c, save, &w->next_free[i]);
    }
    for (uint32_t i = 0; i < w->shape_high && c->ok; i++) {
        io_shape(c, save, &w->shapes[i]);
        io32(c, save, &w->shape_next_free[i]);
    }
    for (uint32_t i = 0; i < w->contact_count && c->ok; i++) {
        io_contact(c, save, &w->contacts[i]);
    }
    // Joints: counts, then every slot ever used with its free-list link.
    io32(c, save, &w->joint_high);
    io32(c, save, &w->joint_count);
    io32(c, save, &w->joint_free_head);
    if (!c->ok || w->joint_high > w->def.max_joints || w->joint_count > w->joint_high) {
        return false;
    }
    for (uint32_t i = 0; i < w->joint_high && c->ok; i++) {
        io_joint(c, save, &w->joints[i]);
        io32(c, save, &w->joint_next_free[i]);
    }
    uint32_t sections = (has_particles(w) ? SNAP_SECTION_PARTICLES : 0u) |
                        (has_vehicles(w) ? SNAP_SECTION_VEHICLES : 0u);
    io32(c, save, &sections);
    if (!c->ok || (sections & ~(SNAP_SECTION_PARTICLES | SNAP_SECTION_VEHICLES)) != 0) {
        return false;
    }
    if (!save && (sections & SNAP_SECTION_PARTICLES) && !w->particles) {
        if (why) {
            ls_error_set(why, LS_ERR_INCOMPATIBLE,
                         "snapshot with particle systems restored into a world without "
                         "particle capacity (max_particles or max_particle_systems is 0)");
        }
        return false;
    }
    if (!(sections & SNAP_SECTION_PARTICLES)) {
        if (!save) {
            ls_particles_clear_(w);
        }
    } else if (!io_particles(c, save, w)) {
        return false;
    }
    if (!(sections & SNAP_SECTION_VEHICLES)) {
        if (!save) {
            clear_vehicles(w);
        }
        return c->ok;
    }
    return io_vehicles(c, save, w);
}

size_t ls_world_snapshot_size(const ls_world *w)
{
    cursor c = {NULL, NULL, 0, SIZE_MAX, true};
    io_world(&c, true, (ls_world *)w, NULL); // counting pass: writes nothing
    return c.pos;
}

size_t ls_world_snapshot_save(const ls_world *w, uint8_t *buf, size_t size)
{
    cursor c = {buf, NULL, 0, size, true};
    return io_world(&c, true, (ls_world *)w, NULL) ? c.pos : 0;
}

// Creation ranges (SPEC.md §5) of what a live body's geometry and material may
// hold. A snapshot is input: a keyframe from a stranger's replay must not
// reach the broad phase's box invariant (min <= max) or any other assert.
static bool in(ls_fx v, ls_fx lo, ls_fx hi)
{
    return v >= lo && v <= hi;
}

// The engine never produces the raw value 0x80000000 (SPEC.md §2: results
// saturate to +-LS_FX_MAX), and negating it is undefined: a snapshot holding it
// in any fixed-point word was not written by a world.
static bool fx_ok(ls_fx v)
{
    return v != INT32_MIN;
}

static bool vec_ok(ls_vec3 v)
{
    return fx_ok(v.x) && fx_ok(v.y) && fx_ok(v.z);
}

// A stored impulse inside the solver range [-2^30, 2^30) (SPEC.md §11.4).
static bool impulse_ok(ls_vec3 v)
{
    const ls_fx lim = 1 << 30;
    return v.x >= -lim && v.x < lim && v.y >= -lim && v.y < lim && v.z >= -lim && v.z < lim;
}

static bool quat_unit(ls_quat q)
{
    return ls_quat_is_stored_unit(q);
}

static const char *body_problem(const ls_body *b)
{
    const ls_mat3 *m = &b->inv_inertia;
    if (!vec_ok(b->p) || !vec_ok(b->linear_velocity) || !vec_ok(b->angular_velocity) ||
        !vec_ok(b->force) || !vec_ok(b->torque) || !vec_ok(b->com_local) || !vec_ok(m->row[0]) ||
        !vec_ok(m->row[1]) || !vec_ok(m->row[2])) {
        return "fixed-point word 0x80000000 (never written by a world)";
    }
    if (b->type > LS_BODY_DYNAMIC) {
        return "body type";
    }
    if (!in(b->lin_damp, 0, LS_FX_ONE) || !in(b->ang_damp, 0, LS_FX_ONE) || b->sleep_timer < 0) {
        return "damping or sleep timer";
    }
    // Creation ranges of mass.c: 0.01..1000 kg, so inverse mass <= 100; every
    // inverse inertia entry within +-1024 (raw 2^26), the diagonal >= 0.
    const ls_fx lim = 1 << 26;
    if (b->type == LS_BODY_DYNAMIC &&
        (!in(b->mass, 655, 65536000) || !in(b->inv_mass, 1, 6553600) || !in(m->row[0].x, 0, lim) ||
         !in(m->row[1].y, 0, lim) || !in(m->row[2].z, 0, lim) || !in(m->row[0].y, -lim, lim) ||
         !in(m->row[0].z, -lim, lim) || !in(m->row[1].z, -lim, lim))) {
        return "mass or inverse inertia";
    }
    if (b->type != LS_BODY_DYNAMIC && (b->mass != 0 || b->inv_mass != 0)) {
        return "mass of a static or kinematic body";
    }
    // Velocity components within the solver range (SPEC.md §5, §11.4): the
    // sweeps subtract two of them in 32 bits. (A step can leave a dynamic
    // body above the creation limit of 512 m/s: contact impulses come after
    // the clamp; the sweeps keep every component inside the range.)
    const ls_fx vmax = (ls_fx)((1 << 30) - 1);
    if (!in(b->linear_velocity.x, -vmax, vmax) || !in(b->linear_velocity.y, -vmax, vmax) ||
        !in(b->linear_velocity.z, -vmax, vmax) || !in(b->angular_velocity.x, -vmax, vmax) ||
        !in(b->angular_velocity.y, -vmax, vmax) || !in(b->angular_velocity.z, -vmax, vmax)) {
        return "velocity (a component beyond +-16384)";
    }
    if (!quat_unit(b->q)) {
        return "orientation (not a unit quaternion)";
    }
    if (b->shape_count < 1 || b->shape_count > LS_BODY_MAX_SHAPES) {
        return "shape count";
    }
    return NULL;
}

// A live shape: its kind's creation ranges (shape_kind.h), its data, its
// material and pose, and the body it names.
static const char *shape_problem(const ls_world *w, ls_shape *s)
{
    if (!vec_ok(s->local_p) || !vec_ok(s->geom.half_extents) || !vec_ok(s->geom.normal) ||
        !fx_ok(s->geom.radius) || !fx_ok(s->geom.half_height) || !fx_ok(s->geom.plane_d)) {
        return "fixed-point word 0x80000000 (never written by a world)";
    }
    const ls_shape_kind *kind = ls_shape_kind_of(s->geom.kind);
    if (!kind || s->body >= w->body_high || !w->bodies[s->body].alive) {
        return "shape kind or body";
    }
    if (kind->needs_data) {
        if (s->geometry >= w->geometry_count || w->geometry[s->geometry].kind != s->geom.kind) {
            return "shape data index";
        }
        ls_world_geometry_bind_(w, &s->geom, s->geometry);
    } else if (s->geometry != UINT32_MAX) {
        return "shape data index";
    } else {
        s->geom.hull = NULL;
        s->geom.mesh = NULL;
    }
    const ls_body *b = &w->bodies[s->body];
    if ((kind->static_only && b->type != LS_BODY_STATIC) || !kind->check(&s->geom, NULL)) {
        return "shape geometry";
    }
    if (!in(s->friction, 0, LS_FX_INT(4)) || !in(s->restitution, 0, LS_FX_ONE) || s->density < 0) {
        return "shape material";
    }
    // local_position within +-64 m minus a centre of mass within the same box.
    const ls_fx r = LS_FX_INT(128);
    if (!in(s->local_p.x, -r, r) || !in(s->local_p.y, -r, r) || !in(s->local_p.z, -r, r) ||
        !quat_unit(s->local_q)) {
        return "shape pose";
    }
    s->local_identity = ls_shape_local_identity_(s);
    return NULL;
}

// Everything restore must prove before a step may use the state; returns what
// is wrong, or NULL. Bodies and shapes, each free list (no index outside the
// used slots, no live slot, no cycle), the live counts, every body's shape
// chain, and contacts (sorted, live shapes of distinct bodies, 0..4 points).
static const char *state_problem(ls_world *w, uint32_t *where)
{
    uint32_t alive = 0, shapes_alive = 0, chained = 0;
    for (uint32_t i = 0; i < w->body_high; i++) {
        *where = i;
        if (w->bodies[i].alive) {
            alive++;
            const char *why = body_problem(&w->bodies[i]);
            if (why) {
                return why;
            }
            chained += w->bodies[i].shape_count;
        }
    }
    if (alive != w->body_count) {
        return "live body count";
    }
    for (uint32_t i = 0; i < w->shape_high; i++) {
        *where = i;
        if (w->shapes[i].alive) {
            shapes_alive++;
            const char *why = shape_problem(w, &w->shapes[i]);
            if (why) {
                return why;
            }
        }
    }
    if (shapes_alive != w->shape_count || chained != w->shape_count) {
        return "live shape count";
    }
    // Each body's chain: shape_count live shapes of that body, ending in
    // UINT32_MAX; with the counts above, no shape is in two chains.
    for (uint32_t i = 0; i < w->body_high; i++) {
        const ls_body *b = &w->bodies[i];
        *where = i;
        if (!b->alive) {
            continue;
        }
        uint32_t k = b->shape_head;
        for (uint32_t n = 0; n < b->shape_count; n++) {
            if (k >= w->shape_high || !w->shapes[k].alive || w->shapes[k].body != i) {
                return "shape chain";
            }
            k = w->shapes[k].next;
        }
        if (k != UINT32_MAX) {
            return "shape chain";
        }
    }
    uint32_t steps = 0;
    for (uint32_t i = w->free_head; i != UINT32_MAX; i = w->next_free[i]) {
        *where = i;
        if (i >= w->body_high || w->bodies[i].alive || ++steps > w->body_high) {
            return "free slot list";
        }
    }
    steps = 0;
    for (uint32_t i = w->shape_free_head; i != UINT32_MAX; i = w->shape_next_free[i]) {
        *where = i;
        if (i >= w->shape_high || w->shapes[i].alive || ++steps > w->shape_high) {
            return "free shape list";
        }
    }
    for (uint32_t i = 0; i < w->contact_count; i++) {
        ls_contact *ct = &w->contacts[i];
        *where = i;
        if (ct->shape_a >= ct->shape_b || ct->shape_b >= w->shape_high ||
            !w->shapes[ct->shape_a].alive || !w->shapes[ct->shape_b].alive ||
            w->shapes[ct->shape_a].body == w->shapes[ct->shape_b].body || ct->m.count < 0 ||
            ct->m.count > LS_MANIFOLD_MAX || !vec_ok(ct->m.normal)) {
            return "contact";
        }
        ct->a = w->shapes[ct->shape_a].body;
        ct->b = w->shapes[ct->shape_b].body;
        const ls_geom *ga = &w->shapes[ct->shape_a].geom, *gb = &w->shapes[ct->shape_b].geom;
        uint32_t children = ga->mesh   ? ls_mesh_triangle_count(ga->mesh)
                            : gb->mesh ? ls_mesh_triangle_count(gb->mesh)
                                       : 1;
        if (ct->child >= children) {
            return "contact child";
        }
        for (int k = 0; k < LS_MANIFOLD_MAX; k++) {
            // Normal impulses are accumulated clamped at 0 inside the solver
            // range (SPEC.md §11.4); every word a real value.
            if (ct->normal_impulse[k] < 0 || !vec_ok(ct->m.points[k].point) ||
                !fx_ok(ct->m.points[k].depth) || !vec_ok(ct->anchor_a[k]) ||
                !vec_ok(ct->anchor_b[k]) || !fx_ok(ct->base_depth[k])) {
                return "contact impulse or point";
            }
        }
        if (!impulse_ok(ct->friction_impulse) || !impulse_ok(ct->rolling_impulse) ||
            ct->twist_impulse < -(1 << 30) || ct->twist_impulse >= (1 << 30)) {
            return "contact impulse or point";
        }
        if (!vec_ok(ct->pose_p[0]) || !vec_ok(ct->pose_p[1]) || !quat_unit(ct->pose_q[0]) ||
            !quat_unit(ct->pose_q[1])) {
            return "contact pose";
        }
        // Tangents within 2 ulp of unit length and materials within their ranges.
        for (int k = 0; k < 2; k++) {
            uint64_t t = ls_vec3_len_sq_q32(ct->tangent[k]), one = (uint64_t)1 << 32;
            if (t > one + (one >> 12) || t < one - (one >> 12)) {
                return "contact tangent";
            }
        }
        if (ct->friction < 0 || ct->friction > LS_FX_INT(4) || ct->restitution < 0 ||
            ct->restitution > LS_FX_ONE) {
            return "contact material";
        }
        for (int k = 0; k < LS_MANIFOLD_MAX; k++) {
            if (ct->lever[k] < 0) {
                return "contact lever";
            }
        }
        const ls_contact *p = ct - 1;
        if (i > 0 &&
            (p->shape_a > ct->shape_a || (p->shape_a == ct->shape_a && p->shape_b > ct->shape_b) ||
             (p->shape_a == ct->shape_a && p->shape_b == ct->shape_b && p->child >= ct->child))) {
            return "contact order";
        }
    }
    const char *joints = ls_joint_state_problem_(w, where);
    return joints ? joints : ls_particles_state_problem_(w, where);
}

static void leave_empty(ls_world *w)
{
    w->body_high = w->body_count = w->contact_count = 0;
    w->shape_high = w->shape_count = 0;
    w->free_head = w->shape_free_head = UINT32_MAX;
    w->joint_high = w->joint_count = 0;
    w->joint_free_head = UINT32_MAX;
    ls_particles_clear_(w);
    clear_vehicles(w);
    ls_joint_rebuild_lists_(w);
    w->joint_event_count = 0;
    ls_broadphase_clear(w->bp);
}

ls_result ls_world_snapshot_restore(ls_world *w, const uint8_t *buf, size_t size, ls_error *err)
{
    // The header is checked first so a snapshot of another world says so
    // instead of "corrupt".
    if (size < 16) {
        return ls_error_set(err, LS_ERR_TRUNCATED, "snapshot of %zu bytes has no header", size);
    }
    uint32_t version = ls_get_u32le(buf + 4);
    if (ls_get_u32le(buf) != SNAP_MAGIC) {
        return ls_error_set(err, LS_ERR_INCOMPATIBLE, "not a snapshot (magic differs)");
    }
    if (version >= 3 && version <= 5) {
        return ls_error_set(err, LS_ERR_INCOMPATIBLE,
                            "snapshot version %u was written by Solver v2 (lockstep 0.2); this "
                            "engine (Solver v3, lockstep %d.%d) reads version %u only",
                            version, LS_VERSION_MAJOR, LS_VERSION_MINOR, SNAP_VERSION);
    }
    if (version != SNAP_VERSION) {
        return ls_error_set(err, LS_ERR_INCOMPATIBLE,
                            "snapshot version %u is not one this engine reads (version %u)",
                            version, SNAP_VERSION);
    }
    if (ls_get_u32le(buf + 8) != w->def.max_bodies || ls_get_u32le(buf + 12) != w->def.max_shapes) {
        return ls_error_set(err, LS_ERR_INCOMPATIBLE,
                            "snapshot of a world with max_bodies %u, max_shapes %u restored into "
                            "one with %u, %u",
                            ls_get_u32le(buf + 8), ls_get_u32le(buf + 12), w->def.max_bodies,
                            w->def.max_shapes);
    }
    ls_query_tree_invalidate(w->qt); // shapes change below, whatever the outcome
    // Restore into the live world only after a dry validation would need a
    // second copy; instead, validate while reading and fail closed.
    cursor c = {NULL, buf, 0, size, true};
    uint32_t where = 0;
    const char *problem = NULL;
    ls_error why;
    ls_error_clear(&why);
    if (!io_world(&c, false, w, &why) || (problem = state_problem(w, &where)) != NULL ||
        c.pos != size) {
        if (!problem && c.ok && c.pos != size && why.code == LS_OK) {
            problem = "length (bytes after the last contact)";
            where = (uint32_t)(size - c.pos);
        }
        leave_empty(w);
        if (problem) {
            return ls_error_set(err, LS_ERR_CORRUPT,
                                "snapshot refused: %s invalid at index %u; the world is left empty",
                                problem, where);
        }
        if (why.code == LS_ERR_INCOMPATIBLE) {
            return ls_error_set(err, LS_ERR_INCOMPATIBLE, "%s; the world is left empty",
                                why.message);
        }
        if (why.code != LS_OK) {
            return ls_error_set(err, LS_ERR_CORRUPT,
                                "snapshot refused: shape data invalid (%s); the world is left "
                                "empty",
                                why.message);
        }
        return ls_error_set(err, LS_ERR_CORRUPT,
                            "snapshot of %zu bytes is corrupt (read failed at byte %zu); the "
                            "world is left empty",
                            size, c.pos);
    }
    ls_broadphase_clear(w->bp);
    for (uint32_t i = 0; i < w->body_high; i++) {
        ls_body *b = &w->bodies[i];
        if (b->alive) {
            b->inertia_diagonal = ls_body_inertia_is_diagonal_(b);
            ls_body_update_derived_(w, b);
            ls_body_update_thickness_(w, b);
            ls_body_update_gyro_(b);
        }
    }
    w->begin_count = w->end_count = 0;
    ls_joint_rebuild_lists_(w);
    w->joint_event_count = 0;
    ls_particles_after_restore_(w);
    w->info.tick = w->tick;
    ls_error_clear(err);
    return LS_OK;
}
