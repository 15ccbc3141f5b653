// SPDX-License-Identifier: MIT
// Bodies: creation with range validation (SPEC.md §5), mass properties, ids,
// accessors and the calls that change a body from outside the step.
#include "../../../core/src/error_field.h"
#include "../collision/collide.h"
#include "../collision/shape_kind.h"
#include "../world/query_tree.h"
#include "../world/world_internal.h"
#include "joint.h"
#include "ls/fx_text.h"
#include "mass.h"

#include <stdio.h>
#include <string.h>

ls_shape_def ls_default_shape_def(void)
{
    ls_shape_def d;
    memset(&d, 0, sizeof d);
    d.type = LS_SHAPE_BOX;
    d.radius = LS_FX_INT(1) / 2;
    d.half_extents = ls_vec3_make(LS_FX_INT(1) / 2, LS_FX_INT(1) / 2, LS_FX_INT(1) / 2);
    d.normal = ls_vec3_make(0, LS_FX_INT(1), 0);
    d.friction = 39322; // 0.6
    d.restitution = 0;
    d.density = LS_FX_INT(1000);
    d.category = 1;
    d.mask = UINT32_MAX;
    d.local_orientation = ls_quat_identity();
    d.cookie = LS_DEF_COOKIE;
    return d;
}

ls_body_def ls_default_body_def(void)
{
    ls_body_def d;
    memset(&d, 0, sizeof d);
    d.type = LS_BODY_DYNAMIC;
    d.orientation = ls_quat_identity();
    d.allow_sleep = true;
    d.awake = true;
    d.shape = ls_default_shape_def();
    d.cookie = LS_DEF_COOKIE;
    return d;
}

ls_body *ls_world_body_(const ls_world *w, ls_body_id id)
{
    if (id.index1 == 0 || id.index1 > w->body_high) {
        return NULL;
    }
    ls_body *b = &w->bodies[id.index1 - 1];
    return b->alive && b->generation == id.generation ? b : NULL;
}

ls_body_id ls_world_id_of_(const ls_world *w, uint32_t i)
{
    ls_body_id id = {i + 1, w->bodies[i].generation};
    return id;
}

bool ls_body_is_valid(const ls_world *w, ls_body_id id)
{
    return ls_world_body_(w, id) != NULL;
}

uint32_t ls_world_body_count(const ls_world *w)
{
    return w->body_count;
}

ls_body_id ls_world_body_at(const ls_world *w, uint32_t index)
{
    ls_body_id none = {0, 0};
    if (index >= w->body_high || !w->bodies[index].alive) {
        return none;
    }
    return ls_world_id_of_(w, index);
}

void ls_shape_update_xf_(ls_shape *s, const ls_body *b)
{
    if (s->local_identity) {
        s->xf = b->xf; // a body of one centred shape: no rounding added
        return;
    }
    s->xf.p = ls_vec3_add(b->xf.p, ls_mat3_mul_vec(b->xf.r, s->local_p));
    s->xf.q = ls_quat_normalize(ls_quat_mul(b->q, s->local_q));
    s->xf.r = ls_mat3_from_quat(s->xf.q);
}

void ls_body_update_derived_(ls_world *w, ls_body *b)
{
    ls_body_update_pose_(w, b);
    ls_query_tree_invalidate_(w->qt); // queries see the new pose
}

void ls_body_update_pose_(const ls_world *w, ls_body *b)
{
    b->xf = ls_xform_make_(b->p, b->q);
    if (b->type == LS_BODY_DYNAMIC && b->inertia_diagonal) {
        ls_vec3 d =
            ls_vec3_make(b->inv_inertia.row[0].x, b->inv_inertia.row[1].y, b->inv_inertia.row[2].z);
        b->inv_inertia_world = ls_mat3_rotate_diag(b->xf.r, d);
    } else if (b->type == LS_BODY_DYNAMIC) {
        b->inv_inertia_world =
            ls_mat3_mul(ls_mat3_mul(b->xf.r, b->inv_inertia), ls_mat3_transpose(b->xf.r));
    } else {
        memset(&b->inv_inertia_world, 0, sizeof b->inv_inertia_world);
    }
    for (uint32_t k = b->shape_head; k != UINT32_MAX; k = w->shapes[k].next) {
        ls_shape_update_xf_(&w->shapes[k], b);
    }
    b->proxy_dirty = true;
}

