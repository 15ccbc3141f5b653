// SPDX-License-Identifier: MIT
// The `lockstep` command line (the tool next to this test binary): every
// command's --help, the exit statuses (0 ok, 1 runtime error, 2 usage error,
// 3 verification failure, 4 partial), one clear message per bad argument, --json checked
// by a strict JSON parser, progress lines only on a terminal, and installed
// scenes found through $LOCKSTEP_DATA. Issue 17.
#define _GNU_SOURCE
#include "test_proc.h"
#include "test_tool.h"
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ls/checksum.h"
#include "ls/net_auth.h"
#include "ls/replay.h"
#include "ls/scene.h"

static char tool[4096];
static char dir[256];
static char root[4096];

// ---- a strict JSON validator (RFC 8259): objects, arrays, strings, numbers,
// true, false, null; nothing may follow the document but whitespace ----

typedef struct json_parser {
    const char *p;
    int depth;
} json_parser;

static bool json_value(json_parser *j);

static void json_ws(json_parser *j)
{
    while (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r') {
        j->p++;
    }
}

static bool json_hex4(const char *s)
{
    for (int i = 0; i < 4; i++) {
        char c = s[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) {
            return false;
        }
    }
    return true;
}

// One UTF-8 sequence of 2..4 bytes (no overlongs, surrogates or > U+10FFFF).
static bool json_utf8(json_parser *j)
{
    const unsigned char *s = (const unsigned char *)j->p;
    unsigned c = s[0];
    int n = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
    if (n == 0 || (n == 2 && c < 0xC2) || (n == 4 && c > 0xF4)) {
        return false;
    }
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80) {
            return false;
        }
    }
    if ((n == 3 && c == 0xE0 && s[1] < 0xA0) || (n == 3 && c == 0xED && s[1] >= 0xA0) ||
        (n == 4 && c == 0xF0 && s[1] < 0x90) || (n == 4 && c == 0xF4 && s[1] >= 0x90)) {
        return false;
    }
    j->p += n;
    return true;
}

static bool json_string(json_parser *j)
{
    if (*j->p != '"') {
        return false;
    }
    j->p++;
    for (;;) {
        unsigned char c = (unsigned char)*j->p;
        if (c == '"') {
            j->p++;
            return true;
        }
        if (c < 0x20) {
            return false; // control characters (and the end of the text) must be escaped
        }
        if (c == '\\') {
            char e = j->p[1];
            if (e == 'u') {
                if (!json_hex4(j->p + 2)) {
                    return false;
                }
                j->p += 6;
            } else if (e && strchr("\"\\/bfnrt", e)) {
                j->p += 2;
            } else {
                return false;
            }
        } else if (c >= 0x80) {
            if (!json_utf8(j)) {
                return false;
            }
        } else {
            j->p++;
        }
    }
}

static bool json_digits(json_parser *j)
{
    if (*j->p < '0' || *j->p > '9') {
        return false;
    }
    while (*j->p >= '0' && *j->p <= '9') {
        j->p++;
    }
    return true;
}

static bool json_number(json_parser *j)
{
    if (*j->p == '-') {
        j->p++;
    }
    if (*j->p == '0') {
        j->p++;
    } else if (!json_digits(j)) {
        return false;
    }
    if (*j->p == '.') {
        j->p++;
        if (!json_digits(j)) {
            return false;
        }
    }
    if (*j->p == 'e' || *j->p == 'E') {
        j->p++;
        if (*j->p == '+' || *j->p == '-') {
            j->p++;
        }
        if (!json_digits(j)) {
            return false;
        }
    }
    return true;
}

static bool json_members(json_parser *j, char close, bool object)
{
    j->p++;
    json_ws(j);
    if (*j->p == close) {
        j->p++;
        return true;
    }
    for (;;) {
        json_ws(j);
        if (object) {
            if (!json_string(j)) {
                return false;
            }
            json_ws(j);
            if (*j->p++ != ':') {
                return false;
            }
        }
        if (!json_value(j)) {
            return false;
        }
        json_ws(j);
        if (*j->p == ',') {
            j->p++;
        } else if (*j->p == close) {
            j->p++;
            return true;
        } else {
            return false;
        }
    }
}

static bool json_value(json_parser *j)
{
    json_ws(j);
    if (++j->depth > 64) {
        return false;
    }
    bool ok;
    char c = *j->p;
    if (c == '{') {
        ok = json_members(j, '}', true);
    } else if (c == '[') {
        ok = json_members(j, ']', false);
    } else if (c == '"') {
        ok = json_string(j);
    } else if (c == '-' || (c >= '0' && c <= '9')) {
        ok = json_number(j);
    } else if (strncmp(j->p, "true", 4) == 0 || strncmp(j->p, "null", 4) == 0) {
        j->p += 4, ok = true;
    } else if (strncmp(j->p, "false", 5) == 0) {
        j->p += 5, ok = true;
    } else {
        ok = false;
    }
    j->depth--;
    return ok;
}

// True when text is exactly one JSON value (surrounding whitespace allowed).
static bool json_valid(const char *text)
{
    json_parser j = {text, 0};
    if (!json_value(&j)) {
        return false;
    }
    json_ws(&j);
    return *j.p == '\0';
}

Test(cli, the_json_validator_is_strict)
{
    static const char *const good[] = {"{}",
                                       "[]",
                                       "0",
                                       "-0.5",
                                       "1e-5",
                                       "\"a\\u00e9\\n\"",
                                       "{\"a\":[1,2,{\"b\":null}],\"c\":true}",
                                       " {\"x\" : false} \n",
                                       "\"\xc3\xa9\"",
                                       "[-1.25E+3]"};
    static const char *const bad[] = {
        "",          "{",       "{\"a\":1,}", "[1,]",      "01",    "1.",    ".5",  "+1",
        "\"\t\"",    "\"\\x\"", "{a:1}",      "{\"a\" 1}", "[1] x", "{} {}", "tru", "\"\xff\"",
        "\"\\u12\"", "'a'",     "[1 2]",      "nul",       "\"abc", "NaN",   "-",   "1e"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        cr_assert(json_valid(good[i]), "valid: %s", good[i]);
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_assert(!json_valid(bad[i]), "invalid: %s", bad[i]);
    }
}

// ---- running the tool ----

static void setup(void)
{
    test_find_tool(tool, sizeof tool);
    cr_assert_not_null(getcwd(root, sizeof root)); // tests run from the repository root
    snprintf(dir, sizeof dir, "/tmp/ls_test_cli_%ld", (long)getpid());
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "rm -rf %s && mkdir -p %s", dir, dir);
    cr_assert_eq(system(cmd), 0);
}

static void teardown(void)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(cli, .init = setup, .fini = teardown);

typedef struct run_result {
    int status;
    char *out; // stdout
    char *err; // stderr
} run_result;

static void append(char **buf, size_t *len, size_t *cap, const char *data, size_t n)
{
    if (*len + n + 1 > *cap) {
        *cap = (*cap + n) * 2 + 4096;
        *buf = realloc(*buf, *cap);
        cr_assert_not_null(*buf);
    }
    memcpy(*buf + *len, data, n);
    *len += n;
    (*buf)[*len] = '\0';
}

// Run the tool in dir (or cwd if NULL) with env ("NAME=VALUE" or NULL) and the
// NULL-terminated arguments; stdout and stderr are pipes (never terminals).
static run_result run_in(const char *cwd, const char *env, const char *const *args)
{
    int o[2], e[2];
    cr_assert_eq(pipe(o), 0);
    cr_assert_eq(pipe(e), 0);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        dup2(o[1], 1);
        dup2(e[1], 2);
        close(o[0]), close(o[1]), close(e[0]), close(e[1]);
        if (cwd && chdir(cwd) != 0) {
            _exit(126);
        }
        unsetenv("LOCKSTEP_DATA");
        if (env) {
            putenv((char *)(uintptr_t)env);
        }
        char *argv[64];
        int n = 0;
        argv[n++] = tool;
        for (; args[n - 1] && n < 63; n++) {
            argv[n] = (char *)(uintptr_t)args[n - 1];
        }
        argv[n] = NULL;
        execv(tool, argv);
        _exit(127);
    }
    close(o[1]);
    close(e[1]);
    run_result r = {0, NULL, NULL};
    size_t ol = 0, oc = 0, el = 0, ec = 0;
    append(&r.out, &ol, &oc, "", 0);
    append(&r.err, &el, &ec, "", 0);
    struct pollfd fds[2] = {{o[0], POLLIN, 0}, {e[0], POLLIN, 0}};
    while (fds[0].fd >= 0 || fds[1].fd >= 0) {
        if (poll(fds, 2, -1) < 0) {
            continue;
        }
        for (int i = 0; i < 2; i++) {
            if (fds[i].fd < 0 || !fds[i].revents) {
                continue;
            }
            char buf[4096];
            ssize_t got = read(fds[i].fd, buf, sizeof buf);
            if (got <= 0) {
                close(fds[i].fd);
                fds[i].fd = -1;
            } else if (i == 0) {
                append(&r.out, &ol, &oc, buf, (size_t)got);
            } else {
                append(&r.err, &el, &ec, buf, (size_t)got);
            }
        }
    }
    int st;
    waitpid(pid, &st, 0);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
    return r;
}

#define RUN(...)         run_in(NULL, NULL, (const char *const[]){__VA_ARGS__, NULL})
#define RUN_IN(cwd, ...) run_in(cwd, NULL, (const char *const[]){__VA_ARGS__, NULL})

static void run_free(run_result *r)
{
    free(r->out);
    free(r->err);
}

static int count(const char *haystack, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(haystack, needle); p; p = strstr(p + 1, needle)) {
        n++;
    }
    return n;
}

static int lines(const char *text)
{
    return count(text, "\n");
}

// A usage error: status 2, nothing on stdout, one line on stderr naming `what`.
static void assert_usage_error(run_result r, const char *what)
{
    cr_assert_eq(r.status, 2, "status %d, stderr: %s", r.status, r.err);
    cr_assert_str_empty(r.out, "%s", r.out);
    cr_assert_eq(lines(r.err), 1, "one message: %s", r.err);
    cr_assert(strstr(r.err, what), "'%s' named in: %s", what, r.err);
}

