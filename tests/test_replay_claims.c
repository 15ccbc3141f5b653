// SPDX-License-Identifier: MIT
// Claims in replays (format version 2, SPEC.md §16.2 CLMS, §16.9): what each
// player said the checksum of a tick was when they disagreed. Round trips from
// the recorder to the reader (unsigned and signed), version 1 kept for every
// recording without claims, the recorder's and the reader's consistency rules,
// truncation and flipped bits, and verification naming who was wrong, whole and
// per segment, with a toy simulation.
#define _POSIX_C_SOURCE 200809L
#include "ls/checksum.h"
#include "ls/replay.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PLAYERS 4
#define TICKS   150
#define LIE_A   0x1111111111111111ull
#define LIE_B   0x2222222222222222ull

#define TOY_FRAME PLAYERS
#include "replay_toy.h"

static size_t toy_save(void *user, const void *state, uint8_t *buf, size_t size)
{
    (void)user;
    if (buf && size >= 8) {
        ls_put_u64le(buf, ((const toy *)state)->h);
    }
    return 8;
}

static const ls_replay_sim toy_sim = {NULL,        toy_load, toy_advance, toy_checksum,
                                      toy_destroy, NULL,     toy_save};

static const char scene_text[] = "toy scene with claims\n";

static void script_inputs(uint32_t t, uint8_t *out)
{
    for (uint32_t p = 0; p < PLAYERS; p++) {
        out[p] = (uint8_t)((((t + p * 11) / 16) * 2654435761u >> 24) & 0x0F);
    }
}

// One tick where the players disagreed: who reported, who claimed the truth
// xor LIE_A, who the truth xor LIE_B (the others claim the truth).
typedef struct claim_case {
    uint32_t tick;
    uint16_t reported, lie_a, lie_b;
} claim_case;

// Chunks of 30 ticks, keyframes every 50: claims on a chunk's first and last
// tick, on consecutive ticks, on the tick before a keyframe (whose recorded
// checksum is a lie), a 2-2 tie, and a wrong majority.
static const claim_case cases[] = {
    {0, 0xF, 0x3, 0},    // 2-2 tie: disputed, recorded = player 0's lie; 0 and 1 wrong
    {29, 0xF, 0x1, 0},   // a majority names player 0
    {30, 0x3, 0x1, 0},   // two players disagree: disputed, recorded = player 0's lie
    {31, 0x3, 0x1, 0},   // again
    {49, 0x3, 0x1, 0},   // the tick before keyframe 50: recorded is a lie
    {100, 0xF, 0xE, 0},  // a wrong majority: the truth is player 0's, 1..3 were wrong
    {121, 0x7, 0x1, 0x2} // three values, one each: disputed, recorded = player 0's lie
};
#define NCASES (sizeof cases / sizeof cases[0])

static uint64_t claim_of(const claim_case *c, uint32_t p, uint64_t truth)
{
    return c->lie_a >> p & 1u ? truth ^ LIE_A : c->lie_b >> p & 1u ? truth ^ LIE_B : truth;
}

// The relay's rule, written out again here (SPEC.md §17.7): the value most
// players claimed; on a tie, disputed, and the lowest player's among the tied.
static uint64_t relay_checksum(const uint64_t *v, uint32_t reported, bool *disputed)
{
    uint32_t count[PLAYERS] = {0}, best = 0;
    for (uint32_t p = 0; p < PLAYERS; p++) {
        for (uint32_t q = 0; q < PLAYERS; q++) {
            if ((reported >> p & 1u) && (reported >> q & 1u) && v[p] == v[q]) {
                count[p]++;
            }
        }
        best = count[p] > best ? count[p] : best;
    }
    uint32_t first = PLAYERS;
    *disputed = false;
    for (uint32_t p = 0; p < PLAYERS; p++) {
        if (count[p] == best && best > 0) {
            first = first == PLAYERS ? p : first;
            *disputed |= v[p] != v[first];
        }
    }
    return v[first];
}