// The farthest corner from the centre of mass of a shape's box in the body frame.
static ls_fx shape_reach(const ls_shape *s)
{
    ls_xform local = ls_xform_make_(s->local_p, s->local_q);
    ls_aabb box = ls_geom_aabb_(&s->geom, &local, 0);
    ls_vec3 far = ls_vec3_make(ls_fx_max(ls_fx_abs(box.min.x), ls_fx_abs(box.max.x)),
                               ls_fx_max(ls_fx_abs(box.min.y), ls_fx_abs(box.max.y)),
                               ls_fx_max(ls_fx_abs(box.min.z), ls_fx_abs(box.max.z)));
    return ls_vec3_len(far);
}

void ls_body_update_thickness_(ls_world *w, ls_body *b)
{
    b->thickness = LS_FX_MAX;
    b->extent = 0;
    for (uint32_t k = b->shape_head; k != UINT32_MAX; k = w->shapes[k].next) {
        const ls_shape_kind *kind = ls_shape_kind_of(w->shapes[k].geom.kind);
        if (kind->thickness) {
            b->thickness = ls_fx_min(b->thickness, kind->thickness(&w->shapes[k].geom));
        }
        if (b->type != LS_BODY_STATIC) {
            b->extent = ls_fx_max(b->extent, shape_reach(&w->shapes[k]));
        }
    }
}

void ls_body_wake_(ls_body *b)
{
    b->asleep = false;
    b->sleep_timer = 0;
}

// Fills err (may be NULL) naming the field and the offending value (exact
// decimal); returns false so checks read `return fail(...)`.
static bool fail(ls_error *err, ls_result code, const char *field, const char *what, ls_fx v)
{
    char text[LS_FX_TEXT_MAX];
    ls_fx_format(v, text);
    ls_error_set_field_(err, code, field, "%s (got %s)", what, text);
    return false;
}

// As fail, for problems that have no value to show.
static bool fail_plain(ls_error *err, ls_result code, const char *field, const char *what)
{
    ls_error_set_field_(err, code, field, "%s", what);
    return false;
}

// The magnitude of a vector whose squared length (Q32) is sq, saturated to the Q16.16 range.
static ls_fx magnitude(uint64_t sq)
{
    uint64_t r = ls_isqrt64(sq); // Q16
    return r > (uint64_t)LS_FX_MAX ? LS_FX_MAX : (ls_fx)r;
}

// Names the first component of v outside lo..hi, so a message can say which.
static bool vec_out_of(ls_vec3 v, ls_fx lo, ls_fx hi, char *which, ls_fx *value)
{
    const ls_fx c[3] = {v.x, v.y, v.z};
    for (int k = 0; k < 3; k++) {
        if (c[k] < lo || c[k] > hi) {
            *which = (char)('x' + k);
            *value = c[k];
            return true;
        }
    }
    return false;
}

static bool fail_component(ls_error *err, const char *field, char which, const char *range, ls_fx v)
{
    char what[96], name[LS_ERROR_FIELD_MAX];
    snprintf(what, sizeof what, "%s.%c outside %s", field, which, range);
    snprintf(name, sizeof name, "%s.%c", field, which);
    return fail(err, LS_ERR_OUT_OF_RANGE, name, what, v);
}

static ls_geom geom_from_def(const ls_shape_def *s)
{
    ls_geom g;
    memset(&g, 0, sizeof g);
    g.kind = s->type;
    g.radius = s->radius;
    g.half_height = s->half_height;
    g.half_extents = s->half_extents;
    g.normal = ls_vec3_normalize(s->normal, ls_vec3_make(0, LS_FX_ONE, 0));
    g.plane_d = s->plane_d;
    g.hull = s->type == LS_SHAPE_HULL ? (const struct ls_hull *)s->hull : NULL;
    g.mesh = s->type == LS_SHAPE_MESH ? (const struct ls_mesh *)s->mesh : NULL;
    return g;
}

