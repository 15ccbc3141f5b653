// SPDX-License-Identifier: MIT
// Ball joint sweeps on x86 AVX-512 (F, VL, DQ, BW): joint_avx2.c built a
// second time with LS_LANES_512, as contact_avx512.c is built from
// contact_avx2.c (the same integers, the 64-bit domain in 512-bit registers).
#define LS_LANES_512 1
#include "joint_avx2.c"
