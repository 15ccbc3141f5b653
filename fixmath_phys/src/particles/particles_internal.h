// SPDX-License-Identifier: MIT
// Verlet particle systems, private layout (SPEC.md §25).
//
// Storage. The world owns one particle store (ls_particle_store) whose pools
// are sized by ls_world_def (max_particle_systems, max_particles,
// max_particle_constraints) and allocated with the world: a system reserves
// `cap` particles and `con_cap` constraints at creation, as one contiguous
// range of each pool ([first, first + cap), [con_first, con_first + con_cap)).
// Constraints name particles by their index in the system, so ranges can be
// moved: destroying a system compacts the pools (outside any step). Where a
// range sits in a pool is never observable: snapshots store each system's
// particles and constraints in slot order and restore packs them in slot
// order, the checksum hashes by (system slot, index), nothing iterates by pool
// position. Positions x and x* are separate arrays (the stick loop reads x
// only); the rest of a particle's state is ls_particle.
//
// Order (SPEC.md §25.5): systems in slot order (= id order), particles in
// index order, constraints in creation order, which is part of the input (a
// Gauss-Seidel relaxation depends on it; peers that create the same things in
// the same order get the same bits). Every field is tagged (state) (in
// snapshots and the checksum), (derived) (rebuilt from state) or (scratch)
// (within one step).
//
// Collisions (collide*.c, friction.c, coupling.c) plug into the pipeline of
// step.c through the hooks declared at the end; their per-world scratch is
// theirs (struct ls_particle_collide), their per-particle scratch is
// ls_particle_contact.
#ifndef LS_PARTICLES_INTERNAL_H
#define LS_PARTICLES_INTERNAL_H

#include "../collision/geom.h"
#include "../world/world_internal.h"
#include "ls/particles.h"

/// Particle position range, each component (SPEC.md §25.2): ±2048 m.
#define LS_PARTICLE_POS_MAX LS_FX_INT(2048)
/// Rest lengths of sticks and ranges: 0.001..128 m (raw 66..2^23).
#define LS_PARTICLE_LEN_MIN 66
#define LS_PARTICLE_LEN_MAX LS_FX_INT(128)
/// Most torn-constraint events kept per step (more are torn but not listed,
/// and capacity_exceeded is set).
#define LS_PARTICLE_EVENTS_MAX 1024
/// Stream of a system's PRNG (ls_rng_make(seed, stream)): "particle" in ASCII.
#define LS_PARTICLE_RNG_STREAM 0x7061727469636c65u

/// Flag bits of ls_pcon.flags (state).
enum {
    LS_PCON_F_ENABLED = 1u, ///< projected (ls_particle_constraint_set_enabled)
    LS_PCON_F_TORN = 2u,    ///< broken by its tear ratio (never projected again)
    LS_PCON_F_ALL = 3u,     ///< every defined bit
};

/// Flag bits of ls_particle_system.flags (state).
enum {
    LS_PSYS_F_COLLIDE_PARTICLES = 1u, ///< collides with particles of other systems
    LS_PSYS_F_ALL = 1u,               ///< every defined bit
};

/// One particle, without its positions (ls_particle_store.x, .x_old).
typedef struct ls_particle {
    ls_fx inv_mass; ///< (state) 1/kg as given; 0 = immovable
    ls_fx radius;   ///< (state) collision radius, m
    ls_vec3 force;  ///< (state) force for the next step, N (cleared by the step)
    ls_fx w;        ///< (derived) effective inverse mass: inv_mass, or 0 while an
                    ///< enabled pin holds the particle (what constraints use)
    uint32_t pins;  ///< (derived) enabled pins holding this particle
    uint32_t stamp; ///< (scratch) last batch touching it, while batches are built (step.c)
} ls_particle;

/// Per-particle collision scratch (collide*.c). Reset by
/// ls_particles_collide_prepare_ at the start of each step's relaxation.
typedef struct ls_particle_contact {
    ls_fx depth_sum;     ///< (scratch) sum of the projection depths d_p of this step
                         ///< (friction post-pass, seed §4 item 14)
    ls_vec3 normal;      ///< (scratch) unit normal of the last projection, out of the shape
    uint32_t shape;      ///< (scratch) shape slot last touched (UINT32_MAX: none)
    uint32_t body;       ///< (scratch) its body slot (UINT32_MAX: none)
    uint32_t cand_first; ///< (scratch) first candidate of this particle (collide.c's list)
    uint32_t cand_count; ///< (scratch) candidates gathered by prepare
} ls_particle_contact;

