// SPDX-License-Identifier: MIT
// The one place where the renderer and the browser viewer call scene loading,
// world creation and the replay reader: a scene or a replay, re-simulated per
// tick exactly as `lockstep replay verify` does (ls_game_tick: apply tick t's
// inputs, step, checksum), seeking through keyframes.
#include "ls/game.h"
#include "render.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const uint8_t replay_magic[8] = {0x4C, 0x53, 0x52, 0x50, 0x0D, 0x0A, 0x1A, 0x0A};

// A snapshot of a scene's world taken while stepping (scenes have no keyframes).
typedef struct rn_memo {
    uint32_t tick;
    uint8_t *bytes;
    size_t size;
} rn_memo;

#define RN_MEMO_MAX 4096u

static void memo_take(rn_source *s)
{
    if (s->memo_count && s->memo[s->memo_count - 1].tick >= s->tick) {
        return; // taken on an earlier pass
    }
    if (s->memo_count == RN_MEMO_MAX) {
        return;
    }
    rn_memo *m = realloc(s->memo, (s->memo_count + 1) * sizeof *m);
    if (!m) {
        return;
    }
    s->memo = m;
    size_t size = ls_world_snapshot_size(s->world);
    uint8_t *bytes = malloc(size);
    if (bytes && ls_world_snapshot_save(s->world, bytes, size) == size) {
        m[s->memo_count++] = (rn_memo){s->tick, bytes, size};
    } else {
        free(bytes);
    }
}

// Restore the latest snapshot at or before `tick` if it is ahead of the current
// state or the state is past `tick`. False when there is none to use.
static bool memo_seek(rn_source *s, uint32_t tick)
{
    const rn_memo *best = NULL;
    for (uint32_t i = 0; i < s->memo_count && s->memo[i].tick <= tick; i++) {
        best = &s->memo[i];
    }
    if (!best || (best->tick <= s->tick && s->tick <= tick)) {
        return false;
    }
    if (ls_world_snapshot_restore(s->world, best->bytes, best->size, NULL) != LS_OK) {
        return false;
    }
    s->tick = best->tick;
    s->last_computed = ls_world_checksum(s->world);
    return true;
}

static bool fail(const ls_error *e, const char *what, char *msg, size_t msg_size)
{
    char text[LS_ERROR_MESSAGE_MAX + 64];
    ls_error_format(e, text, sizeof text);
    snprintf(msg, msg_size, "%s%s", what, text);
    return false;
}

static bool instantiate(rn_source *s, char *msg, size_t msg_size)
{
    ls_error e;
    s->world = ls_scene_instantiate(&s->scene, &e);
    s->tick = 0;
    return s->world != NULL || fail(&e, "", msg, msg_size);
}

bool rn_source_open(rn_source *s, const uint8_t *data, size_t size, char *msg, size_t msg_size)
{
    return rn_source_open_in(s, data, size, NULL, msg, msg_size);
}

bool rn_source_open_in(rn_source *s, const uint8_t *data, size_t size, const char *dir, char *msg,
                       size_t msg_size)
{
    memset(s, 0, sizeof *s);
    if (size >= sizeof replay_magic && memcmp(data, replay_magic, sizeof replay_magic) == 0) {
        ls_error err;
        s->reader = ls_replay_reader_open_memory(data, size, &err);
        if (!s->reader) {
            return fail(&err, "replay: ", msg, msg_size);
        }
        if (ls_replay_reader_require_fingerprint(s->reader, ls_game_fingerprint(), &err) != LS_OK) {
            rn_source_close(s);
            return fail(&err, "replay: ", msg, msg_size);
        }
        const ls_replay_header *h = ls_replay_reader_header(s->reader);
        if (ls_scene_parse((const char *)h->scene, h->scene_size, &s->scene, &err) != LS_OK) {
            ls_replay_reader_destroy(s->reader);
            s->reader = NULL;
            return fail(&err, "embedded scene:", msg, msg_size);
        }
        s->is_replay = true;
        s->players = h->players;
        s->input_size = h->input_size;
        s->ticks = ls_replay_reader_ticks(s->reader);
        s->cursor = ls_replay_cursor_create(s->reader);
        if (!s->cursor) {
            snprintf(msg, msg_size, "out of memory");
            rn_source_close(s);
            return false;
        }
    } else {
        ls_error e;
        ls_result r = dir ? ls_scene_parse_in((const char *)data, size, dir, &s->scene, &e)
                          : ls_scene_parse((const char *)data, size, &s->scene, &e);
        if (r != LS_OK) {
            return fail(&e, "", msg, msg_size);
        }
        s->ticks = s->scene.ticks;
    }
    if (!instantiate(s, msg, msg_size)) {
        rn_source_close(s);
        return false;
    }
    s->last_computed = ls_world_checksum(s->world);
    return true;
}

