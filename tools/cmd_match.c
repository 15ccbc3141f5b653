// SPDX-License-Identifier: MIT
// `lockstep match`: the end-to-end demo. Starts a relay and N bot processes on
// loopback, plays the arena in lockstep, then prints every peer's final
// checksum, the desync count, per-peer RTT and packets, the replay path and the
// result of `lockstep replay verify` on it.
#define _POSIX_C_SOURCE 200809L
#include "cli.h"
#include "json.h"
#include "ls/net_wire.h"
#include "net_tool.h"
#include "progress.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

const cli_command cmd_match_def = {
    "match", "demo match: a relay and N bot processes on loopback, then replay verify",
    "[--peers N] [--ticks N] [--tick-rate HZ] [--delay D] [--max-lead N] [--scene FILE]\n"
    "       [--seed S] [--replay PATH] [--timeout MS] [--perturb SLOT:TICK] [--json]\n"
    "       [--no-progress] [fault options]\n\n"
    "  --peers N          bot processes, 2..16 (default 4; the arena has 4 player bodies)\n"
    "  --ticks N          match length (default 1200)\n"
    "  --tick-rate HZ     real-time tick rate (default 60)\n"
    "  --delay D          input delay in ticks (default 3)\n"
    "  --max-lead N       bot lead bound in ticks (default 8)\n"
    "  --scene FILE       default tools/scenes/arena.scene, else the installed arena.scene\n"
    "  --seed S           seed of the bots' pushes (default 1)\n"
    "  --replay PATH      where the relay records (default /tmp/lockstep-match-PID.lsr)\n"
    "  --timeout MS       disconnect timeout (default 3000)\n"
    "  --perturb K:T      bot K (0..N-1, a player of the scene) diverges on purpose at tick\n"
    "                     T < --ticks (the relay must name T)\n"
    "  --json             one JSON object: peers[], checksums_equal, desyncs, replay, verify,\n"
    "                     result\n"
    "  --no-progress      no progress line (only drawn when stderr is a terminal)\n" NET_FAULT_USAGE
    "Fault options apply to every process's sends (relay and bots, each its own seed).\n\n"
    "Exit status 0 when every bot finished with equal checksums and the replay verified;\n"
    "3 on a desync, unequal checksums or a replay that fails verification; 1 when a\n"
    "process could not start or a bot did not finish.",
    cmd_match};

#define MAXPROC (LS_NET_MAX_SLOTS + 2)

typedef struct proc {
    pid_t pid;
    int fd;
    char *out;
    size_t len, cap;
    int status;
} proc;

typedef struct match_opts {
    uint64_t peers, ticks, rate, delay, lead, seed, timeout, perturb_slot, perturb_tick;
    bool perturb, json, progress;
    const char *scene;
    char scene_buf[4096];
    char replay[4096];
    ls_net_fault_def fault;
} match_opts;

static char exe[4096];

