// SPDX-License-Identifier: MIT
// Joints (SPEC.md §23): slots, creation with range checks, the dispatch of the
// solver hooks to the kind table, reactions, breaking and events, and the
// row helpers every kind is built from.
//
// Why one helper per row shape: every kind is a few blocks (the 3-row point
// constraint, an angular block, scalar limit/motor/spring rows); writing each
// once keeps the soft-constraint arithmetic (bias, mass scale, impulse scale,
// SPEC.md §11) in one place, and each kind's file is its rows in solve order.
//
// Determinism: joints are prepared, solved and finished in slot order (the
// solver's active list); breaking destroys in that order and reports in it;
// per-body joint lists only answer yes/no questions (collision filtering), so
// their order never matters.
#include "joint.h"
#include "../math/quat_check.h"
#include "../world/state.h"

#include "../../../core/src/error_field.h"
#include "ls/fx_text.h"

#include <stdio.h>
#include <string.h>

// ---- Kind registry ----

static const ls_joint_kind *const kinds[LS_JOINT_KIND_COUNT] = {
    &ls_joint_ball_kind_,      &ls_joint_hinge_kind_,    &ls_joint_fixed_kind_,
    &ls_joint_prismatic_kind_, &ls_joint_distance_kind_, &ls_joint_cone_kind_,
};

const ls_joint_kind *ls_joint_kind_of_(uint32_t type)
{
    return type < LS_JOINT_KIND_COUNT ? kinds[type] : NULL;
}

ls_joint_type ls_joint_kind_named_(const char *name)
{
    for (uint32_t t = 0; t < LS_JOINT_KIND_COUNT; t++) {
        if (strcmp(kinds[t]->name, name) == 0) {
            return (ls_joint_type)t;
        }
    }
    return LS_JOINT_KIND_COUNT;
}

ls_joint_def ls_default_joint_def(void)
{
    ls_joint_def d;
    memset(&d, 0, sizeof d);
    d.type = LS_JOINT_BALL;
    d.axis = ls_vec3_make(LS_FX_ONE, 0, 0);
    d.cone_angle = LS_FX_PI;
    d.twist_lower = -LS_FX_PI;
    d.twist_upper = LS_FX_PI;
    d.cookie = LS_DEF_COOKIE;
    return d;
}

// ---- Slots ----

static ls_joint *joint_of(const ls_world *w, ls_joint_id id)
{
    if (id.index1 == 0 || id.index1 > w->joint_high) {
        return NULL;
    }
    ls_joint *j = &w->joints[id.index1 - 1];
    return j->alive && j->generation == id.generation ? j : NULL;
}

static ls_joint_id id_of(const ls_world *w, uint32_t i)
{
    ls_joint_id id = {i + 1, w->joints[i].generation};
    return id;
}

static const ls_joint *live_joint(const ls_world *w, ls_joint_id id)
{
    const ls_joint *j = joint_of(w, id);
    LS_ASSERT(j != NULL && "stale or destroyed joint id");
    return j;
}

bool ls_joint_is_valid(const ls_world *w, ls_joint_id id)
{
    return joint_of(w, id) != NULL;
}

uint32_t ls_world_joint_count(const ls_world *w)
{
    return w->joint_count;
}

ls_joint_id ls_world_joint_at(const ls_world *w, uint32_t index)
{
    ls_joint_id none = {0, 0};
    return index < w->joint_high && w->joints[index].alive ? id_of(w, index) : none;
}

ls_joint_events ls_world_joint_events(const ls_world *w)
{
    ls_joint_events e = {w->joint_events,
                         w->joint_event_tick == w->tick ? w->joint_event_count : 0};
    return e;
}

// The link that follows joint k in the list of body slot `body`.
static uint32_t *next_link(ls_world *w, uint32_t k, uint32_t body)
{
    ls_joint *j = &w->joints[k];
    return j->a == body ? &j->next_a : &j->next_b;
}

// The bit of body slot `other` in a body's filter mask (body_joint_filter).
static uint32_t filter_bit(uint32_t other)
{
    return 1u << (other & 31u);
}

static void link_joint(ls_world *w, uint32_t k)
{
    ls_joint *j = &w->joints[k];
    j->next_a = w->body_joint_head[j->a];
    w->body_joint_head[j->a] = k;
    j->next_b = w->body_joint_head[j->b];
    w->body_joint_head[j->b] = k;
    if (!(j->flags & LS_JOINT_F_COLLIDE)) {
        w->body_joint_filter[j->a] |= filter_bit(j->b);
        w->body_joint_filter[j->b] |= filter_bit(j->a);
    }
}

static void unlink_from(ls_world *w, uint32_t k, uint32_t body)
{
    for (uint32_t *p = &w->body_joint_head[body]; *p != UINT32_MAX; p = next_link(w, *p, body)) {
        if (*p == k) {
            *p = *next_link(w, k, body);
            break;
        }
    }
    // The mask of the joints left on the body's list.
    uint32_t mask = 0;
    for (uint32_t q = w->body_joint_head[body]; q != UINT32_MAX; q = *next_link(w, q, body)) {
        const ls_joint *j = &w->joints[q];
        if (!(j->flags & LS_JOINT_F_COLLIDE)) {
            mask |= filter_bit(j->a == body ? j->b : j->a);
        }
    }
    w->body_joint_filter[body] = mask;
}

void ls_joint_rebuild_lists_(ls_world *w)
{
    for (uint32_t i = 0; i < w->def.max_bodies; i++) {
        w->body_joint_head[i] = UINT32_MAX;
        w->body_joint_filter[i] = 0;
    }
    for (uint32_t k = 0; k < w->joint_high; k++) {
        if (w->joints[k].alive) {
            link_joint(w, k);
        }
    }
}

