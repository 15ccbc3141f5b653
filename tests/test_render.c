// SPDX-License-Identifier: MIT
// `lockstep render` end to end (the tool next to this test binary, built by
// `make test`): the same scene gives the same pixels on every run, replays
// render at any tick and as numbered frames, and bad arguments fail with clear
// messages (exit 2 for usage errors, 1 for unreadable inputs).
#define _POSIX_C_SOURCE 200809L
#include "test_tool.h"
#include <criterion/criterion.h>
#include <math.h>
#include <stdbool.h>
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
    test_find_tool(tool, sizeof tool);
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

// Pixel (x, y) of a binary PPM written by `lockstep render --out X.ppm`.
static const unsigned char *ppm_pixel(const unsigned char *ppm, size_t n, int x, int y)
{
    int w, h, maxval, used = 0;
    cr_assert_eq(sscanf((const char *)ppm, "P6 %d %d %d%n", &w, &h, &maxval, &used), 3);
    cr_assert_eq(maxval, 255);
    size_t off = (size_t)used + 1 + ((size_t)y * (size_t)w + (size_t)x) * 3;
    cr_assert(x >= 0 && y >= 0 && x < w && y < h && off + 3 <= n, "pixel %d,%d is outside", x, y);
    return ppm + off;
}

// Output pixel of world point (x, y, z) for the camera at (0, 1, 10) looking
// at (0, 1, 0) with a 40 degree vertical field of view (a 320x200 picture).
static void project(float x, float y, float z, int *px, int *py)
{
    float f = 100.0f / tanf(20.0f * 3.14159265f / 180.0f), depth = 10.0f - z;
    *px = (int)(160.0f + x * f / depth);
    *py = (int)(100.0f - (y - 1.0f) * f / depth);
}

// A compound body (a box with a sphere 1 m above it), a convex hull and a
// static triangle mesh: each is drawn where it is (its colour at its projected
// centre is not the sky's: the sky is bluer than red, these are redder than
// blue), and the picture is the same bytes on every run.
Test(render, compound_hull_and_mesh_are_drawn)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "cat > %s/shapes.scene <<'END'\n"
             "world gravity 0 -9.81 0 tick_rate 60 ticks 60\n"
             "body static mesh vertices 4 -4 0 -4  4 0 -4  4 0 6  -4 0 6 "
             "triangles 2 0 3 2 0 2 1 friction 0.6\n"
             "body dynamic box half 0.35 0.35 0.35 pos -2.2 1 0\n"
             "shape sphere radius 0.35 at 0 1 0\n"
             "body dynamic hull points 6 0.5 0 0 -0.5 0 0 0 0.5 0 0 -0.5 0 0 0 0.5 0 0 -0.5 "
             "pos 2 1 0\n"
             "END\n",
             dir);
    cr_assert_eq(system(cmd), 0);
    char out[4096], h1[17], h2[17];
    const char *args = "shapes.scene --size 320x200 --camera 0,1,10,0,1,0 --ids --contacts";
    char a1[512], a2[512], a3[512], a4[512];
    snprintf(a1, sizeof a1, "%s --out a.png", args);
    snprintf(a2, sizeof a2, "%s --out b.png", args);
    snprintf(a3, sizeof a3, "%s --out c.ppm", args);
    // Without labels (they would cover the centres) for the pixel checks.
    snprintf(a4, sizeof a4, "shapes.scene --size 320x200 --camera 0,1,10,0,1,0 --out d.ppm");
    cr_assert_eq(run(out, sizeof out, a1), 0, "%s", out);
    cr_assert_not_null(strstr(out, "wrote a.png (320x200, tick 0, 3 bodies"), "%s", out);
    hash_of(out, h1);
    cr_assert_eq(run(out, sizeof out, a2), 0, "%s", out);
    hash_of(out, h2);
    cr_assert_str_eq(h1, h2);
    static unsigned char a[1 << 18], b[1 << 18], p[1 << 18];
    size_t na = read_file("a.png", a, sizeof a), nb = read_file("b.png", b, sizeof b);
    cr_assert_gt(na, 1000);
    cr_assert_eq(na, nb);
    cr_assert_eq(memcmp(a, b, na), 0, "two renders of the same scene differ");
    cr_assert_eq(run(out, sizeof out, a3), 0, "%s", out);
    char h3[17];
    hash_of(out, h3);
    cr_assert_str_eq(h1, h3, "the PPM has other pixels than the PNG");
    cr_assert_eq(run(out, sizeof out, a4), 0, "%s", out);
    size_t np = read_file("d.ppm", p, sizeof p);
    cr_assert_eq(np, 15 + 320 * 200 * 3, "PPM of %zu bytes", np);

    static const struct {
        const char *what;
        float x, y, z;
        bool drawn;
    } spots[] = {
        {"the compound's box", -2.2f, 1.0f, 0.0f, true},
        {"the compound's sphere (local offset 0 1 0)", -2.2f, 2.0f, 0.0f, true},
        {"the hull", 2.0f, 1.0f, 0.0f, true},
        {"the mesh in front", 0.0f, 0.0f, 4.0f, true},
        {"the sky above the hull", 2.0f, 3.0f, 0.0f, false},
        {"the sky beside the box's sphere", -2.2f, 2.6f, 0.0f, false},
    };
    for (size_t i = 0; i < sizeof spots / sizeof spots[0]; i++) {
        int x, y;
        project(spots[i].x, spots[i].y, spots[i].z, &x, &y);
        const unsigned char *px = ppm_pixel(p, np, x, y);
        bool drawn = px[0] > px[2];
        cr_expect_eq(drawn, spots[i].drawn, "%s at pixel %d,%d: rgb %u %u %u", spots[i].what, x, y,
                     px[0], px[1], px[2]);
    }
}