static bool check_shape(const ls_body_def *d, const ls_shape_def *s, ls_error *err)
{
    ls_result R = LS_ERR_OUT_OF_RANGE;
    const ls_shape_kind *kind = ls_shape_kind_of(s->type);
    if (!kind) {
        return fail_plain(err, LS_ERR_INVALID_ARGUMENT, "shape.type", "unknown shape type");
    }
    if (kind->static_only && d->type != LS_BODY_STATIC) {
        char what[64];
        snprintf(what, sizeof what, "a %s must be on a static body", kind->name);
        return fail_plain(err, LS_ERR_INVALID_ARGUMENT, "type", what);
    }
    ls_geom g = geom_from_def(s);
    if (!kind->check(&g, err)) {
        return false;
    }
    if (s->friction < 0 || s->friction > LS_FX_INT(4)) {
        return fail(err, R, "shape.friction", "shape.friction outside 0..4", s->friction);
    }
    if (s->restitution < 0 || s->restitution > LS_FX_INT(1)) {
        return fail(err, R, "shape.restitution", "shape.restitution outside 0..1", s->restitution);
    }
    char which;
    ls_fx bad;
    if (vec_out_of(s->local_position, -LS_FX_INT(64), LS_FX_INT(64), &which, &bad)) {
        return fail_component(err, "shape.local_position", which, "+-64 m", bad);
    }
    return true;
}

static bool check_body(const ls_body_def *d, ls_error *err)
{
    ls_result R = LS_ERR_OUT_OF_RANGE;
    if (d->type > LS_BODY_DYNAMIC) {
        return fail_plain(err, LS_ERR_INVALID_ARGUMENT, "type", "unknown body type");
    }
    char which;
    ls_fx bad;
    if (vec_out_of(d->position, -LS_FX_INT(2048), LS_FX_INT(2048), &which, &bad)) {
        return fail_component(err, "position", which, "+-2048 m", bad);
    }
    uint64_t v2 = ls_vec3_len_sq_q32(d->linear_velocity);
    if (v2 > (uint64_t)LS_FX_INT(512) * (uint64_t)LS_FX_INT(512)) {
        return fail(err, R, "linear_velocity", "linear_velocity faster than 512 m/s",
                    magnitude(v2));
    }
    uint64_t w2 = ls_vec3_len_sq_q32(d->angular_velocity);
    if (w2 > (uint64_t)LS_FX_INT(128) * (uint64_t)LS_FX_INT(128)) {
        return fail(err, R, "angular_velocity", "angular_velocity faster than 128 rad/s",
                    magnitude(w2));
    }
    if (d->linear_damping < 0 || d->linear_damping > LS_FX_ONE) {
        return fail(err, R, "linear_damping", "linear_damping outside 0..1", d->linear_damping);
    }
    if (d->angular_damping < 0 || d->angular_damping > LS_FX_ONE) {
        return fail(err, R, "angular_damping", "angular_damping outside 0..1", d->angular_damping);
    }
    if (d->shape_count > LS_BODY_MAX_SHAPES || (d->shape_count > 0 && !d->shapes)) {
        return fail_plain(err, LS_ERR_INVALID_ARGUMENT, "shape_count",
                          "shape_count above LS_BODY_MAX_SHAPES (64), or shapes is NULL");
    }
    uint32_t n = d->shape_count ? d->shape_count : 1;
    for (uint32_t k = 0; k < n; k++) {
        if (!check_shape(d, d->shape_count ? &d->shapes[k] : &d->shape, err)) {
            if (err && n > 1) {
                char msg[LS_ERROR_MESSAGE_MAX];
                memcpy(msg, err->message, sizeof msg);
                snprintf(err->message, sizeof err->message, "shape %u: %.200s", k, msg);
            }
            return false;
        }
    }
    return true;
}

static uint32_t take_slot(ls_world *w)
{
    if (w->free_head != UINT32_MAX) {
        uint32_t i = w->free_head;
        w->free_head = w->next_free[i];
        return i;
    }
    return w->body_high < w->def.max_bodies ? w->body_high++ : UINT32_MAX;
}

static uint32_t take_shape_slot(ls_world *w)
{
    if (w->shape_free_head != UINT32_MAX) {
        uint32_t i = w->shape_free_head;
        w->shape_free_head = w->shape_next_free[i];
        return i;
    }
    return w->shape_high < w->def.max_shapes ? w->shape_high++ : UINT32_MAX;
}

static void free_shape_slot(ls_world *w, uint32_t i)
{
    w->shapes[i].alive = false;
    w->shape_next_free[i] = w->shape_free_head;
    w->shape_free_head = i;
    w->shape_count--;
    ls_broadphase_remove_(w->bp, i);
    ls_query_tree_invalidate_(w->qt);
}

