// SPDX-License-Identifier: MIT
// Private: ls_mat3_inverse_spd of a 2x2 block in the upper-left of a 3x3 (a
// hinge's alignment K), without the products and divisions of the zeros.
#ifndef LS_MAT3_SPD2_H
#define LS_MAT3_SPD2_H

#include "ls/mat3.h"

#include <stdbool.h>

/// ls_mat3_inverse_spd([[k00, k01, 0], [k01, k11, 0], [0, 0, 1]], out): the
/// same result (true and the same *out, or false) with the terms that are 0
/// for this shape left out.
bool ls_mat3_inverse_spd2_(ls_fx k00, ls_fx k01, ls_fx k11, ls_mat3 *out);

#endif
