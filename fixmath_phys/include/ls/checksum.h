// SPDX-License-Identifier: MIT
/// @file
/// The canonical 64-bit checksum of the physics: the hasher of ls/hash.h
/// (XXH3-64, seed 0, over canonical little-endian bytes) plus the fixed-point
/// values, fed field by field. SPEC.md "Checksum" defines the bytes.
#ifndef LS_CHECKSUM_H
#define LS_CHECKSUM_H

#include "ls/hash.h"
#include "ls/quat.h"
#include "ls/vec3.h"

LS_EXTERN_C_BEGIN

/// Append a Q16.16 value as its raw 32-bit two's complement, little-endian.
LS_API void ls_hasher_put_fx(ls_hasher *h, ls_fx v);
/// Append x, y, z.
LS_API void ls_hasher_put_vec3(ls_hasher *h, ls_vec3 v);
/// Append x, y, z, w.
LS_API void ls_hasher_put_quat(ls_hasher *h, ls_quat q);

LS_EXTERN_C_END

#endif
