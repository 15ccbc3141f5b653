// SPDX-License-Identifier: MIT
// The bounded little-endian cursor of the one-walk codecs: the snapshot and
// checksum walks of the physics state (fixmath_phys/src/world/state.h) and
// the wire messages (net/src/wire.c). Private to the library; shared by the
// physics, net and replay folders, so it includes nothing but ls/base.h.
//
// One walk per record serves both directions: ls_io_u32_(c, &field, what)
// writes the field when c->save (to c->w, or only counts when c->w is NULL)
// and reads it otherwise, so the encoder and the decoder cannot drift apart.
// Every call first checks the room left; the first failure is kept (the
// field's name and the kind of error) and every later call is a no-op that
// reads zeros, so a walk may check c->ok once at its end. Why one cursor:
// snapshot.c and wire.c each had their own copy, which had already drifted
// (one kept the failing field's name, the other did not).
#ifndef LS_CORE_CURSOR_H
#define LS_CORE_CURSOR_H

#include "ls/base.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/// A bounded reader or writer over a caller's buffer.
typedef struct ls_cursor {
    bool save;        ///< true: fields go to w (w NULL: only measure); false: from r
    uint8_t *w;       ///< the buffer written (save), or NULL
    const uint8_t *r; ///< the buffer read (load)
    size_t pos, size; ///< bytes walked so far, and the buffer's size
    bool ok;          ///< false from the first failure on
    const char *bad;  ///< the first failure's field (NULL when not named)
    ls_result why;    ///< and its kind (LS_OK while ok)
} ls_cursor;

/// A cursor that writes `size` bytes at `buf` (buf NULL: measures only).
static inline ls_cursor ls_cursor_saver_(uint8_t *buf, size_t size)
{
    return (ls_cursor){true, buf, NULL, 0, size, true, NULL, LS_OK};
}

/// A cursor that reads the `size` bytes at `buf`.
static inline ls_cursor ls_cursor_loader_(const uint8_t *buf, size_t size)
{
    return (ls_cursor){false, NULL, buf, 0, size, true, NULL, LS_OK};
}

/// Record the first failure (later ones are dropped).
static inline void ls_cursor_fail_(ls_cursor *c, const char *what, ls_result why)
{
    if (c->ok) {
        c->ok = false;
        c->bad = what;
        c->why = why;
    }
}

/// True when n more bytes fit; else records a failure (buffer too small when
/// saving, truncated when loading) and returns false.
static inline bool ls_cursor_room_(ls_cursor *c, size_t n, const char *what)
{
    if (!c->ok) {
        return false;
    }
    if (n > c->size - c->pos) {
        ls_cursor_fail_(c, what, c->save ? LS_ERR_BUFFER_TOO_SMALL : LS_ERR_TRUNCATED);
        return false;
    }
    return true;
}

/// A rule on values already walked: when saving, the record is invalid
/// (nothing is encoded); when loading, the bytes are corrupt.
static inline void ls_cursor_want_(ls_cursor *c, bool cond, const char *what)
{
    if (!cond) {
        ls_cursor_fail_(c, what, LS_ERR_CORRUPT);
    }
}

/// Bytes left to read (or to write).
static inline size_t ls_cursor_left_(const ls_cursor *c)
{
    return c->size - c->pos;
}

static inline void ls_io_u8_(ls_cursor *c, uint8_t *v, const char *what)
{
    if (!ls_cursor_room_(c, 1, what)) {
        if (!c->save) {
            *v = 0;
        }
        return;
    }
    if (!c->save) {
        *v = c->r[c->pos];
    } else if (c->w) {
        c->w[c->pos] = *v;
    }
    c->pos += 1;
}

static inline void ls_io_u16_(ls_cursor *c, uint16_t *v, const char *what)
{
    if (!ls_cursor_room_(c, 2, what)) {
        if (!c->save) {
            *v = 0;
        }
        return;
    }
    if (!c->save) {
        *v = ls_get_u16le(c->r + c->pos);
    } else if (c->w) {
        ls_put_u16le(c->w + c->pos, *v);
    }
    c->pos += 2;
}

static inline void ls_io_u32_(ls_cursor *c, uint32_t *v, const char *what)
{
    if (!ls_cursor_room_(c, 4, what)) {
        if (!c->save) {
            *v = 0;
        }
        return;
    }
    if (!c->save) {
        *v = ls_get_u32le(c->r + c->pos);
    } else if (c->w) {
        ls_put_u32le(c->w + c->pos, *v);
    }
    c->pos += 4;
}

static inline void ls_io_u64_(ls_cursor *c, uint64_t *v, const char *what)
{
    if (!ls_cursor_room_(c, 8, what)) {
        if (!c->save) {
            *v = 0;
        }
        return;
    }
    if (!c->save) {
        *v = ls_get_u64le(c->r + c->pos);
    } else if (c->w) {
        ls_put_u64le(c->w + c->pos, *v);
    }
    c->pos += 8;
}

/// A 32-bit word of any 4-byte field (int32_t, uint32_t, ls_fx): its bits,
/// little-endian.
static inline void ls_io_word_(ls_cursor *c, void *field, const char *what)
{
    uint32_t v = 0;
    if (c->save) {
        memcpy(&v, field, 4);
    }
    ls_io_u32_(c, &v, what);
    if (!c->save) {
        memcpy(field, &v, 4);
    }
}

/// Reserved bytes and padding: written as zeros, and must read as zeros.
static inline void ls_io_zero_(ls_cursor *c, size_t n, const char *what)
{
    if (!ls_cursor_room_(c, n, what)) {
        return;
    }
    if (!c->save) {
        for (size_t i = 0; i < n; i++) {
            if (c->r[c->pos + i]) {
                ls_cursor_fail_(c, what, LS_ERR_CORRUPT);
                return;
            }
        }
    } else if (c->w) {
        memset(c->w + c->pos, 0, n);
    }
    c->pos += n;
}

/// A run of opaque bytes: copied from *p (save) or pointed to in place (load).
static inline void ls_io_bytes_(ls_cursor *c, const uint8_t **p, size_t n, const char *what)
{
    if (!ls_cursor_room_(c, n, what)) {
        return;
    }
    if (!c->save) {
        *p = c->r + c->pos;
    } else if (c->w && n) {
        memcpy(c->w + c->pos, *p, n);
    }
    c->pos += n;
}

#endif