static uint32_t free_shape_slots(const ls_world *w)
{
    uint32_t n = w->def.max_shapes - w->shape_high;
    for (uint32_t i = w->shape_free_head; i != UINT32_MAX; i = w->shape_next_free[i]) {
        n++;
    }
    return n;
}

ls_body_id ls_body_create(ls_world *w, const ls_body_def *def, ls_error *err)
{
    if (ls_world_locked_(w, err)) {
        return (ls_body_id){0, 0};
    }
    ls_body_id none = {0, 0};
    if (!w || !def) {
        ls_error_set(err, LS_ERR_INVALID_ARGUMENT, "no world or no body definition");
        return none;
    }
    if (ls_def_missing_(def->cookie, "body_def", err)) {
        return none;
    }
    for (uint32_t k = 0; k < (def->shape_count ? def->shape_count : 1); k++) {
        const ls_shape_def *sd =
            def->shape_count ? (def->shapes ? &def->shapes[k] : NULL) : &def->shape;
        if (sd && ls_def_missing_(sd->cookie, "shape_def", err)) {
            return none;
        }
    }
    if (!check_body(def, err)) {
        return none;
    }
    const ls_shape_def *defs = def->shape_count ? def->shapes : &def->shape;
    uint32_t n = def->shape_count ? def->shape_count : 1;
    // Shapes use the world's own copies of hull and mesh data.
    ls_geom geoms[LS_BODY_MAX_SHAPES];
    uint32_t geometry[LS_BODY_MAX_SHAPES];
    ls_mass_part parts[LS_BODY_MAX_SHAPES];
    for (uint32_t k = 0; k < n; k++) {
        geoms[k] = geom_from_def(&defs[k]);
        geometry[k] = UINT32_MAX;
        if (ls_shape_kind_of(defs[k].type)->needs_data) {
            geometry[k] = ls_world_geometry_add_(w, &geoms[k], err);
            if (geometry[k] == UINT32_MAX) {
                return none;
            }
            ls_world_geometry_bind_(w, &geoms[k], geometry[k]);
        }
        parts[k].geom = &geoms[k];
        parts[k].density = defs[k].density;
        parts[k].position = defs[k].local_position;
        parts[k].orientation = ls_quat_normalize(defs[k].local_orientation);
    }
    ls_mass_props mp;
    memset(&mp, 0, sizeof mp);
    if (def->type == LS_BODY_DYNAMIC && ls_mass_compute_(parts, n, &mp, err) != LS_OK) {
        return none;
    }
    if (free_shape_slots(w) < n) {
        ls_error_set(err, LS_ERR_CAPACITY, "the world is full: max_shapes is %u",
                     w->def.max_shapes);
        return none;
    }
    uint32_t i = take_slot(w);
    if (i == UINT32_MAX) {
        ls_error_set(err, LS_ERR_CAPACITY, "the world is full: max_bodies is %u",
                     w->def.max_bodies);
        return none;
    }
    ls_body *b = &w->bodies[i];
    uint32_t gen = b->generation + 1;
    memset(b, 0, sizeof *b);
    b->generation = gen;
    b->alive = true;
    b->type = (uint8_t)def->type;
    b->allow_sleep = def->allow_sleep;
    b->asleep = def->type == LS_BODY_DYNAMIC && !def->awake && def->allow_sleep;
    b->bullet = def->bullet;
    b->q = ls_quat_normalize(def->orientation);
    b->com_local = mp.center;
    b->p = ls_vec3_equal(mp.center, ls_vec3_zero())
               ? def->position
               : ls_vec3_add(def->position, ls_mat3_mul_vec(ls_mat3_from_quat(b->q), mp.center));
    b->linear_velocity = def->type == LS_BODY_STATIC ? ls_vec3_zero() : def->linear_velocity;
    b->angular_velocity = def->type == LS_BODY_STATIC ? ls_vec3_zero() : def->angular_velocity;
    b->lin_damp = def->linear_damping;
    b->ang_damp = def->angular_damping;
    b->mass = mp.mass;
    b->inv_mass = mp.inv_mass;
    b->inv_inertia = mp.inv_inertia;
    b->inertia_diagonal = ls_body_inertia_is_diagonal_(b);
    b->user_data = def->user_data;
    b->shape_head = UINT32_MAX;
    b->shape_count = n;
    uint32_t prev = UINT32_MAX;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t si = take_shape_slot(w);
        ls_shape *s = &w->shapes[si];
        uint32_t sgen = s->generation + 1;
        memset(s, 0, sizeof *s);
        s->generation = sgen;
        s->alive = true;
        s->body = i;
        s->next = UINT32_MAX;
        s->geometry = geometry[k];
        s->geom = geoms[k];
        s->local_p = ls_vec3_sub(parts[k].position, mp.center);
        s->local_q = parts[k].orientation;
        s->friction = defs[k].friction;
        s->restitution = defs[k].restitution;
        s->density = defs[k].density;
        s->category = defs[k].category;
        s->mask = defs[k].mask;
        s->local_identity = ls_shape_local_identity_(s);
        if (prev == UINT32_MAX) {
            b->shape_head = si;
        } else {
            w->shapes[prev].next = si;
        }
        prev = si;
        w->shape_count++;
    }
    ls_body_update_derived_(w, b);
    ls_body_update_thickness_(w, b);
    ls_body_update_gyro_(b);
    w->body_count++;
    ls_error_clear(err);
    return ls_world_id_of_(w, i);
}

