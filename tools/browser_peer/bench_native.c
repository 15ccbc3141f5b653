// SPDX-License-Identifier: MIT
// `make bench-browser-peer`, the native side: bp_bench (tools/browser_peer/api.c,
// the very function the wasm module exports) compiled with gcc and $(CFLAGS).
//   bench_native SCENE TICKS REPEATS
// prints "scalar MS_PER_TICK CHECKSUM" and "auto MS_PER_TICK CHECKSUM (PATH)": the
// best of REPEATS runs, with the solver's scalar path and with its fastest one.
#define _POSIX_C_SOURCE 200809L
#include "api.h"
#include "ls/world.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: bench_native SCENE TICKS REPEATS\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    static char text[1 << 20];
    size_t n = f ? fread(text, 1, sizeof text, f) : 0;
    if (f) {
        fclose(f);
    }
    uint32_t ticks = (uint32_t)strtoul(argv[2], NULL, 10);
    int repeats = atoi(argv[3]);
    if (n == 0 || ticks == 0 || repeats < 1) {
        fprintf(stderr, "bench_native: cannot read %s or bad numbers\n", argv[1]);
        return 1;
    }
    for (uint32_t scalar = 2; scalar-- > 0;) { // 1: the scalar path, then 0: the fastest
        double best = 1e300;
        uint64_t sum = 0;
        for (int r = 0; r < repeats; r++) {
            double t0 = now_ms();
            sum = bp_bench(text, (uint32_t)n, ticks, scalar);
            double dt = now_ms() - t0;
            best = dt < best ? dt : best;
        }
        printf("%s %.4f %016llx%s%s\n", scalar ? "scalar" : "auto", best / ticks,
               (unsigned long long)sum, scalar ? "" : " ",
               scalar ? "" : (ls_simd_available(LS_SIMD_AVX2) ? "avx2" : "scalar"));
    }
    return 0;
}