bool ls_joint_filters_pair_(const ls_world *w, uint32_t a, uint32_t b)
{
    // A joint between a and b is on both bodies' lists: a body without joints
    // (the ground of most pairs) answers at once, and so does a body none of
    // whose filtering joints has a partner with b's bit in its mask (two
    // ragdolls' limbs touching: the walk over a's joint records, a cache
    // miss each, was 1 % of the rain scene).
    if (w->joint_count == 0 || w->body_joint_head[b] == UINT32_MAX ||
        !(w->body_joint_filter[a] & filter_bit(b))) {
        return false;
    }
    for (uint32_t k = w->body_joint_head[a]; k != UINT32_MAX;) {
        const ls_joint *j = &w->joints[k];
        if ((j->a == b || j->b == b) && !(j->flags & LS_JOINT_F_COLLIDE)) {
            return true;
        }
        k = j->a == a ? j->next_a : j->next_b;
    }
    return false;
}

static void wake_bodies(ls_world *w, const ls_joint *j)
{
    ls_body_wake_(&w->bodies[j->a]);
    ls_body_wake_(&w->bodies[j->b]);
}

static void free_joint(ls_world *w, uint32_t k)
{
    ls_joint *j = &w->joints[k];
    unlink_from(w, k, j->a);
    unlink_from(w, k, j->b);
    wake_bodies(w, j);
    j->alive = false;
    w->joint_next_free[k] = w->joint_free_head;
    w->joint_free_head = k;
    w->joint_count--;
}

ls_result ls_joint_destroy(ls_world *w, ls_joint_id id)
{
    if (ls_world_locked_(w, NULL)) {
        return LS_ERR_LOCKED;
    }
    if (!joint_of(w, id)) {
        return LS_ERR_INVALID_ID;
    }
    free_joint(w, id.index1 - 1);
    return LS_OK;
}

// Joints of one body gathered from its list before falling back to a scan
// of every slot.
#define BODY_JOINTS_MAX 32

void ls_joint_destroy_of_body_(ls_world *w, uint32_t body)
{
    // Why from the body's list, sorted: the joints must be freed in slot order
    // (the free list decides the slots of later joints), and scanning every
    // slot for each destroyed body cost rain (hundreds of ragdoll bodies
    // destroyed in a tick among thousands of joints) more than its solve of
    // a few joints. The list holds the same set; sorting restores the order.
    uint32_t found[BODY_JOINTS_MAX], n = 0;
    for (uint32_t k = w->body_joint_head[body]; k != UINT32_MAX; k = *next_link(w, k, body)) {
        if (n == BODY_JOINTS_MAX) {
            n = UINT32_MAX;
            break;
        }
        uint32_t at = n++;
        for (; at > 0 && found[at - 1] > k; at--) {
            found[at] = found[at - 1];
        }
        found[at] = k;
    }
    if (n != UINT32_MAX) {
        for (uint32_t q = 0; q < n; q++) {
            free_joint(w, found[q]);
        }
        return;
    }
    for (uint32_t k = 0; k < w->joint_high; k++) {
        const ls_joint *j = &w->joints[k];
        if (j->alive && (j->a == body || j->b == body)) {
            free_joint(w, k);
        }
    }
}

// ---- Creation ----

// Fills err (may be NULL) naming the field, with the value when has_value;
// returns false so checks read `return refuse(...)`.
static bool refuse(ls_error *err, ls_result code, const char *field, const char *what,
                   bool has_value, ls_fx v)
{
    char text[LS_FX_TEXT_MAX];
    ls_fx_format(v, text);
    if (has_value) {
        ls_error_set_field_(err, code, field, "%s (got %s)", what, text);
    } else {
        ls_error_set_field_(err, code, field, "%s", what);
    }
    return false;
}

static bool in(ls_fx v, ls_fx lo, ls_fx hi)
{
    return v >= lo && v <= hi;
}

// Names the first component of v outside +-range.
static bool vec_in(ls_vec3 v, ls_fx range, const char *field, const char *what, ls_error *err)
{
    const ls_fx c[3] = {v.x, v.y, v.z};
    for (int k = 0; k < 3; k++) {
        if (!in(c[k], -range, range)) {
            char name[LS_ERROR_FIELD_MAX], text[LS_ERROR_FIELD_MAX + 160];
            snprintf(name, sizeof name, "%s.%c", field, 'x' + k);
            snprintf(text, sizeof text, "%s.%c %s", field, 'x' + k, what);
            return refuse(err, LS_ERR_OUT_OF_RANGE, name, text, true, c[k]);
        }
    }
    return true;
}

static bool check_bodies(const ls_world *w, const ls_joint_def *d, ls_error *err)
{
    const ls_body *a = ls_world_body_(w, d->body_a), *b = ls_world_body_(w, d->body_b);
    if (!a) {
        return refuse(err, LS_ERR_INVALID_ID, "body_a", "body_a is stale, destroyed or null", false,
                      0);
    }
    if (!b) {
        return refuse(err, LS_ERR_INVALID_ID, "body_b", "body_b is stale, destroyed or null", false,
                      0);
    }
    if (a == b) {
        return refuse(err, LS_ERR_INVALID_ARGUMENT, "body_b",
                      "body_b is body_a: a joint joins two different bodies", false, 0);
    }
    if (a->type != LS_BODY_DYNAMIC && b->type != LS_BODY_DYNAMIC) {
        return refuse(err, LS_ERR_INVALID_ARGUMENT, "body_b",
                      "neither body is dynamic: the joint could never move anything", false, 0);
    }
    return true;
}

// Anchor within the world range and within LS_JOINT_ARM_RANGE of the body's centre of mass.
static bool check_anchor(const ls_body *b, ls_vec3 anchor, const char *field, const char *body,
                         ls_error *err)
{
    if (!vec_in(anchor, LS_JOINT_ANCHOR_RANGE, field, "outside +-2048 m", err)) {
        return false;
    }
    char what[96];
    snprintf(what, sizeof what, "more than 128 m from the centre of mass of %s", body);
    return vec_in(ls_vec3_sub(anchor, b->p), LS_JOINT_ARM_RANGE, field, what, err);
}

