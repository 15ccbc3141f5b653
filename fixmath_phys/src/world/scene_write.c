// SPDX-License-Identifier: MIT
// Writing scenes back as text (exact round trip). Turning them into worlds is
// scene_instantiate.c.
#include "ls/fx_text.h"
#include "ls/scene.h"
#include "scene_internal.h"

#include "../collision/shape_kind.h"
#include "../dynamics/joint.h"

#include <stdio.h>
#include <string.h>

typedef struct out {
    char *buf;
    size_t size, len;
} out;

#define NO_PLAYER UINT32_MAX

static void emit(out *o, const char *text)
{
    size_t n = strlen(text);
    if (o->len + n < o->size) {
        memcpy(o->buf + o->len, text, n + 1);
    }
    o->len += n;
}

static void emit_fx(out *o, const char *name, ls_fx v)
{
    char t[LS_FX_TEXT_MAX];
    ls_fx_format(v, t);
    emit(o, " ");
    emit(o, name);
    emit(o, " ");
    emit(o, t);
}

static void emit_vec3(out *o, const char *name, ls_vec3 v)
{
    char x[LS_FX_TEXT_MAX], y[LS_FX_TEXT_MAX], z[LS_FX_TEXT_MAX], line[96];
    ls_fx_format(v.x, x);
    ls_fx_format(v.y, y);
    ls_fx_format(v.z, z);
    snprintf(line, sizeof line, " %s %s %s %s", name, x, y, z);
    emit(o, line);
}

static void emit_quat(out *o, const char *name, ls_quat q)
{
    char line[128];
    char x[LS_FX_TEXT_MAX], y[LS_FX_TEXT_MAX], z[LS_FX_TEXT_MAX], w[LS_FX_TEXT_MAX];
    ls_fx_format(q.x, x), ls_fx_format(q.y, y), ls_fx_format(q.z, z), ls_fx_format(q.w, w);
    snprintf(line, sizeof line, " %s %s %s %s %s", name, x, y, z, w);
    emit(o, line);
}

static bool is_identity(ls_quat q)
{
    return ls_quat_equal(q, ls_quat_identity()) || (q.x == 0 && q.y == 0 && q.z == 0 && q.w == 0);
}

// Hull vertices as `points N ...` (building a hull from its own vertices gives
// the same hull), mesh data inline as `vertices N ... triangles M ...`.
static void emit_shape_data(out *o, const ls_shape_def *s)
{
    char line[64];
    if (s->type == LS_SHAPE_HULL && s->hull) {
        uint32_t n = ls_hull_vertex_count(s->hull);
        snprintf(line, sizeof line, " points %u", n);
        emit(o, line);
        for (uint32_t i = 0; i < n; i++) {
            ls_vec3 v = ls_hull_vertex(s->hull, i);
            char x[LS_FX_TEXT_MAX], y[LS_FX_TEXT_MAX], z[LS_FX_TEXT_MAX];
            ls_fx_format(v.x, x), ls_fx_format(v.y, y), ls_fx_format(v.z, z);
            emit(o, " "), emit(o, x), emit(o, " "), emit(o, y), emit(o, " "), emit(o, z);
        }
    } else if (s->type == LS_SHAPE_MESH && s->mesh) {
        uint32_t n = ls_mesh_vertex_count(s->mesh), t = ls_mesh_triangle_count(s->mesh);
        snprintf(line, sizeof line, " vertices %u", n);
        emit(o, line);
        for (uint32_t i = 0; i < n; i++) {
            ls_vec3 v = ls_mesh_vertex(s->mesh, i);
            char x[LS_FX_TEXT_MAX], y[LS_FX_TEXT_MAX], z[LS_FX_TEXT_MAX];
            ls_fx_format(v.x, x), ls_fx_format(v.y, y), ls_fx_format(v.z, z);
            emit(o, " "), emit(o, x), emit(o, " "), emit(o, y), emit(o, " "), emit(o, z);
        }
        snprintf(line, sizeof line, " triangles %u", t);
        emit(o, line);
        for (uint32_t i = 0; i < t; i++) {
            uint32_t tri[3];
            ls_mesh_triangle(s->mesh, i, tri);
            snprintf(line, sizeof line, " %u %u %u", tri[0], tri[1], tri[2]);
            emit(o, line);
        }
    }
}

