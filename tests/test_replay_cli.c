// SPDX-License-Identifier: MIT
// `lockstep replay` end to end (the tool next to this test binary, built by
// `make test`): record -> info -> verify, a tampered input's DESYNC report with
// the body diff, identical reports with --jobs 1 and 2, a cut file (exit 4, or 1
// with --strict), a flipped byte and a foreign build fingerprint.
#define _POSIX_C_SOURCE 200809L
#include "ls/replay.h"
#include "test_tool.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char tool[4096];
static char dir[256];

static void setup(void)
{
    test_find_tool(tool, sizeof tool);
    snprintf(dir, sizeof dir, "/tmp/ls_test_replay_cli_%ld", (long)getpid());
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

// Run `lockstep ARGS` (stdout and stderr captured into *out); returns the exit status.
static int run(char **out, const char *args)
{
    char cmd[8192], path[300];
    snprintf(path, sizeof path, "%s/out.txt", dir);
    snprintf(cmd, sizeof cmd, "cd %s && '%s' %s > out.txt 2>&1", dir, tool, args);
    int st = system(cmd);
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f);
    *out = calloc(1, 1 << 16);
    size_t got = fread(*out, 1, (1 << 16) - 1, f);
    (*out)[got] = '\0';
    fclose(f);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void record(const char *name, const char *extra)
{
    char args[4096 + 512], cwd[4096], *out;
    cr_assert_not_null(getcwd(cwd, sizeof cwd)); // tests run from the repository root
    snprintf(args, sizeof args,
             "replay record %s/tools/scenes/arena.scene --ticks 400 --seed 11 "
             "--keyframe-interval 100 --out %s %s",
             cwd, name, extra);
    cr_assert_eq(run(&out, args), 0, "%s", out);
    free(out);
}

TestSuite(replay_cli, .init = setup, .fini = teardown);

Test(replay_cli, record_info_verify)
{
    char *out;
    record("m.lsr", "");
    cr_assert_eq(run(&out, "replay info m.lsr"), 0, "%s", out);
    cr_assert(strstr(out, "complete (index present)"), "%s", out);
    char engine[64];
    snprintf(engine, sizeof engine, "recorded by  lockstep %d.%d (", LS_VERSION_MAJOR,
             LS_VERSION_MINOR);
    cr_assert(strstr(out, engine), "%s", out);
    cr_assert(strstr(out, "verify here  yes (this build's fingerprint)\n"), "%s", out);
    cr_assert(strstr(out, "ticks        400 at 60 Hz"), "%s", out);
    cr_assert(strstr(out, "4 x 1 byte per tick, seed 11"), "%s", out);
    cr_assert(strstr(out, "keyframes    4 at ticks 100 200 300 400"), "%s", out);
    free(out);
    cr_assert_eq(run(&out, "replay verify m.lsr"), 0, "%s", out);
    cr_assert_str_eq(out, "verified 400 ticks\n");
    free(out);
    cr_assert_eq(run(&out, "replay verify m.lsr --jobs 2"), 0, "%s", out);
    cr_assert_str_eq(out, "verified 400 ticks\n");
    free(out);
}

Test(replay_cli, a_tampered_input_reports_its_tick_and_the_divergent_body)
{
    char *out, *out2;
    record("m.lsr", "");
    cr_assert_eq(run(&out, "replay tamper m.lsr t.lsr --tick 150 --player 1"), 0, "%s", out);
    free(out);
    cr_assert_eq(run(&out, "replay verify t.lsr"), 3, "a desync is a verification failure: %s",
                 out);
    cr_assert_eq(strncmp(out, "DESYNC at tick 150: recorded ", 29), 0, "%s", out);
    // The diff is at the desync tick itself: the recorded state is reconstructed
    // by finding the one input change that reproduces the recorded checksum.
    cr_assert(strstr(out, "is reproduced when player 1's input is"), "%s", out);
    cr_assert(strstr(out, "bodies at tick 150 (recorded state, reconstructed, vs re-simulated)"),
              "%s", out);
    cr_assert(strstr(out, "first divergent body: body "), "%s", out);
    cr_assert(strstr(out, "position.x"), "%s", out);
    // --jobs 2 verifies segments on two threads and prints the same report.
    cr_assert_eq(run(&out2, "replay verify t.lsr --jobs 2"), 3, "%s", out2);
    cr_assert_str_eq(out2, out);
    free(out);
    free(out2);
    cr_assert_eq(run(&out, "replay diff m.lsr t.lsr"), 3, "%s", out);
    cr_assert(strstr(out, "first difference at tick 150: inputs of player 1 differ"), "%s", out);
    free(out);
}

Test(replay_cli, cut_and_flipped_files_are_reported_with_their_offsets)
{
    char *out, cmd[512];
    record("m.lsr", "");
    snprintf(cmd, sizeof cmd,
             "cd %s && head -c 5000 m.lsr > cut.lsr && cp m.lsr flip.lsr && "
             "printf '\\377' | dd of=flip.lsr bs=1 seek=3000 conv=notrunc 2>/dev/null",
             dir);
    cr_assert_eq(system(cmd), 0);
    // Every readable tick verifies, but the file is incomplete: exit 4 (partial).
    cr_assert_eq(run(&out, "replay verify cut.lsr"), 4, "%s", out);
    // Where the cut falls depends on keyframe sizes (the physics): accept any chunk.
    unsigned ticks = 0;
    cr_assert_eq(sscanf(out, "verified %u ticks", &ticks), 1, "%s", out);
    cr_assert(ticks >= 100 && ticks < 400, "%s", out);
    cr_assert(strstr(out, "note: incomplete recording: file ends inside "), "%s", out);
    cr_assert(strstr(out, " at byte "), "%s", out);
    free(out);
    cr_assert_eq(run(&out, "replay verify cut.lsr --jobs 2"), 4, "%s", out);
    free(out);
    // --strict: an incomplete file is an error (1), whatever its ticks say.
    cr_assert_eq(run(&out, "replay verify cut.lsr --strict"), 1, "%s", out);
    cr_assert_eq(strncmp(out, "ERROR: incomplete recording (--strict): file ends inside ", 57), 0,
                 "%s", out);
    cr_assert_null(strstr(out, "verified "), "%s", out);
    free(out);
    cr_assert_eq(run(&out, "replay verify cut.lsr --json"), 4, "%s", out);
    cr_assert(strstr(out, "\"complete\":false,"), "%s", out);
    cr_assert(strstr(out, "\"result\":\"partial\",\"strict\":false,\"tick\":null"), "%s", out);
    free(out);
    cr_assert_eq(run(&out, "replay verify cut.lsr --json --strict"), 1, "%s", out);
    cr_assert(strstr(out, "\"result\":\"partial\",\"strict\":true,"), "%s", out);
    free(out);
    // A complete file is unaffected by --strict.
    cr_assert_eq(run(&out, "replay verify m.lsr --strict"), 0, "%s", out);
    cr_assert_str_eq(out, "verified 400 ticks\n");
    free(out);
    cr_assert_eq(run(&out, "replay verify m.lsr --json"), 0, "%s", out);
    cr_assert(strstr(out, "\"result\":\"verified\",\"strict\":false,"), "%s", out);
    free(out);
    // A desync in the readable part of a cut file is still a desync (3), strict or not.
    cr_assert_eq(run(&out, "replay tamper m.lsr t.lsr --tick 50 --player 1"), 0, "%s", out);
    free(out);
    snprintf(cmd, sizeof cmd, "cd %s && head -c 5000 t.lsr > tcut.lsr", dir);
    cr_assert_eq(system(cmd), 0);
    cr_assert_eq(run(&out, "replay verify tcut.lsr"), 3, "%s", out);
    cr_assert_eq(strncmp(out, "DESYNC at tick 50", 17), 0, "%s", out);
    free(out);
    cr_assert_eq(run(&out, "replay verify tcut.lsr --strict"), 3, "%s", out);
    free(out);
    cr_assert_eq(run(&out, "replay info flip.lsr"), 1, "%s", out);
    cr_assert(strstr(out, "check code mismatch") && strstr(out, "at byte "), "%s", out);
    free(out);
    cr_assert_eq(run(&out, "replay verify missing.lsr"), 1, "%s", out);
    cr_assert(strstr(out, "cannot open"), "%s", out);
    free(out);
}

// Rewrite a recording under another build fingerprint.
// Count the pixels of a binary PPM (P6) in the columns [x0, x1) that are
// magenta (mode 0: the highlight colour, shaded) or exactly (40, 40, 40)
// (mode 1: the separator); sets *w and *h.
static int ppm_count(const char *path, int x0, int x1, int mode, int *w, int *h)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    int maxval;
    cr_assert_eq(fscanf(f, "P6 %d %d %d", w, h, &maxval), 3);
    fgetc(f);
    int count = 0;
    for (int y = 0; y < *h; y++) {
        for (int x = 0; x < *w; x++) {
            int r = fgetc(f), g = fgetc(f), b = fgetc(f);
            cr_assert_neq(b, EOF);
            bool hit = mode ? r == 40 && g == 40 && b == 40 : r > 150 && b > 100 && g * 3 < r;
            count += x >= x0 && x < x1 && hit;
        }
    }
    fclose(f);
    return count;
}

