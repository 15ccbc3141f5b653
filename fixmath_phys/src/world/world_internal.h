// SPDX-License-Identifier: MIT
// Private layout of the world: bodies in a slot array (index + generation),
// persistent contacts double-buffered in pair order, per-step scratch. All
// memory is allocated by ls_world_create; the step never allocates.
#ifndef LS_WORLD_INTERNAL_H
#define LS_WORLD_INTERNAL_H

#include "../collision/broadphase.h"
#include "../collision/geom.h"
#include "ls/world.h"

/// One body slot. Fields marked (state) are saved in snapshots; (derived) are
/// recomputed from state; (scratch) live within one step.
typedef struct ls_body {
    uint32_t generation;       ///< (state) id generation of this slot
    bool alive;                ///< (state)
    uint8_t type;              ///< (state) ls_body_type
    bool allow_sleep;          ///< (state)
    bool asleep;               ///< (state)
    ls_vec3 p;                 ///< (state) centre of mass
    ls_quat q;                 ///< (state) orientation
    ls_vec3 v;                 ///< (state) linear velocity
    ls_vec3 w;                 ///< (state) angular velocity
    ls_vec3 force;             ///< (state) force accumulated for the next step
    ls_vec3 torque;            ///< (state) torque accumulated for the next step
    ls_fx sleep_timer;         ///< (state) seconds at rest
    ls_fx lin_damp;            ///< (state)
    ls_fx ang_damp;            ///< (state)
    ls_fx mass;                ///< (state) 0 for static/kinematic
    ls_fx inv_mass;            ///< (state)
    ls_vec3 inv_inertia;       ///< (state) body-frame principal inverse inertia
    ls_geom geom;              ///< (state) shape geometry
    ls_fx friction;            ///< (state)
    ls_fx restitution;         ///< (state)
    uint32_t category;         ///< (state)
    uint32_t mask;             ///< (state)
    uint64_t user_data;        ///< (state) not in the checksum
    ls_xform xf;               ///< (derived) transform with rotation matrix
    ls_mat3 inv_inertia_world; ///< (derived)
    ls_vec3 vb;                ///< (scratch) split-impulse pseudo velocity
    ls_vec3 wb;                ///< (scratch) split-impulse pseudo angular velocity
    uint32_t island;           ///< (scratch) union-find parent
    bool proxy_dirty;          ///< (derived) transform changed since the broad phase saw it
} ls_body;

/// One constraint direction d at a contact point, precomputed per step so an
/// iteration costs dot products and scaled adds only.
typedef struct ls_solver_row {
    ls_vec3 ang_a, ang_b; ///< ra x d, rb x d
    ls_vec3 iang_a,
        iang_b; ///< I_a^-1 (ra x d), I_b^-1 (rb x d); zero for a body that does not move
    ls_fx mass; ///< 1 / effective mass along d (0 if both are immovable)
} ls_solver_row;

/// Solver data of one contact point (scratch except the impulses).
typedef struct ls_contact_solve {
    ls_solver_row row[3]; ///< normal, tangent 1, tangent 2
    ls_fx vn0;            ///< normal velocity before solving (restitution)
    ls_fx separation;     ///< -depth
    ls_fx max_impulse;    ///< largest normal impulse this step (restitution)
    ls_fx pseudo_impulse; ///< accumulated split impulse
} ls_contact_solve;

/// A persistent contact between bodies a < b (slot indices): only what later
/// ticks need (kept small: sleeping contacts are carried over every tick).
typedef struct ls_contact {
    uint32_t a, b;
    ls_manifold m;
    ls_fx normal_impulse[LS_MANIFOLD_MAX];     ///< (state) warm-start cache
    ls_fx tangent_impulse[LS_MANIFOLD_MAX][2]; ///< (state) warm-start cache
} ls_contact;

/// Solver scratch of one active contact this step (solver.c).
typedef struct ls_contact_scratch {
    ls_contact *c;                       ///< the contact solved
    ls_vec3 t1, t2;                      ///< tangent basis
    ls_fx friction, restitution;         ///< mixed material
    ls_fx inv_mass_a, inv_mass_b;        ///< 0 for a body that does not move
    ls_contact_solve s[LS_MANIFOLD_MAX]; ///< per point
    ls_solver_row roll[3];               ///< twist about n, rolling about t1, t2
    ls_fx roll_impulse[3];               ///< accumulated, not warm started
} ls_contact_scratch;

struct ls_world {
    ls_world_def def;
    ls_fx dt;
    uint32_t tick;
    ls_rng rng;
    ls_body *bodies;
    uint32_t body_high; ///< slots [0, body_high) have ever been used
    uint32_t body_count;
    uint32_t free_head; ///< free-slot list through next_free (UINT32_MAX = none)
    uint32_t *next_free;
    ls_broadphase *bp;
    ls_pair *pairs;
    uint32_t max_pairs;
    ls_contact *contacts;        ///< current contacts, sorted by (a, b)
    ls_contact *contacts_old;    ///< previous step's, for warm starting
    ls_contact_scratch *scratch; ///< solver data of the active contacts (max_contacts)
    uint32_t contact_count;
    ls_contact_event *begin_events;
    ls_contact_event *end_events;
    uint32_t begin_count, end_count;
    uint8_t *island_awake;   ///< (scratch) per union-find root
    ls_fx *island_min_timer; ///< (scratch) per union-find root
    ls_step_info info;
};

/// Slot of a valid id, or NULL.
ls_body *ls_world_body_(const ls_world *w, ls_body_id id);
/// Id of slot index i.
ls_body_id ls_world_id_of_(const ls_world *w, uint32_t i);
/// Recompute derived fields (transform, world inertia) of a body.
void ls_body_update_derived_(ls_body *b);
/// Wake a body (and reset its sleep timer).
void ls_body_wake_(ls_body *b);
/// Narrow phase + persistent contact update for this step (contacts.c).
void ls_world_update_contacts_(ls_world *w);
/// Velocity and split-impulse solver over awake bodies (solver.c).
void ls_world_solve_(ls_world *w);
/// Island-based waking before the solve and sleeping after it (island.c).
void ls_world_wake_islands_(ls_world *w);
/// Put islands whose bodies have all rested long enough to sleep.
void ls_world_sleep_islands_(ls_world *w);
/// Record an overflow for body slot i this tick.
void ls_world_report_overflow_(ls_world *w, uint32_t i);

#endif
