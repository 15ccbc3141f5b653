// SPDX-License-Identifier: MIT
// The browser viewer's engine API, compiled with the simulation library for
// wasm32-wasi (a reactor module: the page calls _initialize, then these
// exports). Also compiled natively for the bench's native baseline
// (tools/viewer/bench_native.c), so both sides run the very same loop.
//
// A handle (0..VW_HANDLES-1) holds one scene or replay and its world, opened
// from bytes the page fetched. Replays re-simulate from inputs alone
// (rn_source_step: apply tick t's inputs, step, checksum) and every tick's
// checksum is compared with the recorded one, as `lockstep replay verify` does.
// Poses and shapes are handed out as raw Q16.16 integers; the page divides.
// A body's shapes ("parts": one for most bodies, up to 64 for a compound) are
// handed out once with their pose relative to the body's centre-of-mass frame,
// which is what the per-tick poses move; hull and mesh geometry (vertices and
// faces or triangles) once per distinct hull or mesh.
#include "../render/render.h"

#include <stdlib.h>
#include <string.h>

#ifdef __wasm__
#define VW_EXPORT(name) __attribute__((export_name(#name))) name
#else
#define VW_EXPORT(name) name
#endif

#include "api.h"

#define VW_HANDLES 4

typedef struct vw_handle {
    rn_source src;
    bool open;
    int64_t mismatch_tick; // first tick (0-based) whose checksum differed, or -1
    uint64_t mismatch_recorded, mismatch_computed;
    uint32_t verified; // ticks checked in order from tick 0 without a gap
    bool verified_gap; // a seek broke the in-order chain
    // Verdicts on the ticks with claims among those verified in order (SPEC.md §16.9).
    uint32_t verdict_ticks, verdict_disputed;
    int64_t verdict_first;    // first such tick, or -1
    uint32_t wrong_ticks[16]; // per player: ticks whose claim re-simulation refutes
    uint32_t first_wrong[16]; // per player: the first of them
    int32_t *bodies;          // VW_BODY_INTS per body
    int32_t *shapes;          // VW_SHAPE_INTS per body
    int32_t *parts;           // VW_PART_INTS per shape of every body, bodies in order
    uint32_t part_count;
    int32_t **geometry;       // per distinct hull or mesh: VW_GEOMETRY_HEAD ints, then the data
    const void **geometry_of; // the hull or mesh each entry was made from
    uint32_t geometry_count;
    int32_t detail[VW_DETAIL_INTS];
} vw_handle;

static vw_handle handles[VW_HANDLES];
static char error_text[512];

static vw_handle *get(int32_t h)
{
    if (h < 0 || h >= VW_HANDLES || !handles[h].open) {
        return NULL;
    }
    return &handles[h];
}

uint8_t *VW_EXPORT(vw_alloc)(uint32_t size)
{
    return malloc(size ? size : 1);
}

void VW_EXPORT(vw_free)(uint8_t *p)
{
    free(p);
}

const char *VW_EXPORT(vw_error)(void)
{
    return error_text;
}

void VW_EXPORT(vw_close)(int32_t h)
{
    vw_handle *v = get(h);
    if (v) {
        rn_source_close(&v->src);
        free(v->bodies);
        free(v->shapes);
        free(v->parts);
        for (uint32_t g = 0; g < v->geometry_count; g++) {
            free(v->geometry[g]);
        }
        free(v->geometry);
        free(v->geometry_of);
        memset(v, 0, sizeof *v);
    }
}

