// SPDX-License-Identifier: MIT
// Helpers of the network commands and the bot's game.
#include "net_tool.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool net_cli_u64(const char *cmd, const char *option, const char *text, uint64_t min, uint64_t max,
                 uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (*text == '\0' || *text == '-' || *text == '+' || *text == ' ' || *end != '\0' ||
        errno == ERANGE || v < min || v > max) {
        fprintf(stderr,
                "lockstep %s: %s wants an integer %llu..%llu, got '%s' (see lockstep %s --help)\n",
                cmd, option, (unsigned long long)min, (unsigned long long)max, text, cmd);
        return false;
    }
    *out = v;
    return true;
}

bool net_cli_ppm(const char *cmd, const char *option, const char *text, uint32_t *out)
{
    char *end;
    double p = strtod(text, &end); // tools may use floating point for options
    if (*text == '\0' || *end != '\0' || !(p >= 0.0 && p <= 1.0)) {
        fprintf(stderr,
                "lockstep %s: %s wants a probability 0..1, got '%s' (see lockstep %s --help)\n",
                cmd, option, text, cmd);
        return false;
    }
    *out = (uint32_t)(p * 1e6 + 0.5);
    return true;
}

bool net_cli_fault_option(const char *cmd, int argc, char **argv, int *i, ls_net_fault_def *f,
                          bool *ok)
{
    const char *a = argv[*i];
    const char *v = *i + 1 < argc ? argv[*i + 1] : NULL;
    uint64_t n = 0;
    if (!v) {
        return false;
    }
    if (strcmp(a, "--loss") == 0) {
        *ok = net_cli_ppm(cmd, a, v, &f->loss_ppm);
    } else if (strcmp(a, "--dup") == 0) {
        *ok = net_cli_ppm(cmd, a, v, &f->dup_ppm);
    } else if (strcmp(a, "--reorder") == 0) {
        *ok = net_cli_ppm(cmd, a, v, &f->reorder_ppm);
    } else if (strcmp(a, "--corrupt") == 0) {
        *ok = net_cli_ppm(cmd, a, v, &f->corrupt_ppm);
    } else if (strcmp(a, "--delay-ms") == 0) {
        *ok = net_cli_u64(cmd, a, v, 0, 10000, &n);
        f->delay_us = (uint32_t)n * 1000;
    } else if (strcmp(a, "--jitter") == 0) {
        *ok = net_cli_u64(cmd, a, v, 0, 10000, &n);
        f->jitter_us = (uint32_t)n * 1000;
    } else if (strcmp(a, "--fault-seed") == 0) {
        *ok = net_cli_u64(cmd, a, v, 0, UINT64_MAX, &f->seed);
    } else {
        return false;
    }
    (*i)++;
    return true;
}

char *net_read_file(const char *cmd, const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "lockstep %s: %s: cannot open: %s\n", cmd, path, strerror(errno));
        return NULL;
    }
    char *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len + 4096 + 1 > cap) {
            cap = cap ? cap * 2 : 8192;
            char *n = realloc(buf, cap);
            if (!n) {
                free(buf);
                fclose(f);
                fprintf(stderr, "lockstep %s: %s: out of memory\n", cmd, path);
                return NULL;
            }
            buf = n;
        }
        size_t got = fread(buf + len, 1, 4096, f);
        len += got;
        if (got < 4096) {
            break;
        }
    }
    int e = errno;
    bool err = ferror(f);
    fclose(f);
    if (err) {
        fprintf(stderr, "lockstep %s: %s: cannot read: %s\n", cmd, path, strerror(e));
        free(buf);
        return NULL;
    }
    buf[len] = '\0';
    *size = len;
    return buf;
}

// "lockstep CMD: path:line:column: message [LS_ERR_NAME]" on stderr (as cli_print_error).
static void print_error(const char *cmd, const ls_error *err)
{
    char line[LS_ERROR_PATH_MAX + LS_ERROR_MESSAGE_MAX + 32];
    ls_error_format(err, line, sizeof line);
    fprintf(stderr, "lockstep %s: %s [%s]\n", cmd, line, ls_result_name(err->code));
}

