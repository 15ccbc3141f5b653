// SPDX-License-Identifier: MIT
// Lookup tables for the stateless trigonometry (generated, Q2.30).
#ifndef LS_TRIG_TABLES_H
#define LS_TRIG_TABLES_H

#include <stdint.h>

#define LS_TRIG_SEGMENTS 256

extern const int32_t ls_sin_table_[LS_TRIG_SEGMENTS + 2];
extern const int32_t ls_atan_table_[LS_TRIG_SEGMENTS + 2];

#endif