// Index of the geometry entry of a hull or mesh shape (made on first use), -1
// for other kinds, -2 if out of memory. Entry: kind, vertex count, face or
// triangle count, ints that follow; vertices (x y z, Q16.16); then per hull face
// its size and vertex indices (counter-clockwise from outside), or per mesh
// triangle its three vertex indices.
static int32_t geometry_index(vw_handle *v, const ls_shape_def *d)
{
    const void *key = d->type == LS_SHAPE_HULL   ? (const void *)d->hull
                      : d->type == LS_SHAPE_MESH ? (const void *)d->mesh
                                                 : NULL;
    if (!key) {
        return -1;
    }
    for (uint32_t g = 0; g < v->geometry_count; g++) {
        if (v->geometry_of[g] == key) {
            return (int32_t)g;
        }
    }
    uint32_t nv, ne;
    size_t extra;
    if (d->type == LS_SHAPE_HULL) {
        nv = ls_hull_vertex_count(d->hull);
        ne = ls_hull_face_count(d->hull);
        extra = ne;
        for (uint32_t f = 0; f < ne; f++) {
            uint32_t n = ls_hull_face_vertices(d->hull, f, NULL, 0);
            extra += n < LS_HULL_MAX_VERTICES ? n : LS_HULL_MAX_VERTICES;
        }
    } else {
        nv = ls_mesh_vertex_count(d->mesh);
        ne = ls_mesh_triangle_count(d->mesh);
        extra = (size_t)ne * 3;
    }
    size_t len = (size_t)nv * 3 + extra;
    int32_t *e = malloc((VW_GEOMETRY_HEAD + len) * sizeof *e);
    int32_t **list = realloc(v->geometry, (v->geometry_count + 1) * sizeof *list);
    if (list) {
        v->geometry = list;
    }
    const void **keys = realloc(v->geometry_of, (v->geometry_count + 1) * sizeof *keys);
    if (keys) {
        v->geometry_of = keys;
    }
    if (!e || !list || !keys) {
        free(e);
        return -2;
    }
    e[0] = (int32_t)d->type, e[1] = (int32_t)nv, e[2] = (int32_t)ne, e[3] = (int32_t)len;
    int32_t *o = e + VW_GEOMETRY_HEAD;
    for (uint32_t i = 0; i < nv; i++) {
        ls_vec3 p =
            d->type == LS_SHAPE_HULL ? ls_hull_vertex(d->hull, i) : ls_mesh_vertex(d->mesh, i);
        *o++ = p.x, *o++ = p.y, *o++ = p.z;
    }
    for (uint32_t f = 0; f < ne; f++) {
        uint32_t idx[LS_HULL_MAX_VERTICES];
        uint32_t n = 3;
        if (d->type == LS_SHAPE_HULL) {
            n = ls_hull_face_vertices(d->hull, f, idx, LS_HULL_MAX_VERTICES);
            n = n < LS_HULL_MAX_VERTICES ? n : LS_HULL_MAX_VERTICES;
            *o++ = (int32_t)n;
        } else {
            ls_mesh_triangle(d->mesh, f, idx);
        }
        for (uint32_t k = 0; k < n; k++) {
            *o++ = (int32_t)idx[k];
        }
    }
    v->geometry[v->geometry_count] = e;
    v->geometry_of[v->geometry_count] = key;
    return (int32_t)v->geometry_count++;
}

