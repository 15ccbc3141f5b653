// SPDX-License-Identifier: MIT
// Replay format, recorder, reader and verifier with a toy simulation (no
// physics): exact round trips, compression, truncation at every chunk
// boundary, a flipped bit in every byte, versions, fingerprints, crash safety,
// and the exact desync tick in single-run and per-segment verification.
#define _POSIX_C_SOURCE 200809L
#include "ls/checksum.h"
#include "ls/replay.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PLAYERS 4
#define FRAME   PLAYERS

#define TOY_FRAME PLAYERS
#include "replay_toy.h"

static const ls_replay_sim toy_sim = {NULL,        toy_load, toy_advance, toy_checksum,
                                      toy_destroy, NULL,     NULL};

static const char scene_text[] = "toy scene: any opaque bytes\n";

// Held keys: each player changes its byte about every 32 ticks (deterministic).
static void script_inputs(uint32_t t, uint8_t *out)
{
    for (uint32_t p = 0; p < PLAYERS; p++) {
        uint32_t phase = (t + p * 11) / 32;
        out[p] = (uint8_t)((phase * 2654435761u >> 24) & 0x0F);
    }
}

static char *temp_path(const char *tag, char *buf, size_t size)
{
    snprintf(buf, size, "/tmp/ls_test_replay_%ld_%s.lsr", (long)getpid(), tag);
    return buf;
}

typedef struct rec_opts {
    uint32_t ticks, keyframe_interval, chunk_ticks;
    int64_t alter_tick;        // input byte of player 1 changed here (checksums kept), or -1
    int64_t bad_keyframe_tick; // keyframe bytes wrong here, or -1
    bool finish;
    const char *fingerprint;
} rec_opts;

static rec_opts default_opts(void)
{
    rec_opts o = {600, 100, 30, -1, -1, true, "toy-v1"};
    return o;
}

// Record the toy game; returns the file's bytes.
static uint8_t *record_toy(const rec_opts *o, size_t *size)
{
    char path[128];
    temp_path("rec", path, sizeof path);
    ls_replay_recorder_def def = ls_default_replay_recorder_def();
    def.players = PLAYERS;
    def.keyframe_interval = o->keyframe_interval;
    def.chunk_ticks = o->chunk_ticks;
    def.seed = 99;
    def.engine_version[0] = 0; // fixed, so the golden bytes do not follow the engine version
    def.engine_version[1] = 1;
    def.engine_version[2] = 0;
    def.fingerprint = o->fingerprint;
    def.scene = (const uint8_t *)scene_text;
    def.scene_size = sizeof scene_text - 1;
    ls_error err;
    ls_replay_recorder *rec = ls_replay_recorder_create(path, &def, &err);
    cr_assert_not_null(rec, "%s", err.message);
    uint64_t h = ls_hash64(scene_text, sizeof scene_text - 1);
    for (uint32_t t = 0; t < o->ticks; t++) {
        uint8_t in[FRAME];
        script_inputs(t, in);
        h = toy_step(h, in);
        if ((int64_t)t == o->alter_tick) {
            in[1] ^= 0x10;
        }
        cr_assert_eq(ls_replay_recorder_append(rec, in, h), LS_OK);
        if (ls_replay_recorder_keyframe_due(rec)) {
            uint8_t kf[8];
            ls_put_u64le(kf, (int64_t)(t + 1) == o->bad_keyframe_tick ? h ^ 1 : h);
            cr_assert_eq(ls_replay_recorder_add_keyframe(rec, kf, 8), LS_OK);
        }
    }
    if (o->finish) {
        cr_assert_eq(ls_replay_recorder_finish(rec), LS_OK, "%s",
                     ls_replay_recorder_error(rec)->message);
    }
    ls_replay_recorder_destroy(rec);
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f);
    fseek(f, 0, SEEK_END);
    *size = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *data = malloc(*size);
    cr_assert_eq(fread(data, 1, *size, f), *size);
    fclose(f);
    remove(path);
    return data;
}

static ls_replay_reader *open_ok(const uint8_t *d, size_t n)
{
    ls_error err;
    ls_replay_reader *r = ls_replay_reader_open_memory(d, n, &err);
    cr_assert_not_null(r, "open failed: %s", err.message);
    return r;
}