/// One constraint of a system (kinds: one file each, dispatched by
/// ls_pcon_kind_of_). Particle indices are the system's (0-based).
typedef struct ls_pcon {
    // The fields the distance projection reads come first (one cache line
    // holds them for two constraints' worth of the stick loop).
    uint8_t type;             ///< (state) ls_particle_constraint_type
    uint8_t flags;            ///< (state) LS_PCON_F_* bits
    uint8_t batch;            ///< (derived) 1: starts a batch (a run of one kind in which no two
                              ///< constraints share a particle; step.c may split it over workers)
    uint8_t ishift;           ///< (derived) stick: 28 - bitlen(rest), 4..21 (stick.h)
    uint32_t a, b;            ///< (state) particles (pin: a; angle: vertex a, arm b)
    ls_fx rest;               ///< (state) stick: rest length; range/angle: shortest length
                              ///< (angle: of |c - b|), 0 = none
    ls_fx wa, wb;             ///< (derived) share of the correction moved by the first and the
                              ///< second particle (angle: b and c), times stiffness; both 0 when
                              ///< the constraint is disabled or torn (ls_pcon_pair_weights_)
    int32_t inv_rest;         ///< (derived) stick: (2^bitlen(rest) / rest)^2 in Q28 (stick.h)
    uint32_t c;               ///< (state) angle: the second arm's particle
    ls_fx rest_max;           ///< (state) range/angle: longest length, 0 = none
    ls_fx stiffness;          ///< (state) (0, 1]
    ls_fx tear;               ///< (state) tear ratio, 0 = never
    ls_vec3 target;           ///< (state) pin: world point, or point in the body's frame
    uint32_t body;            ///< (state) pin: body slot, UINT32_MAX = a world point
    uint32_t body_generation; ///< (state) pin: the body's generation at creation
} ls_pcon;

/// A stick kernel (stick.h): relaxes n consecutive sticks of one batch once
/// (approx mode), x the system's positions.
typedef void ls_stick_kernel_fn(ls_vec3 *x, const ls_pcon *c, uint32_t n);

/// Embedded rigid shape of a particle body (kind LS_PARTICLES_BODY).
typedef struct ls_particle_embed {
    uint8_t arrangement; ///< (state) ls_particle_body_kind
    ls_vec3 extent;      ///< (state) tetra: (s, s, s) with particles at c0 - s/4 (1,1,1)
                         ///< + s e_k; box: the particle box's half extents
    ls_geom geom;        ///< (state) embedded shape (hull pointer (derived) from geometry)
    uint32_t geometry;   ///< (state) hull: index in the world's geometry table, else
                         ///< UINT32_MAX
    ls_vec3 local_p;     ///< (state) shape position in the body frame (from the centroid)
    ls_quat local_q;     ///< (state) shape orientation in the body frame
} ls_particle_embed;

/// One system slot.
typedef struct ls_particle_system {
    uint32_t generation;     ///< (state) id generation of this slot
    bool alive;              ///< (state)
    uint8_t kind;            ///< (state) ls_particle_system_kind
    uint8_t stick_mode;      ///< (state) ls_stick_mode
    uint32_t flags;          ///< (state) LS_PSYS_F_* bits
    uint32_t iterations;     ///< (state) 1..64
    ls_fx damping;           ///< (state) 0..1 per tick
    ls_fx gravity_scale;     ///< (state)
    ls_fx friction;          ///< (state) 0..4
    ls_vec3 acceleration;    ///< (state) mean wind, m/s^2
    ls_fx turbulence;        ///< (state) m/s^2
    ls_rng rng;              ///< (state) turbulence draws
    uint32_t category;       ///< (state)
    uint32_t mask;           ///< (state)
    uint64_t user_data;      ///< (state) not in the checksum
    uint32_t count, cap;     ///< (state) particles used / reserved
    uint32_t con_count;      ///< (state) constraints used
    uint32_t con_cap;        ///< (state) constraints reserved
    ls_particle_embed embed; ///< (state) kind LS_PARTICLES_BODY only (else zero)
    uint32_t first;          ///< (derived) first particle in the store's pools
    uint32_t con_first;      ///< (derived) first constraint in the store's pool
    bool batches_dirty;      ///< (derived) ls_pcon.batch must be rebuilt before relaxing
} ls_particle_system;

/// Per-world collision scratch owned by collide.c; opaque here.
struct ls_particle_collide;