// Every shape of every body with its pose relative to the body's centre-of-mass
// frame (from the world's shape and body transforms of the initial state).
static bool export_parts(vw_handle *v)
{
    ls_world *w = v->src.world;
    uint32_t nb = v->src.scene.body_count, total = 0;
    for (uint32_t i = 0; i < nb; i++) {
        total += ls_body_shape_count(w, rn_source_body(&v->src, i));
    }
    v->parts = calloc(total ? total : 1, VW_PART_INTS * sizeof(int32_t));
    if (!v->parts) {
        return false;
    }
    for (uint32_t i = 0; i < nb; i++) {
        ls_body_id id = rn_source_body(&v->src, i);
        ls_vec3 bp = ls_body_position(w, id);
        ls_quat bq = ls_body_orientation(w, id);
        uint32_t n = ls_body_shape_count(w, id);
        v->shapes[i * VW_SHAPE_INTS + 12] = (int32_t)n;
        v->shapes[i * VW_SHAPE_INTS + 13] = (int32_t)v->part_count;
        for (uint32_t k = 0; k < n; k++) {
            ls_shape_def d = ls_body_shape_at(w, id, k);
            ls_vec3 sp = bp;
            ls_quat sq = bq;
            ls_shape_get_transform(w, ls_body_shape_id(w, id, k), &sp, &sq);
            ls_vec3 lp = ls_vec3_zero();
            ls_quat lq = ls_quat_identity();
            if (!ls_vec3_equal(sp, bp) || !ls_quat_equal(sq, bq)) {
                lp = ls_quat_rotate_inv(bq, ls_vec3_sub(sp, bp));
                lq = ls_quat_normalize(ls_quat_mul(ls_quat_conj(bq), sq));
            }
            int32_t g = geometry_index(v, &d);
            if (g == -2) {
                return false;
            }
            const int32_t vals[VW_PART_INTS] = {(int32_t)d.type,
                                                d.radius,
                                                d.half_height,
                                                d.half_extents.x,
                                                d.half_extents.y,
                                                d.half_extents.z,
                                                d.normal.x,
                                                d.normal.y,
                                                d.normal.z,
                                                d.plane_d,
                                                lp.x,
                                                lp.y,
                                                lp.z,
                                                lq.x,
                                                lq.y,
                                                lq.z,
                                                lq.w,
                                                g};
            memcpy(&v->parts[v->part_count++ * VW_PART_INTS], vals, sizeof vals);
        }
    }
    return true;
}

int32_t VW_EXPORT(vw_open)(int32_t h, const uint8_t *data, uint32_t size)
{
    return vw_open_in(h, data, size, NULL);
}

/// As vw_open, resolving a scene's `mesh obj FILE` in directory `dir` (NULL:
/// refused), which the page's WASI shim serves from files it fetched.
int32_t VW_EXPORT(vw_open_in)(int32_t h, const uint8_t *data, uint32_t size, const char *dir)
{
    if (h < 0 || h >= VW_HANDLES) {
        return -1;
    }
    vw_close(h);
    vw_handle *v = &handles[h];
    error_text[0] = '\0';
    if (!rn_source_open_in(&v->src, data, size, dir, error_text, sizeof error_text)) {
        return -1;
    }
    v->src.memo_interval = 60; // scenes: scrubbing back restores a snapshot <= 60 ticks away
    uint32_t n = v->src.scene.body_count ? v->src.scene.body_count : 1;
    v->bodies = calloc(n, VW_BODY_INTS * sizeof(int32_t));
    v->shapes = calloc(n, VW_SHAPE_INTS * sizeof(int32_t));
    if (!v->bodies || !v->shapes) {
        rn_source_close(&v->src);
        free(v->bodies);
        free(v->shapes);
        memset(v, 0, sizeof *v);
        strcpy(error_text, "out of memory");
        return -1;
    }
    v->open = true;
    v->mismatch_tick = -1;
    v->verdict_first = -1;
    if (!export_parts(v)) {
        vw_close(h);
        strcpy(error_text, "out of memory");
        return -1;
    }
    for (uint32_t i = 0; i < v->src.scene.body_count; i++) {
        const ls_body_def *d = &v->src.scene.bodies[i];
        int32_t *s = &v->shapes[i * VW_SHAPE_INTS];
        int32_t player = -1;
        for (uint32_t p = 0; p < v->src.scene.player_count; p++) {
            if (v->src.scene.player_body[p] == i) {
                player = (int32_t)p;
            }
        }
        const ls_shape_def *f = d->shape_count ? &d->shapes[0] : &d->shape;
        const int32_t vals[12] = {(int32_t)f->type,  (int32_t)d->type,  f->radius,
                                  f->half_height,    f->half_extents.x, f->half_extents.y,
                                  f->half_extents.z, f->normal.x,       f->normal.y,
                                  f->normal.z,       f->plane_d,        player};
        memcpy(s, vals, sizeof vals); // [12], [13]: set by export_parts
    }
    return 0;
}