// Run, check it is a usage error naming `what`, free.
#define USAGE_ERROR(what, ...)                                                                     \
    do {                                                                                           \
        run_result r_ = RUN(__VA_ARGS__);                                                          \
        assert_usage_error(r_, what);                                                              \
        run_free(&r_);                                                                             \
    } while (0)

static void record(const char *name)
{
    char scene[4200], out[512];
    snprintf(scene, sizeof scene, "%s/tools/scenes/arena.scene", root);
    snprintf(out, sizeof out, "%s/%s", dir, name);
    run_result r = RUN("replay", "record", scene, "--ticks", "400", "--seed", "11",
                       "--keyframe-interval", "100", "--out", out);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
}

// A path in the test's directory, in a ring of 4 buffers: valid until the
// fourth call after it (copy a path a test keeps while it polls files).
static char *path_in_dir(const char *name)
{
    static char buf[4][512];
    static int next;
    char *p = buf[next++ % 4];
    snprintf(p, 512, "%s/%s", dir, name);
    return p;
}

// ---- --help everywhere ----

Test(cli, every_command_and_replay_subcommand_has_its_own_help)
{
    static const char *const cmds[][2] = {
        {"sim", NULL},      {"demo", NULL},       {"fx", NULL},        {"relay", NULL},
        {"bot", NULL},      {"match", NULL},      {"render", NULL},    {"version", NULL},
        {"replay", NULL},   {"replay", "record"}, {"replay", "info"},  {"replay", "verify"},
        {"replay", "dump"}, {"replay", "diff"},   {"replay", "tamper"}};
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        char want[64];
        snprintf(want, sizeof want, "usage: lockstep %s%s%s ", cmds[i][0], cmds[i][1] ? " " : "",
                 cmds[i][1] ? cmds[i][1] : "");
        run_result r =
            cmds[i][1] ? RUN(cmds[i][0], cmds[i][1], "--help") : RUN(cmds[i][0], "--help");
        cr_assert_eq(r.status, 0, "%s: %s", want, r.err);
        cr_assert_eq(strncmp(r.out, want, strlen(want)), 0, "want '%s', got: %s", want, r.out);
        cr_assert_gt(lines(r.out), 2, "usage, options and a description: %s", r.out);
        run_free(&r);
    }
    // Every command `lockstep --help` lists, including ones added later.
    run_result r = RUN("--help");
    const char *l = strstr(r.out, "commands:\n");
    cr_assert_not_null(l, "%s", r.out);
    int listed = 0;
    for (l = strchr(l, '\n') + 1; strncmp(l, "  ", 2) == 0; l = strchr(l, '\n') + 1, listed++) {
        char name[32], want[64];
        cr_assert_eq(sscanf(l, " %31s", name), 1);
        snprintf(want, sizeof want, "usage: lockstep %s ", name);
        run_result c = RUN(name, "--help");
        cr_assert_eq(c.status, 0, "%s --help: %s", name, c.err);
        cr_assert_eq(strncmp(c.out, want, strlen(want)), 0, "want '%s', got: %s", want, c.out);
        run_free(&c);
    }
    cr_assert_geq(listed, 9, "%s", r.out);
    run_free(&r);
    // -h anywhere on the line, even after other arguments.
    r = RUN("replay", "verify", "x.lsr", "-h");
    cr_assert_eq(r.status, 0);
    cr_assert(strstr(r.out, "usage: lockstep replay verify FILE"), "%s", r.out);
    run_free(&r);
}

Test(cli, top_level_help_documents_the_exit_statuses_and_json)
{
    run_result r = RUN("--help");
    cr_assert_eq(r.status, 0);
    cr_assert(strstr(r.out, "exit status"), "%s", r.out);
    cr_assert(strstr(r.out, "0  success"), "%s", r.out);
    cr_assert(strstr(r.out, "1  runtime error"), "%s", r.out);
    cr_assert(strstr(r.out, "2  usage error"), "%s", r.out);
    cr_assert(strstr(r.out, "3  verification failure"), "%s", r.out);
    cr_assert(strstr(r.out, "4  partial: replay verify"), "%s", r.out);
    cr_assert(strstr(r.out, "--json"), "%s", r.out);
    cr_assert(strstr(r.out, "match, relay, bot, version"), "%s", r.out);
    run_free(&r);
    r = RUN("no-such-command");
    cr_assert_eq(r.status, 2);
    cr_assert(strstr(r.err, "unknown command 'no-such-command'"), "%s", r.err);
    run_free(&r);
    r = run_in(NULL, NULL, (const char *const[]){NULL});
    cr_assert_eq(r.status, 2, "no command is a usage error");
    run_free(&r);
}

// ---- usage errors (2): one message naming the option ----

Test(cli, bad_arguments_are_usage_errors_naming_the_option)
{
    char scene[4200];
    snprintf(scene, sizeof scene, "%s/tools/scenes/six_box_tower.scene", root);
    USAGE_ERROR("--ticks needs a value", "sim", scene, "--ticks");
    USAGE_ERROR("--ticks wants an integer", "sim", scene, "--ticks", "ten");
    USAGE_ERROR("unknown option '--bogus'", "sim", scene, "--bogus");
    USAGE_ERROR("missing SCENE", "sim");
    USAGE_ERROR("--ticks wants an integer 1..1000000", "demo", "--ticks", "0");
    USAGE_ERROR("unknown operation 'nope'", "fx", "nope", "1");
    USAGE_ERROR("add takes 2 operands", "fx", "add", "1");
    USAGE_ERROR("operand B: 'x'", "fx", "add", "1", "x");
    USAGE_ERROR("missing subcommand", "replay");
    USAGE_ERROR("unknown subcommand 'frobnicate'", "replay", "frobnicate");
    USAGE_ERROR("--jobs needs a value", "replay", "verify", "--jobs");
    USAGE_ERROR("--jobs wants an integer 1..64", "replay", "verify", "x.lsr", "--jobs", "65");
    USAGE_ERROR("missing --seed S", "replay", "record", scene, "--ticks", "5");
    USAGE_ERROR("missing --tick T", "replay", "tamper", "a.lsr", "b.lsr");
    USAGE_ERROR("--slots wants an integer 2..16", "relay", "--slots", "99");
    USAGE_ERROR("--scene needs a value", "relay", "--scene");
    USAGE_ERROR("missing --credential FILE", "bot", "--relay", "127.0.0.1:7");
    USAGE_ERROR("--first-seq wants an integer 1..18446744069414584319, got '0'", "bot", "--relay",
                "127.0.0.1:7", "--credential", "x", "--first-seq", "0");
    USAGE_ERROR("--loss wants a probability 0..1", "match", "--loss", "2");
    USAGE_ERROR("unknown option '--yaml'", "version", "--yaml");
}

Test(cli, sim_trace_past_the_last_body_is_a_usage_error)
{
    char scene[4200];
    snprintf(scene, sizeof scene, "%s/tools/scenes/six_box_tower.scene", root);
    run_result r = RUN("sim", scene, "--trace", "99", "--ticks", "5");
    assert_usage_error(r, "--trace 99");
    cr_assert(strstr(r.err, "has 7 bodies (1..7)"), "%s", r.err);
    run_free(&r);
    r = RUN("sim", scene, "--trace", "0");
    assert_usage_error(r, "--trace wants an integer 1..");
    run_free(&r);
    r = RUN("sim", scene, "--trace", "7", "--ticks", "2");
    cr_assert_eq(r.status, 0, "the last body is fine: %s", r.err);
    run_free(&r);
}

Test(cli, fx_refuses_operands_outside_the_domain)
{
    run_result r = RUN("fx", "sqrt", "-1");
    assert_usage_error(r, "sqrt wants A >= 0, got '-1'");
    run_free(&r);
    r = RUN("fx", "asin", "1.5");
    assert_usage_error(r, "asin wants A in -1..1");
    run_free(&r);
    r = RUN("fx", "div", "1", "0");
    assert_usage_error(r, "division by zero");
    run_free(&r);
    r = RUN("fx", "sqrt", "2");
    cr_assert_eq(r.status, 0);
    cr_assert_eq(strncmp(r.out, "1.41422  (raw 0x00016a0a", 24), 0, "%s", r.out);
    run_free(&r);
    r = RUN("fx", "mul", "30000", "2");
    cr_assert_eq(r.status, 3, "overflow is a failed check: %s", r.out);
    cr_assert(strstr(r.out, "OVERFLOW (saturated)"), "%s", r.out);
    run_free(&r);
}

Test(cli, replay_dump_from_after_to_is_a_usage_error)
{
    run_result r = RUN("replay", "dump", "whatever.lsr", "--from", "10", "--to", "5");
    assert_usage_error(r, "--to 5 is before --from 10");
    run_free(&r);
}

Test(cli, relay_bind_with_a_bad_port_is_a_usage_error)
{
    run_result r = RUN("relay", "--bind", "127.0.0.1:99999");
    assert_usage_error(r, "port must be 0..65535");
    cr_assert(strstr(r.err, "99999"), "%s", r.err);
    run_free(&r);
    r = RUN("relay", "--bind", "localhost-ish:7777");
    assert_usage_error(r, "is not an IPv4 address");
    run_free(&r);
    r = RUN("relay", "--bind", "127.0.0.1");
    assert_usage_error(r, "--bind wants HOST:PORT");
    run_free(&r);
}

Test(cli, relay_workers_out_of_range_is_a_usage_error)
{
    run_result r = RUN("relay", "--workers", "0");
    assert_usage_error(r, "--workers wants an integer 1..64, got '0'");
    run_free(&r);
    r = RUN("relay", "--workers", "65");
    assert_usage_error(r, "--workers wants an integer 1..64, got '65'");
    run_free(&r);
    r = RUN("relay", "--workers", "two");
    assert_usage_error(r, "--workers wants an integer 1..64");
    run_free(&r);
    r = RUN("relay", "--workers");
    assert_usage_error(r, "--workers needs a value");
    run_free(&r);
    // Worker K binds --bind's port + K: all of them must be ports.
    r = RUN("relay", "--bind", "127.0.0.1:65534", "--workers", "3");
    assert_usage_error(r, "--workers 3 binds ports 65534..65536: past 65535");
    run_free(&r);
}

