// SPDX-License-Identifier: MIT
// SPEC.md conformance: facts a second implementation needs, checked against
// the code through observable bytes (snapshot words at known offsets, checksum
// goldens, keyframe chunk payloads, encoded datagrams, decimal parse results).
// Each test names the SPEC section it checks. Issues 17 and 32.
#define _POSIX_C_SOURCE 200809L
#include "ls/checksum.h"
#include "ls/fx_text.h"
#include "ls/game.h"
#include "ls/joint.h"
#include "ls/net_peer.h"
#include "ls/net_relay.h"
#include "ls/particles.h"
#include "ls/replay.h"
#include "ls/replay_sign.h"
#include "ls/scene.h"
#include "ls/vehicle.h"

// The tool's token text codec (`lockstep relay` prints, `lockstep bot --token`
// parses): compiled in here so the test checks the tool's own code.
#include "../tools/net_tool.c"

#include <criterion/criterion.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// ---- the only calls that create worlds, bodies, scenes and recorders ----

static ls_world *conf_world(const ls_world_def *def)
{
    ls_error err;
    ls_world *w = ls_world_create(def, &err);
    cr_assert_not_null(w, "%s", err.message);
    return w;
}

static ls_body_id conf_body(ls_world *w, const ls_body_def *def)
{
    ls_error err;
    ls_body_id id = ls_body_create(w, def, &err);
    cr_assert_neq(id.index1, 0, "%s", err.message);
    return id;
}

// Parse scene text (path == NULL) or load a file; instantiate it.
static ls_world *conf_scene(const char *path, const char *text, ls_scene *out)
{
    ls_scene s;
    ls_error err;
    ls_result r =
        path ? ls_scene_load(path, &s, &err) : ls_scene_parse(text, strlen(text), &s, &err);
    cr_assert_eq(r, LS_OK, "%u:%u %s", err.line, err.column, err.message);
    ls_world *w = ls_scene_instantiate(&s, &err);
    cr_assert_not_null(w, "%s", err.message);
    if (out) {
        *out = s;
    } else {
        ls_scene_free(&s);
    }
    return w;
}

static ls_replay_recorder *conf_recorder(const char *path, const ls_replay_recorder_def *def)
{
    ls_error err;
    ls_replay_recorder *rec = ls_replay_recorder_create(path, def, &err);
    cr_assert_not_null(rec, "%s", err.message);
    return rec;
}

// ---- snapshot layout (SPEC §13) ----

#define HEADER_WORDS 21 // magic .. overflow generation
#define SLOT_WORDS   40 // body fields + next-free link
#define SHAPE_WORDS  27 // shape fields + next-free link
// shape a, b, child, normal, count; 4 x (point, depth, feature, normal impulse,
// anchor a, anchor b, base depth, lever); friction impulse, twist impulse,
// rolling impulse; 2 x (pose p, pose q, tangent); friction, restitution (v6)
#define CONTACT_WORDS 92
#define POINT_WORDS   14
#define JOINT_HEADER  12 // bytes: joint_high, joint_count, free head
#define SECTIONS      4  // bytes: the section word after the joints (v6: particles, vehicles)
#define RNG_STREAM    UINT64_C(0x6c6f636b73746570) // "lockstep"

// Word indices of the header.
enum {
    W_MAGIC,
    W_VERSION,
    W_MAX_BODIES,
    W_MAX_SHAPES,
    W_TICK,
    W_RNG_STATE_LO,
    W_RNG_STATE_HI,
    W_RNG_INC_LO,
    W_RNG_INC_HI,
    W_BODY_HIGH,
    W_BODY_COUNT,
    W_FREE_HEAD,
    W_SHAPE_HIGH,
    W_SHAPE_COUNT,
    W_SHAPE_FREE_HEAD,
    W_GEOMETRY_COUNT,
    W_CONTACT_COUNT,
    W_OVF_COUNT,
    W_OVF_TICK,
    W_OVF_INDEX1,
    W_OVF_GENERATION,
};

// Word offsets within a body slot.
enum {
    S_GENERATION = 0,
    S_FLAGS = 1,
    S_P = 2,
    S_Q = 5,
    S_V = 9,
    S_W = 12,
    S_SLEEP_TIMER = 21,
    S_MASS = 24,
    S_INV_INERTIA = 26,
    S_COM = 32,
    S_SHAPE_HEAD = 35,
    S_SHAPE_COUNT = 36,
    S_NEXT_FREE = 39,
};

// Word offsets within a shape slot.
enum {
    H_GENERATION = 0,
    H_FLAGS = 1,
    H_BODY = 2,
    H_NEXT = 3,
    H_GEOMETRY = 4,
    H_LOCAL_P = 5,
    H_LOCAL_Q = 8,
    H_RADIUS = 12,
    H_HALF_EXTENTS = 14,
    H_PLANE_NORMAL = 17,
    H_NEXT_FREE = 26,
};

static uint8_t *snapshot(const ls_world *w, size_t *size)
{
    *size = ls_world_snapshot_size(w);
    uint8_t *buf = malloc(*size);
    cr_assert_not_null(buf);
    cr_assert_eq(ls_world_snapshot_save(w, buf, *size), *size);
    return buf;
}

static uint32_t word(const uint8_t *snap, size_t i)
{
    return ls_get_u32le(snap + 4 * i);
}

// These tests use worlds without hulls or meshes: the geometry table is empty.
static uint32_t slot_word(const uint8_t *snap, uint32_t slot, size_t k)
{
    cr_assert_eq(word(snap, W_GEOMETRY_COUNT), 0);
    return word(snap, HEADER_WORDS + (size_t)slot * SLOT_WORDS + k);
}

static size_t shape_word_index(const uint8_t *snap, uint32_t shape, size_t k)
{
    return HEADER_WORDS + (size_t)word(snap, W_BODY_HIGH) * SLOT_WORDS +
           (size_t)shape * SHAPE_WORDS + k;
}

static uint32_t shape_word(const uint8_t *snap, uint32_t shape, size_t k)
{
    return word(snap, shape_word_index(snap, shape, k));
}

static size_t contact_word_index(const uint8_t *snap, uint32_t c, size_t k)
{
    return shape_word_index(snap, word(snap, W_SHAPE_HIGH), 0) + (size_t)c * CONTACT_WORDS + k;
}

static void put_words(ls_hasher *h, const uint8_t *snap, size_t first, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        ls_hasher_put_u32(h, word(snap, first + i));
    }
}

// SPEC §12 computed from SPEC §13 snapshot words alone: proves the field
// order of both, the rng word order and the type/asleep word.
static void hash_bodies_from_snapshot(ls_hasher *h, const uint8_t *snap)
{
    ls_hasher_put_u32(h, word(snap, W_TICK));
    put_words(h, snap, W_RNG_STATE_LO, 4); // u64 state, u64 inc, each lo word first
    ls_hasher_put_u32(h, word(snap, W_BODY_COUNT));
    for (uint32_t i = 0; i < word(snap, W_BODY_HIGH); i++) {
        uint32_t flags = slot_word(snap, i, S_FLAGS);
        if (!(flags & 1u)) {
            continue;
        }
        size_t base = HEADER_WORDS + (size_t)i * SLOT_WORDS;
        ls_hasher_put_u32(h, i);
        ls_hasher_put_u32(h, slot_word(snap, i, S_GENERATION));
        ls_hasher_put_u32(h, ((flags >> 8) & 0xFFu) | ((flags & 4u) ? 0x100u : 0u));
        put_words(h, snap, base + S_P, 3 + 4 + 3 + 3); // p, q, v, w
        put_words(h, snap, base + S_SLEEP_TIMER, 1);
        // Shapes in chain order: slot, generation, kind, local position, rotation.
        uint32_t count = slot_word(snap, i, S_SHAPE_COUNT);
        ls_hasher_put_u32(h, count);
        for (uint32_t k = slot_word(snap, i, S_SHAPE_HEAD); count-- > 0;
             k = shape_word(snap, k, H_NEXT)) {
            ls_hasher_put_u32(h, k);
            ls_hasher_put_u32(h, shape_word(snap, k, H_GENERATION));
            ls_hasher_put_u32(h, shape_word(snap, k, H_FLAGS) >> 8);
            put_words(h, snap, shape_word_index(snap, k, H_LOCAL_P), 3 + 4);
        }
    }
}

static uint64_t checksum_from_snapshot(const uint8_t *snap)
{
    ls_hasher h;
    ls_hasher_init(&h);
    hash_bodies_from_snapshot(&h, snap);
    return ls_hasher_digest(&h);
}

// ---- 1. world PRNG seeding, and its state in snapshot and checksum ----

// SPEC §7, §12, §13: the world PRNG is make(seed, 0x6c6f636b73746570); its
// state words come first as u64 state then u64 inc (lo word first in §13).
Test(conformance, world_rng_seed_stream_and_word_order)
{
    ls_world_def d = ls_default_world_def();
    d.seed = 42;
    ls_world *w = conf_world(&d);
    ls_rng expect = ls_rng_make(42, RNG_STREAM);
    cr_assert_eq(ls_world_rng(w)->state, expect.state);
    cr_assert_eq(ls_world_rng(w)->inc, expect.inc);
    cr_assert_eq(expect.inc, UINT64_C(0xd8dec6d6e6e8cae1)); // 2 * stream + 1

    size_t n;
    uint8_t *s = snapshot(w, &n);
    cr_assert_eq(n, 84 + JOINT_HEADER + SECTIONS,
                 "an empty world's snapshot is the 21-word header, the 3-word joint header and "
                 "the section word");
    cr_assert_eq(word(s, W_RNG_STATE_LO), (uint32_t)expect.state);
    cr_assert_eq(word(s, W_RNG_STATE_HI), (uint32_t)(expect.state >> 32));
    cr_assert_eq(word(s, W_RNG_INC_LO), 0xe6e8cae1u);
    cr_assert_eq(word(s, W_RNG_INC_HI), 0xd8dec6d6u);

    // Checksum = u32 tick, u64 state, u64 inc, u32 body_count (SPEC §8 encoding).
    ls_hasher h;
    ls_hasher_init(&h);
    ls_hasher_put_u32(&h, 0);
    ls_hasher_put_u64(&h, expect.state);
    ls_hasher_put_u64(&h, expect.inc);
    ls_hasher_put_u32(&h, 0);
    cr_assert_eq(ls_world_checksum(w), ls_hasher_digest(&h));
    cr_assert_eq(ls_world_checksum(w), checksum_from_snapshot(s));
    cr_assert_eq(ls_world_checksum(w), UINT64_C(0xbe992ff0eb84e7d4), "golden: %016llx",
                 (unsigned long long)ls_world_checksum(w));

    // Drawing from the world PRNG changes the state, hence the checksum.
    uint64_t before = ls_world_checksum(w);
    ls_rng_next_u32(ls_world_rng(w));
    cr_assert_neq(ls_world_checksum(w), before);
    free(s);
    ls_world_destroy(w);

    // A scene's `seed N` (0..2^32-1) is the world seed; the default is 0.
    ls_world *ws = conf_scene(NULL, "world seed 7\n", NULL);
    expect = ls_rng_make(7, RNG_STREAM);
    cr_assert_eq(ls_world_rng(ws)->state, expect.state);
    ls_world_destroy(ws);
    ws = conf_scene(NULL, "world\n", NULL);
    expect = ls_rng_make(0, RNG_STREAM);
    cr_assert_eq(ls_world_rng(ws)->state, expect.state);
    ls_world_destroy(ws);
}

// ---- 2. generations ----

// SPEC §6, §13: a slot's first body has generation 1; destroy pushes the slot
// on a LIFO free list (free_head, next-free links, 0xFFFFFFFF = none); reuse
// increments the slot's generation. A live slot's link word is stale.
Test(conformance, generations_start_at_1_and_free_slots_are_reused_lifo)
{
    ls_world_def d = ls_default_world_def();
    d.max_bodies = 8;
    ls_world *w = conf_world(&d);
    ls_body_def b = ls_default_body_def();
    ls_body_id id[3];
    for (uint32_t i = 0; i < 3; i++) {
        b.position.x = (ls_fx)(i * 3 * 65536);
        id[i] = conf_body(w, &b);
        cr_assert_eq(id[i].index1, i + 1);
        cr_assert_eq(id[i].generation, 1);
    }
    size_t n;
    uint8_t *s = snapshot(w, &n);
    cr_assert_eq(word(s, W_FREE_HEAD), 0xFFFFFFFFu);
    cr_assert_eq(slot_word(s, 0, S_GENERATION), 1);
    cr_assert_eq(slot_word(s, 0, S_NEXT_FREE), 0, "never-freed slot: link 0");
    free(s);

    ls_body_destroy(w, id[0]);
    ls_body_destroy(w, id[2]);
    s = snapshot(w, &n);
    cr_assert_eq(word(s, W_BODY_HIGH), 3);
    cr_assert_eq(word(s, W_BODY_COUNT), 1);
    cr_assert_eq(word(s, W_FREE_HEAD), 2, "last destroyed slot first");
    cr_assert_eq(slot_word(s, 2, S_NEXT_FREE), 0);
    cr_assert_eq(slot_word(s, 0, S_NEXT_FREE), 0xFFFFFFFFu);
    cr_assert_eq(slot_word(s, 2, S_GENERATION), 1, "a dead slot keeps its generation");
    cr_assert_eq(slot_word(s, 2, S_FLAGS) & 1u, 0, "alive bit cleared");
    cr_assert_eq(slot_word(s, 2, S_P), (uint32_t)(6 * 65536), "dead slot keeps its fields");
    cr_assert_eq(n, 84 + 3 * 160 + 3 * 108 + JOINT_HEADER + SECTIONS);
    // Shape slots follow the same rules: the destroyed bodies' shapes are free, LIFO.
    cr_assert_eq(word(s, W_SHAPE_HIGH), 3);
    cr_assert_eq(word(s, W_SHAPE_COUNT), 1);
    cr_assert_eq(word(s, W_SHAPE_FREE_HEAD), 2, "last freed shape slot first");
    cr_assert_eq(shape_word(s, 2, H_NEXT_FREE), 0);
    cr_assert_eq(shape_word(s, 0, H_NEXT_FREE), 0xFFFFFFFFu);
    cr_assert_eq(shape_word(s, 2, H_FLAGS) & 1u, 0, "shape alive bit cleared");
    cr_assert_eq(ls_world_checksum(w), checksum_from_snapshot(s));
    free(s);

    ls_body_id r1 = conf_body(w, &b), r2 = conf_body(w, &b), r3 = conf_body(w, &b);
    cr_assert_eq(r1.index1, 3);
    cr_assert_eq(r1.generation, 2);
    cr_assert_eq(r2.index1, 1);
    cr_assert_eq(r2.generation, 2);
    cr_assert_eq(r3.index1, 4);
    cr_assert_eq(r3.generation, 1);
    cr_assert(!ls_body_is_valid(w, id[0]), "the old id is stale");
    s = snapshot(w, &n);
    cr_assert_eq(word(s, W_FREE_HEAD), 0xFFFFFFFFu);
    cr_assert_eq(slot_word(s, 2, S_NEXT_FREE), 0, "reused slot: stale link kept");
    cr_assert_eq(slot_word(s, 0, S_NEXT_FREE), 0xFFFFFFFFu, "reused slot: stale link kept");
    cr_assert_eq(slot_word(s, 2, S_GENERATION), 2);
    cr_assert_eq(ls_world_checksum(w), checksum_from_snapshot(s));
    free(s);
    ls_world_destroy(w);
}

// ---- 3. body type and shape codes ----