// Start `exe argv` with its stdout (and, with capture_stderr, its stderr) on a pipe.
static bool spawn(proc *p, char **argv, bool capture_stderr)
{
    int fds[2];
    if (pipe(fds) != 0) {
        fprintf(stderr, "lockstep match: pipe: %s\n", strerror(errno));
        return false;
    }
    fflush(stdout);
    p->pid = fork();
    if (p->pid < 0) {
        fprintf(stderr, "lockstep match: fork: %s\n", strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return false;
    }
    if (p->pid == 0) {
        dup2(fds[1], STDOUT_FILENO);
        if (capture_stderr) {
            dup2(fds[1], STDERR_FILENO);
        }
        close(fds[0]);
        close(fds[1]);
        execv(exe, argv);
        fprintf(stderr, "lockstep match: cannot run %s: %s\n", exe, strerror(errno));
        _exit(127);
    }
    close(fds[1]);
    p->fd = fds[0];
    return true;
}

static bool append(proc *p, const char *data, size_t n)
{
    if (p->len + n + 1 > p->cap) {
        size_t cap = (p->cap ? p->cap * 2 : 4096) + n;
        char *m = realloc(p->out, cap);
        if (!m) {
            return false;
        }
        p->out = m;
        p->cap = cap;
    }
    memcpy(p->out + p->len, data, n);
    p->len += n;
    p->out[p->len] = '\0';
    return true;
}

// Read one process's output until `line_prefix` appears at a line start (or EOF).
static bool read_until(proc *p, const char *line_prefix)
{
    char buf[4096];
    for (;;) {
        if (p->out) {
            for (const char *l = p->out; l; l = strchr(l, '\n')) {
                l += *l == '\n';
                if (strncmp(l, line_prefix, strlen(line_prefix)) == 0 && strchr(l, '\n')) {
                    return true;
                }
            }
        }
        ssize_t n = read(p->fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0 || !append(p, buf, (size_t)n)) {
            return false;
        }
    }
}

// Drain every process's output until all close (no pipe can fill and stall a child),
// updating the progress line (ticks estimated from the time since `bar` started).
static void drain_all(proc *ps, int n, cli_progress *bar, uint64_t rate)
{
    struct pollfd fds[MAXPROC];
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        int open_count = 0;
        for (int i = 0; i < n; i++) {
            fds[i].fd = ps[i].fd;
            fds[i].events = POLLIN;
            fds[i].revents = 0;
            open_count += ps[i].fd >= 0;
        }
        if (open_count == 0) {
            return;
        }
        if (bar && bar->enabled) {
            struct timespec t;
            clock_gettime(CLOCK_MONOTONIC, &t);
            double dt = (double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) * 1e-9;
            cli_progress_update(bar, (uint64_t)(dt * (double)rate));
        }
        if (poll(fds, (nfds_t)n, bar && bar->enabled ? 100 : -1) < 0) {
            if (errno == EINTR) {
                continue;
            }
            return;
        }
        for (int i = 0; i < n; i++) {
            if (ps[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) {
                continue;
            }
            char buf[4096];
            ssize_t r = read(ps[i].fd, buf, sizeof buf);
            if (r > 0) {
                append(&ps[i], buf, (size_t)r);
            } else if (r == 0 || errno != EINTR) {
                close(ps[i].fd);
                ps[i].fd = -1;
            }
        }
    }
}

// The value of `key=` in the first line starting with `prefix` (and containing `must`).
static bool field(const char *out, const char *prefix, const char *must, const char *key, char *val,
                  size_t size)
{
    for (const char *l = out; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
        const char *end = strchr(l, '\n');
        size_t len = end ? (size_t)(end - l) : strlen(l);
        char line[1024];
        if (len >= sizeof line || strncmp(l, prefix, strlen(prefix)) != 0) {
            continue;
        }
        memcpy(line, l, len);
        line[len] = '\0';
        if (must && !strstr(line, must)) {
            continue;
        }
        char k[64];
        snprintf(k, sizeof k, " %s=", key);
        const char *v = strstr(line, k);
        if (!v) {
            continue;
        }
        v += strlen(k);
        size_t n = strcspn(v, " ");
        n = n < size - 1 ? n : size - 1;
        memcpy(val, v, n);
        val[n] = '\0';
        return true;
    }
    snprintf(val, size, "?");
    return false;
}

static const char *const value_options[] = {
    "--peers",   "--ticks",    "--tick-rate", "--delay",     "--max-lead", "--seed",
    "--timeout", "--scene",    "--replay",    "--perturb",   "--loss",     "--dup",
    "--reorder", "--delay-ms", "--jitter",    "--fault-seed"};

static bool takes_value(const char *a)
{
    return cli_is_one_of(a, value_options, sizeof value_options / sizeof value_options[0]);
}

// Returns CLI_EXIT_OK, or the exit status after printing why.
static int parse(int argc, char **argv, match_opts *o)
{
    const cli_command *cmd = &cmd_match_def;
    memset(o, 0, sizeof *o);
    o->peers = 4, o->ticks = 1200, o->rate = 60, o->delay = 3, o->lead = 8, o->seed = 1;
    o->timeout = 3000;
    o->progress = true;
    o->scene = NULL; // CLI_DEFAULT_SCENE
    o->fault.seed = 1;
    snprintf(o->replay, sizeof o->replay, "/tmp/lockstep-match-%ld.lsr", (long)getpid());
    const char *perturb = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        bool ok = true;
        if (net_cli_fault_option("match", argc, argv, &i, &o->fault, &ok)) {
        } else if (strcmp(a, "--json") == 0) {
            o->json = true;
        } else if (strcmp(a, "--no-progress") == 0) {
            o->progress = false;
        } else if (!v || !takes_value(a)) {
            return takes_value(a) ? cli_usage_error(cmd, "%s needs a value", a)
                                  : cli_unexpected(cmd, a);
        } else if (strcmp(a, "--peers") == 0) {
            ok = net_cli_u64("match", a, v, 2, LS_NET_MAX_SLOTS, &o->peers), i++;
        } else if (strcmp(a, "--ticks") == 0) {
            ok = net_cli_u64("match", a, v, 1, 10000000, &o->ticks), i++;
        } else if (strcmp(a, "--tick-rate") == 0) {
            ok = net_cli_u64("match", a, v, 1, 1000, &o->rate), i++;
        } else if (strcmp(a, "--delay") == 0) {
            ok = net_cli_u64("match", a, v, 0, LS_NET_MAX_DELAY, &o->delay), i++;
        } else if (strcmp(a, "--max-lead") == 0) {
            ok = net_cli_u64("match", a, v, 1, LS_NET_MAX_LEAD, &o->lead), i++;
        } else if (strcmp(a, "--seed") == 0) {
            ok = net_cli_u64("match", a, v, 0, UINT64_MAX, &o->seed), i++;
        } else if (strcmp(a, "--timeout") == 0) {
            ok = net_cli_u64("match", a, v, 10, 3600000, &o->timeout), i++;
        } else if (strcmp(a, "--scene") == 0) {
            o->scene = v, i++;
        } else if (strcmp(a, "--replay") == 0) {
            snprintf(o->replay, sizeof o->replay, "%s", v), i++;
        } else {
            perturb = v, i++; // --perturb
        }
        if (!ok) {
            return CLI_EXIT_USAGE;
        }
    }
    if (perturb) {
        unsigned long long k, t;
        char extra;
        if (sscanf(perturb, "%llu:%llu%c", &k, &t, &extra) != 2 || perturb[0] == '-' ||
            strchr(perturb, '-')) {
            return cli_usage_error(cmd, "--perturb wants SLOT:TICK (e.g. 2:37), got '%s'", perturb);
        }
        if (k >= o->peers) {
            return cli_usage_error(cmd,
                                   "--perturb %s: slot %llu is out of range: the match has "
                                   "%llu peers (slots 0..%llu)",
                                   perturb, k, (unsigned long long)o->peers,
                                   (unsigned long long)o->peers - 1);
        }
        if (t >= o->ticks) {
            return cli_usage_error(cmd,
                                   "--perturb %s: tick %llu is out of range: the match has "
                                   "%llu ticks (0..%llu)",
                                   perturb, t, (unsigned long long)o->ticks,
                                   (unsigned long long)o->ticks - 1);
        }
        o->perturb = true, o->perturb_slot = k, o->perturb_tick = t;
    }
    o->scene = o->scene ? cli_find_scene(o->scene, o->scene_buf, sizeof o->scene_buf)
                        : cli_default_scene(cmd, o->scene_buf, sizeof o->scene_buf);
    if (!o->scene) {
        return CLI_EXIT_ERROR;
    }
    ls_scene scene;
    ls_error err;
    if (ls_scene_load(o->scene, &scene, &err) != LS_OK) {
        cli_print_error("lockstep match", &err);
        return CLI_EXIT_ERROR;
    }
    uint32_t players = scene.player_count;
    ls_scene_free(&scene);
    if (o->perturb && o->perturb_slot >= players) {
        return cli_usage_error(cmd,
                               "--perturb %s: bot %llu has no body to push: %s has %u "
                               "players (slots 0..%u)",
                               perturb, (unsigned long long)o->perturb_slot, o->scene, players,
                               players ? players - 1 : 0);
    }
    return CLI_EXIT_OK;
}