// Wake every body touching body slot i (support may have disappeared).
static void wake_touching(ls_world *w, uint32_t i)
{
    for (uint32_t c = 0; c < w->contact_count; c++) {
        const ls_contact *ct = &w->contacts[c];
        if (ct->a == i || ct->b == i) {
            ls_body_wake_(&w->bodies[ct->a == i ? ct->b : ct->a]);
        }
    }
}

// Move the contacts [from, from + n) down to keep (keep <= from).
static void move_contacts(ls_world *w, uint32_t keep, uint32_t from, uint32_t n)
{
    if (keep != from && n > 0) {
        memmove(&w->contacts[keep], &w->contacts[from], n * sizeof(ls_contact));
    }
}

ls_result ls_body_destroy(ls_world *w, ls_body_id id)
{
    if (ls_world_locked_(w, NULL)) {
        return LS_ERR_LOCKED;
    }
    ls_body *b = ls_world_body_(w, id);
    if (!b) {
        return LS_ERR_INVALID_ID;
    }
    uint32_t i = id.index1 - 1;
    ls_joint_destroy_of_body_(w, i); // its joints (they wake the other bodies)
    // One pass over the contacts: each one touching i wakes the other body
    // (its support may have gone) and is dropped, so no step sees a dead
    // body. Waking only clears the flags, so it may follow the joints'.
    // Why the kept contacts move by runs: a contact is a few hundred bytes,
    // and rain destroys hundreds of bodies in one tick among thousands of
    // contacts, most of them before the first one dropped: nothing moves
    // until then, and then each run of kept contacts moves with one memmove
    // instead of contact by contact.
    uint32_t keep = 0, from = 0, n = w->contact_count;
    for (uint32_t c = 0; c < n; c++) {
        const ls_contact *ct = &w->contacts[c];
        if (ct->a != i && ct->b != i) {
            continue;
        }
        ls_body_wake_(&w->bodies[ct->a == i ? ct->b : ct->a]);
        move_contacts(w, keep, from, c - from); // below c: ct is not moved
        keep += c - from;
        from = c + 1;
    }
    move_contacts(w, keep, from, n - from);
    w->contact_count = keep + (n - from);
    for (uint32_t k = b->shape_head; k != UINT32_MAX;) {
        uint32_t next = w->shapes[k].next;
        free_shape_slot(w, k);
        k = next;
    }
    b->alive = false;
    w->next_free[i] = w->free_head;
    w->free_head = i;
    w->body_count--;
    return LS_OK;
}

// The getters below are for ids the caller knows are live: a stale or destroyed
// id is a programming error and asserts (SPEC.md §19). ls_body_get_state is the
// checked form that returns LS_ERR_INVALID_ID instead.
static const ls_body *live_body(const ls_world *w, ls_body_id id)
{
    const ls_body *b = ls_world_body_(w, id);
    LS_ASSERT(b != NULL && "stale or destroyed body id");
    return b;
}

#define BODY_GET(type, name, expr, fallback)                                                       \
    type name(const ls_world *w, ls_body_id id)                                                    \
    {                                                                                              \
        const ls_body *b = live_body(w, id);                                                       \
        return b ? (expr) : (fallback);                                                            \
    }

