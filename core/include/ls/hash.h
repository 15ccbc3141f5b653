// SPDX-License-Identifier: MIT
/// @file
/// The canonical 64-bit hash: XXH3-64 (seed 0) over canonical little-endian
/// bytes, fed field by field (never raw structs: padding and byte order would
/// leak in). Part of core/: the recordings (replay/) and the wire (net/) hash
/// with it, and ls/checksum.h adds the fixed-point values of the physics.
/// SPEC.md "Checksum" defines the bytes.
#ifndef LS_HASH_H
#define LS_HASH_H

#include "ls/base.h"

LS_EXTERN_C_BEGIN

/// Canonical bytes an ls_hasher gathers before it feeds XXH3 (a size, not part of the hash).
#define LS_HASHER_BUFFER 256

/// Streaming checksum state. Initialise with ls_hasher_init; opaque otherwise.
typedef struct ls_hasher {
    LS_ALIGNAS(64) unsigned char xxh_[640]; ///< XXH3 streaming state (private).
    unsigned char buf_[LS_HASHER_BUFFER];   ///< Pending canonical bytes (private).
    size_t len_;                            ///< Bytes pending in buf_ (private).
} ls_hasher;

/// Start a new checksum.
LS_API void ls_hasher_init(ls_hasher *h);
/// Append raw bytes (already canonical, e.g. an encoded input frame).
LS_API void ls_hasher_put_bytes(ls_hasher *h, const void *data, size_t n);
/// Append a 32-bit unsigned integer as 4 little-endian bytes.
LS_API void ls_hasher_put_u32(ls_hasher *h, uint32_t v);
/// Append a 64-bit unsigned integer as 8 little-endian bytes.
LS_API void ls_hasher_put_u64(ls_hasher *h, uint64_t v);
/// The checksum of everything appended so far (the hasher stays usable).
LS_API uint64_t ls_hasher_digest(ls_hasher *h);
/// XXH3-64 (seed 0) of a byte buffer: the same as one ls_hasher_put_bytes.
LS_API uint64_t ls_hash64(const void *data, size_t n);

LS_EXTERN_C_END

#endif