/// Every particle of a world (ls_world.particles).
typedef struct ls_particle_store {
    uint32_t max_systems, max_particles, max_constraints; ///< capacities (world def)
    ls_particle_system *systems;                          ///< max_systems slots
    uint32_t system_high;         ///< slots [0, system_high) have ever been used
    uint32_t system_count;        ///< live systems
    uint32_t free_head;           ///< free-slot list through next_free (UINT32_MAX = none)
    uint32_t *next_free;          ///< max_systems links (state, like bodies')
    uint32_t particles_used;      ///< (derived) sum of live systems' cap
    uint32_t constraints_used;    ///< (derived) sum of live systems' con_cap
    ls_vec3 *x;                   ///< (state) positions, max_particles
    ls_vec3 *x_old;               ///< (state) previous positions x*
    ls_particle *p;               ///< particle data
    ls_particle_contact *contact; ///< (scratch) collision scratch per particle
    ls_pcon *con;                 ///< max_constraints constraints
    ls_particle_event *events;    ///< torn in the step that ended at event_tick
    uint32_t event_count;         ///< entries of events
    uint32_t event_tick;          ///< tick after the step whose tears events holds
    uint32_t overflow_system;     ///< (state) slot + 1 of the first overflowing system, 0 none
    uint32_t overflow_generation; ///< (state) its generation
    uint32_t overflow_particle;   ///< (state) its particle
    struct ls_particle_collide *collide; ///< collide.c's scratch (NULL if it needs none)
    ls_stick_kernel_fn *stick_kernel;    ///< approx-mode stick loop: scalar or AVX2 (the
                                         ///< world def's simd; the same bits, not state)
} ls_particle_store;

// ---- Store lifetime (system.c), called by world.c ----

/// Fill *err (may be NULL) with code, field and a printf-style message; returns code.
ls_result ls_particles_fail_(ls_error *err, ls_result code, const char *field, const char *fmt, ...)
    LS_PRINTF(4, 5);
/// Validate a system definition; field names get `prefix` ("system." in a
/// builder). With check_capacity, also the world's free pool space.
ls_result ls_particles_check_system_def_(const ls_world *w, const ls_particle_system_def *d,
                                         const char *prefix, bool check_capacity, ls_error *err);
/// Take a slot and reserve the pools for a validated definition.
ls_particle_system *ls_particles_new_system_(ls_world *w, const ls_particle_system_def *def,
                                             uint8_t kind, uint32_t *slot);
/// Validate a particle definition (field names with `prefix`).
ls_result ls_particles_check_particle_def_(const ls_particle_def *d, const char *prefix,
                                           ls_error *err);
/// Append a validated particle to a system with room; returns its index.
uint32_t ls_particles_push_(ls_world *w, ls_particle_system *s, const ls_particle_def *d);
/// Validate and append a constraint (constraint.c); UINT32_MAX with *err on error.
uint32_t ls_particles_push_constraint_(ls_world *w, ls_particle_system *s,
                                       const ls_particle_constraint_def *d, ls_error *err);

/// Bytes ls_particles_create_ allocates for this definition (0 without particles).
size_t ls_particles_memory_size_(const ls_world_def *def);
/// Allocate the store (NULL when the definition has no particles: max_particles
/// or max_particle_systems is 0); *ok = false when out of memory.
ls_particle_store *ls_particles_create_(const ls_world_def *def, bool *ok);
/// Free the store (NULL is ignored).
void ls_particles_destroy_(ls_particle_store *ps);
/// The live system of an id, or NULL.
ls_particle_system *ls_particle_system_(const ls_world *w, ls_particle_system_id id);
/// The id of system slot i.
ls_particle_system_id ls_particle_system_id_of_(const ls_world *w, uint32_t i);
/// Recompute the derived fields of every system (ranges packed in slot order,
/// effective inverse masses, pin counts, constraint weights): after restore.
void ls_particles_rebuild_(ls_world *w);
/// Recompute particle i's effective inverse mass and the weights of every
/// constraint of the system (after a mass or pin change).
void ls_particles_update_weights_(ls_world *w, ls_particle_system *s);
/// Record an overflow of particle i of system slot si this tick (SPEC.md §2).
void ls_particles_report_overflow_(ls_world *w, uint32_t si, uint32_t i);

// ---- Constraint kinds: one table, one file per kind ----

/// One constraint kind. `init` validates a definition (particles exist, ranges;
/// fields named as in ls_particle_constraint_def) and fills the state fields;
/// `project` relaxes n consecutive constraints of this kind once, in order;
/// `weights` derives wa, wb from the particles' effective inverse masses.
typedef struct ls_pcon_kind {
    const char *name;
    ls_result (*init)(const ls_world *w, const ls_particle_system *s,
                      const ls_particle_constraint_def *d, ls_pcon *c, ls_error *err);
    void (*project)(ls_world *w, ls_particle_system *s, ls_pcon *c, uint32_t n);
    void (*weights)(const ls_particle_store *ps, const ls_particle_system *s, ls_pcon *c);
} ls_pcon_kind;

/// Refuse a particle index that the system does not have (field = name).
ls_result ls_pcon_check_index_(const ls_particle_system *s, uint32_t i, const char *name,
                               ls_error *err);