Test(replay, every_tick_and_keyframe_reads_back_exactly)
{
    rec_opts o = default_opts();
    size_t n;
    uint8_t *d = record_toy(&o, &n);
    ls_replay_reader *r = open_ok(d, n);
    const ls_replay_header *h = ls_replay_reader_header(r);
    const ls_replay_info *in = ls_replay_reader_info(r);
    cr_assert_eq(h->players, PLAYERS);
    cr_assert_eq(h->input_size, 1);
    cr_assert_eq(h->seed, 99);
    cr_assert_str_eq(h->fingerprint, "toy-v1");
    cr_assert_eq(h->scene_size, sizeof scene_text - 1);
    cr_assert_eq(memcmp(h->scene, scene_text, h->scene_size), 0);
    cr_assert(in->complete && in->indexed);
    cr_assert_eq(in->ticks, 600);
    cr_assert_eq(in->chunks, 24);   // 30-tick chunks; a keyframe ends a chunk: 4 per 100 ticks
    cr_assert_eq(in->keyframes, 6); // ticks 100, 200, ..., 600
    cr_assert_eq(in->file_size, n);
    cr_assert_eq(in->input_bytes + in->checksum_bytes + in->keyframe_bytes + in->overhead_bytes, n);
    ls_replay_cursor *c = ls_replay_cursor_create(r);
    uint64_t sum = ls_hash64(scene_text, sizeof scene_text - 1);
    for (uint32_t t = 0; t < 600; t++) {
        uint8_t want[FRAME];
        const uint8_t *got;
        uint64_t cs;
        script_inputs(t, want);
        sum = toy_step(sum, want);
        cr_assert_eq(ls_replay_cursor_read(c, t, &got, &cs), LS_OK);
        cr_assert_eq(memcmp(got, want, FRAME), 0, "inputs of tick %u", t);
        cr_assert_eq(cs, sum, "checksum of tick %u", t);
        cr_assert_eq(ls_replay_reader_checksum(r, t), sum);
    }
    cr_assert_eq(ls_replay_cursor_read(c, 600, NULL, NULL), LS_ERR_NOT_FOUND);
    for (uint32_t i = 0; i < 6; i++) {
        ls_replay_keyframe_info k = ls_replay_reader_keyframe_info(r, i);
        uint8_t buf[8];
        cr_assert_eq(k.tick, 100 * (i + 1));
        cr_assert_eq(ls_replay_reader_keyframe(r, i, buf, sizeof buf), LS_OK);
        cr_assert_eq(ls_get_u64le(buf), ls_replay_reader_checksum(r, k.tick - 1));
    }
    cr_assert_eq(ls_replay_reader_keyframe_at_or_before(r, 250), 1);
    cr_assert_eq(ls_replay_reader_keyframe_at_or_after(r, 250), 2);
    cr_assert_eq(ls_replay_reader_keyframe_at_or_before(r, 99), -1);
    ls_replay_cursor_destroy(c);
    ls_replay_reader_destroy(r);
    free(d);
}

Test(replay, random_access_reads_equal_sequential_reads)
{
    rec_opts o = default_opts();
    size_t n;
    uint8_t *d = record_toy(&o, &n);
    ls_replay_reader *r = open_ok(d, n);
    ls_replay_cursor *a = ls_replay_cursor_create(r), *b = ls_replay_cursor_create(r);
    uint32_t t = 17;
    for (int i = 0; i < 2000; i++) {
        t = (t * 1103515245u + 12345u) % 600u;
        const uint8_t *ia, *ib;
        uint64_t sa, sb;
        cr_assert_eq(ls_replay_cursor_read(a, t, &ia, &sa), LS_OK);
        uint8_t copy[FRAME];
        memcpy(copy, ia, FRAME);
        for (uint32_t u = 0; u <= t; u += 37) {
            ls_replay_cursor_read(b, u, NULL, NULL); // move b around
        }
        cr_assert_eq(ls_replay_cursor_read(b, t, &ib, &sb), LS_OK);
        cr_assert_eq(memcmp(copy, ib, FRAME), 0);
        cr_assert_eq(sa, sb);
    }
    ls_replay_cursor_destroy(a);
    ls_replay_cursor_destroy(b);
    ls_replay_reader_destroy(r);
    free(d);
}

// A 60 Hz match of held keys: 4 players, 3600 ticks.
Test(replay, held_keys_cost_under_a_byte_per_player_per_tick)
{
    rec_opts o = default_opts();
    o.ticks = 3600;
    o.chunk_ticks = 60;
    o.keyframe_interval = 0;
    size_t n;
    uint8_t *d = record_toy(&o, &n);
    ls_replay_reader *r = open_ok(d, n);
    const ls_replay_info *in = ls_replay_reader_info(r);
    double per = (double)in->input_bytes / (3600.0 * PLAYERS);
    cr_assert_leq(per, 1.0, "inputs cost %.3f bytes/player/tick", per);
    // Changes every ~8 ticks across 4 players; each costs ~3 bytes: ~0.1 B/player/tick.
    cr_assert_leq(per, 0.2, "inputs cost %.3f bytes/player/tick", per);
    cr_assert_eq(in->checksum_bytes, 8 * 3600);
    ls_replay_reader_destroy(r);
    free(d);
}

// Offsets of every chunk, walked with the SPEC layout (header size at byte 12,
// chunk payload length at +4, 32-byte chunk headers).
static uint32_t chunk_offsets(const uint8_t *d, size_t n, uint64_t *out, uint32_t max)
{
    uint32_t k = 0;
    for (uint64_t pos = ls_get_u32le(d + 12); pos + 32 <= n && k < max;) {
        out[k++] = pos;
        pos += 32 + ls_get_u32le(d + pos + 4);
    }
    return k;
}

