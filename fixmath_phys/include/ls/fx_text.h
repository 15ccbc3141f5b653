// SPDX-License-Identifier: MIT
/// @file
/// Exact decimal text for Q16.16 values, integer-only (no strtod, no locale).
#ifndef LS_FX_TEXT_H
#define LS_FX_TEXT_H

#include "ls/fx.h"

#include <stddef.h>

LS_EXTERN_C_BEGIN

/// Longest text ls_fx_format writes, with the terminating NUL.
#define LS_FX_TEXT_MAX 24

/// Parse a decimal ("-12.5", "3", ".25") or a raw literal ("0x18000", "raw:-98304")
/// at s. The decimal is rounded to the nearest Q16.16 (ties away from zero).
/// Returns LS_OK and sets *out and *end (first unparsed char), LS_ERR_PARSE when
/// s does not start with a number, LS_ERR_OUT_OF_RANGE when the rounded raw magnitude exceeds
/// 0x7FFFFFFF (SPEC.md §9).
LS_API ls_result ls_fx_parse(const char *s, ls_fx *out, const char **end);

/// Write the shortest decimal that parses back to exactly v (at most 5
/// fractional digits) into buf (LS_FX_TEXT_MAX bytes). Returns the length.
LS_API size_t ls_fx_format(ls_fx v, char *buf);

LS_EXTERN_C_END

#endif