/// Refuse stiffness outside (0, 1] and a tear ratio that is neither 0 nor 1..64.
ls_result ls_pcon_check_common_(const ls_particle_constraint_def *d, bool tear, ls_error *err);
/// The current distance between particles a and b of a system (§4 len).
ls_fx ls_pcon_distance_(const ls_world *w, const ls_particle_system *s, uint32_t a, uint32_t b);
/// True when c is enabled and not torn.
static inline bool ls_pcon_active_(const ls_pcon *c)
{
    return (c->flags & (LS_PCON_F_ENABLED | LS_PCON_F_TORN)) == LS_PCON_F_ENABLED;
}

/// The kind table entry of a type (NULL when out of range).
const ls_pcon_kind *ls_pcon_kind_of_(uint32_t type);
extern const ls_pcon_kind ls_pcon_stick_kind_;
extern const ls_pcon_kind ls_pcon_range_kind_;
extern const ls_pcon_kind ls_pcon_pin_kind_;
extern const ls_pcon_kind ls_pcon_angle_kind_;

/// Mass-weighted shares of a two-particle constraint (stick.c): with effective
/// inverse masses w_a, w_b: wa = round(s*w_a/(w_a+w_b)), wb = s - wa when the
/// masses differ, wb = wa when they are equal (symmetric updates keep the sum
/// of positions exact); 0, 0 when both are immovable.
void ls_pcon_pair_weights_(ls_fx w_a, ls_fx w_b, ls_fx stiffness, ls_fx *wa, ls_fx *wb);
/// The `weights` of sticks and ranges: ls_pcon_pair_weights_ of particles a, b.
void ls_pcon_pair_weights_of_(const ls_particle_store *ps, const ls_particle_system *s, ls_pcon *c);
/// Restore the bound of a range (rest = min, rest_max = max; 0 = none) that the
/// pair x_a, x_b violates, with c's weights (range.c; angles use it on b, c).
void ls_pcon_project_range_(ls_vec3 *xa, ls_vec3 *xb, const ls_pcon *c, uint8_t mode);
/// The world point a pin's particle is held at now (pin.c).
ls_vec3 ls_pcon_pin_target_(const ls_world *w, const ls_pcon *c, bool *held);

// ---- Pipeline (step.c, integrate.c) ----

/// The particle stage of ls_world_step (SPEC.md §11 stage 6c, §25.5).
void ls_particles_step_(ls_world *w);
/// Verlet integration of one system (integrate.c), pins applied.
void ls_particles_integrate_(ls_world *w, ls_particle_system *s);
/// Per-tick displacement a*dt^2 of an acceleration a (m/s^2): round(a*dt_raw^2 / 2^32).
ls_vec3 ls_particles_accel_step_(ls_vec3 a, ls_fx dt);

// ---- Particle bodies (body.c) ----

/// The body frame of a particle body from its particles (centroid, Gram-Schmidt).
void ls_particle_body_xform_(const ls_world *w, const ls_particle_system *s, ls_xform *xf);
/// Weights c[k] (Q16.16, summing to 1 exactly) of the system's particles k <
/// (4 or 8) that reproduce the body-frame point p as sum c_k x_k (seed §2.5,
/// §5.9: tetra barycentric, box trilinear). Returns the number of particles.
uint32_t ls_particle_body_weights_(const ls_particle_system *s, ls_vec3 p, ls_fx *c);

// ---- Collision hooks (collide.c). Called by step.c in this order:
// prepare once per tick after every system is integrated (gather candidate
// shapes per particle from x* and x; reset ls_particle_contact), then per
// system in slot order: for each iteration it, the constraint pass then
// collide_iteration(w, s, it); after the iterations friction(w, s); after all
// systems couple(w) (impulses to dynamic bodies, waking them). ----

/// Once per tick, before the relaxation of any system.
void ls_particles_collide_prepare_(ls_world *w);
/// Inside each relaxation iteration of system s, after its constraint pass.
void ls_particles_collide_iteration_(ls_world *w, ls_particle_system *s, uint32_t it);
/// After the relaxation of system s: friction from the accumulated depths.
void ls_particles_friction_(ls_world *w, ls_particle_system *s);
/// After every system: two-way coupling with dynamic bodies.
void ls_particles_couple_(ls_world *w);
/// Allocate collide.c's per-world scratch into ps->collide (at world creation);
/// false when out of memory.
bool ls_particles_collide_init_(ls_particle_store *ps, const ls_world_def *def);
/// Free collide.c's scratch.
void ls_particles_collide_free_(ls_particle_store *ps);
/// Bytes ls_particles_collide_init_ allocates.
size_t ls_particles_collide_memory_size_(const ls_world_def *def);

#endif