Test(replay, truncation_at_every_chunk_boundary_reads_the_complete_chunks)
{
    rec_opts o = default_opts();
    size_t n;
    uint8_t *d = record_toy(&o, &n);
    uint64_t offs[64];
    uint32_t k = chunk_offsets(d, n, offs, 64);
    cr_assert_eq(k, 24 + 6 + 1); // tick chunks, keyframes, index
    uint32_t ticks_before = 0;
    for (uint32_t i = 0; i < k; i++) {
        for (int delta = 0; delta <= 1; delta++) { // at the boundary and one byte after
            ls_error err;
            ls_replay_reader *r =
                ls_replay_reader_open_memory(d, (size_t)offs[i] + (size_t)delta, &err);
            cr_assert_not_null(r, "cut at %llu: %s", (unsigned long long)offs[i], err.message);
            const ls_replay_info *in = ls_replay_reader_info(r);
            cr_assert(!in->complete);
            cr_assert_eq(in->ticks, ticks_before, "cut at chunk %u", i);
            cr_assert_eq(in->end_offset, offs[i]);
            char at[32];
            snprintf(at, sizeof at, "byte %llu", (unsigned long long)offs[i]);
            cr_assert(strstr(in->end_reason, at), "reason '%s' names %s", in->end_reason, at);
            ls_replay_reader_destroy(r);
        }
        uint32_t tag = ls_get_u32le(d + offs[i]);
        if (tag == 0x4B434954u) { // TICK
            ticks_before += ls_get_u32le(d + offs[i] + 12);
        }
    }
    free(d);
}

Test(replay, truncation_at_any_byte_never_fails_silently)
{
    rec_opts o = default_opts();
    o.ticks = 120;
    size_t n;
    uint8_t *d = record_toy(&o, &n);
    uint32_t header = ls_get_u32le(d + 12);
    for (size_t cut = 0; cut < n; cut++) {
        ls_error err;
        ls_replay_reader *r = ls_replay_reader_open_memory(d, cut, &err);
        if (cut < header) {
            cr_assert_null(r);
            cr_assert(err.code == LS_ERR_TRUNCATED || (cut < 8 && err.code == LS_ERR_CORRUPT),
                      "cut %zu: %s", cut, err.message);
            cr_assert_neq(err.message[0], '\0');
        } else {
            cr_assert_not_null(r, "cut %zu: %s", cut, err.message);
            cr_assert(!ls_replay_reader_info(r)->complete);
            cr_assert_leq(ls_replay_reader_info(r)->end_offset, cut);
            ls_replay_reader_destroy(r);
        }
    }
    free(d);
}

// Flip one bit in every byte of the file: each flip is refused with an error
// naming the section that holds the byte.
Test(replay, a_flipped_bit_anywhere_is_detected_and_located)
{
    rec_opts o = default_opts();
    o.ticks = 150;
    o.keyframe_interval = 50;
    size_t n;
    uint8_t *d = record_toy(&o, &n);
    uint64_t offs[64];
    uint32_t k = chunk_offsets(d, n, offs, 64);
    uint32_t header = ls_get_u32le(d + 12);
    uint8_t *copy = malloc(n);
    for (size_t pos = 0; pos < n; pos++) {
        memcpy(copy, d, n);
        copy[pos] ^= (uint8_t)(1u << (pos % 8));
        ls_error err;
        ls_replay_reader *r = ls_replay_reader_open_memory(copy, n, &err);
        cr_assert_null(r, "flip at byte %zu was not detected", pos);
        cr_assert_neq(err.code, LS_OK);
        cr_assert_neq(err.message[0], '\0');
        if (pos >= header && pos < n - 16) { // a chunk: the error names its start
            uint32_t i = 0;
            while (i + 1 < k && offs[i + 1] <= pos) {
                i++;
            }
            cr_assert_eq(err.offset, offs[i], "flip at %zu: error at %llu (%s), chunk at %llu", pos,
                         (unsigned long long)err.offset, err.message, (unsigned long long)offs[i]);
            char at[32];
            snprintf(at, sizeof at, "byte %llu", (unsigned long long)offs[i]);
            cr_assert(strstr(err.message, at), "'%s' names %s", err.message, at);
        } else if (pos >= n - 16) {
            cr_assert_eq(err.offset, n - 16, "trailer flip at %zu: %s", pos, err.message);
        } else {
            cr_assert_lt(err.offset, header, "header flip at %zu: %s", pos, err.message);
        }
    }
    free(copy);
    free(d);
}

Test(replay, wrong_version_and_bad_magic_are_named)
{
    rec_opts o = default_opts();
    size_t n;
    uint8_t *d = record_toy(&o, &n);
    ls_put_u16le(d + 8, 3); // this build reads versions 1 and 2
    ls_error err;
    cr_assert_null(ls_replay_reader_open_memory(d, n, &err));
    cr_assert_eq(err.code, LS_ERR_INCOMPATIBLE);
    cr_assert_eq(err.offset, 8);
    cr_assert(strstr(err.message, "version 3"), "%s", err.message);
    ls_put_u16le(d + 8, 0);
    cr_assert_null(ls_replay_reader_open_memory(d, n, &err));
    cr_assert_eq(err.code, LS_ERR_INCOMPATIBLE);
    ls_put_u16le(d + 8, 1);
    d[0] = 'X';
    cr_assert_null(ls_replay_reader_open_memory(d, n, &err));
    cr_assert_eq(err.code, LS_ERR_CORRUPT);
    cr_assert(strstr(err.message, "not a replay file"), "%s", err.message);
    cr_assert_null(ls_replay_reader_open_memory(d, 0, &err));
    cr_assert_null(ls_replay_reader_open("/nonexistent/x.lsr", &err));
    cr_assert_eq(err.code, LS_ERR_IO);
    free(d);
}

