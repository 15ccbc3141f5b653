// SPDX-License-Identifier: MIT
// `make bench`: inline Q16.16 ops vs the linked libfixmath calls, measured in
// one run on the same inputs. Also checks the results are bit-identical.
#define _POSIX_C_SOURCE 200809L
#include "bench_clock.h"
#include "ls/quat.h"
#include "ls/rng.h"

#include <libfixmath/fix16.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N    4096
#define REPS 2000

static ls_fx in_a[N], in_b[N];
static ls_vec3 va[N], vb[N];
static ls_quat qa[N], qb[N];

// libfixmath-call versions of the vector ops, as a program without our inline
// layer would write them (chained, each product rounded).
static ls_vec3 lib_cross(ls_vec3 a, ls_vec3 b)
{
    return ls_vec3_make(fix16_sub(fix16_mul(a.y, b.z), fix16_mul(a.z, b.y)),
                        fix16_sub(fix16_mul(a.z, b.x), fix16_mul(a.x, b.z)),
                        fix16_sub(fix16_mul(a.x, b.y), fix16_mul(a.y, b.x)));
}

static ls_fx lib_dot(ls_vec3 a, ls_vec3 b)
{
    return fix16_add(fix16_add(fix16_mul(a.x, b.x), fix16_mul(a.y, b.y)), fix16_mul(a.z, b.z));
}

static ls_quat lib_qmul(ls_quat a, ls_quat b)
{
    ls_quat r;
    r.x = fix16_add(fix16_add(fix16_mul(a.w, b.x), fix16_mul(a.x, b.w)),
                    fix16_sub(fix16_mul(a.y, b.z), fix16_mul(a.z, b.y)));
    r.y = fix16_add(fix16_add(fix16_mul(a.w, b.y), fix16_mul(a.y, b.w)),
                    fix16_sub(fix16_mul(a.z, b.x), fix16_mul(a.x, b.z)));
    r.z = fix16_add(fix16_add(fix16_mul(a.w, b.z), fix16_mul(a.z, b.w)),
                    fix16_sub(fix16_mul(a.x, b.y), fix16_mul(a.y, b.x)));
    r.w = fix16_sub(fix16_sub(fix16_mul(a.w, b.w), fix16_mul(a.x, b.x)),
                    fix16_add(fix16_mul(a.y, b.y), fix16_mul(a.z, b.z)));
    return r;
}

typedef uint32_t (*kernel)(void);

#define SCALAR_KERNEL(name, expr)                                                                  \
    static uint32_t name(void)                                                                     \
    {                                                                                              \
        uint32_t acc = 0;                                                                          \
        for (int i = 0; i < N; i++) {                                                              \
            ls_fx a = in_a[i], b = in_b[i];                                                        \
            acc += (uint32_t)(expr);                                                               \
        }                                                                                          \
        return acc;                                                                                \
    }

SCALAR_KERNEL(k_mul_ls, ls_fx_mul(a, b))
SCALAR_KERNEL(k_mul_lib, fix16_mul(a, b))
SCALAR_KERNEL(k_div_ls, ls_fx_div(a, b))
SCALAR_KERNEL(k_div_lib, fix16_div(a, b))
SCALAR_KERNEL(k_sqrt_ls, ls_fx_sqrt(a) + (b & 0))
SCALAR_KERNEL(k_sqrt_lib, fix16_sqrt(a) + (b & 0))

static uint32_t k_dot_ls(void)
{
    uint32_t acc = 0;
    for (int i = 0; i < N; i++) {
        acc += (uint32_t)ls_vec3_dot(va[i], vb[i]);
    }
    return acc;
}

static uint32_t k_dot_lib(void)
{
    uint32_t acc = 0;
    for (int i = 0; i < N; i++) {
        acc += (uint32_t)lib_dot(va[i], vb[i]);
    }
    return acc;
}

static uint32_t k_cross_ls(void)
{
    uint32_t acc = 0;
    for (int i = 0; i < N; i++) {
        ls_vec3 c = ls_vec3_cross(va[i], vb[i]);
        acc += (uint32_t)(c.x ^ c.y ^ c.z);
    }
    return acc;
}

static uint32_t k_cross_lib(void)
{
    uint32_t acc = 0;
    for (int i = 0; i < N; i++) {
        ls_vec3 c = lib_cross(va[i], vb[i]);
        acc += (uint32_t)(c.x ^ c.y ^ c.z);
    }
    return acc;
}

static uint32_t k_qmul_ls(void)
{
    uint32_t acc = 0;
    for (int i = 0; i < N; i++) {
        ls_quat q = ls_quat_mul(qa[i], qb[i]);
        acc += (uint32_t)(q.x ^ q.y ^ q.z ^ q.w);
    }
    return acc;
}

