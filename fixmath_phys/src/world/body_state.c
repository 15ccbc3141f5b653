// SPDX-License-Identifier: MIT
// The state walk of bodies and shapes (world/state.h; SPEC.md §12, §13):
// their snapshot records, their part of the checksum, and what restore must
// prove of them before a step may use them.
#include "../collision/shape_kind.h"
#include "../math/quat_check.h"
#include "state.h"

// ---- Snapshot records ----

static void io_body_flags(ls_cursor *c, ls_body *b)
{
    uint32_t f = (uint32_t)b->alive | (uint32_t)b->allow_sleep << 1 | (uint32_t)b->asleep << 2 |
                 (uint32_t)b->bullet << 3 | (uint32_t)b->type << 8;
    ls_io32_(c, &f);
    if (!c->save && (f & ~0x0000030Fu) != 0) {
        ls_cursor_fail_(
            c, NULL,
            LS_ERR_CORRUPT); // bits a world never writes: refused, so restore-save is the identity
    }
    b->alive = f & 1u;
    b->allow_sleep = (f >> 1) & 1u;
    b->asleep = (f >> 2) & 1u;
    b->bullet = (f >> 3) & 1u;
    b->type = (uint8_t)((f >> 8) & 3u);
}

// The symmetric inverse inertia tensor as xx, yy, zz, xy, xz, yz.
static void io_tensor(ls_cursor *c, ls_mat3 *m)
{
    ls_io32_(c, &m->row[0].x);
    ls_io32_(c, &m->row[1].y);
    ls_io32_(c, &m->row[2].z);
    ls_io32_(c, &m->row[0].y);
    ls_io32_(c, &m->row[0].z);
    ls_io32_(c, &m->row[1].z);
    m->row[1].x = m->row[0].y;
    m->row[2].x = m->row[0].z;
    m->row[2].y = m->row[1].z;
}

static void io_body(ls_cursor *c, ls_body *b)
{
    ls_io32_(c, &b->generation);
    io_body_flags(c, b);
    ls_io_vec3_(c, &b->p);
    ls_io_quat_(c, &b->q);
    ls_io_vec3_(c, &b->linear_velocity);
    ls_io_vec3_(c, &b->angular_velocity);
    ls_io_vec3_(c, &b->force);
    ls_io_vec3_(c, &b->torque);
    ls_fx *scalars[] = {&b->sleep_timer, &b->lin_damp, &b->ang_damp, &b->mass, &b->inv_mass};
    for (size_t k = 0; k < sizeof scalars / sizeof scalars[0]; k++) {
        ls_io32_(c, scalars[k]);
    }
    io_tensor(c, &b->inv_inertia);
    ls_io_vec3_(c, &b->com_local);
    ls_io32_(c, &b->shape_head);
    ls_io32_(c, &b->shape_count);
    ls_io_u64w_(c, &b->user_data);
}

static void io_shape(ls_cursor *c, ls_shape *s)
{
    ls_io32_(c, &s->generation);
    uint32_t f = (uint32_t)s->alive | (uint32_t)s->geom.kind << 8;
    ls_io32_(c, &f);
    if (!c->save && ((f & ~0x0000FF01u) != 0 || (f >> 8) >= LS_SHAPE_KIND_COUNT)) {
        ls_cursor_fail_(c, NULL, LS_ERR_CORRUPT);
    }
    s->alive = f & 1u;
    s->geom.kind = (ls_shape_type)((f >> 8) & 0xFFu);
    ls_io32_(c, &s->body);
    ls_io32_(c, &s->next);
    ls_io32_(c, &s->geometry);
    ls_io_vec3_(c, &s->local_p);
    ls_io_quat_(c, &s->local_q);
    ls_io32_(c, &s->geom.radius);
    ls_io32_(c, &s->geom.half_height);
    ls_io_vec3_(c, &s->geom.half_extents);
    ls_io_vec3_(c, &s->geom.normal);
    ls_io32_(c, &s->geom.plane_d);
    ls_io32_(c, &s->friction);
    ls_io32_(c, &s->restitution);
    ls_io32_(c, &s->density);
    ls_io32_(c, &s->category);
    ls_io32_(c, &s->mask);
}

void ls_body_state_io_(ls_cursor *c, ls_world *w)
{
    for (uint32_t i = 0; i < w->body_high && c->ok; i++) {
        io_body(c, &w->bodies[i]);
        ls_io32_(c, &w->next_free[i]);
    }
    for (uint32_t i = 0; i < w->shape_high && c->ok; i++) {
        io_shape(c, &w->shapes[i]);
        ls_io32_(c, &w->shape_next_free[i]);
    }
}

// ---- Checksum ----

void ls_body_state_hash_(ls_hasher *h, const ls_world *w)
{
    ls_hasher_put_u32(h, w->body_count);
    for (uint32_t i = 0; i < w->body_high; i++) {
        const ls_body *b = &w->bodies[i];
        if (!b->alive) {
            continue;
        }
        ls_hasher_put_u32(h, i);
        ls_hasher_put_u32(h, b->generation);
        ls_hasher_put_u32(h, (uint32_t)b->type | (b->asleep ? 0x100u : 0u));
        ls_hasher_put_vec3(h, b->p);
        ls_hasher_put_quat(h, b->q);
        ls_hasher_put_vec3(h, b->linear_velocity);
        ls_hasher_put_vec3(h, b->angular_velocity);
        ls_hasher_put_fx(h, b->sleep_timer);
        // The body's shapes in chain (creation) order: id, kind and pose in the body.
        ls_hasher_put_u32(h, b->shape_count);
        for (uint32_t k = b->shape_head; k != UINT32_MAX; k = w->shapes[k].next) {
            const ls_shape *s = &w->shapes[k];
            ls_hasher_put_u32(h, k);
            ls_hasher_put_u32(h, s->generation);
            ls_hasher_put_u32(h, (uint32_t)s->geom.kind);
            ls_hasher_put_vec3(h, s->local_p);
            ls_hasher_put_quat(h, s->local_q);
        }
    }
}

// ---- Restore checks ----

// Creation ranges (SPEC.md §5) of what a live body's geometry and material may
// hold. A snapshot is input: a keyframe from a stranger's replay must not
// reach the broad phase's box invariant (min <= max) or any other assert.
static bool in(ls_fx v, ls_fx lo, ls_fx hi)
{
    return v >= lo && v <= hi;
}

static bool quat_unit(ls_quat q)
{
    return ls_quat_is_stored_unit(q);
}

static const char *body_problem(const ls_body *b)
{
    const ls_mat3 *m = &b->inv_inertia;
    if (!ls_state_vec_ok_(b->p) || !ls_state_vec_ok_(b->linear_velocity) ||
        !ls_state_vec_ok_(b->angular_velocity) || !ls_state_vec_ok_(b->force) ||
        !ls_state_vec_ok_(b->torque) || !ls_state_vec_ok_(b->com_local) ||
        !ls_state_vec_ok_(m->row[0]) || !ls_state_vec_ok_(m->row[1]) ||
        !ls_state_vec_ok_(m->row[2])) {
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
    if (!ls_state_vec_ok_(s->local_p) || !ls_state_vec_ok_(s->geom.half_extents) ||
        !ls_state_vec_ok_(s->geom.normal) || !ls_state_fx_ok_(s->geom.radius) ||
        !ls_state_fx_ok_(s->geom.half_height) || !ls_state_fx_ok_(s->geom.plane_d)) {
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
const char *ls_body_state_problem_(ls_world *w, uint32_t *where)
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
    return NULL;
}
