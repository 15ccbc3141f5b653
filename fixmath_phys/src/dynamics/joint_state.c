// SPDX-License-Identifier: MIT
// The state walk of the joints (world/state.h; SPEC.md §12, §13): their
// snapshot record, their part of the checksum, and what restore must prove
// of them (the creation ranges of SPEC.md §23, joint.h).
#include "../math/quat_check.h"
#include "../world/state.h"
#include "joint.h"

// ---- Snapshot record ----

// One joint slot (SPEC.md §13): 46 words.
static void io_joint(ls_cursor *c, ls_joint *j)
{
    ls_io32_(c, &j->generation);
    uint32_t f = (uint32_t)j->alive | (uint32_t)j->type << 8 | j->flags << 16;
    ls_io32_(c, &f);
    if (!c->save && (f & ~(0x1u | 0xFF00u | (uint32_t)LS_JOINT_F_ALL << 16)) != 0) {
        ls_cursor_fail_(c, NULL, LS_ERR_CORRUPT); // bits a world never writes
    }
    j->alive = f & 1u;
    j->type = (uint8_t)(f >> 8);
    j->flags = f >> 16;
    ls_io32_(c, &j->a);
    ls_io32_(c, &j->b);
    ls_io_vec3_(c, &j->local_a);
    ls_io_vec3_(c, &j->local_b);
    ls_io_quat_(c, &j->frame_a);
    ls_io_quat_(c, &j->frame_b);
    ls_fx *params[] = {&j->lower,        &j->upper,       &j->motor_speed, &j->max_motor,
                       &j->spring_hertz, &j->spring_zeta, &j->length,      &j->cone,
                       &j->break_force,  &j->break_torque};
    for (size_t k = 0; k < sizeof params / sizeof params[0]; k++) {
        ls_io32_(c, params[k]);
    }
    ls_io_u64w_(c, &j->user_data);
    ls_io_vec3_(c, &j->linear_impulse);
    ls_io_vec3_(c, &j->angular_impulse);
    ls_io32_(c, &j->spring_impulse);
    ls_io32_(c, &j->motor_impulse);
    ls_io32_(c, &j->lower_impulse);
    ls_io32_(c, &j->upper_impulse);
    ls_io_vec3_(c, &j->force);
    ls_io_vec3_(c, &j->torque);
}

bool ls_joint_state_io_(ls_cursor *c, ls_world *w)
{
    ls_io32_(c, &w->joint_high);
    ls_io32_(c, &w->joint_count);
    ls_io32_(c, &w->joint_free_head);
    if (!c->ok || w->joint_high > w->def.max_joints || w->joint_count > w->joint_high) {
        return false;
    }
    for (uint32_t i = 0; i < w->joint_high && c->ok; i++) {
        io_joint(c, &w->joints[i]);
        ls_io32_(c, &w->joint_next_free[i]);
    }
    return c->ok;
}

// ---- Checksum ----

// Joints in slot order, every (state) field but user_data (SPEC.md §12). A
// world that never had a joint hashes nothing here, so its checksum is the
// one it had before joints existed.
void ls_joint_state_hash_(ls_hasher *h, const ls_world *w)
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

// ---- Restore checks ----

static bool in(ls_fx v, ls_fx lo, ls_fx hi)
{
    return v >= lo && v <= hi;
}

static bool fx_ok(ls_fx v)
{
    return v != INT32_MIN;
}

static bool vec_ok(ls_vec3 v, ls_fx range)
{
    return in(v.x, -range, range) && in(v.y, -range, range) && in(v.z, -range, range);
}

static bool quat_unit(ls_quat q)
{
    return ls_quat_is_stored_unit(q);
}

// The creation ranges (SPEC.md §23) a live joint's parameters must hold.
static const char *joint_problem(const ls_world *w, const ls_joint *j)
{
    const ls_fx big = LS_FX_MAX;
    if (!ls_joint_kind_of_(j->type) || (j->flags & ~(uint32_t)LS_JOINT_F_ALL) != 0) {
        return "joint type or flags";
    }
    if (j->a >= w->body_high || j->b >= w->body_high || j->a == j->b || !w->bodies[j->a].alive ||
        !w->bodies[j->b].alive) {
        return "joint bodies";
    }
    if (!vec_ok(j->local_a, 2 * LS_JOINT_ARM_RANGE) ||
        !vec_ok(j->local_b, 2 * LS_JOINT_ARM_RANGE) || !quat_unit(j->frame_a) ||
        !quat_unit(j->frame_b)) {
        return "joint anchors or frames";
    }
    if (!vec_ok(j->linear_impulse, big) || !vec_ok(j->angular_impulse, big) ||
        !vec_ok(j->force, big) || !vec_ok(j->torque, big) || !fx_ok(j->spring_impulse) ||
        !fx_ok(j->motor_impulse) || j->lower_impulse < 0 || j->upper_impulse < 0) {
        return "joint impulses";
    }
    bool slider = j->type == LS_JOINT_PRISMATIC, distance = j->type == LS_JOINT_DISTANCE;
    ls_fx range = slider ? LS_JOINT_SLIDER_RANGE : distance ? LS_JOINT_MAX_LENGTH : LS_FX_PI;
    ls_fx floor = distance ? 0 : -range;
    if (!in(j->lower, floor, range) || !in(j->upper, j->lower, range) ||
        (distance && !in(j->length, j->lower, j->upper)) || !in(j->cone, 0, LS_FX_PI)) {
        return "joint limits";
    }
    ls_fx top = slider ? LS_JOINT_LINEAR_SPEED : LS_JOINT_ANGULAR_SPEED;
    if (!in(j->motor_speed, -top, top) || j->max_motor < 0 ||
        !in(j->spring_hertz, 0, LS_JOINT_MAX_HERTZ) || !in(j->spring_zeta, 0, LS_JOINT_MAX_ZETA) ||
        j->break_force < 0 || j->break_torque < 0) {
        return "joint motor, spring or break";
    }
    return NULL;
}

const char *ls_joint_state_problem_(const ls_world *w, uint32_t *where)
{
    uint32_t alive = 0;
    *where = 0;
    if (w->joint_high > w->def.max_joints || w->joint_count > w->joint_high) {
        return "joint counts";
    }
    for (uint32_t i = 0; i < w->joint_high; i++) {
        *where = i;
        if (w->joints[i].alive) {
            alive++;
            const char *why = joint_problem(w, &w->joints[i]);
            if (why) {
                return why;
            }
        }
    }
    if (alive != w->joint_count) {
        return "live joint count";
    }
    uint32_t steps = 0;
    for (uint32_t i = w->joint_free_head; i != UINT32_MAX; i = w->joint_next_free[i]) {
        *where = i;
        if (i >= w->joint_high || w->joints[i].alive || ++steps > w->joint_high) {
            return "free joint list";
        }
    }
    return NULL;
}
