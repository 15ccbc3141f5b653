// SPDX-License-Identifier: MIT
// `lockstep replay info|dump|diff|tamper`: inspect, compare and (for tests and
// demonstrations) rewrite recordings.
#include "replay_glue.h"

#include <stdlib.h>
#include <string.h>

static double per_player_tick(uint64_t bytes, const ls_replay_header *h, uint32_t ticks)
{
    return ticks ? (double)bytes / ((double)ticks * h->players) : 0.0;
}

static void print_keyframes(const ls_replay_reader *r)
{
    const ls_replay_info *in = ls_replay_reader_info(r);
    printf("keyframes    %u", in->keyframes);
    for (uint32_t i = 0; i < in->keyframes && i < 24; i++) {
        printf("%s%u", i ? " " : " at ticks ", ls_replay_reader_keyframe_info(r, i).tick);
    }
    printf("%s\n", in->keyframes > 24 ? " ..." : "");
}

int cmd_replay_info(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: lockstep replay info FILE\n");
        return 2;
    }
    ls_replay_reader *r = replay_cli_open(argv[1]);
    if (!r) {
        return 1;
    }
    const ls_replay_header *h = ls_replay_reader_header(r);
    const ls_replay_info *in = ls_replay_reader_info(r);
    printf("file         %s: %llu bytes, %s\n", argv[1], (unsigned long long)in->file_size,
           in->complete ? "complete (index present)" : "INCOMPLETE");
    if (!in->complete) {
        printf("ends         %s\n", in->end_reason);
    }
    printf("format       %u (engine %u.%u.%u)\n", h->format_version, h->engine_version[0],
           h->engine_version[1], h->engine_version[2]);
    printf("fingerprint  %s%s\n", h->fingerprint,
           strcmp(h->fingerprint, ls_game_fingerprint()) ? "  (NOT this build's)" : "");
    printf("scene        %zu bytes, xxh3 %016llx\n", h->scene_size,
           (unsigned long long)h->scene_hash);
    printf("players      %u x %u byte%s per tick, seed %llu\n", h->players, h->input_size,
           h->input_size == 1 ? "" : "s", (unsigned long long)h->seed);
    printf("ticks        %u at %u Hz (%.1f s) in %u chunks\n", in->ticks, h->tick_rate,
           (double)in->ticks / h->tick_rate, in->chunks);
    print_keyframes(r);
    printf("bytes        inputs %llu, checksums %llu, keyframes %llu, header/framing %llu\n",
           (unsigned long long)in->input_bytes, (unsigned long long)in->checksum_bytes,
           (unsigned long long)in->keyframe_bytes, (unsigned long long)in->overhead_bytes);
    printf("per player per tick  inputs %.3f B, inputs+checksums %.3f B, whole file %.3f B\n",
           per_player_tick(in->input_bytes, h, in->ticks),
           per_player_tick(in->input_bytes + in->checksum_bytes, h, in->ticks),
           per_player_tick(in->file_size, h, in->ticks));
    ls_replay_reader_destroy(r);
    return 0;
}

static void dump_text(const ls_replay_reader *r, ls_replay_cursor *c, uint32_t from, uint32_t to)
{
    const ls_replay_header *h = ls_replay_reader_header(r);
    size_t frame = (size_t)h->players * h->input_size;
    printf("# tick inputs(hex, %u players x %u bytes) checksum\n", h->players, h->input_size);
    for (uint32_t t = from; t < to; t++) {
        const uint8_t *in;
        uint64_t sum;
        ls_replay_cursor_read(c, t, &in, &sum);
        printf("%u ", t);
        for (size_t i = 0; i < frame; i++) {
            printf("%s%02x", i && i % h->input_size == 0 ? "." : "", in[i]);
        }
        printf(" %016llx\n", (unsigned long long)sum);
    }
    for (uint32_t i = 0; i < ls_replay_reader_info(r)->keyframes; i++) {
        ls_replay_keyframe_info k = ls_replay_reader_keyframe_info(r, i);
        printf("keyframe %u %u bytes at byte %llu\n", k.tick, k.size, (unsigned long long)k.offset);
    }
}

static void json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') {
            putchar('\\');
        }
        putchar(*s);
    }
    putchar('"');
}

static void dump_json(const ls_replay_reader *r, ls_replay_cursor *c, uint32_t from, uint32_t to)
{
    const ls_replay_header *h = ls_replay_reader_header(r);
    const ls_replay_info *in = ls_replay_reader_info(r);
    size_t frame = (size_t)h->players * h->input_size;
    printf("{\"format\":%u,\"engine\":\"%u.%u.%u\",\"fingerprint\":", h->format_version,
           h->engine_version[0], h->engine_version[1], h->engine_version[2]);
    json_string(h->fingerprint);
    printf(",\"tick_rate\":%u,\"players\":%u,\"input_size\":%u,\"seed\":%llu,"
           "\"keyframe_interval\":%u,\"scene_hash\":\"%016llx\",\"complete\":%s,\"ticks\":[",
           h->tick_rate, h->players, h->input_size, (unsigned long long)h->seed,
           h->keyframe_interval, (unsigned long long)h->scene_hash,
           in->complete ? "true" : "false");
    for (uint32_t t = from; t < to; t++) {
        const uint8_t *bytes;
        uint64_t sum;
        ls_replay_cursor_read(c, t, &bytes, &sum);
        printf("%s\n{\"tick\":%u,\"inputs\":\"", t > from ? "," : "", t);
        for (size_t i = 0; i < frame; i++) {
            printf("%02x", bytes[i]);
        }
        printf("\",\"checksum\":\"%016llx\"}", (unsigned long long)sum);
    }
    printf("],\"keyframes\":[");
    for (uint32_t i = 0; i < in->keyframes; i++) {
        ls_replay_keyframe_info k = ls_replay_reader_keyframe_info(r, i);
        printf("%s{\"tick\":%u,\"size\":%u,\"offset\":%llu}", i ? "," : "", k.tick, k.size,
               (unsigned long long)k.offset);
    }
    printf("]}\n");
}