// argv builder: a fixed pool of formatted strings.
typedef struct args {
    char *v[64];
    char s[64][128];
    int n;
} args;

static void add(args *a, const char *fmt, unsigned long long x)
{
    snprintf(a->s[a->n], sizeof a->s[a->n], fmt, x);
    a->v[a->n] = a->s[a->n];
    a->v[++a->n] = NULL;
}

static void add_str(args *a, const char *s)
{
    a->v[a->n] = (char *)(uintptr_t)s;
    a->v[++a->n] = NULL;
}

static void add_faults(args *a, const ls_net_fault_def *f, uint64_t seed)
{
    if (f->loss_ppm) {
        add_str(a, "--loss"), add(a, "%llu", 0),
            snprintf(a->s[a->n - 1], 128, "%.6f", f->loss_ppm / 1e6);
    }
    if (f->dup_ppm) {
        add_str(a, "--dup"), add(a, "%llu", 0),
            snprintf(a->s[a->n - 1], 128, "%.6f", f->dup_ppm / 1e6);
    }
    if (f->reorder_ppm) {
        add_str(a, "--reorder"), add(a, "%llu", 0),
            snprintf(a->s[a->n - 1], 128, "%.6f", f->reorder_ppm / 1e6);
    }
    if (f->delay_us) {
        add_str(a, "--delay-ms"), add(a, "%llu", f->delay_us / 1000);
    }
    if (f->jitter_us) {
        add_str(a, "--jitter"), add(a, "%llu", f->jitter_us / 1000);
    }
    add_str(a, "--fault-seed"), add(a, "%llu", seed);
}