Test(replay_cli, diff_png_draws_both_recordings_with_the_diverged_body_highlighted)
{
    char *out, *out2, path[512];
    record("m.lsr", "");
    cr_assert_eq(run(&out, "replay tamper m.lsr t.lsr --tick 150 --player 1"), 0, "%s", out);
    free(out);
    cr_assert_eq(run(&out, "replay diff m.lsr t.lsr --png d.ppm --size 200x150 --camera top "
                           "--ahead 30"),
                 3, "%s", out);
    // Player 1 is body 7 (1-based, file order) of the arena.
    cr_assert(strstr(out, "wrote d.ppm (A | B after tick 180, 404x150, bodies differing: 1 = 7; "),
              "%s", out);
    snprintf(path, sizeof path, "%s/d.ppm", dir);
    int w, h;
    // The highlight colour (magenta) is on both sides, the separator between them.
    cr_assert_gt(ppm_count(path, 0, 200, 0, &w, &h), 4, "no magenta in A's half");
    cr_assert_gt(ppm_count(path, 204, 404, 0, &w, &h), 4, "no magenta in B's half");
    cr_assert_eq(w, 404);
    cr_assert_eq(h, 150);
    cr_assert_eq(ppm_count(path, 200, 204, 1, &w, &h), 4 * 150, "the separator");
    // Deterministic: the same picture again; --json adds a "picture" member.
    cr_assert_eq(run(&out2, "replay diff m.lsr t.lsr --png d.ppm --size 200x150 --camera top "
                            "--ahead 30"),
                 3, "%s", out2);
    cr_assert_str_eq(out2, out);
    free(out2);
    free(out);
    cr_assert_eq(run(&out, "replay diff m.lsr t.lsr --json --png d.png"), 3, "%s", out);
    cr_assert(strstr(out, "\"picture\":{\"path\":\"d.png\",\"tick\":150,"
                          "\"differing_bodies\":[7],\"hash\":\""),
              "%s", out);
    free(out);
    // Identical recordings: no picture, exit 0.
    cr_assert_eq(run(&out, "replay diff m.lsr m.lsr --png same.png"), 0, "%s", out);
    free(out);
    snprintf(path, sizeof path, "%s/same.png", dir);
    cr_assert_eq(access(path, F_OK), -1, "nothing is drawn when the recordings agree");
    // Usage errors.
    static const char *const bad[][2] = {
        {"--size 200x150", "--size needs --png FILE"},
        {"--ahead 3", "--ahead needs --png FILE"},
        {"--png d.jpg", "--png wants a file name ending in .png (or .ppm) (got 'd.jpg')"},
        {"--png d.png --size 10x10", "--size wants WxH with 16..2048 each (got '10x10')"},
        {"--png d.png --camera 1,2", "--camera wants auto, front, side, top or"},
        {"--png d.png --ahead -1", "--ahead wants an integer 0..100000, got '-1'"},
        {"--png", "--png needs a value"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char args[256];
        snprintf(args, sizeof args, "replay diff m.lsr t.lsr %s", bad[i][0]);
        cr_assert_eq(run(&out, args), 2, "%s: %s", args, out);
        cr_assert(strstr(out, bad[i][1]), "%s: %s", args, out);
        free(out);
    }
}

Test(replay_cli, verify_png_draws_the_reconstructed_recorded_state_beside_the_computed_one)
{
    char *out, path[512];
    record("m.lsr", "");
    cr_assert_eq(run(&out, "replay tamper m.lsr t.lsr --tick 150 --player 1"), 0, "%s", out);
    free(out);
    cr_assert_eq(run(&out, "replay verify t.lsr --png v.ppm --size 100x80 --camera top"), 3, "%s",
                 out);
    cr_assert(strstr(out, "DESYNC at tick 150: "), "%s", out);
    cr_assert(strstr(out, "wrote v.ppm (recorded | computed after tick 150, 204x80, bodies "
                          "differing: 1 = 7; hash "),
              "%s", out);
    free(out);
    snprintf(path, sizeof path, "%s/v.ppm", dir);
    int w, h;
    cr_assert_gt(ppm_count(path, 0, 100, 0, &w, &h), 0, "magenta in the recorded half");
    cr_assert_gt(ppm_count(path, 104, 204, 0, &w, &h), 0, "magenta in the computed half");
    cr_assert_eq(run(&out, "replay verify t.lsr --json --png v.png"), 3, "%s", out);
    cr_assert(strstr(out, "\"picture\":{\"path\":\"v.png\",\"tick\":150,"
                          "\"differing_bodies\":[7],"),
              "%s", out);
    free(out);
    // A recording that verifies: no picture.
    cr_assert_eq(run(&out, "replay verify m.lsr --png ok.png"), 0, "%s", out);
    cr_assert_str_eq(out, "verified 400 ticks\n");
    free(out);
    snprintf(path, sizeof path, "%s/ok.png", dir);
    cr_assert_eq(access(path, F_OK), -1);
    cr_assert_eq(run(&out, "replay verify t.lsr --camera top"), 2, "%s", out);
    cr_assert(strstr(out, "--camera needs --png FILE"), "%s", out);
    free(out);
    cr_assert_eq(run(&out, "replay verify t.lsr --png v.png --ahead 3"), 2, "%s", out);
    cr_assert(strstr(out, "--ahead"), "%s", out);
    free(out);
}

static void refingerprint(const char *from, const char *to, const char *fingerprint)
{
    ls_error e;
    ls_replay_reader *r = ls_replay_reader_open(from, &e);
    cr_assert_not_null(r, "%s", e.message);
    const ls_replay_header *h = ls_replay_reader_header(r);
    ls_replay_recorder_def def = ls_default_replay_recorder_def();
    def.players = h->players;
    def.fingerprint = fingerprint;
    def.scene = h->scene;
    def.scene_size = h->scene_size;
    ls_error err;
    ls_replay_recorder *rec = ls_replay_recorder_create(to, &def, &err);
    cr_assert_not_null(rec);
    ls_replay_cursor *c = ls_replay_cursor_create(r);
    for (uint32_t t = 0; t < ls_replay_reader_ticks(r); t++) {
        const uint8_t *in;
        uint64_t sum;
        ls_replay_cursor_read(c, t, &in, &sum);
        ls_replay_recorder_append(rec, in, sum);
    }
    cr_assert_eq(ls_replay_recorder_finish(rec), LS_OK);
    ls_replay_recorder_destroy(rec);
    ls_replay_cursor_destroy(c);
    ls_replay_reader_destroy(r);
}

Test(replay_cli, a_foreign_build_fingerprint_is_refused)
{
    char *out, from[300], to[300];
    record("m.lsr", "");
    snprintf(from, sizeof from, "%s/m.lsr", dir);
    snprintf(to, sizeof to, "%s/foreign.lsr", dir);
    refingerprint(from, to, "fx=Q8.24;game=other");
    cr_assert_eq(run(&out, "replay verify foreign.lsr"), 1, "%s", out);
    cr_assert(strstr(out, "build fingerprint at byte 56: recorded by an unknown engine "
                          "(fingerprint 'fx=Q8.24;game=other'); this is lockstep "),
              "%s", out);
    cr_assert(strstr(out, "its number format differs, so it cannot be verified here"), "%s", out);
    cr_assert(strstr(out, "LS_ERR_INCOMPATIBLE"), "%s", out);
    free(out);
    cr_assert_eq(run(&out, "replay info foreign.lsr"), 0, "%s", out);
    cr_assert(strstr(out, "(NOT this build's)"), "%s", out);
    cr_assert(strstr(out, "recorded by  an unknown engine (fingerprint 'fx=Q8.24;game=other')\n"),
              "%s", out);
    free(out);
}

// An engine no release is: named as unknown by its fields, with no advice.
Test(replay_cli, an_unknown_engine_is_named_unknown)
{
    char *out, from[300], to[300];
    record("m.lsr", "");
    snprintf(from, sizeof from, "%s/m.lsr", dir);
    snprintf(to, sizeof to, "%s/future.lsr", dir);
    refingerprint(from, to,
                  "fx=Q16.16;libfixmath=0~20220222,no-FIXMATH-defines;checksum=xxh3-64,SPEC-8+12;"
                  "snapshot=LSSN-99;physics=solver-v99;game=push-20N-v1");
    cr_assert_eq(run(&out, "replay verify future.lsr"), 1, "%s", out);
    cr_assert(strstr(out, "build fingerprint at byte 56: recorded by an unknown engine (snapshot "
                          "LSSN-99, physics solver-v99); this is lockstep "),
              "%s", out);
    cr_assert(
        strstr(out, "its physics differ, so it cannot be verified here [LS_ERR_INCOMPATIBLE]"),
        "%s", out);
    cr_assert_null(strstr(out, "verify it with"), "%s", out);
    free(out);
    cr_assert_eq(run(&out, "replay info future.lsr"), 0, "%s", out);
    cr_assert(
        strstr(out, "recorded by  an unknown engine (snapshot LSSN-99, physics solver-v99)\n"),
        "%s", out);
    cr_assert(strstr(out, "verify here  no: this is lockstep "), "%s", out);
    free(out);
    cr_assert_eq(run(&out, "replay info future.lsr --json"), 0, "%s", out);
    cr_assert(strstr(out, "\"recorded_by\":{\"engine\":\"an unknown engine (snapshot LSSN-99, "
                          "physics solver-v99)\",\"known\":false,\"version\":null,"),
              "%s", out);
    cr_assert(strstr(out, "\"verifiable_here\":false"), "%s", out);
    free(out);
}

// A recording the previous engine made (tests/replays/README.md): refused by
// name by verify (text and JSON), described by info, noted by diff.
Test(replay_cli, a_recording_of_the_previous_engine_is_refused_by_name)
{
    char *out, cwd[4096], args[4096 + 256];
    cr_assert_not_null(getcwd(cwd, sizeof cwd));
    const char *v2 = "tests/replays/solver_v2_arena.lsr";
    char this_engine[64];
    snprintf(this_engine, sizeof this_engine, "this is lockstep %d.%d (", LS_VERSION_MAJOR,
             LS_VERSION_MINOR);
    snprintf(args, sizeof args, "replay verify %s/%s", cwd, v2);
    cr_assert_eq(run(&out, args), 1, "%s", out);
    cr_assert(strstr(out, "build fingerprint at byte 56: recorded by lockstep 0.2 (Solver v2: "
                          "snapshot LSSN-3, physics solver-v2); "),
              "%s", out);
    cr_assert(strstr(out, this_engine), "%s", out);
    cr_assert(strstr(out, "its physics differ, so it cannot be verified here; verify it with "
                          "lockstep 0.2 [LS_ERR_INCOMPATIBLE]"),
              "%s", out);
    free(out);
    snprintf(args, sizeof args, "replay verify %s/%s --json --jobs 2", cwd, v2);
    cr_assert_eq(run(&out, args), 1, "%s", out);
    cr_assert(strstr(out, "{\"file\":"), "%s", out);
    cr_assert(strstr(out, "\"result\":\"incompatible\""), "%s", out);
    cr_assert(strstr(out, "\"offset\":56"), "%s", out);
    cr_assert(strstr(out, "\"recorded_by\":{\"engine\":\"lockstep 0.2 (Solver v2: snapshot LSSN-3, "
                          "physics solver-v2)\",\"known\":true,\"version\":\"0.2\",\"solver\":"
                          "\"Solver v2\",\"snapshot\":\"LSSN-3\",\"physics\":\"solver-v2\"}"),
              "%s", out);
    free(out);
    snprintf(args, sizeof args, "replay info %s/%s", cwd, v2);
    cr_assert_eq(run(&out, args), 0, "%s", out);
    cr_assert(strstr(out, "format       1 (engine 0.2.0)\n"), "%s", out);
    cr_assert(
        strstr(out, "recorded by  lockstep 0.2 (Solver v2: snapshot LSSN-3, physics solver-v2)\n"),
        "%s", out);
    char line[128];
    snprintf(line, sizeof line, "verify here  no: %s", this_engine);
    cr_assert(strstr(out, line), "%s", out);
    cr_assert(strstr(out, "verify it with lockstep 0.2\n"), "%s", out);
    free(out);
    snprintf(args, sizeof args, "replay info %s/%s --json", cwd, v2);
    cr_assert_eq(run(&out, args), 0, "%s", out);
    cr_assert(strstr(out, "\"version\":\"0.2\""), "%s", out);
    cr_assert(strstr(out, "\"verifiable_here\":false,\"refusal\":\"this is lockstep "), "%s", out);
    free(out);
    record("m.lsr", "");
    snprintf(args, sizeof args, "replay diff %s/%s m.lsr", cwd, v2);
    cr_assert_eq(run(&out, args), 3, "%s", out);
    cr_assert(strstr(out, "note: A was recorded by lockstep 0.2 (Solver v2: snapshot LSSN-3, "
                          "physics solver-v2), B by lockstep "),
              "%s", out);
    free(out);
}

// kill -9 a recording match: the file is readable and verifies to its last chunk.
Test(replay_cli, a_recorder_killed_mid_match_leaves_a_verifiable_prefix)
{
    char scene[4096 + 64], cwd[4096], path[300], *out;
    cr_assert_not_null(getcwd(cwd, sizeof cwd));
    snprintf(scene, sizeof scene, "%s/tools/scenes/arena.scene", cwd);
    snprintf(path, sizeof path, "%s/killed.lsr", dir);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        int devnull = open("/dev/null", O_WRONLY);
        dup2(devnull, 1);
        execl(tool, tool, "replay", "record", scene, "--ticks", "100000000", "--seed", "3", "--out",
              path, (char *)NULL);
        _exit(127);
    }
    struct stat st = {0};
    for (int i = 0; i < 1000 && (stat(path, &st) != 0 || st.st_size < 8000); i++) {
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL); // up to 10 s
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    cr_assert_geq(st.st_size, 8000, "the recorder wrote chunks");
    cr_assert_eq(run(&out, "replay info killed.lsr"), 0, "%s", out);
    cr_assert(strstr(out, "INCOMPLETE"), "%s", out);
    free(out);
    cr_assert_eq(run(&out, "replay verify killed.lsr --jobs 2"), 4, "partial: %s", out);
    unsigned ticks = 0;
    cr_assert_eq(sscanf(out, "verified %u ticks", &ticks), 1, "%s", out);
    cr_assert_geq(ticks, 60u, "%s", out);
    cr_assert(strstr(out, "note: incomplete recording: "), "%s", out);
    free(out);
    cr_assert_eq(run(&out, "replay verify killed.lsr --strict"), 1, "%s", out);
    cr_assert(strstr(out, "ERROR: incomplete recording (--strict): "), "%s", out);
    free(out);
}

