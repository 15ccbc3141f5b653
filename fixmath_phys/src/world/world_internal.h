// SPDX-License-Identifier: MIT
// Private layout of the world: bodies in a slot array (index + generation),
// persistent contacts double-buffered in pair order, per-step scratch. All
// memory is allocated by ls_world_create; the step never allocates.
#ifndef LS_WORLD_INTERNAL_H
#define LS_WORLD_INTERNAL_H

#include "../collision/broadphase.h"
#include "../collision/geom.h"
#include "../dynamics/graph.h"
#include "../dynamics/solver_scratch.h"
#include "ls/joint.h"
#include "ls/world.h"

/// One shape slot. A body owns 1..N shapes, linked through `next` in creation
/// order. Fields marked (state) are saved in snapshots; (derived) are
/// recomputed from state.
typedef struct ls_shape {
    uint32_t generation; ///< (state) id generation of this slot
    bool alive;          ///< (state)
    uint32_t body;       ///< (state) owning body slot
    uint32_t next;       ///< (state) next shape of the same body, UINT32_MAX at the end
    uint32_t geometry;   ///< (state) hull/mesh: index in the world's geometry table
    ls_geom geom;        ///< (state) kind and size; hull/mesh pointers (derived) from `geometry`
    ls_vec3 local_p;     ///< (state) position in the body frame, relative to the centre of mass
    ls_quat local_q;     ///< (state) rotation in the body frame
    ls_fx friction;      ///< (state)
    ls_fx restitution;   ///< (state)
    ls_fx density;       ///< (state) kg/m^3 (kept so the body's mass can be rebuilt)
    uint32_t category;   ///< (state)
    uint32_t mask;       ///< (state)
    ls_xform xf;         ///< (derived) world transform: body transform * local pose
    bool local_identity; ///< (derived) local pose is the identity: xf is the body's own
} ls_shape;

/// One body slot. Fields marked (state) are saved in snapshots; (derived) are
/// recomputed from state; (scratch) live within one step.
typedef struct ls_body {
    uint32_t generation;       ///< (state) id generation of this slot
    bool alive;                ///< (state)
    uint8_t type;              ///< (state) ls_body_type
    bool allow_sleep;          ///< (state)
    bool asleep;               ///< (state)
    bool bullet;               ///< (state) continuous collision against dynamic bodies too
    ls_fx inv_mass;            ///< (state)
    ls_vec3 linear_velocity;   ///< (state) m/s
    ls_vec3 angular_velocity;  ///< (state) rad/s, world frame
    ls_vec3 p;                 ///< (state) centre of mass
    ls_quat q;                 ///< (state) orientation
    ls_vec3 force;             ///< (state) force accumulated for the next step
    ls_vec3 torque;            ///< (state) torque accumulated for the next step
    ls_fx sleep_timer;         ///< (state) seconds at rest
    ls_fx lin_damp;            ///< (state)
    ls_fx ang_damp;            ///< (state)
    ls_fx mass;                ///< (state) 0 for static/kinematic
    ls_mat3 inv_inertia;       ///< (state) body-frame inverse inertia tensor (symmetric)
    ls_vec3 com_local;         ///< (state) centre of mass in the body frame, from the body origin
    uint32_t shape_head;       ///< (state) first shape slot
    uint32_t shape_count;      ///< (state) number of shapes (>= 1)
    uint64_t user_data;        ///< (state) not in the checksum
    ls_xform xf;               ///< (derived) transform with rotation matrix
    ls_mat3 inv_inertia_world; ///< (derived)
    bool inertia_diagonal;     ///< (derived) inv_inertia has zero off-diagonal terms
    ls_fx thickness;           ///< (derived) half the thinnest width of its shapes (ccd.c)
    ls_fx extent;              ///< (derived) farthest reach of its shapes from the centre of mass
    bool gyro;                 ///< (derived) anisotropic inertia: gyroscopic motion (gyro.c)
    ls_mat3 gyro_i;            ///< (derived) body-frame inertia scaled so its largest entry is 1
    ls_mat3 gyro_m;            ///< (derived) inverse of gyro_i (inv_inertia times the same scale)
    ls_vec3 p0;                ///< (scratch) centre of mass at the start of the tick
    ls_quat q0;                ///< (scratch) orientation at the start of the tick
    uint32_t state;            ///< (scratch) solver state this tick (body_state.h), 0: none
    bool fast;                 ///< (scratch) moves farther than `thickness` this step (ccd.c)
    bool proxy_dirty;          ///< (derived) transform changed since the broad phase saw it
} ls_body;

