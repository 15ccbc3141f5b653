// SPDX-License-Identifier: MIT
// Private layout of the particle collision stage (SPEC.md §25.6): contact
// constraints against rigid shapes, particle-particle pairs between systems,
// the friction post-pass and two-way coupling. Everything here is (scratch):
// rebuilt by ls_particles_collide_prepare_ every tick from the state (x, x*,
// the shapes' poses), never saved, never hashed. Memory is sized at world
// creation (ls_particles_collide_init_); the step never allocates.
//
// Files: collide.c (hooks, scratch, the projection of one iteration),
// collide_shapes.c (candidates from the query tree, one narrow-phase call per
// particle and candidate per tick through the shape registry), collide_pairs.c
// (the grid of particles between systems), friction.c, coupling.c.
#ifndef LS_PARTICLES_PCOLLIDE_H
#define LS_PARTICLES_PCOLLIDE_H

#include "particles_internal.h"

/// Skin (raw, 1/128 m): shapes and particles closer than this (plus the
/// tick's displacement) become contacts; a contact only pushes once violated.
#define LS_PCOLLIDE_SKIN 512
/// Most contact constraints of one particle in one tick (more set
/// capacity_exceeded; the first in (shape slot, triangle) order are kept).
#define LS_PCOLLIDE_PER_PARTICLE 8
/// Shapes within this much more (raw, 5 cm) of a particle's swept sphere
/// are its candidates even without a contact: a pending contact checks in
/// every iteration whether the constraints brought the particle near.
#define LS_PCOLLIDE_NEAR 3277
/// Most mesh triangles one particle (or embedded shape) is tested against.
#define LS_PCOLLIDE_TRIS 64
/// Most particles in one weighted contact (a box particle body has 8).
#define LS_PCOLLIDE_WEIGHTS 8
/// Most partners one particle collects in the pair search (more: capacity_exceeded).
#define LS_PCOLLIDE_PARTNERS 32

/// One contact constraint of this tick: the point p (a particle, or the
/// weighted point sum c_k x_k of a particle body) must satisfy
/// dot(n, p) >= c. Projection moves p by (c - dot(n, p)) n when violated.
/// A pending contact (a candidate shape that was out of reach at prepare)
/// has no plane yet: each iteration checks whether the particle came near
/// (round: its core distance; else its box) and then makes the plane.
typedef struct ls_pcontact {
    ls_vec3 n;      ///< unit push direction: out of the shape, towards the particle
    int64_t c;      ///< Q32.32 bound of dot(n, p)
    ls_fx push;     ///< sum of this tick's projections along n (coupling)
    ls_fx pen0;     ///< particle and body approach along n this tick (within the violation)
    uint32_t shape; ///< shape slot
    uint32_t body;  ///< its body slot
    uint32_t first; ///< count 1: store index of the particle; else first entry in wt_*
    uint32_t count; ///< 1 for a particle, else the particles of a weighted point
    ls_fx inv_mass; ///< effective inverse mass of the point: w, or sum w_k c_k^2 (1/kg)
    ls_vec3 point;  ///< weighted: the embedded shape's point at prepare; pending round: core a
    bool pending;   ///< no plane yet
    bool fixed;     ///< its body does not move in the coupling (static, kinematic)
    bool round;     ///< pending: the shape is round (core a..b, radius)
    bool triangle;  ///< a cloth triangle's contact (collide_cloth.c)
    ls_vec3 core_b; ///< pending round: core b
    ls_fx radius;   ///< pending round: radius
    ls_vec3 motion; ///< pending round: the body's motion this tick (ls_pshape.m)
    ls_aabb box;    ///< pending: the shape's box
    ls_fx gap;      ///< pending: |x - x*|_1 must reach this before the particle can be near
} ls_pcontact;

/// A pending contact as the iterations check it (compact).
typedef struct ls_ppend {
    uint32_t particle; ///< store index
    ls_fx gap;         ///< the contact's gap (ls_pcontact.gap)
    uint32_t contact;  ///< index in contacts
} ls_ppend;