// SPEC §12, §13: type codes static 0, kinematic 1, dynamic 2; shape codes
// sphere 0, box 1, capsule 2, plane 3, hull 4, mesh 5; body flags = alive |
// allow_sleep<<1 | asleep<<2 | bullet<<3 | type<<8; shape flags = alive |
// kind<<8; checksum word = type | asleep<<8.
Test(conformance, body_type_and_shape_codes)
{
    static const char scene[] = "world gravity 0 0 0\n"
                                "body static plane normal 0 1 0 d 0\n"
                                "body kinematic sphere radius 0.5 pos 0 5 0\n"
                                "body dynamic box pos 3 5 0\n"
                                "body dynamic capsule radius 0.2 half_height 0.4 pos 6 5 0 asleep\n"
                                "body dynamic sphere radius 0.5 pos 9 5 0 no_sleep\n";
    ls_world *w = conf_scene(NULL, scene, NULL);
    size_t n;
    uint8_t *s = snapshot(w, &n);
    static const uint32_t flags[] = {0x00000003u, 0x00000103u, 0x00000203u, 0x00000207u,
                                     0x00000201u};
    static const uint32_t kinds[] = {0x301u, 0x001u, 0x101u, 0x201u, 0x001u};
    for (uint32_t i = 0; i < 5; i++) {
        cr_assert_eq(slot_word(s, i, S_FLAGS), flags[i], "slot %u flags %08x", i,
                     slot_word(s, i, S_FLAGS));
        cr_assert_eq(slot_word(s, i, S_SHAPE_HEAD), i, "one shape each, in order");
        cr_assert_eq(slot_word(s, i, S_SHAPE_COUNT), 1);
        cr_assert_eq(shape_word(s, i, H_FLAGS), kinds[i], "shape %u flags %08x", i,
                     shape_word(s, i, H_FLAGS));
        cr_assert_eq(shape_word(s, i, H_BODY), i);
        cr_assert_eq(shape_word(s, i, H_NEXT), 0xFFFFFFFFu);
        cr_assert_eq(shape_word(s, i, H_GEOMETRY), 0xFFFFFFFFu, "no hull or mesh data");
        // A centred shape: local position 0, rotation identity (0, 0, 0, 1).
        for (size_t k = 0; k < 3; k++) {
            cr_assert_eq(shape_word(s, i, H_LOCAL_P + k), 0);
            cr_assert_eq(slot_word(s, i, S_COM + k), 0);
        }
        cr_assert_eq(shape_word(s, i, H_LOCAL_Q + 3), 65536u);
    }
    // Geometry words keep the definition's values whatever the kind; static and
    // kinematic bodies have zero mass and inverse inertia.
    cr_assert_eq(shape_word(s, 1, H_HALF_EXTENTS), 32768u,
                 "a sphere keeps the default half extents");
    cr_assert_eq(shape_word(s, 2, H_RADIUS), 32768u, "a box keeps the default radius");
    for (uint32_t i = 0; i < 2; i++) {
        for (size_t k = 0; k < 2; k++) {
            cr_assert_eq(slot_word(s, i, S_MASS + k), 0);
        }
        for (size_t k = 0; k < 6; k++) {
            cr_assert_eq(slot_word(s, i, S_INV_INERTIA + k), 0);
        }
    }
    cr_assert_eq(LS_BODY_STATIC, 0);
    cr_assert_eq(LS_BODY_KINEMATIC, 1);
    cr_assert_eq(LS_BODY_DYNAMIC, 2);
    cr_assert_eq(LS_SHAPE_SPHERE, 0);
    cr_assert_eq(LS_SHAPE_BOX, 1);
    cr_assert_eq(LS_SHAPE_CAPSULE, 2);
    cr_assert_eq(LS_SHAPE_PLANE, 3);
    cr_assert_eq(LS_SHAPE_HULL, 4);
    cr_assert_eq(LS_SHAPE_MESH, 5);
    cr_assert_eq(ls_world_checksum(w), checksum_from_snapshot(s));
    cr_assert_eq(ls_world_checksum(w), UINT64_C(0xb06f6e83e2bbadd9), "golden: %016llx",
                 (unsigned long long)ls_world_checksum(w));
    free(s);
    ls_world_destroy(w);
}

// ---- 4. scene quaternions ----

// SPEC §4, §14: `quat X Y Z W` is kept as written in the parsed scene and
// normalised with §4 normalize when the body is created (zero -> identity);
// plane normals likewise (a zero normal is refused).
Test(conformance, scene_quaternions_are_normalised_at_creation)
{
    static const char scene[] = "world gravity 0 0 0\n"
                                "body dynamic box pos 0 0 0 quat 0 0 0 2\n"
                                "body dynamic box pos 3 0 0 quat 1 1 1 1\n"
                                "body dynamic box pos 6 0 0\n"
                                "body dynamic box pos 9 0 0 quat 0.1 0.2 0.3 0.4\n"
                                "body static plane normal 0 0 3 d -10\n";
    ls_scene sc;
    ls_world *w = conf_scene(NULL, scene, &sc);
    cr_assert_eq(sc.bodies[0].orientation.w, 2 * 65536, "the parsed scene keeps the text value");
    static const ls_fx golden[4][4] = {{0, 0, 0, 65536},
                                       {32768, 32768, 32768, 32768},
                                       {0, 0, 0, 65536},
                                       {11966, 23930, 35896, 47860}};
    size_t n;
    uint8_t *s = snapshot(w, &n);
    for (uint32_t i = 0; i < 4; i++) {
        ls_quat q = ls_body_orientation(w, ls_world_body_at(w, i));
        ls_quat e = ls_quat_normalize(sc.bodies[i].orientation);
        cr_assert(ls_quat_equal(q, e), "body %u", i);
        const ls_fx *g = golden[i];
        cr_assert(q.x == g[0] && q.y == g[1] && q.z == g[2] && q.w == g[3], "body %u: %d %d %d %d",
                  i, q.x, q.y, q.z, q.w);
        for (size_t k = 0; k < 4; k++) {
            cr_assert_eq(slot_word(s, i, S_Q + k), (uint32_t)g[k]);
        }
    }
    cr_assert_eq(shape_word(s, 4, H_PLANE_NORMAL + 2), 65536u);
    free(s);
    // A scene refuses a quaternion too short to normalise (issue 18); the C API
    // normalises an all-zero one to the identity.
    ls_scene bad;
    ls_error err;
    static const char zero[] = "body dynamic box quat 0 0 0 0\n";
    cr_assert_eq(ls_scene_parse(zero, sizeof zero - 1, &bad, &err), LS_ERR_PARSE);
    cr_assert_eq(err.column, 18u, "%s", err.message);
    ls_quat z = {0, 0, 0, 0};
    cr_assert(ls_quat_equal(ls_quat_normalize(z), ls_quat_identity()));
    ls_scene_free(&sc);
    ls_world_destroy(w);
}

// ---- 5. snapshot sizes, header, overflow record ----

// SPEC §13: header 21 words, 40 words per body slot [0, body_high), 27 per
// shape slot [0, shape_high), 92 per contact, then the joint section (3 words
// and 47 per joint slot; SPEC §13), then the section word; default max_bodies 4096;
// golden sizes and checksums of six_box_tower.
Test(conformance, snapshot_sizes_of_six_box_tower)
{
    cr_assert_eq(ls_default_world_def().max_bodies, 4096);
    ls_world *w = conf_scene("tools/scenes/six_box_tower.scene", NULL, NULL);
    size_t n;
    uint8_t *s = snapshot(w, &n);
    cr_assert_eq(n, 84 + 7 * 160 + 7 * 108 + JOINT_HEADER + SECTIONS,
                 "84 + 7 x 160 + 7 x 108 + 12 + 4");
    static const uint32_t head[] = {0x4E53534Cu, 6, 4096, 4096, 0};
    for (size_t i = 0; i < 5; i++) {
        cr_assert_eq(word(s, i), head[i], "word %zu", i);
    }
    cr_assert_eq(memcmp(s, "LSSN", 4), 0);
    cr_assert_eq(word(s, W_BODY_HIGH), 7);
    cr_assert_eq(word(s, W_BODY_COUNT), 7);
    cr_assert_eq(word(s, W_FREE_HEAD), 0xFFFFFFFFu);
    cr_assert_eq(word(s, W_SHAPE_HIGH), 7);
    cr_assert_eq(word(s, W_SHAPE_COUNT), 7);
    cr_assert_eq(word(s, W_SHAPE_FREE_HEAD), 0xFFFFFFFFu);
    cr_assert_eq(word(s, W_GEOMETRY_COUNT), 0);
    cr_assert_eq(word(s, W_CONTACT_COUNT), 0);
    for (size_t i = W_OVF_COUNT; i <= W_OVF_GENERATION; i++) {
        cr_assert_eq(word(s, i), 0);
    }
    cr_assert_eq(ls_world_checksum(w), checksum_from_snapshot(s));
    cr_assert_eq(ls_world_checksum(w), UINT64_C(0x9808d2dfc1e9fde6), "golden: %016llx",
                 (unsigned long long)ls_world_checksum(w));
    cr_assert_eq(ls_hash64(s, n), UINT64_C(0xd95d882b9e668b13), "golden bytes: %016llx",
                 (unsigned long long)ls_hash64(s, n));
    free(s);

    for (int t = 0; t < 60; t++) {
        ls_world_step(w);
    }
    s = snapshot(w, &n);
    uint32_t contacts = word(s, W_CONTACT_COUNT);
    cr_assert_eq(contacts, 6, "plane-box and five box-box contacts");
    cr_assert_eq(n, 84 + 7 * 160 + 7 * 108 + 6 * CONTACT_WORDS * 4 + JOINT_HEADER + SECTIONS);
    cr_assert_eq(word(s, W_TICK), 60);
    for (uint32_t c = 0; c < contacts; c++) {
        size_t at = contact_word_index(s, c, 0);
        cr_assert_eq(word(s, at), c, "contact %u: shape a", c);
        cr_assert_eq(word(s, at + 1), c + 1, "contact %u: shape b", c);
        cr_assert_eq(word(s, at + 2), 0, "child 0 (no mesh)");
        cr_assert_eq(word(s, at + 3), 0);
        cr_assert_eq(word(s, at + 4), 65536, "normal from a to b: +y");
        cr_assert_eq(word(s, at + 5), 0);
        cr_assert_eq(word(s, at + 6), 4, "four points");
    }
    cr_assert_eq(ls_world_checksum(w), checksum_from_snapshot(s));
    // = tools/crosscheck/goldens/six_box_tower.sum, tick 60
    cr_assert_eq(ls_world_checksum(w), UINT64_C(0x771fbd18fa5e8fb7), "golden: %016llx",
                 (unsigned long long)ls_world_checksum(w));
    cr_assert_eq(ls_hash64(s, n), UINT64_C(0xf47379f869bd0356), "golden bytes: %016llx",
                 (unsigned long long)ls_hash64(s, n));
    free(s);
    ls_world_destroy(w);

    // Unused contact points (j >= count) are written as zeros.
    w = conf_scene(NULL,
                   "world\nbody static plane normal 0 1 0 d 0\n"
                   "body dynamic sphere radius 0.5 pos 0 0.5 0\n",
                   NULL);
    for (int t = 0; t < 10; t++) {
        ls_world_step(w);
    }
    s = snapshot(w, &n);
    cr_assert_eq(word(s, W_CONTACT_COUNT), 1);
    cr_assert_eq(n, 84 + 2 * 160 + 2 * 108 + CONTACT_WORDS * 4 + JOINT_HEADER + SECTIONS);
    size_t at = contact_word_index(s, 0, 0);
    cr_assert_eq(word(s, at + 6), 1, "a sphere on a plane: one point");
    cr_assert_neq(word(s, at + 7 + 5), 0, "point 0 carries a normal impulse");
    for (size_t k = 7 + POINT_WORDS; k < 7 + 4 * POINT_WORDS; k++) {
        cr_assert_eq(word(s, at + k), 0, "contact word %zu", k);
    }
    free(s);
    ls_world_destroy(w);

    // Instantiating raises a too-small max_bodies to the body count.
    w = conf_scene(NULL, "world max_bodies 1\nbody dynamic box\nbody dynamic box pos 3 0 0\n",
                   NULL);
    s = snapshot(w, &n);
    cr_assert_eq(word(s, W_MAX_BODIES), 2);
    free(s);
    ls_world_destroy(w);
}

// SPEC §13: overflow record = count, tick (the world tick after the step that
// overflowed), index1 and generation of the first body that overflowed.
Test(conformance, snapshot_overflow_record)
{
    ls_world_def d = ls_default_world_def();
    d.gravity = ls_vec3_zero();
    ls_world *w = conf_world(&d);
    ls_body_def b = ls_default_body_def();
    conf_body(w, &b);
    ls_body_destroy(w, conf_body(w, &b)); // slot 1 now has generation 2 when reused
    b.position.x = 2047 * 65536;
    b.linear_velocity.x = 200 * 65536;
    ls_body_id id = conf_body(w, &b);
    cr_assert_eq(id.index1, 2);
    cr_assert_eq(id.generation, 2);
    ls_world_step(w);
    ls_world_step(w);
    ls_step_info info = ls_world_info(w);
    size_t n;
    uint8_t *s = snapshot(w, &n);
    cr_assert_geq(word(s, W_OVF_COUNT), 1);
    cr_assert_eq(word(s, W_OVF_COUNT), info.overflow_count);
    cr_assert_eq(word(s, W_OVF_TICK), 1);
    cr_assert_eq(word(s, W_OVF_INDEX1), 2);
    cr_assert_eq(word(s, W_OVF_GENERATION), 2);
    cr_assert_eq(slot_word(s, 1, S_P), (uint32_t)(2048 * 65536), "clamped to +2048 m");
    free(s);
    ls_world_destroy(w);
}

// ---- 5b. sections after the contacts: joints, particles, vehicles ----

#define JOINT_WORDS 47 // joint fields + next-free link

// Word index of the first word after the contacts (the joint section).
static size_t joint_section_index(const uint8_t *snap)
{
    return contact_word_index(snap, word(snap, W_CONTACT_COUNT), 0);
}

// Word index of the section word (after every joint slot).
static size_t section_word_index(const uint8_t *snap)
{
    size_t j = joint_section_index(snap);
    return j + 3 + (size_t)word(snap, j) * JOINT_WORDS;
}

// SPEC §12, §13, §23.1: a joint's hash word `type | flags << 8` takes its flags
// from the LS_JOINT_F_* bits (limit 1, motor 2, spring 4, collide_connected 8),
// the same four bits as bits 16..19 of the snapshot's joint flags word; a kind
// keeps only the bits of the features it has (ball: collide only). The joint
// part of the checksum computed from the snapshot's joint words.
Test(conformance, joint_flags_in_the_checksum_and_the_snapshot)
{
    static const char scene[] = "world\n"
                                "body static box pos 0 10 0\n"
                                "body dynamic box pos 0 8 0\n"
                                "body dynamic sphere radius 0.5 pos 0 5 0\n"
                                "joint hinge 0 1 anchor 0 9 0 axis 0 0 1 limits -45 45 motor 1 10 "
                                "spring 2 0.5 collide\n";
    ls_world *w = conf_scene(NULL, scene, NULL);
    // A ball joint asked for a limit, a motor and a spring stores none of them.
    ls_joint_def jd = ls_default_joint_def();
    jd.type = LS_JOINT_BALL;
    jd.body_a = ls_world_body_at(w, 1);
    jd.body_b = ls_world_body_at(w, 2);
    jd.anchor = ls_vec3_make(0, 6 * 65536, 0);
    jd.enable_limit = jd.enable_motor = jd.enable_spring = true;
    jd.user_data = UINT64_C(0x0123456789abcdef);
    ls_error err;
    ls_joint_id ball = ls_joint_create(w, &jd, &err);
    cr_assert_neq(ball.index1, 0, "%s", err.message);
    for (int t = 0; t < 20; t++) {
        ls_world_step(w);
    }
    size_t n;
    uint8_t *s = snapshot(w, &n);
    cr_assert_eq(word(s, W_CONTACT_COUNT), 0);
    size_t j = joint_section_index(s);
    cr_assert_eq(word(s, j), 2, "joint_high");
    cr_assert_eq(word(s, j + 1), 2, "joint_count");
    cr_assert_eq(word(s, j + 2), 0xFFFFFFFFu, "joint free head");
    size_t hinge = j + 3, bj = j + 3 + JOINT_WORDS;
    cr_assert_eq(word(s, hinge + 1), 0x000F0101u, "alive + 256 hinge + 65536 (1|2|4|8)");
    cr_assert_eq(word(s, bj + 1), 0x00000001u, "alive, ball 0, no flags");
    cr_assert_eq(word(s, bj + 28), 0x89abcdefu, "user data lo");
    cr_assert_eq(word(s, bj + 29), 0x01234567u, "user data hi");
    cr_assert_eq(word(s, section_word_index(s)), 0, "no particles, no vehicles");
    cr_assert_eq(n, 4 * (section_word_index(s) + 1));

    ls_hasher h;
    ls_hasher_init(&h);
    hash_bodies_from_snapshot(&h, s);
    ls_hasher_put_u32(&h, word(s, j + 1));
    for (uint32_t i = 0; i < word(s, j); i++) {
        size_t at = j + 3 + (size_t)i * JOINT_WORDS;
        uint32_t f = word(s, at + 1);
        ls_hasher_put_u32(&h, i);
        ls_hasher_put_u32(&h, word(s, at));                         // generation
        ls_hasher_put_u32(&h, ((f >> 8) & 0xFFu) | (f >> 16) << 8); // type | flags << 8
        put_words(&h, s, at + 2, 2 + 3 + 3 + 4 + 4 + 10);           // bodies .. break_torque
        put_words(&h, s, at + 30, 3 + 3 + 4 + 3 + 3);               // impulses, force, torque
    }
    cr_assert_eq(ls_world_checksum(w), ls_hasher_digest(&h));
    free(s);
    ls_world_destroy(w);
}