int32_t VW_EXPORT(vw_is_replay)(int32_t h)
{
    vw_handle *v = get(h);
    return v && v->src.is_replay;
}

/// Recorded ticks (replays) or the scene's suggested tick count.
uint32_t VW_EXPORT(vw_ticks)(int32_t h)
{
    vw_handle *v = get(h);
    return v ? v->src.ticks : 0;
}

uint32_t VW_EXPORT(vw_tick)(int32_t h)
{
    vw_handle *v = get(h);
    return v ? v->src.tick : 0;
}

uint32_t VW_EXPORT(vw_players)(int32_t h)
{
    vw_handle *v = get(h);
    return v ? v->src.scene.player_count : 0;
}

uint32_t VW_EXPORT(vw_tick_rate)(int32_t h)
{
    vw_handle *v = get(h);
    return v ? v->src.scene.world.tick_rate : 0;
}

// One tick; for replays, compare with the recorded checksum. 1 stepped, 0 at the end.
static int32_t step(vw_handle *v)
{
    uint32_t t = v->src.tick;
    if (!rn_source_step(&v->src)) {
        return 0;
    }
    if (v->src.is_replay) {
        // A tick with claims is sound when the truth is the recorded checksum or
        // any player's claim; the verdict names who was wrong.
        ls_replay_verdict verdict = {0};
        bool ok = v->src.last_recorded == v->src.last_computed;
        if (ls_replay_reader_claims_count(v->src.reader) > 0) {
            ok = ls_replay_reader_judge(v->src.reader, t, v->src.last_computed, &verdict);
        }
        if (!ok && (v->mismatch_tick < 0 || (int64_t)t < v->mismatch_tick)) {
            v->mismatch_tick = t;
            v->mismatch_recorded = v->src.last_recorded;
            v->mismatch_computed = v->src.last_computed;
        }
        if (ok && !v->verified_gap && v->verified == t) {
            v->verified = t + 1;
            if (verdict.reported) {
                v->verdict_first = v->verdict_ticks++ == 0 ? (int64_t)t : v->verdict_first;
                v->verdict_disputed += verdict.disputed;
                for (uint32_t p = 0; p < 16; p++) {
                    if ((verdict.wrong >> p & 1u) && v->wrong_ticks[p]++ == 0) {
                        v->first_wrong[p] = t;
                    }
                }
            }
        }
    }
    return 1;
}

/// Step up to n ticks; stops after the first tick whose checksum differs from
/// the recording. Returns the ticks stepped.
uint32_t VW_EXPORT(vw_run)(int32_t h, uint32_t n)
{
    vw_handle *v = get(h);
    uint32_t done = 0;
    while (v && done < n && step(v)) {
        done++;
        if (v->mismatch_tick >= 0 && (uint64_t)v->mismatch_tick + 1 == v->src.tick) {
            break;
        }
    }
    return done;
}

/// Go to the state after `tick` ticks (through keyframes). 0 ok, -1 error (vw_error).
int32_t VW_EXPORT(vw_seek)(int32_t h, uint32_t tick)
{
    vw_handle *v = get(h);
    if (!v) {
        return -1;
    }
    if (tick == v->src.tick) {
        return 0;
    }
    if (tick == v->src.tick + 1) {
        return step(v) ? 0 : -1;
    }
    v->verified_gap = true; // the state may come from a keyframe now
    return rn_source_seek(&v->src, tick, error_text, sizeof error_text) ? 0 : -1;
}

uint64_t VW_EXPORT(vw_checksum)(int32_t h)
{
    vw_handle *v = get(h);
    return v ? rn_source_checksum(&v->src) : 0;
}