typedef struct claims_opts {
    uint32_t ticks;
    bool signer;      // sign with a fake signer (SIGN chunks after every chunk)
    bool no_claims;   // def.claims set, but no tick has claims
    int64_t no_truth; // at this tick every claim is a lie (nobody backs the truth)
} claims_opts;

static bool fake_sign(void *user, uint64_t covered, uint8_t sig[LS_REPLAY_SIGNATURE_SIZE])
{
    (void)user;
    memset(sig, 0x5A, LS_REPLAY_SIGNATURE_SIZE);
    ls_put_u64le(sig, covered);
    return true;
}

static void fake_absorb(void *user, const uint8_t *bytes, size_t n)
{
    (void)user, (void)bytes, (void)n;
}

static uint8_t *slurp_and_remove(const char *path, size_t *size)
{
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

// Record the toy match with the claims of `cases`, as the relay hands them over:
// claims, then the tick with the relay's checksum; a keyframe (the truth) every 50.
static uint8_t *record_claims(const claims_opts *o, size_t *size)
{
    char path[128];
    snprintf(path, sizeof path, "/tmp/ls_test_claims_%ld.lsr", (long)getpid());
    ls_replay_recorder_def def = ls_default_replay_recorder_def();
    def.players = PLAYERS;
    def.keyframe_interval = 50;
    def.chunk_ticks = 30;
    def.fingerprint = "toy-v1";
    def.scene = (const uint8_t *)scene_text;
    def.scene_size = sizeof scene_text - 1;
    def.claims = true;
    ls_replay_signer signer = {NULL, {0}, fake_absorb, fake_sign};
    def.signer = o->signer ? &signer : NULL;
    ls_error err;
    ls_replay_recorder *rec = ls_replay_recorder_create(path, &def, &err);
    cr_assert_not_null(rec, "%s", err.message);
    uint64_t h = ls_hash64(scene_text, sizeof scene_text - 1);
    size_t next = 0;
    for (uint32_t t = 0; t < o->ticks; t++) {
        uint8_t in[PLAYERS];
        script_inputs(t, in);
        h = toy_step(h, in);
        uint64_t sum = h;
        if (!o->no_claims && next < NCASES && cases[next].tick == t) {
            const claim_case *c = &cases[next++];
            uint64_t v[PLAYERS];
            for (uint32_t p = 0; p < PLAYERS; p++) {
                v[p] = (int64_t)t == o->no_truth && (c->reported >> p & 1u) ? h ^ (LIE_A << p)
                       : c->reported >> p & 1u                              ? claim_of(c, p, h)
                                                                            : 0;
            }
            bool disputed;
            sum = relay_checksum(v, c->reported, &disputed);
            cr_assert_eq(ls_replay_recorder_claims(rec, t, c->reported, v, disputed), LS_OK, "%s",
                         ls_replay_recorder_error(rec)->message);
        }
        cr_assert_eq(ls_replay_recorder_append(rec, in, sum), LS_OK, "%s",
                     ls_replay_recorder_error(rec)->message);
        if (ls_replay_recorder_keyframe_due(rec)) {
            uint8_t kf[8];
            ls_put_u64le(kf, h);
            cr_assert_eq(ls_replay_recorder_add_keyframe(rec, kf, 8), LS_OK);
        }
    }
    cr_assert_eq(ls_replay_recorder_finish(rec), LS_OK, "%s",
                 ls_replay_recorder_error(rec)->message);
    ls_replay_recorder_destroy(rec);
    return slurp_and_remove(path, size);
}

static claims_opts default_opts(void)
{
    claims_opts o = {TICKS, false, false, -1};
    return o;
}

static ls_replay_reader *open_ok(const uint8_t *d, size_t n)
{
    ls_error err;
    ls_replay_reader *r = ls_replay_reader_open_memory(d, n, &err);
    cr_assert_not_null(r, "open failed: %s", err.message);
    return r;
}

// Offsets and tags of every chunk, walked with the SPEC layout.
static uint32_t chunks_of(const uint8_t *d, size_t n, uint64_t *offs, uint32_t *tags, uint32_t max)
{
    uint32_t k = 0;
    for (uint64_t pos = ls_get_u32le(d + 12); pos + 32 <= n && k < max;) {
        offs[k] = pos;
        tags[k++] = ls_get_u32le(d + pos);
        pos += 32 + ls_get_u32le(d + pos + 4);
    }
    return k;
}

#define TAG_TICK 0x4B434954u
#define TAG_KEYF 0x4659454Bu
#define TAG_INDX 0x58444E49u
#define TAG_SIGN 0x4E474953u
#define TAG_CLMS 0x534D4C43u

// The truth (the toy's checksum after every tick).
static uint64_t truth_of(uint32_t tick)
{
    uint64_t h = ls_hash64(scene_text, sizeof scene_text - 1);
    for (uint32_t t = 0; t <= tick; t++) {
        uint8_t in[PLAYERS];
        script_inputs(t, in);
        h = toy_step(h, in);
    }
    return h;
}

static void check_round_trip(bool signer)
{
    claims_opts o = default_opts();
    o.signer = signer;
    size_t n;
    uint8_t *d = record_claims(&o, &n);
    cr_assert_eq(ls_get_u16le(d + 8), 2, "a recording with claims is version 2");
    ls_replay_reader *r = open_ok(d, n);
    const ls_replay_info *in = ls_replay_reader_info(r);
    cr_assert_eq(ls_replay_reader_header(r)->format_version, 2);
    cr_assert(in->complete && in->indexed);
    cr_assert_eq(in->ticks, TICKS);
    cr_assert_eq(ls_replay_reader_claims_count(r), NCASES);
    cr_assert_eq(in->claim_ticks, NCASES);
    cr_assert_eq(in->disputed_ticks, 5);
    cr_assert_eq(in->input_bytes + in->checksum_bytes + in->keyframe_bytes + in->overhead_bytes +
                     in->claim_bytes,
                 n);
    for (uint32_t i = 0; i < NCASES; i++) {
        const claim_case *c = &cases[i];
        uint64_t truth = truth_of(c->tick), v[PLAYERS];
        ls_replay_claims a, b;
        cr_assert_eq(ls_replay_reader_claims_at(r, i, &a), LS_OK);
        cr_assert_eq(ls_replay_reader_claims(r, c->tick, &b), LS_OK);
        cr_assert_eq(memcmp(&a, &b, sizeof a), 0);
        cr_assert_eq(a.tick, c->tick);
        cr_assert_eq(a.reported, c->reported);
        for (uint32_t p = 0; p < LS_REPLAY_MAX_CLAIM_PLAYERS; p++) {
            uint64_t want = p < PLAYERS && (c->reported >> p & 1u) ? claim_of(c, p, truth) : 0;
            cr_assert_eq(a.claims[p], want, "tick %u player %u", c->tick, p);
            if (p < PLAYERS) {
                v[p] = want;
            }
        }
        bool disputed;
        cr_assert_eq(ls_replay_reader_checksum(r, c->tick),
                     relay_checksum(v, c->reported, &disputed));
        cr_assert_eq(a.disputed, disputed, "tick %u", c->tick);
        ls_replay_verdict verdict;
        cr_assert(ls_replay_reader_judge(r, c->tick, truth, &verdict));
        cr_assert_eq(verdict.wrong, c->lie_a | c->lie_b, "tick %u", c->tick);
        cr_assert(!ls_replay_reader_judge(r, c->tick, truth ^ 7, NULL));
    }
    ls_replay_claims none;
    cr_assert_eq(ls_replay_reader_claims(r, 1, &none), LS_ERR_NOT_FOUND);
    cr_assert_eq(ls_replay_reader_claims(r, TICKS, &none), LS_ERR_NOT_FOUND);
    cr_assert_eq(ls_replay_reader_claims_at(r, NCASES, &none), LS_ERR_NOT_FOUND);
    // Inputs and checksums of the other ticks read back as ever.
    ls_replay_cursor *cur = ls_replay_cursor_create(r);
    for (uint32_t t = 0; t < TICKS; t++) {
        uint8_t want[PLAYERS];
        const uint8_t *got;
        script_inputs(t, want);
        cr_assert_eq(ls_replay_cursor_read(cur, t, &got, NULL), LS_OK);
        cr_assert_eq(memcmp(got, want, PLAYERS), 0);
    }
    ls_replay_cursor_destroy(cur);
    // Each CLMS chunk sits right before the TICK chunk of its ticks, with its
    // first tick and count; a chunk without claims has none.
    uint64_t offs[64];
    uint32_t tags[64];
    uint32_t k = chunks_of(d, n, offs, tags, 64), nclms = 0;
    for (uint32_t i = 0; i < k; i++) {
        if (tags[i] == TAG_CLMS) {
            nclms++;
            cr_assert_eq(tags[i + 1], TAG_TICK, "chunk %u", i);
            cr_assert_eq(ls_get_u32le(d + offs[i] + 8), ls_get_u32le(d + offs[i + 1] + 8));
            cr_assert_eq(ls_get_u32le(d + offs[i] + 12), ls_get_u32le(d + offs[i + 1] + 12));
        }
        if (signer && (tags[i] == TAG_TICK || tags[i] == TAG_KEYF)) {
            cr_assert_eq(tags[i + 1], TAG_SIGN, "chunk %u", i);
        }
    }
    cr_assert_eq(nclms, 3, "ticks 0..29, 30..49 (a keyframe at 50) and 100..129");
    ls_replay_reader_destroy(r);
    free(d);
}

Test(replay_claims, claims_read_back_exactly_by_tick_and_in_order)
{
    check_round_trip(false);
}

Test(replay_claims, claims_read_back_from_a_signed_recording)
{
    check_round_trip(true);
}

// Only a recorder asked for claims writes version 2 (and then even without a
// claimed tick, with the index's claims table); everything else stays version 1.
Test(replay_claims, only_recordings_with_claims_are_version_2)
{
    claims_opts o = default_opts();
    o.no_claims = true;
    size_t n;
    uint8_t *d = record_claims(&o, &n);
    cr_assert_eq(ls_get_u16le(d + 8), 2);
    ls_replay_reader *r = open_ok(d, n);
    cr_assert(ls_replay_reader_info(r)->indexed);
    cr_assert_eq(ls_replay_reader_claims_count(r), 0);
    ls_replay_reader_destroy(r);
    free(d);

    char path[128];
    snprintf(path, sizeof path, "/tmp/ls_test_claims_v1_%ld.lsr", (long)getpid());
    ls_replay_recorder_def def = ls_default_replay_recorder_def();
    def.fingerprint = "toy-v1";
    ls_replay_recorder *rec = ls_replay_recorder_create(path, &def, NULL);
    cr_assert_not_null(rec);
    uint8_t in = 3;
    uint64_t v[1] = {5};
    cr_assert_eq(ls_replay_recorder_claims(rec, 0, 1, v, false), LS_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(ls_replay_recorder_error(rec)->message, "def.claims"), "%s",
              ls_replay_recorder_error(rec)->message);
    cr_assert_eq(ls_replay_recorder_append(rec, &in, 5), LS_OK);
    cr_assert_eq(ls_replay_recorder_finish(rec), LS_OK);
    ls_replay_recorder_destroy(rec);
    d = slurp_and_remove(path, &n);
    cr_assert_eq(ls_get_u16le(d + 8), 1);
    free(d);
}

// The recorder writes only what its reader accepts.
Test(replay_claims, the_recorder_refuses_claims_that_do_not_add_up)
{
    char path[128];
    snprintf(path, sizeof path, "/tmp/ls_test_claims_bad_%ld.lsr", (long)getpid());
    ls_replay_recorder_def def = ls_default_replay_recorder_def();
    def.fingerprint = "toy-v1";
    def.claims = true;
    def.players = 17;
    ls_error err;
    cr_assert_null(ls_replay_recorder_create(path, &def, &err));
    cr_assert(strstr(err.message, "16 players"), "%s", err.message);
    def.players = 3;
    ls_replay_recorder *rec = ls_replay_recorder_create(path, &def, &err);
    cr_assert_not_null(rec, "%s", err.message);
    const char *msg = ls_replay_recorder_error(rec)->message;
    uint8_t in[3] = {1, 2, 3};
    uint64_t v[3] = {7, 8, 8};
    cr_assert_eq(ls_replay_recorder_claims(rec, 1, 0x7, v, false), LS_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(msg, "the next tick is 0"), "%s", msg);
    cr_assert_eq(ls_replay_recorder_claims(rec, 0, 0, v, false), LS_ERR_INVALID_ARGUMENT);
    cr_assert_eq(ls_replay_recorder_claims(rec, 0, 0x9, v, false), LS_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(msg, "mask 0x0009"), "%s", msg);
    cr_assert_eq(ls_replay_recorder_claims(rec, 0, 0x7, v, true), LS_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(msg, "disputed is true"), "%s", msg);
    cr_assert_eq(ls_replay_recorder_claims(rec, 0, 0x3, v, false), LS_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(msg, "tied"), "%s", msg);
    cr_assert_eq(ls_replay_recorder_claims(rec, 0, 0x7, v, false), LS_OK);
    cr_assert_eq(ls_replay_recorder_claims(rec, 0, 0x7, v, false), LS_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(msg, "already"), "%s", msg);
    // The tick's checksum must be what the claims agree on (8, not 7): the tick
    // is refused and not appended, and a right one is then accepted.
    cr_assert_eq(ls_replay_recorder_append(rec, in, 7), LS_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(msg, "not what its claims agree on"), "%s", msg);
    cr_assert_eq(ls_replay_recorder_ticks(rec), 0);
    cr_assert_eq(ls_replay_recorder_append(rec, in, 8), LS_OK);
    // A disputed tick records one of the tied values.
    cr_assert_eq(ls_replay_recorder_claims(rec, 1, 0x3, v, true), LS_OK);
    cr_assert_eq(ls_replay_recorder_append(rec, in, 9), LS_ERR_INVALID_ARGUMENT);
    cr_assert_eq(ls_replay_recorder_append(rec, in, 8), LS_OK);
    cr_assert_eq(ls_replay_recorder_finish(rec), LS_OK);
    ls_replay_recorder_destroy(rec);
    ls_replay_reader *r = ls_replay_reader_open(path, &err);
    cr_assert_not_null(r, "%s", err.message);
    cr_assert_eq(ls_replay_reader_claims_count(r), 2);
    ls_replay_reader_destroy(r);
    remove(path);
}

static void free_results(ls_replay_verify_result *res, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        ls_replay_verify_result_release(&res[i]);
    }
}

