// SPDX-License-Identifier: MIT
// `lockstep match`: the end-to-end demo. Starts a relay and N bot processes on
// loopback, plays the arena in lockstep or rollback mode, then prints every peer's final
// checksum, the desync count, per-peer RTT and packets, the replay path and the
// result of `lockstep replay verify` on it. The relay writes one credential per
// slot into a private temporary directory; each bot gets the path of its own.
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

const cli_command cmd_match_def = {
    "match", "demo match: a relay and N bot processes on loopback, then replay verify",
    "[--peers N] [--ticks N] [--tick-rate HZ] [--mode lockstep|rollback] [--delay D]\n"
    "       [--max-prediction W] [--max-lead N] [--scene FILE] [--seed S] [--replay PATH]\n"
    "       [--timeout MS] [--perturb SLOT:TICK] [--spectators N] [--spectator-join TICK]\n"
    "       [--outage SLOT@TICK+MS] [--late-join SLOT@TICK]\n"
    "       [--json] [--no-progress] [fault options]\n\n"
    "  --peers N          bot processes, 2..16 (default 4; the arena has 4 player bodies)\n"
    "  --ticks N          match length (default 1200)\n"
    "  --tick-rate HZ     real-time tick rate (default 60)\n"
    "  --mode M           lockstep (default) or rollback: the bots predict missing inputs\n"
    "                     and correct by rollback; per peer it prints rollbacks, mean/max\n"
    "                     re-simulated ticks per frame, prediction hit rate, time-sync\n"
    "                     adjustments\n"
    "  --delay D          input delay in ticks, 0..32 (default 3; 0 is fine in rollback)\n"
    "  --max-prediction W rollback: prediction window in ticks, 0..64 (default 8)\n"
    "  --max-lead N       lockstep: bot lead bound in ticks (default 8)\n"
    "  --scene FILE       default tools/scenes/arena.scene, else the installed arena.scene\n"
    "  --seed S           seed of the bots' pushes (default 1)\n"
    "  --replay PATH      where the relay records (default /tmp/lockstep-match-PID.lsr)\n"
    "  --timeout MS       disconnect timeout (default 3000)\n"
    "  --spectators N     also start N spectator bots (0..16, default 0): each watches the\n"
    "                     final ticks behind the players and must end on their checksum\n"
    "  --spectator-join T the spectators join when the players are at about tick T (they\n"
    "                     catch up from the relay's history faster than real time)\n"
    "  --outage K@T+MS    bot K goes silent at tick T for MS ms; the relay times it\n"
    "                     out (--timeout), it rejoins (snapshot uploaded by a connected\n"
    "                     bot) and plays on; every bot must agree on both switch ticks\n"
    "  --late-join K@T    bot K starts when the others are at about tick T (the\n"
    "                     match starts without it after a 2 s join timeout), then joins\n"
    "  --perturb K:T      bot K (0..N-1, a player of the scene) diverges on purpose at tick\n"
    "                     T < --ticks (the relay must name T)\n"
    "  --json             one JSON object: peers[], checksums_equal, desyncs, replay, verify,\n"
    "                     result\n"
    "  --no-progress      no progress line (only drawn when stderr is a terminal)\n" NET_FAULT_USAGE
    "Fault options apply to every process's sends (relay and bots, each its own seed).\n\n"
    "Exit status 0 when every bot finished with equal checksums and the replay verified;\n"
    "3 on a desync, unequal checksums or a replay that fails verification; 1 when a\n"
    "process could not start or a bot did not finish.",
    cmd_match, NULL};

#define MAXPROC (2 * LS_NET_MAX_SLOTS + 2)

typedef struct proc {
    pid_t pid;
    int fd;
    char *out;
    size_t len, cap;
    int status;
} proc;