/// A shape near the system being prepared (collide_shapes.c).
typedef struct ls_pshape {
    uint32_t slot;  ///< shape slot
    bool round;     ///< a round kind (registry: `round` with a proxy of 1-2 points)
    bool unbounded; ///< a half-space (a plane): its contact is exact at any distance
    ls_aabb box;    ///< leaf box of the query tree (planes: huge)
    ls_vec3 a, b;   ///< round: world core segment (a == b for a sphere)
    ls_fx radius;   ///< round: radius about the core
    ls_vec3 m;      ///< round: its body's motion this tick (ls_pcollide_body_motion_)
} ls_pshape;

/// One particle-particle pair between two systems (store indices a, b;
/// (system slot, index) of a before b's).
typedef struct ls_ppair {
    uint32_t a, b;   ///< store indices
    uint32_t sa, sb; ///< system slots
    ls_fx rsum;      ///< radius_a + radius_b
    ls_fx wa, wb;    ///< shares of the correction moved by a and b (sum 1, or 0 if both immovable)
    ls_fx depth_sum; ///< this tick's projected overlap, summed (friction's limit)
    ls_vec3 n;       ///< the last projection's direction, a to b
} ls_ppair;

/// One particle in the pair grid.
typedef struct ls_pgrid_entry {
    int32_t cell[3]; ///< grid cell
    uint32_t index;  ///< store index
    uint32_t slot;   ///< system slot
    uint32_t pi;     ///< index in the system
    ls_fx reach;     ///< radius + displacement + skin: pairs are within reach_a + reach_b
} ls_pgrid_entry;

/// Per-body impulse accumulator of the coupling (wide sums, exact).
typedef struct ls_pimpulse {
    int64_t lin[3]; ///< sum of impulses, N s (Q16.16 raw)
    int64_t ang[3]; ///< sum of r x impulse, N m s (Q16.16 raw)
} ls_pimpulse;

struct ls_particle_collide {
    uint32_t max_particles, max_systems, max_shapes, max_bodies;
    // Contacts of this tick, systems in slot order, each system's particles in
    // index order, then its weighted contacts.
    ls_pcontact *contacts;
    uint32_t contact_cap, contact_count;
    uint32_t *sys_first; ///< [max_systems] first contact of each system slot
    uint32_t *sys_count; ///< [max_systems] its contacts
    // Per system s, at offsets [sys_first[s], + sys_count[s]): the indices of
    // its contacts with a plane (projected every iteration, in order; a
    // pending contact that gets its plane is appended) and of its pending ones.
    uint32_t *active;     ///< [contact_cap]
    ls_ppend *pend;       ///< [contact_cap]
    uint32_t *act_count;  ///< [max_systems]
    uint32_t *pend_count; ///< [max_systems]
    uint32_t *wt_index;   ///< weighted contacts: store indices
    ls_fx *wt_c;          ///< and each particle's weight c (the point is sum c x)
    ls_vec3 *wt_d;        ///< and its move per unit push (n w c / sum w c^2, or rigid)
    uint32_t wt_cap, wt_count;
    // Shapes near one system (ascending slot) and one particle's triangles.
    uint32_t *slots;   ///< [max_shapes] sort scratch
    ls_pshape *shapes; ///< [max_shapes]
    uint32_t shape_count;
    uint32_t tris[LS_PCOLLIDE_TRIS];
    uint8_t *quad_off; ///< [max_particles] cloth quads without triangles (collide_cloth.c)
    uint32_t *pins;    ///< [max_particles] a cloth's immovable particles (taut cloth)
    // Per particle (store index): the correction friction applied (coupling),
    // the largest push of one contact so far (its normal, shape and body are
    // the ones ls_particle_contact records for friction), and whether a
    // static or kinematic shape pushed it this tick.
    ls_vec3 *fric;      ///< [max_particles]
    ls_fx *best;        ///< [max_particles]
    uint8_t *fixed_hit; ///< [max_particles]
    // Pairs between systems.
    ls_pgrid_entry *grid;   ///< [max_particles] entries in canonical order
    ls_pgrid_entry *sorted; ///< [max_particles] entries by bucket
    uint32_t *bucket;       ///< [bucket_count + 1] first entry of each bucket
    uint32_t bucket_count;  ///< power of two >= 2 max_particles (0: no pair search)
    uint32_t grid_count;
    ls_aabb *sys_box; ///< [max_systems] box of each system's particles this tick
    ls_ppair *pairs;
    uint32_t pair_cap, pair_count;
    // Coupling.
    ls_pimpulse *impulse; ///< [max_bodies]
    uint8_t *touched;     ///< [max_bodies] body has an impulse this tick
    uint32_t *body_list;  ///< [max_bodies] touched bodies, in first-touch order
    uint32_t body_count;
};

