// SPDX-License-Identifier: MIT
// build/bench_vehicle_game: the "4-car game scene" row of `make bench-vehicle`
// (issue 15): ms per ls_game_tick on a game scene (tools/scenes/soccer.scene)
// with one worker, R fresh runs of the scene's ticks. Inputs: a soccer scene's
// players are the game's bots (ls_soccer_bot_input, seed 1), other scenes get
// the seeded script of ls_input_script (seed 1); one byte per player. Only
// ls_game_tick (inputs applied, world stepped, rules, checksum) is timed;
// the bots and the script are not.
// Rows: `vehicle,SCENE,ours,ms_per_tick,...` (goal <= 0.5 ms/tick).
#define _POSIX_C_SOURCE 200809L
#include "ls/game.h"
#include "ls/scene.h"
#include "vehicle_bench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int usage(void)
{
    fprintf(stderr, "usage: bench_vehicle_game SCENE [--ticks N] [--repeats R] [--csv FILE] "
                    "[--quiet]\n");
    return 2;
}

int main(int argc, char **argv)
{
    const char *path = NULL, *csv = NULL;
    long ticks = 0, repeats = 3;
    int quiet = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--ticks") == 0 && i + 1 < argc) {
            ticks = strtol(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--repeats") == 0 && i + 1 < argc) {
            repeats = strtol(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--csv") == 0 && i + 1 < argc) {
            csv = argv[++i];
        } else if (strcmp(argv[i], "--quiet") == 0) {
            quiet = 1;
        } else if (argv[i][0] == '-' || path) {
            return usage();
        } else {
            path = argv[i];
        }
    }
    if (!path || repeats < 1 || repeats > 16 || ticks < 0 || ticks > 1000000) {
        return usage();
    }
    ls_scene sc;
    ls_error e;
    if (ls_scene_load(path, &sc, &e) != LS_OK) {
        fprintf(stderr, "bench_vehicle_game: %s\n", e.message);
        return 1;
    }
    sc.world.worker_count = 1;
    uint32_t n = ticks ? (uint32_t)ticks : sc.ticks;
    uint32_t players = sc.player_count ? sc.player_count : 1;
    double ms[16];
    uint64_t sum = 0;
    double ball_path = 0; // soccer: how far the ball rolled in the last run, m (untimed)
    int32_t score[2] = {0, 0};
    for (long rep = 0; rep < repeats; rep++) {
        ls_world *w = ls_scene_instantiate(&sc, &e);
        if (!w) {
            fprintf(stderr, "bench_vehicle_game: %s\n", e.message);
            ls_scene_free(&sc);
            return 1;
        }
        ls_input_script script;
        ls_input_script_init(&script, 1, players);
        ls_soccer_bot bots[LS_SCENE_MAX_PLAYERS];
        for (uint32_t p = 0; p < players; p++) {
            ls_soccer_bot_init(&bots[p], 1, p);
        }
        uint8_t in[LS_SCENE_MAX_PLAYERS];
        double total = 0;
        int soccer = sc.game == LS_SCENE_GAME_SOCCER;
        ls_body_id ball = soccer ? ls_world_body_at(w, sc.soccer.ball_body) : (ls_body_id){0};
        ls_vec3 prev = soccer ? ls_body_position(w, ball) : (ls_vec3){0};
        ball_path = 0;
        for (uint32_t t = 0; t < n; t++) {
            if (sc.game == LS_SCENE_GAME_SOCCER) {
                for (uint32_t p = 0; p < players; p++) {
                    in[p] = ls_soccer_bot_input(&bots[p], w, &sc);
                }
            } else {
                ls_input_script_next(&script, in, 1);
            }
            double t0 = bench_now_ns();
            sum = ls_game_tick(w, &sc, in, players, 1);
            total += bench_now_ns() - t0;
            if (soccer) {
                ls_vec3 now = ls_body_position(w, ball);
                double dx = (now.x - prev.x) / 65536.0, dy = (now.y - prev.y) / 65536.0,
                       dz = (now.z - prev.z) / 65536.0;
                double step = sqrt(dx * dx + dy * dy + dz * dz);
                ball_path += step < 5 ? step : 0; // a kick-off teleport is not rolling
                prev = now;
            }
        }
        if (soccer) {
            score[0] = ls_soccer_score(w, 0), score[1] = ls_soccer_score(w, 1);
        }
        ms[rep] = total / 1e6 / (double)(n ? n : 1);
        ls_world_destroy(w);
    }
    char name[64];
    const char *base = strrchr(path, '/');
    snprintf(name, sizeof name, "%s", base ? base + 1 : path);
    char *dot = strrchr(name, '.');
    if (dot) {
        *dot = 0;
    }
    double lo = ms[0];
    for (long i = 1; i < repeats; i++) {
        lo = ms[i] < lo ? ms[i] : lo;
    }
    if (!quiet) {
        printf("  ours    %s  %u players (%s), %u vehicles, %u ticks x%ld  %.4f ms/tick (min)  "
               "ball rolled %.1f m, score %d-%d, checksum %016llx\n",
               name, players, sc.game == LS_SCENE_GAME_SOCCER ? "bots" : "script", sc.vehicle_count,
               n, repeats, lo, ball_path, score[0], score[1], (unsigned long long)sum);
    }
    if (csv) {
        FILE *f = fopen(csv, "a");
        if (!f) {
            perror(csv);
            ls_scene_free(&sc);
            return 1;
        }
        for (long i = 0; i < repeats; i++) {
            fprintf(f, "vehicle,%s,ours,ms_per_tick,%.6f,ms\n", name, ms[i]);
        }
        fprintf(f, "vehicle,%s,ours,ticks,%u,count\n", name, n);
        fprintf(f, "vehicle,%s,ours,ball_path,%.3f,m\n", name, ball_path);
        fprintf(f, "vehicle,%s,ours,score_team0,%d,goals\n", name, score[0]);
        fprintf(f, "vehicle,%s,ours,score_team1,%d,goals\n", name, score[1]);
        fclose(f);
    }
    ls_scene_free(&sc);
    return 0;
}