BODY_GET(ls_vec3, ls_body_position, b->p, ls_vec3_zero())
BODY_GET(ls_quat, ls_body_orientation, b->q, ls_quat_identity())
BODY_GET(ls_vec3, ls_body_linear_velocity, b->linear_velocity, ls_vec3_zero())
BODY_GET(ls_vec3, ls_body_angular_velocity, b->angular_velocity, ls_vec3_zero())
BODY_GET(ls_fx, ls_body_mass, b->mass, 0)
BODY_GET(ls_body_type, ls_body_type_of, (ls_body_type)b->type, LS_BODY_STATIC)
BODY_GET(bool, ls_body_is_asleep, b->asleep, false)
BODY_GET(uint64_t, ls_body_user_data, b->user_data, 0)

// The public description of shape slot k (local pose from the body origin).
static ls_shape_def shape_of(const ls_world *w, const ls_body *b, uint32_t k)
{
    const ls_shape *sh = &w->shapes[k];
    ls_shape_def s;
    memset(&s, 0, sizeof s);
    s.type = sh->geom.kind;
    s.radius = sh->geom.radius;
    s.half_height = sh->geom.half_height;
    s.half_extents = sh->geom.half_extents;
    s.normal = sh->geom.normal;
    s.plane_d = sh->geom.plane_d;
    s.friction = sh->friction;
    s.restitution = sh->restitution;
    s.density = sh->density;
    s.category = sh->category;
    s.mask = sh->mask;
    s.local_position = ls_vec3_add(sh->local_p, b->com_local);
    s.local_orientation = sh->local_q;
    s.hull = (const ls_hull *)sh->geom.hull;
    s.mesh = (const ls_mesh *)sh->geom.mesh;
    s.cookie = LS_DEF_COOKIE; // a def the caller may pass back to ls_body_create
    return s;
}

// Slot of shape k (< shape_count) of body b.
static uint32_t nth_shape(const ls_world *w, const ls_body *b, uint32_t k)
{
    uint32_t s = b->shape_head;
    while (k-- > 0 && s != UINT32_MAX) {
        s = w->shapes[s].next;
    }
    return s;
}

ls_shape_def ls_body_shape(const ls_world *w, ls_body_id id)
{
    const ls_body *b = live_body(w, id);
    return shape_of(w, b, b->shape_head);
}

uint32_t ls_body_shape_count(const ls_world *w, ls_body_id id)
{
    return live_body(w, id)->shape_count;
}

ls_shape_def ls_body_shape_at(const ls_world *w, ls_body_id id, uint32_t k)
{
    const ls_body *b = live_body(w, id);
    LS_ASSERT(k < b->shape_count && "shape index out of range");
    return shape_of(w, b, nth_shape(w, b, k));
}

ls_shape_id ls_world_shape_id_of_(const ls_world *w, uint32_t i)
{
    ls_shape_id id = {i + 1, w->shapes[i].generation};
    return id;
}

ls_shape_id ls_body_shape_id(const ls_world *w, ls_body_id id, uint32_t k)
{
    const ls_body *b = live_body(w, id);
    LS_ASSERT(k < b->shape_count && "shape index out of range");
    return ls_world_shape_id_of_(w, nth_shape(w, b, k));
}

ls_result ls_shape_get_transform(const ls_world *w, ls_shape_id id, ls_vec3 *position,
                                 ls_quat *orientation)
{
    if (!w || id.index1 == 0 || id.index1 > w->shape_high) {
        return LS_ERR_INVALID_ID;
    }
    const ls_shape *s = &w->shapes[id.index1 - 1];
    if (!s->alive || s->generation != id.generation) {
        return LS_ERR_INVALID_ID;
    }
    *position = s->xf.p;
    *orientation = s->xf.q;
    return LS_OK;
}

ls_result ls_body_get_state(const ls_world *w, ls_body_id id, ls_body_state *out, ls_error *err)
{
    const ls_body *b = w ? ls_world_body_(w, id) : NULL;
    if (!b) {
        return ls_error_set(err, LS_ERR_INVALID_ID,
                            "body id %u (generation %u) is stale, destroyed or was never created",
                            id.index1, id.generation);
    }
    out->type = (ls_body_type)b->type;
    out->position = b->p;
    out->orientation = b->q;
    out->linear_velocity = b->linear_velocity;
    out->angular_velocity = b->angular_velocity;
    out->mass = b->mass;
    out->asleep = b->asleep;
    out->user_data = b->user_data;
    out->shape = shape_of(w, b, b->shape_head);
    out->shape_count = b->shape_count;
    out->origin = ls_vec3_sub(b->p, ls_mat3_mul_vec(b->xf.r, b->com_local));
    ls_error_clear(err);
    return LS_OK;
}