static bool check_angle_pair(ls_fx lo, ls_fx hi, const char *flo, const char *fhi, ls_error *err)
{
    if (!in(lo, -LS_FX_PI, LS_FX_PI)) {
        return refuse(err, LS_ERR_OUT_OF_RANGE, flo, "angle outside -pi..pi rad", true, lo);
    }
    if (!in(hi, -LS_FX_PI, LS_FX_PI)) {
        return refuse(err, LS_ERR_OUT_OF_RANGE, fhi, "angle outside -pi..pi rad", true, hi);
    }
    if (lo > hi) {
        char what[96];
        snprintf(what, sizeof what, "%s above %s", flo, fhi);
        return refuse(err, LS_ERR_OUT_OF_RANGE, flo, what, true, lo);
    }
    return true;
}

static bool check_kind_ranges(const ls_joint_kind *kind, const ls_joint_def *d, ls_error *err)
{
    ls_result R = LS_ERR_OUT_OF_RANGE;
    bool slider = d->type == LS_JOINT_PRISMATIC;
    if (kind->needs_axis && ls_vec3_equal(d->axis, ls_vec3_zero())) {
        return refuse(err, LS_ERR_INVALID_ARGUMENT, "axis", "axis is the zero vector", false, 0);
    }
    if (kind->has_limit && !slider &&
        !check_angle_pair(d->lower, d->upper, "lower", "upper", err)) {
        return false;
    }
    if (kind->has_limit && slider) {
        if (!in(d->lower, -LS_JOINT_SLIDER_RANGE, LS_JOINT_SLIDER_RANGE)) {
            return refuse(err, R, "lower", "lower outside +-2048 m", true, d->lower);
        }
        if (!in(d->upper, -LS_JOINT_SLIDER_RANGE, LS_JOINT_SLIDER_RANGE)) {
            return refuse(err, R, "upper", "upper outside +-2048 m", true, d->upper);
        }
        if (d->lower > d->upper) {
            return refuse(err, R, "lower", "lower above upper", true, d->lower);
        }
    }
    if (kind->has_motor) {
        ls_fx top = slider ? LS_JOINT_LINEAR_SPEED : LS_JOINT_ANGULAR_SPEED;
        if (!in(d->motor_speed, -top, top)) {
            return refuse(err, R, "motor_speed",
                          slider ? "motor_speed outside +-512 m/s"
                                 : "motor_speed outside +-128 rad/s",
                          true, d->motor_speed);
        }
        if (d->max_motor_torque < 0) {
            return refuse(err, R, "max_motor_torque", "max_motor_torque below 0", true,
                          d->max_motor_torque);
        }
        if (d->type == LS_JOINT_CONE && d->enable_motor && d->motor_speed != 0) {
            return refuse(err, R, "motor_speed",
                          "a cone joint's motor is joint friction: motor_speed must be 0", true,
                          d->motor_speed);
        }
    }
    if (kind->has_spring) {
        if (!in(d->spring_hertz, 0, LS_JOINT_MAX_HERTZ)) {
            return refuse(err, R, "spring_hertz", "spring_hertz outside 0..1000 Hz", true,
                          d->spring_hertz);
        }
        if (!in(d->spring_damping_ratio, 0, LS_JOINT_MAX_ZETA)) {
            return refuse(err, R, "spring_damping_ratio", "spring_damping_ratio outside 0..100",
                          true, d->spring_damping_ratio);
        }
    }
    if (d->type == LS_JOINT_DISTANCE) {
        if (!in(d->min_length, 0, LS_JOINT_MAX_LENGTH)) {
            return refuse(err, R, "min_length", "min_length outside 0..4096 m", true,
                          d->min_length);
        }
        if (!in(d->max_length, 0, LS_JOINT_MAX_LENGTH)) {
            return refuse(err, R, "max_length", "max_length outside 0..4096 m", true,
                          d->max_length);
        }
        if (d->min_length > d->max_length) {
            return refuse(err, R, "min_length", "min_length above max_length", true, d->min_length);
        }
    }
    if (d->type == LS_JOINT_CONE) {
        if (!in(d->cone_angle, 0, LS_FX_PI)) {
            return refuse(err, R, "cone_angle", "cone_angle outside 0..pi rad", true,
                          d->cone_angle);
        }
        if (!check_angle_pair(d->twist_lower, d->twist_upper, "twist_lower", "twist_upper", err)) {
            return false;
        }
    }
    if (d->break_force < 0) {
        return refuse(err, R, "break_force", "break_force below 0", true, d->break_force);
    }
    if (d->break_torque < 0) {
        return refuse(err, R, "break_torque", "break_torque below 0", true, d->break_torque);
    }
    return true;
}