int cmd_replay_dump(int argc, char **argv)
{
    const char *path = NULL;
    bool json = false;
    uint64_t from = 0, to = UINT32_MAX;
    for (int i = 1; i < argc; i++) {
        bool ok = true;
        if (strcmp(argv[i], "--json") == 0) {
            json = true;
        } else if (strcmp(argv[i], "--from") == 0 && i + 1 < argc) {
            ok = replay_cli_number("--from", argv[++i], 0, UINT32_MAX, &from);
        } else if (strcmp(argv[i], "--to") == 0 && i + 1 < argc) {
            ok = replay_cli_number("--to", argv[++i], 0, UINT32_MAX, &to);
        } else if (argv[i][0] != '-' && !path) {
            path = argv[i];
        } else {
            ok = false;
        }
        if (!ok) {
            path = NULL;
            break;
        }
    }
    if (!path) {
        fprintf(stderr, "usage: lockstep replay dump FILE [--json] [--from T] [--to T]\n");
        return 2;
    }
    ls_replay_reader *r = replay_cli_open(path);
    ls_replay_cursor *c = r ? ls_replay_cursor_create(r) : NULL;
    if (c) {
        // The cursor seeks: only the chunks of [from, to) are decoded.
        uint32_t n = ls_replay_reader_ticks(r);
        uint32_t end = to < n ? (uint32_t)to : n, start = from < end ? (uint32_t)from : end;
        json ? dump_json(r, c, start, end) : dump_text(r, c, start, end);
    }
    ls_replay_cursor_destroy(c);
    ls_replay_reader_destroy(r);
    return c ? 0 : 1;
}

// Both recordings' keyframes at the same tick at or after the divergence: load
// both into worlds and diff bodies.
static void diff_bodies(const ls_replay_reader *a, const ls_replay_reader *b, uint32_t tick)
{
    int64_t ka = ls_replay_reader_keyframe_at_or_after(a, tick + 1), kb = -1;
    for (; ka >= 0 && (uint32_t)ka < ls_replay_reader_info(a)->keyframes; ka++) {
        uint32_t t = ls_replay_reader_keyframe_info(a, (uint32_t)ka).tick;
        kb = ls_replay_reader_keyframe_at_or_after(b, t);
        if (kb >= 0 && ls_replay_reader_keyframe_info(b, (uint32_t)kb).tick == t) {
            break;
        }
        kb = -1;
    }
    replay_glue g;
    ls_error err;
    if (kb < 0 || !replay_glue_init(&g, ls_replay_reader_header(a), &err)) {
        printf("no common keyframe after tick %u: no body diff\n", tick);
        return;
    }
    ls_replay_keyframe_info ia = ls_replay_reader_keyframe_info(a, (uint32_t)ka);
    ls_replay_keyframe_info ib = ls_replay_reader_keyframe_info(b, (uint32_t)kb);
    uint8_t *ba = malloc(ia.size), *bb = malloc(ib.size);
    ls_world *wa = NULL, *wb = NULL;
    if (ba && bb && ls_replay_reader_keyframe(a, (uint32_t)ka, ba, ia.size) == LS_OK &&
        ls_replay_reader_keyframe(b, (uint32_t)kb, bb, ib.size) == LS_OK) {
        wa = replay_glue_load(&g, ba, ia.size, &err);
        wb = wa ? replay_glue_load(&g, bb, ib.size, &err) : NULL;
    }
    static const char *const labels[2] = {"A", "B"};
    if (wa && wb && ia.size == ib.size && memcmp(ba, bb, ia.size) == 0) {
        printf("the keyframes at tick %u are identical in A and B\n", ia.tick);
    } else if (wa && wb) {
        printf("bodies at keyframe tick %u (A vs B):\n", ia.tick);
        if (replay_glue_diff(&g, wa, wb, labels, stdout) == 0) {
            printf("no body differs at tick %u\n", ia.tick);
        }
    } else {
        printf("cannot load the keyframes at tick %u: %s\n", ia.tick, err.message);
    }
    ls_world_destroy(wa);
    ls_world_destroy(wb);
    free(ba);
    free(bb);
    replay_glue_free(&g);
}

int cmd_replay_diff(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: lockstep replay diff A B\n");
        return 2;
    }
    ls_replay_reader *a = replay_cli_open(argv[1]);
    ls_replay_reader *b = a ? replay_cli_open(argv[2]) : NULL;
    if (!b) {
        ls_replay_reader_destroy(a);
        return 1;
    }
    char why[LS_REPLAY_MESSAGE_MAX];
    int64_t t = ls_replay_first_difference(a, b, why, sizeof why);
    int status = 0;
    if (t < 0) {
        printf("no difference in %u common ticks%s%s\n",
               ls_replay_reader_ticks(a) < ls_replay_reader_ticks(b) ? ls_replay_reader_ticks(a)
                                                                     : ls_replay_reader_ticks(b),
               why[0] ? ": " : "", why);
    } else {
        printf("first difference at tick %lld: %s\n", (long long)t, why);
        if (strcmp(ls_replay_reader_header(a)->fingerprint, ls_game_fingerprint()) == 0) {
            diff_bodies(a, b, (uint32_t)t);
        }
        status = 1;
    }
    ls_replay_reader_destroy(a);
    ls_replay_reader_destroy(b);
    return status;
}
