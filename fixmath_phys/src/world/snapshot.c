// SPDX-License-Identifier: MIT
// World checksum (SPEC.md §12) and snapshots (SPEC.md §13): call lists over
// the subsystems' state walks (state.h), in the order of those sections.
// Both write each field little-endian; nothing hashes or copies raw structs,
// so padding and byte order never leak in.
#include "ls/checksum.h"
#include "query_tree.h"
#include "state.h"

#include <stdlib.h>
#include <string.h>

#define SNAP_MAGIC 0x4E53534Cu // "LSSN"
// Version 6 (Solver v3): contacts carry one friction, twist and rolling
// impulse per manifold; after the joints a section word says which of the
// particle (bit 0) and vehicle + game-word (bit 1) sections follow. Versions
// 3 to 5 were written by Solver v2 (engine 0.2): their contact impulses mean
// something else, so they are refused by name (SPEC.md §13).
#define SNAP_VERSION           ((uint32_t)LS_SNAPSHOT_VERSION)
#define SNAP_SECTION_PARTICLES 1u
#define SNAP_SECTION_VEHICLES  2u

// Particles and vehicles hash nothing (and save no section) in a world that
// never had them, so its checksum is the one it had before they existed; the
// same for joints (joint_state.c).
uint64_t ls_world_checksum(const ls_world *w)
{
    ls_hasher h;
    ls_hasher_init(&h);
    ls_hasher_put_u32(&h, w->tick);
    ls_hasher_put_u64(&h, w->rng.state);
    ls_hasher_put_u64(&h, w->rng.inc);
    ls_body_state_hash_(&h, w);
    if (w->joint_high > 0) {
        ls_joint_state_hash_(&h, w);
    }
    if (ls_particles_state_present_(w)) {
        ls_particles_state_hash_(&h, w);
    }
    if (ls_vehicles_state_present_(w)) {
        ls_vehicles_state_hash_(&h, w);
    }
    return ls_hasher_digest(&h);
}

// The whole state, in the order of SPEC.md §13. Restore validates counts
// before using them, so a corrupt buffer is refused instead of read past.
static bool io_world(ls_cursor *c, ls_world *w, ls_error *why)
{
    uint32_t magic = SNAP_MAGIC, max_b = w->def.max_bodies;
    uint32_t version = SNAP_VERSION;
    uint32_t max_s = w->def.max_shapes, geometry_count = w->geometry_count;
    ls_io32_(c, &magic);
    ls_io32_(c, &version);
    ls_io32_(c, &max_b);
    ls_io32_(c, &max_s);
    if (!c->save && (magic != SNAP_MAGIC || version != SNAP_VERSION || max_b != w->def.max_bodies ||
                     max_s != w->def.max_shapes)) {
        return false;
    }
    ls_io32_(c, &w->tick);
    ls_io_u64w_(c, &w->rng.state);
    ls_io_u64w_(c, &w->rng.inc);
    ls_io32_(c, &w->body_high);
    ls_io32_(c, &w->body_count);
    ls_io32_(c, &w->free_head);
    ls_io32_(c, &w->shape_high);
    ls_io32_(c, &w->shape_count);
    ls_io32_(c, &w->shape_free_head);
    ls_io32_(c, &geometry_count);
    ls_io32_(c, &w->contact_count);
    ls_io32_(c, &w->info.overflow_count);
    ls_io32_(c, &w->info.overflow_tick);
    ls_io32_(c, &w->info.overflow_body.index1);
    ls_io32_(c, &w->info.overflow_body.generation);
    if (!c->ok || w->body_high > w->def.max_bodies || w->shape_high > w->def.max_shapes ||
        w->contact_count > w->def.max_contacts) {
        return false;
    }
    if (!ls_geometry_state_io_(c, w, geometry_count, why)) {
        return false;
    }
    ls_body_state_io_(c, w);
    ls_contact_state_io_(c, w);
    if (!ls_joint_state_io_(c, w)) {
        return false;
    }
    uint32_t sections = (ls_particles_state_present_(w) ? SNAP_SECTION_PARTICLES : 0u) |
                        (ls_vehicles_state_present_(w) ? SNAP_SECTION_VEHICLES : 0u);
    ls_io32_(c, &sections);
    if (!c->ok || (sections & ~(SNAP_SECTION_PARTICLES | SNAP_SECTION_VEHICLES)) != 0) {
        return false;
    }
    if (!c->save && (sections & SNAP_SECTION_PARTICLES) && !w->particles) {
        if (why) {
            ls_error_set(why, LS_ERR_INCOMPATIBLE,
                         "snapshot with particle systems restored into a world without "
                         "particle capacity (max_particles or max_particle_systems is 0)");
        }
        return false;
    }
    if (!(sections & SNAP_SECTION_PARTICLES)) {
        if (!c->save) {
            ls_particles_clear_(w);
        }
    } else if (!ls_particles_state_io_(c, w)) {
        return false;
    }
    if (!(sections & SNAP_SECTION_VEHICLES)) {
        if (!c->save) {
            ls_vehicles_state_clear_(w);
        }
        return c->ok;
    }
    return ls_vehicles_state_io_(c, w);
}