typedef struct match_opts {
    uint64_t peers, ticks, rate, delay, lead, seed, timeout, perturb_slot, perturb_tick, window;
    uint64_t spectators, spectator_join;
    uint64_t outage_slot, outage_tick, outage_ms, late_slot, late_tick;
    bool outage, late;
    bool perturb, json, progress, rollback;
    const char *scene;
    char scene_buf[4096];
    char replay[4096];
    char cred_dir[64]; ///< Private directory of the credentials ("" until created).
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
    "--peers",          "--ticks",      "--tick-rate",      "--delay",   "--max-lead",   "--seed",
    "--timeout",        "--scene",      "--replay",         "--perturb", "--loss",       "--dup",
    "--reorder",        "--corrupt",    "--delay-ms",       "--jitter",  "--fault-seed", "--mode",
    "--max-prediction", "--spectators", "--spectator-join", "--outage",  "--late-join"};

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
    o->window = 8;
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
        } else if (strcmp(a, "--mode") == 0) {
            if (strcmp(v, "rollback") != 0 && strcmp(v, "lockstep") != 0) {
                return cli_usage_error(cmd, "--mode wants lockstep or rollback, got '%s'", v);
            }
            o->rollback = strcmp(v, "rollback") == 0, i++;
        } else if (strcmp(a, "--max-prediction") == 0) {
            ok = net_cli_u64("match", a, v, 0, 64, &o->window), i++;
        } else if (strcmp(a, "--max-lead") == 0) {
            ok = net_cli_u64("match", a, v, 1, LS_NET_MAX_LEAD, &o->lead), i++;
        } else if (strcmp(a, "--seed") == 0) {
            ok = net_cli_u64("match", a, v, 0, UINT64_MAX, &o->seed), i++;
        } else if (strcmp(a, "--timeout") == 0) {
            ok = net_cli_u64("match", a, v, 10, 3600000, &o->timeout), i++;
        } else if (strcmp(a, "--spectators") == 0) {
            ok = net_cli_u64("match", a, v, 0, LS_NET_MAX_SLOTS, &o->spectators), i++;
        } else if (strcmp(a, "--spectator-join") == 0) {
            ok = net_cli_u64("match", a, v, 0, 10000000, &o->spectator_join), i++;
        } else if (strcmp(a, "--outage") == 0) {
            unsigned long long k, t, ms;
            char extra;
            if (sscanf(v, "%llu@%llu+%llu%c", &k, &t, &ms, &extra) != 3 || strchr(v, '-') ||
                ms > 3600000) {
                return cli_usage_error(cmd,
                                       "--outage wants SLOT@TICK+MS, e.g. 2@300+5000; got '%s'", v);
            }
            o->outage = true, o->outage_slot = k, o->outage_tick = t, o->outage_ms = ms, i++;
        } else if (strcmp(a, "--late-join") == 0) {
            unsigned long long k, t;
            char extra;
            if (sscanf(v, "%llu@%llu%c", &k, &t, &extra) != 2 || strchr(v, '-')) {
                return cli_usage_error(cmd, "--late-join wants SLOT@TICK, e.g. 3@600; got '%s'", v);
            }
            o->late = true, o->late_slot = k, o->late_tick = t, i++;
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
    if ((o->outage && o->outage_slot >= o->peers) || (o->late && o->late_slot >= o->peers)) {
        bool out = o->outage && o->outage_slot >= o->peers;
        return cli_usage_error(cmd, "%s: slot %llu is out of range: the match has %llu peers",
                               out ? "--outage" : "--late-join",
                               (unsigned long long)(out ? o->outage_slot : o->late_slot),
                               (unsigned long long)o->peers);
    }
    if (o->outage && o->late && o->outage_slot == o->late_slot) {
        return cli_usage_error(cmd, "--outage and --late-join name the same slot");
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
    if (f->corrupt_ppm) {
        add_str(a, "--corrupt"), add(a, "%llu", 0),
            snprintf(a->s[a->n - 1], 128, "%.6f", f->corrupt_ppm / 1e6);
    }
    if (f->delay_us) {
        add_str(a, "--delay-ms"), add(a, "%llu", f->delay_us / 1000);
    }
    if (f->jitter_us) {
        add_str(a, "--jitter"), add(a, "%llu", f->jitter_us / 1000);
    }
    add_str(a, "--fault-seed"), add(a, "%llu", seed);
}

static bool start_relay(const match_opts *o, proc *relay, uint16_t *port, char creds[][128],
                        char spec_creds[][128])
{
    args a = {{0}, {{0}}, 0};
    add_str(&a, "lockstep"), add_str(&a, "relay"), add_str(&a, "--bind"),
        add_str(&a, "127.0.0.1:0");
    add_str(&a, "--credentials"), add_str(&a, o->cred_dir);
    add_str(&a, "--slots"), add(&a, "%llu", o->peers);
    add_str(&a, "--tick-rate"), add(&a, "%llu", o->rate);
    add_str(&a, "--delay"), add(&a, "%llu", o->delay);
    add_str(&a, "--ticks"), add(&a, "%llu", o->ticks);
    add_str(&a, "--timeout"), add(&a, "%llu", o->timeout);
    add_str(&a, "--join-timeout"), add(&a, "%llu", o->late ? 2000 : 15000);
    if (o->outage || o->late) {
        add_str(&a, "--rejoin-ms"), add(&a, "%llu", 600000);
    }
    add_str(&a, "--scene"), add_str(&a, o->scene);
    add_str(&a, "--seed"), add(&a, "%llu", o->seed);
    add_str(&a, "--record"), add_str(&a, o->replay);
    add_str(&a, "--exit-when-done");
    if (o->spectators) {
        add_str(&a, "--spectators"), add(&a, "%llu", o->spectators);
        // A spectator joining at tick T replays the history from tick 0.
        uint64_t h = o->spectator_join + 1024;
        add_str(&a, "--history"), add(&a, "%llu", h < 65536 ? h : 65536);
    }
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
        snprintf(pat, sizeof pat, "credential 1 %u ", k);
        const char *t = strstr(relay->out, pat);
        if (!t || sscanf(t + strlen(pat), "%127s", creds[k]) != 1) {
            fprintf(stderr, "lockstep match: no credential for slot %u\n", k);
            return false;
        }
    }
    for (uint32_t k = 0; k < o->spectators; k++) {
        char pat[64];
        snprintf(pat, sizeof pat, "spectator-credential 1 %u ", k);
        const char *t = strstr(relay->out, pat);
        if (!t || sscanf(t + strlen(pat), "%127s", spec_creds[k]) != 1) {
            fprintf(stderr, "lockstep match: no credential for spectator %u\n", k);
            return false;
        }
    }
    return *port != 0;
}