Test(replay, a_foreign_build_fingerprint_is_refused)
{
    rec_opts o = default_opts();
    o.fingerprint = "toy-v2";
    size_t n;
    uint8_t *d = record_toy(&o, &n);
    ls_replay_reader *r = open_ok(d, n);
    ls_error err;
    cr_assert_eq(ls_replay_reader_require_fingerprint(r, "toy-v2", &err), LS_OK);
    cr_assert_eq(ls_replay_reader_require_fingerprint(r, "toy-v1", &err), LS_ERR_INCOMPATIBLE);
    cr_assert_eq(err.offset, 56);
    cr_assert(strstr(err.message, "'toy-v2'") && strstr(err.message, "'toy-v1'"), "%s",
              err.message);
    // No release wrote either: the strings are the whole story.
    cr_assert_str_eq(err.message, "build fingerprint mismatch at byte 56: the file says 'toy-v2', "
                                  "this build is 'toy-v1'");
    ls_replay_reader_destroy(r);
    free(d);
}

// Every fingerprint a lockstep release wrote (SPEC.md §16.8), literally.
#define FP_BASE "fx=Q16.16;libfixmath=0~20220222,no-FIXMATH-defines;checksum=xxh3-64,SPEC-8+12;"
#define FP_V1   FP_BASE "snapshot=LSSN-1;game=push-20N-v1"
#define FP_V2   FP_BASE "snapshot=LSSN-3;physics=solver-v2;game=push-20N-v1"
#define FP_V3   FP_BASE "snapshot=LSSN-6;physics=solver-v3;game=push-20N-v1"
#define FP_V99  FP_BASE "snapshot=LSSN-99;physics=solver-v99;game=push-20N-v1"

static void assert_describes(const char *fingerprint, const char *words)
{
    char buf[160];
    size_t n = ls_replay_fingerprint_describe(fingerprint, buf, sizeof buf);
    cr_assert_str_eq(buf, words, "%s", fingerprint ? fingerprint : "(null)");
    cr_assert_eq(n, strlen(words));
}

Test(replay, a_fingerprint_names_the_release_that_wrote_it)
{
    assert_describes(FP_V1, "lockstep 0.1 (Solver v1: snapshot LSSN-1, no physics tag)");
    assert_describes(FP_V2, "lockstep 0.2 (Solver v2: snapshot LSSN-3, physics solver-v2)");
    assert_describes(FP_V3, "lockstep 0.3 (Solver v3: snapshot LSSN-6, physics solver-v3)");
    ls_replay_engine e = ls_replay_fingerprint_engine(FP_V2);
    cr_assert(e.known);
    cr_assert_str_eq(e.version, "0.2");
    cr_assert_str_eq(e.solver, "Solver v2");
    cr_assert_str_eq(e.snapshot, "LSSN-3");
    cr_assert_str_eq(e.physics, "solver-v2");
    // Unknown engines: named by the fields they have, else by the string.
    assert_describes(FP_V99, "an unknown engine (snapshot LSSN-99, physics solver-v99)");
    assert_describes(FP_BASE "snapshot=LSSN-6",
                     "an unknown engine (snapshot LSSN-6, no physics tag)");
    assert_describes("toy-v1", "an unknown engine (fingerprint 'toy-v1')");
    assert_describes(
        "0123456789012345678901234567890123456789-and-more",
        "an unknown engine (fingerprint '0123456789012345678901234567890123456789...')");
    assert_describes(NULL, "an unknown engine (fingerprint '')");
    e = ls_replay_fingerprint_engine(FP_V99);
    cr_assert_not(e.known);
    cr_assert_str_eq(e.version, "");
    cr_assert_str_eq(e.solver, "");
    cr_assert_str_eq(e.snapshot, "LSSN-99");
    cr_assert_str_eq(e.physics, "solver-v99");
    // A release's fingerprint with one field changed is not that release.
    cr_assert_not(ls_replay_fingerprint_engine(FP_V3 ";extra=1").known);
    cr_assert_not(ls_replay_fingerprint_engine("").known);
    // Like snprintf: the length it needs, whatever fits.
    char small[10];
    cr_assert_eq(ls_replay_fingerprint_describe(FP_V2, small, sizeof small), 60u);
    cr_assert_str_eq(small, "lockstep ");
    cr_assert_eq(ls_replay_fingerprint_describe(FP_V2, NULL, 0), 60u);
}

static void assert_refusal(const char *recorded, const char *expected, const char *words)
{
    char buf[LS_REPLAY_MESSAGE_MAX];
    size_t n = ls_replay_fingerprint_refusal(recorded, expected, buf, sizeof buf);
    cr_assert_str_eq(buf, words, "%s vs %s", recorded, expected);
    cr_assert_eq(n, strlen(words));
}