ls_result ls_body_set_transform(ls_world *w, ls_body_id id, ls_vec3 position, ls_quat orientation)
{
    if (ls_world_locked_(w, NULL)) {
        return LS_ERR_LOCKED;
    }
    ls_body *b = ls_world_body_(w, id);
    if (!b) {
        return LS_ERR_INVALID_ID;
    }
    b->p = position;
    b->q = ls_quat_normalize(orientation);
    ls_body_update_derived_(w, b);
    ls_body_wake_(b);
    wake_touching(w, id.index1 - 1);
    return LS_OK;
}

ls_result ls_body_set_velocity(ls_world *w, ls_body_id id, ls_vec3 linear, ls_vec3 angular)
{
    if (ls_world_locked_(w, NULL)) {
        return LS_ERR_LOCKED;
    }
    ls_body *b = ls_world_body_(w, id);
    if (!b) {
        return LS_ERR_INVALID_ID;
    }
    // The creation limits (SPEC.md §5): a kinematic body is never clamped by
    // the solver, and its velocity enters every sweep.
    if (ls_vec3_len_sq_q32(linear) > (uint64_t)LS_FX_INT(512) * (uint64_t)LS_FX_INT(512) ||
        ls_vec3_len_sq_q32(angular) > (uint64_t)LS_FX_INT(128) * (uint64_t)LS_FX_INT(128)) {
        return LS_ERR_OUT_OF_RANGE;
    }
    if (b->type != LS_BODY_STATIC) {
        b->linear_velocity = linear;
        b->angular_velocity = angular;
        ls_body_wake_(b);
    }
    return LS_OK;
}

ls_result ls_body_apply_force(ls_world *w, ls_body_id id, ls_vec3 force)
{
    if (ls_world_locked_(w, NULL)) {
        return LS_ERR_LOCKED;
    }
    ls_body *b = ls_world_body_(w, id);
    if (!b) {
        return LS_ERR_INVALID_ID;
    }
    if (b->type == LS_BODY_DYNAMIC) {
        b->force = ls_vec3_add(b->force, force);
        ls_body_wake_(b);
    }
    return LS_OK;
}

ls_result ls_body_apply_torque(ls_world *w, ls_body_id id, ls_vec3 torque)
{
    if (ls_world_locked_(w, NULL)) {
        return LS_ERR_LOCKED;
    }
    ls_body *b = ls_world_body_(w, id);
    if (!b) {
        return LS_ERR_INVALID_ID;
    }
    if (b->type == LS_BODY_DYNAMIC) {
        b->torque = ls_vec3_add(b->torque, torque);
        ls_body_wake_(b);
    }
    return LS_OK;
}

ls_result ls_body_apply_impulse(ls_world *w, ls_body_id id, ls_vec3 impulse, ls_vec3 point)
{
    if (ls_world_locked_(w, NULL)) {
        return LS_ERR_LOCKED;
    }
    ls_body *b = ls_world_body_(w, id);
    if (!b) {
        return LS_ERR_INVALID_ID;
    }
    if (b->type == LS_BODY_DYNAMIC) {
        b->linear_velocity = ls_vec3_mad(b->linear_velocity, impulse, b->inv_mass);
        ls_vec3 r = ls_vec3_sub(point, b->p);
        b->angular_velocity = ls_vec3_add(
            b->angular_velocity, ls_mat3_mul_vec(b->inv_inertia_world, ls_vec3_cross(r, impulse)));
        ls_body_wake_(b);
    }
    return LS_OK;
}

ls_result ls_body_wake(ls_world *w, ls_body_id id)
{
    if (ls_world_locked_(w, NULL)) {
        return LS_ERR_LOCKED;
    }
    ls_body *b = ls_world_body_(w, id);
    if (!b) {
        return LS_ERR_INVALID_ID;
    }
    if (b->type == LS_BODY_DYNAMIC) {
        ls_body_wake_(b);
    }
    return LS_OK;
}