// What --jobs N does: segment by segment; verdicts in segment order, up to the
// first failure.
static void verify_by_segments(const ls_replay_reader *r, ls_replay_verify_result *first,
                               ls_replay_verdict *verdicts, uint32_t *count)
{
    uint32_t segs = ls_replay_segment_count(r), ticks = 0;
    memset(first, 0, sizeof *first);
    *count = 0;
    for (uint32_t s = 0; s < segs; s++) {
        ls_replay_verify_result res;
        ls_replay_verify_segments(r, &toy_sim, s, s + 1, false, &res);
        for (uint32_t i = 0; i < res.verdict_count && first->failure == LS_REPLAY_FAIL_NONE; i++) {
            verdicts[(*count)++] = res.verdicts[i];
        }
        ticks += res.ticks_verified;
        if (res.failure != LS_REPLAY_FAIL_NONE && first->failure == LS_REPLAY_FAIL_NONE) {
            *first = res;
            first->verdicts = NULL;
        }
        free_results(&res, 1);
    }
    if (first->failure == LS_REPLAY_FAIL_NONE) {
        first->ticks_verified = ticks;
    }
}

// A disputed tick whose recorded checksum is the liar's is not a failure: the
// truth is another player's claim, and the verdict names the liar. So is a
// wrong majority. Whole and per segment (the keyframe after tick 49, whose
// recorded checksum is a lie, is still proven) give the same verdicts.
Test(replay_claims, verification_names_who_was_wrong_whole_and_per_segment)
{
    claims_opts o = default_opts();
    size_t n;
    uint8_t *d = record_claims(&o, &n);
    ls_replay_reader *r = open_ok(d, n);
    ls_replay_verify_result a;
    ls_replay_verify_segments(r, &toy_sim, 0, ls_replay_segment_count(r), false, &a);
    cr_assert_eq(a.code, LS_OK, "%s", a.message);
    cr_assert_eq(a.ticks_verified, TICKS);
    cr_assert_eq(a.verdict_count, NCASES);
    ls_replay_verify_result b;
    ls_replay_verdict by_seg[NCASES + 4];
    uint32_t nb;
    verify_by_segments(r, &b, by_seg, &nb);
    cr_assert_eq(b.failure, LS_REPLAY_FAIL_NONE, "%s", b.message);
    cr_assert_eq(b.ticks_verified, TICKS);
    cr_assert_eq(nb, NCASES);
    for (uint32_t i = 0; i < NCASES; i++) {
        const ls_replay_verdict *v = &a.verdicts[i];
        cr_assert_eq(v->tick, cases[i].tick);
        cr_assert_eq(v->computed, truth_of(v->tick));
        cr_assert_eq(v->recorded, ls_replay_reader_checksum(r, v->tick));
        cr_assert_eq(v->reported, cases[i].reported);
        cr_assert_eq(v->wrong, cases[i].lie_a | cases[i].lie_b, "tick %u", v->tick);
        cr_assert_eq(memcmp(v, &by_seg[i], sizeof *v), 0, "tick %u", v->tick);
    }
    cr_assert(a.verdicts[0].disputed && !a.verdicts[1].disputed && a.verdicts[2].disputed);
    cr_assert_neq(a.verdicts[2].recorded, a.verdicts[2].computed, "recorded: the liar's claim");
    ls_replay_verify_result_release(&a);
    ls_replay_verify_result_release(&a); // twice is harmless
    cr_assert_null(a.verdicts);
    ls_replay_reader_destroy(r);
    free(d);
}