static bool check_def(const ls_world *w, const ls_joint_def *d, ls_error *err)
{
    const ls_joint_kind *kind = ls_joint_kind_of_((uint32_t)d->type);
    if (!kind) {
        return refuse(err, LS_ERR_INVALID_ARGUMENT, "type", "unknown joint type", false, 0);
    }
    if (!check_bodies(w, d, err)) {
        return false;
    }
    const ls_body *a = ls_world_body_(w, d->body_a), *b = ls_world_body_(w, d->body_b);
    bool two = d->type == LS_JOINT_DISTANCE;
    if (!check_anchor(a, d->anchor, "anchor", "body_a", err) ||
        !check_anchor(b, two ? d->anchor_b : d->anchor, two ? "anchor_b" : "anchor", "body_b",
                      err)) {
        return false;
    }
    if (!check_kind_ranges(kind, d, err)) {
        return false;
    }
    if (two) {
        ls_fx len = ls_vec3_len(ls_vec3_sub(d->anchor_b, d->anchor));
        bool rod = d->min_length == d->max_length;
        if (len > LS_JOINT_MAX_LENGTH) {
            return refuse(err, LS_ERR_OUT_OF_RANGE, "anchor_b", "anchors farther apart than 4096 m",
                          true, len);
        }
        if (rod && d->max_length == 0 && len < LS_JOINT_MIN_ROD) {
            return refuse(err, LS_ERR_OUT_OF_RANGE, "anchor_b",
                          "anchors closer than 0.01 m make no rod (use a ball joint)", true, len);
        }
        if (rod && d->max_length != 0 && d->max_length < LS_JOINT_MIN_ROD) {
            return refuse(err, LS_ERR_OUT_OF_RANGE, "max_length",
                          "a rigid rod (min_length = max_length) shorter than 0.01 m", true,
                          d->max_length);
        }
    }
    return true;
}

// A rotation whose x axis is the unit vector a (deterministic choice of the
// other two: the shortest arc from +x).
static ls_quat frame_from_axis(ls_vec3 a)
{
    if (a.y == 0 && a.z == 0 && a.x < 0) {
        return ls_quat_make(0, 0, LS_FX_ONE, 0); // half turn about z
    }
    // q = (x cross a, 1 + x . a) normalised.
    return ls_quat_normalize(ls_quat_make(0, ls_fx_neg(a.z), a.y, ls_fx_add(LS_FX_ONE, a.x)));
}

static uint32_t take_slot(ls_world *w)
{
    if (w->joint_free_head != UINT32_MAX) {
        uint32_t i = w->joint_free_head;
        w->joint_free_head = w->joint_next_free[i];
        return i;
    }
    return w->joint_high < w->def.max_joints ? w->joint_high++ : UINT32_MAX;
}

static uint32_t flags_of(const ls_joint_def *d)
{
    return (d->enable_limit ? LS_JOINT_F_LIMIT : 0u) | (d->enable_motor ? LS_JOINT_F_MOTOR : 0u) |
           (d->enable_spring ? LS_JOINT_F_SPRING : 0u) |
           (d->collide_connected ? LS_JOINT_F_COLLIDE : 0u);
}

// The kind's parameters into the slot (SPEC.md §23: what lower/upper/length
// hold per kind); fields a kind does not use stay 0.
static void set_parameters(ls_joint *j, const ls_joint_kind *kind, const ls_joint_def *d)
{
    uint32_t used = LS_JOINT_F_COLLIDE | (kind->has_limit ? LS_JOINT_F_LIMIT : 0u) |
                    (kind->has_motor ? LS_JOINT_F_MOTOR : 0u) |
                    (kind->has_spring ? LS_JOINT_F_SPRING : 0u);
    j->flags = flags_of(d) & used;
    if (kind->has_limit) {
        j->lower = d->lower;
        j->upper = d->upper;
    }
    if (kind->has_motor) {
        j->motor_speed = d->motor_speed;
        j->max_motor = d->max_motor_torque;
    }
    if (kind->has_spring) {
        j->spring_hertz = d->spring_hertz;
        j->spring_zeta = d->spring_damping_ratio;
    }
    j->break_force = d->break_force;
    j->break_torque = d->break_torque;
    j->user_data = d->user_data;
    if (d->type == LS_JOINT_DISTANCE) {
        ls_fx len = ls_vec3_len(ls_vec3_sub(d->anchor_b, d->anchor));
        bool rod0 = d->min_length == 0 && d->max_length == 0;
        j->lower = rod0 ? len : d->min_length;
        j->upper = rod0 ? len : d->max_length;
        j->length = ls_fx_clamp(len, j->lower, j->upper);
    } else if (d->type == LS_JOINT_CONE) {
        j->cone = d->cone_angle;
        j->lower = d->twist_lower;
        j->upper = d->twist_upper;
    }
}

ls_joint_id ls_joint_create(ls_world *w, const ls_joint_def *def, ls_error *err)
{
    if (ls_world_locked_(w, err)) {
        return (ls_joint_id){0, 0};
    }
    ls_joint_id none = {0, 0};
    if (!w || !def) {
        ls_error_set(err, LS_ERR_INVALID_ARGUMENT, "no world or no joint definition");
        return none;
    }
    if (ls_def_missing_(def->cookie, "joint_def", err)) {
        return none;
    }
    if (!check_def(w, def, err)) {
        return none;
    }
    uint32_t i = take_slot(w);
    if (i == UINT32_MAX) {
        ls_error_set(err, LS_ERR_CAPACITY, "the world is full: max_joints is %u",
                     w->def.max_joints);
        if (err) {
            snprintf(err->field, sizeof err->field, "max_joints");
        }
        return none;
    }
    uint32_t ia = def->body_a.index1 - 1, ib = def->body_b.index1 - 1;
    const ls_body *a = &w->bodies[ia], *b = &w->bodies[ib];
    ls_joint *j = &w->joints[i];
    uint32_t gen = j->generation + 1;
    memset(j, 0, sizeof *j);
    j->generation = gen;
    j->alive = true;
    j->type = (uint8_t)def->type;
    j->a = ia;
    j->b = ib;
    const ls_joint_kind *kind = ls_joint_kind_of_(j->type);
    set_parameters(j, kind, def);
    ls_vec3 anchor_b = def->type == LS_JOINT_DISTANCE ? def->anchor_b : def->anchor;
    j->local_a = ls_mat3_mul_tvec(a->xf.r, ls_vec3_sub(def->anchor, a->p));
    j->local_b = ls_mat3_mul_tvec(b->xf.r, ls_vec3_sub(anchor_b, b->p));
    ls_quat f = ls_quat_identity();
    if (kind->needs_axis) {
        f = frame_from_axis(ls_vec3_normalize(def->axis, ls_vec3_make(LS_FX_ONE, 0, 0)));
    }
    j->frame_a = ls_quat_normalize(ls_quat_mul(ls_quat_conj(a->q), f));
    j->frame_b = ls_quat_normalize(ls_quat_mul(ls_quat_conj(b->q), f));
    link_joint(w, i);
    w->joint_count++;
    wake_bodies(w, j);
    ls_error_clear(err);
    return id_of(w, i);
}

