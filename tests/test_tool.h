// SPDX-License-Identifier: MIT
// Locating the `lockstep` tool beside the test binary, for the suites that run
// it (they define _POSIX_C_SOURCE before any include, for readlink).
#ifndef LS_TEST_TOOL_H
#define LS_TEST_TOOL_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/// Put the path of the `lockstep` tool built beside this test binary in
/// tool[size] and assert that it is executable (`make test` builds it).
static inline void test_find_tool(char *tool, size_t size)
{
    ssize_t n = readlink("/proc/self/exe", tool, size - 1);
    cr_assert_gt(n, 0);
    tool[n] = '\0';
    char *slash = strrchr(tool, '/');
    cr_assert_not_null(slash);
    snprintf(slash + 1, size - (size_t)(slash + 1 - tool), "lockstep");
    cr_assert_eq(access(tool, X_OK), 0, "%s is built (make test builds it)", tool);
}

#endif