Test(replay, a_refusal_says_what_differs_and_which_release_verifies_it)
{
    assert_refusal(FP_V2, FP_V3,
                   "this is lockstep 0.3 (Solver v3: LSSN-6, solver-v3): its physics differ, so it "
                   "cannot be verified here; verify it with lockstep 0.2");
    assert_refusal(FP_V1, FP_V3,
                   "this is lockstep 0.3 (Solver v3: LSSN-6, solver-v3): its physics differ, so it "
                   "cannot be verified here; verify it with lockstep 0.1");
    assert_refusal(FP_V3, FP_V2,
                   "this is lockstep 0.2 (Solver v2: LSSN-3, solver-v2): its physics differ, so it "
                   "cannot be verified here; verify it with lockstep 0.3");
    assert_refusal(FP_V3, FP_V3, "");
    // An unknown engine gets no advice; the reason is the first field that differs.
    assert_refusal(FP_V99, FP_V3,
                   "this is lockstep 0.3 (Solver v3: LSSN-6, solver-v3): its physics differ, so it "
                   "cannot be verified here");
    assert_refusal(FP_BASE "snapshot=LSSN-7;physics=solver-v3;game=push-20N-v1", FP_V3,
                   "this is lockstep 0.3 (Solver v3: LSSN-6, solver-v3): its snapshot layout "
                   "differs, so it cannot be verified here");
    assert_refusal(FP_BASE "snapshot=LSSN-6;physics=solver-v3;game=push-30N-v1", FP_V3,
                   "this is lockstep 0.3 (Solver v3: LSSN-6, solver-v3): its game rules differ, so "
                   "it cannot be verified here");
    assert_refusal("fx=Q8.24;game=other", FP_V3,
                   "this is lockstep 0.3 (Solver v3: LSSN-6, solver-v3): its number format "
                   "differs, so it cannot be verified here");
    // A missing field differs from a present one once the recording has any.
    assert_refusal("snapshot=LSSN-6;physics=solver-v3", FP_V3,
                   "this is lockstep 0.3 (Solver v3: LSSN-6, solver-v3): its number format "
                   "differs, so it cannot be verified here");
    assert_refusal("toy-v1", FP_V3,
                   "this is lockstep 0.3 (Solver v3: LSSN-6, solver-v3): its build differs, so it "
                   "cannot be verified here");
    assert_refusal(FP_V2, "toy-v1",
                   "this is an unknown engine (fingerprint 'toy-v1'): its number format differs, "
                   "so it cannot be verified here; verify it with lockstep 0.2");
}

// A recording of a release, read by a build of another: the error names both
// engines, the release to verify it with, and the fingerprint's byte.
Test(replay, a_recording_of_another_release_is_refused_by_name)
{
    rec_opts o = default_opts();
    o.fingerprint = FP_V2;
    size_t n;
    uint8_t *d = record_toy(&o, &n);
    ls_replay_reader *r = open_ok(d, n);
    ls_error err;
    cr_assert_eq(ls_replay_reader_require_fingerprint(r, FP_V2, &err), LS_OK);
    cr_assert_eq(ls_replay_reader_require_fingerprint(r, FP_V3, &err), LS_ERR_INCOMPATIBLE);
    cr_assert_eq(err.offset, 56);
    cr_assert_str_eq(err.message,
                     "build fingerprint at byte 56: recorded by lockstep 0.2 (Solver v2: snapshot "
                     "LSSN-3, physics solver-v2); this is lockstep 0.3 (Solver v3: LSSN-6, "
                     "solver-v3): its physics differ, so it cannot be verified here; verify it "
                     "with lockstep 0.2");
    ls_replay_reader_destroy(r);
    free(d);
    o.fingerprint = FP_V99;
    d = record_toy(&o, &n);
    r = open_ok(d, n);
    cr_assert_eq(ls_replay_reader_require_fingerprint(r, FP_V3, &err), LS_ERR_INCOMPATIBLE);
    cr_assert_str_eq(err.message,
                     "build fingerprint at byte 56: recorded by an unknown engine (snapshot "
                     "LSSN-99, physics solver-v99); this is lockstep 0.3 (Solver v3: LSSN-6, "
                     "solver-v3): its physics differ, so it cannot be verified here");
    ls_replay_reader_destroy(r);
    free(d);
}

static ls_replay_verify_result verify_all(const ls_replay_reader *r)
{
    ls_replay_verify_result res;
    ls_replay_verify_segments(r, &toy_sim, 0, ls_replay_segment_count(r), false, &res);
    return res;
}

// What --jobs N does: each segment on its own; the first failure in tick order.
static ls_replay_verify_result verify_each_segment(const ls_replay_reader *r)
{
    ls_replay_verify_result res, first = {0};
    uint32_t ticks = 0;
    for (uint32_t s = 0; s < ls_replay_segment_count(r); s++) {
        ls_replay_verify_segments(r, &toy_sim, s, s + 1, false, &res);
        ticks += res.ticks_verified;
        if (res.failure != LS_REPLAY_FAIL_NONE && first.failure == LS_REPLAY_FAIL_NONE) {
            first = res;
        }
    }
    if (first.failure == LS_REPLAY_FAIL_NONE) {
        first.ticks_verified = ticks;
    }
    return first;
}