// ---- Queries and run-time settings ----

ls_joint_type ls_joint_type_of(const ls_world *w, ls_joint_id id)
{
    const ls_joint *j = live_joint(w, id);
    return j ? (ls_joint_type)j->type : LS_JOINT_BALL;
}

ls_body_id ls_joint_body_a(const ls_world *w, ls_joint_id id)
{
    const ls_joint *j = live_joint(w, id);
    ls_body_id none = {0, 0};
    return j ? ls_world_id_of_(w, j->a) : none;
}

ls_body_id ls_joint_body_b(const ls_world *w, ls_joint_id id)
{
    const ls_joint *j = live_joint(w, id);
    ls_body_id none = {0, 0};
    return j ? ls_world_id_of_(w, j->b) : none;
}

ls_vec3 ls_joint_reaction_force(const ls_world *w, ls_joint_id id)
{
    const ls_joint *j = live_joint(w, id);
    return j ? j->force : ls_vec3_zero();
}

ls_vec3 ls_joint_reaction_torque(const ls_world *w, ls_joint_id id)
{
    const ls_joint *j = live_joint(w, id);
    return j ? j->torque : ls_vec3_zero();
}

ls_fx ls_joint_hinge_angle(const ls_world *w, ls_joint_id id)
{
    const ls_joint *j = live_joint(w, id);
    LS_ASSERT(j == NULL || j->type == LS_JOINT_HINGE);
    if (!j) {
        return 0;
    }
    return ls_joint_twist_angle_(ls_joint_frame_a_(w, j), ls_joint_frame_b_(w, j));
}

ls_fx ls_joint_prismatic_translation(const ls_world *w, ls_joint_id id)
{
    const ls_joint *j = live_joint(w, id);
    LS_ASSERT(j == NULL || j->type == LS_JOINT_PRISMATIC);
    if (!j) {
        return 0;
    }
    const ls_body *a = &w->bodies[j->a], *b = &w->bodies[j->b];
    ls_vec3 d = ls_vec3_sub(ls_vec3_add(b->p, ls_joint_arm_b_(w, j)),
                            ls_vec3_add(a->p, ls_joint_arm_a_(w, j)));
    return ls_vec3_dot(d, ls_joint_quat_axis_(ls_joint_frame_a_(w, j), 0));
}

ls_result ls_joint_set_motor(ls_world *w, ls_joint_id id, bool enable, ls_fx speed,
                             ls_fx max_torque)
{
    if (ls_world_locked_(w, NULL)) {
        return LS_ERR_LOCKED;
    }
    ls_joint *j = joint_of(w, id);
    if (!j) {
        return LS_ERR_INVALID_ID;
    }
    if (!ls_joint_kind_of_(j->type)->has_motor) {
        return LS_ERR_INVALID_ARGUMENT;
    }
    ls_fx top = j->type == LS_JOINT_PRISMATIC ? LS_JOINT_LINEAR_SPEED : LS_JOINT_ANGULAR_SPEED;
    if (!in(speed, -top, top) || max_torque < 0 || (j->type == LS_JOINT_CONE && speed != 0)) {
        return LS_ERR_OUT_OF_RANGE; // a cone's motor is joint friction (speed 0)
    }
    j->flags = enable ? j->flags | LS_JOINT_F_MOTOR : j->flags & ~(uint32_t)LS_JOINT_F_MOTOR;
    j->motor_speed = speed;
    j->max_motor = max_torque;
    if (!enable) {
        j->motor_impulse = 0;
    }
    wake_bodies(w, j);
    return LS_OK;
}

ls_result ls_joint_set_spring(ls_world *w, ls_joint_id id, bool enable, ls_fx hertz,
                              ls_fx damping_ratio)
{
    if (ls_world_locked_(w, NULL)) {
        return LS_ERR_LOCKED;
    }
    ls_joint *j = joint_of(w, id);
    if (!j) {
        return LS_ERR_INVALID_ID;
    }
    if (!ls_joint_kind_of_(j->type)->has_spring) {
        return LS_ERR_INVALID_ARGUMENT;
    }
    if (!in(hertz, 0, LS_JOINT_MAX_HERTZ) || !in(damping_ratio, 0, LS_JOINT_MAX_ZETA)) {
        return LS_ERR_OUT_OF_RANGE;
    }
    j->flags = enable ? j->flags | LS_JOINT_F_SPRING : j->flags & ~(uint32_t)LS_JOINT_F_SPRING;
    j->spring_hertz = hertz;
    j->spring_zeta = damping_ratio;
    if (!enable) {
        j->spring_impulse = 0;
    }
    wake_bodies(w, j);
    return LS_OK;
}

// ---- Solver hooks (solver.h) ----

// Springs (SPEC.md §23.1). Why not Box2D v3's soft row alone: it integrates
// the spring implicitly, in both passes of every sub-step, and that damps an
// undamped spring (a 2 Hz spring kept 0.1 % of its energy after 10 s; Bullet
// and ODE keep it all). The stiffness is applied explicitly instead: half its
// impulse in the biased pass, from the pose the sub-step starts with, half in
// the relax pass, from the pose the position update produced -- velocity
// Verlet, symplectic and second order: the energy stays within
// O((omega h)^2) of its start, with no drift. Damping stays implicit, a soft
// velocity row in both passes (stable at any ratio). The explicit update is
// stable only for omega h < 2 (less where rows couple), so a spring with
// omega h above 1/2 keeps the soft row, stable at any stiffness (and damped,
// as before).
#define SPRING_EXPLICIT_MAX_HO (LS_FX_ONE / 2)
#define TWO_PI_FX              411775 // round(2^16 * 2 pi)