// When the inputs give a checksum nobody claimed, the recording itself is
// wrong: a DESYNC as for any tick, with the verdicts before it.
Test(replay_claims, a_truth_nobody_claimed_is_a_desync)
{
    claims_opts o = default_opts();
    o.no_truth = 100;
    size_t n;
    uint8_t *d = record_claims(&o, &n);
    ls_replay_reader *r = open_ok(d, n);
    ls_replay_verify_result a, b;
    ls_replay_verify_segments(r, &toy_sim, 0, ls_replay_segment_count(r), false, &a);
    ls_replay_verdict by_seg[NCASES + 4];
    uint32_t nb;
    verify_by_segments(r, &b, by_seg, &nb);
    cr_assert_eq(a.failure, LS_REPLAY_FAIL_CHECKSUM, "%s", a.message);
    cr_assert_eq(a.tick, 100);
    cr_assert_eq(a.verdict_count, 5, "the claimed ticks before 100");
    cr_assert_eq(b.failure, LS_REPLAY_FAIL_CHECKSUM);
    cr_assert_eq(b.tick, 100);
    cr_assert_str_eq(a.message, b.message);
    cr_assert_eq(nb, 5);
    ls_replay_verify_result_release(&a);
    ls_replay_reader_destroy(r);
    free(d);
}

