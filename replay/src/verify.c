// SPDX-License-Identifier: MIT
// Replay verification: re-simulate through the caller's callbacks and compare
// every tick's checksum; check keyframes against the recorded checksums. A
// range of segments is one continuous re-simulation, so verifying segment by
// segment on several threads finds exactly the failures one thread finds.
#include "reader_impl.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROGRESS_STEP 256u

uint32_t ls_replay_segment_count(const ls_replay_reader *r)
{
    return 1 + r->nkeyframes;
}

uint32_t ls_replay_segment_start(const ls_replay_reader *r, uint32_t i)
{
    return i == 0 || i > r->nkeyframes ? 0 : r->keyframes[i - 1].tick;
}

static ls_result failed(ls_replay_verify_result *res, ls_replay_failure kind, ls_result code,
                        uint32_t tick, const char *fmt, ...)
{
    res->failure = kind;
    res->code = code;
    res->tick = tick;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(res->message, sizeof res->message, fmt, ap);
    va_end(ap);
    return code;
}

// The state at the start of segment `seg`: the scene, or the scene and a keyframe.
static void *load_segment(const ls_replay_reader *r, const ls_replay_sim *sim, uint32_t seg,
                          ls_replay_verify_result *res)
{
    const ls_replay_header *h = &r->header;
    ls_error why;
    ls_error_clear(&why);
    if (seg == 0) {
        void *s = sim->load(sim->user, h->scene, h->scene_size, NULL, 0, &why);
        if (!s) {
            failed(res, LS_REPLAY_FAIL_ERROR, LS_ERR_CORRUPT, 0,
                   "cannot load the embedded scene: %s", why.message);
        }
        return s;
    }
    const ls_replay_keyframe_entry *k = &r->keyframes[seg - 1];
    uint8_t *buf = malloc(k->size);
    void *s = NULL;
    if (!buf || ls_replay_reader_keyframe(r, seg - 1, buf, k->size) != LS_OK) {
        ls_error_set(&why, LS_ERR_CORRUPT, "%s", buf ? "undecodable" : "out of memory");
    } else {
        s = sim->load(sim->user, h->scene, h->scene_size, buf, k->size, &why);
    }
    free(buf);
    if (!s) {
        // The loader's own code: a keyframe of another snapshot version is
        // LS_ERR_INCOMPATIBLE ("written by Solver v2 ..."), not corrupt.
        failed(res, LS_REPLAY_FAIL_ERROR, why.code != LS_OK ? why.code : LS_ERR_CORRUPT, k->tick,
               "cannot load the keyframe at tick %u (byte %llu): %s", k->tick,
               (unsigned long long)k->offset, why.message);
    }
    return s;
}

// A keyframe at tick T is the state after ticks 0..T-1: its checksum must be
// the recorded checksum of tick T-1.
static bool keyframe_matches(const ls_replay_reader *r, const ls_replay_sim *sim, uint32_t seg,
                             const void *state, ls_replay_verify_result *res)
{
    uint32_t t = r->keyframes[seg - 1].tick;
    uint64_t rec = ls_replay_reader_checksum(r, t - 1), got = sim->checksum(sim->user, state);
    if (ls_replay_reader_judge(r, t - 1, got, NULL)) { // the recorded checksum, or a claim
        return true;
    }
    res->recorded = rec;
    res->computed = got;
    failed(res, LS_REPLAY_FAIL_KEYFRAME, LS_ERR_DESYNC, t,
           "keyframe at tick %u (byte %llu) has checksum %016llx, the recorded checksum of tick "
           "%u is %016llx",
           t, (unsigned long long)r->keyframes[seg - 1].offset, (unsigned long long)got, t - 1,
           (unsigned long long)rec);
    return false;
}

static bool check_keyframe_at(const ls_replay_reader *r, const ls_replay_sim *sim, uint32_t seg,
                              ls_replay_verify_result *res)
{
    void *k = load_segment(r, sim, seg, res);
    if (!k) {
        return false;
    }
    bool ok = keyframe_matches(r, sim, seg, k, res);
    sim->destroy(sim->user, k);
    return ok;
}

