// SPDX-License-Identifier: MIT
// `lockstep render` end to end (the tool next to this test binary, built by
// `make test`): the same scene gives the same pixels on every run, replays
// render at any tick and as numbered frames, and bad arguments fail with clear
// messages (exit 2 for usage errors, 1 for unreadable inputs).
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char tool[4096];
static char dir[256];
static char root[1024];

static void setup(void)
{
    ssize_t n = readlink("/proc/self/exe", tool, sizeof tool - 1);
    cr_assert_gt(n, 0);
    tool[n] = '\0';
    char *slash = strrchr(tool, '/');
    cr_assert_not_null(slash);
    snprintf(slash + 1, sizeof tool - (size_t)(slash + 1 - tool), "lockstep");
    cr_assert_eq(access(tool, X_OK), 0, "%s is built (make test builds it)", tool);
    cr_assert_not_null(getcwd(root, sizeof root));
    snprintf(dir, sizeof dir, "/tmp/ls_test_render_%ld", (long)getpid());
    char cmd[512];
    snprintf(cmd, sizeof cmd, "mkdir -p %s", dir);
    cr_assert_eq(system(cmd), 0);
}

static void teardown(void)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

// Run `lockstep render ARGS` in the test directory (paths under the repository
// root as $R/...); stdout and stderr captured into out. Returns the exit status.
static int run(char *out, size_t size, const char *args)
{
    char cmd[16384], path[300];
    snprintf(path, sizeof path, "%s/out.txt", dir);
    snprintf(cmd, sizeof cmd, "cd %s && R='%s' && '%s' render %s > out.txt 2>&1", dir, root, tool,
             args);
    int st = system(cmd);
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f);
    size_t got = fread(out, 1, size - 1, f);
    out[got] = '\0';
    fclose(f);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static size_t read_file(const char *name, unsigned char *buf, size_t size)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f) {
        return 0;
    }
    size_t n = fread(buf, 1, size, f);
    fclose(f);
    return n;
}

static void hash_of(const char *out, char *hash)
{
    const char *h = strstr(out, "hash ");
    cr_assert_not_null(h, "no hash in: %s", out);
    memcpy(hash, h + 5, 16);
    hash[16] = '\0';
}

TestSuite(render, .init = setup, .fini = teardown, .timeout = 120);

Test(render, help_names_every_option)
{
    char out[8192];
    cr_assert_eq(run(out, sizeof out, "--help"), 0);
    cr_assert_not_null(strstr(out, "usage: lockstep render"), "%s", out);
    const char *opts[] = {"--tick", "--frames",   "--size", "--camera",
                          "--ids",  "--contacts", "--out"};
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++) {
        cr_assert_not_null(strstr(out, opts[i]), "help lacks %s", opts[i]);
    }
}

Test(render, same_scene_same_pixels_and_bytes)
{
    static unsigned char a[1 << 20], b[1 << 20];
    char out[4096], h1[17], h2[17];
    cr_assert_eq(run(out, sizeof out,
                     "$R/tools/scenes/tower_struck.scene --tick 40 --ids --contacts --out a.png"),
                 0, "%s", out);
    hash_of(out, h1);
    cr_assert_not_null(strstr(out, "wrote a.png (640x400, tick 40, 8 bodies"), "%s", out);
    cr_assert_eq(run(out, sizeof out,
                     "$R/tools/scenes/tower_struck.scene --tick 40 --ids --contacts --out b.png"),
                 0, "%s", out);
    hash_of(out, h2);
    cr_assert_str_eq(h1, h2);
    size_t na = read_file("a.png", a, sizeof a), nb = read_file("b.png", b, sizeof b);
    cr_assert_gt(na, 2000);
    cr_assert_eq(na, nb);
    cr_assert_eq(memcmp(a, b, na), 0, "two renders of the same tick differ");
    cr_assert_eq(memcmp(a, "\x89PNG\r\n\x1a\n", 8), 0, "not a PNG");
    // A different tick (the ball has moved) is a different picture.
    cr_assert_eq(run(out, sizeof out, "$R/tools/scenes/tower_struck.scene --tick 0 --out c.png"),
                 0);
    char h3[17];
    hash_of(out, h3);
    cr_assert_str_neq(h1, h3);
}