static bool spring_is_explicit(ls_fx hertz, ls_fx h)
{
    return hertz > 0 && ls_fx_mul(h, ls_fx_mul(TWO_PI_FX, hertz)) <= SPRING_EXPLICIT_MAX_HO;
}

// bias_rate = omega^2 h / 2 (each pass's stiffness impulse per kg and
// metre), mass_scale = g / (1 + g) and impulse_scale = 1 / (1 + g) with
// g = 2 zeta omega h.
// The stiffness rate uses dt / substeps exactly (not h, which is rounded to
// Q16.16): the position update moves by dt per tick, and a rate from a
// rounded h would shift the spring's frequency by up to 0.4 %.
static ls_softness explicit_spring(ls_fx hertz, ls_fx zeta, const ls_step_ctx *ctx)
{
    ls_fx omega = ls_fx_mul(TWO_PI_FX, hertz);
    ls_fx ho = ls_fx_mul(ctx->h, omega);
    ls_fx g = ls_fx_mul(ls_fx_mul(LS_FX_INT(2), zeta), ho);
    ls_fx inv = ls_fx_div(LS_FX_ONE, ls_fx_add(LS_FX_ONE, g));
    // omega h <= 1/2 here, so omega^2 dt / 2n <= 1/(8h) and every product fits.
    int64_t w2 = ((int64_t)omega * omega + (1 << 15)) >> 16; // Q16.16
    int64_t den = (int64_t)ctx->substeps << 17;
    ls_fx rate = (ls_fx)((w2 * ctx->dt + den / 2) / den);
    return (ls_softness){rate, ls_fx_mul(g, inv), inv};
}

void ls_joint_prepare_(ls_world *w, ls_joint *j, const ls_step_ctx *ctx)
{
    ls_joint_prepare_bodies_(w, j);
    j->spring_push = 0;
    j->spring_explicit = spring_is_explicit(j->spring_hertz, ctx->h);
    j->spring = j->spring_explicit ? explicit_spring(j->spring_hertz, j->spring_zeta, ctx)
                                   : ls_softness_make_(j->spring_hertz, j->spring_zeta, ctx->h);
    const ls_joint_kind *kind = ls_joint_kind_of_(j->type);
    if (kind->prepare) {
        kind->prepare(w, j, ctx);
    }
}

void ls_joint_warm_start_(ls_world *w, ls_joint *j)
{
    ls_joint_kind_of_(j->type)->warm_start(w, j);
}

void ls_joint_solve_(ls_world *w, ls_joint *j, const ls_step_ctx *ctx, bool use_bias)
{
    ls_joint_kind_of_(j->type)->solve(w, j, ctx, use_bias);
}

// |v| > limit, exactly (limit > 0).
static bool exceeds(ls_vec3 v, ls_fx limit)
{
    return ls_vec3_len_sq_q32(v) > (uint64_t)limit * (uint64_t)limit;
}

void ls_joint_reaction_(const ls_world *w, ls_joint *j, const ls_step_ctx *ctx)
{
    ls_vec3 lin, ang;
    ls_joint_kind_of_(j->type)->reaction(w, j, &lin, &ang);
    // Per sub-step impulses over the last sub-step's length (ctx->h after the
    // loop; sub-steps alternate between floor and ceil of dt/n).
    ls_fx h = ctx->h;
    j->force = ls_vec3_make(ls_fx_div(lin.x, h), ls_fx_div(lin.y, h), ls_fx_div(lin.z, h));
    j->torque = ls_vec3_make(ls_fx_div(ang.x, h), ls_fx_div(ang.y, h), ls_fx_div(ang.z, h));
}

void ls_joint_finish_(ls_world *w, ls_joint *j)
{
    bool broken = (j->break_force > 0 && exceeds(j->force, j->break_force)) ||
                  (j->break_torque > 0 && exceeds(j->torque, j->break_torque));
    if (!broken) {
        return;
    }
    // Events of this step (the world's tick is incremented after the solve).
    uint32_t tick = w->tick + 1;
    if (w->joint_event_tick != tick) {
        w->joint_event_tick = tick;
        w->joint_event_count = 0;
    }
    uint32_t k = (uint32_t)(j - w->joints);
    ls_joint_event *e = &w->joint_events[w->joint_event_count++];
    e->joint = id_of(w, k);
    e->body_a = ls_world_id_of_(w, j->a);
    e->body_b = ls_world_id_of_(w, j->b);
    e->force = j->force;
    e->torque = j->torque;
    e->user_data = j->user_data;
    free_joint(w, k);
}

// ---- Helpers of the kinds ----

void ls_joint_prepare_bodies_(ls_world *w, ls_joint *j)
{
    const ls_body *a = &w->bodies[j->a], *b = &w->bodies[j->b];
    j->moves_a = ls_body_moves_(a);
    j->moves_b = ls_body_moves_(b);
    j->state_a = a->state;
    j->state_b = b->state;
    j->inv_mass_a = j->moves_a ? a->inv_mass : 0;
    j->inv_mass_b = j->moves_b ? b->inv_mass : 0;
    memset(&j->inv_i_a, 0, sizeof j->inv_i_a);
    memset(&j->inv_i_b, 0, sizeof j->inv_i_b);
    if (j->moves_a) {
        j->inv_i_a = a->inv_inertia_world;
    }
    if (j->moves_b) {
        j->inv_i_b = b->inv_inertia_world;
    }
}

ls_fx ls_joint_bias_(ls_fx c, ls_fx bias_rate)
{
    return ls_fx_clamp(ls_fx_mul(c, bias_rate), -LS_JOINT_MAX_BIAS, LS_JOINT_MAX_BIAS);
}