// Particle section words (SPEC §25.8).
#define PSYS_WORDS 41 // system slot fields + next-free link
enum { P_COUNT = 18, P_CAP = 19, P_CON_COUNT = 20, P_CON_CAP = 21 };

// SPEC §13, §25.8: the section word's bit 0; the particle section's 6-word
// head (system_high, system_count, free_head, then the overflow record: system
// slot + 1, its generation, the particle's index in its system), 41 words per
// system slot, 11 per particle, 13 per constraint; P = 24 + 164·system_high +
// 44·particles + 52·constraints.
Test(conformance, particle_section_layout_and_overflow_record)
{
    ls_world *w = conf_scene(NULL,
                             "world gravity 0 0 0\n"
                             "rope from 0 5 0 to 4 5 0 segments 4 pin none\n",
                             NULL);
    size_t n;
    uint8_t *s = snapshot(w, &n);
    size_t sw = section_word_index(s), p = sw + 1;
    cr_assert_eq(word(s, sw), 1, "bit 0: particle section");
    cr_assert_eq(word(s, p), 1, "system_high");
    cr_assert_eq(word(s, p + 1), 1, "system_count");
    cr_assert_eq(word(s, p + 2), 0xFFFFFFFFu, "free_head");
    for (size_t k = 3; k < 6; k++) {
        cr_assert_eq(word(s, p + k), 0, "healthy: overflow record word %zu is 0", k);
    }
    size_t slot = p + 6;
    cr_assert_eq(word(s, slot), 1, "generation");
    cr_assert_eq(word(s, slot + 1) & 0xFFu, 1, "alive");
    uint32_t count = word(s, slot + P_COUNT), con = word(s, slot + P_CON_COUNT);
    cr_assert_eq(count, 5, "4 segments: 5 particles");
    cr_assert_geq(word(s, slot + P_CAP), count);
    cr_assert_geq(word(s, slot + P_CON_CAP), con);
    cr_assert_eq(n - 4 * (sw + 1), 24 + 164 * 1 + 44 * count + 52 * con);
    free(s);

    // A particle leaving the ±2048 m range overflows: header words 17, 18 count
    // it and give the tick, the section's record names system slot + 1, its
    // generation and the particle; the body record stays 0, 0. The whole rope
    // moves at 2 m per tick (its sticks keep their lengths): only particle 4
    // passes 2048 m.
    ls_particle_system_id ps = ls_world_particle_system_at(w, 0);
    for (uint32_t i = 0; i < 5; i++) {
        int32_t at = 2043 + (int32_t)i;
        cr_assert_eq(ls_particle_set_position(w, ps, i, ls_vec3_make(at * 65536, 5 * 65536, 0),
                                              ls_vec3_make((at - 2) * 65536, 5 * 65536, 0)),
                     LS_OK);
    }
    ls_world_step(w);
    s = snapshot(w, &n);
    p = section_word_index(s) + 1;
    cr_assert_geq(word(s, W_OVF_COUNT), 1);
    cr_assert_eq(word(s, W_OVF_TICK), 1);
    cr_assert_eq(word(s, W_OVF_INDEX1), 0);
    cr_assert_eq(word(s, W_OVF_GENERATION), 0);
    cr_assert_eq(word(s, p + 3), 1, "system slot 0 + 1");
    cr_assert_eq(word(s, p + 4), 1, "its generation");
    cr_assert_eq(word(s, p + 5), 4, "the particle's index in its system");
    free(s);
    ls_world_destroy(w);
}

// Vehicle record word offsets (SPEC §26.7).
#define VEHICLE_WORDS 383 // 23 + 8 wheels x 45
#define WHEEL_WORDS   45  // definition 26 + state 19
#define VEHICLE_HEAD  36  // game_words_used, 32 game words, high, count, free head
enum {
    V_GENERATION = 0,
    V_ALIVE = 1,
    V_CHASSIS = 2,
    V_WHEEL_COUNT = 4,
    V_PROBE = 5,
    V_ENGINE = 6,
    V_STEER_RATE = 9,
    V_USER_DATA = 15,
    V_THROTTLE = 17,
    V_STEER = 19,
    V_HANDBRAKE = 20,
    V_BOOST = 21,
    V_STEER_ANGLE = 22,
    V_WHEELS = 23,
    WD_RADIUS = 9,
    WD_PEAK_SLIP = 22,
    WD_SLIDE_SLIP = 23,
    WD_HANDBRAKE = 24,
    WD_ANTI_ROLL_PAIR = 25,
    WS_IN_CONTACT = 26,
    WS_COMPRESSION = 35,
    WS_SPIN_SPEED = 39,
    WS_SLIDING = 41,
    WS_CENTER = 42,
};

// SPEC §13, §26.7: the section word's bit 1; game_words_used (0/1), the 32
// game words, vehicle_high, vehicle_count, vehicle_free_head, then per slot <
// vehicle_high a 383-word record and its free-list link; V = 144 + 1536 ·
// vehicle_high. Checksum: u32 game_words_used, the 32 words as u32,
// u32 vehicle_count, then per live vehicle u32 slot and the little-endian
// bytes of its record without the two user_data words (381 words, 1524 bytes).
Test(conformance, vehicle_section_layout_and_checksum)
{
    ls_world *w = conf_scene(NULL,
                             "world\n"
                             "body static plane normal 0 1 0 d 0 friction 0.8\n"
                             "body dynamic box half 0.9 0.35 2 pos 0 0.9 0 density 150 no_sleep\n"
                             "body dynamic box half 0.9 0.35 2 pos 8 0.9 0 density 150 no_sleep\n",
                             NULL);
    ls_vec3 half = ls_vec3_make(58982, 22938, 2 * 65536);
    ls_vehicle_def a = ls_default_car_def(ls_world_body_at(w, 1), half);
    ls_vehicle_def b = ls_default_car_def(ls_world_body_at(w, 2), half);
    b.probe = LS_WHEEL_SPHERE;
    b.user_data = UINT64_C(0x1122334455667788);
    b.wheels[0].anti_roll_pair = 2;
    ls_error err;
    ls_vehicle_id va = ls_vehicle_create(w, &a, &err);
    cr_assert_neq(va.index1, 0, "%s", err.message);
    ls_vehicle_id vb = ls_vehicle_create(w, &b, &err);
    cr_assert_neq(vb.index1, 0, "%s", err.message);
    cr_assert_eq(ls_vehicle_destroy(w, va), LS_OK);
    ls_vehicle_controls c = {65536, 0, -32768, true, true};
    cr_assert_eq(ls_vehicle_set_controls(w, vb, &c), LS_OK);
    cr_assert_eq(ls_world_set_game_word(w, 5, -7), LS_OK);
    for (int t = 0; t < 10; t++) {
        ls_world_step(w);
    }
    size_t n;
    uint8_t *s = snapshot(w, &n);
    size_t sw = section_word_index(s), v = sw + 1;
    cr_assert_eq(word(s, sw), 2, "bit 1 only: the vehicle section");
    cr_assert_eq(word(s, v), 1, "game_words_used");
    for (uint32_t k = 0; k < 32; k++) {
        cr_assert_eq(word(s, v + 1 + k), k == 5 ? (uint32_t)-7 : 0u, "game word %u", k);
    }
    cr_assert_eq(word(s, v + 33), 2, "vehicle_high");
    cr_assert_eq(word(s, v + 34), 1, "vehicle_count");
    cr_assert_eq(word(s, v + 35), 0, "vehicle_free_head: the destroyed slot 0");
    cr_assert_eq(n - 4 * (sw + 1), 144 + 1536 * 2, "V = 144 + 1536 x vehicle_high");
    size_t r0 = v + VEHICLE_HEAD, r1 = r0 + VEHICLE_WORDS + 1;
    cr_assert_eq(word(s, r0 + VEHICLE_WORDS), 0xFFFFFFFFu, "slot 0's free-list link: none");
    cr_assert_eq(word(s, r0 + V_GENERATION), 1, "a dead slot keeps its generation");
    for (size_t k = V_ALIVE; k < VEHICLE_WORDS; k++) {
        cr_assert_eq(word(s, r0 + k), 0, "dead slot: record word %zu is 0", k);
    }
    cr_assert_eq(word(s, r1 + V_GENERATION), vb.generation);
    cr_assert_eq(word(s, r1 + V_ALIVE), 1);
    cr_assert_eq(word(s, r1 + V_CHASSIS), 3, "chassis index1");
    cr_assert_eq(word(s, r1 + V_CHASSIS + 1), 1, "chassis generation");
    cr_assert_eq(word(s, r1 + V_WHEEL_COUNT), 4);
    cr_assert_eq(word(s, r1 + V_PROBE), 1, "sphere");
    cr_assert_eq(word(s, r1 + V_ENGINE), (uint32_t)b.engine_force);
    cr_assert_eq(word(s, r1 + V_STEER_RATE), (uint32_t)b.steer_rate);
    cr_assert_eq(word(s, r1 + V_STEER_ANGLE), (uint32_t)ls_vehicle_steer_angle(w, vb));
    cr_assert_eq(word(s, r1 + V_USER_DATA), 0x55667788u);
    cr_assert_eq(word(s, r1 + V_USER_DATA + 1), 0x11223344u);
    cr_assert_eq(word(s, r1 + V_THROTTLE), 65536u);
    cr_assert_eq(word(s, r1 + V_STEER), (uint32_t)-32768);
    cr_assert_eq(word(s, r1 + V_HANDBRAKE), 1);
    cr_assert_eq(word(s, r1 + V_BOOST), 1);
    for (uint32_t k = 0; k < LS_VEHICLE_MAX_WHEELS; k++) {
        size_t wk = r1 + V_WHEELS + (size_t)k * WHEEL_WORDS;
        if (k >= 4) { // wheels at and above wheel_count: definition and state all zero
            for (size_t i = 0; i < WHEEL_WORDS; i++) {
                cr_assert_eq(word(s, wk + i), 0, "unused wheel %u word %zu", k, i);
            }
            continue;
        }
        cr_assert_eq(word(s, wk), (uint32_t)b.wheels[k].mount.x, "wheel %u mount", k);
        cr_assert_eq(word(s, wk + WD_RADIUS), (uint32_t)b.wheels[k].radius);
        cr_assert_eq(word(s, wk + WD_PEAK_SLIP), (uint32_t)b.wheels[k].peak_slip);
        cr_assert_eq(word(s, wk + WD_SLIDE_SLIP), (uint32_t)b.wheels[k].slide_slip);
        cr_assert_eq(word(s, wk + WD_HANDBRAKE), b.wheels[k].handbrake ? 1u : 0u);
        cr_assert_eq(word(s, wk + WD_ANTI_ROLL_PAIR), b.wheels[k].anti_roll_pair);
        ls_wheel_state st;
        cr_assert_eq(ls_vehicle_get_wheel(w, vb, k, &st), LS_OK);
        cr_assert_eq(word(s, wk + WS_IN_CONTACT), st.in_contact ? 1u : 0u);
        cr_assert_eq(word(s, wk + WS_IN_CONTACT), 1, "wheel %u on the ground", k);
        cr_assert_eq(word(s, wk + WS_COMPRESSION), (uint32_t)st.compression);
        cr_assert_eq(word(s, wk + WS_SPIN_SPEED), (uint32_t)st.spin_speed);
        cr_assert_eq(word(s, wk + WS_SLIDING), st.sliding ? 1u : 0u);
        cr_assert_eq(word(s, wk + WS_CENTER + 2), (uint32_t)st.center.z);
    }

    ls_hasher h;
    ls_hasher_init(&h);
    hash_bodies_from_snapshot(&h, s);
    put_words(&h, s, v, 33);     // game_words_used, the 32 game words
    put_words(&h, s, v + 34, 1); // vehicle_count
    for (uint32_t i = 0; i < word(s, v + 33); i++) {
        size_t r = v + VEHICLE_HEAD + (size_t)i * (VEHICLE_WORDS + 1);
        if (word(s, r + V_ALIVE) == 0) {
            continue;
        }
        ls_hasher_put_u32(&h, i);
        ls_hasher_put_bytes(&h, s + 4 * r, 4 * V_USER_DATA);
        ls_hasher_put_bytes(&h, s + 4 * (r + V_USER_DATA + 2),
                            4 * (VEHICLE_WORDS - V_USER_DATA - 2));
    }
    cr_assert_eq(ls_world_checksum(w), ls_hasher_digest(&h));
    free(s);
    ls_world_destroy(w);
}

// SPEC §13: the whole version-6 layout walked part by part from the counts
// its own words give (header, geometry entries, body, shape and contact
// records, joint section, section word, particle and vehicle sections), and
// the closed size formula 84 + G + 160·body_high + 108·shape_high +
// 368·contact_count + 12 + 188·joint_high + 4 + P + V, both equal to
// ls_world_snapshot_size for shipped scenes of every kind: plain bodies, hulls
// and meshes (the geometry table), joints, particles (cloth) and vehicles
// with game words (soccer), instantiated and after some steps.
typedef struct snap_parts {
    uint32_t geometry_count, geometry_words, body_high, shape_high, contact_count, joint_high;
    uint32_t sections, system_high, particles, constraints, vehicle_high, game_words_used;
    size_t joints, particle_section, vehicle_section; // word indices (0: absent)
    size_t words;                                     // where the walk ended
} snap_parts;