/// One entry of the world's table of immutable shape data (hulls, meshes):
/// stored once, referenced by index from shapes and snapshots.
typedef struct ls_geometry {
    ls_shape_type kind; ///< LS_SHAPE_HULL or LS_SHAPE_MESH
    struct ls_hull *hull;
    struct ls_mesh *mesh;
} ls_geometry;

/// A persistent contact between shapes shape_a < shape_b (slot indices) and,
/// for a mesh, one of its triangles (`child`; 0 otherwise): only what later
/// ticks need (kept small: sleeping contacts are carried over every tick).
/// Contacts are sorted by (shape_a, shape_b, child).
typedef struct ls_contact {
    uint32_t shape_a, shape_b, child;
    uint32_t a, b; ///< (derived) body slots of shape_a and shape_b
    ls_manifold m;
    ls_fx normal_impulse[LS_MANIFOLD_MAX]; ///< (state) warm-start cache, N s per sub-step
    ls_vec3 friction_impulse;              ///< (state) at the friction centre, world frame
    ls_fx twist_impulse;                   ///< (state) about the normal, N m s
    ls_vec3 rolling_impulse;               ///< (state) rolling block, world frame, N m s
    // Recycling (contacts.c): where the manifold's points sit on each body and
    // where the bodies were when the narrow phase last computed it.
    ls_vec3 anchor_a[LS_MANIFOLD_MAX]; ///< (state) point i's core point (ls_contact_core_)
                                       ///< in body a's frame, from its COM
    ls_vec3 anchor_b[LS_MANIFOLD_MAX]; ///< (state) the same in body b's frame
    ls_fx base_depth[LS_MANIFOLD_MAX]; ///< (state) depth + n . (core b - core a) when computed
    ls_vec3 pose_p[2];                 ///< (state) centres of mass of a, b when computed
    ls_quat pose_q[2];                 ///< (state) orientations of a, b when computed
    // Set with the manifold (contacts.c), kept while it is recycled.
    ls_vec3 tangent[2];           ///< (state) friction directions t1, t2 (from the normal)
    ls_fx lever[LS_MANIFOLD_MAX]; ///< (state) point i's distance from the points' mean
    ls_fx friction;               ///< (state) mixed coefficient sqrt(mu_a mu_b)
    ls_fx restitution;            ///< (state) mixed coefficient max(e_a, e_b)
} ls_contact;

/// Narrow-phase result of one broad-phase pair, computed in parallel before
/// the serial merge with last tick's contacts (contacts.c).
typedef struct ls_pair_manifold {
    union {
        ls_contact c; ///< the pair's new contact (impulses unset; unused when recycled)
        struct {
            uint32_t arena; ///< the arena (ls_mesh_arena) holding its children
            uint32_t first; ///< its first child record there
            uint32_t count; ///< its child records
        } mesh;             ///< a mesh pair's children instead (why a union: no pair has both)
    };
    uint32_t old;   ///< last tick's contact of the pair (index into contacts_old), or UINT32_MAX
    bool touching;  ///< the contact has points
    bool computed;  ///< this tick's result is here: c and touching (a non-mesh pair with a
                    ///< moving body), or mesh (a mesh pair with one)
    bool recycled;  ///< the contact is last tick's (old) with the points below (contacts.c)
    bool mesh_over; ///< a mesh pair touched more than LS_MESH_PAIR_MAX children
    ls_vec3 point[LS_MANIFOLD_MAX]; ///< a recycled contact's points, moved with the bodies
    ls_fx depth[LS_MANIFOLD_MAX];   ///< and their depths
} ls_pair_manifold;

/// One child of a mesh pair, as the parallel narrow phase found it:
/// `contact` indexes its arena's contacts, UINT32_MAX when it does not touch.
typedef struct ls_mesh_child {
    uint32_t child;
    uint32_t contact;
} ls_mesh_child;

