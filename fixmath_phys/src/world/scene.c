// SPDX-License-Identifier: MIT
// Scene text format: see SPEC.md §14. A line is a keyword followed by
// `name value...` properties; `#` starts a comment. Parsing is integer-only.
// Particle statements (cloth, rope, ragdoll_particles, particle_body) fill the
// builders' definitions of ls/particles.h; their ranges are checked here as
// far as one field goes, the rest when the builder runs (instantiation).
#include "ls/scene.h"
#include "../math/quat_check.h"
#include "scene_internal.h"
#include "scene_props.h"

#include "../collision/shape_kind.h"
#include "../dynamics/joint.h"
#include "ls/fx_text.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_BODIES (1u << 20)

typedef struct parser {
    const char *p, *end, *line_start;
    uint32_t line;
    ls_error *err;       // never NULL inside the parser
    uint32_t player;     // `player K` of the body line being parsed, NO_PLAYER if none
    uint32_t world_line; // line of the `world` line (0: none yet)
    // Keywords seen on the current line (a repeated one is refused); body
    // type and shape keywords count as "type" and "shape".
    const char *seen[40];
    uint32_t nseen;
    const char *dir;       // directory of `obj` paths (NULL: refused)
    uint32_t *first_shape; // per body: index of its first shape in scene->shapes
    uint32_t shape_cap;
    // Shape data of the line being parsed (hull points, mesh data), built at its end.
    ls_vec3 *points;
    uint32_t npoints;
    const char *points_at;
    uint32_t *tris;
    uint32_t ntris;
    const char *mesh_at;
    char obj[256];
    uint32_t body_cap_seen;         // capacity of first_shape
    char label[LS_SCENE_LABEL_MAX]; // `label NAME` of the body line being parsed ("" if none)
    uint32_t label_cap;             // capacity of scene->body_label
    uint32_t joint_cap;             // capacity of scene->joints and joint_line
    uint32_t particle_cap;          // capacity of scene->particles
    uint32_t vehicle_cap;           // capacity of scene->vehicles
    uint32_t open_vehicle; // 1-based index of the vehicle whose wheel lines may follow (0: none)
    bool vehicle_is_car;   // the vehicle line being parsed had `car`
    uint32_t anti_roll_line[LS_VEHICLE_MAX_WHEELS];   // where each wheel of the open vehicle
    uint32_t anti_roll_column[LS_VEHICLE_MAX_WHEELS]; // gave `anti_roll J` (J checked at its end)
    uint32_t game_line;                               // line of the `game` line (0: none yet)
} parser;

#define NO_PLAYER UINT32_MAX

static ls_result fail_at(parser *ps, const char *at, const char *what, const char *detail)
{
    ls_error_set(ps->err, LS_ERR_PARSE, "%s%s%s", what, detail ? ": " : "", detail ? detail : "");
    ps->err->line = ps->line;
    ps->err->column = (uint32_t)(at - ps->line_start) + 1;
    return LS_ERR_PARSE;
}

static bool at_eol(const parser *ps)
{
    return ps->p >= ps->end || *ps->p == '\n' || *ps->p == '#';
}

static void skip_blanks(parser *ps)
{
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\r')) {
        ps->p++;
    }
    if (ps->p < ps->end && *ps->p == '#') {
        while (ps->p < ps->end && *ps->p != '\n') {
            ps->p++;
        }
    }
}

// The next whitespace-delimited token, copied into buf (NUL-terminated). A
// token longer than buf ends in \x01, a byte no number, integer or keyword
// contains, so a cut token is refused instead of parsed from its prefix.
static bool next_token(parser *ps, char *buf, size_t size, const char **where)
{
    skip_blanks(ps);
    if (at_eol(ps)) {
        return false;
    }
    *where = ps->p;
    size_t n = 0;
    while (ps->p < ps->end && *ps->p != ' ' && *ps->p != '\t' && *ps->p != '\r' && *ps->p != '\n') {
        if (n + 1 < size) {
            buf[n++] = *ps->p;
        } else {
            buf[size - 2] = '\x01';
        }
        ps->p++;
    }
    buf[n] = '\0';
    return true;
}

static ls_result read_fx(parser *ps, const char *name, ls_fx *out)
{
    char tok[64];
    const char *where = ps->p, *end;
    if (!next_token(ps, tok, sizeof tok, &where)) {
        return fail_at(ps, where, "missing number after", name);
    }
    ls_result r = ls_fx_parse(tok, out, &end);
    if (r == LS_ERR_OUT_OF_RANGE) {
        char what[LS_ERROR_MESSAGE_MAX / 2 + 64]; // room for any name and token
        snprintf(what, sizeof what, "%s (got %s; Q16.16 holds -32768..32767.99998)", name, tok);
        return fail_at(ps, where, "number out of range for", what);
    }
    if (r != LS_OK || *end != '\0') {
        return fail_at(ps, where, "not a number for", name);
    }
    return LS_OK;
}

static ls_result read_vec3(parser *ps, const char *name, ls_vec3 *v)
{
    ls_result r = read_fx(ps, name, &v->x);
    if (r == LS_OK) {
        r = read_fx(ps, name, &v->y);
    }
    return r == LS_OK ? read_fx(ps, name, &v->z) : r;
}

static ls_result read_uint(parser *ps, const char *name, uint32_t lo, uint32_t hi, uint32_t *out)
{
    char tok[32];
    const char *where = ps->p;
    if (!next_token(ps, tok, sizeof tok, &where)) {
        return fail_at(ps, where, "missing integer after", name);
    }
    char *end;
    unsigned long long v = strtoull(tok, &end, 10);
    if (*end != '\0' || tok[0] == '-' || tok[0] == '+' || v < lo || v > hi) {
        char what[LS_ERROR_MESSAGE_MAX / 2];
        snprintf(what, sizeof what, "%s (got %s; allowed %u..%u)", name, tok, lo, hi);
        return fail_at(ps, where, "integer out of range for", what);
    }
    *out = (uint32_t)v;
    return LS_OK;
}

// A Q16.16 number within [lo, hi] (and not 0 when `nonzero`); the message
// shows the value given and the range.
static ls_result read_fx_in(parser *ps, const char *name, ls_fx lo, ls_fx hi, ls_fx *out)
{
    const char *where;
    skip_blanks(ps);
    where = ps->p;
    ls_result r = read_fx(ps, name, out);
    if (r == LS_OK && (*out < lo || *out > hi)) {
        char a[LS_FX_TEXT_MAX], b[LS_FX_TEXT_MAX], g[LS_FX_TEXT_MAX];
        char what[LS_ERROR_MESSAGE_MAX / 2];
        ls_fx_format(*out, g), ls_fx_format(lo, a), ls_fx_format(hi, b);
        snprintf(what, sizeof what, "%s (got %s; allowed %s..%s)", name, g, a, b);
        return fail_at(ps, where, "number out of range for", what);
    }
    return r;
}

static ls_result read_vec3_in(parser *ps, const char *name, ls_fx lo, ls_fx hi, ls_vec3 *v)
{
    ls_result r = read_fx_in(ps, name, lo, hi, &v->x);
    if (r == LS_OK) {
        r = read_fx_in(ps, name, lo, hi, &v->y);
    }
    return r == LS_OK ? read_fx_in(ps, name, lo, hi, &v->z) : r;
}

// One keyword out of `words` (NULL-terminated); its index.
static ls_result read_word(parser *ps, const char *name, const char *const *words,
                           const char *allowed, unsigned *out)
{
    char tok[32];
    const char *where = ps->p;
    if (!next_token(ps, tok, sizeof tok, &where)) {
        return fail_at(ps, where, "missing word after", name);
    }
    for (unsigned i = 0; words[i]; i++) {
        if (strcmp(tok, words[i]) == 0) {
            *out = i;
            return LS_OK;
        }
    }
    char what[LS_ERROR_MESSAGE_MAX / 2];
    snprintf(what, sizeof what, "%s (got %s; allowed %s)", name, tok, allowed);
    return fail_at(ps, where, "unknown word for", what);
}

// A 64-bit unsigned integer (a seed).
static ls_result read_u64(parser *ps, const char *name, uint64_t *out)
{
    char tok[32];
    const char *where = ps->p;
    if (!next_token(ps, tok, sizeof tok, &where)) {
        return fail_at(ps, where, "missing integer after", name);
    }
    char *end;
    errno = 0;
    unsigned long long v = strtoull(tok, &end, 10);
    if (*end != '\0' || tok[0] < '0' || tok[0] > '9' || errno == ERANGE) {
        char what[LS_ERROR_MESSAGE_MAX / 2];
        snprintf(what, sizeof what, "%s (got %s; allowed 0..18446744073709551615)", name, tok);
        return fail_at(ps, where, "integer out of range for", what);
    }
    *out = (uint64_t)v;
    return LS_OK;
}