static snap_parts walk_snapshot(const uint8_t *s)
{
    snap_parts p = {0};
    p.geometry_count = word(s, W_GEOMETRY_COUNT);
    p.body_high = word(s, W_BODY_HIGH);
    p.shape_high = word(s, W_SHAPE_HIGH);
    p.contact_count = word(s, W_CONTACT_COUNT);
    size_t at = HEADER_WORDS;
    for (uint32_t g = 0; g < p.geometry_count; g++) {
        uint32_t kind = word(s, at), vertices = word(s, at + 1);
        size_t start = at;
        if (kind == 4) { // hull: kind, vertex_count, 3 words per vertex
            at += 2 + 3 * (size_t)vertices;
        } else { // mesh: kind, vertex_count, vertices, triangle_count, 3 indices each
            cr_assert_eq(kind, 5, "geometry entry %u: kind %u", g, kind);
            size_t triangles = word(s, at + 2 + 3 * (size_t)vertices);
            at += 3 + 3 * (size_t)vertices + 3 * triangles;
        }
        p.geometry_words += (uint32_t)(at - start);
    }
    at += (size_t)p.body_high * SLOT_WORDS + (size_t)p.shape_high * SHAPE_WORDS +
          (size_t)p.contact_count * CONTACT_WORDS;
    p.joints = at;
    p.joint_high = word(s, at);
    at += 3 + (size_t)p.joint_high * JOINT_WORDS;
    p.sections = word(s, at++);
    cr_assert_eq(p.sections & ~3u, 0, "section word %08x", p.sections);
    if (p.sections & 1u) { // particle section (SPEC §25.8)
        p.particle_section = at;
        p.system_high = word(s, at);
        size_t slots = at + 6;
        at = slots + (size_t)p.system_high * PSYS_WORDS;
        for (uint32_t i = 0; i < p.system_high; i++) {
            size_t slot = slots + (size_t)i * PSYS_WORDS;
            if (word(s, slot + 1) & 1u) { // alive
                p.particles += word(s, slot + P_COUNT);
                p.constraints += word(s, slot + P_CON_COUNT);
            }
        }
        at += 11 * (size_t)p.particles + 13 * (size_t)p.constraints;
    }
    if (p.sections & 2u) { // vehicle section (SPEC §26.7)
        p.vehicle_section = at;
        p.game_words_used = word(s, at);
        p.vehicle_high = word(s, at + 33);
        at += VEHICLE_HEAD + (VEHICLE_WORDS + 1) * (size_t)p.vehicle_high;
    }
    p.words = at;
    return p;
}

static snap_parts check_snapshot_size(const ls_world *w, const char *name)
{
    size_t n;
    uint8_t *s = snapshot(w, &n);
    cr_assert_eq(word(s, W_MAGIC), 0x4E53534Cu);
    cr_assert_eq(word(s, W_VERSION), 6);
    uint32_t tick = word(s, W_TICK);
    snap_parts p = walk_snapshot(s);
    cr_assert_eq(4 * p.words, n, "%s tick %u: the walk ends at byte %zu of %zu", name, tick,
                 4 * p.words, n);
    size_t P = (p.sections & 1u) ? 24 + 164 * (size_t)p.system_high + 44 * (size_t)p.particles +
                                       52 * (size_t)p.constraints
                                 : 0;
    size_t V = (p.sections & 2u) ? 144 + 1536 * (size_t)p.vehicle_high : 0;
    size_t formula = 84 + 4 * (size_t)p.geometry_words + 160 * (size_t)p.body_high +
                     108 * (size_t)p.shape_high + 368 * (size_t)p.contact_count + 12 +
                     188 * (size_t)p.joint_high + 4 + P + V;
    cr_assert_eq(formula, n, "%s tick %u: formula %zu, ls_world_snapshot_size %zu", name, tick,
                 formula, n);
    // The counts the walk read are the world's.
    cr_assert_eq(word(s, W_BODY_COUNT), ls_world_body_count(w), "%s", name);
    cr_assert_eq(word(s, p.joints + 1), ls_world_joint_count(w), "%s", name);
    cr_assert_eq((p.sections & 1u) != 0, ls_world_particle_system_count(w) > 0, "%s", name);
    uint32_t particles = 0, constraints = 0;
    for (uint32_t i = 0; i < p.system_high; i++) {
        ls_particle_system_id id = ls_world_particle_system_at(w, i);
        if (id.index1 != 0) {
            particles += ls_particle_count(w, id);
            constraints += ls_particle_constraint_count(w, id);
        }
    }
    cr_assert_eq(p.particles, particles, "%s", name);
    cr_assert_eq(p.constraints, constraints, "%s", name);
    if (p.sections & 2u) {
        cr_assert_eq(word(s, p.vehicle_section + 34), ls_world_vehicle_count(w), "%s", name);
    }
    free(s);
    return p;
}

Test(conformance, snapshot_size_formula_of_shipped_scenes)
{
    static const struct {
        const char *scene;
        uint32_t geometry, joints, sections; // at least that many entries / joint slots
        bool contacts;                       // after 30 ticks
    } scenes[] = {
        {"six_box_tower", 0, 0, 0, true},    // plain bodies
        {"hull_pile", 1, 0, 0, true},        // hulls: the geometry table
        {"mesh_terrain", 3, 0, 0, true},     // two meshes (one from an OBJ file) and a hull
        {"ragdolls", 0, 1, 0, true},         // joints (cones with friction, hinges)
        {"cloth_drape", 0, 0, 1, true},      // a cloth: the particle section
        {"ball_into_cloth", 0, 0, 1, false}, // a cloth and bodies
        {"soccer", 1, 0, 2, true},           // a mesh arena, four cars, then the game words
    };
    for (size_t i = 0; i < sizeof scenes / sizeof scenes[0]; i++) {
        char path[96];
        snprintf(path, sizeof path, "tools/scenes/%s.scene", scenes[i].scene);
        ls_scene sc;
        ls_world *w = conf_scene(path, NULL, &sc);
        snap_parts p = check_snapshot_size(w, scenes[i].scene);
        cr_assert_geq(p.geometry_count, scenes[i].geometry, "%s", scenes[i].scene);
        cr_assert_geq(p.joint_high, scenes[i].joints, "%s", scenes[i].scene);
        cr_assert_eq(p.sections, scenes[i].sections, "%s: section word %u", scenes[i].scene,
                     p.sections);
        // Through the game loop (§16.7) with no input: contacts appear, soccer
        // sets its game words (kickoff timer, scores).
        uint8_t inputs[LS_SCENE_MAX_PLAYERS] = {0};
        for (int t = 0; t < 30; t++) {
            ls_game_tick(w, &sc, inputs, sc.player_count, 1);
        }
        p = check_snapshot_size(w, scenes[i].scene);
        cr_assert_eq(p.contact_count > 0, scenes[i].contacts, "%s: %u contacts", scenes[i].scene,
                     p.contact_count);
        cr_assert_eq(p.sections, scenes[i].sections, "%s", scenes[i].scene);
        cr_assert_eq(p.game_words_used, (p.sections & 2u) ? 1u : 0u, "%s", scenes[i].scene);
        ls_scene_free(&sc);
        ls_world_destroy(w);
    }
}

// SPEC §12, §23.1: the flags each kind keeps when created with every feature
// asked for (limit, motor, spring, collide_connected): hinge and prismatic
// all four, fixed and ball collide only, distance spring and collide, cone
// motor (its joint friction, motor speed 0) and collide; the snapshot word is
// alive + 256·type + 65536·flags and the checksum's `type | flags << 8`.
Test(conformance, joint_flags_kept_by_each_kind)
{
    ls_world *w = conf_scene(NULL,
                             "world gravity 0 0 0\n"
                             "body dynamic box pos 0 0 0\n"
                             "body dynamic box pos 3 0 0\n",
                             NULL);
    static const uint32_t kept[] = {8, 15, 8, 15, 12, 10}; // by type code 0..5
    ls_error err;
    for (uint32_t type = 0; type < 6; type++) {
        ls_joint_def jd = ls_default_joint_def();
        jd.type = (ls_joint_type)type;
        jd.body_a = ls_world_body_at(w, 0);
        jd.body_b = ls_world_body_at(w, 1);
        jd.anchor = ls_vec3_make(3 * 65536 / 2, 0, 0);
        jd.anchor_b = ls_vec3_make(3 * 65536, 0, 0);
        jd.enable_limit = jd.enable_motor = jd.enable_spring = jd.collide_connected = true;
        jd.lower = -65536;
        jd.upper = 65536;
        jd.max_motor_torque = 10 * 65536;
        jd.spring_hertz = 2 * 65536;
        ls_joint_id id = ls_joint_create(w, &jd, &err);
        cr_assert_neq(id.index1, 0, "type %u: %s", type, err.message);
        cr_assert_eq(id.index1, type + 1);
    }
    size_t n;
    uint8_t *s = snapshot(w, &n);
    size_t j = joint_section_index(s);
    cr_assert_eq(word(s, j), 6, "joint_high");
    ls_hasher h;
    ls_hasher_init(&h);
    hash_bodies_from_snapshot(&h, s);
    ls_hasher_put_u32(&h, word(s, j + 1));
    for (uint32_t i = 0; i < 6; i++) {
        size_t at = j + 3 + (size_t)i * JOINT_WORDS;
        uint32_t f = word(s, at + 1);
        cr_assert_eq(f, 1u | i << 8 | kept[i] << 16, "type %u: flags word %08x", i, f);
        ls_hasher_put_u32(&h, i);
        ls_hasher_put_u32(&h, word(s, at));
        ls_hasher_put_u32(&h, i | kept[i] << 8); // the hash word: type | flags << 8
        put_words(&h, s, at + 2, 2 + 3 + 3 + 4 + 4 + 10);
        put_words(&h, s, at + 30, 3 + 3 + 4 + 3 + 3);
    }
    cr_assert_eq(ls_world_checksum(w), ls_hasher_digest(&h));
    // The cone's motor flag is set and cleared by ls_joint_set_motor (speed 0 only).
    ls_joint_id cone = ls_world_joint_at(w, 5);
    cr_assert_eq(ls_joint_set_motor(w, cone, true, 65536, 65536), LS_ERR_OUT_OF_RANGE);
    cr_assert_eq(ls_joint_set_motor(w, cone, false, 0, 0), LS_OK);
    free(s);
    s = snapshot(w, &n);
    cr_assert_eq(word(s, j + 3 + 5 * JOINT_WORDS + 1), 1u | 5u << 8 | 8u << 16, "collide only");
    free(s);
    ls_world_destroy(w);
}

// SPEC §14: `asleep` starts a dynamic body asleep only if it may sleep;
// `no_sleep` wins over `asleep` in either order, and static and kinematic
// bodies never start asleep. An asleep body keeps its scene velocity but does
// not move until something wakes it.
Test(conformance, scene_asleep_and_no_sleep)
{
    static const char scene[] = "world\n"
                                "body dynamic box pos 0 5 0 asleep\n"
                                "body dynamic box pos 3 5 0 asleep no_sleep\n"
                                "body dynamic box pos 6 5 0 no_sleep asleep\n"
                                "body kinematic box pos 9 5 0 asleep\n"
                                "body dynamic box pos 12 5 0 vel 1 0 0 asleep\n";
    ls_world *w = conf_scene(NULL, scene, NULL);
    size_t n;
    uint8_t *s = snapshot(w, &n);
    static const uint32_t flags[] = {0x207u, 0x201u, 0x201u, 0x103u, 0x207u};
    for (uint32_t i = 0; i < 5; i++) {
        cr_assert_eq(slot_word(s, i, S_FLAGS), flags[i], "body %u flags %08x", i,
                     slot_word(s, i, S_FLAGS));
        cr_assert_eq(slot_word(s, i, S_SLEEP_TIMER), 0);
    }
    cr_assert_eq(slot_word(s, 4, S_V), 65536u, "an asleep body keeps its velocity");
    free(s);
    for (int t = 0; t < 30; t++) {
        ls_world_step(w);
    }
    cr_assert(ls_body_is_asleep(w, ls_world_body_at(w, 0)));
    cr_assert(!ls_body_is_asleep(w, ls_world_body_at(w, 1)));
    cr_assert(ls_body_is_asleep(w, ls_world_body_at(w, 4)));
    cr_assert_eq(ls_body_position(w, ls_world_body_at(w, 0)).y, 5 * 65536, "asleep: no fall");
    cr_assert_eq(ls_body_position(w, ls_world_body_at(w, 4)).x, 12 * 65536, "asleep: no move");
    cr_assert_lt(ls_body_position(w, ls_world_body_at(w, 1)).y, 5 * 65536, "no_sleep: falls");
    ls_world_destroy(w);
}

// ---- 6. decimal text ----

static ls_result parse(const char *text, ls_fx *v, size_t *used)
{
    const char *end = text;
    *v = 12345;
    ls_result r = ls_fx_parse(text, v, &end);
    *used = (size_t)(end - text);
    return r;
}

