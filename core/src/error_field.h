// SPDX-License-Identifier: MIT
// Private: the one routine every validator uses to refuse a definition field.
#ifndef LS_ERROR_FIELD_H
#define LS_ERROR_FIELD_H

#include "ls/base.h"

#include <stdarg.h>

/// Fill err (may be NULL) with code, the formatted message and the name of the
/// field concerned (NULL: leave the field empty); returns code.
ls_result ls_error_set_field_(ls_error *err, ls_result code, const char *field, const char *fmt,
                              ...) LS_PRINTF(4, 5);
/// As ls_error_set_field_ with a va_list.
ls_result ls_error_set_fieldv_(ls_error *err, ls_result code, const char *field, const char *fmt,
                               va_list ap);

#endif