static bool start_relay(const match_opts *o, proc *relay, uint16_t *port,
                        char tokens[][LS_NET_TOKEN_SIZE * 2 + 1])
{
    args a = {{0}, {{0}}, 0};
    add_str(&a, "lockstep"), add_str(&a, "relay"), add_str(&a, "--bind"),
        add_str(&a, "127.0.0.1:0");
    add_str(&a, "--slots"), add(&a, "%llu", o->peers);
    add_str(&a, "--tick-rate"), add(&a, "%llu", o->rate);
    add_str(&a, "--delay"), add(&a, "%llu", o->delay);
    add_str(&a, "--ticks"), add(&a, "%llu", o->ticks);
    add_str(&a, "--timeout"), add(&a, "%llu", o->timeout);
    add_str(&a, "--join-timeout"), add(&a, "%llu", 15000);
    add_str(&a, "--scene"), add_str(&a, o->scene);
    add_str(&a, "--seed"), add(&a, "%llu", o->seed);
    add_str(&a, "--record"), add_str(&a, o->replay);
    add_str(&a, "--exit-when-done");
    add_faults(&a, &o->fault, o->fault.seed * 1000 + 999);
    if (!spawn(relay, a.v, true) || !read_until(relay, "ready")) {
        fprintf(stderr, "lockstep match: the relay did not start:\n%s\n",
                relay->out ? relay->out : "");
        return false;
    }
    const char *l = strstr(relay->out, "listening ");
    const char *colon = l ? strchr(l, ':') : NULL;
    *port = colon ? (uint16_t)strtoul(colon + 1, NULL, 10) : 0;
    for (uint32_t k = 0; k < o->peers; k++) {
        char pat[64];
        snprintf(pat, sizeof pat, "token 1 %u ", k);
        const char *t = strstr(relay->out, pat);
        if (!t || sscanf(t + strlen(pat), "%32s", tokens[k]) != 1) {
            fprintf(stderr, "lockstep match: no token for slot %u\n", k);
            return false;
        }
    }
    return *port != 0;
}

static bool start_bot(const match_opts *o, proc *p, uint32_t k, uint16_t port, const char *token)
{
    args a = {{0}, {{0}}, 0};
    add_str(&a, "lockstep"), add_str(&a, "bot");
    add_str(&a, "--relay"), add(&a, "127.0.0.1:%llu", port);
    add_str(&a, "--session"), add_str(&a, "1");
    add_str(&a, "--slot"), add(&a, "%llu", k);
    add_str(&a, "--token"), add_str(&a, token);
    add_str(&a, "--scene"), add_str(&a, o->scene);
    add_str(&a, "--seed"), add(&a, "%llu", o->seed);
    add_str(&a, "--max-lead"), add(&a, "%llu", o->lead);
    if (o->perturb && o->perturb_slot == k) {
        add_str(&a, "--perturb-tick"), add(&a, "%llu", o->perturb_tick);
    }
    add_faults(&a, &o->fault, o->fault.seed * 1000 + k);
    return spawn(p, a.v, true);
}

