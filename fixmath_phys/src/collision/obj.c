// SPDX-License-Identifier: MIT
// A bounded Wavefront OBJ reader for static meshes: `v` and `f` statements
// (polygons fanned into triangles), the usual other statements ignored.
// Numbers are SPEC.md §9 decimals. Every error names its line and column.
// Memory and time are linear in the input and bounded by the mesh limits
// (SPEC.md §21).
#include "mesh.h"

#include "ls/fx_text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/// Longest line, bytes without the line end.
#define OBJ_LINE_MAX 4096
/// Longest number token, bytes.
#define OBJ_NUMBER_MAX 63
/// Most numbers on a `v` line (x y z, then w or r g b [a], ignored).
#define OBJ_V_VALUES_MAX 7

/// Reader state.
typedef struct obj_reader {
    const char *s; ///< the line being read (not NUL-terminated)
    size_t n;      ///< its length
    size_t pos;    ///< read position in the line
    uint32_t line; ///< 1-based line number
    ls_error *err;
    ls_vec3 *v; ///< vertices so far
    uint32_t nv, cap_v;
    uint32_t *idx;   ///< 3 indices per triangle
    uint32_t *where; ///< per triangle: line, column of the vertex that closed it
    uint32_t nt, cap_t;
} obj_reader;

/// Fill the error with code, position and message; returns false.
static bool fail_at(obj_reader *r, size_t col0, ls_result code, const char *fmt, ...)
    LS_PRINTF(4, 5);

