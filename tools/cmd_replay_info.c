// SPDX-License-Identifier: MIT
// `lockstep replay info|dump|diff|tamper`: inspect, compare and (for tests and
// demonstrations) rewrite recordings.
#include "replay_glue.h"

#include <stdlib.h>
#include <string.h>

const cli_command cmd_replay_info_def = {
    "replay info", "header, ticks, players, size, bytes/player/tick and keyframes of a recording",
    "FILE [--json]\n\n"
    "  --json   one JSON object with the same facts",
    cmd_replay_info, NULL};

const cli_command cmd_replay_dump_def = {
    "replay dump", "every tick's inputs and checksum, and the keyframes, of a recording",
    "FILE [--json] [--from T] [--to T]\n\n"
    "  --from T   first tick to print (default 0)\n"
    "  --to T     print ticks before T (default: all); T >= --from\n"
    "  --json     one JSON object: header fields, ticks[], keyframes[]\n\n"
    "A tick where the players' checksums disagreed (a relay's recording, format 2) also\n"
    "lists every player's claim (--json: \"claims\": {\"disputed\", \"players\": [...]}).",
    cmd_replay_dump, NULL};

const cli_command cmd_replay_diff_def = {
    "replay diff", "the first divergent tick (and bodies) between two recordings",
    "A B [--json] [--png FILE [--size WxH] [--camera VIEW] [--ahead N]]\n\n"
    "  --json          one JSON object: {\"different\", \"tick\", \"reason\", \"bodies\", ...}\n"
    "  --png FILE      the desync picture: A (left) and B (right), each re-simulated from\n"
    "                  its own inputs to the state after the first divergent tick, the\n"
    "                  bodies that differ in magenta with their 1-based ids, the others\n"
    "                  faded; the tick number top left (FILE.ppm: uncompressed PPM)\n"
    "  --size WxH      each half, 16..2048 pixels each (default 480x360)\n"
    "  --camera VIEW   auto (default), front, side, top or EX,EY,EZ,TX,TY,TZ[,FOV]\n"
    "                  (as lockstep render)\n"
    "  --ahead N       draw N ticks after the divergent one instead (0..100000)\n\n"
    "Ticks are 0-based indexes: tick T is the T+1-th step, and its state is the one\n"
    "after it. Nothing is drawn when the recordings agree.\n"
    "Exit status 3 when the recordings differ, 0 when their common ticks agree.",
    cmd_replay_diff, NULL};

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

