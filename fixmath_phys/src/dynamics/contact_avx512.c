// SPDX-License-Identifier: MIT
// The contact sweeps on x86 AVX-512 (F, VL, DQ, BW): contact_avx2.c built a
// second time with LS_LANES_512, so the exact 64-bit domain (products, their
// sums and roundings) holds a group's eight lanes in one 512-bit register and
// the 32 vector registers keep its bodies out of memory (lanes_avx2.h). The
// formulas are contact_avx2.c's, so the integers are the scalar reference's
// (SPEC.md §11.4 "Vector paths"); the solver picks this path at run time
// when the CPU has those extensions (solver.c).
//
// Why one source for both: the two paths differ only in how a 64-bit lane is
// held, which lanes_avx2.h hides behind the same small set of operations; a
// second copy of the sweeps could drift from the first.
#define LS_LANES_512 1
#include "contact_avx2.c"
