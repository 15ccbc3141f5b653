// SPDX-License-Identifier: MIT
// The gyroscopic rotation of eight bodies at once on x86 AVX-512 (F, VL, DQ):
// rotate_avx2.c built a second time with LS_LANES_512 (rotate.h).
#define LS_LANES_512 1
#include "rotate_avx2.c"