// The keyframe that starts segment `seg` must be the re-simulated state, byte
// for byte: a keyframe whose checksum matches but whose other bytes (contact
// impulses, free list, ...) were changed would make a verifier that starts
// from it disagree with one that re-simulates through it.
static bool keyframe_is_state(const ls_replay_reader *r, const ls_replay_sim *sim, uint32_t seg,
                              const void *state, ls_replay_verify_result *res)
{
    const ls_replay_keyframe_entry *k = &r->keyframes[seg - 1];
    size_t need = sim->save(sim->user, state, NULL, 0);
    uint8_t *kb = malloc(k->size ? k->size : 1), *sb = malloc(need ? need : 1);
    bool ok = false;
    if (!kb || !sb) {
        failed(res, LS_REPLAY_FAIL_ERROR, LS_ERR_NO_MEMORY, k->tick, "out of memory");
    } else if (ls_replay_reader_keyframe(r, seg - 1, kb, k->size) != LS_OK) {
        failed(res, LS_REPLAY_FAIL_ERROR, LS_ERR_CORRUPT, k->tick,
               "cannot decode the keyframe at tick %u (byte %llu)", k->tick,
               (unsigned long long)k->offset);
    } else if (sim->save(sim->user, state, sb, need) != need || need != k->size ||
               memcmp(kb, sb, need) != 0) {
        // A keyframe this build cannot even read (another engine's snapshot
        // version: "written by Solver v2 ...") says why, still as a keyframe
        // failure at its tick, so every job count gives the same verdict.
        ls_error why;
        ls_error_clear(&why);
        void *other =
            sim->load(sim->user, r->header.scene, r->header.scene_size, kb, k->size, &why);
        if (other) {
            sim->destroy(sim->user, other);
        }
        if (!other && why.code == LS_ERR_INCOMPATIBLE) {
            failed(res, LS_REPLAY_FAIL_KEYFRAME, LS_ERR_DESYNC, k->tick,
                   "keyframe at tick %u (byte %llu) is not the re-simulated state: %s", k->tick,
                   (unsigned long long)k->offset, why.message);
            free(kb);
            free(sb);
            return false;
        }
        size_t at = 0;
        while (at < need && at < k->size && kb[at] == sb[at]) {
            at++;
        }
        failed(res, LS_REPLAY_FAIL_KEYFRAME, LS_ERR_DESYNC, k->tick,
               "keyframe at tick %u (byte %llu) is not the re-simulated state: %u bytes vs %zu, "
               "first difference at state byte %zu",
               k->tick, (unsigned long long)k->offset, k->size, need, at);
    } else {
        ok = true;
    }
    free(kb);
    free(sb);
    return ok;
}

static void report_progress(const ls_replay_sim *sim, uint32_t *since)
{
    if (sim->progress && *since) {
        sim->progress(sim->user, *since);
    }
    *since = 0;
}

// Keep the verdict on a claimed tick. False when out of memory.
static bool add_verdict(ls_replay_verify_result *res, uint32_t *cap, const ls_replay_verdict *v)
{
    if (res->verdict_count == *cap) {
        uint32_t c = *cap ? *cap * 2 : 16;
        ls_replay_verdict *p = realloc(res->verdicts, c * sizeof *p);
        if (!p) {
            return false;
        }
        res->verdicts = p;
        *cap = c;
    }
    res->verdicts[res->verdict_count++] = *v;
    return true;
}

static ls_result run(const ls_replay_reader *r, const ls_replay_sim *sim, uint32_t first,
                     uint32_t end, void *state, ls_replay_cursor *cur, bool keep_state,
                     ls_replay_verify_result *res)
{
    uint32_t next_seg = first + 1, since = 0, count = ls_replay_segment_count(r);
    uint32_t claim = ls_replay_claims_from_(r, res->first_tick), cap = 0;
    for (uint32_t t = res->first_tick; t < res->end_tick; t++) {
        const uint8_t *in;
        uint64_t rec;
        if (ls_replay_cursor_read(cur, t, &in, &rec) != LS_OK) {
            return failed(res, LS_REPLAY_FAIL_ERROR, LS_ERR_CORRUPT, t, "cannot read tick %u", t);
        }
        uint64_t got = sim->advance(sim->user, state, t, in);
        // At a tick with claims the truth may be a claim other than the recorded one
        // (a disputed tick records one of the tied claims): the verdict names who
        // was wrong, and the recording is sound as long as somebody was right.
        bool claimed = claim < r->nclaims && r->claims[claim].tick == t;
        ls_replay_verdict v;
        if (claimed && ls_replay_reader_judge(r, t, got, &v)) {
            claim++;
            if (!add_verdict(res, &cap, &v)) {
                report_progress(sim, &since);
                return failed(res, LS_REPLAY_FAIL_ERROR, LS_ERR_NO_MEMORY, t, "out of memory");
            }
        } else if (got != rec) {
            res->recorded = rec;
            res->computed = got;
            res->state = keep_state ? state : NULL;
            report_progress(sim, &since);
            return failed(res, LS_REPLAY_FAIL_CHECKSUM, LS_ERR_DESYNC, t,
                          "DESYNC at tick %u: recorded %016llx computed %016llx", t,
                          (unsigned long long)rec, (unsigned long long)got);
        }
        res->ticks_verified++;
        if (++since == PROGRESS_STEP) {
            report_progress(sim, &since);
        }
        if (next_seg < count && ls_replay_segment_start(r, next_seg) == t + 1) {
            // Without save, the old weaker check: interior keyframes by checksum.
            bool ok = sim->save        ? keyframe_is_state(r, sim, next_seg, state, res)
                      : next_seg < end ? check_keyframe_at(r, sim, next_seg, res)
                                       : true;
            if (!ok) {
                report_progress(sim, &since);
                return res->code;
            }
            next_seg++;
        }
    }
    report_progress(sim, &since);
    return LS_OK;
}

