// SPDX-License-Identifier: MIT
// Counting wrappers behind -Wl,--wrap (see alloc_count.h).
#include "alloc_count.h"

#include <stddef.h>

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);

// Criterion runs each test in its own process, so a process-wide counter is
// per test; tests are single-threaded.
static uint64_t allocations;

void *__wrap_malloc(size_t n)
{
    allocations++;
    return __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
    allocations++;
    return __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n)
{
    allocations++;
    return __real_realloc(p, n);
}

void alloc_count_reset(void)
{
    allocations = 0;
}

uint64_t alloc_count_get(void)
{
    return allocations;
}