Test(replay, an_honest_recording_verifies_whole_and_per_segment)
{
    rec_opts o = default_opts();
    size_t n;
    uint8_t *d = record_toy(&o, &n);
    ls_replay_reader *r = open_ok(d, n);
    cr_assert_eq(ls_replay_segment_count(r), 7);
    ls_replay_verify_result a = verify_all(r), b = verify_each_segment(r);
    cr_assert_eq(a.code, LS_OK, "%s", a.message);
    cr_assert_eq(a.ticks_verified, 600);
    cr_assert_eq(b.failure, LS_REPLAY_FAIL_NONE, "%s", b.message);
    cr_assert_eq(b.ticks_verified, 600);
    cr_assert_str_eq(a.message, "verified 600 ticks");
    ls_replay_reader_destroy(r);
    free(d);
}

Test(replay, an_altered_input_byte_fails_at_exactly_its_tick)
{
    const int64_t ticks[] = {0, 1, 99, 100, 101, 377, 599};
    for (size_t i = 0; i < sizeof ticks / sizeof ticks[0]; i++) {
        rec_opts o = default_opts();
        o.alter_tick = ticks[i];
        size_t n;
        uint8_t *d = record_toy(&o, &n);
        ls_replay_reader *r = open_ok(d, n);
        ls_replay_verify_result a = verify_all(r), b = verify_each_segment(r);
        cr_assert_eq(a.failure, LS_REPLAY_FAIL_CHECKSUM, "tick %lld: %s", (long long)ticks[i],
                     a.message);
        cr_assert_eq(a.code, LS_ERR_DESYNC);
        cr_assert_eq(a.tick, (uint32_t)ticks[i]);
        cr_assert_eq(a.ticks_verified, (uint32_t)ticks[i]);
        cr_assert_eq(a.recorded, ls_replay_reader_checksum(r, a.tick));
        cr_assert_neq(a.computed, a.recorded);
        cr_assert_eq(b.failure, a.failure);
        cr_assert_eq(b.tick, a.tick);
        cr_assert_eq(b.computed, a.computed);
        cr_assert_str_eq(b.message, a.message);
        ls_replay_reader_destroy(r);
        free(d);
    }
}

Test(replay, a_wrong_keyframe_is_reported_at_its_tick_by_both_modes)
{
    rec_opts o = default_opts();
    o.bad_keyframe_tick = 300;
    size_t n;
    uint8_t *d = record_toy(&o, &n);
    ls_replay_reader *r = open_ok(d, n);
    ls_replay_verify_result a = verify_all(r), b = verify_each_segment(r);
    cr_assert_eq(a.failure, LS_REPLAY_FAIL_KEYFRAME, "%s", a.message);
    cr_assert_eq(a.tick, 300);
    cr_assert_eq(a.ticks_verified, 300);
    cr_assert_eq(b.failure, LS_REPLAY_FAIL_KEYFRAME);
    cr_assert_eq(b.tick, 300);
    cr_assert_str_eq(a.message, b.message);
    ls_replay_reader_destroy(r);
    free(d);
}

Test(replay, keep_state_hands_the_diverged_state_to_the_caller)
{
    rec_opts o = default_opts();
    o.alter_tick = 250;
    size_t n;
    uint8_t *d = record_toy(&o, &n);
    ls_replay_reader *r = open_ok(d, n);
    ls_replay_verify_result res;
    ls_replay_verify_segments(r, &toy_sim, 0, ls_replay_segment_count(r), true, &res);
    cr_assert_eq(res.tick, 250);
    cr_assert_not_null(res.state);
    cr_assert_eq(((toy *)res.state)->h, res.computed);
    toy_destroy(NULL, res.state);
    ls_replay_reader_destroy(r);
    free(d);
}

Test(replay, first_difference_between_two_recordings)
{
    rec_opts o = default_opts();
    size_t na, nb, nc;
    uint8_t *a = record_toy(&o, &na);
    o.alter_tick = 321;
    uint8_t *b = record_toy(&o, &nb);
    o.alter_tick = -1;
    o.ticks = 500;
    uint8_t *c = record_toy(&o, &nc);
    ls_replay_reader *ra = open_ok(a, na), *rb = open_ok(b, nb), *rc = open_ok(c, nc);
    char why[LS_REPLAY_MESSAGE_MAX];
    cr_assert_eq(ls_replay_first_difference(ra, ra, why, sizeof why), -1);
    cr_assert_str_eq(why, "");
    cr_assert_eq(ls_replay_first_difference(ra, rb, why, sizeof why), 321);
    cr_assert(strstr(why, "player 1"), "%s", why);
    cr_assert_eq(ls_replay_first_difference(ra, rc, why, sizeof why), -1);
    cr_assert(strstr(why, "600 and 500"), "%s", why);
    ls_replay_reader_destroy(ra);
    ls_replay_reader_destroy(rb);
    ls_replay_reader_destroy(rc);
    free(a);
    free(b);
    free(c);
}