// A shape's kind, geometry, pose and material (on a body line or a shape line).
static void emit_shape(out *o, const ls_shape_def *s, bool dynamic)
{
    char line[128];
    emit(o, " ");
    emit(o, ls_shape_kind_of(s->type) ? ls_shape_kind_of(s->type)->name : "box");
    if (s->type == LS_SHAPE_PLANE) {
        if (!ls_vec3_equal(s->normal, ls_vec3_zero())) { // `normal 0 0 0` does not parse
            emit_vec3(o, "normal", s->normal);
        }
        emit_fx(o, "d", s->plane_d);
    } else if (s->type == LS_SHAPE_BOX) {
        emit_vec3(o, "half", s->half_extents);
    } else if (s->type == LS_SHAPE_SPHERE || s->type == LS_SHAPE_CAPSULE) {
        emit_fx(o, "radius", s->radius);
    }
    if (s->type == LS_SHAPE_CAPSULE) {
        emit_fx(o, "half_height", s->half_height);
    }
    emit_shape_data(o, s);
    if (!ls_vec3_equal(s->local_position, ls_vec3_zero())) {
        emit_vec3(o, "at", s->local_position);
    }
    if (!is_identity(s->local_orientation)) {
        emit_quat(o, "rot", s->local_orientation);
    }
    if (dynamic) {
        emit_fx(o, "density", s->density);
    }
    emit_fx(o, "friction", s->friction);
    emit_fx(o, "restitution", s->restitution);
    snprintf(line, sizeof line, " filter %u %u", s->category, s->mask);
    emit(o, line);
}

static void emit_body(out *o, const ls_body_def *b, uint32_t player, const char *label)
{
    static const char *const types[] = {"static", "kinematic", "dynamic"};
    const ls_shape_def *first = b->shape_count ? &b->shapes[0] : &b->shape;
    char line[128];
    snprintf(line, sizeof line, "body %s", types[b->type % 3]);
    emit(o, line);
    // Planes keep the compact form of version 1 files (no pose, no motion).
    bool plane_only = first->type == LS_SHAPE_PLANE && b->shape_count <= 1;
    emit_shape(o, first, !plane_only);
    if (!plane_only) {
        emit_vec3(o, "pos", b->position);
        if (!ls_quat_equal(b->orientation, ls_quat_identity())) {
            emit_quat(o, "quat", b->orientation);
        }
        emit_vec3(o, "vel", b->linear_velocity);
        emit_vec3(o, "angvel", b->angular_velocity);
        emit_fx(o, "linear_damping", b->linear_damping);
        emit_fx(o, "angular_damping", b->angular_damping);
    }
    snprintf(line, sizeof line, "%s%s%s", b->awake ? "" : " asleep",
             b->allow_sleep ? "" : " no_sleep", b->bullet ? " bullet" : "");
    emit(o, line);
    if (player != NO_PLAYER) {
        snprintf(line, sizeof line, " player %u", player);
        emit(o, line);
    }
    if (label) {
        emit(o, " label ");
        emit(o, label);
    }
    emit(o, "\n");
    for (uint32_t k = 1; k < b->shape_count; k++) {
        emit(o, "shape");
        emit_shape(o, &b->shapes[k], true);
        emit(o, "\n");
    }
}

// A joint's body: its label, else its 0-based index.
static void emit_body_ref(out *o, const ls_scene *s, ls_body_id id)
{
    char line[32];
    uint32_t i = id.index1 - 1;
    if (s->body_label && i < s->body_count && s->body_label[i]) {
        emit(o, " ");
        emit(o, s->body_label[i]);
        return;
    }
    snprintf(line, sizeof line, " %u", i);
    emit(o, line);
}

static void emit_pair(out *o, const char *name, ls_fx a, ls_fx b)
{
    char x[LS_FX_TEXT_MAX], y[LS_FX_TEXT_MAX], line[96];
    ls_fx_format(a, x);
    ls_fx_format(b, y);
    snprintf(line, sizeof line, " %s %s %s", name, x, y);
    emit(o, line);
}

static void emit_pair_u32(out *o, const char *name, uint32_t a, uint32_t b)
{
    char line[64];
    snprintf(line, sizeof line, " %s %u %u", name, a, b);
    emit(o, line);
}