/// Scratch of one worker for the mesh pairs of the parallel narrow phase
/// (contacts.c): each pair's children in triangle order and the contacts of
/// those that touch. A pair that does not fit is left to the serial walk.
typedef struct ls_mesh_arena {
    ls_contact *contacts; ///< [contact_cap]
    ls_mesh_child *recs;  ///< [rec_cap]
    uint32_t *children;   ///< [LS_MESH_PAIR_MAX] one pair's child indices
    uint32_t contact_cap, contact_count;
    uint32_t rec_cap, rec_count;
} ls_mesh_arena;

struct ls_world {
    ls_world_def def;
    /// (scratch) True while ls_world_step runs: calls that change the world
    /// are refused (LS_ERR_LOCKED; ls_world_locked_). Not state.
    bool locked;
    ls_fx dt;
    uint32_t tick;
    ls_rng rng;
    ls_body *bodies;
    uint32_t body_high; ///< slots [0, body_high) have ever been used
    uint32_t body_count;
    uint32_t free_head; ///< free-slot list through next_free (UINT32_MAX = none)
    uint32_t *next_free;
    ls_shape *shapes;
    uint32_t shape_high; ///< shape slots [0, shape_high) have ever been used
    uint32_t shape_count;
    uint32_t shape_free_head; ///< free-slot list through shape_next_free
    uint32_t *shape_next_free;
    ls_geometry *geometry; ///< immutable hull/mesh data (allocated outside the step)
    uint32_t geometry_count, geometry_cap;
    uint32_t *children;       ///< (scratch) triangle indices of one mesh pair (LS_MESH_PAIR_MAX)
    ls_broadphase *bp;        ///< one proxy per shape slot
    struct ls_query_tree *qt; ///< query BVH (query_tree.h): a cache, not state
    ls_pair *pairs;
    uint32_t pair_count; ///< (scratch) broad-phase pairs of this step
    uint32_t max_pairs;
    ls_contact *contacts;        ///< current contacts, sorted by (a, b)
    ls_contact *contacts_old;    ///< previous step's, for warm starting
    ls_solver_scratch solver;    ///< (scratch) states and constraint groups (solver.c)
    ls_graph_edge *edges;        ///< (scratch) constraints as the graph sees them (solver.c)
    uint32_t *active_joints;     ///< (scratch) joint slots solved this tick
    uint32_t active_joint_count; ///< (scratch)
    struct ls_workers *workers;  ///< thread pool (workers.c); NULL = serial
    ls_graph graph;              ///< constraint colouring of this tick (graph.c)
    struct ls_pair_manifold *pair_manifolds; ///< (scratch) narrow phase per pair (max_pairs)
    ls_fx *ccd_toi;      ///< (scratch) continuous collision per swept pair and side (2 max_pairs,
                         ///< ccd.c)
    uint32_t *ccd_pairs; ///< (scratch) the pairs continuous collision sweeps (max_pairs, ccd.c)
    int64_t *body_reach; ///< (scratch) per body slot: its tick_reach this step (contacts.c)
    ls_mesh_arena *mesh_arenas; ///< (scratch) one per worker, NULL with one worker (contacts.c)
    uint32_t mesh_arena_count;
    uint32_t *contact_from; ///< (scratch) per contact slot: the pair whose manifold the
                            ///< walk left in pair_manifolds, copied after it; or UINT32_MAX
    uint32_t contact_count;
    ls_contact_event *begin_events;
    ls_contact_event *end_events;
    uint32_t begin_count, end_count;
    uint32_t *island_parent; ///< (scratch) union-find parent per body slot (island.c)
    uint8_t *island_dynamic; ///< (scratch) per body slot: alive and dynamic (island.c)
    uint8_t *island_awake;   ///< (scratch) per union-find root
    ls_fx *island_min_timer; ///< (scratch) per union-find root
    ls_step_info info;
    ls_profile profile;    ///< the last step's stage times (ls_world_profile; never state)
    uint64_t profile_mark; ///< (scratch) the profile clock at the end of the last stage timed
    // Joints (dynamics/joint.c): slots with a free list like bodies.
    struct ls_joint *joints;   ///< max_joints slots
    uint32_t joint_high;       ///< joint slots [0, joint_high) have ever been used
    uint32_t joint_count;      ///< live joints
    uint32_t joint_free_head;  ///< free-slot list through joint_next_free (UINT32_MAX = none)
    uint32_t *joint_next_free; ///< max_joints links
    uint32_t *body_joint_head; ///< (derived) per body slot: its first joint (UINT32_MAX = none)
    /// (derived) per body slot: bit (o mod 32) set for the other body slot o
    /// of each of its joints without collide_connected (ls_joint_filters_pair_)
    uint32_t *body_joint_filter;
    ls_joint_event *joint_events; ///< joints broken in the step that ended at joint_event_tick
    uint32_t joint_event_count;   ///< entries of joint_events
    uint32_t joint_event_tick;    ///< tick after the step whose breaks joint_events holds
    // Verlet particle systems (particles/particles_internal.h); NULL when the
    // definition has no particle capacity.
    struct ls_particle_store *particles;
    // Ray-cast vehicles (vehicle/vehicle_internal.h): max_vehicles slots.
    struct ls_vehicle *vehicles; ///< max_vehicles slots (at least one)
    uint32_t *vehicle_next_free; ///< free-slot links
    uint32_t vehicle_high;       ///< vehicle slots [0, vehicle_high) have ever been used
    uint32_t vehicle_count;      ///< live vehicles
    uint32_t vehicle_free_head;  ///< free-slot list head (UINT32_MAX = none)
    int32_t game_words[LS_WORLD_GAME_WORDS]; ///< (state) game rules' words (SPEC.md §26.8)
    bool game_words_used;                    ///< (state) a game word was ever set
};