// Two players who disagree: the relay names nobody (a disputed tick), but its
// recording keeps both claims (format 2), and `replay verify` re-simulates the
// inputs and names the one who was wrong, offline. Bot 0 diverges on purpose
// at tick 40 (`match --perturb 0:40`): from there every tick is disputed and the
// recorded checksum is bot 0's (the lowest slot's) claim, yet the recording is
// sound: verified, exit 0, with the verdicts.
Test(replay_cli, verify_names_the_player_whose_claim_was_wrong, .timeout = 120)
{
    char args[4096 + 256], cwd[4096], *out, *out2;
    cr_assert_not_null(getcwd(cwd, sizeof cwd));
    snprintf(args, sizeof args,
             "match --peers 2 --ticks 120 --tick-rate 600 --perturb 0:40 --replay d.lsr "
             "--no-progress --scene %s/tools/scenes/arena.scene",
             cwd);
    cr_assert_eq(run(&out, args), 3, "the bots' final checksums differ: %s", out);
    cr_assert(strstr(out, "verify result: OK"), "%s", out);
    free(out);
    cr_assert_eq(run(&out, "replay info d.lsr"), 0, "%s", out);
    cr_assert(strstr(out, "format       2 ("), "%s", out);
    cr_assert(strstr(out, "claims       80 ticks (80 disputed) from tick 40, "), "%s", out);
    free(out);
    cr_assert_eq(run(&out, "replay verify d.lsr"), 0, "a sound recording with verdicts: %s", out);
    const char *head = "verified 120 ticks\n"
                       "disputes: 80 ticks (80 disputed) from tick 40; wrong: player 0 (80 ticks)\n"
                       "tick 40 (disputed): player 0 claimed ";
    cr_assert_eq(strncmp(out, head, strlen(head)), 0, "%s", out);
    // "player 0 claimed X, player 1 claimed Y; the inputs give Y: player 0 was wrong"
    char x[17], y[17], truth[17];
    cr_assert_eq(sscanf(out + strlen(head) - strlen("player 0 claimed "),
                        "player 0 claimed %16[0-9a-f], player 1 claimed %16[0-9a-f]; the inputs "
                        "give %16[0-9a-f]",
                        x, y, truth),
                 3, "%s", out);
    cr_assert_str_eq(truth, y, "player 1 was right");
    cr_assert_str_neq(x, y);
    cr_assert(strstr(out, ": player 0 was wrong\ntick 41 (disputed): "), "%s", out);
    cr_assert(strstr(out, "... and 70 more ticks with claims (--json lists every one)\n"), "%s",
              out);
    cr_assert_eq(run(&out2, "replay verify d.lsr --jobs 2"), 0, "%s", out2);
    cr_assert_str_eq(out2, out);
    free(out2);
    free(out);
    cr_assert_eq(run(&out, "replay verify d.lsr --json"), 0, "%s", out);
    cr_assert(strstr(out, "\"result\":\"verified\""), "%s", out);
    cr_assert(strstr(out, "\"disputes\":[{\"tick\":40,\"disputed\":true,\"wrong\":[0],"), "%s",
              out);
    cr_assert(strstr(out, "\"wrong_players\":[{\"player\":0,\"ticks\":80,\"first_tick\":40}]"),
              "%s", out);
    free(out);
    cr_assert_eq(run(&out, "replay dump d.lsr --from 40 --to 41"), 0, "%s", out);
    cr_assert(strstr(out, " claims disputed 0:"), "%s", out);
    free(out);
    // A copy with an input changed before the dispute keeps the claims and fails
    // at that tick, as any tampered recording.
    cr_assert_eq(run(&out, "replay tamper d.lsr t.lsr --tick 10 --player 1"), 0, "%s", out);
    free(out);
    cr_assert_eq(run(&out, "replay verify t.lsr"), 3, "%s", out);
    cr_assert_eq(strncmp(out, "DESYNC at tick 10: ", 19), 0, "%s", out);
    free(out);
    cr_assert_eq(run(&out, "replay info t.lsr"), 0, "%s", out);
    cr_assert(strstr(out, "claims       80 ticks (80 disputed) from tick 40, "), "%s", out);
    free(out);
}