// A free UDP port P on 127.0.0.1 with P + 1 taken by the socket *held (closed by the caller).
static uint16_t udp_port_below_a_taken_one(int *held)
{
    for (int attempt = 0; attempt < 50; attempt++) {
        int fd = socket(AF_INET, SOCK_DGRAM, 0);
        cr_assert_geq(fd, 0);
        struct sockaddr_in a;
        memset(&a, 0, sizeof a);
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
        socklen_t n = sizeof a;
        cr_assert_eq(getsockname(fd, (struct sockaddr *)&a, &n), 0);
        uint16_t taken = ntohs(a.sin_port);
        int probe = socket(AF_INET, SOCK_DGRAM, 0);
        a.sin_port = htons((uint16_t)(taken - 1));
        bool free_below = taken > 1024 && bind(probe, (struct sockaddr *)&a, sizeof a) == 0;
        close(probe);
        if (free_below) {
            *held = fd;
            return (uint16_t)(taken - 1);
        }
        close(fd);
    }
    cr_assert_fail("no free UDP port below a taken one");
    return 0;
}

Test(cli, relay_workers_take_a_port_each_and_one_worker_prints_as_before)
{
    // --workers 2 --sessions 2: session 2 goes to worker 1, on its own port, which
    // the log and the --json summary give; --workers 1 prints no worker at all.
    // Nobody joins: the join timeout ends the sessions and --exit-when-done exits.
    run_result r = RUN("relay", "--workers", "2", "--sessions", "2", "--slots", "2",
                       "--join-timeout", "50", "--exit-when-done", "--json");
    cr_assert_eq(r.status, 0, "%s", r.err);
    unsigned p0 = 0, p1 = 0, s1 = 0, s2 = 0;
    const char *l0 = strstr(r.err, "listening 127.0.0.1:");
    const char *l1 = strstr(r.err, "\nworker 1 listening 127.0.0.1:");
    const char *a1 = strstr(r.err, "\nsession 1 relay 127.0.0.1:");
    const char *a2 = strstr(r.err, "\nsession 2 relay 127.0.0.1:");
    cr_assert(l0 && sscanf(l0, "listening 127.0.0.1:%u", &p0) == 1, "%s", r.err);
    cr_assert(l1 && sscanf(l1, "\nworker 1 listening 127.0.0.1:%u", &p1) == 1, "%s", r.err);
    cr_assert(a1 && sscanf(a1, "\nsession 1 relay 127.0.0.1:%u worker 0", &s1) == 1, "%s", r.err);
    cr_assert(a2 && sscanf(a2, "\nsession 2 relay 127.0.0.1:%u worker 1", &s2) == 1, "%s", r.err);
    cr_assert(p0 != p1 && s1 == p0 && s2 == p1, "%s", r.err);
    char want[128];
    snprintf(want, sizeof want,
             "\"workers\":[\"127.0.0.1:%u\",\"127.0.0.1:%u\"],\"result\":\"ok\"}", p0, p1);
    cr_assert(strstr(r.out, want), "%s", r.out);
    cr_assert(strstr(r.out, "\"replay\":null,\"worker\":1}"), "%s", r.out);
    run_free(&r);
    r = RUN("relay", "--workers", "1", "--sessions", "2", "--slots", "2", "--join-timeout", "50",
            "--exit-when-done", "--json");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_null(strstr(r.err, "worker"), "%s", r.err);
    cr_assert_null(strstr(r.out, "worker"), "%s", r.out);
    cr_assert(strstr(r.err, "\ncredential 2 1 lockstep-credential 2 session=2 slot=1"), "%s",
              r.err);
    run_free(&r);
    // --bind PORT: worker K on PORT + K; one taken is an error naming the worker.
    int held;
    uint16_t port = udp_port_below_a_taken_one(&held);
    char bind_arg[64];
    snprintf(bind_arg, sizeof bind_arg, "127.0.0.1:%u", port);
    r = RUN("relay", "--bind", bind_arg, "--workers", "2");
    close(held);
    cr_assert_eq(r.status, 1, "%s", r.err);
    snprintf(want, sizeof want, "lockstep relay: --bind %s, worker 1 (port %u): ", bind_arg,
             port + 1);
    cr_assert(strstr(r.err, want), "%s", r.err);
    run_free(&r);
}

Test(cli, match_perturb_outside_the_match_is_a_usage_error)
{
    run_result r = RUN("match", "--peers", "4", "--perturb", "9:10");
    assert_usage_error(r, "slot 9 is out of range");
    cr_assert(strstr(r.err, "4 peers (slots 0..3)"), "%s", r.err);
    run_free(&r);
    r = RUN("match", "--ticks", "100", "--perturb", "1:100");
    assert_usage_error(r, "tick 100 is out of range");
    run_free(&r);
    r = RUN("match", "--perturb", "1-5");
    assert_usage_error(r, "--perturb wants SLOT:TICK");
    run_free(&r);
}

// ---- runtime errors (1): one message, the path once ----

Test(cli, a_directory_as_scene_is_one_runtime_error)
{
    run_result r = RUN_IN(dir, "sim", ".");
    cr_assert_eq(r.status, 1, "%s", r.err);
    cr_assert_eq(lines(r.err), 1, "%s", r.err);
    cr_assert(strstr(r.err, "lockstep sim: .: cannot read: Is a directory [LS_ERR_IO]"), "%s",
              r.err);
    run_free(&r);
    cr_assert_eq(system("mkdir -p /tmp/ls_test_cli_adir"), 0);
    r = RUN("sim", "/tmp/ls_test_cli_adir");
    cr_assert_eq(r.status, 1);
    cr_assert_eq(count(r.err, "ls_test_cli_adir"), 1, "the path once: %s", r.err);
    run_free(&r);
    // The relay reads the scene it embeds in recordings.
    r = RUN("relay", "--scene", "/tmp/ls_test_cli_adir", "--record", path_in_dir("r.lsr"));
    cr_assert_eq(r.status, 1, "%s", r.err);
    cr_assert_eq(lines(r.err), 1, "%s", r.err);
    cr_assert_eq(count(r.err, "ls_test_cli_adir"), 1, "the path once: %s", r.err);
    cr_assert(strstr(r.err, "Is a directory"), "%s", r.err);
    run_free(&r);
    r = RUN("sim", "/tmp/ls_test_cli_missing.scene");
    cr_assert_eq(r.status, 1);
    cr_assert_eq(lines(r.err), 1, "%s", r.err);
    cr_assert_eq(count(r.err, "ls_test_cli_missing.scene"), 1, "%s", r.err);
    run_free(&r);
    r = RUN("replay", "info", path_in_dir("missing.lsr"));
    cr_assert_eq(r.status, 1);
    cr_assert_eq(lines(r.err), 1, "%s", r.err);
    cr_assert(strstr(r.err, "lockstep replay info: "), "names the subcommand: %s", r.err);
    cr_assert_eq(count(r.err, "missing.lsr"), 1, "%s", r.err);
    run_free(&r);
    cr_assert_eq(system("rmdir /tmp/ls_test_cli_adir"), 0);
}

Test(cli, a_bot_whose_relay_is_silent_says_so, .timeout = 30)
{
    // A UDP socket that never answers stands in for a dead relay.
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    cr_assert_geq(fd, 0);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    socklen_t len = sizeof a;
    cr_assert_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    char relay[64], scene[4200];
    snprintf(relay, sizeof relay, "127.0.0.1:%u", ntohs(a.sin_port));
    snprintf(scene, sizeof scene, "%s/tools/scenes/arena.scene", root);
    ls_net_credential cred = {1, 0, LS_NET_ROLE_PLAYER, {1}};
    char *cpath = path_in_dir("bot.cred");
    unlink(cpath);
    cr_assert_eq(ls_net_credential_write(cpath, &cred, NULL), LS_OK);
    run_result r = RUN("bot", "--relay", relay, "--credential", cpath, "--scene", scene,
                       "--relay-timeout", "1");
    close(fd);
    cr_assert_eq(r.status, 1, "%s", r.err);
    cr_assert_eq(lines(r.err), 1, "%s", r.err);
    cr_assert(strstr(r.err, "no answer from the relay at "), "%s", r.err);
    cr_assert(strstr(r.err, relay), "%s", r.err);
    cr_assert(strstr(r.err, " in 1 s"), "%s", r.err);
    run_free(&r);
}

// ---- verification failures (3) ----

Test(cli, verification_failures_exit_3)
{
    record("m.lsr");
    run_result r = RUN("replay", "tamper", path_in_dir("m.lsr"), path_in_dir("t.lsr"), "--tick",
                       "150", "--player", "1");
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    r = RUN("replay", "verify", path_in_dir("t.lsr"));
    cr_assert_eq(r.status, 3, "%s", r.out);
    cr_assert_eq(strncmp(r.out, "DESYNC at tick 150", 18), 0, "%s", r.out);
    run_free(&r);
    r = RUN("replay", "diff", path_in_dir("m.lsr"), path_in_dir("t.lsr"));
    cr_assert_eq(r.status, 3, "%s", r.out);
    run_free(&r);
    r = RUN("replay", "diff", path_in_dir("m.lsr"), path_in_dir("m.lsr"));
    cr_assert_eq(r.status, 0, "%s", r.out);
    run_free(&r);
    r = RUN("replay", "tamper", path_in_dir("m.lsr"), path_in_dir("u.lsr"), "--tick", "400");
    assert_usage_error(r, "--tick 400");
    run_free(&r);
}

// ---- --json: every document passes the strict parser ----