static void info_json(const char *path, const ls_replay_reader *r)
{
    const ls_replay_header *h = ls_replay_reader_header(r);
    const ls_replay_info *in = ls_replay_reader_info(r);
    char engine[48];
    snprintf(engine, sizeof engine, "%u.%u.%u", h->engine_version[0], h->engine_version[1],
             h->engine_version[2]);
    json_out j;
    json_init(&j, stdout);
    json_object_begin(&j);
    json_key(&j, "file"), json_str(&j, path);
    json_key(&j, "file_size"), json_u64(&j, in->file_size);
    json_key(&j, "complete"), json_bool(&j, in->complete);
    json_key(&j, "end_reason");
    in->complete ? json_null(&j) : json_str(&j, in->end_reason);
    json_key(&j, "format"), json_u64(&j, h->format_version);
    json_key(&j, "engine"), json_str(&j, engine);
    json_key(&j, "fingerprint"), json_str(&j, h->fingerprint);
    json_key(&j, "fingerprint_matches"),
        json_bool(&j, !strcmp(h->fingerprint, ls_game_fingerprint()));
    json_key(&j, "recorded_by"), replay_cli_json_engine(&j, h->fingerprint);
    char refusal[LS_ERROR_MESSAGE_MAX];
    ls_replay_fingerprint_refusal(h->fingerprint, ls_game_fingerprint(), refusal, sizeof refusal);
    json_key(&j, "verifiable_here"), json_bool(&j, refusal[0] == '\0');
    json_key(&j, "refusal");
    refusal[0] ? json_str(&j, refusal) : json_null(&j);
    json_key(&j, "signed"), json_bool(&j, h->is_signed);
    if (h->is_signed) {
        char key[32];
        ls_replay_key_fingerprint(h->public_key, key);
        json_key(&j, "signer"), json_str(&j, key);
        json_key(&j, "signatures"), json_u64(&j, in->signatures);
        json_key(&j, "signed_ticks"), json_u64(&j, in->signed_ticks);
    }
    json_key(&j, "scene_size"), json_u64(&j, h->scene_size);
    json_key(&j, "scene_hash"), json_hex64(&j, h->scene_hash);
    json_key(&j, "players"), json_u64(&j, h->players);
    json_key(&j, "input_size"), json_u64(&j, h->input_size);
    json_key(&j, "seed"), json_u64(&j, h->seed);
    json_key(&j, "tick_rate"), json_u64(&j, h->tick_rate);
    json_key(&j, "ticks"), json_u64(&j, in->ticks);
    json_key(&j, "chunks"), json_u64(&j, in->chunks);
    json_key(&j, "keyframe_interval"), json_u64(&j, h->keyframe_interval);
    json_key(&j, "keyframe_ticks"), json_array_begin(&j);
    for (uint32_t i = 0; i < in->keyframes; i++) {
        json_u64(&j, ls_replay_reader_keyframe_info(r, i).tick);
    }
    json_array_end(&j);
    ls_replay_claims first;
    bool any = ls_replay_reader_claims_at(r, 0, &first) == LS_OK;
    json_key(&j, "claims"), json_object_begin(&j);
    json_key(&j, "ticks"), json_u64(&j, in->claim_ticks);
    json_key(&j, "disputed"), json_u64(&j, in->disputed_ticks);
    json_key(&j, "first_tick");
    any ? json_u64(&j, first.tick) : json_null(&j);
    json_object_end(&j);
    json_key(&j, "bytes"), json_object_begin(&j);
    json_key(&j, "inputs"), json_u64(&j, in->input_bytes);
    json_key(&j, "checksums"), json_u64(&j, in->checksum_bytes);
    json_key(&j, "keyframes"), json_u64(&j, in->keyframe_bytes);
    json_key(&j, "overhead"), json_u64(&j, in->overhead_bytes);
    json_key(&j, "claims"), json_u64(&j, in->claim_bytes);
    json_object_end(&j);
    json_key(&j, "per_player_tick"), json_object_begin(&j);
    json_key(&j, "inputs"), json_double(&j, per_player_tick(in->input_bytes, h, in->ticks), 4);
    json_key(&j, "inputs_checksums");
    json_double(&j, per_player_tick(in->input_bytes + in->checksum_bytes, h, in->ticks), 4);
    json_key(&j, "file"), json_double(&j, per_player_tick(in->file_size, h, in->ticks), 4);
    json_object_end(&j);
    json_object_end(&j);
    json_finish(&j);
}

int cmd_replay_info(int argc, char **argv)
{
    const cli_command *cmd = &cmd_replay_info_def;
    const char *path = NULL;
    bool json = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            json = true;
        } else if (argv[i][0] != '-' && !path) {
            path = argv[i];
        } else {
            return cli_unexpected(cmd, argv[i]);
        }
    }
    if (!path) {
        return cli_usage_error(cmd, "missing FILE");
    }
    ls_replay_reader *r = replay_cli_open(cmd, path);
    if (!r) {
        return CLI_EXIT_ERROR;
    }
    if (json) {
        info_json(path, r);
        ls_replay_reader_destroy(r);
        return CLI_EXIT_OK;
    }
    const ls_replay_header *h = ls_replay_reader_header(r);
    const ls_replay_info *in = ls_replay_reader_info(r);
    printf("file         %s: %llu bytes, %s\n", path, (unsigned long long)in->file_size,
           in->complete ? "complete (index present)" : "INCOMPLETE");
    if (!in->complete) {
        printf("ends         %s\n", in->end_reason);
    }
    printf("format       %u (engine %u.%u.%u)\n", h->format_version, h->engine_version[0],
           h->engine_version[1], h->engine_version[2]);
    printf("fingerprint  %s%s\n", h->fingerprint,
           strcmp(h->fingerprint, ls_game_fingerprint()) ? "  (NOT this build's)" : "");
    // Which engine recorded it (SPEC.md §16.8) and whether this one verifies it.
    char words[160], refusal[LS_ERROR_MESSAGE_MAX];
    ls_replay_fingerprint_describe(h->fingerprint, words, sizeof words);
    ls_replay_fingerprint_refusal(h->fingerprint, ls_game_fingerprint(), refusal, sizeof refusal);
    printf("recorded by  %s\n", words);
    printf("verify here  %s%s\n", refusal[0] ? "no: " : "yes (this build's fingerprint)", refusal);
    printf("scene        %zu bytes, xxh3 %016llx\n", h->scene_size,
           (unsigned long long)h->scene_hash);
    if (h->is_signed) {
        char key[32];
        ls_replay_key_fingerprint(h->public_key, key);
        printf("signed       by %s, %u SIGN chunks covering ticks 0..%u (check: replay verify "
               "--pubkey)\n",
               key, in->signatures, in->signed_ticks ? in->signed_ticks - 1 : 0);
    } else {
        printf("signed       no\n");
    }
    printf("players      %u x %u byte%s per tick, seed %llu\n", h->players, h->input_size,
           h->input_size == 1 ? "" : "s", (unsigned long long)h->seed);
    printf("ticks        %u at %u Hz (%.1f s) in %u chunks\n", in->ticks, h->tick_rate,
           (double)in->ticks / h->tick_rate, in->chunks);
    print_keyframes(r);
    if (h->format_version >= LS_REPLAY_FORMAT_VERSION_CLAIMS) {
        // What the players claimed where their checksums disagreed (SPEC.md §16.2 CLMS).
        ls_replay_claims first;
        if (ls_replay_reader_claims_at(r, 0, &first) == LS_OK) {
            printf("claims       %u ticks (%u disputed) from tick %u, %llu bytes (replay verify "
                   "names who was wrong)\n",
                   in->claim_ticks, in->disputed_ticks, first.tick,
                   (unsigned long long)in->claim_bytes);
        } else {
            printf("claims       none: the players' checksums always agreed\n");
        }
    }
    printf("bytes        inputs %llu, checksums %llu, keyframes %llu, header/framing %llu\n",
           (unsigned long long)in->input_bytes, (unsigned long long)in->checksum_bytes,
           (unsigned long long)in->keyframe_bytes, (unsigned long long)in->overhead_bytes);
    printf("per player per tick  inputs %.3f B, inputs+checksums %.3f B, whole file %.3f B\n",
           per_player_tick(in->input_bytes, h, in->ticks),
           per_player_tick(in->input_bytes + in->checksum_bytes, h, in->ticks),
           per_player_tick(in->file_size, h, in->ticks));
    ls_replay_reader_destroy(r);
    return CLI_EXIT_OK;
}