static bool start_bot(const match_opts *o, proc *p, uint32_t k, uint16_t port, const char *cred)
{
    args a = {{0}, {{0}}, 0};
    add_str(&a, "lockstep"), add_str(&a, "bot");
    add_str(&a, "--relay"), add(&a, "127.0.0.1:%llu", port);
    add_str(&a, "--credential"), add_str(&a, cred);
    add_str(&a, "--scene"), add_str(&a, o->scene);
    add_str(&a, "--seed"), add(&a, "%llu", o->seed);
    add_str(&a, "--max-lead"), add(&a, "%llu", o->lead);
    if (o->rollback) {
        add_str(&a, "--mode"), add_str(&a, "rollback");
        add_str(&a, "--max-prediction"), add(&a, "%llu", o->window);
    }
    if (o->outage && o->outage_slot == k) {
        add_str(&a, "--outage"); // TICK:MS, in the args' own storage
        snprintf(a.s[a.n], sizeof a.s[a.n], "%llu:%llu", (unsigned long long)o->outage_tick,
                 (unsigned long long)o->outage_ms);
        a.v[a.n] = a.s[a.n];
        a.v[++a.n] = NULL;
    }
    if (o->late && o->late_slot == k) {
        // The others' clocks run from their start (they catch up after the join timeout).
        uint64_t ms = o->late_tick * 1000 / o->rate;
        add_str(&a, "--start-delay-ms"), add(&a, "%llu", ms > 2500 ? ms : 2500);
    }
    if (o->perturb && o->perturb_slot == k) {
        add_str(&a, "--perturb-tick"), add(&a, "%llu", o->perturb_tick);
    }
    add_faults(&a, &o->fault, o->fault.seed * 1000 + k);
    return spawn(p, a.v, true);
}