static ls_result read_degrees(parser *ps, const char *name, ls_fx *out)
{
    ls_fx deg;
    ls_result r = read_fx(ps, name, &deg);
    *out = ls_joint_degrees_to_radians_(deg);
    return r;
}

// One number of property e (the second when `second`): in degrees (radians
// stored) for the kinds of e->degrees, within its range when it has one.
static ls_result read_prop_fx(parser *ps, const ls_scene_prop_ *e, bool degrees, bool second,
                              ls_fx *out)
{
    if (degrees) {
        return read_degrees(ps, e->name, out);
    }
    if (e->flags & LS_SP_OR_ZERO_) {
        skip_blanks(ps);
        const char *where = ps->p;
        ls_result r = read_fx(ps, e->name, out);
        if (r == LS_OK && *out != 0 && (*out < e->lo || *out > e->hi)) {
            char g[LS_FX_TEXT_MAX], a[LS_FX_TEXT_MAX], b[LS_FX_TEXT_MAX];
            char what[LS_ERROR_MESSAGE_MAX / 2];
            ls_fx_format(*out, g), ls_fx_format((ls_fx)e->lo, a), ls_fx_format((ls_fx)e->hi, b);
            snprintf(what, sizeof what, "%s (got %s; allowed 0 (never) or %s..%s)", e->name, g, a,
                     b);
            return fail_at(ps, where, "number out of range for", what);
        }
        return r;
    }
    if (!(e->flags & LS_SP_RANGE_)) {
        return read_fx(ps, e->name, out);
    }
    return read_fx_in(ps, e->name, (ls_fx)(second ? e->lo2 : e->lo),
                      (ls_fx)(second ? e->hi2 : e->hi), out);
}

static ls_result read_body_ref(parser *ps, const ls_scene *s, const char *name, uint32_t *out);
static ls_result read_cloth_pins(parser *ps, const char *name, uint32_t *out);
static ls_result read_label(parser *ps, const ls_scene *s);
static ls_result read_quat(parser *ps, const char *key, const char *where, ls_quat *q);