static bool fail_at(obj_reader *r, size_t col0, ls_result code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ls_error_setv(r->err, code, fmt, ap);
    va_end(ap);
    if (r->err) {
        r->err->line = r->line;
        r->err->column = (uint32_t)(col0 + 1);
    }
    return false;
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/// Next token of the line (stops at '#'): start and length; false at the end.
static bool next_token(obj_reader *r, size_t *start, size_t *len)
{
    while (r->pos < r->n && is_space(r->s[r->pos])) {
        r->pos++;
    }
    if (r->pos >= r->n || r->s[r->pos] == '#') {
        r->pos = r->n;
        return false;
    }
    *start = r->pos;
    while (r->pos < r->n && !is_space(r->s[r->pos]) && r->s[r->pos] != '#') {
        r->pos++;
    }
    *len = r->pos - *start;
    return true;
}

/// Whether the token equals the keyword.
static bool token_is(const obj_reader *r, size_t start, size_t len, const char *kw)
{
    return strlen(kw) == len && memcmp(r->s + start, kw, len) == 0;
}

/// The token as printable text for a message (at most 32 bytes, others as '?').
static void token_text(const obj_reader *r, size_t start, size_t len, char *buf)
{
    size_t k = len < 32 ? len : 32;
    for (size_t i = 0; i < k; i++) {
        char c = r->s[start + i];
        buf[i] = (c >= 0x20 && c < 0x7F) ? c : '?';
    }
    buf[k] = 0;
    if (len > 32) {
        memcpy(buf + k, "...", 4);
    }
}

/// Parse one §9 number token.
static bool parse_number(obj_reader *r, size_t start, size_t len, ls_fx *out)
{
    char buf[OBJ_NUMBER_MAX + 1], shown[40];
    token_text(r, start, len, shown);
    if (len > OBJ_NUMBER_MAX) {
        return fail_at(r, start, LS_ERR_PARSE, "bad number '%s': longer than %d characters", shown,
                       OBJ_NUMBER_MAX);
    }
    memcpy(buf, r->s + start, len);
    buf[len] = 0;
    const char *end = buf;
    ls_result res = ls_fx_parse(buf, out, &end);
    if (res == LS_ERR_OUT_OF_RANGE) {
        return fail_at(r, start, LS_ERR_OUT_OF_RANGE, "number '%s' is outside the Q16.16 range",
                       shown);
    }
    if (res != LS_OK || end != buf + len) {
        return fail_at(r, start, LS_ERR_PARSE, "bad number '%s' (want a decimal like -1.25)",
                       shown);
    }
    return true;
}

/// A `v` statement.
static bool read_vertex(obj_reader *r, size_t kw_start)
{
    static const char axis[3] = {'x', 'y', 'z'};
    ls_fx c[3] = {0, 0, 0};
    int count = 0;
    size_t start, len;
    while (next_token(r, &start, &len)) {
        if (count == OBJ_V_VALUES_MAX) {
            return fail_at(r, start, LS_ERR_PARSE, "too many values on a vertex line (at most %d)",
                           OBJ_V_VALUES_MAX);
        }
        ls_fx x;
        if (!parse_number(r, start, len, &x)) {
            return false;
        }
        if (count < 3) {
            if (x > LS_MESH_COORD_MAX_RAW || x < -LS_MESH_COORD_MAX_RAW) {
                char shown[40];
                token_text(r, start, len, shown);
                return fail_at(r, start, LS_ERR_OUT_OF_RANGE,
                               "vertex %u: %c = %s is outside the mesh range of +-2048 m",
                               r->nv + 1, axis[count], shown);
            }
            c[count] = x;
        }
        count++;
    }
    if (count < 3) {
        return fail_at(r, r->n, LS_ERR_PARSE, "vertex %u has %d coordinates (want x y z)",
                       r->nv + 1, count);
    }
    if (r->nv == LS_MESH_MAX_VERTICES) {
        return fail_at(r, kw_start, LS_ERR_CAPACITY, "too many vertices (at most %u)",
                       LS_MESH_MAX_VERTICES);
    }
    if (r->nv == r->cap_v) {
        uint32_t cap = r->cap_v ? r->cap_v * 2 : 64;
        cap = cap > LS_MESH_MAX_VERTICES ? LS_MESH_MAX_VERTICES : cap;
        ls_vec3 *nvp = realloc(r->v, (size_t)cap * sizeof *nvp);
        if (!nvp) {
            return fail_at(r, kw_start, LS_ERR_NO_MEMORY, "out of memory for %u vertices", cap);
        }
        r->v = nvp;
        r->cap_v = cap;
    }
    r->v[r->nv++] = ls_vec3_make(c[0], c[1], c[2]);
    return true;
}

/// Parse an optionally signed decimal integer at s[*i..n); false when there
/// are no digits. Values beyond 10 digits saturate (they are out of range anyway).
static bool parse_int(const char *s, size_t n, size_t *i, int64_t *out)
{
    bool neg = false;
    if (*i < n && (s[*i] == '-' || s[*i] == '+')) {
        neg = s[*i] == '-';
        (*i)++;
    }
    int64_t v = 0;
    size_t digits = 0;
    while (*i < n && s[*i] >= '0' && s[*i] <= '9') {
        if (v < INT64_C(100000000000)) {
            v = v * 10 + (s[*i] - '0');
        }
        (*i)++;
        digits++;
    }
    *out = neg ? -v : v;
    return digits > 0;
}

/// One vertex reference of an `f` statement (`i`, `i/t`, `i//n`, `i/t/n`)
/// as a 0-based vertex index.
static bool read_ref(obj_reader *r, size_t start, size_t len, uint32_t *out)
{
    char shown[40];
    token_text(r, start, len, shown);
    const char *s = r->s + start;
    size_t i = 0;
    int64_t v;
    if (!parse_int(s, len, &i, &v)) {
        return fail_at(r, start, LS_ERR_PARSE,
                       "bad vertex reference '%s' (want i, i/t, i//n or i/t/n)", shown);
    }
    bool ok = true;
    if (i < len && s[i] == '/') {
        i++;
        int64_t ignored;
        bool has_t = parse_int(s, len, &i, &ignored);
        if (i < len && s[i] == '/') {
            i++;
            ok = parse_int(s, len, &i, &ignored); // i//n or i/t/n
        } else {
            ok = has_t; // i/t
        }
    }
    if (!ok || i != len) {
        return fail_at(r, start, LS_ERR_PARSE,
                       "bad vertex reference '%s' (want i, i/t, i//n or i/t/n)", shown);
    }
    if (v == 0) {
        return fail_at(r, start, LS_ERR_OUT_OF_RANGE,
                       "vertex index 0: OBJ indices start at 1 (or -1 for the last vertex)");
    }
    int64_t k = v > 0 ? v - 1 : (int64_t)r->nv + v;
    if (k < 0 || k >= (int64_t)r->nv) {
        return fail_at(r, start, LS_ERR_OUT_OF_RANGE,
                       "vertex index %s is out of range: %u vertices are defined so far", shown,
                       r->nv);
    }
    *out = (uint32_t)k;
    return true;
}

/// Room for one more triangle.
static bool grow_triangles(obj_reader *r, size_t col)
{
    if (r->nt == LS_MESH_MAX_TRIANGLES) {
        return fail_at(r, col, LS_ERR_CAPACITY, "too many triangles (at most %u)",
                       LS_MESH_MAX_TRIANGLES);
    }
    if (r->nt < r->cap_t) {
        return true;
    }
    uint32_t cap = r->cap_t ? r->cap_t * 2 : 64;
    cap = cap > LS_MESH_MAX_TRIANGLES ? LS_MESH_MAX_TRIANGLES : cap;
    uint32_t *ni = realloc(r->idx, (size_t)cap * 3 * sizeof *ni);
    if (ni) {
        r->idx = ni;
    }
    uint32_t *nw = ni ? realloc(r->where, (size_t)cap * 2 * sizeof *nw) : NULL;
    if (nw) {
        r->where = nw;
    }
    if (!ni || !nw) {
        return fail_at(r, col, LS_ERR_NO_MEMORY, "out of memory for %u triangles", cap);
    }
    r->cap_t = cap;
    return true;
}

/// An `f` statement: a polygon fanned from its first vertex.
static bool read_face(obj_reader *r, size_t kw_start)
{
    uint32_t first = 0, prev = 0;
    int count = 0;
    size_t start, len;
    while (next_token(r, &start, &len)) {
        uint32_t k = 0;
        if (!read_ref(r, start, len, &k)) {
            return false;
        }
        if (count == 0) {
            first = k;
        } else if (count >= 2) {
            if (!grow_triangles(r, start)) {
                return false;
            }
            uint32_t *t = r->idx + 3 * (size_t)r->nt;
            t[0] = first;
            t[1] = prev;
            t[2] = k;
            r->where[2 * (size_t)r->nt] = r->line;
            r->where[2 * (size_t)r->nt + 1] = (uint32_t)(start + 1);
            r->nt++;
        }
        prev = k;
        count++;
    }
    if (count < 3) {
        return fail_at(r, kw_start, LS_ERR_PARSE, "face with %d vertices (at least 3)", count);
    }
    return true;
}

/// Statements that are read and ignored.
static const char *const ignored[] = {"vn", "vt",     "vp",     "o", "g",
                                      "s",  "usemtl", "mtllib", "l", "p"};

/// One line (without its line end).
static bool read_line(obj_reader *r)
{
    for (size_t i = 0; i < r->n; i++) {
        unsigned char c = (unsigned char)r->s[i];
        if ((c < 0x20 && c != '\t' && c != '\r' && c != '\v' && c != '\f') || c == 0x7F) {
            return fail_at(r, i, LS_ERR_PARSE, "unexpected control character 0x%02x", c);
        }
    }
    size_t start, len;
    if (!next_token(r, &start, &len)) {
        return true; // blank or comment
    }
    if (token_is(r, start, len, "v")) {
        return read_vertex(r, start);
    }
    if (token_is(r, start, len, "f")) {
        return read_face(r, start);
    }
    for (size_t i = 0; i < sizeof ignored / sizeof ignored[0]; i++) {
        if (token_is(r, start, len, ignored[i])) {
            return true;
        }
    }
    char shown[40];
    token_text(r, start, len, shown);
    return fail_at(r, start, LS_ERR_PARSE,
                   "unknown statement '%s' (this reader takes v and f; vn vt vp o g s usemtl "
                   "mtllib l p are ignored)",
                   shown);
}

ls_mesh *ls_mesh_create_obj(const char *text, size_t length, ls_error *err)
{
    ls_error_clear(err);
    if (!text && length) {
        ls_error_set(err, LS_ERR_INVALID_ARGUMENT, "no text");
        return NULL;
    }
    obj_reader r;
    memset(&r, 0, sizeof r);
    r.err = err;
    bool ok = true;
    size_t pos = 0;
    while (ok && pos < length) {
        const char *nl = memchr(text + pos, '\n', length - pos);
        size_t end = nl ? (size_t)(nl - text) : length;
        r.line++;
        r.s = text + pos;
        r.n = end - pos;
        r.pos = 0;
        if (r.n > OBJ_LINE_MAX) {
            ok = fail_at(&r, OBJ_LINE_MAX, LS_ERR_PARSE, "line longer than %d bytes", OBJ_LINE_MAX);
            break;
        }
        ok = read_line(&r);
        pos = end + 1;
    }
    ls_mesh *m = NULL;
    if (ok && r.nt == 0) {
        r.n = 0;
        r.line = r.line ? r.line : 1;
        fail_at(&r, 0, LS_ERR_PARSE, "no faces: a mesh needs at least one `f` statement");
        ok = false;
    }
    if (ok) {
        uint32_t bad_tri, bad_vertex;
        m = ls_mesh_create_ex_(r.v, r.nv, r.idx, r.nt, &bad_tri, &bad_vertex, err);
        if (!m && err && bad_tri < r.nt) {
            char why[LS_ERROR_MESSAGE_MAX];
            snprintf(why, sizeof why, "%s", err->message);
            const uint32_t *t = r.idx + 3 * (size_t)bad_tri;
            snprintf(err->message, sizeof err->message, "%.180s (OBJ vertices %u %u %u)", why,
                     t[0] + 1, t[1] + 1, t[2] + 1);
            err->line = r.where[2 * (size_t)bad_tri];
            err->column = r.where[2 * (size_t)bad_tri + 1];
        }
    }
    free(r.v);
    free(r.idx);
    free(r.where);
    return m;
}