/// Append a contact for a system being prepared; false (and capacity_exceeded) when full.
ls_pcontact *ls_pcollide_push_(ls_world *w, struct ls_particle_collide *pc);
/// Shapes near system s this tick (its particles' swept boxes, box) into
/// pc->shapes, filtered by category and mask, ascending slot (collide_shapes.c).
void ls_pcollide_gather_shapes_(ls_world *w, const ls_particle_system *s, ls_aabb box);
/// Contacts of the particles of system slot si (collide_shapes.c).
void ls_pcollide_particle_contacts_(ls_world *w, uint32_t si);
/// Append a weighted contact (seed §2.5, §5.9) on the point sum c_q x_q of
/// particles index[q] (store indices, count <= LS_PCOLLIDE_WEIGHTS): dot(n, p)
/// >= bound (Q32.32). Without `moves` a push d moves particle q by d w_q c_q /
/// W along n, W = sum w_q c_q^2 (equal masses: lambda = 1 / sum c^2, the
/// seed's exact simplification, free of lengths); with `moves` particle q
/// moves by d moves[q] and W is `inv_mass`. shape UINT32_MAX: none. NULL when
/// every particle is immovable or the buffers are full (collide_shapes.c).
ls_pcontact *ls_pcollide_weighted_(ls_world *w, uint32_t shape, ls_vec3 n, int64_t bound,
                                   ls_vec3 point, const uint32_t *index, const ls_fx *c,
                                   uint32_t count, const ls_vec3 *moves, ls_fx inv_mass);
/// Contacts of dynamic bodies' shapes with the triangles of cloth system si
/// (collide_cloth.c), appended after its particle contacts.
void ls_pcollide_cloth_contacts_(ls_world *w, uint32_t si);
/// Taut-cloth contacts of system si (collide_cloth.c): for each of its
/// triangle contacts with a dynamic, awake body whose particles are pushed
/// beyond their tethers to the pins, a pinned-style contact (count 0) in the
/// tick's list, solved with the pinned contacts (coupling.c).
void ls_pcollide_cloth_tethers_(ls_world *w, uint32_t si, ls_fx quarter_rate);
/// Contacts of the embedded shape of particle body si (collide_shapes.c).
void ls_pcollide_body_contacts_(ls_world *w, uint32_t si);
/// How far p violates dot(n, p) >= c, raw, rounded up (0 when it holds).
ls_fx ls_pcollide_violation_(int64_t c, ls_vec3 p, ls_vec3 n);
/// Turn a pending contact into a plane if the particle came near (from x*
/// with the current displacement); true when it did (collide_shapes.c).
bool ls_pcollide_activate_(ls_world *w, ls_pcontact *c);
/// Find this tick's particle pairs between systems (collide_pairs.c).
void ls_pcollide_find_pairs_(ls_world *w);
/// Project the pairs that involve system slot si once (collide_pairs.c).
void ls_pcollide_project_pairs_(ls_world *w, uint32_t si);
/// The friction rule (friction.c): the part t of displacement dx tangential to
/// unit n, whole when |t| <= limit (sticks), else shortened to limit (slides),
/// in *out; false when t is zero (nothing to correct).
bool ls_pcollide_friction_correction_(ls_vec3 dx, ls_vec3 n, ls_fx limit, ls_vec3 *out);
/// Friction of this tick's particle pairs, after every system (collide_pairs.c).
void ls_pcollide_pair_friction_(ls_world *w);
/// Body displacement over one tick at world point p (v + w x r) dt; zero for a
/// body that does not move (coupling.c).
ls_vec3 ls_pcollide_body_motion_(const ls_world *w, uint32_t body, ls_vec3 p);
/// Effective inverse mass (1/kg) of a dynamic body at world point p along unit
/// n: 1/m + (r x n) . I^-1 (r x n); 0 for a body that is not dynamic (coupling.c).
ls_fx ls_pcollide_body_inv_mass_(const ls_world *w, uint32_t body, ls_vec3 p, ls_vec3 n);

#endif
