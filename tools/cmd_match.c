// SPDX-License-Identifier: MIT
// `lockstep match`: the end-to-end demo. Starts a relay and N bot processes on
// loopback, plays the arena in lockstep, then prints every peer's final
// checksum, the desync count, per-peer RTT and packets, the replay path and the
// result of `lockstep replay verify` on it.
#define _POSIX_C_SOURCE 200809L
#include "cli.h"
#include "ls/net_wire.h"
#include "net_tool.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

const cli_command cmd_match_def = {
    "match", "demo match: a relay and N bot processes on loopback, then replay verify",
    "[--peers N] [--ticks N] [--tick-rate HZ] [--delay D] [--max-lead N] [--scene FILE]\n"
    "       [--seed S] [--replay PATH] [--timeout MS] [--perturb SLOT:TICK] [fault options]\n\n"
    "  --peers N          bot processes, 2..16 (default 4; the arena has 4 player bodies)\n"
    "  --ticks N          match length (default 1200)\n"
    "  --tick-rate HZ     real-time tick rate (default 60)\n"
    "  --delay D          input delay in ticks (default 3)\n"
    "  --max-lead N       bot lead bound in ticks (default 8)\n"
    "  --scene FILE       default tools/scenes/arena.scene\n"
    "  --seed S           seed of the bots' pushes (default 1)\n"
    "  --replay PATH      where the relay records (default /tmp/lockstep-match-PID.lsr)\n"
    "  --timeout MS       disconnect timeout (default 3000)\n"
    "  --perturb K:T      bot K diverges on purpose at tick T (the relay must name "
    "T)\n" NET_FAULT_USAGE
    "Fault options apply to every process's sends (relay and bots, each its own seed).",
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
    bool perturb;
    const char *scene;
    char replay[4096];
    ls_net_fault_def fault;
} match_opts;

static char exe[4096];