ls_vec3 ls_joint_bias3_(ls_vec3 c, ls_fx bias_rate)
{
    ls_vec3 b = ls_vec3_scale(c, bias_rate);
    const uint64_t top = (uint64_t)LS_JOINT_MAX_BIAS * (uint64_t)LS_JOINT_MAX_BIAS;
    if (ls_vec3_len_sq_q32(b) <= top) {
        return b;
    }
    return ls_vec3_scale(ls_vec3_normalize(b, ls_vec3_zero()), LS_JOINT_MAX_BIAS);
}

ls_softness ls_joint_rigid_(const ls_step_ctx *ctx, bool use_bias)
{
    ls_softness rigid = {0, LS_FX_ONE, 0};
    return use_bias ? ctx->joint : rigid;
}

ls_vec3 ls_joint_arm_a_(const ls_world *w, const ls_joint *j)
{
    return ls_mat3_mul_vec(w->bodies[j->a].xf.r, j->local_a);
}

ls_vec3 ls_joint_arm_b_(const ls_world *w, const ls_joint *j)
{
    return ls_mat3_mul_vec(w->bodies[j->b].xf.r, j->local_b);
}

ls_fx ls_joint_point_stretch_(const ls_world *w, const ls_joint *j)
{
    const ls_body *a = &w->bodies[j->a], *b = &w->bodies[j->b];
    return ls_vec3_len(ls_vec3_sub(ls_vec3_add(b->p, ls_joint_arm_b_(w, j)),
                                   ls_vec3_add(a->p, ls_joint_arm_a_(w, j))));
}

ls_fx ls_joint_stretch_(const ls_world *w, const ls_joint *j)
{
    const ls_joint_kind *k = ls_joint_kind_of_(j->type);
    return k->stretch ? k->stretch(w, j) : ls_joint_point_stretch_(w, j);
}

void ls_joint_apply_(ls_world *w, const ls_joint *j, ls_vec3 ra, ls_vec3 rb, ls_vec3 p, ls_vec3 l)
{
    if (j->moves_a) {
        ls_solver_body *a = ls_joint_state_a_(w, j);
        a->v = ls_vec3_sub(a->v, ls_vec3_scale(p, j->inv_mass_a));
        ls_vec3 t = ls_vec3_add(ls_vec3_cross(ra, p), l);
        a->w = ls_vec3_sub(a->w, ls_mat3_mul_vec(j->inv_i_a, t));
    }
    if (j->moves_b) {
        ls_solver_body *b = ls_joint_state_b_(w, j);
        b->v = ls_vec3_add(b->v, ls_vec3_scale(p, j->inv_mass_b));
        ls_vec3 t = ls_vec3_add(ls_vec3_cross(rb, p), l);
        b->w = ls_vec3_add(b->w, ls_mat3_mul_vec(j->inv_i_b, t));
    }
}

void ls_joint_apply_angular_(ls_world *w, const ls_joint *j, ls_vec3 l)
{
    if (j->moves_a) {
        ls_solver_body *a = ls_joint_state_a_(w, j);
        a->w = ls_vec3_sub(a->w, ls_mat3_mul_vec(j->inv_i_a, l));
    }
    if (j->moves_b) {
        ls_solver_body *b = ls_joint_state_b_(w, j);
        b->w = ls_vec3_add(b->w, ls_mat3_mul_vec(j->inv_i_b, l));
    }
}

ls_vec3 ls_joint_anchor_velocity_(const ls_world *w, const ls_joint *j, ls_vec3 ra, ls_vec3 rb)
{
    const ls_solver_body *a = ls_joint_state_a_(w, j), *b = ls_joint_state_b_(w, j);
    ls_vec3 vb = ls_vec3_add(b->v, ls_vec3_cross(b->w, rb));
    ls_vec3 va = ls_vec3_add(a->v, ls_vec3_cross(a->w, ra));
    return ls_vec3_sub(vb, va);
}

ls_fx ls_joint_linear_speed_(const ls_world *w, const ls_joint *j, ls_vec3 ra_d, ls_vec3 rb,
                             ls_vec3 d)
{
    const ls_solver_body *a = ls_joint_state_a_(w, j), *b = ls_joint_state_b_(w, j);
    int64_t s = ls_vec3_dot_q32(ls_vec3_sub(b->v, a->v), d);
    s = ls_i64_add_sat(s, ls_vec3_dot_q32(b->w, ls_vec3_cross(rb, d)));
    s = ls_i64_add_sat(s, -ls_vec3_dot_q32(a->w, ls_vec3_cross(ra_d, d)));
    return ls_fx_from_q32(s);
}

ls_fx ls_joint_inverse1_(ls_fx k)
{
    return k > 0 ? ls_fx_div(LS_FX_ONE, k) : 0;
}

ls_mat3 ls_joint_inverse_(ls_mat3 k)
{
    ls_mat3 out;
    if (ls_mat3_inverse_spd(k, &out)) {
        return out;
    }
    // Singular or out of range (a body of huge inertia): decoupled rows.
    return ls_mat3_diag(ls_vec3_make(ls_joint_inverse1_(k.row[0].x), ls_joint_inverse1_(k.row[1].y),
                                     ls_joint_inverse1_(k.row[2].z)));
}

ls_fx ls_joint_angular_k_(const ls_joint *j, ls_vec3 d, ls_vec3 e)
{
    int64_t s = ls_vec3_dot_q32(d, ls_mat3_mul_vec(j->inv_i_a, e));
    return ls_fx_from_q32(ls_i64_add_sat(s, ls_vec3_dot_q32(d, ls_mat3_mul_vec(j->inv_i_b, e))));
}

