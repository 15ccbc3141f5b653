// SPDX-License-Identifier: MIT
// Foundation shared by every module: version, result codes, assertions and
// little-endian byte helpers. It lives under fixmath_phys/ only because the
// project has no top-level include/; replay/ and net/ may include it.
#ifndef LS_BASE_H
#define LS_BASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LS_VERSION_MAJOR 0
#define LS_VERSION_MINOR 1
#define LS_VERSION_PATCH 0

/// Result codes: LS_OK is zero, every error is negative.
#define LS_RESULT_MAP(X)                                                                           \
    X(LS_OK, 0, "ok")                                                                              \
    X(LS_ERR_INVALID_ARGUMENT, -1, "invalid argument")                                             \
    X(LS_ERR_OUT_OF_RANGE, -2, "value outside the supported range")                                \
    X(LS_ERR_CAPACITY, -3, "capacity exceeded")                                                    \
    X(LS_ERR_NO_MEMORY, -4, "out of memory")                                                       \
    X(LS_ERR_PARSE, -5, "parse error")                                                             \
    X(LS_ERR_IO, -6, "input/output error")                                                         \
    X(LS_ERR_CORRUPT, -7, "corrupt data")                                                          \
    X(LS_ERR_TRUNCATED, -8, "truncated data")                                                      \
    X(LS_ERR_INCOMPATIBLE, -9, "incompatible version or build")                                    \
    X(LS_ERR_BUFFER_TOO_SMALL, -10, "buffer too small")                                            \
    X(LS_ERR_NOT_FOUND, -11, "not found")                                                          \
    X(LS_ERR_OVERFLOW, -12, "fixed-point overflow")                                                \
    X(LS_ERR_DESYNC, -13, "desync")

/// Result of any operation that bad input or the environment can make fail.
typedef enum ls_result {
#define LS_RESULT_ENUM_(name, value, text) name = value,
    LS_RESULT_MAP(LS_RESULT_ENUM_)
#undef LS_RESULT_ENUM_
} ls_result;

/// The enumerator's name, e.g. "LS_ERR_PARSE"; "LS_ERR_UNKNOWN" for other values.
const char *ls_result_name(ls_result r);
/// A short human-readable description of a result code.
const char *ls_result_text(ls_result r);
/// The library version as "MAJOR.MINOR.PATCH".
const char *ls_version_string(void);

#ifdef LS_NO_ASSERT
#define LS_ASSERT(c) ((void)0)
#else
/// Programmer-error check; aborts with file and line. Compiled out by LS_NO_ASSERT.
#define LS_ASSERT(c) ((c) ? (void)0 : ls_assert_fail_(#c, __FILE__, __LINE__))
#endif
/// Called by LS_ASSERT; prints and aborts.
void ls_assert_fail_(const char *cond, const char *file, int line);

/// Write a 16-bit value little-endian.
static inline void ls_put_u16le(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

/// Write a 32-bit value little-endian.
static inline void ls_put_u32le(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

/// Write a 64-bit value little-endian.
static inline void ls_put_u64le(uint8_t *p, uint64_t v)
{
    ls_put_u32le(p, (uint32_t)v);
    ls_put_u32le(p + 4, (uint32_t)(v >> 32));
}

/// Read a little-endian 16-bit value.
static inline uint16_t ls_get_u16le(const uint8_t *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}

/// Read a little-endian 32-bit value.
static inline uint32_t ls_get_u32le(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

/// Read a little-endian 64-bit value.
static inline uint64_t ls_get_u64le(const uint8_t *p)
{
    return (uint64_t)ls_get_u32le(p) | ((uint64_t)ls_get_u32le(p + 4) << 32);
}

#endif