static ls_fx deg(ls_fx rad)
{
    return ls_joint_radians_to_degrees_(rad);
}

// `joint TYPE A B ...` with exactly the properties that parse back to *d
// (angles in degrees that convert back to the same radians).
static void emit_joint(out *o, const ls_scene *s, const ls_joint_def *d)
{
    const ls_joint_kind *kind = ls_joint_kind_of_((uint32_t)d->type);
    if (!kind) {
        return;
    }
    emit(o, "joint ");
    emit(o, kind->name);
    emit_body_ref(o, s, d->body_a);
    emit_body_ref(o, s, d->body_b);
    emit_vec3(o, "anchor", d->anchor);
    if (d->type == LS_JOINT_DISTANCE) {
        emit_vec3(o, "anchor_b", d->anchor_b);
        if (d->min_length != 0 || d->max_length != 0) {
            emit_pair(o, "length", d->min_length, d->max_length);
        }
    }
    if (kind->needs_axis) {
        emit_vec3(o, "axis", d->axis);
    }
    bool angles = d->type == LS_JOINT_HINGE;
    if (kind->has_limit && d->enable_limit) {
        emit_pair(o, "limits", angles ? deg(d->lower) : d->lower,
                  angles ? deg(d->upper) : d->upper);
    }
    if (kind->has_motor && d->enable_motor) {
        emit_pair(o, "motor", d->motor_speed, d->max_motor_torque);
    }
    if (kind->has_spring && d->enable_spring) {
        emit_pair(o, "spring", d->spring_hertz, d->spring_damping_ratio);
    }
    if (d->type == LS_JOINT_CONE) {
        emit_fx(o, "cone", deg(d->cone_angle));
        if (d->twist_lower != -LS_FX_PI || d->twist_upper != LS_FX_PI) {
            emit_pair(o, "twist", deg(d->twist_lower), deg(d->twist_upper));
        }
    }
    if (d->break_force != 0 || d->break_torque != 0) {
        emit_pair(o, "break", d->break_force, d->break_torque);
    }
    emit(o, d->collide_connected ? " collide\n" : "\n");
}

// ---- Particle statements (SPEC.md §14) ----

static void emit_u32(out *o, const char *name, uint32_t v)
{
    char line[64];
    snprintf(line, sizeof line, " %s %u", name, v);
    emit(o, line);
}

// The system fields that differ from the builder's default `d`.
static void emit_particle_system(out *o, const ls_particle_system_def *s,
                                 const ls_particle_system_def *d)
{
    char line[96];
    if (s->iterations != d->iterations) {
        emit_u32(o, "iterations", s->iterations);
    }
    if (s->stick_mode != d->stick_mode) {
        emit(o, s->stick_mode == LS_STICK_EXACT ? " stick exact" : " stick approx");
    }
    if (s->damping != d->damping) {
        emit_fx(o, "damping", s->damping);
    }
    if (s->gravity_scale != d->gravity_scale) {
        emit_fx(o, "gravity_scale", s->gravity_scale);
    }
    if (s->friction != d->friction) {
        emit_fx(o, "friction", s->friction);
    }
    if (!ls_vec3_equal(s->acceleration, d->acceleration)) {
        emit_vec3(o, "wind", s->acceleration);
    }
    if (s->turbulence != d->turbulence) {
        emit_fx(o, "turbulence", s->turbulence);
    }
    if (s->seed != d->seed) {
        snprintf(line, sizeof line, " seed %llu", (unsigned long long)s->seed);
        emit(o, line);
    }
    if (s->category != d->category || s->mask != d->mask) {
        snprintf(line, sizeof line, " filter %u %u", s->category, s->mask);
        emit(o, line);
    }
    if (!s->collide_particles) {
        emit(o, " no_particle_collision");
    }
}

// Cloth pin bits as `corner00+edge_v1...` (the parser's names, bit order).
static void emit_cloth_pins(out *o, uint32_t pins)
{
    static const char *const names[] = {"corner00", "corner10", "corner01", "corner11",
                                        "edge_v0",  "edge_v1",  "edge_u0",  "edge_u1"};
    emit(o, " pins ");
    if (pins == 0) {
        emit(o, "none");
    }
    for (unsigned i = 0, first = 1; i < 8; i++) {
        if (pins & (1u << i)) {
            emit(o, first ? "" : "+");
            emit(o, names[i]);
            first = 0;
        }
    }
}

