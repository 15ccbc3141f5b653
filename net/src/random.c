// SPDX-License-Identifier: MIT
// Tokens and the cookie secret come from the kernel (getrandom), never from a
// seeded generator: they are secrets, not simulation state.
#define _GNU_SOURCE
#include "ls/net_wire.h"

#include <errno.h>
#include <sys/random.h>

ls_result ls_net_random_bytes(void *buf, size_t n)
{
    uint8_t *p = buf;
    while (n > 0) {
        ssize_t got = getrandom(p, n, 0);
        if (got < 0) {
            if (errno == EINTR) {
                continue;
            }
            return LS_ERR_IO;
        }
        p += got;
        n -= (size_t)got;
    }
    return LS_OK;
}