static void dump_text(const ls_replay_reader *r, ls_replay_cursor *c, uint32_t from, uint32_t to)
{
    const ls_replay_header *h = ls_replay_reader_header(r);
    size_t frame = (size_t)h->players * h->input_size;
    printf("# tick inputs(hex, %u players x %u bytes) checksum%s\n", h->players, h->input_size,
           ls_replay_reader_claims_count(r) ? " [claims disputed|majority PLAYER:CLAIM...]" : "");
    for (uint32_t t = from; t < to; t++) {
        const uint8_t *in;
        uint64_t sum;
        ls_replay_cursor_read(c, t, &in, &sum);
        printf("%u ", t);
        for (size_t i = 0; i < frame; i++) {
            printf("%s%02x", i && i % h->input_size == 0 ? "." : "", in[i]);
        }
        printf(" %016llx", (unsigned long long)sum);
        ls_replay_claims cl;
        if (ls_replay_reader_claims(r, t, &cl) == LS_OK) { // "claims disputed 0:X 1:Y"
            printf(" claims %s", cl.disputed ? "disputed" : "majority");
            for (uint32_t p = 0; p < LS_REPLAY_MAX_CLAIM_PLAYERS; p++) {
                if ((uint32_t)cl.reported >> p & 1u) {
                    printf(" %u:%016llx", p, (unsigned long long)cl.claims[p]);
                }
            }
        }
        printf("\n");
    }
    for (uint32_t i = 0; i < ls_replay_reader_info(r)->keyframes; i++) {
        ls_replay_keyframe_info k = ls_replay_reader_keyframe_info(r, i);
        printf("keyframe %u %u bytes at byte %llu\n", k.tick, k.size, (unsigned long long)k.offset);
    }
}