/// Recorded checksum of tick t (the state after t + 1 ticks); 0 if none.
uint64_t VW_EXPORT(vw_recorded)(int32_t h, uint32_t t)
{
    vw_handle *v = get(h);
    return v && v->src.is_replay ? ls_replay_reader_checksum(v->src.reader, t) : 0;
}

/// First tick whose re-simulated checksum differed, or -1.
int64_t VW_EXPORT(vw_mismatch_tick)(int32_t h)
{
    vw_handle *v = get(h);
    return v ? v->mismatch_tick : -1;
}

uint64_t VW_EXPORT(vw_mismatch_recorded)(int32_t h)
{
    vw_handle *v = get(h);
    return v ? v->mismatch_recorded : 0;
}

uint64_t VW_EXPORT(vw_mismatch_computed)(int32_t h)
{
    vw_handle *v = get(h);
    return v ? v->mismatch_computed : 0;
}

/// Ticks verified in order from tick 0.
uint32_t VW_EXPORT(vw_verified)(int32_t h)
{
    vw_handle *v = get(h);
    return v ? v->verified : 0;
}

/// Ticks of the replay with claims (where the players' checksums disagreed).
uint32_t VW_EXPORT(vw_claims_count)(int32_t h)
{
    vw_handle *v = get(h);
    return v && v->src.is_replay ? ls_replay_reader_claims_count(v->src.reader) : 0;
}

/// The i-th tick with claims (tick order).
uint32_t VW_EXPORT(vw_claims_tick)(int32_t h, uint32_t i)
{
    vw_handle *v = get(h);
    ls_replay_claims c;
    return v && v->src.is_replay && ls_replay_reader_claims_at(v->src.reader, i, &c) == LS_OK
               ? c.tick
               : 0;
}

/// The i-th tick with claims: reported mask | disputed << 16, or -1.
int32_t VW_EXPORT(vw_claims_flags)(int32_t h, uint32_t i)
{
    vw_handle *v = get(h);
    ls_replay_claims c;
    if (!v || !v->src.is_replay || ls_replay_reader_claims_at(v->src.reader, i, &c) != LS_OK) {
        return -1;
    }
    return (int32_t)c.reported | (int32_t)c.disputed << 16;
}

/// Player p's claim at the i-th tick with claims (0 if none).
uint64_t VW_EXPORT(vw_claim)(int32_t h, uint32_t i, uint32_t p)
{
    vw_handle *v = get(h);
    ls_replay_claims c;
    if (!v || !v->src.is_replay || p >= LS_REPLAY_MAX_CLAIM_PLAYERS ||
        ls_replay_reader_claims_at(v->src.reader, i, &c) != LS_OK) {
        return 0;
    }
    return c.claims[p];
}

/// Ticks with claims among those verified in order, the disputed ones, the first (-1).
uint32_t VW_EXPORT(vw_verdict_ticks)(int32_t h)
{
    vw_handle *v = get(h);
    return v ? v->verdict_ticks : 0;
}

uint32_t VW_EXPORT(vw_verdict_disputed)(int32_t h)
{
    vw_handle *v = get(h);
    return v ? v->verdict_disputed : 0;
}

int64_t VW_EXPORT(vw_verdict_first)(int32_t h)
{
    vw_handle *v = get(h);
    return v && v->verdict_ticks ? v->verdict_first : -1;
}

/// Of those, the ticks whose claim by player p re-simulation refutes, and the first.
uint32_t VW_EXPORT(vw_wrong_ticks)(int32_t h, uint32_t p)
{
    vw_handle *v = get(h);
    return v && p < 16 ? v->wrong_ticks[p] : 0;
}

uint32_t VW_EXPORT(vw_first_wrong)(int32_t h, uint32_t p)
{
    vw_handle *v = get(h);
    return v && p < 16 ? v->first_wrong[p] : 0;
}

