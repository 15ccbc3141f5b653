// SPDX-License-Identifier: MIT
// Turning a parsed scene into a world (ls_scene_world_def,
// ls_scene_instantiate): the world's capacities from the statements, then
// bodies, then joints, then particle systems, then vehicles, each in file
// order, so the world's slots are the file's order. An error names the
// statement by its 1-based file order and line.
#include "ls/scene.h"
#include "scene_internal.h"

#include <stdio.h>
#include <string.h>

// ---- Instantiation of particle statements ----

// Particles and constraints a statement builds, at most (the world's pools
// must hold every system of the scene).
static void particle_needs(const ls_scene_particles *sp, uint64_t *particles, uint64_t *constraints)
{
    uint64_t n = 0, c = 0;
    switch (sp->kind) {
    case LS_SCENE_CLOTH: {
        uint64_t nu = sp->cloth.nu, nv = sp->cloth.nv;
        n = nu * nv;
        c = (nu - 1) * nv + nu * (nv - 1);                  // structural
        c += sp->cloth.shear ? 2 * (nu - 1) * (nv - 1) : 0; // shear
        if (sp->cloth.bend) {                               // bend (pins: mass 0)
            c += (nu > 2 ? (nu - 2) * nv : 0) + (nv > 2 ? nu * (nv - 2) : 0);
        }
        break;
    }
    case LS_SCENE_ROPE:
        n = (uint64_t)sp->rope.segments + 1;
        c = (uint64_t)sp->rope.segments + 2; // sticks and attachments
        if (sp->rope.long_range && sp->rope.tear_ratio == 0) {
            c += 2 * (uint64_t)sp->rope.segments; // long-range attachments, both ends at most
        }
        break;
    case LS_SCENE_RAGDOLL:
        n = 16; // ragdoll.c: 16 particles, 26 sticks, 7 angle limits, 3 one-sided sticks
        c = 64;
        break;
    default:
        n = sp->body.kind == LS_PARTICLE_BODY_BOX ? 8 : 4;
        c = sp->body.kind == LS_PARTICLE_BODY_BOX ? 28 : 6;
        break;
    }
    *particles += n;
    *constraints += c;
}

// Builds one particle statement; `pinned` particles get mass 0 afterwards.
static ls_particle_system_id build_particles(ls_world *w, const ls_scene_particles *sp,
                                             ls_error *why)
{
    ls_particle_system_id id = {0, 0};
    switch (sp->kind) {
    case LS_SCENE_CLOTH:
        id = ls_cloth_create(w, &sp->cloth, why);
        break;
    case LS_SCENE_ROPE: {
        // Bodies by file index: the world's body slots are the file order.
        ls_rope_def d = sp->rope;
        if (d.attach_start.index1) {
            d.attach_start = ls_world_body_at(w, d.attach_start.index1 - 1);
        }
        if (d.attach_end.index1) {
            d.attach_end = ls_world_body_at(w, d.attach_end.index1 - 1);
        }
        id = ls_rope_create(w, &d, why);
        break;
    }
    case LS_SCENE_RAGDOLL:
        id = ls_particle_ragdoll_create(w, &sp->ragdoll, why);
        break;
    default:
        id = ls_particle_body_create(w, &sp->body, why);
        break;
    }
    for (uint32_t i = 0; id.index1 && i < sp->pinned_count; i++) {
        ls_result r = ls_particle_set_mass(w, id, sp->pinned[i], 0);
        if (r != LS_OK) {
            ls_error_set(why, r, "pinned particle %u: %s", sp->pinned[i], ls_result_text(r));
            snprintf(why->field, sizeof why->field, "pinned");
            id.index1 = 0;
        }
    }
    return id;
}

// Creates the scene's particle systems in file order; false with *err naming
// the statement ("rope 2: ..." = the second rope), its line and field.
static bool instantiate_particles(ls_world *w, const ls_scene *s, ls_error *err)
{
    uint32_t of_kind[4] = {0, 0, 0, 0};
    for (uint32_t i = 0; i < s->particle_count; i++) {
        const ls_scene_particles *sp = &s->particles[i];
        uint32_t nth = ++of_kind[sp->kind & 3u];
        ls_error why;
        ls_error_clear(&why);
        if (build_particles(w, sp, &why).index1 == 0) {
            ls_error_set(err, why.code ? why.code : LS_ERR_INVALID_ARGUMENT, "%s %u: %s",
                         ls_scene_particle_keyword_(sp->kind), nth, why.message);
            if (err) {
                snprintf(err->field, sizeof err->field, "%s", why.field);
                err->line = sp->line;
                err->column = err->line ? 1 : 0;
            }
            return false;
        }
    }
    return true;
}

// ---- Vehicles and game rules (SPEC.md §14) ----

// Creates the scene's vehicles in file order (after everything else) and sets
// their initial controls; false with *err naming the statement ("vehicle 2: ...").
static bool instantiate_vehicles(ls_world *w, const ls_scene *s, ls_error *err)
{
    for (uint32_t i = 0; i < s->vehicle_count; i++) {
        const ls_scene_vehicle *v = &s->vehicles[i];
        // The chassis by file index: the world's body slots are the file order.
        ls_vehicle_def d = v->def;
        d.chassis = ls_world_body_at(w, d.chassis.index1 - 1);
        ls_error why;
        ls_error_clear(&why);
        ls_vehicle_id id = ls_vehicle_create(w, &d, &why);
        ls_result r = id.index1 ? LS_OK : (why.code ? why.code : LS_ERR_INVALID_ARGUMENT);
        const ls_vehicle_controls *c = &v->controls;
        bool any = c->throttle || c->brake || c->steer || c->handbrake || c->boost;
        if (r == LS_OK && any) {
            r = ls_vehicle_set_controls(w, id, &v->controls);
            snprintf(why.message, sizeof why.message, "controls: %s", ls_result_text(r));
            snprintf(why.field, sizeof why.field, "controls");
        }
        if (r != LS_OK) {
            ls_error_set(err, r, "vehicle %u: %s", i + 1, why.message);
            if (err) {
                snprintf(err->field, sizeof err->field, "%s", why.field);
                err->line = v->line;
                err->column = err->line ? 1 : 0;
            }
            return false;
        }
    }
    return true;
}