static void emit_cloth(out *o, const ls_cloth_def *c)
{
    ls_cloth_def d = ls_default_cloth_def();
    emit_vec3(o, "origin", c->origin);
    emit_vec3(o, "axis_u", c->axis_u);
    emit_vec3(o, "axis_v", c->axis_v);
    emit_pair_u32(o, "grid", c->nu, c->nv);
    emit_fx(o, "spacing", c->spacing);
    emit_fx(o, "mass", c->mass);
    emit_fx(o, "radius", c->radius);
    emit(o, c->shear ? "" : " no_shear");
    emit(o, c->bend ? "" : " no_bend");
    if (c->bend_stiffness != d.bend_stiffness) {
        emit_fx(o, "bend_stiffness", c->bend_stiffness);
    }
    if (c->tear_ratio != d.tear_ratio) {
        emit_fx(o, "tear", c->tear_ratio);
    }
    if (c->pins != d.pins) {
        emit_cloth_pins(o, c->pins);
    }
    emit_particle_system(o, &c->system, &d.system);
}

static void emit_rope(out *o, const ls_scene *s, const ls_rope_def *r)
{
    static const char *const pins[] = {"none", "start", "end", "both"};
    ls_rope_def d = ls_default_rope_def();
    emit_vec3(o, "from", r->start);
    emit_vec3(o, "to", r->end);
    emit_u32(o, "segments", r->segments);
    emit_fx(o, "mass", r->mass);
    if (r->end_mass != d.end_mass) {
        emit_fx(o, "end_mass", r->end_mass);
    }
    emit_fx(o, "radius", r->radius);
    emit(o, r->slack ? " slack" : "");
    emit(o, r->long_range ? "" : " no_long_range");
    if (r->tear_ratio != d.tear_ratio) {
        emit_fx(o, "tear", r->tear_ratio);
    }
    if (r->pin_start != d.pin_start || r->pin_end != d.pin_end) {
        emit(o, " pin ");
        emit(o, pins[(r->pin_start ? 1 : 0) + (r->pin_end ? 2 : 0)]);
    }
    if (r->attach_start.index1) {
        emit(o, " attach_start");
        emit_body_ref(o, s, r->attach_start);
    }
    if (r->attach_end.index1) {
        emit(o, " attach_end");
        emit_body_ref(o, s, r->attach_end);
    }
    emit_particle_system(o, &r->system, &d.system);
}

static void emit_ragdoll(out *o, const ls_particle_ragdoll_def *g)
{
    ls_particle_ragdoll_def d = ls_default_particle_ragdoll_def();
    emit_vec3(o, "pos", g->position);
    if (!ls_quat_equal(g->orientation, d.orientation)) {
        emit_quat(o, "quat", g->orientation);
    }
    emit_fx(o, "height", g->height);
    emit_fx(o, "mass", g->mass);
    emit_fx(o, "radius", g->radius);
    if (!ls_vec3_equal(g->velocity, d.velocity)) {
        emit_vec3(o, "vel", g->velocity);
    }
    emit_particle_system(o, &g->system, &d.system);
}

static void emit_particle_body(out *o, const ls_particle_body_def *b)
{
    ls_particle_body_def d = ls_default_particle_body_def();
    const ls_shape_def *sh = &b->shape;
    emit(o, " ");
    emit(o, ls_shape_kind_of(sh->type) ? ls_shape_kind_of(sh->type)->name : "box");
    if (sh->type == LS_SHAPE_BOX) {
        emit_vec3(o, "half", sh->half_extents);
    } else if (sh->type == LS_SHAPE_SPHERE || sh->type == LS_SHAPE_CAPSULE) {
        emit_fx(o, "radius", sh->radius);
    }
    if (sh->type == LS_SHAPE_CAPSULE) {
        emit_fx(o, "half_height", sh->half_height);
    }
    emit_shape_data(o, sh);
    if (!ls_vec3_equal(sh->local_position, ls_vec3_zero())) {
        emit_vec3(o, "at", sh->local_position);
    }
    if (!is_identity(sh->local_orientation)) {
        emit_quat(o, "rot", sh->local_orientation);
    }
    emit(o, b->kind == LS_PARTICLE_BODY_BOX ? " particles box" : " particles tetra");
    emit_vec3(o, "pos", b->position);
    if (!ls_quat_equal(b->orientation, d.orientation)) {
        emit_quat(o, "quat", b->orientation);
    }
    if (!ls_vec3_equal(b->linear_velocity, d.linear_velocity)) {
        emit_vec3(o, "vel", b->linear_velocity);
    }
    if (!ls_vec3_equal(b->angular_velocity, d.angular_velocity)) {
        emit_vec3(o, "angvel", b->angular_velocity);
    }
    emit_fx(o, "mass", b->mass);
    emit_fx(o, "particle_radius", b->radius);
    emit_particle_system(o, &b->system, &d.system);
}

