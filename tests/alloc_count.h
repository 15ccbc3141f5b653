// SPDX-License-Identifier: MIT
// Heap allocation counter for tests: the test binary is linked with
// -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc, so every allocation made by
// the library and the tests (not by Criterion's shared library) is counted.
#ifndef LS_TESTS_ALLOC_COUNT_H
#define LS_TESTS_ALLOC_COUNT_H

#include <stdint.h>

/// Start counting from zero (per test process).
void alloc_count_reset(void);
/// Allocations (malloc, calloc, realloc) since the last reset.
uint64_t alloc_count_get(void);

#endif