ls_fx ls_joint_linear_k_(const ls_joint *j, ls_vec3 ra_d, ls_vec3 rb, ls_vec3 d)
{
    ls_vec3 ca = ls_vec3_cross(ra_d, d), cb = ls_vec3_cross(rb, d);
    int64_t s = ls_vec3_dot_q32(ca, ls_mat3_mul_vec(j->inv_i_a, ca));
    s = ls_i64_add_sat(s, ls_vec3_dot_q32(cb, ls_mat3_mul_vec(j->inv_i_b, cb)));
    return ls_fx_add(ls_fx_add(j->inv_mass_a, j->inv_mass_b), ls_fx_from_q32(s));
}

ls_mat3 ls_joint_angular_block_mass_(const ls_joint *j)
{
    ls_mat3 k = j->inv_i_a;
    for (int r = 0; r < 3; r++) {
        k.row[r] = ls_vec3_add(k.row[r], j->inv_i_b.row[r]);
    }
    return ls_joint_inverse_(k);
}

void ls_joint_angular_block_solve_(ls_world *w, ls_joint *j, const ls_step_ctx *ctx, bool use_bias)
{
    ls_softness s = ls_joint_rigid_(ctx, use_bias);
    ls_vec3 rhs = ls_vec3_sub(ls_joint_state_b_(w, j)->w, ls_joint_state_a_(w, j)->w);
    if (use_bias) {
        ls_vec3 c = ls_joint_rotation_error_(ls_joint_frame_a_(w, j), ls_joint_frame_b_(w, j));
        rhs = ls_vec3_add(rhs, ls_joint_bias3_(c, s.bias_rate));
    }
    ls_vec3 x = ls_mat3_mul_vec(j->angular_mass, rhs);
    ls_vec3 impulse = ls_vec3_neg(ls_vec3_add(ls_vec3_scale(x, s.mass_scale),
                                              ls_vec3_scale(j->angular_impulse, s.impulse_scale)));
    j->angular_impulse = ls_vec3_add(j->angular_impulse, impulse);
    ls_joint_apply_angular_(w, j, impulse);
}

ls_vec3 ls_joint_rotation_error_(ls_quat fa, ls_quat fb)
{
    ls_quat e = ls_quat_mul(fb, ls_quat_conj(fa));
    ls_vec3 v = ls_vec3_make(e.x, e.y, e.z);
    v = e.w < 0 ? ls_vec3_neg(v) : v;
    return ls_vec3_add(v, v);
}

ls_fx ls_joint_spring_row_(ls_joint *j, ls_fx c, ls_fx cdot, ls_fx mass, ls_fx *acc, bool use_bias)
{
    const ls_softness *s = &j->spring;
    if (j->spring_explicit) {
        // Half the stiffness impulse from the pose the sub-step starts with
        // (biased pass), half from the pose it ends with (relax pass).
        ls_fx push = ls_fx_neg(ls_fx_mul(mass, ls_fx_mul(s->bias_rate, c)));
        j->spring_push = use_bias ? push : ls_fx_add(j->spring_push, push);
        ls_fx damp = ls_fx_neg(ls_fx_add(ls_fx_mul(ls_fx_mul(mass, s->mass_scale), cdot),
                                         ls_fx_mul(s->impulse_scale, *acc)));
        *acc = ls_fx_add(*acc, damp);
        return ls_fx_add(push, damp);
    }
    ls_fx rhs = ls_fx_add(cdot, ls_fx_mul(s->bias_rate, c));
    ls_fx impulse = ls_fx_neg(ls_fx_add(ls_fx_mul(ls_fx_mul(mass, s->mass_scale), rhs),
                                        ls_fx_mul(s->impulse_scale, *acc)));
    *acc = ls_fx_add(*acc, impulse);
    return impulse;
}

ls_fx ls_joint_motor_row_(const ls_joint *j, ls_fx cdot, ls_fx mass, ls_fx *acc,
                          const ls_step_ctx *ctx)
{
    ls_fx impulse = ls_fx_neg(ls_fx_mul(mass, ls_fx_sub(cdot, j->motor_speed)));
    ls_fx top = ls_fx_mul(j->max_motor, ctx->h);
    ls_fx old = *acc;
    *acc = ls_fx_clamp(ls_fx_add(old, impulse), ls_fx_neg(top), top);
    return ls_fx_sub(*acc, old);
}

// ---- Degrees (scene text) ----

#define RAD_PER_DEG_Q32 74961321 // round(2^32 pi / 180)

ls_fx ls_joint_degrees_to_radians_(ls_fx deg)
{
    return (ls_fx)ls_shift_round_((int64_t)deg * RAD_PER_DEG_Q32, -32);
}

ls_fx ls_joint_radians_to_degrees_(ls_fx rad)
{
    // deg_raw ~ rad_raw * 2^32 / RAD_PER_DEG_Q32 (~57.3 per radian unit), then
    // stepped to a value that maps back exactly: consecutive degree values
    // move the radians by 0.0175 units, so every radian value is reached.
    rad = rad < LS_FX_MIN ? LS_FX_MIN : rad;
    int64_t n = (int64_t)rad * ((int64_t)1 << 32); // |n| < 2^63
    int64_t d = n >= 0 ? (n + RAD_PER_DEG_Q32 / 2) / RAD_PER_DEG_Q32
                       : (n - RAD_PER_DEG_Q32 / 2) / RAD_PER_DEG_Q32;
    d = d > LS_FX_MAX ? LS_FX_MAX : d < LS_FX_MIN ? LS_FX_MIN : d;
    for (int k = 0; k < 4 && ls_joint_degrees_to_radians_((ls_fx)d) < rad && d < LS_FX_MAX; k++) {
        d++;
    }
    for (int k = 0; k < 4 && ls_joint_degrees_to_radians_((ls_fx)d) > rad && d > LS_FX_MIN; k++) {
        d--;
    }
    return (ls_fx)d;
}
