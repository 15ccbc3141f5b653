// SPDX-License-Identifier: MIT
// The rotation of a sub-step (SPEC.md §11.3): the scalar reference in
// solver.c, four gyroscopic bodies at once on x86 AVX2 (rotate_avx2.c), eight with
// AVX-512 (rotate_avx512.c).
//
// Why four bodies at once: in a scene of capsules or long boxes (Box3D's
// rain: 4,200 ragdoll bones) every awake body takes the gyroscopic step each
// sub-step -- three rotation integrations (each a square root and a
// reciprocal), three rotation matrices and ten matrix products, all integer
// -- which was an eighth of the scene's time. The vector path computes the
// same integers in four 64-bit lanes; a lane whose values leave the ranges
// where its shortcuts are exact (the scalar code's own short paths) or that
// the energy guard would cut is left to the scalar reference.
#ifndef LS_DYNAMICS_ROTATE_H
#define LS_DYNAMICS_ROTATE_H

#include "../world/world_internal.h"
#include "solver_body.h"

/// The scalar reference: body b turned by its state's spin over h with
/// gyroscopic motion (b->gyro), then the state's rotation since the tick
/// began (s->dq). Writes b->q, b->xf.r, s->w and s->dq.
void ls_rotate_gyro_(ls_body *b, ls_solver_body *s, ls_fx h);

/// ls_rotate_gyro_ for four bodies (x86 AVX2; 0 elsewhere): returns the
/// mask of the lanes it wrote, with the same bits; the caller runs the
/// scalar reference on the others (they are left untouched).
uint32_t ls_rotate_gyro4_avx2_(ls_body *const b[4], ls_solver_body *const s[4], ls_fx h);
/// The same for eight bodies (x86 AVX-512 F, VL, DQ; 0 elsewhere).
uint32_t ls_rotate_gyro8_avx512_(ls_body *const b[8], ls_solver_body *const s[8], ls_fx h);

#endif