Test(render, replay_frames_match_single_ticks)
{
    char out[4096], hf[17], ht[17];
    cr_assert_eq(run(out, sizeof out,
                     "$R/tools/crosscheck/arena.lsr --frames 0:620:310 --size 160x100 --out f.png"),
                 0, "%s", out);
    cr_assert_not_null(strstr(out, "wrote f-00000.png"), "%s", out);
    cr_assert_not_null(strstr(out, "wrote f-00310.png"), "%s", out);
    const char *last = strstr(out, "wrote f-00620.png");
    cr_assert_not_null(last, "%s", out);
    hash_of(last, hf);
    // The same tick reached directly (through another keyframe) gives the same pixels.
    cr_assert_eq(
        run(out, sizeof out, "$R/tools/crosscheck/arena.lsr --tick 620 --size 160x100 --out t.png"),
        0, "%s", out);
    hash_of(out, ht);
    cr_assert_str_eq(hf, ht);
    cr_assert_eq(run(out, sizeof out, "$R/tools/crosscheck/arena.lsr --tick 999999 --out x.png"), 1,
                 "%s", out);
    cr_assert_not_null(strstr(out, "past the recording's end"), "%s", out);
}

Test(render, usage_errors_exit_2)
{
    static const struct {
        const char *args;
        const char *message;
    } cases[] = {
        {"", "missing SCENE or REPLAY"},
        {"$R/tools/scenes/slope.scene", "missing --out FILE.png"},
        {"$R/tools/scenes/slope.scene --out x.jpg", "ending in .png"},
        {"$R/tools/scenes/slope.scene --size 10x10 --out x.png", "--size wants WxH"},
        {"$R/tools/scenes/slope.scene --size big --out x.png", "--size wants WxH"},
        {"$R/tools/scenes/slope.scene --tick -3 --out x.png", "--tick wants a tick number"},
        {"$R/tools/scenes/slope.scene --frames 9:1:1 --out x.png", "--frames wants A:B:STEP"},
        {"$R/tools/scenes/slope.scene --frames 0:9:0 --out x.png", "--frames wants A:B:STEP"},
        {"$R/tools/scenes/slope.scene --tick 1 --frames 0:9:1 --out x.png", "exclude each other"},
        {"$R/tools/scenes/slope.scene --camera sideways --out x.png", "--camera wants"},
        {"$R/tools/scenes/slope.scene --ss 9 --out x.png", "--ss wants 1..4"},
        {"$R/tools/scenes/slope.scene --wat --out x.png", "unknown option '--wat'"},
        {"$R/tools/scenes/slope.scene --out", "--out needs a value"},
        {"a.scene b.scene --out x.png", "unexpected argument 'b.scene'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[4096];
        int st = run(out, sizeof out, cases[i].args);
        cr_expect_eq(st, 2, "'%s' exits %d: %s", cases[i].args, st, out);
        cr_expect_not_null(strstr(out, cases[i].message), "'%s' says: %s", cases[i].args, out);
        cr_expect_not_null(strstr(out, "(see lockstep render --help)"), "'%s' says: %s",
                           cases[i].args, out);
    }
}

Test(render, unreadable_inputs_exit_1)
{
    char out[4096];
    cr_assert_eq(run(out, sizeof out, "no_such.scene --out x.png"), 1, "%s", out);
    cr_assert_not_null(strstr(out, "no_such.scene"), "%s", out);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "printf 'world ticks 10\\nbody dynamic blob\\n' > %s/bad.scene", dir);
    cr_assert_eq(system(cmd), 0);
    cr_assert_eq(run(out, sizeof out, "bad.scene --out x.png"), 1, "%s", out);
    cr_assert_not_null(strstr(out, "bad.scene: 2:14: unknown body property"), "%s", out);
    char cut[2048];
    snprintf(cut, sizeof cut, "head -c 100 %s/tools/crosscheck/arena.lsr > %s/cut.lsr", root, dir);
    cr_assert_eq(system(cut), 0);
    cr_assert_eq(run(out, sizeof out, "cut.lsr --out x.png"), 1, "%s", out);
    cr_assert_not_null(strstr(out, "replay"), "%s", out);
}
