// SPDX-License-Identifier: MIT
// World checksum (SPEC.md §12) and snapshots (SPEC.md §13). Both walk bodies in
// slot order and write each field little-endian; nothing hashes or copies raw
// structs, so padding and byte order never leak in.
#include "ls/checksum.h"
#include "world_internal.h"

#include <string.h>

#define SNAP_MAGIC   0x4E53534Cu // "LSSN"
#define SNAP_VERSION 1u

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
        ls_hasher_put_vec3(&h, b->v);
        ls_hasher_put_vec3(&h, b->w);
        ls_hasher_put_fx(&h, b->sleep_timer);
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

static void io_flags(cursor *c, bool save, ls_body *b)
{
    uint32_t f = (uint32_t)b->alive | (uint32_t)b->allow_sleep << 1 | (uint32_t)b->asleep << 2 |
                 (uint32_t)b->type << 8 | (uint32_t)b->geom.kind << 16;
    io32(c, save, &f);
    if (!save && (f & ~0x00030307u) != 0) {
        c->ok = false; // bits a world never writes: refused, so restore-save is the identity
    }
    b->alive = f & 1u;
    b->allow_sleep = (f >> 1) & 1u;
    b->asleep = (f >> 2) & 1u;
    b->type = (uint8_t)((f >> 8) & 3u);
    b->geom.kind = (ls_shape_type)((f >> 16) & 3u);
}

static void io_body(cursor *c, bool save, ls_body *b)
{
    io32(c, save, &b->generation);
    io_flags(c, save, b);
    io_vec3(c, save, &b->p);
    io32(c, save, &b->q.x);
    io32(c, save, &b->q.y);
    io32(c, save, &b->q.z);
    io32(c, save, &b->q.w);
    io_vec3(c, save, &b->v);
    io_vec3(c, save, &b->w);
    io_vec3(c, save, &b->force);
    io_vec3(c, save, &b->torque);
    ls_fx *scalars[] = {&b->sleep_timer,      &b->lin_damp,    &b->ang_damp,    &b->mass,
                        &b->inv_mass,         &b->friction,    &b->restitution, &b->geom.radius,
                        &b->geom.half_height, &b->geom.plane_d};
    for (size_t k = 0; k < sizeof scalars / sizeof scalars[0]; k++) {
        io32(c, save, scalars[k]);
    }
    io_vec3(c, save, &b->inv_inertia);
    io_vec3(c, save, &b->geom.offset);
    io_vec3(c, save, &b->geom.half_extents);
    io_vec3(c, save, &b->geom.normal);
    io32(c, save, &b->category);
    io32(c, save, &b->mask);
    io_u64(c, save, &b->user_data);
}

static void io_contact(cursor *c, bool save, ls_contact *ct)
{
    io32(c, save, &ct->a);
    io32(c, save, &ct->b);
    io_vec3(c, save, &ct->m.normal);
    io32(c, save, &ct->m.count);
    for (int i = 0; i < LS_MANIFOLD_MAX; i++) {
        io_vec3(c, save, &ct->m.points[i].point);
        io32(c, save, &ct->m.points[i].depth);
        io32(c, save, &ct->m.points[i].feature);
        io32(c, save, &ct->normal_impulse[i]);
        io32(c, save, &ct->tangent_impulse[i][0]);
        io32(c, save, &ct->tangent_impulse[i][1]);
    }
}

// The whole state, in the order of SPEC.md §13. Restore validates counts
// before using them, so a corrupt buffer is refused instead of read past.
static bool io_world(cursor *c, bool save, ls_world *w)
{
    uint32_t magic = SNAP_MAGIC, version = SNAP_VERSION, max_b = w->def.max_bodies;
    io32(c, save, &magic);
    io32(c, save, &version);
    io32(c, save, &max_b);
    if (!save && (magic != SNAP_MAGIC || version != SNAP_VERSION || max_b != w->def.max_bodies)) {
        return false;
    }
    io32(c, save, &w->tick);
    io_u64(c, save, &w->rng.state);
    io_u64(c, save, &w->rng.inc);
    io32(c, save, &w->body_high);
    io32(c, save, &w->body_count);
    io32(c, save, &w->free_head);
    io32(c, save, &w->contact_count);
    io32(c, save, &w->info.overflow_count);
    io32(c, save, &w->info.overflow_tick);
    io32(c, save, &w->info.overflow_body.index1);
    io32(c, save, &w->info.overflow_body.generation);
    if (!c->ok || w->body_high > w->def.max_bodies || w->contact_count > w->def.max_contacts) {
        return false;
    }
    for (uint32_t i = 0; i < w->body_high && c->ok; i++) {
        io_body(c, save, &w->bodies[i]);
        io32(c, save, &w->next_free[i]);
    }
    for (uint32_t i = 0; i < w->contact_count && c->ok; i++) {
        io_contact(c, save, &w->contacts[i]);
    }
    return c->ok;
}