static void assert_json(run_result r, int status, const char *const *must)
{
    cr_assert_eq(r.status, status, "status %d: %s%s", r.status, r.err, r.out);
    cr_assert(json_valid(r.out), "not valid JSON:\n%s", r.out);
    size_t n = strlen(r.out);
    cr_assert(n > 0 && r.out[n - 1] == '\n', "ends with a newline: %s", r.out);
    for (; must && *must; must++) {
        cr_assert(strstr(r.out, *must), "'%s' in %s", *must, r.out);
    }
}

Test(cli, json_outputs_are_valid_json)
{
    char scene[4200];
    snprintf(scene, sizeof scene, "%s/tools/scenes/six_box_tower.scene", root);
    run_result r = RUN("version", "--json");
    assert_json(r, 0, (const char *const[]){"{\"version\":\"0.3.0\"", "\"fingerprint\":", NULL});
    run_free(&r);
    r = RUN("sim", scene, "--ticks", "20", "--json");
    assert_json(r, 0, (const char *const[]){"\"ticks\":20", "\"final_checksum\":\"", NULL});
    // --profile times the stages and changes no bit: the same final checksum.
    char sum[64] = "";
    const char *at = strstr(r.out, "\"final_checksum\":\"");
    snprintf(sum, sizeof sum, "%.36s", at ? at : "");
    run_free(&r);
    r = RUN("sim", scene, "--ticks", "20", "--json", "--profile");
    assert_json(
        r, 0, (const char *const[]){sum, "\"profile_ms_per_tick\":{\"step\":", "\"sleep\":", NULL});
    run_free(&r);
    r = RUN("sim", scene, "--ticks", "5", "--checksums", "--trace", "2", "--json");
    assert_json(
        r, 0,
        (const char *const[]){"\"per_tick\":[{\"tick\":1,\"checksum\":\"", "\"position\":[", NULL});
    run_free(&r);
    record("m.lsr");
    r = RUN("replay", "info", path_in_dir("m.lsr"), "--json");
    assert_json(
        r, 0, (const char *const[]){"\"ticks\":400", "\"keyframe_ticks\":[100,200,300,400]", NULL});
    run_free(&r);
    r = RUN("replay", "verify", path_in_dir("m.lsr"), "--json", "--stats");
    assert_json(r, 0, (const char *const[]){"\"result\":\"verified\"", "\"stats\":{", NULL});
    run_free(&r);
    r = RUN("replay", "dump", path_in_dir("m.lsr"), "--json", "--from", "3", "--to", "6");
    assert_json(r, 0, (const char *const[]){"{\"tick\":3,", "{\"tick\":5,", NULL});
    cr_assert_null(strstr(r.out, "{\"tick\":6,"), "%s", r.out);
    run_free(&r);
    r = RUN("replay", "tamper", path_in_dir("m.lsr"), path_in_dir("t.lsr"), "--tick", "150");
    run_free(&r);
    r = RUN("replay", "verify", path_in_dir("t.lsr"), "--json");
    assert_json(r, 3,
                (const char *const[]){"\"result\":\"desync\"", "\"tick\":150",
                                      "\"bodies\":[{\"body\":", "\"field\":\"position.x\"", NULL});
    run_free(&r);
    r = RUN("replay", "diff", path_in_dir("m.lsr"), path_in_dir("t.lsr"), "--json");
    assert_json(r, 3, (const char *const[]){"\"different\":true", "\"tick\":150", NULL});
    run_free(&r);
    r = RUN("replay", "diff", path_in_dir("m.lsr"), path_in_dir("m.lsr"), "--json");
    assert_json(r, 0, (const char *const[]){"\"different\":false", "\"tick\":null", NULL});
    run_free(&r);
}

Test(cli, json_strings_are_escaped)
{
    // A file name with a quote, a backslash, a tab and a byte that is not UTF-8.
    record("m.lsr");
    const char *name = path_in_dir("q\"b\\s\tx\xff.lsr");
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cp '%s' \"$LS_NAME\"", path_in_dir("m.lsr"));
    cr_assert_eq(setenv("LS_NAME", name, 1), 0);
    cr_assert_eq(system(cmd), 0);
    run_result r = RUN("replay", "info", name, "--json");
    assert_json(r, 0, (const char *const[]){"q\\\"b\\\\s\\tx\\ufffd.lsr", NULL});
    run_free(&r);
    r = RUN("replay", "verify", name, "--json");
    assert_json(r, 0, NULL);
    run_free(&r);
}

Test(cli, match_json_is_valid_json, .timeout = 120)
{
    run_result r = RUN("match", "--peers", "2", "--ticks", "60", "--tick-rate", "240", "--replay",
                       path_in_dir("match.lsr"), "--timeout", "10000", "--json");
    assert_json(r, 0,
                (const char *const[]){"\"checksums_equal\":true", "\"desyncs\":0",
                                      "\"result\":\"ok\"", "\"exit_status\":0", NULL});
    run_free(&r);
}

// ---- progress: only on a terminal ----

Test(cli, piped_runs_print_no_progress, .timeout = 120)
{
    char scene[4200];
    // ~1.3 s on the reference machine (a terminal shows progress after 0.5 s):
    // 2,000 bodies raining down stay awake (a settling pile sleeps and grew
    // too fast for the delay once the solver did).
    snprintf(scene, sizeof scene, "%s/tools/scenes/rain_2000.scene", root);
    run_result r = RUN("sim", scene, "--ticks", "200");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_str_empty(r.err, "nothing on a piped stderr: %s", r.err);
    cr_assert_null(strchr(r.out, '\r'), "%s", r.out);
    run_free(&r);
    record("m.lsr");
    r = RUN("replay", "verify", path_in_dir("m.lsr"));
    cr_assert_eq(r.status, 0);
    cr_assert_str_empty(r.err, "%s", r.err);
    cr_assert_str_eq(r.out, "verified 400 ticks\n");
    run_free(&r);
}

// Run with stderr on a pseudo-terminal; returns what the terminal showed.
static char *run_on_terminal(const char *const *args, int *status)
{
    int master = posix_openpt(O_RDWR | O_NOCTTY);
    cr_assert_geq(master, 0);
    cr_assert_eq(grantpt(master), 0);
    cr_assert_eq(unlockpt(master), 0);
    const char *slave_name = ptsname(master);
    cr_assert_not_null(slave_name);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        int slave = open(slave_name, O_RDWR | O_NOCTTY);
        int devnull = open("/dev/null", O_WRONLY);
        if (slave < 0 || devnull < 0) {
            _exit(126);
        }
        dup2(devnull, 1);
        dup2(slave, 2);
        close(master);
        char *argv[64];
        int n = 0;
        argv[n++] = tool;
        for (; args[n - 1] && n < 63; n++) {
            argv[n] = (char *)(uintptr_t)args[n - 1];
        }
        argv[n] = NULL;
        execv(tool, argv);
        _exit(127);
    }
    char *out = NULL;
    size_t len = 0, cap = 0;
    append(&out, &len, &cap, "", 0);
    for (;;) {
        char buf[4096];
        ssize_t got = read(master, buf, sizeof buf); // EIO once the child closed the terminal
        if (got <= 0) {
            break;
        }
        append(&out, &len, &cap, buf, (size_t)got);
    }
    close(master);
    int st;
    waitpid(pid, &st, 0);
    *status = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
    return out;
}

Test(cli, a_terminal_shows_progress_and_no_progress_silences_it, .timeout = 120)
{
    char scene[4200];
    snprintf(scene, sizeof scene, "%s/tools/scenes/rain_2000.scene", root); // as above
    int status;
    char *tty =
        run_on_terminal((const char *const[]){"sim", scene, "--ticks", "200", NULL}, &status);
    cr_assert_eq(status, 0);
    cr_assert(strstr(tty, "\rsim ["), "a progress line: %s", tty);
    cr_assert(strstr(tty, " ticks"), "%s", tty);
    free(tty);
    tty = run_on_terminal(
        (const char *const[]){"sim", scene, "--ticks", "200", "--no-progress", NULL}, &status);
    cr_assert_eq(status, 0);
    cr_assert_str_empty(tty, "%s", tty);
    free(tty);
}

// ---- installed scenes ----