static void dump_json(const ls_replay_reader *r, ls_replay_cursor *c, uint32_t from, uint32_t to)
{
    const ls_replay_header *h = ls_replay_reader_header(r);
    const ls_replay_info *in = ls_replay_reader_info(r);
    size_t frame = (size_t)h->players * h->input_size;
    printf("{\"format\":%u,\"engine\":\"%u.%u.%u\",\"fingerprint\":", h->format_version,
           h->engine_version[0], h->engine_version[1], h->engine_version[2]);
    json_write_string(stdout, h->fingerprint);
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
        printf("\",\"checksum\":\"%016llx\"", (unsigned long long)sum);
        ls_replay_claims cl;
        if (ls_replay_reader_claims(r, t, &cl) == LS_OK) {
            printf(",\"claims\":{\"disputed\":%s,\"players\":[", cl.disputed ? "true" : "false");
            const char *sep = "";
            for (uint32_t p = 0; p < LS_REPLAY_MAX_CLAIM_PLAYERS; p++) {
                if ((uint32_t)cl.reported >> p & 1u) {
                    printf("%s{\"player\":%u,\"claim\":\"%016llx\"}", sep, p,
                           (unsigned long long)cl.claims[p]);
                    sep = ",";
                }
            }
            printf("]}");
        }
        printf("}");
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
    const cli_command *cmd = &cmd_replay_dump_def;
    const char *path = NULL;
    bool json = false;
    uint64_t from = 0, to = UINT32_MAX;
    bool have_to = false;
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        bool ok = true;
        if (strcmp(argv[i], "--json") == 0) {
            json = true;
        } else if (cli_option(cmd, argc, argv, &i, "--from", &v)) {
            ok = v && cli_parse_u64(cmd, "--from", v, 0, UINT32_MAX, &from);
        } else if (cli_option(cmd, argc, argv, &i, "--to", &v)) {
            ok = v && cli_parse_u64(cmd, "--to", v, 0, UINT32_MAX, &to), have_to = true;
        } else if (argv[i][0] != '-' && !path) {
            path = argv[i];
        } else {
            return cli_unexpected(cmd, argv[i]);
        }
        if (!ok) {
            return CLI_EXIT_USAGE;
        }
    }
    if (!path) {
        return cli_usage_error(cmd, "missing FILE");
    }
    if (have_to && to < from) {
        return cli_usage_error(cmd,
                               "--to %llu is before --from %llu (ticks [from, to) are printed)",
                               (unsigned long long)to, (unsigned long long)from);
    }
    ls_replay_reader *r = replay_cli_open(cmd, path);
    ls_replay_cursor *c = r ? ls_replay_cursor_create(r) : NULL;
    if (r && !c) {
        fprintf(stderr, "lockstep replay dump: out of memory\n");
    }
    if (c) {
        // The cursor seeks: only the chunks of [from, to) are decoded.
        uint32_t n = ls_replay_reader_ticks(r);
        uint32_t end = to < n ? (uint32_t)to : n, start = from < end ? (uint32_t)from : end;
        json ? dump_json(r, c, start, end) : dump_text(r, c, start, end);
    }
    ls_replay_cursor_destroy(c);
    ls_replay_reader_destroy(r);
    return c ? CLI_EXIT_OK : CLI_EXIT_ERROR;
}