// `lockstep replay verify PATH` in a child; its output is shown (text) or kept
// in *out (JSON). Returns its exit status (CLI_EXIT_ERROR if it did not run).
static int run_verify(const char *path, bool json, char **out)
{
    proc v;
    memset(&v, 0, sizeof v);
    char *argv[] = {"lockstep", "replay", "verify", (char *)(uintptr_t)path, NULL};
    if (!spawn(&v, argv, false)) {
        return CLI_EXIT_ERROR;
    }
    drain_all(&v, 1, NULL, 0);
    waitpid(v.pid, &v.status, 0);
    int status = WIFEXITED(v.status) ? WEXITSTATUS(v.status) : CLI_EXIT_ERROR;
    if (!json) {
        printf("verify: lockstep replay verify %s\n", path);
        for (const char *l = v.out; l && *l;) {
            const char *e = strchr(l, '\n');
            int n = e ? (int)(e - l) : (int)strlen(l);
            printf("  | %.*s\n", n, l);
            l = e ? e + 1 : NULL;
        }
        printf("verify result: %s\n", status == 0 ? "OK" : "FAILED");
    }
    *out = v.out;
    return status;
}

static void print_desyncs(const char *relay_out)
{
    int shown = 0, total = 0;
    for (const char *l = strstr(relay_out, "event desync"); l; l = strstr(l + 1, "event desync")) {
        if (l != relay_out && l[-1] != '\n') {
            continue;
        }
        if (shown++ < 3) {
            const char *e = strchr(l, '\n');
            printf("  relay: %.*s\n", e ? (int)(e - l) : (int)strlen(l), l);
        }
        total++;
    }
    if (total > 3) {
        printf("  relay: ... %d desync events in all\n", total);
    }
}

typedef struct peer_row {
    char ticks[32], sum[32], rtt_peer[32], out[32], in[32], state[32], rtt_relay[32], drops[32];
    char error[256]; ///< The bot's first "lockstep bot: ..." line (stderr), or "".
} peer_row;

// The first line of out starting with prefix, or "".
static void first_line(const char *out, const char *prefix, char *buf, size_t size)
{
    buf[0] = '\0';
    for (const char *l = out; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
        if (strncmp(l, prefix, strlen(prefix)) == 0) {
            const char *e = strchr(l, '\n');
            snprintf(buf, size, "%.*s", e ? (int)(e - l) : (int)strlen(l), l);
            return;
        }
    }
}

static void peer_fields(const proc *relay, const proc *bot, uint32_t k, peer_row *r)
{
    char slot[16];
    snprintf(slot, sizeof slot, "slot=%u ", k);
    field(bot->out, "result", NULL, "ticks", r->ticks, sizeof r->ticks);
    field(bot->out, "result", NULL, "checksum", r->sum, sizeof r->sum);
    field(bot->out, "result", NULL, "rtt_us", r->rtt_peer, sizeof r->rtt_peer);
    field(bot->out, "result", NULL, "packets_out", r->out, sizeof r->out);
    field(bot->out, "result", NULL, "packets_in", r->in, sizeof r->in);
    field(bot->out, "result", NULL, "state", r->state, sizeof r->state);
    field(relay->out, "stats session=1", slot, "rtt_us", r->rtt_relay, sizeof r->rtt_relay);
    field(relay->out, "stats session=1", slot, "drops", r->drops, sizeof r->drops);
    first_line(bot->out, "lockstep ", r->error, sizeof r->error);
}

// A number field printed by a child, or null when it was missing ("?").
static void json_number_field(json_out *j, const char *key, const char *text)
{
    json_key(j, key);
    char *end;
    unsigned long long v = strtoull(text, &end, 10);
    if (text[0] >= '0' && text[0] <= '9' && *end == '\0') {
        json_u64(j, v);
    } else {
        json_null(j);
    }
}

static void json_desyncs(json_out *j, const char *relay_out)
{
    json_key(j, "desync_events"), json_array_begin(j);
    for (const char *l = strstr(relay_out, "event desync"); l; l = strstr(l + 1, "event desync")) {
        if (l != relay_out && l[-1] != '\n') {
            continue;
        }
        char line[256];
        const char *e = strchr(l, '\n');
        snprintf(line, sizeof line, "%.*s", e ? (int)(e - l) : (int)strlen(l), l);
        json_str(j, line);
    }
    json_array_end(j);
}