bool rn_source_open_file(rn_source *s, const char *path, char *msg, size_t msg_size)
{
    memset(s, 0, sizeof *s);
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(msg, msg_size, "cannot open %s", path);
        return false;
    }
    size_t cap = 1 << 16, len = 0;
    uint8_t *buf = malloc(cap);
    while (buf) {
        len += fread(buf + len, 1, cap - len, f);
        if (len < cap) {
            break;
        }
        uint8_t *more = cap < (1u << 30) ? realloc(buf, cap * 2) : NULL;
        if (!more) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = more;
        cap *= 2;
    }
    bool bad = ferror(f) != 0;
    fclose(f);
    if (!buf || bad) {
        free(buf);
        snprintf(msg, msg_size, "cannot read %s", path);
        return false;
    }
    // `mesh obj FILE` lines name files next to the scene.
    char dir[4096];
    const char *slash = strrchr(path, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
    bool ok = rn_source_open_in(s, buf, len, dir[0] ? dir : "/", msg, msg_size);
    free(buf);
    return ok;
}

void rn_source_close(rn_source *s)
{
    if (s->world) {
        ls_world_destroy(s->world);
    }
    if (s->cursor) {
        ls_replay_cursor_destroy(s->cursor);
    }
    if (s->reader) {
        ls_replay_reader_destroy(s->reader);
    }
    ls_scene_free(&s->scene);
    free(s->keyframe_buf);
    for (uint32_t i = 0; i < s->memo_count; i++) {
        free(s->memo[i].bytes);
    }
    free(s->memo);
    memset(s, 0, sizeof *s);
}

bool rn_source_step(rn_source *s)
{
    const uint8_t *inputs = NULL;
    if (s->is_replay) {
        uint64_t recorded;
        if (s->tick >= s->ticks ||
            ls_replay_cursor_read(s->cursor, s->tick, &inputs, &recorded) != LS_OK) {
            return false;
        }
        s->last_recorded = recorded;
    }
    s->last_computed =
        ls_game_tick(s->world, &s->scene, inputs, s->is_replay ? s->players : 0, s->input_size);
    s->tick++;
    if (!s->is_replay && s->memo_interval && s->tick % s->memo_interval == 0) {
        memo_take(s);
    }
    return true;
}

// Restore keyframe i into a fresh world.
static bool restore_keyframe(rn_source *s, uint32_t i, char *msg, size_t msg_size)
{
    ls_replay_keyframe_info kf = ls_replay_reader_keyframe_info(s->reader, i);
    if (kf.size > s->keyframe_buf_size) {
        uint8_t *b = realloc(s->keyframe_buf, kf.size);
        if (!b) {
            snprintf(msg, msg_size, "out of memory");
            return false;
        }
        s->keyframe_buf = b;
        s->keyframe_buf_size = kf.size;
    }
    ls_result r = ls_replay_reader_keyframe(s->reader, i, s->keyframe_buf, kf.size);
    if (r != LS_OK) {
        snprintf(msg, msg_size, "keyframe at tick %u: %s", kf.tick, ls_result_text(r));
        return false;
    }
    ls_error e;
    if (ls_world_snapshot_restore(s->world, s->keyframe_buf, kf.size, &e) != LS_OK) {
        // e.g. another engine's snapshot version: the restore's words name it.
        char what[64];
        snprintf(what, sizeof what, "keyframe at tick %u: ", kf.tick);
        return fail(&e, what, msg, msg_size);
    }
    s->tick = kf.tick;
    s->last_computed = ls_world_checksum(s->world);
    s->last_recorded = kf.tick > 0 ? ls_replay_reader_checksum(s->reader, kf.tick - 1) : 0;
    return true;
}

bool rn_source_seek(rn_source *s, uint32_t tick, char *msg, size_t msg_size)
{
    if (s->is_replay && tick > s->ticks) {
        snprintf(msg, msg_size, "tick %u is past the recording's end (%u ticks)", tick, s->ticks);
        return false;
    }
    if (s->is_replay) {
        int64_t k = ls_replay_reader_keyframe_at_or_before(s->reader, tick);
        if (k >= 0) {
            uint32_t kt = ls_replay_reader_keyframe_info(s->reader, (uint32_t)k).tick;
            if (kt > s->tick || tick < s->tick) {
                if (!restore_keyframe(s, (uint32_t)k, msg, msg_size)) {
                    return false;
                }
            }
        }
    }
    if (!s->is_replay) {
        memo_seek(s, tick);
    }
    if (tick < s->tick) {
        ls_world_destroy(s->world);
        if (!instantiate(s, msg, msg_size)) {
            return false;
        }
    }
    while (s->tick < tick) {
        if (!rn_source_step(s)) {
            snprintf(msg, msg_size, "cannot read tick %u of the replay", s->tick);
            return false;
        }
    }
    return true;
}

uint64_t rn_source_checksum(const rn_source *s)
{
    return ls_world_checksum(s->world);
}

ls_body_id rn_source_body(const rn_source *s, uint32_t i)
{
    return ls_world_body_at(s->world, i);
}