Test(cli, scenes_are_found_in_lockstep_data)
{
    // From a directory without tools/scenes: $LOCKSTEP_DATA/scenes/<name>.
    char env[4200];
    snprintf(env, sizeof env, "LOCKSTEP_DATA=%s/tools", root);
    run_result r =
        run_in(dir, env, (const char *const[]){"sim", "arena.scene", "--ticks", "3", NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "ticks 3  bodies 17"), "%s", r.out);
    run_free(&r);
    // A path is reduced to its file name.
    r = run_in(
        dir, env,
        (const char *const[]){"sim", "some/where/six_box_tower.scene", "--ticks", "1", NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    // Not found anywhere: the error names what the user gave.
    r = run_in(dir, env, (const char *const[]){"sim", "nowhere/none.scene", NULL});
    cr_assert_eq(r.status, 1);
    cr_assert(strstr(r.err, "lockstep sim: nowhere/none.scene: cannot open"), "%s", r.err);
    run_free(&r);
    // A file that exists is used as given, whatever LOCKSTEP_DATA says.
    r = run_in(
        NULL, "LOCKSTEP_DATA=/nonexistent",
        (const char *const[]){"sim", "tools/scenes/six_box_tower.scene", "--ticks", "1", NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    // The default arena of bot/relay/match too: a relay that records with no --scene.
    r = run_in(dir, "LOCKSTEP_DATA=/nonexistent",
               (const char *const[]){"relay", "--record", "r.lsr", NULL});
    cr_assert_eq(r.status, 1);
    cr_assert_eq(lines(r.err), 1, "%s", r.err);
    cr_assert(strstr(r.err, "no --scene given, and the default arena.scene is neither at "
                            "tools/scenes/arena.scene nor in /nonexistent/scenes"),
              "%s", r.err);
    run_free(&r);
    r = run_in(dir, "LOCKSTEP_DATA=/nonexistent", (const char *const[]){"match", NULL});
    cr_assert_eq(r.status, 1);
    cr_assert(strstr(r.err, "lockstep match: no --scene given"), "%s", r.err);
    run_free(&r);
}

// ls_data_dir (ls/scene.h): what the CLI resolves scene names against, for
// library users. $LOCKSTEP_DATA when set and not empty, else the prefix the
// library was built for (tests/library/examples.sh and deb.sh check the
// installed and packaged values).
Test(cli, ls_data_dir_is_lockstep_data_else_the_install_prefix)
{
    cr_assert_eq(setenv("LOCKSTEP_DATA", "/some/where", 1), 0);
    cr_assert_str_eq(ls_data_dir(), "/some/where");
    cr_assert_eq(setenv("LOCKSTEP_DATA", "", 1), 0);
    const char *built = ls_data_dir();
    size_t n = strlen(built);
    cr_assert(built[0] == '/' && n > 15 && strcmp(built + n - 15, "/share/lockstep") == 0, "%s",
              built);
    cr_assert_eq(unsetenv("LOCKSTEP_DATA"), 0);
    cr_assert_str_eq(ls_data_dir(), built);
    // The CLI finds its scenes in the same place.
    char env[4200];
    snprintf(env, sizeof env, "LOCKSTEP_DATA=%s/tools", root);
    cr_assert_eq(setenv("LOCKSTEP_DATA", env + strlen("LOCKSTEP_DATA="), 1), 0);
    char path[4300];
    snprintf(path, sizeof path, "%s/scenes/arena.scene", ls_data_dir());
    ls_scene scene;
    ls_error err;
    cr_assert_eq(ls_scene_load(path, &scene, &err), LS_OK, "%s", err.message);
    ls_scene_free(&scene);
    run_result r =
        run_in(dir, env, (const char *const[]){"sim", "arena.scene", "--ticks", "1", NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
}

// ---- issue 18: untrusted files ----

// Rewrite `from` into `to` with word `word` of keyframe `k` xor-ed with `mask`,
// re-sealed by the recorder (check codes recomputed, as anyone can).
static void reseal_keyframe(const char *from, const char *to, uint32_t k, size_t word,
                            uint32_t mask)
{
    ls_replay_reader *r = ls_replay_reader_open(from, NULL);
    cr_assert_not_null(r);
    const ls_replay_header *h = ls_replay_reader_header(r);
    ls_replay_recorder_def def = ls_replay_recorder_def_like(h);
    ls_replay_recorder *rec = ls_replay_recorder_create(to, &def, NULL);
    cr_assert_not_null(rec);
    ls_replay_cursor *c = ls_replay_cursor_create(r);
    uint32_t next = 0, nk = ls_replay_reader_info(r)->keyframes;
    for (uint32_t t = 0; t < ls_replay_reader_ticks(r); t++) {
        const uint8_t *in;
        uint64_t sum;
        cr_assert_eq(ls_replay_cursor_read(c, t, &in, &sum), LS_OK);
        cr_assert_eq(ls_replay_recorder_append(rec, in, sum), LS_OK);
        if (next < nk && ls_replay_reader_keyframe_info(r, next).tick == t + 1) {
            ls_replay_keyframe_info ki = ls_replay_reader_keyframe_info(r, next);
            uint8_t *buf = malloc(ki.size);
            cr_assert_eq(ls_replay_reader_keyframe(r, next, buf, ki.size), LS_OK);
            if (next == k) {
                ls_put_u32le(buf + word * 4, ls_get_u32le(buf + word * 4) ^ mask);
            }
            cr_assert_eq(ls_replay_recorder_add_keyframe(rec, buf, ki.size), LS_OK);
            free(buf);
            next++;
        }
    }
    ls_replay_cursor_destroy(c);
    cr_assert_eq(ls_replay_recorder_finish(rec), LS_OK);
    ls_replay_recorder_destroy(rec);
    ls_replay_reader_destroy(r);
}

Test(cli, a_tampered_keyframe_gets_the_same_verdict_for_jobs_1_2_and_4, .timeout = 120)
{
    record("m.lsr");
    // Words of the keyframe at tick 200: header, a body slot's position and a
    // velocity, a contact's impulse (not covered by the checksum).
    const size_t words[] = {3, 16 + 2, 16 + 48 * 9 + 3, 16 + 48 * 9 + 12, 16 + 48 * 17 + 30};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        reseal_keyframe(path_in_dir("m.lsr"), path_in_dir("k.lsr"), 1, words[i], 0x10000u);
        run_result one = RUN("replay", "verify", path_in_dir("k.lsr"), "--jobs", "1");
        cr_assert_eq(one.status, 3, "word %zu: %s%s", words[i], one.out, one.err);
        cr_assert(strstr(one.out, "keyframe at tick 200"), "word %zu: %s", words[i], one.out);
        for (int j = 2; j <= 4; j += 2) {
            char jobs[16];
            snprintf(jobs, sizeof jobs, "%d", j);
            run_result many = RUN("replay", "verify", path_in_dir("k.lsr"), "--jobs", jobs);
            cr_assert_eq(many.status, one.status, "word %zu, --jobs %d", words[i], j);
            cr_assert_str_eq(many.out, one.out, "word %zu, --jobs %d", words[i], j);
            run_free(&many);
        }
        run_free(&one);
    }
}

Test(cli, a_header_tick_rate_that_disagrees_with_the_scene_is_refused)
{
    record("m.lsr");
    size_t n;
    FILE *f = fopen(path_in_dir("m.lsr"), "rb");
    cr_assert_not_null(f);
    uint8_t *d = malloc(1 << 20);
    n = fread(d, 1, 1 << 20, f);
    fclose(f);
    uint32_t h = ls_get_u32le(d + 12);
    ls_put_u32le(d + 24, 30); // the arena runs at 60 Hz
    ls_put_u64le(d + h - 8, ls_hash64(d, h - 8));
    f = fopen(path_in_dir("r.lsr"), "wb");
    cr_assert_eq(fwrite(d, 1, n, f), n);
    fclose(f);
    free(d);
    run_result r = RUN("replay", "verify", path_in_dir("r.lsr"));
    cr_assert_eq(r.status, 1, "%s", r.out);
    cr_assert(strstr(r.err, "the header says 30 Hz (byte 24) but the embedded scene runs at 60 Hz"),
              "%s", r.err);
    run_free(&r);
}

Test(cli, a_memory_budget_refuses_a_contact_bomb)
{
    FILE *f = fopen(path_in_dir("bomb.scene"), "w");
    cr_assert_not_null(f);
    fprintf(f, "world max_contacts 4194304\nbody static plane normal 0 1 0 d 0\n");
    for (int i = 0; i < 3000; i++) {
        fprintf(f, "body dynamic sphere radius 0.1 pos 0 1 0\n");
    }
    fclose(f);
    run_result r = RUN("sim", path_in_dir("bomb.scene"), "--max-memory", "16");
    cr_assert_eq(r.status, 1, "%s", r.err);
    cr_assert_eq(lines(r.err), 1, "%s", r.err);
    cr_assert(strstr(r.err, "over the budget of 16 MiB"), "%s", r.err);
    run_free(&r);
    // Within the default budget the capped world runs (capacity exceeded, not
    // exploded), and says so: an error naming the first full tick, status 3
    // (issue 26: contacts beyond capacity never vanish silently).
    r = RUN("sim", path_in_dir("bomb.scene"), "--ticks", "1");
    cr_assert_eq(r.status, 3, "%s", r.err);
    cr_assert_eq(lines(r.err), 1, "%s", r.err);
    cr_assert(strstr(r.err, "needed more than its capacity on 1 tick (first: tick 1)"), "%s",
              r.err);
    cr_assert(strstr(r.err, "raise max_contacts"), "%s", r.err);
    run_free(&r);
    r = RUN("sim", path_in_dir("bomb.scene"), "--ticks", "1", "--json");
    cr_assert_eq(r.status, 3, "%s", r.err);
    cr_assert(strstr(r.out, "\"capacity_exceeded_ticks\":1"), "%s", r.out);
    run_free(&r);
    r = RUN("sim", path_in_dir("bomb.scene"), "--max-memory", "0");
    assert_usage_error(r, "--max-memory");
    run_free(&r);
}

Test(cli, signed_recordings_verify_with_the_signers_key_only)
{
    char scene[4200];
    snprintf(scene, sizeof scene, "%s/tools/scenes/arena.scene", root);
    run_result r = RUN("keygen", "--out", path_in_dir("relay"));
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "ed25519:"), "%s", r.out);
    run_free(&r);
    r = RUN("keygen", "--out", path_in_dir("relay"));
    cr_assert_eq(r.status, 1, "never overwrites: %s", r.err);
    cr_assert(strstr(r.err, "File exists"), "%s", r.err);
    run_free(&r);
    r = RUN("keygen", "--out", path_in_dir("other"));
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    r = RUN("keygen");
    assert_usage_error(r, "--out");
    run_free(&r);
    r = RUN("replay", "record", scene, "--ticks", "300", "--seed", "4", "--out",
            path_in_dir("s.lsr"), "--sign-key", path_in_dir("relay.key"));
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    r = RUN("replay", "info", path_in_dir("s.lsr"));
    cr_assert(strstr(r.out, "signed       by ed25519:"), "%s", r.out);
    run_free(&r);
    r = RUN("replay", "verify", path_in_dir("s.lsr"), "--pubkey", path_in_dir("relay.pub"));
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "signatures verified, ticks 0..299 (every tick)"), "%s", r.out);
    cr_assert(strstr(r.out, "verified 300 ticks"), "%s", r.out);
    run_free(&r);
    r = RUN("replay", "verify", path_in_dir("s.lsr"), "--pubkey", path_in_dir("other.pub"));
    cr_assert_eq(r.status, 3, "%s", r.out);
    cr_assert(strstr(r.err, "not by ed25519:"), "%s", r.err);
    run_free(&r);
    // A tampered copy keeps the signer's key and the old signatures (SPEC §16.9):
    // the chunks before tick 100's keep theirs, the first signature after the
    // changed byte does not verify ("bad signature", not "not signed").
    r = RUN("replay", "tamper", path_in_dir("s.lsr"), path_in_dir("t.lsr"), "--tick", "100");
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    r = RUN("replay", "info", path_in_dir("t.lsr"));
    cr_assert(strstr(r.out, "signed       by ed25519:"), "%s", r.out);
    run_free(&r);
    r = RUN("replay", "verify", path_in_dir("t.lsr"), "--pubkey", path_in_dir("relay.pub"));
    cr_assert_eq(r.status, 3, "%s", r.out);
    cr_assert(strstr(r.err, "(after tick 120) does not verify"), "%s", r.err);
    cr_assert(!strstr(r.err, "not signed"), "%s", r.err);
    run_free(&r);
    // A secret key is not a public key; the relay signs only what it records.
    r = RUN("replay", "verify", path_in_dir("s.lsr"), "--pubkey", path_in_dir("relay.key"));
    cr_assert_eq(r.status, 1, "%s", r.err);
    run_free(&r);
    r = RUN("relay", "--sign-key", path_in_dir("relay.key"));
    assert_usage_error(r, "--record");
    run_free(&r);
}

Test(cli, match_outage_and_late_join_arguments_are_checked)
{
    run_result r = RUN("match", "--outage", "2@300");
    assert_usage_error(r, "--outage wants SLOT@TICK+MS");
    run_free(&r);
    r = RUN("match", "--late-join", "3-600");
    assert_usage_error(r, "--late-join wants SLOT@TICK");
    run_free(&r);
    r = RUN("match", "--peers", "3", "--outage", "5@300+1000");
    assert_usage_error(r, "--outage: slot 5 is out of range");
    run_free(&r);
}

// ---- relay and bot: --credentials checked first, --json summaries ----

Test(cli, relay_credentials_dir_is_checked_before_listening)
{
    // Missing, a file, or already holding a credential: one line naming DIR, exit 1
    // (an unusable path is a runtime error, as for --scene), and nothing on stdout:
    // no `listening` line that a wrapper would take for a running relay.
    char *missing = path_in_dir("no-such-dir");
    run_result r = RUN("relay", "--credentials", missing);
    cr_assert_eq(r.status, 1, "%s", r.err);
    cr_assert_str_empty(r.out, "%s", r.out);
    cr_assert_eq(lines(r.err), 1, "%s", r.err);
    cr_assert(strstr(r.err, "lockstep relay: --credentials "), "%s", r.err);
    cr_assert_eq(count(r.err, "no-such-dir"), 1, "DIR once: %s", r.err);
    cr_assert(strstr(r.err, "No such file or directory"), "%s", r.err);
    run_free(&r);
    char *file = path_in_dir("a-file");
    FILE *f = fopen(file, "w");
    cr_assert_not_null(f);
    fclose(f);
    r = RUN("relay", "--credentials", file);
    cr_assert_eq(r.status, 1, "%s", r.err);
    cr_assert_str_empty(r.out, "%s", r.out);
    cr_assert_eq(lines(r.err), 1, "%s", r.err);
    cr_assert(strstr(r.err, "a-file: not a directory"), "%s", r.err);
    run_free(&r);
    char *full = path_in_dir("full");
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "mkdir -p %s && touch %s/session-1-slot-1.cred", full, full);
    cr_assert_eq(system(cmd), 0);
    r = RUN("relay", "--credentials", full, "--slots", "2");
    cr_assert_eq(r.status, 1, "%s", r.err);
    cr_assert_str_empty(r.out, "%s", r.out);
    cr_assert_eq(lines(r.err), 1, "%s", r.err);
    cr_assert(strstr(r.err, "session-1-slot-1.cred already exists"), "%s", r.err);
    run_free(&r);
    if (geteuid() != 0) { // root may write anywhere
        char *ro = path_in_dir("read-only");
        snprintf(cmd, sizeof cmd, "mkdir -p %s && chmod 500 %s", ro, ro);
        cr_assert_eq(system(cmd), 0);
        r = RUN("relay", "--credentials", ro);
        cr_assert_eq(r.status, 1, "%s", r.err);
        cr_assert_str_empty(r.out, "%s", r.out);
        cr_assert(strstr(r.err, "read-only: not writable"), "%s", r.err);
        run_free(&r);
    }
    r = RUN("relay", "--help");
    cr_assert(strstr(r.out, "--json"), "%s", r.out);
    cr_assert(strstr(r.out, "DIR must exist and be writable"), "%s", r.out);
    run_free(&r);
    r = RUN("bot", "--help");
    cr_assert(strstr(r.out, "--json"), "%s", r.out);
    cr_assert(strstr(r.out, "--first-seq N|clock"), "%s", r.out);
    cr_assert(strstr(r.out, "--restarted"), "%s", r.out);
    run_free(&r);
}