size_t ls_world_snapshot_size(const ls_world *w)
{
    cursor c = {NULL, NULL, 0, SIZE_MAX, true};
    io_world(&c, true, (ls_world *)w); // counting pass: writes nothing
    return c.pos;
}

size_t ls_world_snapshot_save(const ls_world *w, uint8_t *buf, size_t size)
{
    cursor c = {buf, NULL, 0, size, true};
    return io_world(&c, true, (ls_world *)w) ? c.pos : 0;
}

// Creation ranges (SPEC.md §5) of what a live body's geometry and material may
// hold. A snapshot is input: a keyframe from a stranger's replay must not
// reach the broad phase's box invariant (min <= max) or any other assert.
#define GEOM_MIN_RAW 3277 // 0.05 m
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

static const char *body_problem(const ls_body *b)
{
    const ls_fx big = LS_FX_INT(64);
    if (!vec_ok(b->p) || !vec_ok(b->v) || !vec_ok(b->w) || !vec_ok(b->force) ||
        !vec_ok(b->torque) || !fx_ok(b->q.x) || !fx_ok(b->q.y) || !fx_ok(b->q.z) ||
        !fx_ok(b->q.w) || !vec_ok(b->geom.offset) || !vec_ok(b->geom.normal) ||
        !fx_ok(b->geom.plane_d)) {
        return "fixed-point word 0x80000000 (never written by a world)";
    }
    if (b->type > LS_BODY_DYNAMIC || (uint32_t)b->geom.kind > LS_SHAPE_PLANE) {
        return "body type or shape kind";
    }
    switch (b->geom.kind) {
    case LS_SHAPE_SPHERE:
        if (!in(b->geom.radius, GEOM_MIN_RAW, big)) {
            return "sphere radius";
        }
        break;
    case LS_SHAPE_CAPSULE:
        if (!in(b->geom.radius, GEOM_MIN_RAW, big) || !in(b->geom.half_height, 0, big)) {
            return "capsule radius or half height";
        }
        break;
    case LS_SHAPE_BOX:
        if (!in(b->geom.half_extents.x, GEOM_MIN_RAW, big) ||
            !in(b->geom.half_extents.y, GEOM_MIN_RAW, big) ||
            !in(b->geom.half_extents.z, GEOM_MIN_RAW, big)) {
            return "box half extents";
        }
        break;
    case LS_SHAPE_PLANE:
        if (b->type != LS_BODY_STATIC || ls_vec3_equal(b->geom.normal, ls_vec3_zero())) {
            return "plane (not static, or zero normal)";
        }
        break;
    }
    if (!in(b->friction, 0, LS_FX_INT(4)) || !in(b->restitution, 0, LS_FX_ONE) ||
        !in(b->lin_damp, 0, LS_FX_ONE) || !in(b->ang_damp, 0, LS_FX_ONE) || b->sleep_timer < 0) {
        return "material, damping or sleep timer";
    }
    // Creation ranges of mass.c: 0.01..1000 kg, principal inertia >= 1/1024 kg m^2,
    // so inverse mass <= 100 and inverse inertia <= 1024 (raw 6553600, 2^26).
    if (b->type == LS_BODY_DYNAMIC &&
        (!in(b->mass, 655, 65536000) || !in(b->inv_mass, 1, 6553600) ||
         !in(b->inv_inertia.x, 0, 1 << 26) || !in(b->inv_inertia.y, 0, 1 << 26) ||
         !in(b->inv_inertia.z, 0, 1 << 26))) {
        return "mass or inverse inertia";
    }
    // Orientations are kept unit by §4 normalize: |q|^2 within 1 +- 1/256.
    int64_t q2 = (int64_t)b->q.x * b->q.x + (int64_t)b->q.y * b->q.y + (int64_t)b->q.z * b->q.z +
                 (int64_t)b->q.w * b->q.w;
    if (q2 < ((int64_t)1 << 32) - ((int64_t)1 << 24) ||
        q2 > ((int64_t)1 << 32) + ((int64_t)1 << 24)) {
        return "orientation (not a unit quaternion)";
    }
    return NULL;
}