// The one reading walker: the value of property e (scene_props.h) after its
// keyword at `where`, into the struct obj of a statement of kind `kind` in
// scene s (bodies so far).
static ls_result read_prop(parser *ps, const ls_scene *s, const ls_scene_prop_ *e, void *obj,
                           uint32_t kind, const char *where)
{
    char *base = obj;
    void *at = base + e->off, *at2 = base + e->off2;
    bool degrees = kind < 32 && ((e->degrees >> kind) & 1u);
    ls_result r = LS_OK;
    if (e->enable) {
        *(bool *)(void *)(base + e->enable) = true;
    }
    switch ((ls_scene_value_)e->value) {
    case LS_SV_FLAG_:
        *(bool *)at = e->lo != 0;
        return LS_OK;
    case LS_SV_FX_:
        return read_prop_fx(ps, e, degrees, false, at);
    case LS_SV_FX2_: {
        ls_fx *a = at, *b = at2;
        r = read_prop_fx(ps, e, degrees, false, a);
        if (r == LS_OK && (e->flags & LS_SP_SECOND_OPTIONAL_)) {
            skip_blanks(ps);
            char c = at_eol(ps) ? ' ' : *ps->p;
            if (!((c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.')) {
                return LS_OK;
            }
        }
        if (r == LS_OK) {
            r = read_prop_fx(ps, e, degrees, true, b);
        }
        if (r == LS_OK && (((e->flags & LS_SP_ASCENDING_) && *a > *b) ||
                           ((e->flags & LS_SP_DESCENDING_) && *b > *a))) {
            return fail_at(ps, where, e->name, e->why);
        }
        return r;
    }
    case LS_SV_VEC3_: {
        ls_vec3 *v = at;
        r = (e->flags & LS_SP_RANGE_) ? read_vec3_in(ps, e->name, (ls_fx)e->lo, (ls_fx)e->hi, v)
                                      : read_vec3(ps, e->name, v);
        if (r == LS_OK && (e->flags & LS_SP_DIRECTION_) && ls_vec3_equal(*v, ls_vec3_zero())) {
            return fail_at(ps, where, e->name, "zero vector has no direction");
        }
        return r;
    }
    case LS_SV_U32_:
        return read_uint(ps, e->name, (uint32_t)e->lo, (uint32_t)e->hi, at);
    case LS_SV_U32_2_:
        r = read_uint(ps, e->name, (uint32_t)e->lo, (uint32_t)e->hi, at);
        return r == LS_OK ? read_uint(ps, e->name, (uint32_t)e->lo2, (uint32_t)e->hi2, at2) : r;
    case LS_SV_U32_AS_U64_: {
        uint32_t v = 0;
        r = read_uint(ps, e->name, (uint32_t)e->lo, (uint32_t)e->hi, &v);
        *(uint64_t *)at = v;
        return r;
    }
    case LS_SV_WORD_: {
        unsigned w = 0;
        r = read_word(ps, e->name, e->words, e->allowed, &w);
        memcpy(at, &w, sizeof w);
        return r;
    }
    case LS_SV_U64_:
        return read_u64(ps, e->name, at);
    case LS_SV_QUAT_:
        return read_quat(ps, e->name, where, at);
    case LS_SV_BODY_: {
        uint32_t body;
        r = read_body_ref(ps, s, e->name, &body);
        if (r == LS_OK) {
            *(uint32_t *)at = body + ((e->flags & LS_SP_ZERO_BASED_) ? 0u : 1u);
        }
        return r;
    }
    case LS_SV_WORD_BOOLS_: {
        unsigned w = 0;
        r = read_word(ps, e->name, e->words, e->allowed, &w);
        *(bool *)at = (w & 1u) != 0;
        *(bool *)at2 = (w & 2u) != 0;
        return r;
    }
    case LS_SV_PINS_:
        return read_cloth_pins(ps, e->name, at);
    default: // LS_SP_BY_HAND_ entries: their statement reads them
        return fail_at(ps, where, "unknown property", e->name);
    }
}

// `world` properties (ls_scene_world_props_): read_prop, but for the speed
// threshold, whose message and column predate read_fx_in's.
static ls_result parse_world_prop(parser *ps, ls_scene *s, const char *key, const char *where)
{
    int k = ls_scene_prop_find_(&ls_scene_world_props_, key);
    if (k < 0) {
        return fail_at(ps, where, "unknown world property", key);
    }
    const ls_scene_prop_ *e = &ls_scene_world_props_.props[k];
    if (!(e->flags & LS_SP_BY_HAND_)) {
        return read_prop(ps, s, e, s, 0, where);
    }
    ls_world_def *d = &s->world; // restitution_threshold
    const char *at = ps->p;
    ls_result r = read_fx(ps, key, &d->restitution_threshold);
    if (r == LS_OK && (d->restitution_threshold < e->lo || d->restitution_threshold > e->hi)) {
        return fail_at(ps, at, "out of range (0..100 m/s):", key);
    }
    return r;
}

// Body type keywords; LS_ERR_NOT_FOUND when key is none.
static ls_result parse_body_type(ls_body_def *b, const char *key)
{
    static const char *const types[] = {"static", "kinematic", "dynamic"};
    for (int i = 0; i < 3; i++) {
        if (strcmp(key, types[i]) == 0) {
            b->type = (ls_body_type)i;
            return LS_OK;
        }
    }
    return LS_ERR_NOT_FOUND;
}

static ls_result read_quat(parser *ps, const char *key, const char *where, ls_quat *q)
{
    ls_vec3 xyz;
    ls_result r = read_vec3(ps, key, &xyz);
    ls_fx qw = 0;
    if (r == LS_OK) {
        r = read_fx(ps, key, &qw);
    }
    *q = ls_quat_make(xyz.x, xyz.y, xyz.z, qw);
    // Normalisation needs a length it can divide by exactly (SPEC.md §14).
    uint64_t sq = ls_quat_len_sq_wide(*q);
    if (r == LS_OK && sq < ((uint64_t)1 << 16)) {
        return fail_at(ps, where, key, "length below 1/256 (all zero?): cannot be normalised");
    }
    return r;
}

// `points N x y z ...` (hull), `vertices N ...` and `triangles M i j k ...`
// (inline mesh): counts are bounded by the text left (every number takes at
// least two bytes with its blank), so a short file cannot ask for a large
// allocation.
static ls_result read_count(parser *ps, const char *key, uint32_t lo, uint32_t hi, uint32_t per,
                            uint32_t *n)
{
    ls_result r = read_uint(ps, key, lo, hi, n);
    if (r == LS_OK && (size_t)*n * per * 2 > (size_t)(ps->end - ps->p)) {
        return fail_at(ps, ps->p, "fewer numbers than announced after", key);
    }
    return r;
}

static ls_result read_points(parser *ps, const char *key, const char *where, uint32_t lo,
                             uint32_t hi)
{
    uint32_t n;
    ls_result r = read_count(ps, key, lo, hi, 3, &n);
    if (r != LS_OK) {
        return r;
    }
    free(ps->points);
    ps->points = malloc((n ? n : 1) * sizeof *ps->points);
    if (!ps->points) {
        return fail_at(ps, where, "out of memory for", key);
    }
    ps->npoints = n;
    ps->points_at = where;
    for (uint32_t i = 0; i < n && r == LS_OK; i++) {
        r = read_vec3(ps, key, &ps->points[i]);
    }
    return r;
}

static ls_result read_triangles(parser *ps, const char *key, const char *where)
{
    uint32_t n;
    ls_result r = read_count(ps, key, 1, LS_MESH_MAX_TRIANGLES, 3, &n);
    if (r != LS_OK) {
        return r;
    }
    free(ps->tris);
    ps->tris = malloc((size_t)n * 3 * sizeof *ps->tris);
    if (!ps->tris) {
        return fail_at(ps, where, "out of memory for", key);
    }
    ps->ntris = n;
    for (size_t i = 0; i < (size_t)n * 3 && r == LS_OK; i++) {
        r = read_uint(ps, key, 0, LS_MESH_MAX_VERTICES - 1, &ps->tris[i]);
    }
    return r;
}

// `points`, `vertices`, `triangles` and `obj` (ls_scene_shape_props_, by
// hand): kept for the end of the line, where the hull or mesh is built.
static ls_result read_shape_data(parser *ps, const char *key, const char *where)
{
    if (strcmp(key, "points") == 0) {
        return read_points(ps, key, where, 4, 256);
    }
    if (strcmp(key, "vertices") == 0) {
        ps->mesh_at = where;
        return read_points(ps, key, where, 3, LS_MESH_MAX_VERTICES);
    }
    if (strcmp(key, "triangles") == 0) {
        return read_triangles(ps, key, where);
    }
    const char *at = ps->p; // obj
    if (!next_token(ps, ps->obj, sizeof ps->obj, &at) || strchr(ps->obj, '\x01')) {
        return fail_at(ps, at, "missing or overlong path after", key);
    }
    ps->mesh_at = at;
    return LS_OK;
}

// Properties of a shape, on a body line (its first shape) or a `shape` line:
// a shape kind keyword or ls_scene_shape_props_; LS_ERR_NOT_FOUND for others.
static ls_result parse_shape_prop(parser *ps, const ls_scene *s, ls_shape_def *sh, const char *key,
                                  const char *where)
{
    ls_shape_type kind = ls_shape_kind_named_(key);
    if (kind != LS_SHAPE_KIND_COUNT) {
        sh->type = kind;
        return LS_OK;
    }
    int k = ls_scene_prop_find_(&ls_scene_shape_props_, key);
    if (k < 0) {
        return LS_ERR_NOT_FOUND;
    }
    const ls_scene_prop_ *e = &ls_scene_shape_props_.props[k];
    return (e->flags & LS_SP_BY_HAND_) ? read_shape_data(ps, key, where)
                                       : read_prop(ps, s, e, sh, 0, where);
}

// Properties of a body line: a body type keyword, a shape property (its first
// shape) or ls_scene_body_props_.
static ls_result parse_body_prop(parser *ps, const ls_scene *s, ls_body_def *b, const char *key,
                                 const char *where)
{
    if (parse_body_type(b, key) == LS_OK) {
        return LS_OK;
    }
    ls_result r = parse_shape_prop(ps, s, &b->shape, key, where);
    if (r != LS_ERR_NOT_FOUND) {
        return r;
    }
    int k = ls_scene_prop_find_(&ls_scene_body_props_, key);
    if (k < 0) {
        return fail_at(ps, where, "unknown body property", key);
    }
    const ls_scene_prop_ *e = &ls_scene_body_props_.props[k];
    if (e->flags & LS_SP_BY_HAND_) { // `player K` and `label NAME`: the scene keeps them
        return strcmp(key, "label") == 0
                   ? read_label(ps, s)
                   : read_uint(ps, key, (uint32_t)e->lo, (uint32_t)e->hi, &ps->player);
    }
    return read_prop(ps, s, e, b, 0, where);
}

static ls_result add_body(ls_scene *s, uint32_t *cap, const ls_body_def *b, uint32_t line)
{
    if (s->body_count == *cap) {
        uint32_t ncap = *cap ? *cap * 2 : 64;
        if (ncap > MAX_BODIES) {
            return LS_ERR_CAPACITY;
        }
        ls_body_def *nb = realloc(s->bodies, ncap * sizeof *nb);
        if (nb) {
            s->bodies = nb;
        }
        uint32_t *nl = nb ? realloc(s->body_line, ncap * sizeof *nl) : NULL;
        if (!nl) {
            return LS_ERR_NO_MEMORY;
        }
        s->body_line = nl;
        *cap = ncap;
    }
    s->body_line[s->body_count] = line;
    s->bodies[s->body_count++] = *b;
    return LS_OK;
}

// Players are numbered without gaps; a slot names exactly one body.
static ls_result assign_player(parser *ps, ls_scene *s)
{
    uint32_t k = ps->player;
    if (k < s->player_count && s->player_body[k] != NO_PLAYER) {
        char what[48];
        snprintf(what, sizeof what, "%u already belongs to body %u", k, s->player_body[k] + 1);
        return fail_at(ps, ps->line_start, "player", what);
    }
    for (uint32_t j = s->player_count; j < k; j++) {
        s->player_body[j] = NO_PLAYER;
    }
    if (k >= s->player_count) {
        s->player_count = k + 1;
    }
    s->player_body[k] = s->body_count - 1;
    return LS_OK;
}

// Records key as seen on this line; false if it (or another keyword of its
// group: body type, shape kind) was already there.
static bool once_per_line(parser *ps, const char *key)
{
    static const char *const types[] = {"static", "kinematic", "dynamic"};
    const char *name = key;
    for (int i = 0; i < 3; i++) {
        name = strcmp(key, types[i]) == 0 ? "type" : name;
    }
    name = ls_shape_kind_named_(key) != LS_SHAPE_KIND_COUNT ? "shape" : name;
    for (uint32_t i = 0; i < ps->nseen; i++) {
        if (strcmp(ps->seen[i], name) == 0) {
            return false;
        }
    }
    // Keys are compared by content, so they must outlive the token buffer:
    // "type", "shape" and the tables' keywords are string literals; an
    // unknown one fails anyway.
    const char *kept = name == key ? NULL : name;
    const ls_scene_props_ *const tables[] = {&ls_scene_world_props_, &ls_scene_shape_props_,
                                             &ls_scene_body_props_};
    for (size_t t = 0; !kept && t < sizeof tables / sizeof tables[0]; t++) {
        int k = ls_scene_prop_find_(tables[t], key);
        kept = k >= 0 && !(tables[t]->props[k].flags & LS_SP_REPEATABLE_) ? tables[t]->props[k].name
                                                                          : NULL;
    }
    if (kept && ps->nseen < sizeof ps->seen / sizeof ps->seen[0]) {
        ps->seen[ps->nseen++] = kept;
    }
    return true;
}

// Append one pointer to a growing array of pointers.
static bool push_ptr(void ***arr, uint32_t *count, void *p)
{
    void **n = realloc(*arr, (*count + 1) * sizeof *n);
    if (!n) {
        return false;
    }
    n[(*count)++] = p;
    *arr = n;
    return true;
}

// Reads an OBJ file named relative to the scene's directory. The path must be
// relative and stay below that directory (no "..", no leading '/'): a scene
// from a stranger must not read files elsewhere. At most 64 MiB.
static char *read_obj(parser *ps, size_t *len, const char **why)
{
    const char *p = ps->obj;
    if (!ps->dir) {
        *why = "no directory to resolve it in (parse the scene with ls_scene_load or "
               "ls_scene_parse_in)";
        return NULL;
    }
    if (p[0] == '/' || strstr(p, "..") || strchr(p, '\\')) {
        *why = "the path must be relative to the scene file and stay below it (no '..')";
        return NULL;
    }
    char full[4096];
    if ((size_t)snprintf(full, sizeof full, "%s/%s", ps->dir, p) >= sizeof full) {
        *why = "path too long";
        return NULL;
    }
    FILE *f = fopen(full, "rb");
    if (!f) {
        *why = "cannot open the file";
        return NULL;
    }
    size_t cap = 1 << 16, n = 0, got;
    char *buf = malloc(cap);
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            char *nb = cap >= ((size_t)64 << 20) ? NULL : realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                *why = "file too large (over 64 MiB) or out of memory";
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    if (buf && ferror(f)) {
        free(buf);
        buf = NULL;
        *why = "cannot read the file";
    }
    fclose(f);
    *len = n;
    return buf;
}

// Builds the hull or mesh a shape line described (points, vertices +
// triangles, or obj) and stores it in the scene, which owns it.
static ls_result finish_shape(parser *ps, ls_scene *s, ls_shape_def *sh)
{
    ls_error e;
    ls_error_clear(&e);
    ls_result r = LS_OK;
    if (sh->type == LS_SHAPE_HULL) {
        if (!ps->points_at || ps->mesh_at) {
            return fail_at(ps, ps->line_start, "hull", "needs `points N x y z ...` (4..256)");
        }
        ls_hull *h = ls_hull_create(ps->points, ps->npoints, &e);
        if (!h) {
            return fail_at(ps, ps->points_at, "hull points", e.message);
        }
        if (!push_ptr((void ***)&s->hulls, &s->hull_count, h)) {
            ls_hull_destroy(h);
            return fail_at(ps, ps->points_at, "hull points", "out of memory");
        }
        sh->hull = h;
    } else if (sh->type == LS_SHAPE_MESH) {
        ls_mesh *m = NULL;
        if (ps->obj[0]) {
            const char *why = NULL;
            size_t len = 0;
            char *text = read_obj(ps, &len, &why);
            if (!text) {
                char what[300];
                snprintf(what, sizeof what, "%.200s: %s", ps->obj, why);
                return fail_at(ps, ps->mesh_at, "mesh obj", what);
            }
            m = ls_mesh_create_obj(text, len, &e);
            free(text);
            if (!m) {
                char what[LS_ERROR_MESSAGE_MAX];
                snprintf(what, sizeof what, "%.60s:%u:%u: %.160s", ps->obj, e.line, e.column,
                         e.message);
                return fail_at(ps, ps->mesh_at, "mesh obj", what);
            }
        } else if (ps->mesh_at && ps->tris) {
            m = ls_mesh_create(ps->points, ps->npoints, ps->tris, ps->ntris, &e);
            if (!m) {
                return fail_at(ps, ps->mesh_at, "mesh", e.message);
            }
        } else {
            return fail_at(ps, ps->line_start, "mesh",
                           "needs `obj FILE` or `vertices N ... triangles M ...`");
        }
        if (!push_ptr((void ***)&s->meshes, &s->mesh_count, m)) {
            ls_mesh_destroy(m);
            return fail_at(ps, ps->mesh_at, "mesh", "out of memory");
        }
        sh->mesh = m;
    } else if (ps->points_at || ps->mesh_at || ps->tris) {
        r = fail_at(ps,
                    ps->points_at ? ps->points_at
                    : ps->mesh_at ? ps->mesh_at
                                  : ps->line_start,
                    "points, vertices, triangles and obj", "belong to hull and mesh shapes only");
    }
    return r;
}

// Appends a shape to the last body: its body-line shape becomes shapes[first]
// the first time.
static ls_result add_shape(parser *ps, ls_scene *s, const ls_shape_def *sh)
{
    ls_body_def *b = &s->bodies[s->body_count - 1];
    uint32_t need = s->shape_total + (b->shape_count == 0 ? 2 : 1);
    if (b->shape_count + (b->shape_count == 0 ? 2u : 1u) > LS_BODY_MAX_SHAPES) {
        return fail_at(ps, ps->line_start, "shape", "a body has at most 64 shapes");
    }
    if (need > ps->shape_cap) {
        uint32_t cap = ps->shape_cap ? ps->shape_cap * 2 : 64;
        cap = cap < need ? need : cap;
        ls_shape_def *n = realloc(s->shapes, cap * sizeof *n);
        if (!n) {
            return fail_at(ps, ps->line_start, "shape", "out of memory");
        }
        s->shapes = n;
        ps->shape_cap = cap;
    }
    if (b->shape_count == 0) {
        ps->first_shape[s->body_count - 1] = s->shape_total;
        s->shapes[s->shape_total++] = b->shape;
        b->shape_count = 1;
    }
    s->shapes[s->shape_total++] = *sh;
    b->shape_count++;
    return LS_OK;
}

static void reset_line_data(parser *ps)
{
    free(ps->points);
    free(ps->tris);
    ps->points = NULL;
    ps->tris = NULL;
    ps->npoints = ps->ntris = 0;
    ps->points_at = ps->mesh_at = NULL;
    ps->obj[0] = '\0';
}

// ---- Labels and joints (SPEC.md §14, §23) ----

static bool label_char(char c, bool first)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' ||
           (!first && c >= '0' && c <= '9');
}

// The file index of the body labelled `name`, or UINT32_MAX.
static uint32_t find_label(const ls_scene *s, const char *name)
{
    for (uint32_t i = 0; s->body_label && i < s->body_count; i++) {
        if (s->body_label[i] && strcmp(s->body_label[i], name) == 0) {
            return i;
        }
    }
    return UINT32_MAX;
}

// `label NAME` on a body line: a new, well-formed name.
static ls_result read_label(parser *ps, const ls_scene *s)
{
    const char *at = ps->p;
    if (!next_token(ps, ps->label, sizeof ps->label, &at)) {
        return fail_at(ps, at, "missing name after", "label");
    }
    bool ok = label_char(ps->label[0], true);
    for (size_t i = 1; ok && ps->label[i]; i++) {
        ok = label_char(ps->label[i], false);
    }
    if (!ok) {
        ps->label[0] = '\0';
        return fail_at(ps, at, "label",
                       "a name is a letter or '_' then letters, digits or '_' (at most 63)");
    }
    uint32_t other = find_label(s, ps->label);
    if (other != UINT32_MAX) {
        char what[LS_SCENE_LABEL_MAX + 48];
        snprintf(what, sizeof what, "%s already names body %u", ps->label, other);
        ps->label[0] = '\0';
        return fail_at(ps, at, "duplicate label", what);
    }
    return LS_OK;
}

// Stores the label of the body just added (body index count - 1). Called for
// every body: once any body has a label the array grows with the bodies, so
// every reader may index it by any body index below body_count.
static ls_result store_label(parser *ps, ls_scene *s, uint32_t cap)
{
    if (ps->label[0] == '\0' && !s->body_label) {
        return LS_OK;
    }
    if (ps->label_cap < cap) {
        char **n = realloc(s->body_label, cap * sizeof *n);
        if (!n) {
            return fail_at(ps, ps->line_start, "label", "out of memory");
        }
        memset(n + ps->label_cap, 0, (cap - ps->label_cap) * sizeof *n);
        s->body_label = n;
        ps->label_cap = cap;
    }
    if (ps->label[0] == '\0') {
        return LS_OK;
    }
    size_t len = strlen(ps->label) + 1;
    char *copy = malloc(len);
    if (!copy) {
        return fail_at(ps, ps->line_start, "label", "out of memory");
    }
    memcpy(copy, ps->label, len);
    s->body_label[s->body_count - 1] = copy;
    return LS_OK;
}

// A body reference of a joint line: a 0-based index of an earlier body or a label.
static ls_result read_body_ref(parser *ps, const ls_scene *s, const char *name, uint32_t *out)
{
    char tok[LS_SCENE_LABEL_MAX];
    const char *at = ps->p;
    if (!next_token(ps, tok, sizeof tok, &at)) {
        return fail_at(ps, at, "missing body (index or label) for", name);
    }
    char what[LS_SCENE_LABEL_MAX + 64];
    if (tok[0] >= '0' && tok[0] <= '9') {
        char *end;
        unsigned long long v = strtoull(tok, &end, 10);
        if (*end != '\0' || v >= s->body_count) {
            snprintf(what, sizeof what, "%s (got %s; %u bodies so far, numbered from 0)", name, tok,
                     s->body_count);
            return fail_at(ps, at, "unknown body", what);
        }
        *out = (uint32_t)v;
        return LS_OK;
    }
    *out = find_label(s, tok);
    if (*out == UINT32_MAX) {
        snprintf(what, sizeof what, "%s (no earlier body is labelled %s)", name, tok);
        return fail_at(ps, at, "unknown body", what);
    }
    return LS_OK;
}

static ls_result add_joint(parser *ps, ls_scene *s, const ls_joint_def *d)
{
    if (s->joint_count == ps->joint_cap) {
        uint32_t ncap = ps->joint_cap ? ps->joint_cap * 2 : 16;
        if (ncap > (1u << 20)) {
            return fail_at(ps, ps->line_start, "too many joints", "at most 2^20");
        }
        ls_joint_def *nj = realloc(s->joints, ncap * sizeof *nj);
        if (nj) {
            s->joints = nj;
        }
        uint32_t *nl = nj ? realloc(s->joint_line, ncap * sizeof *nl) : NULL;
        if (!nl) {
            return fail_at(ps, ps->line_start, "too many joints", "out of memory");
        }
        s->joint_line = nl;
        ps->joint_cap = ncap;
    }
    s->joint_line[s->joint_count] = ps->line;
    s->joints[s->joint_count++] = *d;
    return LS_OK;
}

// `joint TYPE A B property...`
static ls_result parse_joint(parser *ps, ls_scene *s)
{
    char key[32];
    const char *where = ps->p, *type_at;
    if (!next_token(ps, key, sizeof key, &type_at)) {
        return fail_at(ps, where, "missing joint type after", "joint");
    }
    ls_joint_def d = ls_default_joint_def();
    d.type = ls_joint_kind_named_(key);
    if (d.type == LS_JOINT_KIND_COUNT) {
        return fail_at(ps, type_at,
                       "unknown joint type (ball, hinge, fixed, prismatic, distance, "
                       "cone)",
                       key);
    }
    uint32_t a, b;
    const char *b_at = NULL;
    ls_result r = read_body_ref(ps, s, "body a", &a);
    if (r == LS_OK) {
        skip_blanks(ps);
        b_at = ps->p;
        r = read_body_ref(ps, s, "body b", &b);
    }
    if (r != LS_OK) {
        return r;
    }
    if (a == b) {
        return fail_at(ps, b_at, "same body twice", "a joint joins two different bodies");
    }
    d.body_a.index1 = a + 1;
    d.body_b.index1 = b + 1;
    // Properties (ls_scene_joint_props_): every keyword of the table, else an error.
    const ls_scene_props_ *t = &ls_scene_joint_props_;
    unsigned seen = 0, kind_bit = 1u << d.type;
    while (next_token(ps, key, sizeof key, &where)) {
        int k = ls_scene_prop_find_(t, key);
        if (k < 0) {
            return fail_at(ps, where, "unknown joint property", key);
        }
        if (!(t->props[k].kinds & kind_bit)) {
            char what[64];
            snprintf(what, sizeof what, "does not apply to a %s joint",
                     ls_joint_kind_of_(d.type)->name);
            return fail_at(ps, where, key, what);
        }
        if (seen & (1u << k)) {
            return fail_at(ps, where, "repeated on this line", key);
        }
        seen |= 1u << k;
        r = read_prop(ps, s, &t->props[k], &d, (uint32_t)d.type, where);
        if (r != LS_OK) {
            return r;
        }
    }
    // Required properties, reported at the joint type.
    for (uint32_t i = 0; i < t->count; i++) {
        if ((t->props[i].required & kind_bit) && !(seen & (1u << i))) {
            return fail_at(ps, type_at, ls_joint_kind_of_(d.type)->name, t->props[i].why);
        }
    }
    return add_joint(ps, s, &d);
}

// ---- Particle statements (SPEC.md §14, §24) ----

// `cloth`, `rope`, `ragdoll_particles`, `particle_body`: the keyword of each
// ls_scene_particle_kind.
static const char *const particle_statement[] = {"cloth", "rope", "ragdoll_particles",
                                                 "particle_body"};

const char *ls_scene_particle_keyword_(ls_scene_particle_kind kind)
{
    return particle_statement[kind & 3u];
}

// Cloth pin names (`pins NAME+NAME...`), bits of ls_cloth_def.pins; the last
// two are shorthands.
static const struct {
    const char *name;
    uint32_t bits;
} cloth_pins[] = {
    {"corner00", LS_CLOTH_PIN_CORNER_00},
    {"corner10", LS_CLOTH_PIN_CORNER_10},
    {"corner01", LS_CLOTH_PIN_CORNER_01},
    {"corner11", LS_CLOTH_PIN_CORNER_11},
    {"edge_v0", LS_CLOTH_PIN_EDGE_V0},
    {"edge_v1", LS_CLOTH_PIN_EDGE_V1},
    {"edge_u0", LS_CLOTH_PIN_EDGE_U0},
    {"edge_u1", LS_CLOTH_PIN_EDGE_U1},
    {"corners", LS_CLOTH_PIN_CORNER_00 | LS_CLOTH_PIN_CORNER_10 | LS_CLOTH_PIN_CORNER_01 |
                    LS_CLOTH_PIN_CORNER_11},
    {"edges",
     LS_CLOTH_PIN_EDGE_V0 | LS_CLOTH_PIN_EDGE_V1 | LS_CLOTH_PIN_EDGE_U0 | LS_CLOTH_PIN_EDGE_U1},
};

static ls_result read_cloth_pins(parser *ps, const char *name, uint32_t *out)
{
    char tok[LS_SCENE_LABEL_MAX * 2];
    const char *where = ps->p;
    if (!next_token(ps, tok, sizeof tok, &where)) {
        return fail_at(ps, where, "missing pin names after", name);
    }
    *out = 0;
    if (strcmp(tok, "none") == 0) { // the writer's form of no pins (when the default has some)
        return LS_OK;
    }
    for (char *p = tok; *p;) {
        size_t n = strcspn(p, "+");
        uint32_t bits = 0;
        for (size_t i = 0; i < sizeof cloth_pins / sizeof cloth_pins[0]; i++) {
            bits = strlen(cloth_pins[i].name) == n && strncmp(cloth_pins[i].name, p, n) == 0
                       ? cloth_pins[i].bits
                       : bits;
        }
        if (bits == 0 || (*out & bits) == bits) {
            char what[LS_ERROR_MESSAGE_MAX];
            snprintf(what, sizeof what,
                     "%.*s (%s; names joined by '+': corner00, corner10, corner01, corner11, "
                     "edge_v0, edge_v1, edge_u0, edge_u1, corners, edges; or none)",
                     (int)(n < 40 ? n : 40), p, bits ? "repeated" : "unknown");
            return fail_at(ps, where + (p - tok), "cloth pin", what);
        }
        *out |= bits;
        p += n + (p[n] == '+');
    }
    return LS_OK;
}

// `pinned N I...`: particle indices, strictly ascending; checked against the
// particle count at the end of the line.
static ls_result read_pinned(parser *ps, ls_scene_particles *sp, const char *where)
{
    uint32_t n;
    ls_result r = read_count(ps, "pinned", 1, 65536, 1, &n);
    if (r != LS_OK) {
        return r;
    }
    sp->pinned = malloc(n * sizeof *sp->pinned);
    if (!sp->pinned) {
        return fail_at(ps, where, "out of memory for", "pinned");
    }
    for (uint32_t i = 0; i < n; i++) {
        skip_blanks(ps);
        const char *at = ps->p;
        r = read_uint(ps, "pinned", 0, 65535, &sp->pinned[i]);
        if (r != LS_OK) {
            return r;
        }
        sp->pinned_count = i + 1;
        if (i > 0 && sp->pinned[i] <= sp->pinned[i - 1]) {
            return fail_at(ps, at, "pinned", "indices must be strictly ascending");
        }
    }
    return LS_OK;
}

static ls_particle_system_def *particle_system_of(ls_scene_particles *sp)
{
    switch (sp->kind) {
    case LS_SCENE_CLOTH:
        return &sp->cloth.system;
    case LS_SCENE_ROPE:
        return &sp->rope.system;
    case LS_SCENE_RAGDOLL:
        return &sp->ragdoll.system;
    default:
        return &sp->body.system;
    }
}

// Particles a statement builds (for `pinned` indices and capacities).
static uint32_t particle_statement_count(const ls_scene_particles *sp)
{
    switch (sp->kind) {
    case LS_SCENE_CLOTH:
        return sp->cloth.nu * sp->cloth.nv;
    case LS_SCENE_ROPE:
        return sp->rope.segments + 1;
    case LS_SCENE_RAGDOLL:
        return 16; // head, neck, chest, pelvis, and two each of 6 limb joints
    default:
        return sp->body.kind == LS_PARTICLE_BODY_BOX ? 8 : 4;
    }
}

// particle_body's embedded shape: a shape keyword (sphere, box, capsule, hull)
// and its geometry (the LS_SP_GEOMETRY_ shape properties); LS_ERR_NOT_FOUND
// when key is none of them.
static ls_result parse_embedded_shape_prop(parser *ps, const ls_scene *s, ls_shape_def *sh,
                                           const char *key, const char *where)
{
    ls_shape_type kind = ls_shape_kind_named_(key);
    int k = ls_scene_prop_find_(&ls_scene_shape_props_, key);
    bool ok = kind != LS_SHAPE_KIND_COUNT ||
              (k >= 0 && (ls_scene_shape_props_.props[k].flags & LS_SP_GEOMETRY_));
    if (!ok) {
        return LS_ERR_NOT_FOUND;
    }
    if (kind == LS_SHAPE_PLANE || kind == LS_SHAPE_MESH) {
        return fail_at(ps, where, key, "a particle_body embeds a sphere, box, capsule or hull");
    }
    if (!once_per_line(ps, key)) {
        return fail_at(ps, where, "repeated on this line", key);
    }
    return parse_shape_prop(ps, s, sh, key, where);
}

static ls_result add_particles(parser *ps, ls_scene *s, const ls_scene_particles *sp)
{
    if (s->particle_count == ps->particle_cap) {
        uint32_t ncap = ps->particle_cap ? ps->particle_cap * 2 : 8;
        if (ncap > 4096) {
            return fail_at(ps, ps->line_start, "too many particle statements", "at most 4096");
        }
        ls_scene_particles *n = realloc(s->particles, ncap * sizeof *n);
        if (!n) {
            return fail_at(ps, ps->line_start, "too many particle statements", "out of memory");
        }
        s->particles = n;
        ps->particle_cap = ncap;
    }
    s->particles[s->particle_count++] = *sp;
    return LS_OK;
}

// `cloth|rope|ragdoll_particles|particle_body property...`: every property
// optional, at most once, defaults from ls_default_*_def().
static ls_result parse_particles(parser *ps, ls_scene *s, ls_scene_particle_kind kind)
{
    ls_scene_particles sp;
    memset(&sp, 0, sizeof sp);
    sp.kind = kind;
    sp.line = ps->line;
    switch (kind) {
    case LS_SCENE_CLOTH:
        sp.cloth = ls_default_cloth_def();
        break;
    case LS_SCENE_ROPE:
        sp.rope = ls_default_rope_def();
        break;
    case LS_SCENE_RAGDOLL:
        sp.ragdoll = ls_default_particle_ragdoll_def();
        break;
    default:
        sp.body = ls_default_particle_body_def();
        break;
    }
    // Properties: the statement's table, then the system's and `pinned`
    // (ls_scene_particle_*_props_); a keyword of another particle statement
    // does not apply, any other is unknown. Bit of `seen`: index + 0, 32, 48.
    const ls_scene_props_ *tables[3] = {&ls_scene_particle_props_[kind],
                                        &ls_scene_particle_system_props_,
                                        &ls_scene_particle_common_props_};
    void *objs[3] = {&sp, particle_system_of(&sp), &sp};
    ps->nseen = 0;
    uint64_t seen = 0;
    char key[32];
    const char *where, *pinned_at = NULL;
    ls_result r = LS_OK;
    while (r == LS_OK && next_token(ps, key, sizeof key, &where)) {
        if (kind == LS_SCENE_PARTICLE_BODY) {
            r = parse_embedded_shape_prop(ps, s, &sp.body.shape, key, where);
            if (r != LS_ERR_NOT_FOUND) {
                continue;
            }
            r = LS_OK;
        }
        int k = -1, t = 0;
        for (; t < 3 && k < 0; t++) {
            k = ls_scene_prop_find_(tables[t], key);
        }
        t--;
        bool elsewhere = false;
        for (unsigned other = 0; k < 0 && other < 4; other++) {
            elsewhere |= ls_scene_prop_find_(&ls_scene_particle_props_[other], key) >= 0;
        }
        uint64_t bit = k < 0 ? 0 : (uint64_t)1 << (k + (t == 0 ? 0 : t == 1 ? 32 : 48));
        if (k < 0 && !elsewhere) {
            r = fail_at(ps, where, "unknown particle property", key);
        } else if (k < 0) {
            char what[64];
            snprintf(what, sizeof what, "does not apply to %s", particle_statement[kind]);
            r = fail_at(ps, where, key, what);
        } else if (seen & bit) {
            r = fail_at(ps, where, "repeated on this line", key);
        } else {
            seen |= bit;
            const ls_scene_prop_ *e = &tables[t]->props[k];
            if (e->flags & LS_SP_BY_HAND_) { // `pinned`
                pinned_at = where;
                r = read_pinned(ps, &sp, where);
            } else {
                r = read_prop(ps, s, e, objs[t], 0, where);
            }
        }
    }
    if (r == LS_OK && kind == LS_SCENE_PARTICLE_BODY) {
        if (sp.body.shape.type != LS_SHAPE_SPHERE && sp.body.shape.type != LS_SHAPE_BOX &&
            sp.body.shape.type != LS_SHAPE_CAPSULE && sp.body.shape.type != LS_SHAPE_HULL) {
            r = fail_at(ps, ps->line_start, "particle_body",
                        "embeds a sphere, box, capsule or hull");
        } else {
            r = finish_shape(ps, s, &sp.body.shape);
        }
    }
    if (r == LS_OK && sp.pinned_count &&
        sp.pinned[sp.pinned_count - 1] >= particle_statement_count(&sp)) {
        char what[96];
        snprintf(what, sizeof what, "index %u, but the %s has %u particles (0..%u)",
                 sp.pinned[sp.pinned_count - 1], particle_statement[kind],
                 particle_statement_count(&sp), particle_statement_count(&sp) - 1);
        r = fail_at(ps, pinned_at, "pinned", what);
    }
    if (r == LS_OK) {
        r = add_particles(ps, s, &sp);
    }
    if (r != LS_OK) {
        free(sp.pinned);
    }
    return r;
}

// ---- Vehicles and game rules (SPEC.md §14, §15) ----

// A failure reported at another line than the current one (a vehicle whose
// wheel lines turned out wrong once they ended).
static ls_result fail_at_line(parser *ps, uint32_t line, uint32_t column, const char *what,
                              const char *detail)
{
    ls_error_set(ps->err, LS_ERR_PARSE, "%s: %s", what, detail);
    ps->err->line = line;
    ps->err->column = column;
    return LS_ERR_PARSE;
}

// The 1-based column of a pointer into the current line.
static uint32_t column_of(const parser *ps, const char *at)
{
    return (uint32_t)(at - ps->line_start) + 1;
}

// `car` (ls_scene_vehicle_props_, by hand): the definition of ls_default_car_def()
// for the chassis box.
static ls_result read_car(parser *ps, const ls_scene *s, ls_scene_vehicle *v, const char *where,
                          uint32_t chassis)
{
    ls_vehicle_def *d = &v->def;
    // Why first: `car` replaces the whole definition, so the other
    // properties on the line can only override it if they come after it.
    if (ps->nseen > 0) {
        return fail_at(ps, where, "car", "must come right after the chassis");
    }
    const ls_shape_def *sh = &s->bodies[chassis].shape;
    if (sh->type != LS_SHAPE_BOX) {
        char what[96];
        snprintf(what, sizeof what, "the chassis (body %u) must be a box for `car` (got %s)",
                 chassis, ls_shape_kind_of(sh->type)->name);
        return fail_at(ps, where, "car", what);
    }
    *d = ls_default_car_def(d->chassis, sh->half_extents);
    ps->vehicle_is_car = true;
    return LS_OK;
}

// Checks the vehicle whose wheel lines just ended (at the next statement or
// the end of the file): 2..8 wheels, anti-roll partners among them.
static ls_result close_vehicle(parser *ps, ls_scene *s)
{
    if (ps->open_vehicle == 0) {
        return LS_OK;
    }
    ls_scene_vehicle *v = &s->vehicles[ps->open_vehicle - 1];
    ps->open_vehicle = 0;
    if (v->def.wheel_count < 2) {
        char what[96];
        snprintf(what, sizeof what, "needs 2..%u `wheel` lines right after it (got %u)",
                 LS_VEHICLE_MAX_WHEELS, v->def.wheel_count);
        return fail_at_line(ps, v->line, 1, "vehicle", what);
    }
    for (uint32_t i = 0; i < v->def.wheel_count; i++) {
        uint32_t j = v->def.wheels[i].anti_roll_pair;
        if (j > v->def.wheel_count) {
            char what[96];
            snprintf(what, sizeof what, "wheel %u, but the vehicle has %u wheels (0..%u)", j - 1,
                     v->def.wheel_count, v->def.wheel_count - 1);
            return fail_at_line(ps, ps->anti_roll_line[i], ps->anti_roll_column[i], "anti_roll",
                                what);
        }
    }
    return LS_OK;
}

static ls_result add_vehicle(parser *ps, ls_scene *s, const ls_scene_vehicle *v)
{
    if (s->vehicle_count == ps->vehicle_cap) {
        uint32_t ncap = ps->vehicle_cap ? ps->vehicle_cap * 2 : 8;
        if (ncap > 1024) {
            return fail_at(ps, ps->line_start, "too many vehicles", "at most 1024");
        }
        ls_scene_vehicle *n = realloc(s->vehicles, ncap * sizeof *n);
        if (!n) {
            return fail_at(ps, ps->line_start, "too many vehicles", "out of memory");
        }
        s->vehicles = n;
        ps->vehicle_cap = ncap;
    }
    s->vehicles[s->vehicle_count++] = *v;
    return LS_OK;
}

// `vehicle CHASSIS [car] property...`
static ls_result parse_vehicle(parser *ps, ls_scene *s)
{
    ls_scene_vehicle v;
    memset(&v, 0, sizeof v);
    v.def = ls_default_vehicle_def();
    v.line = ps->line;
    uint32_t chassis;
    skip_blanks(ps);
    const char *chassis_at = ps->p;
    ls_result r = read_body_ref(ps, s, "chassis", &chassis);
    if (r != LS_OK) {
        return r;
    }
    if (s->bodies[chassis].type != LS_BODY_DYNAMIC) {
        char what[96];
        snprintf(what, sizeof what, "body %u is %s; a vehicle drives a dynamic body", chassis,
                 s->bodies[chassis].type == LS_BODY_STATIC ? "static" : "kinematic");
        return fail_at(ps, chassis_at, "chassis", what);
    }
    for (uint32_t i = 0; i < s->vehicle_count; i++) {
        if (s->vehicles[i].def.chassis.index1 == chassis + 1) {
            char what[96];
            snprintf(what, sizeof what, "body %u already carries vehicle %u (line %u)", chassis,
                     i + 1, s->vehicles[i].line);
            return fail_at(ps, chassis_at, "chassis", what);
        }
    }
    v.def.chassis.index1 = chassis + 1;
    ps->vehicle_is_car = false;
    ps->nseen = 0;
    unsigned seen = 0;
    char key[32];
    const char *where;
    while (r == LS_OK && next_token(ps, key, sizeof key, &where)) {
        int k = ls_scene_prop_find_(&ls_scene_vehicle_props_, key);
        const ls_scene_prop_ *e = k < 0 ? NULL : &ls_scene_vehicle_props_.props[k];
        if (k < 0) {
            r = fail_at(ps, where, "unknown vehicle property", key);
        } else if (seen & (1u << k)) {
            r = fail_at(ps, where, "repeated on this line", key);
        } else {
            r = (e->flags & LS_SP_BY_HAND_) ? read_car(ps, s, &v, where, chassis)
                                            : read_prop(ps, s, e, &v, 0, where);
            seen |= 1u << k;
            ps->nseen++;
        }
    }
    if (r == LS_OK) {
        r = add_vehicle(ps, s, &v);
    }
    if (r == LS_OK && !ps->vehicle_is_car) {
        ps->open_vehicle = s->vehicle_count; // wheel lines follow
    }
    return r;
}

// `anti_roll J STIFFNESS` (ls_scene_wheel_props_, by hand): J is another wheel
// of the vehicle, checked when its wheel lines end.
static ls_result read_anti_roll(parser *ps, const ls_scene_prop_ *e, ls_wheel_def *w, uint32_t self)
{
    skip_blanks(ps);
    const char *j_at = ps->p;
    uint32_t j;
    ls_result r = read_uint(ps, e->name, 0, LS_VEHICLE_MAX_WHEELS - 1, &j);
    if (r == LS_OK && j == self) {
        return fail_at(ps, j_at, e->name, "a wheel cannot share a bar with itself");
    }
    w->anti_roll_pair = j + 1;
    ps->anti_roll_line[self] = ps->line;
    ps->anti_roll_column[self] = column_of(ps, j_at);
    return r == LS_OK ? read_fx_in(ps, e->name, (ls_fx)e->lo, (ls_fx)e->hi, &w->anti_roll_stiffness)
                      : r;
}

// `wheel mount X Y Z property...`: the next wheel of the open vehicle.
static ls_result parse_wheel(parser *ps, const ls_scene *s, const char *wheel_at)
{
    if (ps->open_vehicle == 0) {
        return fail_at(ps, wheel_at, "a 'wheel' line",
                       "must follow a 'vehicle' line (not a `car`: it has its wheels) or its "
                       "other wheels");
    }
    ls_vehicle_def *d = &s->vehicles[ps->open_vehicle - 1].def;
    uint32_t self = d->wheel_count;
    if (self == LS_VEHICLE_MAX_WHEELS) {
        return fail_at(ps, wheel_at, "a 'wheel' line", "a vehicle has at most 8 wheels");
    }
    ls_wheel_def w = ls_default_wheel_def();
    const ls_scene_props_ *t = &ls_scene_wheel_props_;
    ps->anti_roll_line[self] = 0;
    unsigned seen = 0;
    char key[32];
    const char *where;
    ls_result r = LS_OK;
    while (r == LS_OK && next_token(ps, key, sizeof key, &where)) {
        int k = ls_scene_prop_find_(t, key);
        const ls_scene_prop_ *e = k < 0 ? NULL : &t->props[k];
        if (k < 0) {
            r = fail_at(ps, where, "unknown wheel property", key);
        } else if (seen & (1u << k)) {
            r = fail_at(ps, where, "repeated on this line", key);
        } else {
            seen |= 1u << k;
            r = (e->flags & LS_SP_BY_HAND_) ? read_anti_roll(ps, e, &w, self)
                                            : read_prop(ps, s, e, &w, 0, where);
        }
    }
    for (uint32_t i = 0; r == LS_OK && i < t->count; i++) {
        if (t->props[i].required && !(seen & (1u << i))) {
            r = fail_at(ps, wheel_at, "wheel", t->props[i].why);
        }
    }
    if (r == LS_OK) {
        d->wheels[self] = w;
        d->wheel_count++;
    }
    return r;
}

// `game push` | `game soccer ball B goal_z Z goal_half_width W goal_height H [kickoff T]`
static ls_result parse_game(parser *ps, ls_scene *s, const char *game_at)
{
    if (ps->game_line) {
        char first[48];
        snprintf(first, sizeof first, "the first is on line %u", ps->game_line);
        return fail_at(ps, game_at, "a second 'game' line", first);
    }
    ps->game_line = ps->line;
    static const char *const games[] = {"push", "soccer", NULL};
    skip_blanks(ps);
    const char *kind_at = ps->p;
    unsigned kind = 0;
    ls_result r = read_word(ps, "game", games, "push, soccer", &kind);
    if (r != LS_OK) {
        return r;
    }
    s->game = (ls_scene_game)kind;
    memset(&s->soccer, 0, sizeof s->soccer);
    s->soccer.kickoff_ticks = 60;
    const ls_scene_props_ *t = &ls_scene_game_props_; // ls_scene_soccer's properties
    unsigned seen = 0;
    char key[32];
    const char *where;
    while (r == LS_OK && next_token(ps, key, sizeof key, &where)) {
        int k = ls_scene_prop_find_(t, key);
        k = k >= 0 && ((t->props[k].kinds >> kind) & 1u) ? k : -1;
        if (k < 0) {
            r = fail_at(ps, where, kind ? "unknown soccer property" : "unknown push property", key);
        } else if (seen & (1u << k)) {
            r = fail_at(ps, where, "repeated on this line", key);
        } else if (t->props[k].flags & LS_SP_BY_HAND_) { // `ball`: a dynamic body
            skip_blanks(ps);
            const char *ball_at = ps->p;
            r = read_body_ref(ps, s, "ball", &s->soccer.ball_body);
            if (r == LS_OK && s->bodies[s->soccer.ball_body].type != LS_BODY_DYNAMIC) {
                char what[64];
                snprintf(what, sizeof what, "body %u is not dynamic", s->soccer.ball_body);
                r = fail_at(ps, ball_at, "ball", what);
            }
        } else {
            r = read_prop(ps, s, &t->props[k], &s->soccer, kind, where);
        }
        seen |= k >= 0 ? 1u << k : 0;
    }
    for (uint32_t i = 0; r == LS_OK && i < t->count; i++) {
        if (((t->props[i].required >> kind) & 1u) && !(seen & (1u << i))) {
            r = fail_at(ps, kind_at, "soccer", t->props[i].why);
        }
    }
    return r;
}

static ls_result parse_line(parser *ps, ls_scene *s, uint32_t *cap)
{
    char key[32];
    const char *where;
    reset_line_data(ps);
    if (!next_token(ps, key, sizeof key, &where)) {
        return LS_OK; // blank or comment line
    }
    if (strcmp(key, "wheel") == 0) {
        return parse_wheel(ps, s, where);
    }
    // Any other statement ends the wheel lines of the vehicle before it.
    ls_result closed = close_vehicle(ps, s);
    if (closed != LS_OK) {
        return closed;
    }
    if (strcmp(key, "vehicle") == 0) {
        return parse_vehicle(ps, s);
    }
    if (strcmp(key, "game") == 0) {
        return parse_game(ps, s, where);
    }
    bool is_world = strcmp(key, "world") == 0, is_shape = strcmp(key, "shape") == 0;
    if (strcmp(key, "joint") == 0) {
        return parse_joint(ps, s);
    }
    for (unsigned k = 0; k < sizeof particle_statement / sizeof particle_statement[0]; k++) {
        if (strcmp(key, particle_statement[k]) == 0) {
            return parse_particles(ps, s, (ls_scene_particle_kind)k);
        }
    }
    if (!is_world && !is_shape && strcmp(key, "body") != 0) {
        char what[LS_SCENE_LABEL_MAX + 128];
        snprintf(what, sizeof what,
                 "%s; particle systems: cloth, rope, ragdoll_particles, particle_body; "
                 "vehicle, wheel, game",
                 key);
        return fail_at(ps, where, "expected 'world', 'body', 'shape' or 'joint', got", what);
    }
    if (is_shape && s->body_count == 0) {
        return fail_at(ps, where, "a 'shape' line", "must follow the 'body' line it adds to");
    }
    if (is_world && ps->world_line) {
        char first[48];
        snprintf(first, sizeof first, "the first is on line %u", ps->world_line);
        return fail_at(ps, where, "a second 'world' line", first);
    }
    if (is_world) {
        ps->world_line = ps->line;
    }
    ls_body_def b = ls_default_body_def();
    ls_shape_def sh = ls_default_shape_def();
    ps->player = NO_PLAYER;
    ps->nseen = 0;
    ps->label[0] = '\0';
    while (next_token(ps, key, sizeof key, &where)) {
        if (!once_per_line(ps, key)) {
            return fail_at(ps, where, "repeated on this line:", key);
        }
        ls_result r;
        if (is_world) {
            r = parse_world_prop(ps, s, key, where);
        } else if (is_shape) {
            r = parse_shape_prop(ps, s, &sh, key, where);
            if (r == LS_ERR_NOT_FOUND) {
                r = fail_at(ps, where, "unknown shape property", key);
            }
        } else {
            r = parse_body_prop(ps, s, &b, key, where);
        }
        if (r != LS_OK) {
            return r;
        }
    }
    if (is_world) {
        return LS_OK;
    }
    ls_result r = finish_shape(ps, s, is_shape ? &sh : &b.shape);
    if (r != LS_OK) {
        return r;
    }
    if (is_shape) {
        return add_shape(ps, s, &sh);
    }
    r = add_body(s, cap, &b, ps->line);
    if (r == LS_OK && s->body_count > ps->body_cap_seen) {
        uint32_t *n = realloc(ps->first_shape, *cap * sizeof *n);
        if (!n) {
            r = LS_ERR_NO_MEMORY;
        } else {
            ps->first_shape = n;
            ps->body_cap_seen = *cap;
        }
    }
    if (r != LS_OK) {
        return fail_at(ps, ps->line_start, "too many bodies", ls_result_text(r));
    }
    r = store_label(ps, s, *cap);
    if (r != LS_OK) {
        return r;
    }
    return ps->player == NO_PLAYER ? LS_OK : assign_player(ps, s);
}

static ls_result check_players(parser *ps, const ls_scene *s)
{
    for (uint32_t k = 0; k < s->player_count; k++) {
        if (s->player_body[k] == NO_PLAYER) {
            char what[32];
            snprintf(what, sizeof what, "%u has no body", k);
            ps->line_start = ps->p;
            return fail_at(ps, ps->p, "player", what);
        }
    }
    return LS_OK;
}

ls_result ls_scene_parse_in(const char *text, size_t len, const char *dir, ls_scene *out,
                            ls_error *err)
{
    ls_error local;
    if (!err) {
        err = &local;
    }
    memset(out, 0, sizeof *out);
    ls_error_clear(err);
    out->world = ls_default_world_def();
    out->ticks = 600;
    parser ps;
    memset(&ps, 0, sizeof ps);
    ps.p = ps.line_start = text;
    ps.end = text + len;
    ps.line = 1;
    ps.err = err;
    ps.player = NO_PLAYER;
    ps.dir = dir;
    uint32_t cap = 0;
    ls_result r = LS_OK;
    while (ps.p < ps.end && r == LS_OK) {
        r = parse_line(&ps, out, &cap);
        while (ps.p < ps.end && *ps.p != '\n') {
            ps.p++;
        }
        if (ps.p < ps.end) {
            ps.p++;
            ps.line++;
            ps.line_start = ps.p;
        }
    }
    reset_line_data(&ps);
    if (r == LS_OK) {
        r = close_vehicle(&ps, out);
    }
    if (r == LS_OK) {
        r = check_players(&ps, out);
    }
    // Compound bodies point into the final shapes array.
    for (uint32_t i = 0; r == LS_OK && i < out->body_count; i++) {
        if (out->bodies[i].shape_count > 0) {
            out->bodies[i].shapes = &out->shapes[ps.first_shape[i]];
        }
    }
    free(ps.first_shape);
    if (r != LS_OK) {
        ls_scene_free(out);
    }
    return r;
}

ls_result ls_scene_parse(const char *text, size_t len, ls_scene *out, ls_error *err)
{
    return ls_scene_parse_in(text, len, NULL, out, err);
}

ls_result ls_scene_load(const char *path, ls_scene *out, ls_error *err)
{
    ls_error local;
    if (!err) {
        err = &local;
    }
    memset(out, 0, sizeof *out);
    ls_error_clear(err);
    FILE *f = fopen(path, "rb");
    if (!f) {
        ls_error_set(err, LS_ERR_IO, "cannot open: %s", strerror(errno));
        ls_error_set_path(err, path);
        return LS_ERR_IO;
    }
    char *buf = NULL;
    size_t len = 0, cap = 0, n;
    char chunk[4096]; // small: wasm32 stacks are 64 KiB
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (len + n > cap) {
            cap = (len + n) * 2;
            char *nb = realloc(buf, cap);
            if (!nb || cap > ((size_t)1 << 30)) {
                free(nb ? nb : buf);
                fclose(f);
                ls_error_set(err, LS_ERR_NO_MEMORY, "too large (over 1 GiB or out of memory)");
                ls_error_set_path(err, path);
                return LS_ERR_NO_MEMORY;
            }
            buf = nb;
        }
        memcpy(buf + len, chunk, n);
        len += n;
    }
    // A directory opens but fails to read (EISDIR): that is an error, not an empty scene.
    int read_errno = ferror(f) ? errno : 0;
    fclose(f);
    if (read_errno) {
        free(buf);
        ls_error_set(err, LS_ERR_IO, "cannot read: %s", strerror(read_errno));
        ls_error_set_path(err, path);
        return LS_ERR_IO;
    }
    // `obj` paths are relative to the scene file's directory.
    char dir[4096];
    const char *slash = strrchr(path, '/');
    size_t dlen = slash ? (size_t)(slash - path) : 1;
    snprintf(dir, sizeof dir, "%.*s", (int)(dlen < sizeof dir ? dlen : sizeof dir - 1),
             slash ? path : ".");
    ls_result r = ls_scene_parse_in(buf ? buf : "", len, dir, out, err);
    free(buf);
    if (r != LS_OK) {
        ls_error_set_path(err, path);
    }
    return r;
}

void ls_scene_free(ls_scene *s)
{
    free(s->bodies);
    free(s->body_line);
    free(s->shapes);
    for (uint32_t i = 0; i < s->hull_count; i++) {
        ls_hull_destroy(s->hulls[i]);
    }
    for (uint32_t i = 0; i < s->mesh_count; i++) {
        ls_mesh_destroy(s->meshes[i]);
    }
    free(s->hulls);
    free(s->meshes);
    for (uint32_t i = 0; s->body_label && i < s->body_count; i++) {
        free(s->body_label[i]);
    }
    free(s->body_label);
    free(s->joints);
    free(s->joint_line);
    for (uint32_t i = 0; i < s->particle_count; i++) {
        free(s->particles[i].pinned);
    }
    free(s->particles);
    free(s->vehicles);
    s->vehicles = NULL;
    s->vehicle_count = 0;
    s->particles = NULL;
    s->particle_count = 0;
    s->body_label = NULL;
    s->joints = NULL;
    s->joint_line = NULL;
    s->joint_count = 0;
    s->bodies = NULL;
    s->body_line = NULL;
    s->shapes = NULL;
    s->hulls = NULL;
    s->meshes = NULL;
    s->body_count = s->shape_total = s->hull_count = s->mesh_count = 0;
}
