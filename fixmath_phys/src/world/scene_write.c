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

static void emit_points(out *o, ls_vec3 v)
{
    char x[LS_FX_TEXT_MAX], y[LS_FX_TEXT_MAX], z[LS_FX_TEXT_MAX];
    ls_fx_format(v.x, x), ls_fx_format(v.y, y), ls_fx_format(v.z, z);
    emit(o, " "), emit(o, x), emit(o, " "), emit(o, y), emit(o, " "), emit(o, z);
}

// A hull's `points N ...`, a mesh's `vertices N ...` or `triangles M ...`
// (property e, the hull or mesh pointer at `at`; nothing when it is NULL).
static void emit_shape_data(out *o, const ls_scene_prop_ *e, const void *at)
{
    char line[64];
    if (e->value == LS_SV_HULL_POINTS_) {
        const ls_hull *h = *(const ls_hull *const *)at;
        uint32_t n = h ? ls_hull_vertex_count(h) : 0;
        if (h) {
            snprintf(line, sizeof line, " %s %u", e->name, n);
            emit(o, line);
        }
        for (uint32_t i = 0; i < n; i++) {
            emit_points(o, ls_hull_vertex(h, i));
        }
        return;
    }
    const ls_mesh *m = *(const ls_mesh *const *)at;
    if (!m) {
        return;
    }
    bool vertices = e->value == LS_SV_MESH_VERTICES_;
    uint32_t n = vertices ? ls_mesh_vertex_count(m) : ls_mesh_triangle_count(m);
    snprintf(line, sizeof line, " %s %u", e->name, n);
    emit(o, line);
    for (uint32_t i = 0; i < n; i++) {
        if (vertices) {
            emit_points(o, ls_mesh_vertex(m, i));
        } else {
            uint32_t tri[3];
            ls_mesh_triangle(m, i, tri);
            snprintf(line, sizeof line, " %u %u %u", tri[0], tri[1], tri[2]);
            emit(o, line);
        }
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

// Bytes of one stored value of a kind (two of them for pairs), for comparing
// with the default.
static size_t value_size(ls_scene_value_ v)
{
    switch (v) {
    case LS_SV_FLAG_:
    case LS_SV_WORD_BOOLS_:
        return sizeof(bool);
    case LS_SV_FX_:
    case LS_SV_FX2_:
        return sizeof(ls_fx);
    case LS_SV_VEC3_:
        return sizeof(ls_vec3);
    case LS_SV_QUAT_:
        return sizeof(ls_quat);
    case LS_SV_U32_AS_U64_:
    case LS_SV_U64_:
        return sizeof(uint64_t);
    case LS_SV_WORD_:
        return sizeof(unsigned);
    case LS_SV_INDICES_:
    case LS_SV_NONE_:
        return 0;
    default: // U32, U32_2, INDEX_FX, BODY, PINS
        return sizeof(uint32_t);
    }
}

// Whether property e of obj is to be written (dflt: the statement's default).
static bool prop_written(const ls_scene_prop_ *e, const char *obj, const char *dflt)
{
    const char *at = obj + e->off, *at2 = obj + e->off2;
    switch ((ls_scene_when_)e->when) {
    case LS_SW_NONZERO_: {
        if (e->value == LS_SV_INDEX_FX_ || e->value == LS_SV_U32_ || e->value == LS_SV_BODY_) {
            return *(const uint32_t *)(const void *)at != 0;
        }
        if (e->value == LS_SV_INDICES_) {
            return *(const uint32_t *)(const void *)at2 != 0;
        }
        if (e->value == LS_SV_VEC3_) {
            return !ls_vec3_equal(*(const ls_vec3 *)(const void *)at, ls_vec3_zero());
        }
        ls_fx a = *(const ls_fx *)(const void *)at;
        return a != 0 || (e->value == LS_SV_FX2_ && *(const ls_fx *)(const void *)at2 != 0);
    }
    case LS_SW_NOT_DEFAULT_: {
        size_t n = value_size((ls_scene_value_)e->value);
        bool two =
            e->value == LS_SV_FX2_ || e->value == LS_SV_U32_2_ || e->value == LS_SV_WORD_BOOLS_;
        return memcmp(at, dflt + e->off, n) != 0 || (two && memcmp(at2, dflt + e->off2, n) != 0);
    }
    case LS_SW_ENABLED_:
        return *(const bool *)(const void *)(obj + e->enable);
    case LS_SW_NEVER_:
        return false;
    case LS_SW_NOT_IDENTITY_:
        return !is_identity(*(const ls_quat *)(const void *)at);
    default:
        return true;
    }
}

// The one writing walker: ` keyword value...` for every property of table t
// that statement kind `kind` takes and that is to be written, in table order
// (dflt: the statement's default; s: the scene, for body labels; need: flags
// every property written must have, 0 for all).
static void write_props(out *o, const ls_scene *s, const ls_scene_props_ *t, const void *obj,
                        const void *dflt, uint32_t kind, unsigned need)
{
    const char *base = obj;
    for (uint32_t i = 0; i < t->count; i++) {
        const ls_scene_prop_ *e = &t->props[i];
        const void *at = base + e->off, *at2 = base + e->off2;
        bool degrees = kind < 32 && ((e->degrees >> kind) & 1u);
        char line[96];
        uint32_t shown = e->shown ? e->shown : e->kinds;
        if (kind >= 32 || !((shown >> kind) & 1u) || (e->flags & need) != need ||
            !prop_written(e, obj, dflt)) {
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
            emit_u32(o, e->name, (uint32_t)(*(const uint64_t *)at));
            break;
        case LS_SV_WORD_: {
            unsigned w, n = 0;
            memcpy(&w, at, sizeof w);
            while (e->words[n]) {
                n++;
            }
            emit(o, " ");
            emit(o, e->name);
            emit(o, " ");
            emit(o, e->words[w < n ? w : 0]); // a value out of range writes the first word
            break;
        }
        case LS_SV_INDEX_FX_: {
            char t2[LS_FX_TEXT_MAX];
            ls_fx_format(*(const ls_fx *)at2, t2);
            snprintf(line, sizeof line, " %s %u %s", e->name, *(const uint32_t *)at - 1, t2);
            emit(o, line);
            break;
        }
        case LS_SV_U64_: {
            snprintf(line, sizeof line, " %s %llu", e->name,
                     (unsigned long long)*(const uint64_t *)at);
            emit(o, line);
            break;
        }
        case LS_SV_QUAT_:
            emit_quat(o, e->name, *(const ls_quat *)at);
            break;
        case LS_SV_BODY_:
            emit(o, " ");
            emit(o, e->name);
            emit_body_ref(
                o, s,
                (ls_body_id){*(const uint32_t *)at + ((e->flags & LS_SP_ZERO_BASED_) ? 1u : 0u),
                             0});
            break;
        case LS_SV_WORD_BOOLS_:
            emit(o, " ");
            emit(o, e->name);
            emit(o, " ");
            emit(o, e->words[(*(const bool *)at ? 1 : 0) + (*(const bool *)at2 ? 2 : 0)]);
            break;
        case LS_SV_PINS_:
            emit_cloth_pins(o, *(const uint32_t *)at);
            break;
        case LS_SV_INDICES_: {
            const uint32_t *index = *(const uint32_t *const *)at;
            uint32_t n = *(const uint32_t *)at2;
            emit_u32(o, e->name, n);
            for (uint32_t k = 0; k < n; k++) {
                snprintf(line, sizeof line, " %u", index[k]);
                emit(o, line);
            }
            break;
        }
        case LS_SV_HULL_POINTS_:
        case LS_SV_MESH_VERTICES_:
        case LS_SV_MESH_TRIANGLES_:
            emit_shape_data(o, e, at);
            break;
        default: // LS_SV_NONE_
            break;
        }
    }
}

// A shape's kind keyword and its properties (ls_scene_shape_props_), on a
// body line or a shape line; `kind` is its type or LS_SCENE_PLANE_ALONE_.
static void emit_shape(out *o, const ls_scene *s, const ls_shape_def *sh, uint32_t kind)
{
    ls_shape_def base = ls_default_shape_def();
    emit(o, " ");
    emit(o, ls_shape_kind_of(sh->type) ? ls_shape_kind_of(sh->type)->name : "box");
    write_props(o, s, &ls_scene_shape_props_, sh, &base, kind, 0);
}

static void emit_body(out *o, const ls_scene *s, const ls_body_def *b, uint32_t player,
                      const char *label)
{
    static const char *const types[] = {"static", "kinematic", "dynamic"};
    const ls_shape_def *first = b->shape_count ? &b->shapes[0] : &b->shape;
    ls_body_def base = ls_default_body_def();
    char line[128];
    snprintf(line, sizeof line, "body %s", types[b->type % 3]);
    emit(o, line);
    // Planes keep the compact form of version 1 files (no density, pose or motion).
    uint32_t kind =
        first->type < LS_SHAPE_KIND_COUNT ? (uint32_t)first->type : LS_SCENE_SHAPE_OTHER_;
    kind = first->type == LS_SHAPE_PLANE && b->shape_count <= 1 ? LS_SCENE_PLANE_ALONE_ : kind;
    emit_shape(o, s, first, kind);
    write_props(o, s, &ls_scene_body_props_, b, &base, kind, 0);
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
        const ls_shape_def *sh = &b->shapes[k];
        emit(o, "shape");
        emit_shape(o, s, sh,
                   sh->type < LS_SHAPE_KIND_COUNT ? (uint32_t)sh->type : LS_SCENE_SHAPE_OTHER_);
        emit(o, "\n");
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
    write_props(o, s, &ls_scene_joint_props_, d, &base, (uint32_t)d->type, 0);
    emit(o, "\n");
}

// ---- Particle statements (SPEC.md §14) ----

// particle_body's embedded shape: its kind and geometry (the LS_SP_GEOMETRY_
// shape properties).
static void emit_embedded_shape(out *o, const ls_scene *s, const ls_shape_def *sh)
{
    ls_shape_def base = ls_default_shape_def();
    emit(o, " ");
    emit(o, ls_shape_kind_of(sh->type) ? ls_shape_kind_of(sh->type)->name : "box");
    write_props(o, s, &ls_scene_shape_props_, sh, &base,
                sh->type < LS_SHAPE_KIND_COUNT ? (uint32_t)sh->type : LS_SCENE_SHAPE_OTHER_,
                LS_SP_GEOMETRY_);
}

// `cloth|rope|ragdoll_particles|particle_body ...`: the statement's
// properties, its system's that differ from the builder's default, `pinned`.
static void emit_particles(out *o, const ls_scene *s, const ls_scene_particles *sp)
{
    ls_scene_particles d;
    memset(&d, 0, sizeof d);
    d.kind = sp->kind;
    const ls_particle_system_def *sys, *dsys;
    switch (sp->kind) {
    case LS_SCENE_CLOTH:
        d.cloth = ls_default_cloth_def();
        sys = &sp->cloth.system, dsys = &d.cloth.system;
        break;
    case LS_SCENE_ROPE:
        d.rope = ls_default_rope_def();
        sys = &sp->rope.system, dsys = &d.rope.system;
        break;
    case LS_SCENE_RAGDOLL:
        d.ragdoll = ls_default_particle_ragdoll_def();
        sys = &sp->ragdoll.system, dsys = &d.ragdoll.system;
        break;
    default:
        d.body = ls_default_particle_body_def();
        sys = &sp->body.system, dsys = &d.body.system;
        break;
    }
    emit(o, ls_scene_particle_keyword_(sp->kind));
    if (sp->kind == LS_SCENE_PARTICLE_BODY) {
        emit_embedded_shape(o, s, &sp->body.shape);
    }
    write_props(o, s, &ls_scene_particle_props_[sp->kind & 3u], sp, &d, 0, 0);
    write_props(o, s, &ls_scene_particle_system_props_, sys, dsys, 0, 0);
    write_props(o, s, &ls_scene_particle_common_props_, sp, &d, 0, 0);
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
    write_props(o, s, &ls_scene_vehicle_props_, v, &base, 0, 0);
    emit(o, "\n");
    ls_wheel_def wb = ls_default_wheel_def();
    for (uint32_t i = 0; i < d->wheel_count && i < LS_VEHICLE_MAX_WHEELS; i++) {
        emit(o, "wheel");
        write_props(o, s, &ls_scene_wheel_props_, &d->wheels[i], &wb, 0, 0);
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
    emit(o, "game soccer");
    write_props(o, s, &ls_scene_game_props_, &s->soccer, &s->soccer, LS_SCENE_GAME_SOCCER, 0);
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
    write_props(&o, s, &ls_scene_world_props_, s, &base, 0, 0);
    emit(&o, "\n");
    for (uint32_t i = 0; i < s->body_count; i++) {
        emit_body(&o, s, &s->bodies[i], player_of(s, i), s->body_label ? s->body_label[i] : NULL);
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