static int summarize(const match_opts *o, proc *relay, proc *bots)
{
    peer_row rows[LS_NET_MAX_SLOTS];
    bool equal = true, all_done = true;
    for (uint32_t k = 0; k < o->peers; k++) {
        peer_fields(relay, &bots[k], k, &rows[k]);
        equal &= strcmp(rows[0].sum, rows[k].sum) == 0 && strcmp(rows[k].sum, "?") != 0;
        all_done &=
            strcmp(rows[k].state, "finished") == 0 && strtoull(rows[k].ticks, NULL, 10) == o->ticks;
    }
    char desyncs[32], malformed[32], pin[32], pout[32], rticks[32];
    field(relay->out, "stats relay", NULL, "desyncs", desyncs, sizeof desyncs);
    field(relay->out, "stats relay", NULL, "malformed", malformed, sizeof malformed);
    field(relay->out, "stats relay", NULL, "packets_in", pin, sizeof pin);
    field(relay->out, "stats relay", NULL, "packets_out", pout, sizeof pout);
    field(relay->out, "replay", NULL, "ticks", rticks, sizeof rticks);
    if (!o->json) {
        printf("\n%-4s %-6s %-18s %-11s %-11s %-9s %-9s %-7s %s\n", "peer", "ticks",
               "final checksum", "rtt(relay)", "rtt(peer)", "pkts out", "pkts in", "drops",
               "status");
        for (uint32_t k = 0; k < o->peers; k++) {
            const peer_row *r = &rows[k];
            char rr[32], rp[32];
            snprintf(rr, sizeof rr, "%.3f ms", strtod(r->rtt_relay, NULL) / 1000.0);
            snprintf(rp, sizeof rp, "%.3f ms", strtod(r->rtt_peer, NULL) / 1000.0);
            printf("%-4u %-6s %-18s %-11s %-11s %-9s %-9s %-7s %s\n", k, r->ticks, r->sum, rr, rp,
                   r->out, r->in, r->drops, r->state);
        }
        for (uint32_t k = 0; k < o->peers; k++) {
            if (rows[k].error[0] && strcmp(rows[k].state, "finished") != 0) {
                printf("  bot %u: %s\n", k, rows[k].error);
            }
        }
        printf("\nall %llu final checksums equal: %s\n", (unsigned long long)o->peers,
               equal ? "yes" : "NO");
        printf("desyncs: %s\n", desyncs);
        print_desyncs(relay->out);
        printf("relay: packets in %s, out %s, malformed %s\n", pin, pout, malformed);
        printf("replay: %s (%s ticks)\n", o->replay, rticks);
    }
    char *verify_out = NULL;
    int verify = run_verify(o->replay, o->json, &verify_out);
    bool desynced = strcmp(desyncs, "0") != 0 && strcmp(desyncs, "?") != 0;
    // A desync the relay saw, or unequal checksums of bots that all finished, is a
    // verification failure; a bot that did not finish is a runtime failure.
    int status = desynced                      ? CLI_EXIT_MISMATCH
                 : !all_done                   ? CLI_EXIT_ERROR
                 : !equal                      ? CLI_EXIT_MISMATCH
                 : verify == CLI_EXIT_OK       ? CLI_EXIT_OK
                 : verify == CLI_EXIT_MISMATCH ? CLI_EXIT_MISMATCH
                                               : CLI_EXIT_ERROR;
    const char *why = status == CLI_EXIT_OK ? NULL
                      : desynced            ? "the relay reported a desync"
                      : !all_done           ? "a bot did not finish the match"
                      : !equal              ? "the final checksums differ"
                                            : "the replay did not verify";
    if (o->json) {
        json_out j;
        json_init(&j, stdout);
        json_object_begin(&j);
        json_key(&j, "peers"), json_array_begin(&j);
        for (uint32_t k = 0; k < o->peers; k++) {
            const peer_row *r = &rows[k];
            json_object_begin(&j);
            json_key(&j, "slot"), json_u64(&j, k);
            json_number_field(&j, "ticks", r->ticks);
            json_key(&j, "final_checksum");
            strcmp(r->sum, "?") ? json_str(&j, r->sum) : json_null(&j);
            json_key(&j, "rtt_relay_ms"), json_double(&j, strtod(r->rtt_relay, NULL) / 1000.0, 3);
            json_key(&j, "rtt_peer_ms"), json_double(&j, strtod(r->rtt_peer, NULL) / 1000.0, 3);
            json_number_field(&j, "packets_out", r->out);
            json_number_field(&j, "packets_in", r->in);
            json_number_field(&j, "drops", r->drops);
            json_key(&j, "status");
            strcmp(r->state, "?") ? json_str(&j, r->state) : json_null(&j);
            json_key(&j, "message");
            r->error[0] ? json_str(&j, r->error) : json_null(&j);
            json_object_end(&j);
        }
        json_array_end(&j);
        json_key(&j, "checksums_equal"), json_bool(&j, equal);
        json_number_field(&j, "desyncs", desyncs);
        json_desyncs(&j, relay->out);
        json_key(&j, "relay"), json_object_begin(&j);
        json_number_field(&j, "packets_in", pin);
        json_number_field(&j, "packets_out", pout);
        json_number_field(&j, "malformed", malformed);
        json_object_end(&j);
        json_key(&j, "replay"), json_str(&j, o->replay);
        json_number_field(&j, "replay_ticks", rticks);
        json_key(&j, "verify"), json_object_begin(&j);
        json_key(&j, "exit_status"), json_i64(&j, verify);
        json_key(&j, "output"), json_str(&j, verify_out ? verify_out : "");
        json_object_end(&j);
        json_key(&j, "result"), json_str(&j, status == CLI_EXIT_OK ? "ok" : "failed");
        json_key(&j, "reason");
        why ? json_str(&j, why) : json_null(&j);
        json_object_end(&j);
        json_finish(&j);
    } else {
        printf("match: %s%s%s\n", status == CLI_EXIT_OK ? "OK" : "FAILED", why ? ": " : "",
               why ? why : "");
    }
    free(verify_out);
    return status;
}