// Both recordings' keyframes at the same tick at or after the divergence: load
// both into worlds and diff bodies (text on stdout, or JSON members into *j).
static void diff_bodies(const ls_replay_reader *a, const ls_replay_reader *b, uint32_t tick,
                        json_out *j)
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
    char note[LS_ERROR_MESSAGE_MAX + 64] = "";
    if (kb < 0 || !replay_glue_init(&g, ls_replay_reader_header(a), &err)) {
        snprintf(note, sizeof note, "no common keyframe after tick %u: no body diff", tick);
        if (j) {
            json_key(j, "keyframe_tick"), json_null(j);
            json_key(j, "bodies"), json_null(j);
            json_key(j, "note"), json_str(j, note);
        } else {
            printf("%s\n", note);
        }
        return;
    }
    ls_replay_keyframe_info ia = ls_replay_reader_keyframe_info(a, (uint32_t)ka);
    ls_replay_keyframe_info ib = ls_replay_reader_keyframe_info(b, (uint32_t)kb);
    uint8_t *ba = malloc(ia.size), *bb = malloc(ib.size);
    ls_world *wa = NULL, *wb = NULL;
    ls_error_set(&err, LS_ERR_NO_MEMORY, "out of memory");
    if (ba && bb && ls_replay_reader_keyframe(a, (uint32_t)ka, ba, ia.size) == LS_OK &&
        ls_replay_reader_keyframe(b, (uint32_t)kb, bb, ib.size) == LS_OK) {
        wa = replay_glue_load(&g, ba, ia.size, &err);
        wb = wa ? replay_glue_load(&g, bb, ib.size, &err) : NULL;
    }
    static const char *const labels[2] = {"A", "B"};
    bool same = wa && wb && ia.size == ib.size && memcmp(ba, bb, ia.size) == 0;
    if (j) {
        json_key(j, "keyframe_tick"), json_u64(j, ia.tick);
        json_key(j, "bodies");
        if (wa && wb) {
            replay_glue_diff_json(&g, wa, wb, labels, j);
        } else {
            json_null(j);
            snprintf(note, sizeof note, "cannot load the keyframes at tick %u: %s", ia.tick,
                     err.message);
            json_key(j, "note"), json_str(j, note);
        }
    } else if (same) {
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
    const cli_command *cmd = &cmd_replay_diff_def;
    const char *files[2] = {NULL, NULL};
    bool json = false;
    replay_picture_opts pic = {0};
    for (int i = 1; i < argc; i++) {
        const char **value = NULL;
        const char *v = NULL;
        if (cli_option(cmd, argc, argv, &i, "--png", &v)) {
            value = &pic.png;
        } else if (cli_option(cmd, argc, argv, &i, "--size", &v)) {
            value = &pic.size;
        } else if (cli_option(cmd, argc, argv, &i, "--camera", &v)) {
            value = &pic.camera;
        } else if (cli_option(cmd, argc, argv, &i, "--ahead", &v)) {
            value = &pic.ahead;
        }
        if (value) {
            if (!v) {
                return CLI_EXIT_USAGE;
            }
            *value = v;
        } else if (strcmp(argv[i], "--json") == 0) {
            json = true;
        } else if (argv[i][0] != '-' && !files[1]) {
            files[files[0] ? 1 : 0] = argv[i];
        } else {
            return cli_unexpected(cmd, argv[i]);
        }
    }
    if (!files[1]) {
        return cli_usage_error(cmd, "missing %s", files[0] ? "B" : "A and B");
    }
    if (!replay_picture_parse(cmd, &pic)) {
        return CLI_EXIT_USAGE;
    }
    ls_replay_reader *a = replay_cli_open(cmd, files[0]);
    ls_replay_reader *b = a ? replay_cli_open(cmd, files[1]) : NULL;
    if (!b) {
        ls_replay_reader_destroy(a);
        return CLI_EXIT_ERROR;
    }
    char why[LS_REPLAY_MESSAGE_MAX];
    int64_t t = ls_replay_first_difference(a, b, why, sizeof why);
    uint32_t ta = ls_replay_reader_ticks(a), tb = ls_replay_reader_ticks(b);
    uint32_t common = ta < tb ? ta : tb;
    // Bodies come from keyframes, which only this engine's recordings hold in
    // a form this build reads; recordings of two engines are named as such.
    const char *fa = ls_replay_reader_header(a)->fingerprint;
    const char *fb = ls_replay_reader_header(b)->fingerprint;
    bool same_engine = strcmp(fa, fb) == 0;
    bool bodies = t >= 0 && same_engine && strcmp(fa, ls_game_fingerprint()) == 0;
    json_out j;
    int status = CLI_EXIT_OK;
    if (json) {
        json_init(&j, stdout);
        json_object_begin(&j);
        json_key(&j, "a"), json_str(&j, files[0]);
        json_key(&j, "b"), json_str(&j, files[1]);
        json_key(&j, "ticks_a"), json_u64(&j, ta);
        json_key(&j, "ticks_b"), json_u64(&j, tb);
        json_key(&j, "different"), json_bool(&j, t >= 0);
        json_key(&j, "tick");
        t >= 0 ? json_u64(&j, (uint64_t)t) : json_null(&j);
        json_key(&j, "reason");
        why[0] ? json_str(&j, why) : json_null(&j);
        if (!same_engine) {
            json_key(&j, "engines"), json_object_begin(&j);
            json_key(&j, "a"), replay_cli_json_engine(&j, fa);
            json_key(&j, "b"), replay_cli_json_engine(&j, fb);
            json_object_end(&j);
        }
        if (bodies) {
            diff_bodies(a, b, (uint32_t)t, &j);
        }
        if (pic.png && bodies) {
            status = replay_picture_write("lockstep replay diff", files, (uint32_t)t, &pic, &j);
        }
        json_object_end(&j);
        json_finish(&j);
    } else {
        if (!same_engine) {
            char ea[160], eb[160];
            ls_replay_fingerprint_describe(fa, ea, sizeof ea);
            ls_replay_fingerprint_describe(fb, eb, sizeof eb);
            printf("note: A was recorded by %s, B by %s: their checksums come from different "
                   "engines\n",
                   ea, eb);
        }
        if (t < 0) {
            printf("no difference in %u common ticks%s%s\n", common, why[0] ? ": " : "", why);
        } else {
            printf("first difference at tick %lld: %s\n", (long long)t, why);
            if (bodies) {
                diff_bodies(a, b, (uint32_t)t, NULL);
            }
            if (pic.png && bodies) {
                status =
                    replay_picture_write("lockstep replay diff", files, (uint32_t)t, &pic, NULL);
            }
        }
        if (pic.png && t >= 0 && !bodies) {
            printf("no picture: only recordings of this engine can be re-simulated\n");
        }
    }
    ls_replay_reader_destroy(a);
    ls_replay_reader_destroy(b);
    if (status != CLI_EXIT_OK) {
        return status;
    }
    return t >= 0 ? CLI_EXIT_MISMATCH : CLI_EXIT_OK;
}
