// SPDX-License-Identifier: MIT
// Timing helpers shared by every benchmark binary. They depend on libc only,
// so binaries that link no engine object (the Bullet vehicle bench, the report
// tool) use them too. Benchmark tooling only: floating point is fine here.
#ifndef LS_BENCH_CLOCK_H
#define LS_BENCH_CLOCK_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Monotonic clock in nanoseconds.
double bench_now_ns(void);
/// Median of n values (sorts the array); 0 for n = 0.
double bench_median(double *v, size_t n);
/// Smallest of n values; 0 for n = 0.
double bench_min(const double *v, size_t n);
/// Largest of n values; 0 for n = 0.
double bench_max(const double *v, size_t n);

#ifdef __cplusplus
}
#endif

#endif
