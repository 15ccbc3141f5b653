// SPDX-License-Identifier: MIT
// Scene text format: see SPEC.md §14. A line is a keyword followed by
// `name value...` properties; `#` starts a comment. Parsing is integer-only.
#include "ls/scene.h"

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
    const char *seen[32];
    uint32_t nseen;
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
        char what[LS_ERROR_MESSAGE_MAX / 2];
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
    return fail_at(ps, where, "unknown world property", key);
}

// Body type and shape keywords; LS_ERR_NOT_FOUND when key is neither.
static ls_result parse_body_kind(ls_body_def *b, const char *key)
{
    static const char *const types[] = {"static", "kinematic", "dynamic"};
    static const char *const shapes[] = {"sphere", "box", "capsule", "plane"};
    for (int i = 0; i < 3; i++) {
        if (strcmp(key, types[i]) == 0) {
            b->type = (ls_body_type)i;
            return LS_OK;
        }
    }
    for (int i = 0; i < 4; i++) {
        if (strcmp(key, shapes[i]) == 0) {
            b->shape.type = (ls_shape_type)i;
            return LS_OK;
        }
    }
    return LS_ERR_NOT_FOUND;
}

static ls_result parse_body_prop(parser *ps, ls_body_def *b, const char *key, const char *where)
{
    ls_shape_def *s = &b->shape;
    struct {
        const char *name;
        ls_fx *fx;
    } scalars[] = {{"radius", &s->radius},
                   {"half_height", &s->half_height},
                   {"d", &s->plane_d},
                   {"friction", &s->friction},
                   {"restitution", &s->restitution},
                   {"density", &s->density},
                   {"linear_damping", &b->linear_damping},
                   {"angular_damping", &b->angular_damping}};
    struct {
        const char *name;
        ls_vec3 *v;
    } vectors[] = {{"half", &s->half_extents},
                   {"normal", &s->normal},
                   {"pos", &b->position},
                   {"vel", &b->linear_velocity},
                   {"angvel", &b->angular_velocity}};
    if (parse_body_kind(b, key) == LS_OK) {
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
    if (strcmp(key, "quat") == 0) {
        ls_vec3 xyz;
        ls_result r = read_vec3(ps, key, &xyz);
        ls_fx qw = 0;
        if (r == LS_OK) {
            r = read_fx(ps, key, &qw);
        }
        b->orientation = ls_quat_make(xyz.x, xyz.y, xyz.z, qw);
        // Normalisation needs a length it can divide by exactly (SPEC.md §14).
        int64_t sq = (int64_t)xyz.x * xyz.x + (int64_t)xyz.y * xyz.y + (int64_t)xyz.z * xyz.z +
                     (int64_t)qw * qw;
        if (r == LS_OK && sq < ((int64_t)1 << 16)) {
            return fail_at(ps, where, "quat",
                           "length below 1/256 (all zero?): cannot be normalised");
        }
        return r;
    }
    if (strcmp(key, "filter") == 0) {
        ls_result r = read_uint(ps, key, 0, UINT32_MAX, &s->category);
        return r == LS_OK ? read_uint(ps, key, 0, UINT32_MAX, &s->mask) : r;
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
    static const char *const shapes[] = {"sphere", "box", "capsule", "plane"};
    const char *name = key;
    for (int i = 0; i < 3; i++) {
        name = strcmp(key, types[i]) == 0 ? "type" : name;
    }
    for (int i = 0; i < 4; i++) {
        name = strcmp(key, shapes[i]) == 0 ? "shape" : name;
    }
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
                                        "player"};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        if (strcmp(name, known[i]) == 0 && ps->nseen < sizeof ps->seen / sizeof ps->seen[0]) {
            ps->seen[ps->nseen++] = known[i];
            break;
        }
    }
    return true;
}

static ls_result parse_line(parser *ps, ls_scene *s, uint32_t *cap)
{
    char key[32];
    const char *where;
    if (!next_token(ps, key, sizeof key, &where)) {
        return LS_OK; // blank or comment line
    }
    bool is_world = strcmp(key, "world") == 0;
    if (!is_world && strcmp(key, "body") != 0) {
        return fail_at(ps, where, "expected 'world' or 'body', got", key);
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
    ps->player = NO_PLAYER;
    ps->nseen = 0;
    while (next_token(ps, key, sizeof key, &where)) {
        if (!once_per_line(ps, key)) {
            return fail_at(ps, where, "repeated on this line:", key);
        }
        ls_result r =
            is_world ? parse_world_prop(ps, s, key, where) : parse_body_prop(ps, &b, key, where);
        if (r != LS_OK) {
            return r;
        }
    }
    if (is_world) {
        return LS_OK;
    }
    ls_result r = add_body(s, cap, &b, ps->line);
    if (r != LS_OK) {
        return fail_at(ps, ps->line_start, "too many bodies", ls_result_text(r));
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

ls_result ls_scene_parse(const char *text, size_t len, ls_scene *out, ls_error *err)
{
    ls_error local;
    if (!err) {
        err = &local;
    }
    memset(out, 0, sizeof *out);
    ls_error_clear(err);
    out->world = ls_default_world_def();
    out->ticks = 600;
    parser ps = {text, text + len, text, 1, err, NO_PLAYER, 0, {NULL}, 0};
    uint32_t cap = 0;
    while (ps.p < ps.end) {
        ls_result r = parse_line(&ps, out, &cap);
        if (r != LS_OK) {
            ls_scene_free(out);
            return r;
        }
        while (ps.p < ps.end && *ps.p != '\n') {
            ps.p++;
        }
        if (ps.p < ps.end) {
            ps.p++;
            ps.line++;
            ps.line_start = ps.p;
        }
    }
    ls_result r = check_players(&ps, out);
    if (r != LS_OK) {
        ls_scene_free(out);
    }
    return r;
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
    ls_result r = ls_scene_parse(buf ? buf : "", len, out, err);
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
    s->bodies = NULL;
    s->body_line = NULL;
    s->body_count = 0;
}