int cmd_match(int argc, char **argv)
{
    match_opts o;
    int bad = parse(argc, argv, &o);
    if (bad) {
        return bad;
    }
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        fprintf(stderr, "lockstep match: cannot find my own executable\n");
        return CLI_EXIT_ERROR;
    }
    exe[n] = '\0';
    if (!o.json) {
        printf("match: %llu bots, %llu ticks at %llu Hz, input delay %llu, scene %s, seed %llu\n",
               (unsigned long long)o.peers, (unsigned long long)o.ticks, (unsigned long long)o.rate,
               (unsigned long long)o.delay, o.scene, (unsigned long long)o.seed);
        printf("faults on every send: loss %.3f dup %.3f reorder %.3f delay %u ms jitter %u ms\n",
               o.fault.loss_ppm / 1e6, o.fault.dup_ppm / 1e6, o.fault.reorder_ppm / 1e6,
               o.fault.delay_us / 1000, o.fault.jitter_us / 1000);
    }
    proc ps[MAXPROC];
    memset(ps, 0, sizeof ps);
    for (int i = 0; i < MAXPROC; i++) {
        ps[i].fd = -1;
    }
    char tokens[LS_NET_MAX_SLOTS][LS_NET_TOKEN_SIZE * 2 + 1];
    uint16_t port = 0;
    if (!start_relay(&o, &ps[0], &port, tokens)) {
        if (ps[0].pid > 0) {
            kill(ps[0].pid, SIGTERM);
            waitpid(ps[0].pid, NULL, 0);
        }
        free(ps[0].out);
        return CLI_EXIT_ERROR;
    }
    if (!o.json) {
        printf("relay: 127.0.0.1:%u (pid %ld), recording %s\n", port, (long)ps[0].pid, o.replay);
    }
    int started = 0;
    for (uint32_t k = 0; k < o.peers; k++) {
        started += start_bot(&o, &ps[1 + k], k, port, tokens[k]);
    }
    if (!o.json) {
        printf("bots: %d processes started; playing...\n", started);
    }
    fflush(stdout);
    cli_progress bar;
    cli_progress_init(&bar, "match", "ticks (est.)", o.ticks, o.progress);
    drain_all(ps, 1 + (int)o.peers, &bar, o.rate);
    cli_progress_done(&bar);
    for (uint32_t i = 0; i < 1 + o.peers; i++) {
        if (ps[i].pid > 0) {
            waitpid(ps[i].pid, &ps[i].status, 0);
        }
    }
    for (uint32_t i = 0; i < 1 + o.peers; i++) {
        if (!ps[i].out) {
            append(&ps[i], "", 0);
        }
    }
    int status = summarize(&o, &ps[0], &ps[1]);
    for (int i = 0; i < MAXPROC; i++) {
        free(ps[i].out);
    }
    return status;
}