static bool spawn(proc *p, char **argv)
{
    int fds[2];
    if (pipe(fds) != 0) {
        perror("pipe");
        return false;
    }
    fflush(stdout);
    p->pid = fork();
    if (p->pid < 0) {
        perror("fork");
        return false;
    }
    if (p->pid == 0) {
        dup2(fds[1], STDOUT_FILENO);
        close(fds[0]);
        close(fds[1]);
        execv(exe, argv);
        perror(exe);
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

// Drain every process's output until all close (no pipe can fill and stall a child).
static void drain_all(proc *ps, int n)
{
    struct pollfd fds[MAXPROC];
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
        if (poll(fds, (nfds_t)n, -1) < 0) {
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

static bool parse(int argc, char **argv, match_opts *o)
{
    memset(o, 0, sizeof *o);
    o->peers = 4, o->ticks = 1200, o->rate = 60, o->delay = 3, o->lead = 8, o->seed = 1;
    o->timeout = 3000;
    o->scene = "tools/scenes/arena.scene";
    o->fault.seed = 1;
    snprintf(o->replay, sizeof o->replay, "/tmp/lockstep-match-%ld.lsr", (long)getpid());
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        bool ok = true;
        if (net_cli_fault_option("match", argc, argv, &i, &o->fault, &ok)) {
        } else if (!v) {
            fprintf(stderr, "lockstep match: unexpected argument '%s'\n", a);
            return false;
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
        } else if (strcmp(a, "--perturb") == 0) {
            unsigned long long k, t;
            char extra;
            ok = sscanf(v, "%llu:%llu%c", &k, &t, &extra) == 2 && k < LS_NET_MAX_SLOTS &&
                 t <= UINT32_MAX;
            if (!ok) {
                fprintf(stderr, "lockstep match: --perturb wants SLOT:TICK\n");
            }
            o->perturb = true, o->perturb_slot = k, o->perturb_tick = t, i++;
        } else {
            fprintf(stderr, "lockstep match: unexpected argument '%s'\n", a);
            return false;
        }
        if (!ok) {
            return false;
        }
    }
    if (access(o->scene, R_OK) != 0) {
        fprintf(stderr, "lockstep match: cannot read scene %s\n", o->scene);
        return false;
    }
    return true;
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
    if (!spawn(relay, a.v) || !read_until(relay, "ready")) {
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
    return spawn(p, a.v);
}

static int run_verify(const char *path)
{
    proc v;
    memset(&v, 0, sizeof v);
    char *argv[] = {"lockstep", "replay", "verify", (char *)(uintptr_t)path, NULL};
    if (!spawn(&v, argv)) {
        return 1;
    }
    drain_all(&v, 1);
    waitpid(v.pid, &v.status, 0);
    printf("verify: lockstep replay verify %s\n", path);
    for (const char *l = v.out; l && *l;) {
        const char *e = strchr(l, '\n');
        int n = e ? (int)(e - l) : (int)strlen(l);
        printf("  | %.*s\n", n, l);
        l = e ? e + 1 : NULL;
    }
    bool ok = WIFEXITED(v.status) && WEXITSTATUS(v.status) == 0;
    printf("verify result: %s\n", ok ? "OK" : "FAILED");
    free(v.out);
    return ok ? 0 : 1;
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

static int summarize(const match_opts *o, proc *relay, proc *bots)
{
    printf("\n%-4s %-6s %-18s %-11s %-11s %-9s %-9s %-7s %s\n", "peer", "ticks", "final checksum",
           "rtt(relay)", "rtt(peer)", "pkts out", "pkts in", "drops", "status");
    bool equal = true, all_done = true;
    char first[32] = "";
    for (uint32_t k = 0; k < o->peers; k++) {
        char ticks[32], sum[32], rtt_peer[32], out[32], in[32], state[32], rtt_relay[32], drops[32],
            slot[16];
        snprintf(slot, sizeof slot, "slot=%u ", k);
        field(bots[k].out, "result", NULL, "ticks", ticks, sizeof ticks);
        field(bots[k].out, "result", NULL, "checksum", sum, sizeof sum);
        field(bots[k].out, "result", NULL, "rtt_us", rtt_peer, sizeof rtt_peer);
        field(bots[k].out, "result", NULL, "packets_out", out, sizeof out);
        field(bots[k].out, "result", NULL, "packets_in", in, sizeof in);
        field(bots[k].out, "result", NULL, "state", state, sizeof state);
        field(relay->out, "stats session=1", slot, "rtt_us", rtt_relay, sizeof rtt_relay);
        field(relay->out, "stats session=1", slot, "drops", drops, sizeof drops);
        char rr[32], rp[32];
        snprintf(rr, sizeof rr, "%.3f ms", strtod(rtt_relay, NULL) / 1000.0);
        snprintf(rp, sizeof rp, "%.3f ms", strtod(rtt_peer, NULL) / 1000.0);
        printf("%-4u %-6s %-18s %-11s %-11s %-9s %-9s %-7s %s\n", k, ticks, sum, rr, rp, out, in,
               drops, state);
        if (k == 0) {
            snprintf(first, sizeof first, "%s", sum);
        }
        equal &= strcmp(first, sum) == 0 && strcmp(sum, "?") != 0;
        all_done &= strcmp(state, "finished") == 0 && strtoull(ticks, NULL, 10) == o->ticks;
    }
    char desyncs[32], malformed[32], pin[32], pout[32], rticks[32];
    field(relay->out, "stats relay", NULL, "desyncs", desyncs, sizeof desyncs);
    field(relay->out, "stats relay", NULL, "malformed", malformed, sizeof malformed);
    field(relay->out, "stats relay", NULL, "packets_in", pin, sizeof pin);
    field(relay->out, "stats relay", NULL, "packets_out", pout, sizeof pout);
    field(relay->out, "replay", NULL, "ticks", rticks, sizeof rticks);
    printf("\nall %llu final checksums equal: %s\n", (unsigned long long)o->peers,
           equal ? "yes" : "NO");
    printf("desyncs: %s\n", desyncs);
    print_desyncs(relay->out);
    printf("relay: packets in %s, out %s, malformed %s\n", pin, pout, malformed);
    printf("replay: %s (%s ticks)\n", o->replay, rticks);
    int verify = run_verify(o->replay);
    bool ok = equal && all_done && strcmp(desyncs, "0") == 0 && verify == 0;
    printf("match: %s\n", ok ? "OK" : "FAILED");
    return ok ? 0 : 1;
}

int cmd_match(int argc, char **argv)
{
    match_opts o;
    if (!parse(argc, argv, &o)) {
        return 2;
    }
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        fprintf(stderr, "lockstep match: cannot find my own executable\n");
        return 1;
    }
    exe[n] = '\0';
    printf("match: %llu bots, %llu ticks at %llu Hz, input delay %llu, scene %s, seed %llu\n",
           (unsigned long long)o.peers, (unsigned long long)o.ticks, (unsigned long long)o.rate,
           (unsigned long long)o.delay, o.scene, (unsigned long long)o.seed);
    printf("faults on every send: loss %.3f dup %.3f reorder %.3f delay %u ms jitter %u ms\n",
           o.fault.loss_ppm / 1e6, o.fault.dup_ppm / 1e6, o.fault.reorder_ppm / 1e6,
           o.fault.delay_us / 1000, o.fault.jitter_us / 1000);
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
        return 1;
    }
    printf("relay: 127.0.0.1:%u (pid %ld), recording %s\n", port, (long)ps[0].pid, o.replay);
    int started = 0;
    for (uint32_t k = 0; k < o.peers; k++) {
        started += start_bot(&o, &ps[1 + k], k, port, tokens[k]);
    }
    printf("bots: %d processes started; playing...\n", started);
    fflush(stdout);
    drain_all(ps, 1 + (int)o.peers);
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