bool net_game_init(net_game *g, const char *cmd, const char *scene_path, uint64_t seed,
                   uint32_t slot, uint32_t slots)
{
    memset(g, 0, sizeof *g);
    g->perturb_tick = -1;
    g->slot = slot;
    ls_error err;
    if (ls_scene_load(scene_path, &g->scene, &err) != LS_OK) {
        print_error(cmd, &err);
        return false;
    }
    g->world = ls_scene_instantiate(&g->scene, &err);
    if (!g->world) {
        ls_error_set_path(&err, scene_path);
        print_error(cmd, &err);
        ls_scene_free(&g->scene);
        return false;
    }
    ls_input_script_init(&g->script, seed, slots);
    ls_soccer_bot_init(&g->bot, seed, slot);
    return true;
}

void net_game_free(net_game *g)
{
    ls_world_destroy(g->world);
    ls_scene_free(&g->scene);
}

void net_game_local_input(void *user, uint32_t tick, uint8_t *out, uint32_t input_size)
{
    net_game *g = user;
    (void)tick; // the peer asks for ticks in order, one call each: the script advances with them
    uint32_t isz = input_size < 64 ? input_size : 64;
    if (g->scene.game == LS_SCENE_GAME_SOCCER) {
        // The bot reads the world as this peer has it now (in rollback mode the
        // predicted one): what it decides is the input that is sent and recorded.
        memset(out, 0, input_size);
        if (input_size > 0) {
            out[0] = ls_soccer_bot_input(&g->bot, g->world, &g->scene);
        }
        return;
    }
    ls_input_script_next(&g->script, g->row, isz);
    if (g->slot < g->script.players) {
        memcpy(out, g->row + (size_t)g->slot * isz, isz);
    }
}

uint64_t net_game_advance(void *user, uint32_t tick, const uint8_t *inputs, uint32_t slots,
                          uint32_t input_size)
{
    net_game *g = user;
    if ((int64_t)tick == g->perturb_tick && g->slot < g->scene.player_count) {
        // A deliberate local divergence (desync demo): a push nobody else applies.
        // Forces add exactly, so applying it before the tick's inputs is the same.
        ls_body_id id = ls_world_body_at(g->world, g->scene.player_body[g->slot]);
        ls_body_apply_force(g->world, id, ls_vec3_make(ls_fx_from_int(5), 0, 0));
    }
    return ls_game_tick(g->world, &g->scene, inputs, slots, input_size);
}

void net_game_summary(const net_game *g, char *buf, size_t size)
{
    if (size == 0) {
        return;
    }
    buf[0] = '\0';
    if (g->scene.game == LS_SCENE_GAME_SOCCER) {
        snprintf(buf, size, "%d-%d", (int)ls_soccer_score(g->world, 0),
                 (int)ls_soccer_score(g->world, 1));
    }
}

size_t net_game_save(void *user, uint32_t tick, uint8_t *buf, size_t cap)
{
    net_game *g = user;
    (void)tick;
    size_t need = ls_world_snapshot_size(g->world);
    return buf && cap >= need ? ls_world_snapshot_save(g->world, buf, cap) : need;
}

uint64_t net_game_state_checksum(void *user, uint32_t tick)
{
    const net_game *g = user;
    (void)tick;
    return ls_world_checksum(g->world);
}

bool net_game_load(void *user, uint32_t tick, const uint8_t *buf, size_t size)
{
    net_game *g = user;
    (void)tick;
    return ls_world_snapshot_restore(g->world, buf, size, NULL) == LS_OK;
}

const char *net_reason_name(uint8_t reason)
{
    switch (reason) {
    case LS_NET_LEFT:
        return "left";
    case LS_NET_TIMEOUT:
        return "timeout";
    case LS_NET_KICKED:
        return "kicked";
    case LS_NET_REJOINED:
        return "rejoined";
    default:
        return "unknown";
    }
}

void net_event_list_add(net_event_list *l, const net_event_rec *e)
{
    l->total++;
    if (l->n == NET_EVENTS_KEPT) {
        return;
    }
    if (l->n == l->cap) {
        uint32_t cap = l->cap ? l->cap * 2 : 8;
        net_event_rec *v = realloc(l->v, cap * sizeof *v);
        if (!v) {
            return;
        }
        l->v = v, l->cap = cap;
    }
    l->v[l->n++] = *e;
}

void net_event_list_free(net_event_list *l)
{
    free(l->v);
    memset(l, 0, sizeof *l);
}