void ls_replay_verify_result_release(ls_replay_verify_result *res)
{
    if (res) {
        free(res->verdicts);
        res->verdicts = NULL;
        res->verdict_count = 0;
    }
}

ls_result ls_replay_verify_segments(const ls_replay_reader *r, const ls_replay_sim *sim,
                                    uint32_t first, uint32_t end, bool keep_state,
                                    ls_replay_verify_result *res)
{
    memset(res, 0, sizeof *res);
    uint32_t count = ls_replay_segment_count(r);
    if (first >= end || end > count) {
        return failed(res, LS_REPLAY_FAIL_ERROR, LS_ERR_INVALID_ARGUMENT, 0,
                      "segments %u..%u outside 0..%u", first, end, count);
    }
    res->first_tick = ls_replay_segment_start(r, first);
    res->end_tick = end < count ? ls_replay_segment_start(r, end) : r->info.ticks;
    void *state = load_segment(r, sim, first, res);
    if (!state) {
        return res->code;
    }
    ls_replay_cursor *cur = ls_replay_cursor_create(r);
    ls_result code = LS_OK;
    if (!cur) {
        code =
            failed(res, LS_REPLAY_FAIL_ERROR, LS_ERR_NO_MEMORY, res->first_tick, "out of memory");
    } else if (first > 0 && !keyframe_matches(r, sim, first, state, res)) {
        code = res->code;
    } else {
        code = run(r, sim, first, end, state, cur, keep_state, res);
    }
    ls_replay_cursor_destroy(cur);
    if (res->state != state) {
        sim->destroy(sim->user, state);
    }
    if (code == LS_OK) {
        snprintf(res->message, sizeof res->message, "verified %u ticks", res->ticks_verified);
    }
    return code;
}

static int64_t header_difference(const ls_replay_header *a, const ls_replay_header *b, char *why,
                                 size_t why_size)
{
    if (a->players != b->players || a->input_size != b->input_size) {
        snprintf(why, why_size, "different input layouts: %u players x %u bytes vs %u x %u",
                 a->players, a->input_size, b->players, b->input_size);
        return 0;
    }
    if (a->scene_hash != b->scene_hash) {
        snprintf(why, why_size, "different scenes: hash %016llx vs %016llx",
                 (unsigned long long)a->scene_hash, (unsigned long long)b->scene_hash);
        return 0;
    }
    return -1;
}

static int64_t compare_ticks(const ls_replay_reader *a, const ls_replay_reader *b,
                             ls_replay_cursor *ca, ls_replay_cursor *cb, char *why, size_t why_size)
{
    uint32_t n = a->info.ticks < b->info.ticks ? a->info.ticks : b->info.ticks;
    uint32_t size = a->header.input_size;
    for (uint32_t t = 0; t < n; t++) {
        const uint8_t *ia, *ib;
        uint64_t sa, sb;
        if (ls_replay_cursor_read(ca, t, &ia, &sa) != LS_OK ||
            ls_replay_cursor_read(cb, t, &ib, &sb) != LS_OK) {
            snprintf(why, why_size, "cannot read tick %u", t);
            return t;
        }
        for (uint32_t p = 0; p < a->header.players; p++) {
            if (memcmp(ia + (size_t)p * size, ib + (size_t)p * size, size) != 0) {
                snprintf(why, why_size,
                         "inputs of player %u differ at tick %u (first byte %u vs %u)", p, t,
                         ia[(size_t)p * size], ib[(size_t)p * size]);
                return t;
            }
        }
        if (sa != sb) {
            snprintf(why, why_size, "checksums differ at tick %u: %016llx vs %016llx", t,
                     (unsigned long long)sa, (unsigned long long)sb);
            return t;
        }
    }
    if (a->info.ticks != b->info.ticks) {
        snprintf(why, why_size, "the common %u ticks agree; the recordings have %u and %u ticks", n,
                 a->info.ticks, b->info.ticks);
    }
    return -1;
}

int64_t ls_replay_first_difference(const ls_replay_reader *a, const ls_replay_reader *b, char *why,
                                   size_t why_size)
{
    snprintf(why, why_size, "%s", "");
    int64_t d = header_difference(&a->header, &b->header, why, why_size);
    if (d >= 0) {
        return d;
    }
    ls_replay_cursor *ca = ls_replay_cursor_create(a), *cb = ls_replay_cursor_create(b);
    if (ca && cb) {
        d = compare_ticks(a, b, ca, cb, why, why_size);
    } else {
        snprintf(why, why_size, "out of memory");
        d = 0;
    }
    ls_replay_cursor_destroy(ca);
    ls_replay_cursor_destroy(cb);
    return d;
}
