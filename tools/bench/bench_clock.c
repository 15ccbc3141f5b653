// SPDX-License-Identifier: MIT
// Timing helpers shared by every benchmark binary (bench_clock.h).
#define _POSIX_C_SOURCE 200809L
#include "bench_clock.h"

#include <stdlib.h>
#include <time.h>

double bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_median(double *v, size_t n)
{
    if (n == 0) {
        return 0;
    }
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double bench_min(const double *v, size_t n)
{
    double m = n ? v[0] : 0;
    for (size_t i = 1; i < n; i++) {
        m = v[i] < m ? v[i] : m;
    }
    return m;
}

double bench_max(const double *v, size_t n)
{
    double m = n ? v[0] : 0;
    for (size_t i = 1; i < n; i++) {
        m = v[i] > m ? v[i] : m;
    }
    return m;
}