/// Slot of a valid id, or NULL.
ls_body *ls_world_body_(const ls_world *w, ls_body_id id);
/// Id of slot index i.
ls_body_id ls_world_id_of_(const ls_world *w, uint32_t i);
/// A body touching a contact deeper than this many linear slops (measured
/// before this step's solve) does not count as at rest.
#define LS_SLEEP_DEPTH_SLOPS 2
/// A step whose deepest contact with static geometry (before solving) exceeds
/// both this and half the body's thinnest width is reported like an overflow
/// (body, tick): 0.1 m in Q16.16.
#define LS_PENETRATION_REPORT 6554

/// Recycling distance in linear slops (contacts.c): a contact keeps its
/// manifold while each body moved and turned less than half of it.
#define LS_RECYCLE_SLOPS 4
/// Largest speculative margin of a pair, in contact margins (SPEC.md §11.2).
#define LS_SPECULATIVE_MARGINS 5

/// Most triangles of one mesh that one shape may touch in a step (more sets
/// capacity_exceeded and keeps the first in triangle order).
#define LS_MESH_PAIR_MAX 256

/// Recompute derived fields (transform, world inertia) of a body and the
/// world transforms of its shapes, and invalidate the query tree.
void ls_body_update_derived_(ls_world *w, ls_body *b);
/// ls_body_update_derived_ without invalidating the query tree: writes only
/// the body and its shapes, so bodies can be updated in parallel (the caller
/// invalidates once).
void ls_body_update_pose_(const ls_world *w, ls_body *b);
/// Recompute a body's scaled inertia for gyroscopic motion (gyro.c) from inv_inertia.
void ls_body_update_gyro_(ls_body *b);
/// Recompute a body's thickness (ccd.c) from its shapes.
void ls_body_update_thickness_(ls_world *w, ls_body *b);
/// Recompute a shape's world transform from its body's.
void ls_shape_update_xf_(ls_shape *s, const ls_body *b);
/// True when a body's inverse inertia tensor has no off-diagonal term (it is
/// then rotated as a diagonal, as before compound bodies existed).
static inline bool ls_body_inertia_is_diagonal_(const ls_body *b)
{
    const ls_mat3 *m = &b->inv_inertia;
    return m->row[0].y == 0 && m->row[0].z == 0 && m->row[1].x == 0 && m->row[1].z == 0 &&
           m->row[2].x == 0 && m->row[2].y == 0;
}

