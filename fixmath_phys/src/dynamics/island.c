// SPDX-License-Identifier: MIT
// Islands and sleeping. An island is a set of dynamic bodies joined by
// touching contacts or joints (static bodies do not join islands). Union-find always
// links the larger root under the smaller index, so islands, and what wakes or
// sleeps, depend only on body indices and contacts, never on memory order.
#include "../world/world_internal.h"
#include "joint.h"

// The union-find works on two compact arrays, the parents and a dynamic flag
// per body slot, filled in one pass over the bodies. Why: reading `alive` and
// `type` and writing a parent in the bodies' own records (hundreds of bytes
// each) at every contact's and joint's two bodies cost a cache miss per
// visit, twice a step.
static uint32_t find_root(uint32_t *parent, uint32_t i)
{
    while (parent[i] != i) {
        parent[i] = parent[parent[i]]; // path halving
        i = parent[i];
    }
    return i;
}

static bool is_dynamic(const ls_body *b)
{
    return b->alive && b->type == LS_BODY_DYNAMIC;
}

static void join(const uint8_t *dynamic, uint32_t *parent, uint32_t a, uint32_t b)
{
    if (!dynamic[a] || !dynamic[b]) {
        return;
    }
    uint32_t ra = find_root(parent, a), rb = find_root(parent, b);
    if (ra < rb) {
        parent[rb] = ra;
    } else if (rb < ra) {
        parent[ra] = rb;
    }
}

static void build_islands(ls_world *w)
{
    uint32_t *parent = w->island_parent;
    uint8_t *dynamic = w->island_dynamic;
    for (uint32_t i = 0; i < w->body_high; i++) {
        parent[i] = i;
        dynamic[i] = is_dynamic(&w->bodies[i]);
    }
    for (uint32_t c = 0; c < w->contact_count; c++) {
        const ls_contact *ct = &w->contacts[c];
        if (ct->m.count > 0) {
            join(dynamic, parent, ct->a, ct->b);
        }
    }
    for (uint32_t j = 0; j < w->joint_high; j++) {
        if (w->joints[j].alive) {
            join(dynamic, parent, w->joints[j].a, w->joints[j].b);
        }
    }
}

void ls_world_wake_islands_(ls_world *w)
{
    build_islands(w);
    for (uint32_t i = 0; i < w->body_high; i++) {
        w->island_awake[i] = 0;
    }
    for (uint32_t i = 0; i < w->body_high; i++) {
        if (is_dynamic(&w->bodies[i]) && !w->bodies[i].asleep) {
            w->island_awake[find_root(w->island_parent, i)] = 1;
        }
    }
    for (uint32_t i = 0; i < w->body_high; i++) {
        ls_body *b = &w->bodies[i];
        if (is_dynamic(b) && b->asleep && w->island_awake[find_root(w->island_parent, i)]) {
            ls_body_wake_(b);
        }
    }
}

static bool at_rest(const ls_world *w, const ls_body *b)
{
    uint64_t lin = (uint64_t)w->def.sleep_linear * (uint64_t)w->def.sleep_linear;
    uint64_t ang = (uint64_t)w->def.sleep_angular * (uint64_t)w->def.sleep_angular;
    return ls_vec3_len_sq_q32(b->linear_velocity) <= lin &&
           ls_vec3_len_sq_q32(b->angular_velocity) <= ang;
}

void ls_world_sleep_islands_(ls_world *w)
{
    for (uint32_t i = 0; i < w->body_high; i++) {
        ls_body *b = &w->bodies[i];
        if (!is_dynamic(b) || b->asleep) {
            continue;
        }
        b->sleep_timer = b->allow_sleep && at_rest(w, b) ? ls_fx_add(b->sleep_timer, w->dt) : 0;
    }
    // Why: a body that rests while buried (a fast body that went into the
    // ground) must not freeze there; it stays awake until the solver has
    // pushed it out to within LS_SLEEP_DEPTH_SLOPS slops.
    ls_fx deep = ls_fx_mul(w->def.linear_slop, LS_FX_INT(LS_SLEEP_DEPTH_SLOPS));
    // (Only where a body's timer runs: resetting a zero timer changes
    // nothing, and a falling pile's bodies have none, so most contacts and
    // joints are skipped before their points or poses are read.)
    for (uint32_t c = 0; c < w->contact_count; c++) {
        const ls_contact *ct = &w->contacts[c];
        if (w->bodies[ct->a].sleep_timer == 0 && w->bodies[ct->b].sleep_timer == 0) {
            continue;
        }
        for (int k = 0; k < ct->m.count; k++) {
            if (ct->m.points[k].depth > deep) {
                w->bodies[ct->a].sleep_timer = 0;
                w->bodies[ct->b].sleep_timer = 0;
                break;
            }
        }
    }
    // The same for a joint held open beyond that depth (a heavy load on a
    // chain the iterations have not yet pulled together): it must not freeze
    // stretched.
    for (uint32_t j = 0; j < w->joint_high; j++) {
        const ls_joint *jt = &w->joints[j];
        if (jt->alive && (w->bodies[jt->a].sleep_timer != 0 || w->bodies[jt->b].sleep_timer != 0) &&
            ls_joint_stretch_(w, jt) > deep) {
            w->bodies[jt->a].sleep_timer = 0;
            w->bodies[jt->b].sleep_timer = 0;
        }
    }
    build_islands(w);
    for (uint32_t i = 0; i < w->body_high; i++) {
        w->island_min_timer[i] = LS_FX_MAX;
    }
    for (uint32_t i = 0; i < w->body_high; i++) {
        if (is_dynamic(&w->bodies[i])) {
            uint32_t r = find_root(w->island_parent, i);
            w->island_min_timer[r] = ls_fx_min(w->island_min_timer[r], w->bodies[i].sleep_timer);
        }
    }
    for (uint32_t i = 0; i < w->body_high; i++) {
        ls_body *b = &w->bodies[i];
        if (is_dynamic(b) && !b->asleep &&
            w->island_min_timer[find_root(w->island_parent, i)] >= w->def.sleep_time) {
            b->asleep = true;
            b->linear_velocity = ls_vec3_zero();
            b->angular_velocity = ls_vec3_zero();
        }
    }
}