// Start the tool in the background, stdout and stderr to files in dir.
static pid_t spawn_to(const char *out_name, const char *err_name, const char *const *args)
{
    char out[512], err[512];
    snprintf(out, sizeof out, "%s/%s", dir, out_name);
    snprintf(err, sizeof err, "%s/%s", dir, err_name);
    return tp_spawn(tool, NULL, NULL, out, err, args);
}

#define SPAWN(out, err, ...) spawn_to(out, err, (const char *const[]){__VA_ARGS__, NULL})

static char *slurp(const char *name)
{
    // Its own buffer: path_in_dir's ring of 4 would be overwritten by a
    // polling loop (wait_ready) while a test still holds one of its paths.
    char path[600];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return tp_slurp(path);
}

static int wait_status(pid_t pid)
{
    return tp_wait_status(pid, 0);
}

// Wait (up to 10 s) for the relay's `ready` line in its log file; its address.
static void wait_ready(const char *log_name, char *addr, size_t size)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s", dir, log_name);
    tp_wait_relay_ready(path, addr, size);
}

// "final_checksum":"..." of a JSON summary.
static void json_checksum(const char *json, char out[17])
{
    const char *p = strstr(json, "\"final_checksum\":\"");
    cr_assert_not_null(p, "%s", json);
    memcpy(out, p + 18, 16);
    out[16] = '\0';
}

Test(cli, relay_and_bot_json_summaries_and_a_rejoiner_named_as_a_slot, .timeout = 60)
{
    // Relay --json: the line log on stderr, one summary object on stdout. Bot 1
    // goes silent at tick 60 for 1.2 s, is timed out (0.5 s) and rejoins: the relay's
    // state_needed event is about player slot 1, not a spectator (the session has
    // spectator credentials 0 and 1, none of them used).
    char scene[4200], addr[64];
    snprintf(scene, sizeof scene, "%s/tools/scenes/arena.scene", root);
    char creds[512];
    snprintf(creds, sizeof creds, "%s", path_in_dir("creds"));
    cr_assert_eq(mkdir(creds, 0700), 0);
    pid_t relay =
        SPAWN("relay.json", "relay.log", "relay", "--credentials", creds, "--slots", "2",
              "--spectators", "2", "--ticks", "360", "--tick-rate", "120", "--timeout", "500",
              "--rejoin-ms", "5000", "--exit-when-done", "--json", "--scene", scene);
    wait_ready("relay.log", addr, sizeof addr);
    char c0[600], c1[600];
    snprintf(c0, sizeof c0, "%s/session-1-slot-0.cred", creds);
    snprintf(c1, sizeof c1, "%s/session-1-slot-1.cred", creds);
    pid_t b0 = SPAWN("b0.json", "b0.log", "bot", "--relay", addr, "--credential", c0, "--scene",
                     scene, "--json");
    pid_t b1 = SPAWN("b1.json", "b1.log", "bot", "--relay", addr, "--credential", c1, "--scene",
                     scene, "--outage", "60:1200", "--json");
    int s0 = wait_status(b0), s1 = wait_status(b1), sr = wait_status(relay);
    char *rj = slurp("relay.json"), *rl = slurp("relay.log");
    char *j0 = slurp("b0.json"), *j1 = slurp("b1.json"), *l1 = slurp("b1.log");
    char *l0 = slurp("b0.log");
    cr_assert_eq(s0, 0, "%s\n%s\nrelay:\n%s", j0, l0, rl);
    free(l0);
    cr_assert_eq(s1, 0, "%s\n%s", j1, l1);
    cr_assert_eq(sr, 0, "%s", rl);
    // The relay: its log on stderr, the summary alone on stdout.
    cr_assert(json_valid(rj), "not valid JSON:\n%s", rj);
    cr_assert(strstr(rl, "listening 127.0.0.1:") && strstr(rl, "\nready\n"), "%s", rl);
    cr_assert(strstr(rl, "stats relay packets_in="), "%s", rl);
    cr_assert(strstr(rl, "event state_needed session=1 slot=1 tick="), "%s", rl);
    cr_assert_null(strstr(rl, "state_needed session=1 spectator="), "%s", rl);
    // The slot is disconnected at the tick the bot went silent: 60, or a tick
    // later when a busy machine let one poll run ticks 59 and 60 and send 60's input.
    const char *at = strstr(l1, "bot: outage at tick ");
    unsigned silent = 0;
    cr_assert(at && sscanf(at, "bot: outage at tick %u", &silent) == 1, "%s", l1);
    cr_assert(silent >= 60 && silent <= 62, "%s", l1);
    // The relay names the tick it waited for: the bot's silent tick, or the
    // one after it when a poll on a datagram (not the bot's timer, which
    // starts the outage) had already sent that tick's input.
    char timed_out[64], timed_out_next[64];
    snprintf(timed_out, sizeof timed_out, "{\"slot\":1,\"tick\":%u,\"reason\":\"timeout\"}",
             silent);
    snprintf(timed_out_next, sizeof timed_out_next,
             "{\"slot\":1,\"tick\":%u,\"reason\":\"timeout\"}", silent + 1);
    cr_assert(strstr(rj, timed_out) || strstr(rj, timed_out_next), "'%s' or '%s' in %s", timed_out,
              timed_out_next, rj);
    const char *const relay_keys[] = {
        "\"sessions\":[{\"session\":1,\"ticks\":360,\"done\":true,\"desyncs\":0,"
        "\"desync_events\":[],\"disputes\":0,\"dispute_events\":[],"
        "\"snapshots_refused\":[],\"disconnects\":[",
        "\"rejoins\":[{\"slot\":1,\"tick\":",
        "\"peers\":[{\"slot\":0,\"joined\":true,",
        "\"spectators\":[{\"index\":0,\"joined\":false,",
        "\"replay\":null",
        "\"relay\":{\"packets_in\":",
        "\"bad_mac\":0,",
        "\"rejoins\":1,",
        "\"result\":\"ok\""};
    for (size_t i = 0; i < sizeof relay_keys / sizeof relay_keys[0]; i++) {
        cr_assert(strstr(rj, relay_keys[i]), "'%s' in %s", relay_keys[i], rj);
    }
    // The bots: one object each, the same final checksum, the rejoin seen by both.
    cr_assert(json_valid(j0), "not valid JSON:\n%s", j0);
    cr_assert(json_valid(j1), "not valid JSON:\n%s", j1);
    cr_assert(strstr(j1, "{\"role\":\"player\",\"slot\":1,\"mode\":\"lockstep\","
                         "\"status\":\"finished\",\"ticks\":360,"),
              "%s", j1);
    cr_assert(strstr(j1, "\"desyncs\":0,\"first_desync_tick\":null,\"named\":0,\"disputes\":0,"
                         "\"desync_events\":[]"),
              "%s", j1);
    char disconnects[96];
    snprintf(disconnects, sizeof disconnects, "\"disconnects\":[%s", timed_out);
    cr_assert(strstr(j1, disconnects), "%s", j1);
    cr_assert(strstr(j1, "\"rejoins\":[{\"slot\":1,\"tick\":"), "%s", j1);
    cr_assert(strstr(j1, "\"stats\":{\"rtt_ms\":"), "%s", j1);
    cr_assert(strstr(j1, "\"result\":\"ok\",\"reason\":null}"), "%s", j1);
    cr_assert(strstr(j0, "\"rejoins\":[{\"slot\":1,\"tick\":"), "%s", j0);
    cr_assert(strstr(j0, ",\"snapshot_tick\":null}"), "only the rejoiner loads one: %s", j0);
    cr_assert(strstr(l1, "bot 1: rejoined, snapshot of tick "), "the log on stderr: %s", l1);
    cr_assert(strstr(l1, "result slot=1 "), "%s", l1);
    char k0[17], k1[17];
    json_checksum(j0, k0);
    json_checksum(j1, k1);
    cr_assert_str_eq(k0, k1);
    free(rj), free(rl), free(j0), free(j1), free(l1);
}