static bool start_spectator(const match_opts *o, proc *p, uint32_t k, uint16_t port,
                            const char *cred)
{
    args a = {{0}, {{0}}, 0};
    add_str(&a, "lockstep"), add_str(&a, "bot");
    add_str(&a, "--relay"), add(&a, "127.0.0.1:%llu", port);
    add_str(&a, "--credential"), add_str(&a, cred);
    add_str(&a, "--scene"), add_str(&a, o->scene);
    add_str(&a, "--seed"), add(&a, "%llu", o->seed);
    if (o->spectator_join) {
        add_str(&a, "--start-delay-ms"), add(&a, "%llu", o->spectator_join * 1000 / o->rate);
    }
    add_faults(&a, &o->fault, o->fault.seed * 1000 + 500 + k);
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
    char bad_mac[32];
    char named[32];    ///< Times a majority named this bot's slot (it diverged).
    char disputes[32]; ///< Disputed ticks it reported (no majority, nobody named).
    char score[32];    ///< Soccer: "A-B" from the bot's result line, or "".
    char frames[32], rollbacks[32], resim[32], resim_max[32], predicted[32], hits[32], sync[32];
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
    field(bot->out, "result", NULL, "bad_mac", r->bad_mac, sizeof r->bad_mac);
    field(bot->out, "result", NULL, "named", r->named, sizeof r->named);
    field(bot->out, "result", NULL, "disputes", r->disputes, sizeof r->disputes);
    field(bot->out, "result", NULL, "frames", r->frames, sizeof r->frames);
    field(bot->out, "result", NULL, "rollbacks", r->rollbacks, sizeof r->rollbacks);
    field(bot->out, "result", NULL, "resimulated", r->resim, sizeof r->resim);
    field(bot->out, "result", NULL, "resim_max", r->resim_max, sizeof r->resim_max);
    field(bot->out, "result", NULL, "predicted", r->predicted, sizeof r->predicted);
    field(bot->out, "result", NULL, "predicted_hits", r->hits, sizeof r->hits);
    field(bot->out, "result", NULL, "time_sync", r->sync, sizeof r->sync);
    if (!field(bot->out, "result", NULL, "score", r->score, sizeof r->score)) {
        r->score[0] = '\0';
    }
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

// The number after the first occurrence of `pat` in out, or -1.
static long long first_number_after(const char *out, const char *pat)
{
    const char *l = out ? strstr(out, pat) : NULL;
    return l ? strtoll(l + strlen(pat), NULL, 10) : -1;
}

// The number after the last occurrence of `pat` in out, or -1.
static long long last_number_after(const char *out, const char *pat)
{
    long long v = -1;
    for (const char *l = out ? strstr(out, pat) : NULL; l; l = strstr(l + 1, pat)) {
        v = strtoll(l + strlen(pat), NULL, 10);
    }
    return v;
}

// --outage / --late-join: the slot's switch ticks as the relay chose them, and
// whether every other bot saw the same ones. False if they disagree or it never came back.
static bool print_rejoin(const match_opts *o, const proc *relay, const proc *bots, uint32_t k)
{
    char slot[16], rejoins[32], back[32], gone[32], snap[32], pat[96];
    snprintf(slot, sizeof slot, "slot=%u ", k);
    field(relay->out, "stats session=1", slot, "rejoins", rejoins, sizeof rejoins);
    field(relay->out, "stats session=1", slot, "rejoin_tick", back, sizeof back);
    // The first disconnect is the outage (the last one is its goodbye at the end).
    snprintf(pat, sizeof pat, "event disconnected session=1 slot=%u tick=", k);
    const char *first = relay->out ? strstr(relay->out, pat) : NULL;
    snprintf(gone, sizeof gone, "%lld", first ? strtoll(first + strlen(pat), NULL, 10) : -1);
    field(bots[k].out, "result", NULL, "snapshot_tick", snap, sizeof snap);
    long long d = strtoll(gone, NULL, 10), r = strtoll(back, NULL, 10);
    bool agree = strtoull(rejoins, NULL, 10) >= 1;
    char who[160] = "";
    for (uint32_t j = 0; j < o->peers && agree; j++) {
        char pd[64], pr[64];
        snprintf(pd, sizeof pd, "slot %u disconnected from tick ", k);
        snprintf(pr, sizeof pr, "slot %u is back from tick ", k);
        if (j == k) {
            agree = last_number_after(bots[j].out, "our inputs count from tick ") == r;
        } else {
            agree =
                first_number_after(bots[j].out, pd) == d && last_number_after(bots[j].out, pr) == r;
        }
        if (!agree) {
            snprintf(who, sizeof who, " (bot %u saw gone %lld, back %lld)", j,
                     first_number_after(bots[j].out, pd), last_number_after(bots[j].out, pr));
        }
    }
    if (!o->json) {
        printf("rejoin: slot %u gone from tick %s, back from tick %s (snapshot of tick %s, "
               "rejoins %s); every bot saw these switch ticks: %s%s\n",
               k, gone, back, snap, rejoins, agree ? "yes" : "NO", who);
    }
    return agree;
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
    // Soccer: the score the bots printed (peer 0's when they disagree, which they
    // cannot with equal checksums); NULL when no bot printed one (push scenes).
    const char *score = NULL;
    bool score_agreed = true;
    for (uint32_t k = 0; k < o->peers; k++) {
        if (rows[k].score[0]) {
            score_agreed &= !score || strcmp(score, rows[k].score) == 0;
            score = score ? score : rows[k].score;
        }
    }
    // Spectators (after the bots in the same array): they must end on the players' checksum.
    const proc *specs = bots + o->peers;
    char vt[LS_NET_MAX_SLOTS][32], vsum[LS_NET_MAX_SLOTS][32], vmis[LS_NET_MAX_SLOTS][32],
        vstate[LS_NET_MAX_SLOTS][32];
    bool spectators_ok = true;
    for (uint32_t k = 0; k < o->spectators; k++) {
        field(specs[k].out, "result", NULL, "ticks", vt[k], sizeof vt[k]);
        field(specs[k].out, "result", NULL, "checksum", vsum[k], sizeof vsum[k]);
        field(specs[k].out, "result", NULL, "mismatches", vmis[k], sizeof vmis[k]);
        field(specs[k].out, "result", NULL, "state", vstate[k], sizeof vstate[k]);
        spectators_ok &= strcmp(vsum[k], rows[0].sum) == 0 && strcmp(vmis[k], "0") == 0 &&
                         strcmp(vstate[k], "finished") == 0;
    }
    char refused[32], vdropped[32];
    field(relay->out, "stats relay", NULL, "spectator_refused", refused, sizeof refused);
    field(relay->out, "stats relay", NULL, "spectators_dropped", vdropped, sizeof vdropped);
    char desyncs[32], disputes[32], malformed[32], pin[32], pout[32], rticks[32], bad_mac[32],
        replayed[32];
    field(relay->out, "stats relay", NULL, "desyncs", desyncs, sizeof desyncs);
    field(relay->out, "stats relay", NULL, "disputes", disputes, sizeof disputes);
    field(relay->out, "stats relay", NULL, "malformed", malformed, sizeof malformed);
    field(relay->out, "stats relay", NULL, "bad_mac", bad_mac, sizeof bad_mac);
    field(relay->out, "stats relay", NULL, "replayed", replayed, sizeof replayed);
    field(relay->out, "stats relay", NULL, "packets_in", pin, sizeof pin);
    field(relay->out, "stats relay", NULL, "packets_out", pout, sizeof pout);
    field(relay->out, "replay", NULL, "ticks", rticks, sizeof rticks);
    if (!o->json) {
        printf("\n%-4s %-6s %-18s %-11s %-11s %-9s %-9s %-7s %-6s %s\n", "peer", "ticks",
               "final checksum", "rtt(relay)", "rtt(peer)", "pkts out", "pkts in", "drops", "named",
               "status");
        for (uint32_t k = 0; k < o->peers; k++) {
            const peer_row *r = &rows[k];
            char rr[32], rp[32];
            snprintf(rr, sizeof rr, "%.3f ms", strtod(r->rtt_relay, NULL) / 1000.0);
            snprintf(rp, sizeof rp, "%.3f ms", strtod(r->rtt_peer, NULL) / 1000.0);
            printf("%-4u %-6s %-18s %-11s %-11s %-9s %-9s %-7s %-6s %s\n", k, r->ticks, r->sum, rr,
                   rp, r->out, r->in, r->drops, r->named, r->state);
        }
        for (uint32_t k = 0; k < o->peers; k++) {
            if (rows[k].error[0] && strcmp(rows[k].state, "finished") != 0) {
                printf("  bot %u: %s\n", k, rows[k].error);
            }
        }
        if (o->rollback) {
            printf("\n%-4s %-9s %-12s %-12s %-14s %s\n", "peer", "rollbacks", "resim/frame",
                   "max resim", "hit rate", "time-sync adjustments");
            for (uint32_t k = 0; k < o->peers; k++) {
                const peer_row *r = &rows[k];
                double frames = strtod(r->frames, NULL), predicted = strtod(r->predicted, NULL);
                char mean[32], rate[32];
                snprintf(mean, sizeof mean, "%.3f",
                         frames > 0 ? strtod(r->resim, NULL) / frames : 0.0);
                snprintf(rate, sizeof rate, "%.1f %%",
                         predicted > 0 ? 100.0 * strtod(r->hits, NULL) / predicted : 100.0);
                printf("%-4u %-9s %-12s %-12s %-14s %s\n", k, r->rollbacks, mean, r->resim_max,
                       rate, r->sync);
            }
        }
        if (o->spectators) {
            printf("\n%-9s %-6s %-18s %-10s %s\n", "spectator", "ticks", "final checksum",
                   "mismatches", "status");
            for (uint32_t k = 0; k < o->spectators; k++) {
                printf("%-9u %-6s %-18s %-10s %s\n", k, vt[k], vsum[k], vmis[k], vstate[k]);
            }
            printf("spectators on the players' final checksum: %s (relay: dropped %s, "
                   "takeover attempts refused %s)\n",
                   spectators_ok ? "yes" : "NO", vdropped, refused);
        }
        printf("\nall %llu final checksums equal: %s\n", (unsigned long long)o->peers,
               equal ? "yes" : "NO");
        if (score) {
            printf("score: %s (blue-orange; %s)\n", score,
                   score_agreed ? "every peer agrees" : "peers disagree");
        }
        printf("desyncs: %s\n", desyncs);
        print_desyncs(relay->out);
        printf("disputes: %s%s\n", disputes,
               strcmp(disputes, "0") && strcmp(disputes, "?")
                   ? " (no majority: nobody named; `replay verify` of the recording names who "
                     "was wrong)"
                   : "");
        uint64_t peer_bad = 0;
        for (uint32_t k = 0; k < o->peers; k++) {
            peer_bad += strtoull(rows[k].bad_mac, NULL, 10);
        }
        printf("relay: packets in %s, out %s, malformed %s, bad tag %s, replayed %s; "
               "peers: bad tag %llu\n",
               pin, pout, malformed, bad_mac, replayed, (unsigned long long)peer_bad);
        printf("replay: %s (%s ticks)\n", o->replay, rticks);
    }
    bool rejoin_ok = true;
    if (o->outage) {
        rejoin_ok &= print_rejoin(o, relay, bots, (uint32_t)o->outage_slot);
    }
    if (o->late) {
        rejoin_ok &= print_rejoin(o, relay, bots, (uint32_t)o->late_slot);
    }
    char *verify_out = NULL;
    int verify = run_verify(o->replay, o->json, &verify_out);
    bool desynced = (strcmp(desyncs, "0") != 0 && strcmp(desyncs, "?") != 0) ||
                    (strcmp(disputes, "0") != 0 && strcmp(disputes, "?") != 0);
    // A desync the relay saw, or unequal checksums of bots that all finished, is a
    // verification failure; a bot that did not finish is a runtime failure.
    int status = desynced                      ? CLI_EXIT_MISMATCH
                 : !all_done                   ? CLI_EXIT_ERROR
                 : !equal                      ? CLI_EXIT_MISMATCH
                 : !spectators_ok              ? CLI_EXIT_MISMATCH
                 : !rejoin_ok                  ? CLI_EXIT_MISMATCH
                 : verify == CLI_EXIT_OK       ? CLI_EXIT_OK
                 : verify == CLI_EXIT_MISMATCH ? CLI_EXIT_MISMATCH
                                               : CLI_EXIT_ERROR;
    const char *why = status == CLI_EXIT_OK ? NULL
                      : desynced            ? "the relay reported a desync (or a disputed tick)"
                      : !all_done           ? "a bot did not finish the match"
                      : !equal              ? "the final checksums differ"
                      : !spectators_ok      ? "a spectator did not end on the players' checksum"
                      : !rejoin_ok          ? "the rejoin failed or its switch ticks differ"
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
            if (o->rollback) {
                double frames = strtod(r->frames, NULL), predicted = strtod(r->predicted, NULL);
                json_number_field(&j, "rollbacks", r->rollbacks);
                json_key(&j, "resim_per_frame_mean");
                json_double(&j, frames > 0 ? strtod(r->resim, NULL) / frames : 0.0, 3);
                json_number_field(&j, "resim_per_frame_max", r->resim_max);
                json_key(&j, "prediction_hit_rate");
                json_double(&j, predicted > 0 ? strtod(r->hits, NULL) / predicted : 1.0, 4);
                json_number_field(&j, "time_sync_adjustments", r->sync);
            }
            json_number_field(&j, "named", r->named);
            json_number_field(&j, "disputes", r->disputes);
            json_key(&j, "status");
            strcmp(r->state, "?") ? json_str(&j, r->state) : json_null(&j);
            json_key(&j, "message");
            r->error[0] ? json_str(&j, r->error) : json_null(&j);
            json_object_end(&j);
        }
        json_array_end(&j);
        json_key(&j, "spectators"), json_array_begin(&j);
        for (uint32_t k = 0; k < o->spectators; k++) {
            json_object_begin(&j);
            json_key(&j, "index"), json_u64(&j, k);
            json_number_field(&j, "ticks", vt[k]);
            json_key(&j, "final_checksum");
            strcmp(vsum[k], "?") ? json_str(&j, vsum[k]) : json_null(&j);
            json_number_field(&j, "mismatches", vmis[k]);
            json_key(&j, "status");
            strcmp(vstate[k], "?") ? json_str(&j, vstate[k]) : json_null(&j);
            json_object_end(&j);
        }
        json_array_end(&j);
        json_key(&j, "checksums_equal"), json_bool(&j, equal);
        if (score) {
            json_key(&j, "score"), json_str(&j, score);
            json_key(&j, "score_agreed"), json_bool(&j, score_agreed);
        }
        if (o->outage || o->late) {
            json_key(&j, "rejoin_switch_ticks_agree"), json_bool(&j, rejoin_ok);
        }
        json_number_field(&j, "desyncs", desyncs);
        json_number_field(&j, "disputes", disputes);
        json_desyncs(&j, relay->out);
        json_key(&j, "relay"), json_object_begin(&j);
        json_number_field(&j, "packets_in", pin);
        json_number_field(&j, "packets_out", pout);
        json_number_field(&j, "malformed", malformed);
        json_number_field(&j, "bad_mac", bad_mac);
        json_number_field(&j, "replayed", replayed);
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

// Delete the credential files the relay wrote and their directory.
static void remove_credentials(const match_opts *o)
{
    for (uint32_t k = 0; k < LS_NET_MAX_SLOTS; k++) {
        char path[128];
        snprintf(path, sizeof path, "%s/session-1-slot-%u.cred", o->cred_dir, k);
        unlink(path);
        snprintf(path, sizeof path, "%s/session-1-spectator-%u.cred", o->cred_dir, k);
        unlink(path);
    }
    rmdir(o->cred_dir);
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
        if (o.rollback) {
            printf("mode: rollback, prediction window %llu ticks\n", (unsigned long long)o.window);
        }
        if (o.spectators) {
            printf("spectators: %llu, joining at tick %llu\n", (unsigned long long)o.spectators,
                   (unsigned long long)o.spectator_join);
        }
        printf("faults on every send: loss %.3f dup %.3f reorder %.3f corrupt %.3f delay %u ms "
               "jitter %u ms\n",
               o.fault.loss_ppm / 1e6, o.fault.dup_ppm / 1e6, o.fault.reorder_ppm / 1e6,
               o.fault.corrupt_ppm / 1e6, o.fault.delay_us / 1000, o.fault.jitter_us / 1000);
    }
    proc ps[MAXPROC];
    memset(ps, 0, sizeof ps);
    for (int i = 0; i < MAXPROC; i++) {
        ps[i].fd = -1;
    }
    char creds[LS_NET_MAX_SLOTS][128], spec_creds[LS_NET_MAX_SLOTS][128];
    uint16_t port = 0;
    snprintf(o.cred_dir, sizeof o.cred_dir, "/tmp/lockstep-match-XXXXXX");
    if (!mkdtemp(o.cred_dir)) { // mode 0700: the credentials are for this user's bots only
        fprintf(stderr, "lockstep match: cannot create a private directory in /tmp: %s\n",
                strerror(errno));
        return CLI_EXIT_ERROR;
    }
    if (!start_relay(&o, &ps[0], &port, creds, spec_creds)) {
        if (ps[0].pid > 0) {
            kill(ps[0].pid, SIGTERM);
            waitpid(ps[0].pid, NULL, 0);
        }
        free(ps[0].out);
        remove_credentials(&o);
        return CLI_EXIT_ERROR;
    }
    if (!o.json) {
        printf("relay: 127.0.0.1:%u (pid %ld), recording %s\n", port, (long)ps[0].pid, o.replay);
    }
    int started = 0;
    for (uint32_t k = 0; k < o.peers; k++) {
        started += start_bot(&o, &ps[1 + k], k, port, creds[k]);
    }
    for (uint32_t k = 0; k < o.spectators; k++) {
        started += start_spectator(&o, &ps[1 + o.peers + k], k, port, spec_creds[k]);
    }
    if (!o.json) {
        printf("bots: %d processes started; playing...\n", started);
    }
    fflush(stdout);
    cli_progress bar;
    cli_progress_init(&bar, "match", "ticks (est.)", o.ticks, o.progress);
    uint32_t nproc = 1 + (uint32_t)o.peers + (uint32_t)o.spectators;
    drain_all(ps, (int)nproc, &bar, o.rate);
    cli_progress_done(&bar);
    for (uint32_t i = 0; i < nproc; i++) {
        if (ps[i].pid > 0) {
            waitpid(ps[i].pid, &ps[i].status, 0);
        }
    }
    for (uint32_t i = 0; i < nproc; i++) {
        if (!ps[i].out) {
            append(&ps[i], "", 0);
        }
    }
    remove_credentials(&o);
    int status = summarize(&o, &ps[0], &ps[1]);
    for (int i = 0; i < MAXPROC; i++) {
        free(ps[i].out);
    }
    return status;
}