static void emit_particles(out *o, const ls_scene *s, const ls_scene_particles *sp)
{
    emit(o, ls_scene_particle_keyword_(sp->kind));
    switch (sp->kind) {
    case LS_SCENE_CLOTH:
        emit_cloth(o, &sp->cloth);
        break;
    case LS_SCENE_ROPE:
        emit_rope(o, s, &sp->rope);
        break;
    case LS_SCENE_RAGDOLL:
        emit_ragdoll(o, &sp->ragdoll);
        break;
    default:
        emit_particle_body(o, &sp->body);
        break;
    }
    if (sp->pinned_count) {
        emit_u32(o, "pinned", sp->pinned_count);
        for (uint32_t i = 0; i < sp->pinned_count; i++) {
            char line[16];
            snprintf(line, sizeof line, " %u", sp->pinned[i]);
            emit(o, line);
        }
    }
    emit(o, "\n");
}

// `vehicle CHASSIS ...` and one `wheel mount X Y Z ...` line per wheel, with
// the properties that differ from ls_default_vehicle_def()/ls_default_wheel_def()
// (a `car` is written out wheel by wheel: the same values).
static void emit_vehicle(out *o, const ls_scene *s, const ls_scene_vehicle *v)
{
    const ls_vehicle_def *d = &v->def;
    ls_vehicle_def base = ls_default_vehicle_def();
    emit(o, "vehicle");
    emit_body_ref(o, s, d->chassis);
    if (d->probe != base.probe) {
        emit(o, d->probe == LS_WHEEL_SPHERE ? " probe sphere" : " probe ray");
    }
    if (d->engine_force != base.engine_force) {
        emit_fx(o, "engine", d->engine_force);
    }
    if (d->brake_force != base.brake_force) {
        emit_fx(o, "brake", d->brake_force);
    }
    if (d->max_steer != base.max_steer) {
        emit_fx(o, "max_steer", d->max_steer);
    }
    if (d->steer_rate != base.steer_rate) {
        emit_fx(o, "steer_rate", d->steer_rate);
    }
    if (d->boost_force != base.boost_force) {
        emit_fx(o, "boost", d->boost_force);
    }
    if (d->filter.category != base.filter.category || d->filter.mask != base.filter.mask) {
        emit_pair_u32(o, "filter", d->filter.category, d->filter.mask);
    }
    if (v->controls.throttle != 0) {
        emit_fx(o, "throttle", v->controls.throttle);
    }
    if (v->controls.steer != 0) {
        emit_fx(o, "steer", v->controls.steer);
    }
    if (v->controls.brake != 0) {
        emit_fx(o, "braking", v->controls.brake);
    }
    emit(o, v->controls.handbrake ? " handbrake" : "");
    emit(o, v->controls.boost ? " boosting\n" : "\n");
    ls_wheel_def wb = ls_default_wheel_def();
    for (uint32_t i = 0; i < d->wheel_count && i < LS_VEHICLE_MAX_WHEELS; i++) {
        const ls_wheel_def *w = &d->wheels[i];
        emit(o, "wheel");
        emit_vec3(o, "mount", w->mount);
        if (!ls_vec3_equal(w->axis, wb.axis)) {
            emit_vec3(o, "axis", w->axis);
        }
        if (!ls_vec3_equal(w->forward, wb.forward)) {
            emit_vec3(o, "forward", w->forward);
        }
        const struct {
            const char *name;
            ls_fx v, base;
        } scalars[] = {{"radius", w->radius, wb.radius},
                       {"rest", w->rest_length, wb.rest_length},
                       {"travel", w->max_travel, wb.max_travel},
                       {"spring", w->stiffness, wb.stiffness},
                       {"damper", w->damping, wb.damping},
                       {"inertia", w->inertia, wb.inertia},
                       {"drive", w->drive_share, wb.drive_share},
                       {"brake", w->brake_share, wb.brake_share},
                       {"steer", w->steer_share, wb.steer_share},
                       {"rolling", w->rolling_resistance, wb.rolling_resistance}};
        for (size_t k = 0; k < sizeof scalars / sizeof scalars[0]; k++) {
            if (scalars[k].v != scalars[k].base) {
                emit_fx(o, scalars[k].name, scalars[k].v);
            }
        }
        emit(o, w->handbrake ? " handbrake" : "");
        if (w->static_friction != wb.static_friction ||
            w->dynamic_friction != wb.dynamic_friction) {
            emit_pair(o, "friction", w->static_friction, w->dynamic_friction);
        }
        if (w->peak_slip != wb.peak_slip || w->slide_slip != wb.slide_slip) {
            emit_pair(o, "slip", w->peak_slip, w->slide_slip);
        }
        if (w->anti_roll_pair != 0) {
            char t[LS_FX_TEXT_MAX], line[64];
            ls_fx_format(w->anti_roll_stiffness, t);
            snprintf(line, sizeof line, " anti_roll %u %s", w->anti_roll_pair - 1, t);
            emit(o, line);
        }
        emit(o, "\n");
    }
}

