// SPDX-License-Identifier: MIT
// Exports of the viewer's wasm module (tools/viewer/api.c); the page's
// engine.js wraps them. Handles 0..3; ticks are 0-based like replay files.
#ifndef LS_TOOLS_VIEWER_API_H
#define LS_TOOLS_VIEWER_API_H

#include <stdint.h>

#define VW_BODY_INTS 8 ///< position xyz, orientation xyzw, asleep
#define VW_SHAPE_INTS                                                                              \
    14 ///< first shape's kind, body type, radius, half height, half xyz,
       ///< normal xyz, d, player, shape count, index of the first part
#define VW_PART_INTS                                                                               \
    19                     ///< kind, radius, half height, half xyz, normal xyz, d, local
                           ///< position xyz, local orientation xyzw, geometry or -1
#define VW_GEOMETRY_HEAD 4 ///< kind, vertex count, face or triangle count, ints after the head
#define VW_DETAIL_INTS   7 ///< linear velocity xyz, angular velocity xyz, mass

uint8_t *vw_alloc(uint32_t size);
void vw_free(uint8_t *p);
const char *vw_error(void);
int32_t vw_open(int32_t h, const uint8_t *data, uint32_t size);
int32_t vw_open_in(int32_t h, const uint8_t *data, uint32_t size, const char *dir);
void vw_close(int32_t h);
int32_t vw_is_replay(int32_t h);
uint32_t vw_ticks(int32_t h);
uint32_t vw_tick(int32_t h);
uint32_t vw_players(int32_t h);
uint32_t vw_tick_rate(int32_t h);
uint32_t vw_run(int32_t h, uint32_t n);
int32_t vw_seek(int32_t h, uint32_t tick);
uint64_t vw_checksum(int32_t h);
uint64_t vw_recorded(int32_t h, uint32_t t);
int64_t vw_mismatch_tick(int32_t h);
uint64_t vw_mismatch_recorded(int32_t h);
uint64_t vw_mismatch_computed(int32_t h);
uint32_t vw_verified(int32_t h);
uint32_t vw_claims_count(int32_t h);
uint32_t vw_claims_tick(int32_t h, uint32_t i);
int32_t vw_claims_flags(int32_t h, uint32_t i);
uint64_t vw_claim(int32_t h, uint32_t i, uint32_t p);
uint32_t vw_verdict_ticks(int32_t h);
uint32_t vw_verdict_disputed(int32_t h);
int64_t vw_verdict_first(int32_t h);
uint32_t vw_wrong_ticks(int32_t h, uint32_t p);
uint32_t vw_first_wrong(int32_t h, uint32_t p);
uint32_t vw_keyframes(int32_t h);
uint32_t vw_keyframe_tick(int32_t h, uint32_t i);
uint32_t vw_body_count(int32_t h);
const int32_t *vw_shapes(int32_t h);
uint32_t vw_part_count(int32_t h);
const int32_t *vw_parts(int32_t h);
uint32_t vw_geometry_count(int32_t h);
const int32_t *vw_geometry(int32_t h, uint32_t g);
const int32_t *vw_bodies(int32_t h);
const int32_t *vw_body_detail(int32_t h, uint32_t i);

#endif