// Everything restore must prove before a step may use the state; returns what
// is wrong, or NULL. Bodies, the free list (no index outside the used slots, no
// live slot, no cycle), the live count, and contacts (sorted, distinct live
// bodies, 0..4 points).
static const char *state_problem(const ls_world *w, uint32_t *where)
{
    uint32_t alive = 0;
    for (uint32_t i = 0; i < w->body_high; i++) {
        *where = i;
        if (w->bodies[i].alive) {
            alive++;
            const char *why = body_problem(&w->bodies[i]);
            if (why) {
                return why;
            }
        }
    }
    if (alive != w->body_count) {
        return "live body count";
    }
    uint32_t steps = 0;
    for (uint32_t i = w->free_head; i != UINT32_MAX; i = w->next_free[i]) {
        *where = i;
        if (i >= w->body_high || w->bodies[i].alive || ++steps > w->body_high) {
            return "free slot list";
        }
    }
    for (uint32_t i = 0; i < w->contact_count; i++) {
        const ls_contact *ct = &w->contacts[i];
        *where = i;
        if (ct->a >= ct->b || ct->b >= w->body_high || !w->bodies[ct->a].alive ||
            !w->bodies[ct->b].alive || ct->m.count < 0 || ct->m.count > LS_MANIFOLD_MAX ||
            !vec_ok(ct->m.normal)) {
            return "contact";
        }
        for (int k = 0; k < LS_MANIFOLD_MAX; k++) {
            // Normal impulses are accumulated clamped at 0; every word a real value.
            if (ct->normal_impulse[k] < 0 || !fx_ok(ct->tangent_impulse[k][0]) ||
                !fx_ok(ct->tangent_impulse[k][1]) || !vec_ok(ct->m.points[k].point) ||
                !fx_ok(ct->m.points[k].depth)) {
                return "contact impulse or point";
            }
        }
        if (i > 0 && (ct[-1].a > ct->a || (ct[-1].a == ct->a && ct[-1].b >= ct->b))) {
            return "contact order";
        }
    }
    return NULL;
}

ls_result ls_world_snapshot_restore(ls_world *w, const uint8_t *buf, size_t size, ls_error *err)
{
    // The header is checked first so a snapshot of another world says so
    // instead of "corrupt".
    if (size < 12) {
        return ls_error_set(err, LS_ERR_TRUNCATED, "snapshot of %zu bytes has no header", size);
    }
    if (ls_get_u32le(buf) != SNAP_MAGIC || ls_get_u32le(buf + 4) != SNAP_VERSION) {
        return ls_error_set(err, LS_ERR_INCOMPATIBLE,
                            "not a version %u snapshot (magic or version differs)", SNAP_VERSION);
    }
    if (ls_get_u32le(buf + 8) != w->def.max_bodies) {
        return ls_error_set(err, LS_ERR_INCOMPATIBLE,
                            "snapshot of a world with max_bodies %u restored into one with %u",
                            ls_get_u32le(buf + 8), w->def.max_bodies);
    }
    // Restore into the live world only after a dry validation would need a
    // second copy; instead, validate while reading and fail closed.
    cursor c = {NULL, buf, 0, size, true};
    uint32_t where = 0;
    const char *problem = NULL;
    if (!io_world(&c, false, w) || (problem = state_problem(w, &where)) != NULL || c.pos != size) {
        if (!problem && c.ok && c.pos != size) {
            problem = "length (bytes after the last contact)";
            where = (uint32_t)(size - c.pos);
        }
        w->body_high = w->body_count = w->contact_count = 0;
        w->free_head = UINT32_MAX;
        ls_broadphase_clear(w->bp);
        if (problem) {
            return ls_error_set(err, LS_ERR_CORRUPT,
                                "snapshot refused: %s invalid at index %u; the world is left empty",
                                problem, where);
        }
        return ls_error_set(err, LS_ERR_CORRUPT,
                            "snapshot of %zu bytes is corrupt (read failed at byte %zu); the "
                            "world is left empty",
                            size, c.pos);
    }
    ls_broadphase_clear(w->bp);
    for (uint32_t i = 0; i < w->body_high; i++) {
        if (w->bodies[i].alive) {
            ls_body_update_derived_(&w->bodies[i]);
        }
    }
    w->begin_count = w->end_count = 0;
    w->info.tick = w->tick;
    ls_error_clear(err);
    return LS_OK;
}
