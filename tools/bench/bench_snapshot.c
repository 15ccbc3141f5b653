// SPDX-License-Identifier: MIT
// build/bench_snapshot: ls_world_snapshot_save / _restore of a settled scene
// (the 1000-box pile after its ticks) against a plain memcpy of the same
// number of bytes, in one run. Also checks that restore brings back the state
// (same canonical checksum), so the timed code is the real thing.
#define _POSIX_C_SOURCE 200809L
#include "bench.h"
#include "ls/scene.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BATCHES 9

typedef struct ctx {
    ls_world *w;
    uint8_t *buf, *copy;
    size_t size;
} ctx;

typedef void (*op_fn)(ctx *c);

static void op_save(ctx *c)
{
    if (ls_world_snapshot_save(c->w, c->buf, c->size) != c->size) {
        abort();
    }
}

static void op_restore(ctx *c)
{
    if (ls_world_snapshot_restore(c->w, c->buf, c->size, NULL) != LS_OK) {
        abort();
    }
}

static void op_memcpy(ctx *c)
{
    memcpy(c->copy, c->buf, c->size);
    // Keep the copy observable so the compiler cannot drop it.
    __asm__ volatile("" : : "r"(c->copy) : "memory");
}

// Median ns per call over BATCHES batches of `reps` calls.
static double time_op(op_fn f, ctx *c, int reps)
{
    double ns[BATCHES];
    for (int b = 0; b < BATCHES; b++) {
        double t0 = bench_now_ns();
        for (int r = 0; r < reps; r++) {
            f(c);
        }
        ns[b] = (bench_now_ns() - t0) / reps;
    }
    return bench_median(ns, BATCHES);
}

static int settle(const char *path, ctx *c, uint32_t *ticks)
{
    ls_scene sc;
    ls_error err;
    if (ls_scene_load(path, &sc, &err) != LS_OK) {
        fprintf(stderr, "%s:%u:%u: %s\n", path, err.line, err.column, err.message);
        return 1;
    }
    c->w = ls_scene_instantiate(&sc, &err);
    *ticks = sc.ticks;
    ls_scene_free(&sc);
    if (!c->w) {
        fprintf(stderr, "%s: %s\n", path, err.message);
        return 1;
    }
    for (uint32_t t = 0; t < *ticks; t++) {
        ls_world_step(c->w);
    }
    return 0;
}

// Save, step on, restore: the checksum must be the saved one.
static int check_round_trip(ctx *c)
{
    uint64_t before = ls_world_checksum(c->w);
    op_save(c);
    for (int t = 0; t < 10; t++) {
        ls_world_step(c->w);
    }
    op_restore(c);
    if (ls_world_checksum(c->w) != before) {
        fprintf(stderr, "bench_snapshot: restore did not reproduce the saved state\n");
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (!(argc == 2 || (argc == 4 && strcmp(argv[2], "--csv") == 0))) {
        fprintf(stderr, "usage: bench_snapshot SCENE [--csv FILE]\n");
        return 2;
    }
    ctx c = {0};
    uint32_t ticks = 0;
    if (settle(argv[1], &c, &ticks) != 0) {
        return 1;
    }
    c.size = ls_world_snapshot_size(c.w);
    c.buf = malloc(c.size);
    c.copy = malloc(c.size);
    if (!c.buf || !c.copy || check_round_trip(&c) != 0) {
        return 1;
    }
    // About 2 MB per batch of memcpy keeps each batch well above timer resolution.
    int reps = (int)(4000000 / (c.size + 1)) + 20;
    double t_save = time_op(op_save, &c, reps);
    double t_restore = time_op(op_restore, &c, reps);
    double t_copy = time_op(op_memcpy, &c, reps);
    ls_step_info info = ls_world_info(c.w);
    printf("  scene %s after %u ticks: %u bodies (%u asleep), %u contacts, snapshot %zu bytes\n",
           argv[1], ticks, ls_world_body_count(c.w), info.asleep_bodies, info.contacts, c.size);
    printf("  %-22s %12s %12s %10s\n", "operation", "ns/call", "GB/s", "vs memcpy");
    printf("  %-22s %12.0f %12.2f %9.2fx\n", "snapshot save", t_save, (double)c.size / t_save,
           t_save / t_copy);
    printf("  %-22s %12.0f %12.2f %9.2fx\n", "snapshot restore", t_restore,
           (double)c.size / t_restore, t_restore / t_copy);
    printf("  %-22s %12.0f %12.2f %9.2fx\n", "memcpy (same bytes)", t_copy, (double)c.size / t_copy,
           1.0);
    printf("  restore verified: checksum after restore equals the saved state's\n");
    if (argc == 4) {
        FILE *f = fopen(argv[3], "a");
        if (!f) {
            perror(argv[3]);
            return 1;
        }
        fprintf(f, "snapshot,pile_1000,ours,bytes,%zu,bytes\n", c.size);
        fprintf(f, "snapshot,pile_1000,ours,save_ns,%.0f,ns\n", t_save);
        fprintf(f, "snapshot,pile_1000,ours,restore_ns,%.0f,ns\n", t_restore);
        fprintf(f, "snapshot,pile_1000,memcpy,copy_ns,%.0f,ns\n", t_copy);
        fprintf(f, "snapshot,pile_1000,ours,save_over_memcpy,%.2f,x\n", t_save / t_copy);
        fprintf(f, "snapshot,pile_1000,ours,restore_over_memcpy,%.2f,x\n", t_restore / t_copy);
        fclose(f);
    }
    ls_world_destroy(c.w);
    free(c.buf);
    free(c.copy);
    return 0;
}