// SPEC §9: range check on the rounded raw magnitude (> 0x7FFFFFFF is out of
// range, so 32767.99999 is accepted and -32768 is not); `.5` and `5.` parse.
Test(conformance, decimal_range_and_forms)
{
    static const struct {
        const char *text;
        ls_result r;
        ls_fx v;
        size_t used;
    } cases[] = {
        {".5", LS_OK, 32768, 2},
        {"5.", LS_OK, 5 * 65536, 2},
        {"-.25", LS_OK, -16384, 4},
        {"+5.", LS_OK, 5 * 65536, 3},
        {"007.500", LS_OK, 7 * 65536 + 32768, 7},
        {".", LS_ERR_PARSE, 0, 0},
        {"-", LS_ERR_PARSE, 0, 0},
        {"-.", LS_ERR_PARSE, 0, 0},
        {"e5", LS_ERR_PARSE, 0, 0},
        {"1e3", LS_OK, 65536, 1},
        {"0.00000762939453125", LS_OK, 1, 19},     // exactly 2^-17: tie away from zero
        {"0.00000762939453124999", LS_OK, 0, 22},  // digits past the 17th are ignored
        {"-0.00000762939453125", LS_OK, -1, 20},   // ties away from zero
        {"32767.99998", LS_OK, 0x7FFFFFFF, 11},    //
        {"32767.99999", LS_OK, 0x7FFFFFFF, 11},    // > 32767.99998 yet rounds to MAX
        {"32767.99999237", LS_OK, 0x7FFFFFFF, 14}, // largest accepted (8 fraction digits)
        {"32767.99999238", LS_ERR_OUT_OF_RANGE, 0, 0},
        {"-32767.99999237", LS_OK, -0x7FFFFFFF, 15},
        {"-32767.99999238", LS_ERR_OUT_OF_RANGE, 0, 0},
        {"32768", LS_ERR_OUT_OF_RANGE, 0, 0},
        {"-32768", LS_ERR_OUT_OF_RANGE, 0, 0},
        {"0x7FFFFFFF", LS_OK, 0x7FFFFFFF, 10},
        {"-0x7fffffff", LS_OK, -0x7FFFFFFF, 11},
        {"0x80000000", LS_ERR_OUT_OF_RANGE, 0, 0},
        {"-0x80000000", LS_ERR_OUT_OF_RANGE, 0, 0},
        {"raw:-98304", LS_OK, -98304, 10},
        {"-raw:-5", LS_OK, 5, 7},
        {"0x", LS_ERR_PARSE, 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ls_fx v;
        size_t used;
        ls_result r = parse(cases[i].text, &v, &used);
        cr_assert_eq(r, cases[i].r, "%s: result %d", cases[i].text, r);
        if (r == LS_OK) {
            cr_assert_eq(v, cases[i].v, "%s: raw %d", cases[i].text, v);
            cr_assert_eq(used, cases[i].used, "%s: used %zu", cases[i].text, used);
        }
    }
    // In a scene a number is a whole token: `.5` and `5.` are accepted, `1e3` is not.
    ls_world *w = conf_scene(NULL, "world gravity 0 0 0\nbody dynamic box pos .5 5. -.25\n", NULL);
    ls_vec3 p = ls_body_position(w, ls_world_body_at(w, 0));
    cr_assert(p.x == 32768 && p.y == 5 * 65536 && p.z == -16384);
    ls_world_destroy(w);
    ls_scene s;
    ls_error err;
    static const char bad[] = "body dynamic box pos 1e3 0 0\n";
    cr_assert_eq(ls_scene_parse(bad, strlen(bad), &s, &err), LS_ERR_PARSE);
    cr_assert_eq(err.column, 22);
}

// ---- 7. replay keyframe encoder ----

typedef struct keyf {
    uint32_t tick, size, encoding;
    uint8_t data[64];
    uint32_t len;
} keyf;

static uint8_t *read_all(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc((size_t)len);
    cr_assert_not_null(buf);
    cr_assert_eq(fread(buf, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    *size = (size_t)len;
    return buf;
}

// Record one tick then one keyframe per entry of kf; return the KEYF chunks
// found in the file (SPEC §16.1, §16.2).
static uint32_t record_keyframes(const uint8_t *const *kf, const size_t *sizes, uint32_t count,
                                 keyf *out)
{
    char path[96];
    snprintf(path, sizeof path, "/tmp/ls_test_conformance_%ld.lsr", (long)getpid());
    ls_replay_recorder_def def = ls_default_replay_recorder_def();
    def.fingerprint = "conformance";
    def.keyframe_interval = 0;
    ls_replay_recorder *rec = conf_recorder(path, &def);
    for (uint32_t i = 0; i < count; i++) {
        uint8_t in = 0;
        cr_assert_eq(ls_replay_recorder_append(rec, &in, i), LS_OK);
        cr_assert_eq(ls_replay_recorder_add_keyframe(rec, kf[i], sizes[i]), LS_OK, "%s",
                     ls_replay_recorder_error(rec)->message);
    }
    cr_assert_eq(ls_replay_recorder_finish(rec), LS_OK);
    ls_replay_recorder_destroy(rec);
    size_t size;
    uint8_t *file = read_all(path, &size);
    unlink(path);
    uint32_t found = 0;
    size_t at = ls_get_u32le(file + 12); // header size H
    while (at + 32 <= size - 16) {
        uint32_t tag = ls_get_u32le(file + at), len = ls_get_u32le(file + at + 4);
        if (tag == 0x4659454Bu) { // "KEYF"
            keyf *k = &out[found++];
            k->tick = ls_get_u32le(file + at + 8);
            k->size = ls_get_u32le(file + at + 32);
            k->encoding = ls_get_u32le(file + at + 36);
            k->len = len - 8;
            cr_assert_leq(k->len, sizeof k->data);
            memcpy(k->data, file + at + 40, k->len);
        }
        at += 32 + len;
    }
    free(file);
    return found;
}

// SPEC §16.4: zero runs of >= 3 zeros (or zeros reaching the end) become runs,
// shorter ones stay in the literal; ties go to raw, then zero runs, over delta.
Test(conformance, keyframe_zero_runs_and_tie_break)
{
    static const uint8_t e[15] = {0, 0, 0, 9, 0, 0, 9, 0, 0, 0, 0, 0, 0, 9, 0};
    static const uint8_t tie_a[5] = {1, 2, 3, 0, 0};         // zero runs 5 bytes = raw 5: raw
    static const uint8_t tie_b[5] = {7, 7, 7, 0, 0};         // zero runs 5, delta 5, raw 5: raw
    static const uint8_t grow[8] = {7, 7, 7, 0, 0, 0, 0, 0}; // zero runs 5 < 8; delta 2
    static const uint8_t enc_e[] = {0x00, 0x03, 0x04, 9, 0, 0, 9, 0x06, 0x01, 9, 0x01};
    const uint8_t *kf[] = {e, tie_a, tie_b, grow};
    const size_t sizes[] = {15, 5, 5, 8};
    keyf k[4];
    cr_assert_eq(record_keyframes(kf, sizes, 4, k), 4);

    cr_assert_eq(k[0].encoding, 1, "first keyframe: zero runs");
    cr_assert_eq(k[0].size, 15);
    cr_assert_eq(k[0].len, sizeof enc_e);
    cr_assert_arr_eq(k[0].data, enc_e, sizeof enc_e);

    cr_assert_eq(k[1].encoding, 0, "zero runs equal to raw: raw wins the tie");
    cr_assert_arr_eq(k[1].data, tie_a, 5);
    cr_assert_eq(k[2].encoding, 0, "delta equal to raw: raw wins the tie");
    cr_assert_eq(k[3].encoding, 2, "delta strictly smaller");
    cr_assert_eq(k[3].size, 8);
    static const uint8_t enc_delta[] = {0x00, 0x08}; // grow XOR (tie_b, zero-padded) = 8 zeros
    cr_assert_eq(k[3].len, 2);
    cr_assert_arr_eq(k[3].data, enc_delta, 2);
}

// SPEC §16.4: after 15 consecutive delta keyframes the recorder writes a
// whole (raw or zero-run) keyframe, and the chain starts again.
Test(conformance, keyframe_delta_chain_of_15)
{
    static const uint8_t same[8] = {7, 7, 7, 0, 0, 0, 0, 0};
    const uint8_t *kf[18];
    size_t sizes[18];
    for (int i = 0; i < 18; i++) {
        kf[i] = same;
        sizes[i] = 8;
    }
    keyf k[18];
    cr_assert_eq(record_keyframes(kf, sizes, 18, k), 18);
    for (int i = 0; i < 18; i++) {
        uint32_t expect = (i == 0 || i == 16) ? 1u : 2u;
        cr_assert_eq(k[i].encoding, expect, "keyframe %d (tick %u)", i, k[i].tick);
        cr_assert_eq(k[i].tick, (uint32_t)i + 1);
    }
}

// ---- 7b. the golden recording, written from SPEC §16.1-§16.4 and §16.10 alone ----

typedef struct out_buf {
    uint8_t data[2048];
    size_t len;
} out_buf;

static uint8_t *grow_out(out_buf *o, size_t n)
{
    cr_assert_leq(o->len + n, sizeof o->data);
    uint8_t *p = o->data + o->len;
    o->len += n;
    return p;
}

static void out_bytes(out_buf *o, const void *p, size_t n)
{
    memcpy(grow_out(o, n), p, n);
}

static void out_u16(out_buf *o, uint16_t v)
{
    ls_put_u16le(grow_out(o, 2), v);
}

static void out_u32(out_buf *o, uint32_t v)
{
    ls_put_u32le(grow_out(o, 4), v);
}

static void out_u64(out_buf *o, uint64_t v)
{
    ls_put_u64le(grow_out(o, 8), v);
}

static void out_varint(out_buf *o, uint32_t v)
{
    do {
        uint8_t b = (uint8_t)(v & 0x7F);
        v >>= 7;
        out_bytes(o, &(uint8_t){(uint8_t)(b | (v ? 0x80 : 0))}, 1);
    } while (v);
}

// SPEC §16.2: a 32-byte chunk header, then the payload.
static size_t out_chunk(out_buf *o, uint32_t tag, uint32_t first, uint32_t count,
                        const out_buf *payload)
{
    size_t at = o->len;
    out_u32(o, tag);
    out_u32(o, (uint32_t)payload->len);
    out_u32(o, first);
    out_u32(o, count);
    out_u64(o, ls_hash64(payload->data, payload->len));
    out_u64(o, ls_hash64(o->data + at, 24));
    out_bytes(o, payload->data, payload->len);
    return at;
}

// SPEC §16.4 zero-run encoder.
static void zero_runs(out_buf *o, const uint8_t *d, size_t n)
{
    size_t i = 0;
    while (i < n) {
        size_t lit = i, run = 0;
        for (;;) {
            if (lit == n) {
                break;
            }
            if (d[lit] != 0) {
                lit++;
                continue;
            }
            size_t z = lit;
            while (z < n && d[z] == 0) {
                z++;
            }
            if (z - lit >= 3 || z == n) {
                run = z - lit;
                break;
            }
            lit = z;
        }
        out_varint(o, (uint32_t)(lit - i));
        out_bytes(o, d + i, lit - i);
        out_varint(o, (uint32_t)run);
        i = lit + run;
    }
}

// SPEC §16.10: the toy game's inputs and checksums.
static uint8_t golden_input(uint32_t t, uint32_t p)
{
    return (uint8_t)(((((t + 11 * p) / 32) * 2654435761u) >> 24) & 0x0F);
}

// SPEC §16.10: the golden recording written byte by byte from the SPEC's
// text alone (no recorder, no reader): header, four TICK chunks, two raw
// keyframes, INDX and trailer give the 1049 bytes and the XXH3 that
// replay::format_golden_bytes pins for the recorder's file; the checksums,
// keyframe encodings and chunk offsets SPEC §16.10 quotes.
Test(conformance, replay_golden_written_from_the_spec)
{
    static const char scene[] = "toy scene: any opaque bytes\n";
    const uint32_t players = 4, ticks = 64, chunk_ticks = 16, interval = 32;
    out_buf f = {0};
    // Header (§16.1).
    out_bytes(&f, "LSRP\r\n\x1a\n", 8);
    out_u16(&f, 1);           // format version
    out_u16(&f, 0);           // flags
    out_u32(&f, 72 + 6 + 28); // H
    out_u16(&f, 0);           // engine version 0.1.0
    out_u16(&f, 1);
    out_u16(&f, 0);
    out_u16(&f, 0);        // reserved
    out_u32(&f, 60);       // tick rate
    out_u32(&f, players);  // P
    out_u32(&f, 1);        // B
    out_u32(&f, interval); // keyframe interval
    out_u64(&f, 99);       // seed
    out_u32(&f, 6);        // F
    out_u32(&f, 28);       // S
    out_bytes(&f, "toy-v1", 6);
    out_bytes(&f, scene, 28);
    out_u64(&f, ls_hash64(scene, 28));
    out_u64(&f, ls_hash64(f.data, f.len));
    cr_assert_eq(f.len, 106);

    uint64_t h = ls_hash64(scene, 28), sums[64], kf_state[2];
    size_t tick_at[4], kf_at[2];
    uint32_t kf_encoding[2];
    uint8_t prev_kf[8] = {0};
    for (uint32_t c = 0; c < ticks / chunk_ticks; c++) {
        // TICK chunk (§16.2, §16.3): frames coded against the previous one,
        // the frame before the chunk all zero.
        out_buf enc = {0}, payload = {0};
        uint8_t prev[4] = {0}, frame[4];
        uint32_t run = 0;
        for (uint32_t t = c * chunk_ticks; t < (c + 1) * chunk_ticks; t++) {
            for (uint32_t p = 0; p < players; p++) {
                frame[p] = golden_input(t, p);
            }
            h = ls_hash64(frame, players) ^ (h * UINT64_C(0x9E3779B97F4A7C15));
            sums[t] = h;
            if (memcmp(frame, prev, players) == 0) {
                run++;
                continue;
            }
            uint8_t mask = 0;
            for (uint32_t p = 0; p < players; p++) {
                mask |= (uint8_t)((frame[p] != prev[p]) << p);
            }
            out_varint(&enc, run << 1 | 1);
            out_bytes(&enc, &mask, 1); // ⌈4·1/8⌉ = 1 byte
            for (uint32_t p = 0; p < players; p++) {
                if (frame[p] != prev[p]) {
                    out_bytes(&enc, &(uint8_t){(uint8_t)(frame[p] ^ prev[p])}, 1);
                }
            }
            memcpy(prev, frame, players);
            run = 0;
        }
        if (run) {
            out_varint(&enc, run << 1);
        }
        out_u32(&payload, (uint32_t)enc.len);
        out_bytes(&payload, enc.data, enc.len);
        for (uint32_t t = c * chunk_ticks; t < (c + 1) * chunk_ticks; t++) {
            out_u64(&payload, sums[t]);
        }
        tick_at[c] = out_chunk(&f, 0x4B434954u, c * chunk_ticks, chunk_ticks, &payload);
        uint32_t done = (c + 1) * chunk_ticks;
        if (done % interval != 0) {
            continue;
        }
        // KEYF (§16.2, §16.4): the toy state, u64 h; raw unless zero runs are
        // strictly shorter, then delta zero runs if strictly shorter still.
        uint32_t k = done / interval - 1;
        uint8_t state[8], x[8];
        ls_put_u64le(state, h);
        kf_state[k] = h;
        out_buf z = {0}, dz = {0}, payload_k = {0};
        zero_runs(&z, state, 8);
        const out_buf *data = NULL;
        uint32_t encoding = 0;
        size_t best = 8;
        if (z.len < best) {
            data = &z, encoding = 1, best = z.len;
        }
        if (k > 0) {
            for (int i = 0; i < 8; i++) {
                x[i] = state[i] ^ prev_kf[i];
            }
            zero_runs(&dz, x, 8);
            if (dz.len < best) {
                data = &dz, encoding = 2, best = dz.len;
            }
        }
        out_u32(&payload_k, 8);
        out_u32(&payload_k, encoding);
        out_bytes(&payload_k, data ? data->data : state, best);
        kf_encoding[k] = encoding;
        kf_at[k] = out_chunk(&f, 0x4659454Bu, done, 0, &payload_k);
        memcpy(prev_kf, state, 8);
    }
    // INDX (§16.2) and the trailer.
    out_buf index = {0};
    out_u32(&index, 4);
    out_u32(&index, 2);
    for (uint32_t c = 0; c < 4; c++) {
        out_u64(&index, tick_at[c]);
        out_u32(&index, c * chunk_ticks);
        out_u32(&index, chunk_ticks);
    }
    for (uint32_t k = 0; k < 2; k++) {
        out_u64(&index, kf_at[k]);
        out_u32(&index, (k + 1) * interval);
        out_u32(&index, 8);
    }
    size_t indx = out_chunk(&f, 0x58444E49u, 0, ticks, &index);
    out_u64(&f, indx);
    out_bytes(&f, "LSRPEND\n", 8);

    // = replay::format_golden_bytes (tests/test_replay.c, the recorder's file).
    cr_assert_eq(f.len, 1049, "%zu bytes", f.len);
    cr_assert_eq(ls_hash64(f.data, f.len), UINT64_C(0xb76c16acf7219e24), "%016llx",
                 (unsigned long long)ls_hash64(f.data, f.len));
    // The values SPEC §16.10 quotes.
    cr_assert_eq(sums[0], UINT64_C(0x8eefcc704d373f27), "h1 %016llx", (unsigned long long)sums[0]);
    cr_assert_eq(kf_state[0], UINT64_C(0xbbccc72b0fcfb174), "h32 %016llx",
                 (unsigned long long)kf_state[0]);
    cr_assert_eq(kf_state[1], UINT64_C(0x2b1dba8dc7a38dc1), "h64 %016llx",
                 (unsigned long long)kf_state[1]);
    cr_assert_eq(kf_encoding[0], 0);
    cr_assert_eq(kf_encoding[1], 0);
    cr_assert_eq(sums[63], kf_state[1], "the checksum of the last tick is the state h64");
    static const size_t chunk_offsets[7] = {106, 277, 451, 499, 673, 849, 897};
    const size_t got[7] = {tick_at[0], tick_at[1], kf_at[0], tick_at[2],
                           tick_at[3], kf_at[1],   indx};
    for (int i = 0; i < 7; i++) {
        cr_assert_eq(got[i], chunk_offsets[i], "chunk %d at byte %zu", i, got[i]);
    }
}

// ---- 7c. signed recordings ----

// SPEC §16.11: a signed file's header (flag 1, the public key after the scene,
// H = 72 + F + S + 32), a SIGN chunk after every TICK and KEYF chunk (first
// tick = ticks so far, count 0, 72 bytes: u64 own offset, the Ed25519
// signature of "LSRP-SIGN-v1" + 4 zeros, u64 N, BLAKE2b-256 of bytes [0, N)),
// and an INDX chunk that lists the TICK and KEYF chunks only; checked here
// with libsodium directly, not with the reader.
Test(conformance, signed_recording_sign_chunks_and_index)
{
    cr_assert_geq(sodium_init(), 0);
    uint8_t seed[32], pk[32], sk[64];
    for (int i = 0; i < 32; i++) {
        seed[i] = (uint8_t)(i * 7 + 1);
    }
    crypto_sign_seed_keypair(pk, sk, seed);
    ls_error err;
    ls_replay_signer *signer = ls_replay_signer_create(sk, &err);
    cr_assert_not_null(signer, "%s", err.message);
    char path[96];
    snprintf(path, sizeof path, "/tmp/ls_test_conformance_sign_%ld.lsr", (long)getpid());
    ls_replay_recorder_def def = ls_default_replay_recorder_def();
    def.fingerprint = "conformance";
    def.scene = (const uint8_t *)"scene";
    def.scene_size = 5;
    def.players = 2;
    def.chunk_ticks = 10;
    def.keyframe_interval = 25;
    def.signer = signer;
    ls_replay_recorder *rec = conf_recorder(path, &def);
    for (uint32_t t = 0; t < 50; t++) {
        uint8_t in[2] = {(uint8_t)(t / 4), 3};
        cr_assert_eq(ls_replay_recorder_append(rec, in, 1000u + t), LS_OK);
        if (ls_replay_recorder_keyframe_due(rec)) {
            uint8_t kf[12] = {(uint8_t)t, 1, 2, 3};
            cr_assert_eq(ls_replay_recorder_add_keyframe(rec, kf, sizeof kf), LS_OK);
        }
    }
    cr_assert_eq(ls_replay_recorder_finish(rec), LS_OK);
    ls_replay_recorder_destroy(rec);
    ls_replay_signer_destroy(signer);
    size_t size;
    uint8_t *file = read_all(path, &size);
    unlink(path);

    uint32_t hsize = ls_get_u32le(file + 12);
    cr_assert_eq(ls_get_u16le(file + 10), 1, "flags bit 0: signed");
    cr_assert_eq(hsize, 72 + 11 + 5 + 32);
    cr_assert_eq(memcmp(file + 56 + 11 + 5, pk, 32), 0, "the public key follows the scene");
    cr_assert_eq(ls_get_u64le(file + hsize - 16), ls_hash64("scene", 5));
    cr_assert_eq(ls_get_u64le(file + hsize - 8), ls_hash64(file, hsize - 8));

    // Walk the chunks: every TICK or KEYF chunk is followed by its SIGN chunk.
    uint64_t tick_at[8], kf_at[4];
    uint32_t ntick = 0, nkf = 0, nsign = 0, ticks = 0, last = 0;
    size_t at = hsize, indx = 0, last_sign = 0;
    while (at < size - 16) {
        uint32_t tag = ls_get_u32le(file + at), len = ls_get_u32le(file + at + 4);
        uint32_t first = ls_get_u32le(file + at + 8), count = ls_get_u32le(file + at + 12);
        if (tag == 0x4B434954u || tag == 0x4659454Bu) { // TICK, KEYF
            cr_assert_neq(last, tag, "a SIGN chunk between any two signed chunks");
            if (tag == 0x4B434954u) {
                tick_at[ntick++] = at;
                ticks += count;
            } else {
                kf_at[nkf++] = at;
            }
        } else if (tag == 0x4E474953u) { // SIGN
            cr_assert(last == 0x4B434954u || last == 0x4659454Bu, "SIGN after TICK or KEYF");
            cr_assert_eq(len, 72);
            cr_assert_eq(first, ticks, "first tick = ticks so far");
            cr_assert_eq(count, 0);
            cr_assert_eq(ls_get_u64le(file + at + 32), at, "N = the SIGN chunk's own offset");
            uint8_t msg[56], digest[32];
            memcpy(msg, "LSRP-SIGN-v1\0\0\0\0", 16);
            ls_put_u64le(msg + 16, at);
            crypto_generichash(digest, 32, file, at, NULL, 0);
            memcpy(msg + 24, digest, 32);
            cr_assert_eq(crypto_sign_verify_detached(file + at + 40, msg, 56, pk), 0,
                         "signature %u", nsign);
            nsign++;
            last_sign = at;
        } else {
            cr_assert_eq(tag, 0x58444E49u, "INDX");
            cr_assert_eq(last, 0x4E474953u, "the last signed chunk's SIGN comes before INDX");
            indx = at;
        }
        last = tag;
        at += 32 + (size_t)len;
    }
    cr_assert_eq(ntick, 6,
                 "ticks 0..9, 10..19, 20..24, keyframe 25, 25..34, 35..44, 45..49, keyframe 50");
    cr_assert_eq(nkf, 2);
    cr_assert_eq(nsign, ntick + nkf);
    cr_assert_eq(ls_get_u64le(file + size - 16), indx);
    // INDX: C and K count the TICK and KEYF chunks; no entry names a SIGN chunk.
    const uint8_t *p = file + indx + 32;
    cr_assert_eq(ls_get_u32le(p), ntick);
    cr_assert_eq(ls_get_u32le(p + 4), nkf);
    cr_assert_eq(ls_get_u32le(file + indx + 4), 8 + 16 * (ntick + nkf));
    cr_assert_eq(ls_get_u32le(file + indx + 8), 0, "INDX first tick 0");
    cr_assert_eq(ls_get_u32le(file + indx + 12), ticks, "INDX count = the ticks");
    for (uint32_t i = 0; i < ntick; i++) {
        cr_assert_eq(ls_get_u64le(p + 8 + 16 * i), tick_at[i]);
    }
    for (uint32_t i = 0; i < nkf; i++) {
        cr_assert_eq(ls_get_u64le(p + 8 + 16 * (ntick + i)), kf_at[i]);
        cr_assert_eq(ls_get_u32le(p + 8 + 16 * (ntick + i) + 12), 12, "decoded size");
    }
    ls_replay_reader *r = ls_replay_reader_open_memory(file, size, &err);
    cr_assert_not_null(r, "%s", err.message);
    ls_replay_reader_destroy(r);
    // An index that also lists a SIGN chunk (as a third keyframe), resealed and
    // named by the trailer, disagrees with the chunks: corrupt.
    uint32_t len = 8 + 16 * (ntick + nkf + 1);
    uint8_t *bad = malloc(indx + 32 + len + 16);
    cr_assert_not_null(bad);
    memcpy(bad, file, indx + 32 + 8 + 16 * (ntick + nkf));
    uint8_t *q = bad + indx + 32;
    ls_put_u32le(q + 4, nkf + 1);
    ls_put_u64le(q + 8 + 16 * (ntick + nkf), last_sign); // the last keyframe's SIGN chunk
    ls_put_u32le(q + 8 + 16 * (ntick + nkf) + 8, 50);
    ls_put_u32le(q + 8 + 16 * (ntick + nkf) + 12, 72);
    ls_put_u32le(bad + indx + 4, len);
    ls_put_u64le(bad + indx + 16, ls_hash64(q, len));
    ls_put_u64le(bad + indx + 24, ls_hash64(bad + indx, 24));
    ls_put_u64le(q + len, indx);
    memcpy(q + len + 8, "LSRPEND\n", 8);
    cr_assert_eq(ls_get_u32le(bad + ls_get_u64le(q + 8 + 16 * (ntick + nkf))), 0x4E474953u);
    cr_assert_null(ls_replay_reader_open_memory(bad, indx + 32 + len + 16, &err));
    cr_assert_eq(err.code, LS_ERR_CORRUPT);
    cr_assert(strstr(err.message, "disagrees with the chunks"), "%s", err.message);
    free(bad);
    free(file);
}

// ---- 8. ACK checksum_next ----

typedef struct conf_game {
    uint64_t state;
} conf_game;

static void cg_input(void *user, uint32_t tick, uint8_t *out, uint32_t n)
{
    (void)user;
    (void)n;
    out[0] = (uint8_t)(1u + tick % 7u);
}

static uint64_t cg_advance(void *user, uint32_t tick, const uint8_t *inputs, uint32_t slots,
                           uint32_t isz)
{
    conf_game *g = user;
    g->state = ls_hash64(inputs, (size_t)slots * isz) ^ (g->state * 31u) ^ tick;
    return g->state;
}

static ls_net_addr conf_addr(uint16_t port)
{
    return ls_net_addr_ipv4(127, 0, 0, 1, port);
}

// SPEC §17.1, §17.3, §17.5: in the relay's ACK to slot j, checksum_next = the
// relay holds slot j's checksums of ticks [0, checksum_next); a peer's ACK
// carries 0 there and the relay ignores it.
Test(conformance, ack_checksum_next)
{
    enum { N = 2, TICKS = 40 };
    ls_relay_def rd = ls_default_relay_def();
    ls_relay *relay = ls_relay_create(&rd, NULL);
    cr_assert_not_null(relay);
    ls_session_def sd = ls_default_session_def();
    sd.slots = N;
    sd.ticks = TICKS;
    uint64_t now = 1000000;
    uint32_t session;
    cr_assert_eq(ls_relay_session_create(relay, &sd, now, &session), LS_OK);
    ls_peer *peer[N];
    conf_game games[N];
    uint32_t sent_csum[N] = {0}, last_ack[N] = {0}, peer_acks = 0, relay_acks = 0;
    for (uint32_t i = 0; i < N; i++) {
        games[i].state = i;
        ls_peer_def pd = ls_default_peer_def();
        pd.session = session;
        pd.slot = i;
        ls_net_credential cred;
        cr_assert_eq(ls_relay_session_credential(relay, session, i, &cred), LS_OK);
        cr_assert_eq(ls_peer_def_set_credential(&pd, &cred), LS_OK);
        pd.relay = conf_addr(9000);
        pd.cb.user = &games[i];
        pd.cb.local_input = cg_input;
        pd.cb.advance = cg_advance;
        peer[i] = ls_peer_create(&pd, NULL);
        cr_assert_not_null(peer[i]);
    }
    for (int ms = 0; ms < 20000; ms++) {
        now += 1000;
        ls_relay_poll(relay, now);
        ls_net_datagram d;
        while (ls_relay_next_datagram(relay, &d)) {
            uint32_t j = d.to.port - 20000u;
            cr_assert_lt(j, N);
            if (d.data[3] == LS_NET_ACK) {
                uint32_t next = ls_get_u32le(d.data + LS_NET_HEADER_SIZE);
                cr_assert_eq(d.data[8], j, "relay ACK names the recipient's slot");
                cr_assert_eq(next, ls_relay_peer_stats_get(relay, session, j).checksum_next);
                cr_assert_leq(next, sent_csum[j]);
                last_ack[j] = next;
                relay_acks++;
            }
            ls_peer_receive(peer[j], d.data, d.len, now);
        }
        bool done = true;
        for (uint32_t i = 0; i < N; i++) {
            ls_peer_poll(peer[i], now);
            ls_net_addr from = conf_addr((uint16_t)(20000 + i));
            while (ls_peer_next_datagram(peer[i], &d)) {
                ls_net_msg m;
                cr_assert_eq(ls_net_decode(d.data, d.len, &m, NULL), LS_OK);
                if (m.h.type == LS_NET_ACK) {
                    cr_assert_eq(ls_get_u32le(d.data + LS_NET_HEADER_SIZE), 0,
                                 "a peer's checksum_next is 0");
                    peer_acks++;
                } else if (m.h.type == LS_NET_CHECKSUM) {
                    uint32_t end = m.u.checksum.first_tick + m.u.checksum.count;
                    if (m.u.checksum.first_tick <= sent_csum[i] && end > sent_csum[i]) {
                        sent_csum[i] = end;
                    }
                }
                ls_relay_receive(relay, &from, d.data, d.len, now);
            }
            done = done && ls_peer_state_get(peer[i]) == LS_PEER_FINISHED;
        }
        if (done) {
            break;
        }
    }
    cr_assert_gt(peer_acks, 0);
    cr_assert_gt(relay_acks, 0);
    for (uint32_t i = 0; i < N; i++) {
        cr_assert_eq(ls_peer_state_get(peer[i]), LS_PEER_FINISHED);
        cr_assert_eq(last_ack[i], TICKS, "all %d checksums (ticks 0..%d) held", TICKS, TICKS - 1);
        ls_peer_destroy(peer[i]);
    }
    ls_relay_destroy(relay);
}

// ---- 9. credential text and wire bytes ----

// SPEC §17.2, §17.3: the credential's key= text is the 32 key bytes in order, two
// lowercase hex digits each, high nibble first; the key itself never travels: a
// peer's JOIN is 128 bytes sealed with it, and the same JOIN sealed with the key
// bytes reversed (as if the text were a little-endian number) fails the tag.
Test(conformance, credential_text_is_key_bytes_in_order)
{
    ls_net_credential cred;
    ls_error err;
    cr_assert_eq(ls_net_credential_parse("lockstep-credential 2 session=1 slot=0 role=player key="
                                         "00112233445566778899AaBbCcDdEeFf"
                                         "00112233445566778899aabbccddeeff",
                                         &cred, &err),
                 LS_OK, "%s", err.message);
    for (int i = 0; i < LS_NET_KEY_SIZE; i++) {
        cr_assert_eq(cred.key[i], (uint8_t)(0x11 * (i % 16)));
    }
    char text[LS_NET_CREDENTIAL_TEXT_SIZE];
    ls_net_credential_format(&cred, text, sizeof text);
    cr_assert_str_eq(text, "lockstep-credential 2 session=1 slot=0 role=player key="
                           "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n");

    // The relay's credential, printed and parsed back, joins; reversed, it does not.
    ls_relay_def rd = ls_default_relay_def();
    ls_relay *relay = ls_relay_create(&rd, NULL);
    ls_session_def sd = ls_default_session_def();
    uint32_t session;
    cr_assert_eq(ls_relay_session_create(relay, &sd, 1000, &session), LS_OK);
    ls_net_credential rc, back;
    cr_assert_eq(ls_relay_session_credential(relay, session, 0, &rc), LS_OK);
    ls_net_credential_format(&rc, text, sizeof text);
    cr_assert_eq(ls_net_credential_parse(text, &back, &err), LS_OK);
    const char *hex = strstr(text, "key=") + 4;
    for (int i = 0; i < LS_NET_KEY_SIZE; i++) {
        char two[3];
        snprintf(two, sizeof two, "%02x", rc.key[i]);
        cr_assert_eq(memcmp(hex + 2 * i, two, 2), 0, "digits %d..%d are byte %d", 2 * i, 2 * i + 1,
                     i);
    }
    ls_peer_def pd = ls_default_peer_def();
    cr_assert_eq(ls_peer_def_set_credential(&pd, &back), LS_OK);
    pd.relay = conf_addr(9000);
    pd.cb.local_input = cg_input;
    pd.cb.advance = cg_advance;
    conf_game g = {0};
    pd.cb.user = &g;
    ls_peer *p = ls_peer_create(&pd, NULL);
    cr_assert_not_null(p);
    ls_peer_poll(p, 1000);
    ls_net_datagram d;
    cr_assert(ls_peer_next_datagram(p, &d));
    cr_assert_eq(d.len, 128);
    cr_assert_eq(d.data[3], LS_NET_JOIN);
    cr_assert(ls_net_verify(d.data, d.len, rc.key, LS_NET_TO_RELAY));
    for (size_t i = 0; i + LS_NET_KEY_SIZE <= d.len; i++) {
        cr_assert_neq(memcmp(d.data + i, rc.key, LS_NET_KEY_SIZE), 0, "the key is not on the wire");
    }
    ls_peer_destroy(p);
    uint8_t reversed[LS_NET_KEY_SIZE], buf[LS_NET_MAX_DATAGRAM];
    for (int i = 0; i < LS_NET_KEY_SIZE; i++) {
        reversed[i] = back.key[LS_NET_KEY_SIZE - 1 - i];
    }
    memcpy(buf, d.data, d.len);
    ls_net_seal(buf, d.len, reversed, LS_NET_TO_RELAY);
    ls_net_addr from = conf_addr(20000);
    ls_relay_receive(relay, &from, buf, d.len, 2000);
    cr_assert_eq(ls_relay_stats_get(relay).bad_mac, 1);
    cr_assert(!ls_relay_next_datagram(relay, &d));
    ls_net_seal(buf, 128, back.key, LS_NET_TO_RELAY);
    ls_relay_receive(relay, &from, buf, 128, 3000);
    cr_assert(ls_relay_next_datagram(relay, &d));
    cr_assert_eq(d.data[3], LS_NET_CHALLENGE);
    cr_assert_eq(d.len, 44);
    cr_assert_eq(d.data[8], 0, "relay -> peer names the recipient's slot");
    cr_assert(ls_net_verify(d.data, d.len, rc.key, LS_NET_TO_PEER));
    ls_relay_destroy(relay);
}

// ---- 10. the end of a match, the peer's clock, late players (SPEC §17.5, §17.8, §17.10) ----

#define CN_SLOTS 6
#define CN_TICKS 1024
#define CN_CAP   32

typedef struct cn_game {
    uint64_t state;
    uint32_t inputs;               // local_input calls: the inputs this peer produced
    uint32_t gone_tick[CN_SLOTS];  // LS_PEER_EV_DISCONNECTED per slot (ours too); UINT32_MAX: none
    uint8_t gone_reason[CN_SLOTS]; // ... its reason
    uint32_t back_tick[CN_SLOTS];  // LS_PEER_EV_REJOINED per slot; UINT32_MAX: none
} cn_game;

static void cn_input(void *user, uint32_t tick, uint8_t *out, uint32_t n)
{
    cn_game *g = user;
    (void)n;
    g->inputs++;
    out[0] = (uint8_t)(1u + tick % 7u); // never the empty input
}

static uint64_t cn_advance(void *user, uint32_t tick, const uint8_t *inputs, uint32_t slots,
                           uint32_t isz)
{
    cn_game *g = user;
    g->state = ls_hash64(inputs, (size_t)slots * isz) ^ (g->state * 31u) ^ tick;
    return g->state;
}

static size_t cn_save(void *user, uint32_t tick, uint8_t *buf, size_t cap)
{
    const cn_game *g = user;
    (void)tick;
    if (cap >= 8) {
        ls_put_u64le(buf, g->state);
    }
    return 8;
}

static bool cn_load(void *user, uint32_t tick, const uint8_t *buf, size_t size)
{
    cn_game *g = user;
    (void)tick;
    if (size != 8) {
        return false;
    }
    g->state = ls_get_u64le(buf);
    return true;
}

static uint64_t cn_state_checksum(void *user, uint32_t tick)
{
    const cn_game *g = user;
    (void)tick;
    return g->state;
}

static void cn_event(void *user, const ls_peer_event *ev)
{
    cn_game *g = user;
    if (ev->type == LS_PEER_EV_DISCONNECTED && ev->slot < CN_SLOTS) {
        g->gone_tick[ev->slot] = ev->tick;
        g->gone_reason[ev->slot] = ev->reason;
    } else if (ev->type == LS_PEER_EV_REJOINED && ev->slot < CN_SLOTS) {
        g->back_tick[ev->slot] = ev->tick;
    }
}

// One relay session on a lossless network with no latency and a fake clock in 1 ms
// steps. Slot k is at port 20000 + k: an ls_peer, or driven by hand (cn_send) with
// what the relay sends it captured (decoded after its tag verified).
typedef struct cnet cnet;
struct cnet {
    ls_relay *relay;
    uint32_t session;
    ls_session_def sd;
    uint64_t now, created;
    ls_net_credential cred[CN_SLOTS];
    ls_peer *peer[CN_SLOTS];  // NULL: a slot driven by hand
    bool started[CN_SLOTS];   // polled and delivered to
    bool muted[CN_SLOTS];     // what it sends is lost
    bool lose_byes[CN_SLOTS]; // the DISCONNECTs it sends are lost
    cn_game g[CN_SLOTS];
    uint64_t welcome_at[CN_SLOTS];    // when its WELCOME arrived (JOINING -> RUNNING)
    uint64_t last_to_relay[CN_SLOTS]; // when the relay last received one of its datagrams
    uint64_t seq[CN_SLOTS];           // hand-driven slots' sequence numbers
    ls_net_msg cap[CN_CAP];           // relay -> hand-driven slots (since the last cn_send)
    uint32_t cap_slot[CN_CAP], ncap;
    void (*watch)(cnet *c, uint32_t slot, const ls_net_msg *m); // every datagram a peer sends
    // Observations of the tests below.
    uint32_t byes[CN_SLOTS];          // DISCONNECTs a peer sent ...
    ls_net_msg bye[CN_SLOTS][4];      // ... the first four
    uint64_t first_sent[2][CN_TICKS]; // when slot k's input of tick t was first sent
    uint32_t own_sent_next[2], acks_checked;
    uint8_t sent_types[CN_SLOTS][16]; // message types a peer sent, in first-use order
    uint32_t ntypes[CN_SLOTS];
    ls_peer_state trace[CN_SLOTS][8]; // a peer's states, in order
    uint32_t ntrace[CN_SLOTS];
};

static ls_net_addr cn_addr(uint32_t slot)
{
    return conf_addr((uint16_t)(20000u + slot));
}

static void cn_init(cnet *c, const ls_session_def *sd)
{
    memset(c, 0, sizeof *c);
    c->now = c->created = 1000000;
    ls_relay_def rd = ls_default_relay_def();
    c->relay = ls_relay_create(&rd, NULL);
    cr_assert_not_null(c->relay);
    c->sd = *sd;
    cr_assert_leq(sd->slots, CN_SLOTS);
    cr_assert_eq(ls_relay_session_create(c->relay, sd, c->now, &c->session), LS_OK);
    for (uint32_t k = 0; k < sd->slots; k++) {
        cr_assert_eq(ls_relay_session_credential(c->relay, c->session, k, &c->cred[k]), LS_OK);
        for (uint32_t j = 0; j < CN_SLOTS; j++) {
            c->g[k].gone_tick[j] = c->g[k].back_tick[j] = UINT32_MAX;
        }
    }
}

static void cn_add_peer(cnet *c, uint32_t k, ls_peer_mode mode, bool rejoin)
{
    ls_peer_def pd = ls_default_peer_def();
    cr_assert_eq(ls_peer_def_set_credential(&pd, &c->cred[k]), LS_OK);
    pd.relay = conf_addr(9000);
    pd.mode = mode;
    pd.rejoin = rejoin;
    pd.cb.user = &c->g[k];
    pd.cb.local_input = cn_input;
    pd.cb.advance = cn_advance;
    pd.cb.save = cn_save; // serves a rejoiner's snapshot (lockstep); rollback needs both
    pd.cb.load = cn_load;
    pd.cb.state_checksum = cn_state_checksum;
    pd.cb.on_event = cn_event;
    c->peer[k] = ls_peer_create(&pd, NULL);
    cr_assert_not_null(c->peer[k]);
    c->started[k] = true;
}

static void cn_free(cnet *c)
{
    for (uint32_t k = 0; k < CN_SLOTS; k++) {
        ls_peer_destroy(c->peer[k]);
    }
    ls_relay_destroy(c->relay);
}

static void cn_trace(cnet *c, uint32_t k)
{
    ls_peer_state st = ls_peer_state_get(c->peer[k]);
    if (c->ntrace[k] == 0 || c->trace[k][c->ntrace[k] - 1] != st) {
        cr_assert_lt(c->ntrace[k], 8u);
        c->trace[k][c->ntrace[k]++] = st;
    }
}

// Everything the relay has to send: to the started peers, or captured.
static void cn_relay_out(cnet *c)
{
    ls_net_datagram d;
    while (ls_relay_next_datagram(c->relay, &d)) {
        uint32_t k = d.to.port - 20000u;
        cr_assert_lt(k, c->sd.slots);
        if (c->peer[k]) {
            if (c->started[k]) {
                bool joining = ls_peer_state_get(c->peer[k]) == LS_PEER_JOINING;
                ls_peer_receive(c->peer[k], d.data, d.len, c->now);
                if (joining && ls_peer_state_get(c->peer[k]) == LS_PEER_RUNNING) {
                    c->welcome_at[k] = c->now;
                }
                cn_trace(c, k);
            }
        } else if (c->ncap < CN_CAP) {
            cr_assert(ls_net_verify(d.data, d.len, c->cred[k].key, LS_NET_TO_PEER));
            cr_assert_eq(ls_net_decode(d.data, d.len, &c->cap[c->ncap], NULL), LS_OK);
            c->cap_slot[c->ncap++] = k;
        }
    }
}

// Everything peer k has to send, to the relay (or lost while muted).
static void cn_peer_out(cnet *c, uint32_t k)
{
    ls_net_datagram d;
    ls_net_addr from = cn_addr(k);
    while (ls_peer_next_datagram(c->peer[k], &d)) {
        ls_net_msg m;
        cr_assert_eq(ls_net_decode(d.data, d.len, &m, NULL), LS_OK);
        bool seen = false;
        for (uint32_t i = 0; i < c->ntypes[k]; i++) {
            seen |= c->sent_types[k][i] == m.h.type;
        }
        if (!seen && c->ntypes[k] < 16) {
            c->sent_types[k][c->ntypes[k]++] = m.h.type;
        }
        if (m.h.type == LS_NET_DISCONNECT && c->byes[k]++ < 4) {
            c->bye[k][c->byes[k] - 1] = m;
        }
        if (c->watch) {
            c->watch(c, k, &m);
        }
        if (!c->muted[k] && !(c->lose_byes[k] && m.h.type == LS_NET_DISCONNECT)) {
            ls_relay_receive(c->relay, &from, d.data, d.len, c->now);
            c->last_to_relay[k] = c->now;
        }
    }
}

static void cn_step(cnet *c)
{
    c->now += 1000;
    ls_relay_poll(c->relay, c->now);
    cn_relay_out(c);
    for (uint32_t k = 0; k < c->sd.slots; k++) {
        if (c->peer[k] && c->started[k]) {
            ls_peer_poll(c->peer[k], c->now);
            cn_trace(c, k);
            cn_peer_out(c, k);
        }
    }
}

// Hand-driven slot k sends m (type, body set), sealed with its key; the relay's
// answers (to slot k, any hand-driven slot) are captured afresh.
static void cn_send(cnet *c, uint32_t k, uint8_t type, ls_net_msg *m)
{
    m->h.type = type;
    m->h.role = LS_NET_ROLE_PLAYER;
    m->h.session = c->session;
    m->h.slot = (uint8_t)k;
    m->h.seq = ++c->seq[k];
    uint8_t buf[LS_NET_MAX_DATAGRAM];
    size_t n = ls_net_encode(m, buf, sizeof buf);
    cr_assert_gt(n, 0u);
    cr_assert_eq(ls_net_seal(buf, n, c->cred[k].key, LS_NET_TO_RELAY), LS_OK);
    c->ncap = 0;
    ls_net_addr from = cn_addr(k);
    ls_relay_receive(c->relay, &from, buf, n, c->now);
    cn_relay_out(c);
}

// The captured message of that type the relay sent slot k (asserts there is one).
static ls_net_msg cn_reply(const cnet *c, uint32_t k, uint8_t type)
{
    for (uint32_t i = 0; i < c->ncap; i++) {
        if (c->cap_slot[i] == k && c->cap[i].h.type == type) {
            return c->cap[i];
        }
    }
    cr_assert_fail("the relay answered slot %u without a message of type %u", k, type);
    ls_net_msg none;
    memset(&none, 0, sizeof none);
    return none;
}

static bool cn_replied(const cnet *c, uint32_t k, uint8_t type)
{
    for (uint32_t i = 0; i < c->ncap; i++) {
        if (c->cap_slot[i] == k && c->cap[i].h.type == type) {
            return true;
        }
    }
    return false;
}

static ls_relay_peer_stats cn_stats(const cnet *c, uint32_t k)
{
    return ls_relay_peer_stats_get(c->relay, c->session, k);
}

static bool cn_finished(const cnet *c, uint32_t first, uint32_t count)
{
    for (uint32_t k = first; k < first + count; k++) {
        if (ls_peer_state_get(c->peer[k]) != LS_PEER_FINISHED) {
            return false;
        }
    }
    return true;
}

// The three goodbyes ls_peer_leave sent: DISCONNECT(slot k, tick, LEFT), new numbers.
static void cn_check_byes(const cnet *c, uint32_t k, uint32_t tick)
{
    cr_assert_eq(c->byes[k], 3u, "slot %u says goodbye three times (%u)", k, c->byes[k]);
    for (uint32_t i = 0; i < 3; i++) {
        const ls_net_msg *m = &c->bye[k][i];
        cr_assert_eq(m->u.disconnect.reason, LS_NET_LEFT);
        cr_assert_eq(m->u.disconnect.slot, k);
        cr_assert_eq(m->u.disconnect.tick, tick, "slot %u: DISCONNECT tick %u, want %u", k,
                     m->u.disconnect.tick, tick);
        cr_assert_eq(m->h.seq, c->bye[k][0].h.seq + i, "each a new sequence number");
    }
}

// SPEC §17.5, §17.7, §17.8: ls_peer_leave sends DISCONNECT(reason LEFT) three times
// with tick = D + (inputs the peer produced), one past its last own input; a peer that
// becomes FINISHED sends the same goodbye by itself, D + N - D = N after the last tick
// of an N-tick match, and ls_peer_leave then sends nothing. The relay disconnects the
// slot at its own input_next (the body's tick is not used), ends the session when tick
// N - 1 is final, sends a slot that reported every checksum nothing unasked, and calls
// the session idle once every slot is gone: by DISCONNECT, or timeout_ms of silence.
Test(conformance, peer_leave_carries_next_unproduced_tick)
{
    enum { TICKS = 120, D = 4 };
    ls_session_def sd = ls_default_session_def();
    sd.slots = 3;
    sd.ticks = TICKS;
    sd.delay = D;
    sd.spectators = 0;
    cnet c;
    cn_init(&c, &sd);
    for (uint32_t k = 0; k < 3; k++) {
        cn_add_peer(&c, k, LS_PEER_LOCKSTEP, false);
    }
    // 1. Mid-match: slot 2 loses everything it sends for 100 ms (its inputs run on
    // past what the relay holds), then leaves.
    for (int ms = 0; ms < 600; ms++) {
        c.muted[2] = ms >= 500;
        cn_step(&c);
    }
    uint32_t held = cn_stats(&c, 2).input_next;
    cr_assert_eq(c.byes[2], 0u);
    c.muted[2] = false;
    ls_peer_leave(c.peer[2]);
    cn_peer_out(&c, 2);
    c.started[2] = false;
    cr_assert_eq(ls_peer_state_get(c.peer[2]), LS_PEER_LEFT);
    cn_check_byes(&c, 2, D + c.g[2].inputs);
    cr_assert_gt(D + c.g[2].inputs, held, "it produced inputs the relay never got");
    ls_relay_peer_stats st = cn_stats(&c, 2);
    cr_assert(st.disconnected);
    cr_assert_eq(st.reason, LS_NET_LEFT);
    cr_assert_eq(st.disconnect_tick, held, "d is the relay's input_next, not the body's tick");
    // 2. The others play to the end; the session is done exactly when tick N - 1 is final.
    // Slot 1's goodbye is lost (step 4).
    c.lose_byes[1] = true;
    for (int ms = 0; ms < 20000 && !cn_finished(&c, 0, 2); ms++) {
        cn_step(&c);
        cr_assert_eq(ls_relay_session_done(c.relay, c.session),
                     ls_relay_session_final_ticks(c.relay, c.session) == TICKS);
    }
    cr_assert(cn_finished(&c, 0, 2));
    for (uint32_t k = 0; k < 2; k++) {
        cr_assert_eq(c.g[k].gone_tick[2], held, "peer %u saw slot 2 gone from the relay's d", k);
        cr_assert_eq(c.g[k].inputs, TICKS - D, "inputs of ticks D..N-1");
        cn_check_byes(&c, k, TICKS); // finishing says goodbye: tick D + (N - D) = N
    }
    cr_assert(ls_relay_session_done(c.relay, c.session));
    cr_assert_eq(ls_relay_stats_get(c.relay).desyncs, 0u);
    // 3. Slot 0's goodbye arrived: gone from N, reason LEFT. ls_peer_leave (as `lockstep
    // bot` calls it once FINISHED) sends nothing more and the peer stays FINISHED.
    st = cn_stats(&c, 0);
    cr_assert(st.disconnected);
    cr_assert_eq(st.reason, LS_NET_LEFT);
    cr_assert_eq(st.disconnect_tick, TICKS);
    ls_peer_leave(c.peer[0]);
    cn_peer_out(&c, 0);
    cr_assert_eq(c.byes[0], 3u);
    cr_assert_eq(ls_peer_state_get(c.peer[0]), LS_PEER_FINISHED);
    c.started[0] = false;
    cr_assert_not(ls_relay_session_idle(c.relay, c.session), "slot 1 is connected");
    // 4. Slot 1 finished but its goodbye was lost: the relay sends it nothing unasked (it
    // reported every checksum), so it is silent: gone timeout_ms later (TIMEOUT) at N.
    cr_assert_not(cn_stats(&c, 1).disconnected);
    uint64_t last = c.last_to_relay[1];
    while (c.now < last + (uint64_t)sd.timeout_ms * 1000) {
        cn_step(&c);
    }
    cr_assert_not(cn_stats(&c, 1).disconnected, "not at exactly timeout_ms of silence");
    cr_assert_not(ls_relay_session_idle(c.relay, c.session));
    cn_step(&c);
    st = cn_stats(&c, 1);
    cr_assert(st.disconnected);
    cr_assert_eq(st.reason, LS_NET_TIMEOUT);
    cr_assert_eq(st.disconnect_tick, TICKS);
    cr_assert(ls_relay_session_idle(c.relay, c.session), "done and every slot gone");
    cn_free(&c);
}

static void cn_watch_clock(cnet *c, uint32_t k, const ls_net_msg *m)
{
    uint32_t D = c->sd.delay;
    if (m->h.type == LS_NET_INPUT) {
        cr_assert_eq(m->u.input.slot, k);
        uint32_t end = m->u.input.first_tick + m->u.input.count;
        cr_assert_leq(end, D + c->g[k].inputs, "only produced inputs are sent");
        for (uint32_t t = m->u.input.first_tick; t < end && t < CN_TICKS; t++) {
            c->first_sent[k][t] = c->first_sent[k][t] ? c->first_sent[k][t] : c->now;
        }
        c->own_sent_next[k] = end > c->own_sent_next[k] ? end : c->own_sent_next[k];
    } else if (m->h.type == LS_NET_ACK) {
        uint32_t own = m->u.ack.input_next[k];
        cr_assert_eq(own, D + c->g[k].inputs, "slot %u ACK: own input_next %u, D + produced %u", k,
                     own, D + c->g[k].inputs);
        cr_assert_eq(own, c->own_sent_next[k], "one past its last own input sent");
        c->acks_checked++;
    }
}

// Floor((now - welcome) x tick_rate / 10^6): the peer's clock (its origin never moved).
static uint64_t cn_clock(const cnet *c, uint32_t k, uint64_t now)
{
    return (now - c->welcome_at[k]) * c->sd.tick_rate / 1000000u;
}

static void cn_clock_run(ls_peer_mode mode)
{
    enum { TICKS = 150, D = 4 };
    ls_session_def sd = ls_default_session_def();
    sd.slots = 2;
    sd.ticks = TICKS;
    sd.delay = D;
    sd.tick_rate = 60; // 16666.67 us a tick: the clock is not a whole number of steps
    sd.spectators = 0;
    cnet c;
    cn_init(&c, &sd);
    cn_add_peer(&c, 0, mode, false);
    cn_add_peer(&c, 1, mode, false);
    c.watch = cn_watch_clock;
    for (int ms = 0; ms < 20000 && !cn_finished(&c, 0, 2); ms++) {
        cn_step(&c);
    }
    cr_assert(cn_finished(&c, 0, 2));
    cr_assert_gt(c.acks_checked, 100u);
    for (uint32_t k = 0; k < 2; k++) {
        ls_peer_stats ps = ls_peer_stats_get(c.peer[k]);
        // Nothing moved or skipped the clock (time sync), so it alone decides.
        cr_assert_eq(ps.clock_shifts, 0u);
        cr_assert_eq(ps.time_sync_skips, 0u);
        cr_assert_eq(ps.waits, 0u);
        uint64_t w = c.welcome_at[k];
        cr_assert_gt(w, 0u);
        cr_assert_eq(c.first_sent[k][D], w, "the input of tick D goes out with the WELCOME's poll");
        for (uint32_t t = 0; D + t < TICKS; t++) {
            uint64_t s = c.first_sent[k][D + t];
            cr_assert_gt(s, 0u);
            cr_assert_geq(cn_clock(&c, k, s), t, "slot %u: input of tick D + %u before clock %u", k,
                          t, t);
            cr_assert(s == w || cn_clock(&c, k, s - 1000) < t,
                      "slot %u: input of tick D + %u at the first poll with clock >= %u", k, t, t);
        }
        cr_assert_eq(c.g[k].inputs, TICKS - D);
    }
    cr_assert_eq(ls_peer_last_checksum(c.peer[0]), ls_peer_last_checksum(c.peer[1]));
    cn_free(&c);
}

// SPEC §17.5, §24.6: a peer's clock starts at 0 when WELCOME arrives (origin = that
// instant) and reads floor((now - origin) x tick_rate / 10^6); the input of tick D + t
// is produced (and sent) at the first poll where the clock reads t or more, never
// before. In ACK, input_next[own slot] = D + (inputs produced) = one past the last
// own input produced (and sent).
Test(conformance, peer_clock_starts_at_welcome)
{
    cn_clock_run(LS_PEER_LOCKSTEP);
    cn_clock_run(LS_PEER_ROLLBACK);
}

// SPEC §17.8, §17.10: a slot not joined join_timeout_ms after the session's creation
// is disconnected (TIMEOUT, tick D) at the first poll after that. A late JOIN is
// answered as any JOIN (CHALLENGE, then WELCOME) but the slot stays disconnected: its
// INPUT is answered with its own DISCONNECT(D, TIMEOUT). A REJOIN (with or without a
// JOIN before it) within rejoin_ms of the disconnect brings it back at R =
// max(d, final ticks, every other slot's input_next); later, it is refused.
Test(conformance, late_player_joins_or_rejoins)
{
    enum { D = 3 };
    ls_session_def sd = ls_default_session_def();
    sd.slots = 5;
    sd.ticks = 0;
    sd.delay = D;
    sd.spectators = 0;
    sd.join_timeout_ms = 1000;
    sd.rejoin_ms = 2000;
    cnet c;
    cn_init(&c, &sd);
    cn_add_peer(&c, 0, LS_PEER_LOCKSTEP, false); // slots 2, 3 and 4 are driven by hand
    cn_add_peer(&c, 1, LS_PEER_LOCKSTEP, false);
    while (c.now < c.created + (uint64_t)sd.join_timeout_ms * 1000) {
        cn_step(&c);
    }
    for (uint32_t k = 2; k < 5; k++) {
        cr_assert_not(cn_stats(&c, k).disconnected, "not at exactly join_timeout_ms");
    }
    cn_step(&c);
    uint64_t gone_at = c.now;
    for (uint32_t k = 0; k < 5; k++) {
        ls_relay_peer_stats st = cn_stats(&c, k);
        cr_assert_eq(st.disconnected, k >= 2, "slot %u", k);
        if (k >= 2) {
            cr_assert_eq(st.reason, LS_NET_TIMEOUT);
            cr_assert_eq(st.disconnect_tick, D);
            cr_assert_eq(c.g[0].gone_tick[k], D, "the players are told: slot %u gone from D", k);
        }
    }
    for (int ms = 0; ms < 100; ms++) {
        cn_step(&c);
    }
    // Slot 2 JOINs: CHALLENGE, then WELCOME, yet it stays disconnected.
    ls_net_msg m;
    memset(&m, 0, sizeof m);
    cn_send(&c, 2, LS_NET_JOIN, &m);
    uint64_t cookie = cn_reply(&c, 2, LS_NET_CHALLENGE).u.cookie;
    memset(&m, 0, sizeof m);
    m.u.cookie = cookie;
    cn_send(&c, 2, LS_NET_JOIN, &m);
    ls_net_msg w = cn_reply(&c, 2, LS_NET_WELCOME);
    cr_assert_eq(w.u.welcome.slots, 5);
    cr_assert_eq(w.u.welcome.delay, D);
    ls_relay_peer_stats st = cn_stats(&c, 2);
    cr_assert(st.joined, "the address is bound");
    cr_assert(st.disconnected, "but the slot is still out");
    uint8_t in = 1;
    memset(&m, 0, sizeof m);
    m.u.input.first_tick = D;
    m.u.input.count = 1;
    m.u.input.input_size = 1;
    m.u.input.slot = 2;
    m.u.input.data = &in;
    cn_send(&c, 2, LS_NET_INPUT, &m);
    ls_net_msg out = cn_reply(&c, 2, LS_NET_DISCONNECT);
    cr_assert_eq(out.u.disconnect.slot, 2);
    cr_assert_eq(out.u.disconnect.tick, D);
    cr_assert_eq(out.u.disconnect.reason, LS_NET_TIMEOUT);
    cr_assert_eq(cn_stats(&c, 2).input_next, D, "its input is not taken");
    // It REJOINs (cookie handshake again): back from R.
    uint32_t R = D > ls_relay_session_final_ticks(c.relay, c.session)
                     ? D
                     : ls_relay_session_final_ticks(c.relay, c.session);
    for (uint32_t k = 0; k < 5; k++) {
        R = k != 2 && cn_stats(&c, k).input_next > R ? cn_stats(&c, k).input_next : R;
    }
    cr_assert_gt(R, D);
    memset(&m, 0, sizeof m);
    cn_send(&c, 2, LS_NET_REJOIN, &m);
    cookie = cn_reply(&c, 2, LS_NET_CHALLENGE).u.cookie;
    memset(&m, 0, sizeof m);
    m.u.cookie = cookie;
    cn_send(&c, 2, LS_NET_REJOIN, &m);
    out = cn_reply(&c, 2, LS_NET_DISCONNECT);
    cr_assert_eq(out.u.disconnect.reason, LS_NET_REJOINED);
    cr_assert_eq(out.u.disconnect.slot, 2);
    cr_assert_eq(out.u.disconnect.tick, R);
    st = cn_stats(&c, 2);
    cr_assert_not(st.disconnected);
    cr_assert_eq(st.rejoins, 1u);
    cr_assert_eq(st.rejoin_tick, R);
    // Slot 3 REJOINs without a JOIN, at the last instant of its window: accepted.
    while (c.now < gone_at + (uint64_t)sd.rejoin_ms * 1000) {
        cn_step(&c);
    }
    R = D > ls_relay_session_final_ticks(c.relay, c.session)
            ? D
            : ls_relay_session_final_ticks(c.relay, c.session);
    for (uint32_t k = 0; k < 5; k++) {
        R = k != 3 && cn_stats(&c, k).input_next > R ? cn_stats(&c, k).input_next : R;
    }
    memset(&m, 0, sizeof m);
    cn_send(&c, 3, LS_NET_REJOIN, &m);
    cookie = cn_reply(&c, 3, LS_NET_CHALLENGE).u.cookie;
    memset(&m, 0, sizeof m);
    m.u.cookie = cookie;
    cn_send(&c, 3, LS_NET_REJOIN, &m);
    out = cn_reply(&c, 3, LS_NET_DISCONNECT);
    cr_assert_eq(out.u.disconnect.reason, LS_NET_REJOINED);
    cr_assert_eq(out.u.disconnect.tick, R);
    cr_assert_eq(cn_stats(&c, 3).rejoins, 1u);
    // Slot 4, 1 ms later: refused, told it is out (no CHALLENGE), counted.
    cn_step(&c);
    memset(&m, 0, sizeof m);
    cn_send(&c, 4, LS_NET_REJOIN, &m);
    cr_assert_not(cn_replied(&c, 4, LS_NET_CHALLENGE));
    out = cn_reply(&c, 4, LS_NET_DISCONNECT);
    cr_assert_eq(out.u.disconnect.tick, D);
    cr_assert_eq(out.u.disconnect.reason, LS_NET_TIMEOUT);
    cr_assert_eq(ls_relay_stats_get(c.relay).rejoin_refused, 1u);
    cr_assert_eq(ls_relay_stats_get(c.relay).rejoins, 2u);
    cr_assert(cn_stats(&c, 4).disconnected);
    cn_free(&c);
}

// One match of three slots, slot 2 starting 1500 ms after the others (the join timeout
// is 1000 ms), with or without `rejoin`, played until the peers still in it finished.
static void cn_late_run(cnet *c, bool rejoin)
{
    enum { TICKS = 600, D = 3 };
    ls_session_def sd = ls_default_session_def();
    sd.slots = 3;
    sd.ticks = TICKS;
    sd.delay = D;
    sd.spectators = 0;
    sd.join_timeout_ms = 1000;
    cn_init(c, &sd);
    for (uint32_t k = 0; k < 3; k++) {
        cn_add_peer(c, k, LS_PEER_LOCKSTEP, rejoin);
    }
    uint32_t playing = rejoin ? 3 : 2;
    int ms = 0;
    for (; ms < 30000 && !cn_finished(c, 0, playing); ms++) {
        c->started[2] = ms >= 1500;
        cn_step(c);
    }
    cr_assert(cn_finished(c, 0, playing), "finished (%d ms)", ms);
    cr_assert_eq(c->g[2].gone_tick[2], D, "slot 2 is told it is out from D");
    cr_assert_eq(c->g[2].gone_reason[2], LS_NET_TIMEOUT);
    cr_assert_eq(ls_peer_last_checksum(c->peer[1]), ls_peer_last_checksum(c->peer[0]));
    cr_assert_eq(ls_relay_stats_get(c->relay).desyncs, 0u);
    cr_assert_eq(ls_relay_stats_get(c->relay).rejoin_refused, 0u);
}

// SPEC §17.10: what a library peer (and `lockstep bot`) does when it comes after the
// join timeout: JOIN, WELCOME (RUNNING: it sends its first INPUT), its own
// DISCONNECT(D, TIMEOUT); with `rejoin` it then REJOINs, loads a snapshot and plays to
// the end; without, it is LEFT and the others play on without it.
Test(conformance, a_late_peer_joins_then_rejoins)
{
    cnet c;
    cn_late_run(&c, true);
    static const ls_peer_state late[] = {LS_PEER_JOINING, LS_PEER_RUNNING, LS_PEER_REJOINING,
                                         LS_PEER_RUNNING, LS_PEER_FINISHED};
    cr_assert_eq(c.ntrace[2], 5u);
    cr_assert_arr_eq(c.trace[2], late, sizeof late);
    cr_assert_geq(c.ntypes[2], 3u);
    cr_assert_eq(c.sent_types[2][0], LS_NET_JOIN);
    cr_assert_eq(c.sent_types[2][1], LS_NET_INPUT, "its first INPUT goes out with the WELCOME");
    bool rejoin_after_input = false;
    for (uint32_t i = 2; i < c.ntypes[2]; i++) {
        rejoin_after_input |= c.sent_types[2][i] == LS_NET_REJOIN;
    }
    cr_assert(rejoin_after_input);
    ls_relay_peer_stats st = cn_stats(&c, 2);
    cr_assert_eq(st.rejoins, 1u);
    cr_assert_eq(c.g[2].back_tick[2], st.rejoin_tick);
    cr_assert_eq(c.g[0].back_tick[2], st.rejoin_tick);
    cr_assert_eq(ls_peer_last_checksum(c.peer[2]), ls_peer_last_checksum(c.peer[0]));
    cn_free(&c);

    cn_late_run(&c, false);
    static const ls_peer_state never[] = {LS_PEER_JOINING, LS_PEER_RUNNING, LS_PEER_LEFT};
    cr_assert_eq(c.ntrace[2], 3u);
    cr_assert_arr_eq(c.trace[2], never, sizeof never);
    for (uint32_t i = 0; i < c.ntypes[2]; i++) {
        cr_assert_neq(c.sent_types[2][i], LS_NET_REJOIN);
    }
    st = cn_stats(&c, 2);
    cr_assert(st.disconnected);
    cr_assert_eq(st.disconnect_tick, 3u);
    cr_assert_eq(st.rejoins, 0u);
    cn_free(&c);
}
