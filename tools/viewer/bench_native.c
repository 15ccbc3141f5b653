// SPDX-License-Identifier: MIT
// Native baseline of `make bench-viewer`: the viewer's own API (api.c, built
// natively with the project's compiler and flags) re-simulates and verifies a
// replay from tick 0 to its end; prints the best ticks/s of N runs.
#define _POSIX_C_SOURCE 200809L
#include "../render/render.h"
#include "api.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: viewer_bench_native REPLAY REPEATS\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        fprintf(stderr, "viewer_bench_native: cannot open %s\n", argv[1]);
        return 1;
    }
    static uint8_t buf[64 << 20];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    int repeats = atoi(argv[2]);
    double best = 0.0;
    uint32_t ticks = 0;
    for (int r = 0; r < (repeats > 0 ? repeats : 1); r++) {
        if (vw_open(0, buf, (uint32_t)n) != 0) {
            fprintf(stderr, "viewer_bench_native: %s: %s\n", argv[1], vw_error());
            return 1;
        }
        double t0 = now_seconds();
        ticks = vw_run(0, vw_ticks(0));
        double rate = (double)ticks / (now_seconds() - t0);
        if (vw_mismatch_tick(0) >= 0 || vw_verified(0) != vw_ticks(0)) {
            fprintf(stderr, "viewer_bench_native: %s: DESYNC at tick %lld\n", argv[1],
                    (long long)vw_mismatch_tick(0));
            return 1;
        }
        best = rate > best ? rate : best;
    }
    printf("%u %.0f %016llx\n", ticks, best, (unsigned long long)vw_checksum(0));
    vw_close(0);
    return 0;
}