// A recorder killed mid-match: everything written before the kill is readable.
Test(replay, an_unfinished_recording_is_readable_to_its_last_chunk)
{
    rec_opts o = default_opts();
    o.ticks = 95; // 3 full chunks of 30 + 5 ticks that destroy() writes
    o.finish = false;
    size_t n;
    uint8_t *d = record_toy(&o, &n);
    ls_replay_reader *r = open_ok(d, n);
    const ls_replay_info *in = ls_replay_reader_info(r);
    cr_assert(!in->complete && !in->indexed);
    cr_assert_eq(in->ticks, 95);
    cr_assert(strstr(in->end_reason, "not finished"), "%s", in->end_reason);
    cr_assert_eq(verify_all(r).code, LS_OK);
    ls_replay_reader_destroy(r);
    free(d);
}

Test(replay, flush_writes_complete_chunks_a_crash_cannot_lose)
{
    char path[128];
    temp_path("flush", path, sizeof path);
    ls_replay_recorder_def def = ls_default_replay_recorder_def();
    def.chunk_ticks = 1000;
    def.fingerprint = "toy-v1";
    ls_error err;
    ls_replay_recorder *rec = ls_replay_recorder_create(path, &def, &err);
    cr_assert_not_null(rec);
    uint8_t in = 3;
    for (uint32_t t = 0; t < 10; t++) {
        ls_replay_recorder_append(rec, &in, t);
    }
    cr_assert_eq(ls_replay_recorder_flush(rec), LS_OK);
    // Read the file while the recorder is still open (as after a kill -9 now).
    ls_error e;
    ls_replay_reader *r = ls_replay_reader_open(path, &e);
    cr_assert_not_null(r, "%s", e.message);
    cr_assert_eq(ls_replay_reader_ticks(r), 10);
    cr_assert_eq(ls_replay_reader_checksum(r, 9), 9);
    ls_replay_reader_destroy(r);
    cr_assert_eq(ls_replay_recorder_finish(rec), LS_OK);
    cr_assert_eq(ls_replay_recorder_append(rec, &in, 0), LS_ERR_INVALID_ARGUMENT);
    ls_replay_recorder_destroy(rec);
    r = ls_replay_reader_open(path, &e);
    cr_assert(ls_replay_reader_info(r)->complete);
    ls_replay_reader_destroy(r);
    remove(path);
}

Test(replay, recorder_refuses_bad_settings_with_a_message)
{
    ls_replay_recorder_def def = ls_default_replay_recorder_def();
    def.players = 0;
    ls_error err;
    cr_assert_null(ls_replay_recorder_create("/tmp/never.lsr", &def, &err));
    cr_assert_eq(err.code, LS_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(err.message, "players"), "%s", err.message);
    def = ls_default_replay_recorder_def();
    def.fingerprint = "bad\nfingerprint";
    cr_assert_null(ls_replay_recorder_create("/tmp/never.lsr", &def, &err));
    cr_assert(strstr(err.message, "fingerprint"), "%s", err.message);
    def = ls_default_replay_recorder_def();
    cr_assert_null(ls_replay_recorder_create("/nonexistent/dir/x.lsr", &def, &err));
    cr_assert_eq(err.code, LS_ERR_IO);
    cr_assert_str_eq(err.path, "/nonexistent/dir/x.lsr");
}

// The SPEC's worked example: header bytes and a golden hash of a whole file.
Test(replay, format_golden_bytes)
{
    rec_opts o = default_opts();
    o.ticks = 64;
    o.keyframe_interval = 32;
    o.chunk_ticks = 16;
    size_t n;
    uint8_t *d = record_toy(&o, &n);
    cr_assert_eq(memcmp(d, "LSRP\r\n\x1a\n\x01\x00\x00\x00", 12), 0);
    uint32_t header = 72 + 6 + (uint32_t)(sizeof scene_text - 1);
    cr_assert_eq(ls_get_u32le(d + 12), header);
    cr_assert_eq(memcmp(d + header, "TICK", 4), 0);
    cr_assert_eq(memcmp(d + n - 8, "LSRPEND\n", 8), 0);
    cr_assert_eq(n, 1049, "file size %zu", n);
    cr_assert_eq(ls_hash64(d, n), UINT64_C(0xb76c16acf7219e24), "file hash %016llx",
                 (unsigned long long)ls_hash64(d, n));
    free(d);
}

// Snapshot-like keyframes: a constant bulk with a few changing bytes and a
// size that varies; every one must decode exactly (delta chains included).
static void fake_snapshot(uint32_t k, uint8_t *out, size_t *size)
{
    *size = 3000 + (k % 3) * 40; // sizes change like a contact count does
    for (size_t i = 0; i < *size; i++) {
        out[i] = (uint8_t)(i % 7 == 0 ? 0 : i * 13);
    }
    for (uint32_t j = 0; j < 20; j++) {
        out[(j * 149 + k * 7) % *size] = (uint8_t)(k * 31 + j);
    }
}