ls_world_def ls_scene_world_def(const ls_scene *s)
{
    ls_world_def d = s->world;
    if (d.max_bodies < s->body_count) {
        d.max_bodies = s->body_count;
    }
    // Shapes: one per body plus the extra ones of compound bodies.
    uint32_t shapes = s->body_count;
    for (uint32_t i = 0; i < s->body_count; i++) {
        shapes += s->bodies[i].shape_count > 1 ? s->bodies[i].shape_count - 1 : 0;
    }
    if (d.max_shapes < shapes && (d.max_shapes != 0 || shapes > d.max_bodies)) {
        d.max_shapes = shapes;
    }
    // Why a cap: a file is input. Bodies that all overlap would otherwise fill
    // any declared capacity with pairs (a 120 KB scene took 4.5 GB and 34 s a
    // tick); no real arrangement needs more than LS_SCENE_CONTACTS_PER_BODY
    // broad-phase pairs per body (a box in a dense pile has ~15), so a contact
    // bomb now degrades (capacity_exceeded) instead of exploding.
    uint64_t cap = (uint64_t)LS_SCENE_CONTACTS_PER_BODY * s->body_count;
    if (cap < LS_SCENE_CONTACTS_MIN) {
        cap = LS_SCENE_CONTACTS_MIN;
    }
    if (d.max_contacts > cap) {
        d.max_contacts = (uint32_t)cap;
    }
    if (d.max_joints < s->joint_count) {
        d.max_joints = s->joint_count;
    }
    // Particle pools: raised to what the statements build (a scene without
    // particle statements keeps the file's values).
    uint64_t particles = 0, constraints = 0;
    for (uint32_t i = 0; i < s->particle_count; i++) {
        particle_needs(&s->particles[i], &particles, &constraints);
    }
    if (d.max_particle_systems < s->particle_count) {
        d.max_particle_systems = s->particle_count;
    }
    if (d.max_particles < particles) {
        d.max_particles = particles > UINT32_MAX ? UINT32_MAX : (uint32_t)particles;
    }
    if (d.max_particle_constraints < constraints) {
        d.max_particle_constraints = constraints > UINT32_MAX ? UINT32_MAX : (uint32_t)constraints;
    }
    if (d.max_vehicles < s->vehicle_count) {
        d.max_vehicles = s->vehicle_count;
    }
    return d;
}

ls_world *ls_scene_instantiate_within(const ls_scene *s, size_t max_memory, ls_error *err)
{
    ls_world_def d = ls_scene_world_def(s);
    size_t need = ls_world_memory_size(&d);
    if (need > max_memory) {
        ls_error_set(err, LS_ERR_CAPACITY,
                     "the scene needs %zu MiB (max_bodies %u, max_contacts %u), over the budget "
                     "of %zu MiB",
                     (need + (1u << 20) - 1) >> 20, d.max_bodies, d.max_contacts, max_memory >> 20);
        if (err) {
            snprintf(err->field, sizeof err->field, "max_bodies");
        }
        return NULL;
    }
    ls_world *w = ls_world_create(&d, err);
    if (!w) {
        return NULL;
    }
    for (uint32_t i = 0; i < s->body_count; i++) {
        ls_error why;
        ls_body_id id = ls_body_create(w, &s->bodies[i], &why);
        if (id.index1 == 0) {
            // Why prefix: the message names the body by its 1-based file order.
            ls_error_set(err, why.code, "body %u: %s", i + 1, why.message);
            if (err) {
                snprintf(err->field, sizeof err->field, "%s", why.field);
                err->line = s->body_line ? s->body_line[i] : 0;
                err->column = err->line ? 1 : 0;
            }
            ls_world_destroy(w);
            return NULL;
        }
    }
    for (uint32_t i = 0; i < s->joint_count; i++) {
        // Bodies by file index: the world's body slots are the file order.
        ls_joint_def jd = s->joints[i];
        jd.body_a = ls_world_body_at(w, jd.body_a.index1 - 1);
        jd.body_b = ls_world_body_at(w, jd.body_b.index1 - 1);
        ls_error why;
        if (ls_joint_create(w, &jd, &why).index1 == 0) {
            ls_error_set(err, why.code, "joint %u: %s", i + 1, why.message);
            if (err) {
                snprintf(err->field, sizeof err->field, "%s", why.field);
                err->line = s->joint_line ? s->joint_line[i] : 0;
                err->column = err->line ? 1 : 0;
            }
            ls_world_destroy(w);
            return NULL;
        }
    }
    if (!instantiate_particles(w, s, err) || !instantiate_vehicles(w, s, err)) {
        ls_world_destroy(w);
        return NULL;
    }
    ls_error_clear(err);
    return w;
}

ls_world *ls_scene_instantiate(const ls_scene *s, ls_error *err)
{
    return ls_scene_instantiate_within(s, SIZE_MAX, err);
}