// Recompute the check codes after an edit (header and every chunk).
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

static void expect_corrupt(uint8_t *d, size_t n, int64_t offset, int64_t tick, const char *words)
{
    reseal(d, n);
    ls_error err;
    cr_assert_null(ls_replay_reader_open_memory(d, n, &err), "accepted: %s", words);
    cr_assert_eq(err.code, LS_ERR_CORRUPT, "%s", err.message);
    cr_assert_eq(err.tick, tick, "%s", err.message);
    if (offset >= 0) {
        cr_assert_eq(err.offset, offset, "%s", err.message);
        char at[32];
        snprintf(at, sizeof at, "byte %lld", (long long)offset);
        cr_assert(strstr(err.message, at), "'%s' names %s", err.message, at);
    }
    cr_assert(strstr(err.message, words), "'%s' should say '%s'", err.message, words);
}

// A CLMS chunk is version 2: in a version-1 file it is corrupt, named with its byte.
Test(replay_claims, a_clms_chunk_in_a_version_1_file_is_refused)
{
    claims_opts o = default_opts();
    size_t n;
    uint8_t *d = record_claims(&o, &n);
    uint64_t offs[64];
    uint32_t tags[64];
    chunks_of(d, n, offs, tags, 64);
    cr_assert_eq(tags[0], TAG_CLMS, "tick 0 has claims");
    ls_put_u16le(d + 8, 1);
    expect_corrupt(d, n, (int64_t)offs[0], 0, "claims need format version 2");
    free(d);
}