Test(replay, delta_keyframes_decode_exactly_and_cost_less)
{
    char path[128];
    temp_path("delta", path, sizeof path);
    ls_replay_recorder_def def = ls_default_replay_recorder_def();
    def.fingerprint = "toy-v1";
    ls_error err;
    ls_replay_recorder *rec = ls_replay_recorder_create(path, &def, &err);
    cr_assert_not_null(rec);
    uint8_t snap[4096], in = 1;
    size_t size;
    for (uint32_t k = 0; k < 40; k++) {
        ls_replay_recorder_append(rec, &in, k);
        fake_snapshot(k, snap, &size);
        cr_assert_eq(ls_replay_recorder_add_keyframe(rec, snap, size), LS_OK);
    }
    cr_assert_eq(ls_replay_recorder_finish(rec), LS_OK);
    ls_replay_recorder_destroy(rec);
    ls_error e;
    ls_replay_reader *r = ls_replay_reader_open(path, &e);
    cr_assert_not_null(r, "%s", e.message);
    remove(path);
    const ls_replay_info *info = ls_replay_reader_info(r);
    cr_assert_eq(info->keyframes, 40);
    for (uint32_t k = 40; k-- > 0;) { // backwards: every chain decoded from its start
        uint8_t got[4096];
        fake_snapshot(k, snap, &size);
        cr_assert_eq(ls_replay_reader_keyframe_info(r, k).size, size);
        cr_assert_eq(ls_replay_reader_keyframe(r, k, got, sizeof got), LS_OK);
        cr_assert_eq(memcmp(got, snap, size), 0, "keyframe %u", k);
    }
    // 40 keyframes of ~3 KB: deltas of ~20 changed bytes each, a whole one every 16.
    cr_assert_lt(info->keyframe_bytes, 40 * 3000 / 4, "%llu bytes",
                 (unsigned long long)info->keyframe_bytes);
    ls_replay_reader_destroy(r);
}

// Recompute the check codes after an edit, so the reader sees a well-sealed
// file whose content is wrong (what a buggy writer would produce).
static void reseal(uint8_t *d, size_t n)
{
    uint32_t h = ls_get_u32le(d + 12);
    ls_put_u64le(d + h - 8, ls_hash64(d, h - 8));
    for (uint64_t pos = h; pos + 32 <= n;) {
        uint32_t len = ls_get_u32le(d + pos + 4);
        ls_put_u64le(d + pos + 16, ls_hash64(d + pos + 32, len));
        ls_put_u64le(d + pos + 24, ls_hash64(d + pos, 24));
        pos += 32 + len;
    }
}

static void expect_corrupt(uint8_t *d, size_t n, int64_t tick, const char *words)
{
    reseal(d, n);
    ls_error err;
    cr_assert_null(ls_replay_reader_open_memory(d, n, &err), "accepted: %s", words);
    cr_assert_eq(err.code, LS_ERR_CORRUPT, "%s", err.message);
    cr_assert_eq(err.tick, tick, "%s", err.message);
    cr_assert(strstr(err.message, words), "'%s' should say '%s'", err.message, words);
}

Test(replay, sealed_but_malformed_content_is_named_with_its_tick)
{
    rec_opts o = default_opts();
    size_t n;
    uint8_t *d = record_toy(&o, &n);
    uint8_t *c = malloc(n);
    uint64_t offs[64];
    uint32_t k = chunk_offsets(d, n, offs, 64);
    cr_assert_gt(k, 5);
    // A zero run token in the second chunk (ticks 30..59).
    memcpy(c, d, n);
    c[offs[1] + 32 + 4] = 0;
    expect_corrupt(c, n, 30, "inputs of tick 30");
    // The third chunk claims to start at tick 999.
    memcpy(c, d, n);
    ls_put_u32le(c + offs[2] + 8, 999);
    expect_corrupt(c, n, 999, "expected the next tick 60");
    // An unknown keyframe encoding (offs[4] is the KEYF after ticks 0..99).
    memcpy(c, d, n);
    cr_assert_eq(memcmp(c + offs[4], "KEYF", 4), 0);
    ls_put_u32le(c + offs[4] + 32 + 4, 7);
    expect_corrupt(c, n, 100, "encoding 7");
    // An index that does not match the chunks.
    memcpy(c, d, n);
    cr_assert_eq(memcmp(c + offs[k - 1], "INDX", 4), 0);
    c[offs[k - 1] + 32 + 8] ^= 1;
    expect_corrupt(c, n, -1, "disagrees with the chunks");
    free(c);
    free(d);
}

// Issue 18: fields that must agree are checked even after re-sealing the check
// codes; the INDX chunk's first tick must be 0.
Test(replay, an_index_with_another_first_tick_is_refused_after_resealing)
{
    rec_opts o = default_opts();
    size_t n;
    uint8_t *d = record_toy(&o, &n);
    uint64_t at = ls_get_u64le(d + n - 16); // the trailer names the INDX chunk
    cr_assert_eq(ls_get_u32le(d + at), 0x58444E49u);
    ls_put_u32le(d + at + 8, 5);
    ls_put_u64le(d + at + 24, ls_hash64(d + at, 24));
    ls_error err;
    cr_assert_null(ls_replay_reader_open_memory(d, n, &err));
    cr_assert_eq(err.code, LS_ERR_CORRUPT);
    cr_assert(strstr(err.message, "INDX") != NULL, "%s", err.message);
    free(d);
}