/// True when a shape sits at its body's centre of mass unrotated.
static inline bool ls_shape_local_identity_(const ls_shape *s)
{
    return ls_vec3_equal(s->local_p, ls_vec3_zero()) && s->local_q.x == 0 && s->local_q.y == 0 &&
           s->local_q.z == 0 && s->local_q.w == LS_FX_ONE;
}

/// Index of the world's copy of the hull or mesh g points at, adding a copy
/// (allocated here, never in a step) unless an identical one is stored;
/// UINT32_MAX with *err filled when out of memory.
uint32_t ls_world_geometry_add_(ls_world *w, const ls_geom *g, ls_error *err);
/// Point g's hull/mesh at geometry entry `index` of the world.
void ls_world_geometry_bind_(const ls_world *w, ls_geom *g, uint32_t index);
/// Free the geometry table.
void ls_world_geometry_clear_(ls_world *w);

/// Id of shape slot i.
ls_shape_id ls_world_shape_id_of_(const ls_world *w, uint32_t i);
/// Wake a body (and reset its sleep timer).
void ls_body_wake_(ls_body *b);
/// The point that carries contact point `point` of shape slot `shape` with its
/// body (contacts.c): a round kind's core point, else the point itself.
ls_vec3 ls_contact_core_(const ls_world *w, uint32_t shape, ls_vec3 point);
/// Narrow phase + persistent contact update for this step (contacts.c).
void ls_world_update_contacts_(ls_world *w);
/// The mesh arenas of a world with `workers` workers (none for one):
/// false when out of memory (contacts.c).
bool ls_mesh_arenas_init_(ls_world *w, uint32_t workers);
/// Free them.
void ls_mesh_arenas_free_(ls_world *w);
/// Bytes ls_mesh_arenas_init_ allocates for a world of this definition.
size_t ls_mesh_arenas_memory_size_(const ls_world_def *def);
/// Velocity and split-impulse solver over awake bodies (solver.c).
void ls_world_solve_(ls_world *w);
/// Island-based waking before the solve and sleeping after it (island.c).
void ls_world_wake_islands_(ls_world *w);
/// Put islands whose bodies have all rested long enough to sleep.
void ls_world_sleep_islands_(ls_world *w);
/// Record an overflow for body slot i this tick.
void ls_world_report_overflow_(ls_world *w, uint32_t i);
/// Continuous collision after integrating positions (ccd.c): fast bodies are
/// moved back to their time of impact with static shapes (and, for bullets,
/// dynamic ones).
void ls_world_continuous_(ls_world *w);

/// End a stage of the step's profile: *stage = the profile clock now minus
/// w->profile_mark, and the mark moves to now. Without ls_world_def's
/// profile_clock it does nothing: the library reads no clock of its own, and
/// the times never reach the state (SPEC.md §11 "Profile").
static inline void ls_world_lap_(ls_world *w, uint64_t *stage)
{
    if (w->def.profile_clock) {
        uint64_t now = w->def.profile_clock(w->def.profile_context);
        *stage = now - w->profile_mark;
        w->profile_mark = now;
    }
}

/// True when `w` is inside ls_world_step (a task of the game's task system or
/// a profile clock called back into it): a call that changes the world is
/// refused with LS_ERR_LOCKED and changes nothing (Box2D's `locked`). Why:
/// the step's stages hold pointers into the slot arrays and counts taken at
/// their start, so a body, joint or particle created or destroyed meanwhile
/// would be read half-made or after it is gone. `err` (may be NULL) is
/// filled when locked.
static inline bool ls_world_locked_(const ls_world *w, ls_error *err)
{
    if (!w || !w->locked) {
        return false;
    }
    ls_error_set(err, LS_ERR_LOCKED,
                 "the world is inside ls_world_step: calls that change it are refused until "
                 "the step returns");
    return true;
}

/// True (and *err filled: LS_ERR_INVALID_ARGUMENT, field "cookie") when a
/// definition was not started from its ls_default_<name>() (LS_DEF_COOKIE,
/// ls/base.h).
bool ls_def_missing_(uint32_t cookie, const char *name, ls_error *err);

#endif