size_t ls_world_snapshot_size(const ls_world *w)
{
    ls_cursor c = ls_cursor_saver_(NULL, SIZE_MAX);
    io_world(&c, (ls_world *)w, NULL); // counting pass: writes nothing
    return c.pos;
}

size_t ls_world_snapshot_save(const ls_world *w, uint8_t *buf, size_t size)
{
    ls_cursor c = ls_cursor_saver_(buf, size);
    return io_world(&c, (ls_world *)w, NULL) ? c.pos : 0;
}

// Everything restore must prove before a step may use the state; returns what
// is wrong, or NULL (*where: the slot or index).
static const char *state_problem(ls_world *w, uint32_t *where)
{
    const char *why = ls_body_state_problem_(w, where);
    why = why ? why : ls_contact_state_problem_(w, where);
    why = why ? why : ls_joint_state_problem_(w, where);
    return why ? why : ls_particles_state_problem_(w, where);
}

static void leave_empty(ls_world *w)
{
    w->body_high = w->body_count = w->contact_count = 0;
    w->shape_high = w->shape_count = 0;
    w->free_head = w->shape_free_head = UINT32_MAX;
    w->joint_high = w->joint_count = 0;
    w->joint_free_head = UINT32_MAX;
    ls_particles_clear_(w);
    ls_vehicles_state_clear_(w);
    ls_joint_rebuild_lists_(w);
    w->joint_event_count = 0;
    ls_broadphase_clear_(w->bp);
}

ls_result ls_world_snapshot_restore(ls_world *w, const uint8_t *buf, size_t size, ls_error *err)
{
    if (ls_world_locked_(w, err)) {
        return LS_ERR_LOCKED;
    }
    // The header is checked first so a snapshot of another world says so
    // instead of "corrupt".
    if (size < 16) {
        return ls_error_set(err, LS_ERR_TRUNCATED, "snapshot of %zu bytes has no header", size);
    }
    uint32_t version = ls_get_u32le(buf + 4);
    if (ls_get_u32le(buf) != SNAP_MAGIC) {
        return ls_error_set(err, LS_ERR_INCOMPATIBLE, "not a snapshot (magic differs)");
    }
    if (version >= 3 && version <= 5) {
        return ls_error_set(err, LS_ERR_INCOMPATIBLE,
                            "snapshot version %u was written by Solver v2 (lockstep 0.2); this "
                            "engine (Solver v3, lockstep %d.%d) reads version %u only",
                            version, LS_VERSION_MAJOR, LS_VERSION_MINOR, SNAP_VERSION);
    }
    if (version != SNAP_VERSION) {
        return ls_error_set(err, LS_ERR_INCOMPATIBLE,
                            "snapshot version %u is not one this engine reads (version %u)",
                            version, SNAP_VERSION);
    }
    if (ls_get_u32le(buf + 8) != w->def.max_bodies || ls_get_u32le(buf + 12) != w->def.max_shapes) {
        return ls_error_set(err, LS_ERR_INCOMPATIBLE,
                            "snapshot of a world with max_bodies %u, max_shapes %u restored into "
                            "one with %u, %u",
                            ls_get_u32le(buf + 8), ls_get_u32le(buf + 12), w->def.max_bodies,
                            w->def.max_shapes);
    }
    ls_query_tree_invalidate_(w->qt); // shapes change below, whatever the outcome
    // Restore into the live world only after a dry validation would need a
    // second copy; instead, validate while reading and fail closed.
    ls_cursor c = ls_cursor_loader_(buf, size);
    uint32_t where = 0;
    const char *problem = NULL;
    ls_error why;
    ls_error_clear(&why);
    if (!io_world(&c, w, &why) || (problem = state_problem(w, &where)) != NULL || c.pos != size) {
        if (!problem && c.ok && c.pos != size && why.code == LS_OK) {
            problem = "length (bytes after the last contact)";
            where = (uint32_t)(size - c.pos);
        }
        leave_empty(w);
        if (problem) {
            return ls_error_set(err, LS_ERR_CORRUPT,
                                "snapshot refused: %s invalid at index %u; the world is left empty",
                                problem, where);
        }
        if (why.code == LS_ERR_INCOMPATIBLE) {
            return ls_error_set(err, LS_ERR_INCOMPATIBLE, "%s; the world is left empty",
                                why.message);
        }
        if (why.code != LS_OK) {
            return ls_error_set(err, LS_ERR_CORRUPT,
                                "snapshot refused: shape data invalid (%s); the world is left "
                                "empty",
                                why.message);
        }
        return ls_error_set(err, LS_ERR_CORRUPT,
                            "snapshot of %zu bytes is corrupt (read failed at byte %zu); the "
                            "world is left empty",
                            size, c.pos);
    }
    ls_broadphase_clear_(w->bp);
    for (uint32_t i = 0; i < w->body_high; i++) {
        ls_body *b = &w->bodies[i];
        if (b->alive) {
            b->inertia_diagonal = ls_body_inertia_is_diagonal_(b);
            ls_body_update_derived_(w, b);
            ls_body_update_thickness_(w, b);
            ls_body_update_gyro_(b);
        }
    }
    w->begin_count = w->end_count = 0;
    ls_joint_rebuild_lists_(w);
    w->joint_event_count = 0;
    ls_particles_after_restore_(w);
    w->info.tick = w->tick;
    ls_error_clear(err);
    return LS_OK;
}