static uint32_t k_qmul_lib(void)
{
    uint32_t acc = 0;
    for (int i = 0; i < N; i++) {
        ls_quat q = lib_qmul(qa[i], qb[i]);
        acc += (uint32_t)(q.x ^ q.y ^ q.z ^ q.w);
    }
    return acc;
}

// Median ns per operation over 7 timed batches.
static double time_kernel(kernel k, volatile uint32_t *sink)
{
    double samples[7];
    for (int s = 0; s < 7; s++) {
        double t0 = bench_now_ns();
        for (int r = 0; r < REPS / 7; r++) {
            *sink += k();
        }
        samples[s] = (bench_now_ns() - t0) / ((double)(REPS / 7) * N);
    }
    for (int i = 1; i < 7; i++) {
        for (int j = i; j > 0 && samples[j] < samples[j - 1]; j--) {
            double t = samples[j];
            samples[j] = samples[j - 1];
            samples[j - 1] = t;
        }
    }
    return samples[3];
}

static void fill_inputs(void)
{
    ls_rng r = ls_rng_make(1234, 1);
    for (int i = 0; i < N; i++) {
        // Magnitudes typical of a simulation: 0.001 .. 100, both signs.
        in_a[i] = (ls_fx)((int32_t)ls_rng_next_u32(&r) >> (9 + ls_rng_below(&r, 14)));
        // Divisors of at least 0.5 keep every quotient in range (no overflow cases).
        in_b[i] = (ls_fx)((int32_t)ls_rng_next_u32(&r) >> (9 + ls_rng_below(&r, 7))) | 0x8000;
        va[i] = ls_vec3_make(ls_rng_range(&r, -(50 << 16), 50 << 16),
                             ls_rng_range(&r, -(50 << 16), 50 << 16),
                             ls_rng_range(&r, -(50 << 16), 50 << 16));
        vb[i] = ls_vec3_make(ls_rng_range(&r, -(50 << 16), 50 << 16),
                             ls_rng_range(&r, -(50 << 16), 50 << 16),
                             ls_rng_range(&r, -(50 << 16), 50 << 16));
        qa[i] = ls_quat_normalize(ls_quat_make(va[i].x, va[i].y, va[i].z, vb[i].x));
        qb[i] = ls_quat_normalize(ls_quat_make(vb[i].y, vb[i].z, va[i].x, va[i].y));
    }
}

int main(int argc, char **argv)
{
    // --csv FILE: also append `fx,op,engine,metric,value,unit` rows (make bench).
    FILE *csv = NULL;
    if (argc == 3 && strcmp(argv[1], "--csv") == 0) {
        csv = fopen(argv[2], "a");
        if (!csv) {
            perror(argv[2]);
            return 1;
        }
    } else if (argc != 1) {
        fprintf(stderr, "usage: bench_fx [--csv FILE]\n");
        return 2;
    }
    static const struct {
        const char *name;
        kernel ours, lib;
        int bit_identical; // 1: same results required; 0: different rounding by design
    } rows[] = {
        {"fx mul", k_mul_ls, k_mul_lib, 1},         {"fx div", k_div_ls, k_div_lib, 1},
        {"fx sqrt", k_sqrt_ls, k_sqrt_lib, 1},      {"vec3 dot", k_dot_ls, k_dot_lib, 0},
        {"vec3 cross", k_cross_ls, k_cross_lib, 0}, {"quat mul", k_qmul_ls, k_qmul_lib, 0},
    };
    fill_inputs();
    volatile uint32_t sink = 0;
    int failures = 0;
    printf("  inline ops vs libfixmath %s (Debian build), %d inputs x %d reps, median of 7\n",
           "0~20220222", N, REPS);
    printf("%-12s %12s %14s %8s  %s\n", "op", "ours ns/op", "libfixmath ns", "ratio", "results");
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        uint32_t a = rows[i].ours(), b = rows[i].lib();
        const char *same = a == b                  ? "bit-identical"
                           : rows[i].bit_identical ? "MISMATCH"
                                                   : "rounded once (more exact)";
        failures += rows[i].bit_identical && a != b;
        double t_ours = time_kernel(rows[i].ours, &sink);
        double t_lib = time_kernel(rows[i].lib, &sink);
        printf("%-12s %12.2f %14.2f %7.1fx  %s\n", rows[i].name, t_ours, t_lib, t_lib / t_ours,
               same);
        if (csv) {
            fprintf(csv, "fx,%s,ours,ns_per_op,%.3f,ns\n", rows[i].name, t_ours);
            fprintf(csv, "fx,%s,libfixmath,ns_per_op,%.3f,ns\n", rows[i].name, t_lib);
            fprintf(csv, "fx,%s,ours,speedup_vs_libfixmath,%.2f,x\n", rows[i].name, t_lib / t_ours);
            fprintf(csv, "fx,%s,ours,results,%s,text\n", rows[i].name, same);
        }
    }
    if (csv) {
        fclose(csv);
    }
    return failures ? 1 : 0;
}