uint32_t VW_EXPORT(vw_keyframes)(int32_t h)
{
    vw_handle *v = get(h);
    return v && v->src.is_replay ? ls_replay_reader_info(v->src.reader)->keyframes : 0;
}

uint32_t VW_EXPORT(vw_keyframe_tick)(int32_t h, uint32_t i)
{
    vw_handle *v = get(h);
    return v && v->src.is_replay ? ls_replay_reader_keyframe_info(v->src.reader, i).tick : 0;
}

uint32_t VW_EXPORT(vw_body_count)(int32_t h)
{
    vw_handle *v = get(h);
    return v ? v->src.scene.body_count : 0;
}

/// Per body (file order), VW_SHAPE_INTS ints: its first shape's type, body type,
/// radius, half height, half extents x y z, plane normal x y z, plane d; player or
/// -1; the body's shape count and the index of its first entry in vw_parts.
const int32_t *VW_EXPORT(vw_shapes)(int32_t h)
{
    vw_handle *v = get(h);
    return v ? v->shapes : NULL;
}

uint32_t VW_EXPORT(vw_part_count)(int32_t h)
{
    vw_handle *v = get(h);
    return v ? v->part_count : 0;
}

/// Every body's shapes, VW_PART_INTS ints each: kind, radius, half height, half
/// extents x y z, plane normal x y z, plane d, position x y z and orientation x y
/// z w relative to the body's centre-of-mass frame (vw_bodies), index of its
/// vw_geometry (hulls, meshes) or -1.
const int32_t *VW_EXPORT(vw_parts)(int32_t h)
{
    vw_handle *v = get(h);
    return v ? v->parts : NULL;
}

uint32_t VW_EXPORT(vw_geometry_count)(int32_t h)
{
    vw_handle *v = get(h);
    return v ? v->geometry_count : 0;
}

/// Hull or mesh g: VW_GEOMETRY_HEAD ints (kind, vertex count, face or triangle
/// count, ints that follow), the vertices (x y z, Q16.16), then per hull face its
/// size and vertex indices, or per mesh triangle its three vertex indices.
const int32_t *VW_EXPORT(vw_geometry)(int32_t h, uint32_t g)
{
    vw_handle *v = get(h);
    return v && g < v->geometry_count ? v->geometry[g] : NULL;
}

/// Per body, VW_BODY_INTS ints of the current state: position x y z,
/// orientation x y z w (Q16.16), asleep.
const int32_t *VW_EXPORT(vw_bodies)(int32_t h)
{
    vw_handle *v = get(h);
    if (!v) {
        return NULL;
    }
    for (uint32_t i = 0; i < v->src.scene.body_count; i++) {
        ls_body_id id = rn_source_body(&v->src, i);
        ls_vec3 p = ls_body_position(v->src.world, id);
        ls_quat q = ls_body_orientation(v->src.world, id);
        int32_t *b = &v->bodies[i * VW_BODY_INTS];
        b[0] = p.x, b[1] = p.y, b[2] = p.z;
        b[3] = q.x, b[4] = q.y, b[5] = q.z, b[6] = q.w;
        b[7] = ls_body_is_asleep(v->src.world, id);
    }
    return v->bodies;
}

/// Body i's velocities and mass: linear x y z, angular x y z, mass (Q16.16).
const int32_t *VW_EXPORT(vw_body_detail)(int32_t h, uint32_t i)
{
    vw_handle *v = get(h);
    if (!v || i >= v->src.scene.body_count) {
        return NULL;
    }
    ls_body_id id = rn_source_body(&v->src, i);
    ls_vec3 l = ls_body_linear_velocity(v->src.world, id);
    ls_vec3 a = ls_body_angular_velocity(v->src.world, id);
    const int32_t vals[VW_DETAIL_INTS] = {
        l.x, l.y, l.z, a.x, a.y, a.z, ls_body_mass(v->src.world, id)};
    memcpy(v->detail, vals, sizeof vals);
    return v->detail;
}