// Sealed (check codes recomputed) but inconsistent claims: each named with the
// chunk's byte and the tick.
Test(replay_claims, sealed_but_inconsistent_claims_are_named_with_their_tick)
{
    claims_opts o = default_opts();
    size_t n;
    uint8_t *d = record_claims(&o, &n);
    uint8_t *c = malloc(n);
    uint64_t offs[64];
    uint32_t tags[64];
    uint32_t k = chunks_of(d, n, offs, tags, 64);
    // Chunk 0: CLMS of ticks 0..29 (ticks 0 and 29), chunk 1 its TICK chunk.
    // Entry 0 at payload byte 4: tick 0, mask 0xF, flags 1 (a 2-2 tie), 4 claims.
    cr_assert_eq(tags[0], TAG_CLMS);
    const uint64_t e0 = offs[0] + 32 + 4, e1 = e0 + 8 + 32; // entry 1: tick 29
    cr_assert_eq(ls_get_u32le(d + e1), 29);

    memcpy(c, d, n); // the disputed flag dropped from a tie
    ls_put_u16le(c + e0 + 6, 0);
    expect_corrupt(c, n, (int64_t)offs[0], 0, "not marked disputed, but the most claimed");
    memcpy(c, d, n); // and added to a majority
    ls_put_u16le(c + e1 + 6, 1);
    expect_corrupt(c, n, (int64_t)offs[0], 29, "marked disputed, but one value has more");
    memcpy(c, d, n); // an unknown flag
    ls_put_u16le(c + e1 + 6, 2);
    expect_corrupt(c, n, (int64_t)offs[0], 29, "unknown flags");
    memcpy(c, d, n); // a player past the 4 (same number of bits)
    ls_put_u16le(c + e0 + 4, 0x1E);
    expect_corrupt(c, n, (int64_t)offs[0], 0, "past the players");
    memcpy(c, d, n); // a tick outside the chunk
    ls_put_u32le(c + e1, 30);
    expect_corrupt(c, n, (int64_t)offs[0], 30, "outside the chunk's ticks");
    memcpy(c, d, n); // ticks out of order
    ls_put_u32le(c + e0, 29);
    expect_corrupt(c, n, (int64_t)offs[0], 29, "not after the previous");
    memcpy(c, d, n); // more entries than are there
    ls_put_u32le(c + offs[0] + 32, 3);
    expect_corrupt(c, n, (int64_t)offs[0], 0, "ends past its");
    memcpy(c, d, n); // no entry at all
    ls_put_u32le(c + offs[0] + 32, 0);
    expect_corrupt(c, n, (int64_t)offs[0], 0, "1 claimed tick or more");
    memcpy(c, d, n); // claims of other ticks than the TICK chunk after it
    ls_put_u32le(c + offs[0] + 12, 31);
    expect_corrupt(c, n, (int64_t)offs[1], 0, "follows the CLMS chunk at byte");
    memcpy(c, d, n); // the recorded checksum of tick 29 is not the majority's
    uint32_t enc = ls_get_u32le(d + offs[1] + 32);
    uint64_t sum29 = offs[1] + 32 + 4 + enc + 8 * 29;
    ls_put_u64le(c + sum29, ls_get_u64le(d + sum29) ^ LIE_A);
    expect_corrupt(c, n, (int64_t)offs[1], 29, "is not what its claims agree on");
    memcpy(c, d, n); // the recorded checksum of the disputed tick 0 is no longer a tied claim
    ls_put_u64le(c + e0 + 8, ls_get_u64le(d + e0 + 8) ^ 4);
    ls_put_u64le(c + e0 + 16, ls_get_u64le(d + e0 + 16) ^ 4);
    expect_corrupt(c, n, (int64_t)offs[1], 0, "is not what its claims agree on");
    memcpy(c, d, n); // the index's claims table
    cr_assert_eq(tags[k - 1], TAG_INDX);
    uint32_t len = ls_get_u32le(d + offs[k - 1] + 4);
    c[offs[k - 1] + 32 + len - 4] ^= 1; // the last CLMS entry's count
    expect_corrupt(c, n, (int64_t)offs[k - 1], -1, "disagrees with the chunks");
    free(c);
    free(d);
}

