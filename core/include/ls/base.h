// SPDX-License-Identifier: MIT
/// @file
/// Foundation shared by every module: version, result codes, assertions and
/// little-endian byte helpers. It lives in core/, the folder that physics,
/// replay and net all build on (with ls/hash.h and ls/rng.h), and includes
/// nothing but the C library.
#ifndef LS_BASE_H
#define LS_BASE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/// Marks a public function: exported from the shared library, C linkage in C++.
/// The library is built with -fvisibility=hidden, so nothing else is exported.
#if defined(_WIN32) && defined(LS_BUILDING_DLL)
#define LS_API __declspec(dllexport)
#elif defined(__GNUC__) || defined(__clang__)
#define LS_API __attribute__((visibility("default")))
#else
#define LS_API
#endif

/// Opens and closes C linkage in every public header, so C++ links the C library.
#ifdef __cplusplus
#define LS_EXTERN_C_BEGIN extern "C" {
#define LS_EXTERN_C_END   }
#else
#define LS_EXTERN_C_BEGIN
/// Closes what LS_EXTERN_C_BEGIN opened.
#define LS_EXTERN_C_END
#endif

/// A compile-time check usable in C11 and C++11 headers alike.
#ifdef __cplusplus
#define LS_STATIC_ASSERT(cond, text) static_assert(cond, text)
#else
#define LS_STATIC_ASSERT(cond, text) _Static_assert(cond, text)
#endif

/// Alignment of a struct member, in C11 and C++11 alike.
#ifdef __cplusplus
#define LS_ALIGNAS(n) alignas(n)
#else
#define LS_ALIGNAS(n) _Alignas(n)
#endif

/// printf-style format checking where the compiler has it. On mingw-w64 plain
/// `printf` means msvcrt's formats (no %zu, %llu); the library is C11, which
/// selects mingw-w64's C99 printf family, so its formats are gnu_printf's.
#if defined(__MINGW32__)
#define LS_PRINTF(fmt, args) __attribute__((format(gnu_printf, fmt, args)))
#elif defined(__GNUC__) || defined(__clang__)
#define LS_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define LS_PRINTF(fmt, args)
#endif

LS_EXTERN_C_BEGIN

/// Major version: the shared library's SONAME (liblockstep.so.MAJOR). While it is 0,
/// every minor version may break the API.
#define LS_VERSION_MAJOR 0
/// Minor version (the Makefile reads these three lines for the library's file names).
#define LS_VERSION_MINOR 3
/// Patch version.
#define LS_VERSION_PATCH 0

/// The `cookie` every definition struct's default function sets
/// (ls_default_*_def()): a create call refuses a definition without it
/// (LS_ERR_INVALID_ARGUMENT, field "cookie"), so one made with memset or an
/// aggregate initialiser -- whose fields the library would take as chosen --
/// is caught at once instead of behaving oddly (Box2D's def cookie).
#define LS_DEF_COOKIE 0x4C534446u /* "LSDF" */

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
    X(LS_ERR_DESYNC, -13, "desync")                                                                \
    X(LS_ERR_INVALID_ID, -14, "stale or destroyed id")                                             \
    X(LS_ERR_LOCKED, -15, "the world is stepping")

/// Result of any operation that bad input or the environment can make fail.
typedef enum ls_result {
#define LS_RESULT_ENUM_(name, value, text) name = value,
    LS_RESULT_MAP(LS_RESULT_ENUM_)
#undef LS_RESULT_ENUM_
} ls_result;

/// Longest error message, bytes including the NUL.
#define LS_ERROR_MESSAGE_MAX 256
/// Longest path kept in an error record, bytes including the NUL.
#define LS_ERROR_PATH_MAX 192
/// Longest field name kept in an error record, bytes including the NUL.
#define LS_ERROR_FIELD_MAX 48

/// The one error record of every module (SPEC.md §19): a result code plus where
/// and why. Every fallible call takes an optional `ls_error *err` as its last
/// argument (NULL: the caller only wants the return value) and fills it on
/// failure; on success err->code is LS_OK. Fields that do not apply are 0 / -1 / "".
typedef struct ls_error {
    ls_result code;                     ///< LS_OK, or what kind of failure.
    uint32_t line;                      ///< 1-based line in a text input (0: not text).
    uint32_t column;                    ///< 1-based column in a text input (0: not text).
    int64_t offset;                     ///< Byte offset in a binary input (-1: none).
    int64_t tick;                       ///< Tick concerned (-1: none).
    char field[LS_ERROR_FIELD_MAX];     ///< Definition field concerned, e.g. "position.z".
    char path[LS_ERROR_PATH_MAX];       ///< File concerned ("" if none or in memory).
    char message[LS_ERROR_MESSAGE_MAX]; ///< What is wrong, without the path/line prefix.
} ls_error;

/// Reset an error record to "no error" (code LS_OK, offset and tick -1). NULL is ignored.
LS_API void ls_error_clear(ls_error *err);
/// Clear *err, then set its code and printf-style message. Returns code. NULL is ignored.
LS_API ls_result ls_error_set(ls_error *err, ls_result code, const char *fmt, ...) LS_PRINTF(3, 4);
/// As ls_error_set with a va_list.
LS_API ls_result ls_error_setv(ls_error *err, ls_result code, const char *fmt, va_list ap);
/// Record the file an error concerns (kept if the path fits, else its tail). NULL is ignored.
LS_API void ls_error_set_path(ls_error *err, const char *path);
/// One line naming the file and place once: "path:line:column: message" (text
/// inputs) or "path: message" (binary inputs name their byte offset in the message). Returns the
/// length it needs (as snprintf); buf is always NUL-terminated when size > 0.
LS_API size_t ls_error_format(const ls_error *err, char *buf, size_t size);

/// The enumerator's name, e.g. "LS_ERR_PARSE"; "LS_ERR_UNKNOWN" for other values.
LS_API const char *ls_result_name(ls_result r);
/// A short human-readable description of a result code.
LS_API const char *ls_result_text(ls_result r);
/// The library version as "MAJOR.MINOR.PATCH".
LS_API const char *ls_version_string(void);

#ifdef LS_NO_ASSERT
#define LS_ASSERT(c) ((void)0)
#else
/// Programmer-error check; aborts with file and line. Compiled out by LS_NO_ASSERT.
#define LS_ASSERT(c) ((c) ? (void)0 : ls_assert_fail(#c, __FILE__, __LINE__))
#endif
/// Called by LS_ASSERT; prints and aborts.
LS_API void ls_assert_fail(const char *cond, const char *file, int line);

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

LS_EXTERN_C_END

#endif
