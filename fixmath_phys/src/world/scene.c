// SPDX-License-Identifier: MIT
// Scene text format: see SPEC.md §14. A line is a keyword followed by
// `name value...` properties; `#` starts a comment. Parsing is integer-only.
#include "ls/scene.h"

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

static ls_result parse_world_prop(parser *ps, ls_scene *s, const char *key, const char *where)
{
    ls_world_def *d = &s->world;
    uint32_t seed_lo = 0;
    if (strcmp(key, "gravity") == 0) {
        return read_vec3(ps, key, &d->gravity);
    }
    if (strcmp(key, "tick_rate") == 0) {
        return read_uint(ps, key, 30, 120, &d->tick_rate);
    }
    if (strcmp(key, "iterations") == 0) {
        ls_result r = read_uint(ps, key, 1, 64, &d->velocity_iterations);
        return r == LS_OK ? read_uint(ps, key, 0, 64, &d->position_iterations) : r;
    }
    if (strcmp(key, "substeps") == 0) {
        return read_uint(ps, key, 1, 16, &d->substeps);
    }
    if (strcmp(key, "ticks") == 0) {
        return read_uint(ps, key, 1, 10000000, &s->ticks);
    }
    if (strcmp(key, "seed") == 0) {
        ls_result r = read_uint(ps, key, 0, UINT32_MAX, &seed_lo);
        d->seed = seed_lo;
        return r;
    }
    if (strcmp(key, "max_bodies") == 0) {
        return read_uint(ps, key, 1, MAX_BODIES, &d->max_bodies);
    }
    if (strcmp(key, "max_contacts") == 0) {
        return read_uint(ps, key, 1, 1u << 22, &d->max_contacts);
    }
    if (strcmp(key, "max_shapes") == 0) {
        return read_uint(ps, key, 0, 1u << 22, &d->max_shapes);
    }
    return fail_at(ps, where, "unknown world property", key);
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
    int64_t sq =
        (int64_t)xyz.x * xyz.x + (int64_t)xyz.y * xyz.y + (int64_t)xyz.z * xyz.z + (int64_t)qw * qw;
    if (r == LS_OK && sq < ((int64_t)1 << 16)) {
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

// Properties of a shape, on a body line (its first shape) or a `shape` line.
static ls_result parse_shape_prop(parser *ps, ls_shape_def *s, const char *key, const char *where)
{
    struct {
        const char *name;
        ls_fx *fx;
    } scalars[] = {
        {"radius", &s->radius},     {"half_height", &s->half_height}, {"d", &s->plane_d},
        {"friction", &s->friction}, {"restitution", &s->restitution}, {"density", &s->density}};
    struct {
        const char *name;
        ls_vec3 *v;
    } vectors[] = {{"half", &s->half_extents}, {"normal", &s->normal}, {"at", &s->local_position}};
    ls_shape_type kind = ls_shape_kind_named(key);
    if (kind != LS_SHAPE_KIND_COUNT) {
        s->type = kind;
        return LS_OK;
    }
    for (size_t i = 0; i < sizeof scalars / sizeof scalars[0]; i++) {
        if (strcmp(key, scalars[i].name) == 0) {
            return read_fx(ps, key, scalars[i].fx);
        }
    }
    for (size_t i = 0; i < sizeof vectors / sizeof vectors[0]; i++) {
        if (strcmp(key, vectors[i].name) == 0) {
            ls_result r = read_vec3(ps, key, vectors[i].v);
            if (r == LS_OK && vectors[i].v == &s->normal &&
                ls_vec3_equal(s->normal, ls_vec3_zero())) {
                return fail_at(ps, where, "normal", "zero vector has no direction");
            }
            return r;
        }
    }
    if (strcmp(key, "rot") == 0) {
        return read_quat(ps, key, where, &s->local_orientation);
    }
    if (strcmp(key, "filter") == 0) {
        ls_result r = read_uint(ps, key, 0, UINT32_MAX, &s->category);
        return r == LS_OK ? read_uint(ps, key, 0, UINT32_MAX, &s->mask) : r;
    }
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
    if (strcmp(key, "obj") == 0) {
        const char *at = ps->p;
        if (!next_token(ps, ps->obj, sizeof ps->obj, &at) || strchr(ps->obj, '\x01')) {
            return fail_at(ps, at, "missing or overlong path after", key);
        }
        ps->mesh_at = at;
        return LS_OK;
    }
    return LS_ERR_NOT_FOUND;
}

static ls_result parse_body_prop(parser *ps, ls_body_def *b, const char *key, const char *where)
{
    struct {
        const char *name;
        ls_fx *fx;
    } scalars[] = {{"linear_damping", &b->linear_damping},
                   {"angular_damping", &b->angular_damping}};
    struct {
        const char *name;
        ls_vec3 *v;
    } vectors[] = {
        {"pos", &b->position}, {"vel", &b->linear_velocity}, {"angvel", &b->angular_velocity}};
    if (parse_body_type(b, key) == LS_OK) {
        return LS_OK;
    }
    ls_result r = parse_shape_prop(ps, &b->shape, key, where);
    if (r != LS_ERR_NOT_FOUND) {
        return r;
    }
    for (size_t i = 0; i < sizeof scalars / sizeof scalars[0]; i++) {
        if (strcmp(key, scalars[i].name) == 0) {
            return read_fx(ps, key, scalars[i].fx);
        }
    }
    for (size_t i = 0; i < sizeof vectors / sizeof vectors[0]; i++) {
        if (strcmp(key, vectors[i].name) == 0) {
            return read_vec3(ps, key, vectors[i].v);
        }
    }
    if (strcmp(key, "quat") == 0) {
        return read_quat(ps, key, where, &b->orientation);
    }
    if (strcmp(key, "bullet") == 0) {
        b->bullet = true;
        return LS_OK;
    }
    if (strcmp(key, "asleep") == 0) {
        b->awake = false;
        return LS_OK;
    }
    if (strcmp(key, "no_sleep") == 0) {
        b->allow_sleep = false;
        return LS_OK;
    }
    if (strcmp(key, "player") == 0) {
        return read_uint(ps, key, 0, LS_SCENE_MAX_PLAYERS - 1, &ps->player);
    }
    return fail_at(ps, where, "unknown body property", key);
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
    name = ls_shape_kind_named(key) != LS_SHAPE_KIND_COUNT ? "shape" : name;
    for (uint32_t i = 0; i < ps->nseen; i++) {
        if (strcmp(ps->seen[i], name) == 0) {
            return false;
        }
    }
    // Keys are compared by content, so they must outlive the token buffer:
    // known keywords point at string literals; an unknown one fails anyway.
    static const char *const known[] = {"type",
                                        "shape",
                                        "gravity",
                                        "tick_rate",
                                        "iterations",
                                        "ticks",
                                        "seed",
                                        "max_bodies",
                                        "max_contacts",
                                        "max_shapes",
                                        "at",
                                        "rot",
                                        "points",
                                        "vertices",
                                        "triangles",
                                        "obj",
                                        "bullet",
                                        "radius",
                                        "half_height",
                                        "d",
                                        "friction",
                                        "restitution",
                                        "density",
                                        "linear_damping",
                                        "angular_damping",
                                        "half",
                                        "normal",
                                        "pos",
                                        "vel",
                                        "angvel",
                                        "quat",
                                        "filter",
                                        "asleep",
                                        "no_sleep",
                                        "player",
                                        "label"};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        if (strcmp(name, known[i]) == 0 && ps->nseen < sizeof ps->seen / sizeof ps->seen[0]) {
            ps->seen[ps->nseen++] = known[i];
            break;
        }
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

static ls_result read_degrees(parser *ps, const char *name, ls_fx *out)
{
    ls_fx deg;
    ls_result r = read_fx(ps, name, &deg);
    *out = ls_joint_degrees_to_radians_(deg);
    return r;
}

// Two numbers LO HI with LO <= HI (degrees when `angles`).
static ls_result read_range(parser *ps, const char *name, const char *where, bool angles, ls_fx *lo,
                            ls_fx *hi)
{
    ls_result r = angles ? read_degrees(ps, name, lo) : read_fx(ps, name, lo);
    if (r == LS_OK) {
        r = angles ? read_degrees(ps, name, hi) : read_fx(ps, name, hi);
    }
    if (r == LS_OK && *lo > *hi) {
        return fail_at(ps, where, name, "lower above upper");
    }
    return r;
}

// Joint properties: keyword, which kinds take it (bit per ls_joint_type), bit of `seen`.
enum {
    JB = 1u << LS_JOINT_BALL,
    JH = 1u << LS_JOINT_HINGE,
    JF = 1u << LS_JOINT_FIXED,
    JP = 1u << LS_JOINT_PRISMATIC,
    JD = 1u << LS_JOINT_DISTANCE,
    JC = 1u << LS_JOINT_CONE,
    JALL = JB | JH | JF | JP | JD | JC,
};
static const struct {
    const char *name;
    unsigned kinds;
} joint_props[] = {
    {"anchor", JALL},   {"anchor_b", JD},         {"axis", JH | JP | JC}, {"limits", JH | JP},
    {"motor", JH | JP}, {"spring", JH | JP | JD}, {"length", JD},         {"cone", JC},
    {"twist", JC},      {"break", JALL},          {"collide", JALL},
};
enum { P_ANCHOR, P_ANCHOR_B, P_AXIS, P_LIMITS, P_MOTOR, P_SPRING, P_LENGTH, P_CONE, P_TWIST };

// `break FORCE [TORQUE]`: the torque is there when the next token is a number.
static ls_result read_break(parser *ps, ls_joint_def *d)
{
    ls_result r = read_fx(ps, "break", &d->break_force);
    skip_blanks(ps);
    char c = at_eol(ps) ? ' ' : *ps->p;
    if (r == LS_OK && ((c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.')) {
        r = read_fx(ps, "break", &d->break_torque);
    }
    return r;
}

static ls_result parse_joint_prop(parser *ps, ls_joint_def *d, int k, const char *where)
{
    const char *name = joint_props[k].name;
    bool angles = d->type == LS_JOINT_HINGE;
    switch (k) {
    case P_ANCHOR:
        return read_vec3(ps, name, &d->anchor);
    case P_ANCHOR_B:
        return read_vec3(ps, name, &d->anchor_b);
    case P_AXIS: {
        ls_result r = read_vec3(ps, name, &d->axis);
        if (r == LS_OK && ls_vec3_equal(d->axis, ls_vec3_zero())) {
            return fail_at(ps, where, "axis", "zero vector has no direction");
        }
        return r;
    }
    case P_LIMITS:
        d->enable_limit = true;
        return read_range(ps, name, where, angles, &d->lower, &d->upper);
    case P_MOTOR: {
        d->enable_motor = true;
        ls_result r = read_fx(ps, name, &d->motor_speed);
        return r == LS_OK ? read_fx(ps, name, &d->max_motor_torque) : r;
    }
    case P_SPRING: {
        d->enable_spring = true;
        ls_result r = read_fx(ps, name, &d->spring_hertz);
        return r == LS_OK ? read_fx(ps, name, &d->spring_damping_ratio) : r;
    }
    case P_LENGTH:
        return read_range(ps, name, where, false, &d->min_length, &d->max_length);
    case P_CONE:
        return read_degrees(ps, name, &d->cone_angle);
    case P_TWIST:
        return read_range(ps, name, where, true, &d->twist_lower, &d->twist_upper);
    default:
        if (strcmp(name, "break") == 0) {
            return read_break(ps, d);
        }
        d->collide_connected = true;
        return LS_OK;
    }
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
    d.type = ls_joint_kind_named(key);
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
    unsigned seen = 0, kind_bit = 1u << d.type;
    while (next_token(ps, key, sizeof key, &where)) {
        int k = -1;
        for (size_t i = 0; i < sizeof joint_props / sizeof joint_props[0]; i++) {
            k = strcmp(key, joint_props[i].name) == 0 ? (int)i : k;
        }
        if (k < 0) {
            return fail_at(ps, where, "unknown joint property", key);
        }
        if (!(joint_props[k].kinds & kind_bit)) {
            char what[64];
            snprintf(what, sizeof what, "does not apply to a %s joint",
                     ls_joint_kind_of(d.type)->name);
            return fail_at(ps, where, key, what);
        }
        if (seen & (1u << k)) {
            return fail_at(ps, where, "repeated on this line", key);
        }
        seen |= 1u << k;
        r = parse_joint_prop(ps, &d, k, where);
        if (r != LS_OK) {
            return r;
        }
    }
    // Required properties, reported at the joint type.
    static const struct {
        int prop;
        unsigned kinds;
        const char *what;
    } required[] = {{P_ANCHOR, JALL, "needs `anchor X Y Z`"},
                    {P_AXIS, JH | JP | JC, "needs `axis X Y Z`"},
                    {P_ANCHOR_B, JD, "needs `anchor_b X Y Z`"},
                    {P_CONE, JC, "needs `cone SWING` (degrees)"}};
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++) {
        if ((required[i].kinds & kind_bit) && !(seen & (1u << required[i].prop))) {
            return fail_at(ps, type_at, ls_joint_kind_of(d.type)->name, required[i].what);
        }
    }
    return add_joint(ps, s, &d);
}

static ls_result parse_line(parser *ps, ls_scene *s, uint32_t *cap)
{
    char key[32];
    const char *where;
    reset_line_data(ps);
    if (!next_token(ps, key, sizeof key, &where)) {
        return LS_OK; // blank or comment line
    }
    bool is_world = strcmp(key, "world") == 0, is_shape = strcmp(key, "shape") == 0;
    if (strcmp(key, "joint") == 0) {
        return parse_joint(ps, s);
    }
    if (!is_world && !is_shape && strcmp(key, "body") != 0) {
        return fail_at(ps, where, "expected 'world', 'body', 'shape' or 'joint', got", key);
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
            r = parse_shape_prop(ps, &sh, key, where);
            if (r == LS_ERR_NOT_FOUND) {
                r = fail_at(ps, where, "unknown shape property", key);
            }
        } else if (strcmp(key, "label") == 0) {
            r = read_label(ps, s);
        } else {
            r = parse_body_prop(ps, &b, key, where);
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