Test(cli, a_bot_killed_mid_match_and_started_again_rejoins_with_a_clock_first_seq, .timeout = 60)
{
    // Bot 1 is SIGKILLed about a second into the match (no goodbye) and a new process
    // starts at once with the same credential, --first-seq clock --restarted (SPEC.md
    // §17.3, §17.10): it keeps silent until the relay times the old one out (0.5 s),
    // rejoins and ends on bot 0's checksum; the recording verifies.
    char scene[4200], addr[64];
    snprintf(scene, sizeof scene, "%s/tools/scenes/soccer.scene", root);
    char creds[512], rec[600];
    snprintf(creds, sizeof creds, "%s", path_in_dir("creds"));
    cr_assert_eq(mkdir(creds, 0700), 0);
    snprintf(rec, sizeof rec, "%s/m.lsr", creds);
    pid_t relay =
        SPAWN("relay.json", "relay.log", "relay", "--credentials", creds, "--slots", "2", "--ticks",
              "600", "--tick-rate", "120", "--timeout", "500", "--rejoin-ms", "5000",
              "--exit-when-done", "--json", "--scene", scene, "--seed", "1", "--record", rec);
    wait_ready("relay.log", addr, sizeof addr);
    char c0[600], c1[600];
    snprintf(c0, sizeof c0, "%s/session-1-slot-0.cred", creds);
    snprintf(c1, sizeof c1, "%s/session-1-slot-1.cred", creds);
    pid_t b0 = SPAWN("b0.json", "b0.log", "bot", "--relay", addr, "--credential", c0, "--scene",
                     scene, "--mode", "rollback", "--json");
    pid_t b1 = SPAWN("b1a.json", "b1a.log", "bot", "--relay", addr, "--credential", c1, "--scene",
                     scene, "--mode", "rollback", "--first-seq", "clock", "--json");
    usleep(1200000);
    cr_assert_eq(kill(b1, SIGKILL), 0);
    cr_assert_eq(wait_status(b1), 128 + SIGKILL, "killed");
    b1 = SPAWN("b1.json", "b1.log", "bot", "--relay", addr, "--credential", c1, "--scene", scene,
               "--mode", "rollback", "--first-seq", "clock", "--restarted", "--json");
    int s0 = wait_status(b0), s1 = wait_status(b1), sr = wait_status(relay);
    char *rj = slurp("relay.json"), *rl = slurp("relay.log");
    char *j0 = slurp("b0.json"), *j1 = slurp("b1.json"), *l1 = slurp("b1.log");
    cr_assert_eq(s0, 0, "%s\nrelay:\n%s", j0, rl);
    cr_assert_eq(s1, 0, "%s\n%s\nrelay:\n%s", j1, l1, rl);
    cr_assert_eq(sr, 0, "%s", rl);
    cr_assert(strstr(rj, "{\"slot\":1,\"tick\":"), "%s", rj);
    cr_assert(strstr(rj, "\"reason\":\"timeout\"}"), "the old process timed out: %s", rj);
    cr_assert(strstr(rj, "\"rejoins\":1,"), "%s", rj);
    cr_assert(strstr(rj, "\"desyncs\":0,"), "%s", rj);
    cr_assert(strstr(j1, "\"status\":\"finished\",\"ticks\":600,"), "%s", j1);
    cr_assert(strstr(j1, "\"rejoins\":[{\"slot\":1,\"tick\":"), "%s", j1);
    cr_assert(strstr(l1, "bot 1: rejoined, snapshot of tick "), "%s", l1);
    cr_assert(strstr(l1, " replayed=0 stale=0 "), "%s", l1);
    char k0[17], k1[17];
    json_checksum(j0, k0);
    json_checksum(j1, k1);
    cr_assert_str_eq(k0, k1);
    run_result v = RUN("replay", "verify", rec, "--no-progress");
    cr_assert_eq(v.status, 0, "%s%s", v.out, v.err);
    run_free(&v);
    free(rj), free(rl), free(j0), free(j1), free(l1);
}

Test(cli, a_late_spectator_needing_state_is_named_as_a_spectator, .timeout = 60)
{
    // No --json: the relay's log stays on stdout. Spectator 1 joins at ~tick 180,
    // past the 64-tick history: the relay asks for a snapshot for spectator 1 (it has
    // no state to give, so the spectator is dropped) while player slot 1 plays on.
    char scene[4200], addr[64];
    snprintf(scene, sizeof scene, "%s/tools/scenes/arena.scene", root);
    char creds[512];
    snprintf(creds, sizeof creds, "%s", path_in_dir("creds"));
    cr_assert_eq(mkdir(creds, 0700), 0);
    pid_t relay =
        SPAWN("relay.out", "relay.err", "relay", "--credentials", creds, "--slots", "2",
              "--spectators", "2", "--history", "64", "--ticks", "300", "--tick-rate", "120",
              "--timeout", "500", "--rejoin-ms", "5000", "--exit-when-done", "--scene", scene);
    wait_ready("relay.out", addr, sizeof addr);
    char c0[600], c1[600], v1[600];
    snprintf(c0, sizeof c0, "%s/session-1-slot-0.cred", creds);
    snprintf(c1, sizeof c1, "%s/session-1-slot-1.cred", creds);
    snprintf(v1, sizeof v1, "%s/session-1-spectator-1.cred", creds);
    pid_t b0 =
        SPAWN("b0.out", "b0.err", "bot", "--relay", addr, "--credential", c0, "--scene", scene);
    pid_t b1 =
        SPAWN("b1.out", "b1.err", "bot", "--relay", addr, "--credential", c1, "--scene", scene);
    pid_t v = SPAWN("v.json", "v.err", "bot", "--relay", addr, "--credential", v1, "--scene", scene,
                    "--start-delay-ms", "1500", "--json");
    int s0 = wait_status(b0), s1 = wait_status(b1), sv = wait_status(v), sr = wait_status(relay);
    char *ro = slurp("relay.out"), *re = slurp("relay.err"), *vj = slurp("v.json");
    char *e0 = slurp("b0.err"), *e1 = slurp("b1.err");
    cr_assert_eq(s0, 0, "%s\nrelay:\n%s%s", e0, ro, re);
    cr_assert_eq(s1, 0, "%s\nrelay:\n%s%s", e1, ro, re);
    free(e0), free(e1);
    cr_assert_eq(sr, 0, "%s", re);
    cr_assert_str_empty(re, "%s", re);
    cr_assert(strstr(ro, "event state_needed session=1 spectator=1 tick="), "%s", ro);
    cr_assert_null(strstr(ro, "state_needed session=1 slot="), "%s", ro);
    cr_assert(strstr(ro, "event spectator_dropped session=1 spectator=1 "), "%s", ro);
    cr_assert_eq(sv, 1, "a dropped spectator did not finish: %s", vj);
    cr_assert(json_valid(vj), "not valid JSON:\n%s", vj);
    cr_assert(strstr(vj, "{\"role\":\"spectator\",\"index\":1,\"status\":\"dropped\","), "%s", vj);
    cr_assert(strstr(vj, "\"mismatches\":0,\"mismatch_events\":[]"), "%s", vj);
    cr_assert(strstr(vj, "\"result\":\"failed\",\"reason\":\"spectator 1 stopped at tick "), "%s",
              vj);
    free(ro), free(re), free(vj);
}

