// SPDX-License-Identifier: MIT
// libFuzzer harness for the replay reader: any bytes either open (possibly as
// an incomplete recording) or give an error naming what and where; an opened
// replay reads every tick, keyframe, checksum and claim without fault, and
// verifies (to its first failure) through a toy simulation.
#include "ls/replay.h"
#include "ls/checksum.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct toy {
    uint64_t h;
    size_t frame;
} toy;

static void *toy_load(void *user, const uint8_t *scene, size_t scene_size, const uint8_t *kf,
                      size_t kf_size, ls_error *err)
{
    toy *t = malloc(sizeof *t);
    if (!t || (kf && kf_size < 8)) {
        ls_error_set(err, LS_ERR_CORRUPT, "bad keyframe");
        free(t);
        return NULL;
    }
    t->frame = *(const size_t *)user;
    t->h = kf ? ls_get_u64le(kf) : ls_hash64(scene, scene_size);
    return t;
}

static uint64_t toy_advance(void *user, void *state, uint32_t tick, const uint8_t *inputs)
{
    (void)user, (void)tick;
    toy *t = state;
    t->h = ls_hash64(inputs, t->frame) ^ (t->h * 31u);
    return t->h;
}

static uint64_t toy_checksum(void *user, const void *state)
{
    (void)user;
    return ((const toy *)state)->h;
}

static void toy_destroy(void *user, void *state)
{
    (void)user;
    free(state);
}

static void read_everything(const ls_replay_reader *r)
{
    const ls_replay_header *h = ls_replay_reader_header(r);
    size_t frame = (size_t)h->players * h->input_size;
    ls_replay_cursor *c = ls_replay_cursor_create(r);
    uint64_t acc = 0;
    for (uint32_t t = 0; c && t < ls_replay_reader_ticks(r); t++) {
        const uint8_t *in;
        uint64_t sum;
        if (ls_replay_cursor_read(c, t, &in, &sum) != LS_OK ||
            sum != ls_replay_reader_checksum(r, t)) {
            abort(); // validated at open: every tick must read
        }
        acc += in[frame - 1];
    }
    ls_replay_cursor_destroy(c);
    // Claims (format version 2): in tick order, each found again by its tick, and
    // its recorded checksum is always a sound verdict.
    int64_t prev = -1;
    for (uint32_t i = 0; i < ls_replay_reader_claims_count(r); i++) {
        ls_replay_claims a, b;
        if (ls_replay_reader_claims_at(r, i, &a) != LS_OK || (int64_t)a.tick <= prev ||
            a.tick >= ls_replay_reader_ticks(r) || a.reported == 0 ||
            ls_replay_reader_claims(r, a.tick, &b) != LS_OK || memcmp(&a, &b, sizeof a) != 0 ||
            !ls_replay_reader_judge(r, a.tick, ls_replay_reader_checksum(r, a.tick), NULL)) {
            abort();
        }
        prev = a.tick;
    }
    for (uint32_t i = 0; i < ls_replay_reader_info(r)->keyframes; i++) {
        ls_replay_keyframe_info k = ls_replay_reader_keyframe_info(r, i);
        if (k.size > (1u << 20)) {
            continue; // zero runs expand tiny inputs to 16 MiB; keep executions fast
        }
        uint8_t *buf = malloc(k.size);
        if (!buf || ls_replay_reader_keyframe(r, i, buf, k.size) != LS_OK) {
            abort();
        }
        acc += buf[0];
        free(buf);
    }
    (void)acc;
}

// Recompute every check code the bytes appear to have, so mutations reach the
// decoders behind the checks (which a fuzzer could never forge).
static void fix_checks(uint8_t *d, size_t size)
{
    if (size < 56) {
        return;
    }
    uint64_t h = 72ull + ls_get_u32le(d + 48) + ls_get_u32le(d + 52);
    if (h > size) {
        return;
    }
    ls_put_u64le(d + h - 16, ls_hash64(d + h - 16 - ls_get_u32le(d + 52), ls_get_u32le(d + 52)));
    ls_put_u64le(d + h - 8, ls_hash64(d, (size_t)h - 8));
    for (uint64_t pos = h; pos + 32 <= size;) {
        uint64_t len = ls_get_u32le(d + pos + 4);
        if (pos + 32 + len > size) {
            break;
        }
        ls_put_u64le(d + pos + 16, ls_hash64(d + pos + 32, (size_t)len));
        ls_put_u64le(d + pos + 24, ls_hash64(d + pos, 24));
        pos += 32 + len;
    }
}

static void one_input(const uint8_t *data, size_t size)
{
    ls_error err;
    ls_replay_reader *r = ls_replay_reader_open_memory(data, size, &err);
    if (!r) {
        if (err.code == LS_OK || err.message[0] == '\0' || err.offset > (int64_t)size) {
            abort(); // every error names what and where
        }
        return;
    }
    if (!ls_replay_reader_info(r)->complete && ls_replay_reader_info(r)->end_reason[0] == '\0') {
        abort();
    }
    read_everything(r);
    const ls_replay_header *h = ls_replay_reader_header(r);
    size_t frame = (size_t)h->players * h->input_size;
    ls_replay_sim sim = {&frame, toy_load, toy_advance, toy_checksum, toy_destroy, NULL, NULL};
    ls_replay_verify_result res;
    for (uint32_t s = 0; s < ls_replay_segment_count(r); s++) {
        ls_replay_verify_segments(r, &sim, s, s + 1, false, &res);
        ls_replay_verify_result_release(&res);
    }
    char why[LS_REPLAY_MESSAGE_MAX];
    if (ls_replay_first_difference(r, r, why, sizeof why) != -1) {
        abort();
    }
    ls_replay_reader_destroy(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    one_input(data, size);
    uint8_t *copy = malloc(size ? size : 1);
    if (copy) {
        memcpy(copy, data, size);
        fix_checks(copy, size);
        one_input(copy, size);
        free(copy);
    }
    return 0;
}
