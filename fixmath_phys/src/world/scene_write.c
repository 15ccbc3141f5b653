// SPDX-License-Identifier: MIT
// Writing scenes back as text (exact round trip). Turning them into worlds is
// scene_instantiate.c.
#include "ls/fx_text.h"
#include "ls/scene.h"
#include "scene_internal.h"
#include "scene_props.h"

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

static void emit_u32(out *o, const char *name, uint32_t v)
{
    char line[64];
    snprintf(line, sizeof line, " %s %u", name, v);
    emit(o, line);
}

static ls_fx deg(ls_fx rad)
{
    return ls_joint_radians_to_degrees_(rad);
}

// Whether property e of obj is to be written (dflt: the statement's default).
static bool prop_written(const ls_scene_prop_ *e, const char *obj, const char *dflt)
{
    const char *at = obj + e->off, *at2 = obj + e->off2;
    switch ((ls_scene_when_)e->when) {
    case LS_SW_NONZERO_: {
        if (e->value == LS_SV_INDEX_FX_ || e->value == LS_SV_U32_) {
            return *(const uint32_t *)(const void *)at != 0;
        }
        ls_fx a = *(const ls_fx *)(const void *)at;
        return a != 0 || (e->value == LS_SV_FX2_ && *(const ls_fx *)(const void *)at2 != 0);
    }
    case LS_SW_NOT_DEFAULT_: {
        static const size_t size[] = {
            [LS_SV_FLAG_] = sizeof(bool),           [LS_SV_FX_] = sizeof(ls_fx),
            [LS_SV_FX2_] = sizeof(ls_fx),           [LS_SV_VEC3_] = sizeof(ls_vec3),
            [LS_SV_U32_] = sizeof(uint32_t),        [LS_SV_U32_2_] = sizeof(uint32_t),
            [LS_SV_U32_AS_U64_] = sizeof(uint64_t), [LS_SV_WORD_] = sizeof(unsigned),
            [LS_SV_INDEX_FX_] = sizeof(uint32_t),   [LS_SV_NONE_] = 0};
        size_t n = size[e->value];
        bool two = e->value == LS_SV_FX2_ || e->value == LS_SV_U32_2_;
        return memcmp(at, dflt + e->off, n) != 0 || (two && memcmp(at2, dflt + e->off2, n) != 0);
    }
    case LS_SW_ENABLED_:
        return *(const bool *)(const void *)(obj + e->enable);
    case LS_SW_NEVER_:
        return false;
    default:
        return true;
    }
}

// The one writing walker: ` keyword value...` for every property of table t
// that statement kind `kind` takes and that is to be written, in table order.
static void write_props(out *o, const ls_scene_props_ *t, const void *obj, const void *dflt,
                        uint32_t kind)
{
    const char *base = obj;
    for (uint32_t i = 0; i < t->count; i++) {
        const ls_scene_prop_ *e = &t->props[i];
        const void *at = base + e->off, *at2 = base + e->off2;
        bool degrees = (e->degrees >> kind) & 1u;
        char line[96];
        if (!((e->kinds >> kind) & 1u) || !prop_written(e, obj, dflt)) {
            continue;
        }
        switch ((ls_scene_value_)e->value) {
        case LS_SV_FLAG_:
            if (*(const bool *)at == (e->lo != 0)) {
                emit(o, " ");
                emit(o, e->name);
            }
            break;
        case LS_SV_FX_: {
            ls_fx v = *(const ls_fx *)at;
            emit_fx(o, e->name, degrees ? deg(v) : v);
            break;
        }
        case LS_SV_FX2_: {
            ls_fx a = *(const ls_fx *)at, b = *(const ls_fx *)at2;
            emit_pair(o, e->name, degrees ? deg(a) : a, degrees ? deg(b) : b);
            break;
        }
        case LS_SV_VEC3_:
            emit_vec3(o, e->name, *(const ls_vec3 *)at);
            break;
        case LS_SV_U32_:
            emit_u32(o, e->name, *(const uint32_t *)at);
            break;
        case LS_SV_U32_2_:
            emit_pair_u32(o, e->name, *(const uint32_t *)at, *(const uint32_t *)at2);
            break;
        case LS_SV_U32_AS_U64_:
            emit_u32(o, e->name, (uint32_t) * (const uint64_t *)at);
            break;
        case LS_SV_WORD_: {
            unsigned w;
            memcpy(&w, at, sizeof w);
            emit(o, " ");
            emit(o, e->name);
            emit(o, " ");
            emit(o, e->words[w]);
            break;
        }
        case LS_SV_INDEX_FX_: {
            char t2[LS_FX_TEXT_MAX];
            ls_fx_format(*(const ls_fx *)at2, t2);
            snprintf(line, sizeof line, " %s %u %s", e->name, *(const uint32_t *)at - 1, t2);
            emit(o, line);
            break;
        }
        default: // LS_SV_NONE_
            break;
        }
    }
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
    ls_joint_def base = ls_default_joint_def();
    write_props(o, &ls_scene_joint_props_, d, &base, (uint32_t)d->type);
    emit(o, "\n");
}

// ---- Particle statements (SPEC.md §14) ----

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
    ls_scene_vehicle base;
    memset(&base, 0, sizeof base);
    base.def = ls_default_vehicle_def();
    emit(o, "vehicle");
    emit_body_ref(o, s, d->chassis);
    write_props(o, &ls_scene_vehicle_props_, v, &base, 0);
    emit(o, "\n");
    ls_wheel_def wb = ls_default_wheel_def();
    for (uint32_t i = 0; i < d->wheel_count && i < LS_VEHICLE_MAX_WHEELS; i++) {
        emit(o, "wheel");
        write_props(o, &ls_scene_wheel_props_, &d->wheels[i], &wb, 0);
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
    ls_scene base;
    memset(&base, 0, sizeof base);
    base.world = ls_default_world_def();
    emit(&o, "world");
    write_props(&o, &ls_scene_world_props_, s, &base, 0);
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
