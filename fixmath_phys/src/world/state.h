// SPDX-License-Identifier: MIT
// The world's state walks (SPEC.md §12 checksum, §13 snapshots): each
// subsystem owns the walk of its private structs, and snapshot.c and the
// checksum are call lists over them, in the order of SPEC.md §12 and §13.
//
// A subsystem's walk is three functions over the shared cursor
// (core/src/cursor.h) and hasher:
//   ls_<sub>_state_io_(c, w)       one routine for both directions: saves
//                                  (c->save) or restores every (state) field
//                                  as 32-bit little-endian words, refusing
//                                  words a world never writes;
//   ls_<sub>_state_hash_(h, w)     the checksum of the same state;
//   ls_<sub>_state_problem_(w, &i) after a restore: what a live slot holds
//                                  that a world could not have written (NULL
//                                  when nothing), so no assert or undefined
//                                  behaviour is reachable from a snapshot.
// Why: snapshot.c held every subsystem's fields (three edits for a new state
// field, five private headers); now a new field is one line in its own
// subsystem's io and hash, next to the struct that holds it.
#ifndef LS_WORLD_STATE_H
#define LS_WORLD_STATE_H

#include "../../../core/src/cursor.h"
#include "ls/checksum.h"
#include "world_internal.h"

/// The snapshot version this engine writes and reads (SPEC.md §13). The build
/// fingerprint's `snapshot=LSSN-<version>` field (SPEC.md §16.8) is made from
/// it: LS_SNAPSHOT_VERSION_TEXT.
#define LS_SNAPSHOT_VERSION      6
#define LS_SNAPSHOT_VERSION_TEXT LS_STATE_STR_(LS_SNAPSHOT_VERSION)
#define LS_STATE_STR_(x)         LS_STATE_STR2_(x)
#define LS_STATE_STR2_(x)        #x

// ---- Field helpers: every field is 32-bit words ----

/// A 4-byte field (ls_fx, int32_t, uint32_t) as one word.
static inline void ls_io32_(ls_cursor *c, void *field)
{
    ls_io_word_(c, field, NULL);
}

static inline void ls_io_vec3_(ls_cursor *c, ls_vec3 *v)
{
    ls_io_word_(c, &v->x, NULL);
    ls_io_word_(c, &v->y, NULL);
    ls_io_word_(c, &v->z, NULL);
}

static inline void ls_io_quat_(ls_cursor *c, ls_quat *q)
{
    ls_io_word_(c, &q->x, NULL);
    ls_io_word_(c, &q->y, NULL);
    ls_io_word_(c, &q->z, NULL);
    ls_io_word_(c, &q->w, NULL);
}

/// A 64-bit field as two words, low first (the same bytes as one
/// little-endian u64).
static inline void ls_io_u64w_(ls_cursor *c, uint64_t *v)
{
    ls_io_u64_(c, v, NULL);
}

/// A bool as a 0/1 word; other values are refused.
static inline void ls_io_bool_(ls_cursor *c, bool *b)
{
    uint32_t v = *b ? 1u : 0u;
    ls_io_u32_(c, &v, NULL);
    ls_cursor_want_(c, v <= 1, "bool");
    *b = v != 0;
}

/// A stored fixed-point word a world never writes (SPEC.md §2: results
/// saturate to +-LS_FX_MAX, so 0x80000000 is never produced).
static inline bool ls_state_fx_ok_(ls_fx v)
{
    return v != INT32_MIN;
}

static inline bool ls_state_vec_ok_(ls_vec3 v)
{
    return ls_state_fx_ok_(v.x) && ls_state_fx_ok_(v.y) && ls_state_fx_ok_(v.z);
}

// ---- Bodies and shapes (world/body_state.c) ----

/// Bodies then shapes: every slot ever used with its free-list link (the
/// counts are the world header's).
void ls_body_state_io_(ls_cursor *c, ls_world *w);
void ls_body_state_hash_(ls_hasher *h, const ls_world *w);
/// Bodies, shapes, their chains, counts and free lists.
const char *ls_body_state_problem_(ls_world *w, uint32_t *where);

// ---- Contacts (dynamics/contact_state.c) ----

/// The contact_count contacts (the count is the world header's).
void ls_contact_state_io_(ls_cursor *c, ls_world *w);
/// Sorted, live shapes of distinct bodies, points and impulses in range;
/// sets each contact's body slots.
const char *ls_contact_state_problem_(ls_world *w, uint32_t *where);

// ---- Geometry table: hulls and meshes (world/geometry_state.c) ----

/// Saves the table's entries, or restores `count` of them: keeps the world's
/// table when the snapshot holds the same entries (a rollback), else rebuilds
/// it with the validating constructors. False when refused (why says more
/// when a constructor refused the data).
bool ls_geometry_state_io_(ls_cursor *c, ls_world *w, uint32_t count, ls_error *why);

// ---- Joints (dynamics/joint_state.c) ----

/// Counts, then every slot ever used with its free-list link.
bool ls_joint_state_io_(ls_cursor *c, ls_world *w);
/// Nothing when the world never had a joint (joint_high 0).
void ls_joint_state_hash_(ls_hasher *h, const ls_world *w);
const char *ls_joint_state_problem_(const ls_world *w, uint32_t *where);
/// Rebuild the per-body joint lists (derived) from the joint slots (after a
/// restore, accepted or refused; dynamics/joint.c).
void ls_joint_rebuild_lists_(ls_world *w);

// ---- Particles (particles/state.c; section bit 0) ----

/// True when the world has particle state to save and hash.
bool ls_particles_state_present_(const ls_world *w);
/// False when refused (including a world without particle capacity).
bool ls_particles_state_io_(ls_cursor *c, ls_world *w);
void ls_particles_state_hash_(ls_hasher *h, const ls_world *w);
const char *ls_particles_state_problem_(ls_world *w, uint32_t *where);
/// After an accepted restore: derived weights and pin counts, events cleared,
/// the overflow record copied to the step info.
void ls_particles_after_restore_(ls_world *w);
/// Empty the store (a refused snapshot leaves the world empty; a snapshot
/// without the section has no particle systems; particles/system.c).
void ls_particles_clear_(ls_world *w);

// ---- Vehicles and game words (vehicle/state.c; section bit 1) ----

/// True when the world has vehicle or game-word state to save and hash.
bool ls_vehicles_state_present_(const ls_world *w);
/// False when refused (counts, a live vehicle's ranges, the free list).
bool ls_vehicles_state_io_(ls_cursor *c, ls_world *w);
void ls_vehicles_state_hash_(ls_hasher *h, const ls_world *w);
/// Vehicles and game words cleared (a snapshot without them, or a refused one).
void ls_vehicles_state_clear_(ls_world *w);

#endif