Test(cli, relay_result_names_the_first_tick_its_players_contradicted, .timeout = 60)
{
    // Both bots diverge on purpose at tick 100 (each its own way: every later tick is
    // disputed). The relay's re-simulation of its recording gives the result the
    // recorded inputs make, and says the players' checksums contradict it from tick
    // 100 on: verified false. The soccer ball starts rolling into team 0's goal.
    char scene[4200], addr[64], src[4200];
    snprintf(src, sizeof src, "%s/tools/scenes/soccer.scene", root);
    snprintf(scene, sizeof scene, "%s", path_in_dir("goal.scene"));
    char cmd[13000];
    snprintf(cmd, sizeof cmd,
             "sed 's/sphere radius 1.000 pos 0 1.000 0 /sphere radius 1.000 pos 0 1.000 19.000 "
             "vel 0 0 10 /' %s > %s && grep -q 'vel 0 0 10' %s",
             src, scene, scene);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    char creds[512];
    snprintf(creds, sizeof creds, "%s", path_in_dir("creds"));
    cr_assert_eq(mkdir(creds, 0700), 0);
    pid_t relay = SPAWN("relay.json", "relay.log", "relay", "--workers", "1", "--credentials",
                        creds, "--slots", "2", "--ticks", "240", "--tick-rate", "240", "--record",
                        path_in_dir("p.lsr"), "--exit-when-done", "--json", "--scene", scene);
    wait_ready("relay.log", addr, sizeof addr);
    char c0[600], c1[600];
    snprintf(c0, sizeof c0, "%s/session-1-slot-0.cred", creds);
    snprintf(c1, sizeof c1, "%s/session-1-slot-1.cred", creds);
    pid_t b0 = SPAWN("b0.out", "b0.err", "bot", "--relay", addr, "--credential", c0, "--scene",
                     scene, "--perturb-tick", "100");
    pid_t b1 = SPAWN("b1.out", "b1.err", "bot", "--relay", addr, "--credential", c1, "--scene",
                     scene, "--perturb-tick", "100");
    wait_status(b0);
    wait_status(b1);
    cr_assert_eq(wait_status(relay), 0);
    char *rj = slurp("relay.json"), *rl = slurp("relay.log"), *o0 = slurp("b0.out");
    cr_assert(strstr(o0, " score=1-0"), "%s", o0);
    cr_assert(strstr(rl, "\nresult session=1 game=soccer ticks=240 score=1-0 verified=no "
                         "mismatch_tick=100\n"),
              "%s", rl);
    cr_assert(strstr(rj, "\"game_result\":{\"game\":\"soccer\",\"ticks\":240,\"verified\":false,"
                         "\"mismatch_tick\":100,\"score\":[1,0],\"words\":[1,0,"),
              "%s", rj);
    free(rj), free(rl), free(o0);
}

// ---- timeline: a simulated lossy rollback match drawn per frame ----

Test(cli, timeline_draws_a_simulated_lossy_rollback_match_the_same_every_time)
{
    const char *svg = path_in_dir("t.svg"), *svg2 = path_in_dir("t2.svg");
    const char *csv = path_in_dir("t.csv");
    run_result r =
        RUN("timeline", "--players", "3", "--ticks", "240", "--delay", "1", "--loss", "0.15",
            "--delay-ms", "40", "--jitter", "30", "--fault-seed", "7", "--out", svg, "--csv", csv);
    cr_assert_eq(r.status, 0, "%s%s", r.out, r.err);
    cr_assert(strstr(r.out, "wrote ") && strstr(r.out, " rollbacks, ") &&
                  strstr(r.out, " ticks re-simulated (most in one frame "),
              "%s", r.out);
    unsigned frames = 0;
    cr_assert_eq(sscanf(strstr(r.out, "("), "(%u frames;", &frames), 1, "%s", r.out);
    cr_assert_geq(frames, 240u, "one frame per tick at least: %s", r.out);
    // The same arguments: the same bytes (a fake clock, seeded faults).
    run_result r2 =
        RUN("timeline", "--players", "3", "--ticks", "240", "--delay", "1", "--loss", "0.15",
            "--delay-ms", "40", "--jitter", "30", "--fault-seed", "7", "--out", svg2);
    cr_assert_eq(r2.status, 0, "%s", r2.err);
    cr_assert_str_eq(r2.out + strlen("wrote ") + strlen(svg2),
                     r.out + strlen("wrote ") + strlen(svg));
    char *a = slurp("t.svg"), *b = slurp("t2.svg"), *c = slurp("t.csv");
    cr_assert_str_eq(a, b, "the same picture twice");
    cr_assert_eq(strncmp(a, "<svg xmlns=\"http://www.w3.org/2000/svg\"", 39), 0);
    cr_assert(strstr(a, "ticks re-simulated per frame") &&
                  strstr(a, "prediction misses per frame") && strstr(a, "RTT to the relay, ms") &&
                  strstr(a, "</svg>\n"),
              "%.300s", a);
    cr_assert_eq(
        strncmp(c, "frame,tick,resimulated,misses,time_sync_skips,frames_ahead,rtt_us\n", 66), 0,
        "%.100s", c);
    cr_assert_eq((unsigned)lines(c), frames + 1, "one row per frame");
    // Lossy: something was re-simulated somewhere.
    int resim = 0;
    for (const char *l = strchr(c, '\n') + 1; *l; l = strchr(l, '\n') + 1) {
        unsigned f, t, rs;
        cr_assert_eq(sscanf(l, "%u,%u,%u,", &f, &t, &rs), 3);
        resim += (int)rs;
    }
    cr_assert_gt(resim, 0, "15 %% loss and 40 ms: some rollbacks");
    free(a), free(b), free(c);
    run_free(&r);
    run_free(&r2);
    USAGE_ERROR("missing --out FILE.svg", "timeline");
    USAGE_ERROR("--out wants a file name ending in .svg (got 'x.png')", "timeline", "--out",
                "x.png");
    USAGE_ERROR("--players wants an integer 2..4, got '9'", "timeline", "--players", "9", "--out",
                "x.svg");
    USAGE_ERROR("--ticks wants an integer 10..36000", "timeline", "--ticks", "5", "--out", "x.svg");
    USAGE_ERROR("--loss wants a probability 0..1", "timeline", "--loss", "2", "--out", "x.svg");
    USAGE_ERROR("--out needs a value", "timeline", "--out");
}

// --log-json: every line of the relay's log is one JSON object with t_ms and
// event, the event lines carry their session and slot as numbers, and the
// text log's fields are all there (the same match as text: the same keys).
Test(cli, relay_log_json_is_one_object_per_line_with_session_and_slot, .timeout = 60)
{
    char scene[4200], addr[64];
    snprintf(scene, sizeof scene, "%s/tools/scenes/arena.scene", root);
    char creds[512];
    snprintf(creds, sizeof creds, "%s", path_in_dir("creds"));
    cr_assert_eq(mkdir(creds, 0700), 0);
    pid_t relay =
        SPAWN("relay.log", "relay.err", "relay", "--credentials", creds, "--slots", "2", "--ticks",
              "120", "--tick-rate", "120", "--exit-when-done", "--log-json", "--scene", scene);
    // The ready line is {"t_ms":..,"event":"ready"}; the address is in "listening".
    char *log = NULL;
    unsigned port = 0;
    for (int i = 0; i < 1000 && port == 0; i++) {
        free(log);
        log = slurp("relay.log");
        const char *l = strstr(log, "\"event\":\"listening\",\"msg\":\"127.0.0.1:");
        if (l && strstr(log, "\"event\":\"ready\"")) {
            cr_assert_eq(sscanf(strstr(l, "127.0.0.1:"), "127.0.0.1:%u", &port), 1, "%s", log);
        } else {
            usleep(10000);
        }
    }
    cr_assert_neq(port, 0u, "no listening/ready lines: %s", log);
    free(log);
    snprintf(addr, sizeof addr, "127.0.0.1:%u", port);
    char c0[600], c1[600];
    snprintf(c0, sizeof c0, "%s/session-1-slot-0.cred", creds);
    snprintf(c1, sizeof c1, "%s/session-1-slot-1.cred", creds);
    pid_t b0 =
        SPAWN("b0.out", "b0.err", "bot", "--relay", addr, "--credential", c0, "--scene", scene);
    pid_t b1 =
        SPAWN("b1.out", "b1.err", "bot", "--relay", addr, "--credential", c1, "--scene", scene);
    cr_assert_eq(wait_status(b0), 0);
    cr_assert_eq(wait_status(b1), 0);
    cr_assert_eq(wait_status(relay), 0);
    log = slurp("relay.log");
    int lines = 0;
    for (char *line = log, *next; *line; line = next) {
        next = strchr(line, '\n');
        cr_assert_not_null(next, "every line ends: %s", line);
        *next++ = '\0';
        cr_assert(json_valid(line), "not one JSON object: %s", line);
        cr_assert(strncmp(line, "{\"t_ms\":", 8) == 0, "%s", line);
        cr_assert(strstr(line, ",\"event\":\""), "%s", line);
        lines++;
    }
    cr_assert_geq(lines, 8, "listening, credentials, ready, joins, done, stats");
    free(log);
    log = slurp("relay.log");
    cr_assert(strstr(log, "\"event\":\"joined\",\"session\":1,\"slot\":0}"), "%s", log);
    cr_assert(strstr(log, "\"event\":\"joined\",\"session\":1,\"slot\":1}"), "%s", log);
    cr_assert(strstr(log, "\"event\":\"session_done\",\"session\":1,\"ticks\":120}"), "%s", log);
    cr_assert(strstr(log, "\"event\":\"stats\",\"session\":1,\"slot\":0,\"addr\":\"127.0.0.1:"),
              "%s", log);
    cr_assert(strstr(log, "\"event\":\"stats\",\"packets_in\":"), "%s", log);
    cr_assert(strstr(log, ",\"msg\":\"relay\"}"), "the stats relay line: %s", log);
    free(log);
}