// A file cut anywhere reads its complete chunks; claims whose TICK chunk is
// lost are not readable, and the end reason says so.
Test(replay_claims, truncation_keeps_the_claims_of_the_readable_ticks_only)
{
    claims_opts o = default_opts();
    size_t n;
    uint8_t *d = record_claims(&o, &n);
    uint64_t offs[64];
    uint32_t tags[64];
    uint32_t k = chunks_of(d, n, offs, tags, 64);
    uint32_t ticks = 0, claimed = 0;
    for (uint32_t i = 0; i < k; i++) {
        ls_replay_reader *r = open_ok(d, (size_t)offs[i]);
        const ls_replay_info *in = ls_replay_reader_info(r);
        cr_assert(!in->complete);
        cr_assert_eq(in->ticks, ticks, "cut at chunk %u", i);
        cr_assert_eq(ls_replay_reader_claims_count(r), claimed, "cut at chunk %u", i);
        bool after_clms = i > 0 && tags[i - 1] == TAG_CLMS;
        cr_assert_eq(in->end_offset, after_clms ? offs[i - 1] : offs[i], "cut at chunk %u", i);
        cr_assert_eq(strstr(in->end_reason, "CLMS chunk") != NULL, after_clms, "%s",
                     in->end_reason);
        ls_replay_reader_destroy(r);
        if (tags[i] == TAG_TICK) {
            uint32_t from = ticks;
            ticks += ls_get_u32le(d + offs[i] + 12);
            for (uint32_t c = 0; c < NCASES; c++) {
                claimed += cases[c].tick >= from && cases[c].tick < ticks;
            }
        }
    }
    for (size_t cut = ls_get_u32le(d + 12); cut < n; cut += 7) {
        ls_replay_reader *r = open_ok(d, cut);
        cr_assert_leq(ls_replay_reader_info(r)->end_offset, cut);
        ls_replay_claims c;
        for (uint32_t i = 0; i < ls_replay_reader_claims_count(r); i++) {
            cr_assert_eq(ls_replay_reader_claims_at(r, i, &c), LS_OK);
            cr_assert_lt(c.tick, ls_replay_reader_ticks(r));
        }
        ls_replay_reader_destroy(r);
    }
    free(d);
}

// A flipped bit anywhere is an error naming the chunk that holds it.
Test(replay_claims, a_flipped_bit_anywhere_is_detected_and_located)
{
    claims_opts o = default_opts();
    o.ticks = 60;
    size_t n;
    uint8_t *d = record_claims(&o, &n);
    uint64_t offs[64];
    uint32_t tags[64];
    uint32_t k = chunks_of(d, n, offs, tags, 64);
    uint32_t header = ls_get_u32le(d + 12);
    uint8_t *copy = malloc(n);
    for (size_t pos = 0; pos < n; pos++) {
        memcpy(copy, d, n);
        copy[pos] ^= (uint8_t)(1u << (pos % 8));
        ls_error err;
        ls_replay_reader *r = ls_replay_reader_open_memory(copy, n, &err);
        cr_assert_null(r, "flip at byte %zu was not detected", pos);
        cr_assert_neq(err.message[0], '\0');
        if (pos >= header && pos < n - 16) {
            uint32_t i = 0;
            while (i + 1 < k && offs[i + 1] <= pos) {
                i++;
            }
            cr_assert_eq(err.offset, offs[i], "flip at %zu: %s", pos, err.message);
        }
    }
    free(copy);
    free(d);
}