// `game soccer ...` (push, the default, is not written: scenes without a game
// line write as before).
static void emit_game(out *o, const ls_scene *s)
{
    if (s->game != LS_SCENE_GAME_SOCCER) {
        return;
    }
    const ls_scene_soccer *g = &s->soccer;
    emit(o, "game soccer ball");
    emit_body_ref(o, s, (ls_body_id){g->ball_body + 1, 0});
    emit_fx(o, "goal_z", g->goal_z);
    emit_fx(o, "goal_half_width", g->goal_half_width);
    emit_fx(o, "goal_height", g->goal_height);
    emit_u32(o, "kickoff", g->kickoff_ticks);
    emit(o, "\n");
}

static uint32_t player_of(const ls_scene *s, uint32_t body)
{
    for (uint32_t k = 0; k < s->player_count; k++) {
        if (s->player_body[k] == body) {
            return k;
        }
    }
    return NO_PLAYER;
}

size_t ls_scene_write(const ls_scene *s, char *buf, size_t size)
{
    out o = {buf, size, 0};
    if (size) {
        buf[0] = '\0';
    }
    const ls_world_def *d = &s->world;
    char line[160];
    emit(&o, "world");
    emit_vec3(&o, "gravity", d->gravity);
    snprintf(line, sizeof line,
             " tick_rate %u substeps %u iterations %u %u ticks %u seed %u max_bodies %u "
             "max_contacts %u",
             d->tick_rate, d->substeps, d->velocity_iterations, d->position_iterations, s->ticks,
             (unsigned)d->seed, d->max_bodies, d->max_contacts);
    emit(&o, line);
    if (d->max_shapes) {
        snprintf(line, sizeof line, " max_shapes %u", d->max_shapes);
        emit(&o, line);
    }
    // Written only when it is not the default, so every other scene's text is unchanged.
    if (d->restitution_threshold != ls_default_world_def().restitution_threshold) {
        emit_fx(&o, "restitution_threshold", d->restitution_threshold);
    }
    emit(&o, "\n");
    for (uint32_t i = 0; i < s->body_count; i++) {
        emit_body(&o, &s->bodies[i], player_of(s, i), s->body_label ? s->body_label[i] : NULL);
    }
    for (uint32_t i = 0; i < s->joint_count; i++) {
        emit_joint(&o, s, &s->joints[i]);
    }
    for (uint32_t i = 0; i < s->particle_count; i++) {
        emit_particles(&o, s, &s->particles[i]);
    }
    for (uint32_t i = 0; i < s->vehicle_count; i++) {
        emit_vehicle(&o, s, &s->vehicles[i]);
    }
    emit_game(&o, s);
    return o.len;
}
