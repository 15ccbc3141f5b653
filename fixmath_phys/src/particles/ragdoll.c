// SPDX-License-Identifier: MIT
// Particle ragdoll builder (SPEC.md §25.7; Jakobsen §6, the Hitman ragdoll):
// 16 particles joined by sticks, no rigid limbs (limb twist is not
// simulated), angle limits at the elbows, knees, hips and neck (angle.c), and
// one-sided sticks (ranges with a minimum) that keep the knees, feet and
// hands from passing through each other (the article's self-collision
// trick). The torso (neck, chest, pelvis, shoulders, hips) is braced by
// sticks around a chest particle set forward of the others, so it is rigid
// in three dimensions.
//
// The skeleton below is for a 1.8 m figure standing along +y and facing +z
// (its left is +x), in millimetres from the pelvis; a ragdoll of height h
// scales each coordinate to raw round-down(mm * h_raw / 1800), rotates it by
// the orientation (§4) and adds the position. Masses are per mille of the
// total (rounded to nearest raw).
#include "particles_internal.h"

#include <string.h>

enum {
    HEAD,
    NECK,
    CHEST,
    PELVIS,
    SHOULDER_L,
    SHOULDER_R,
    ELBOW_L,
    ELBOW_R,
    HAND_L,
    HAND_R,
    HIP_L,
    HIP_R,
    KNEE_L,
    KNEE_R,
    FOOT_L,
    FOOT_R,
    PARTICLES
};

static const int32_t skeleton[PARTICLES][4] = {
    // x, y, z (mm from the pelvis), mass per mille
    {0, 720, 0, 80},     {0, 520, 0, 40},      {0, 300, 80, 250},  {0, 0, 0, 150},
    {190, 480, 0, 40},   {-190, 480, 0, 40},   {220, 200, 0, 30},  {-220, 200, 0, 30},
    {240, -60, 0, 15},   {-240, -60, 0, 15},   {100, -50, 0, 60},  {-100, -50, 0, 60},
    {100, -480, 30, 60}, {-100, -480, 30, 60}, {100, -900, 0, 35}, {-100, -900, 0, 35},
};

static const uint8_t sticks[][2] = {
    {HEAD, NECK},          {NECK, SHOULDER_L},  {NECK, SHOULDER_R},    {SHOULDER_L, SHOULDER_R},
    {CHEST, NECK},         {CHEST, SHOULDER_L}, {CHEST, SHOULDER_R},   {CHEST, PELVIS},
    {CHEST, HIP_L},        {CHEST, HIP_R},      {NECK, PELVIS},        {SHOULDER_L, PELVIS},
    {SHOULDER_R, PELVIS},  {PELVIS, HIP_L},     {PELVIS, HIP_R},       {HIP_L, HIP_R},
    {SHOULDER_L, HIP_L},   {SHOULDER_R, HIP_R}, {SHOULDER_L, ELBOW_L}, {ELBOW_L, HAND_L},
    {SHOULDER_R, ELBOW_R}, {ELBOW_R, HAND_R},   {HIP_L, KNEE_L},       {KNEE_L, FOOT_L},
    {HIP_R, KNEE_R},       {KNEE_R, FOOT_R},
};

// Angle limits: vertex, arm, arm, min and max angle (raw Q16.16 radians).
static const int32_t angles[][5] = {
    {ELBOW_L, SHOULDER_L, HAND_L, 34079, LS_FX_PI}, // 0.52 rad .. straight
    {ELBOW_R, SHOULDER_R, HAND_R, 34079, LS_FX_PI},
    {KNEE_L, HIP_L, FOOT_L, 45875, LS_FX_PI}, // 0.70 rad .. straight
    {KNEE_R, HIP_R, FOOT_R, 45875, LS_FX_PI},
    {HIP_L, SHOULDER_L, KNEE_L, 52429, LS_FX_PI}, // 0.80 rad .. straight
    {HIP_R, SHOULDER_R, KNEE_R, 52429, LS_FX_PI},
    {NECK, HEAD, PELVIS, 131072, LS_FX_PI}, // 2.0 rad .. straight
};

// One-sided sticks: the pair never comes closer than this many millimetres.
static const int32_t apart[][3] = {
    {KNEE_L, KNEE_R, 120},
    {FOOT_L, FOOT_R, 120},
    {HAND_L, HAND_R, 80},
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

ls_particle_ragdoll_def ls_default_particle_ragdoll_def(void)
{
    ls_particle_ragdoll_def d;
    memset(&d, 0, sizeof d);
    d.system = ls_default_particle_system_def();
    d.system.iterations = 8;
    d.position = ls_vec3_make(0, LS_FX_ONE, 0);
    d.orientation = ls_quat_identity();
    d.height = 117965; // 1.8 m
    d.mass = LS_FX_INT(70);
    d.radius = 3932; // 0.06 m
    d.cookie = LS_DEF_COOKIE;
    return d;
}

static ls_fx scaled(int32_t mm, ls_fx height)
{
    return (ls_fx)(((int64_t)mm * height) / 1800);
}

ls_particle_system_id ls_particle_ragdoll_create(ls_world *w, const ls_particle_ragdoll_def *def,
                                                 ls_error *err)
{
    if (ls_world_locked_(w, err)) {
        return (ls_particle_system_id){0, 0};
    }
    ls_particle_system_id none = {0, 0};
    if (!w || !def) {
        ls_error_set(err, LS_ERR_INVALID_ARGUMENT, "no world or no ragdoll definition");
        return none;
    }
    if (ls_def_missing_(def->cookie, "particle_ragdoll_def", err)) {
        return none;
    }
    if (def->height < 13107 || def->height > LS_FX_INT(10)) {
        ls_particles_fail_(err, LS_ERR_OUT_OF_RANGE, "height", "ragdoll height must be 0.2..10 m");
        return none;
    }
    if (def->mass < 4391 || def->mass > LS_FX_INT(1000)) { // lightest particle >= 0.001 kg
        ls_particles_fail_(err, LS_ERR_OUT_OF_RANGE, "mass", "ragdoll mass must be 0.067..1000 kg");
        return none;
    }
    if (def->radius < 0 || def->radius > LS_FX_INT(64)) {
        ls_particles_fail_(err, LS_ERR_OUT_OF_RANGE, "radius", "radius must be 0..64 m");
        return none;
    }
    if (ls_fx_abs(def->position.x) > LS_FX_INT(2040) ||
        ls_fx_abs(def->position.y) > LS_FX_INT(2040) ||
        ls_fx_abs(def->position.z) > LS_FX_INT(2040)) {
        ls_particles_fail_(err, LS_ERR_OUT_OF_RANGE, "position",
                           "ragdoll position must be within +-2040 m");
        return none;
    }
    ls_particle_def pd = ls_default_particle_def();
    pd.velocity = def->velocity;
    pd.radius = def->radius;
    if (ls_particles_check_particle_def_(&pd, "", err) != LS_OK) {
        return none;
    }
    ls_particle_system_def sd = def->system;
    sd.max_particles = PARTICLES;
    sd.max_constraints = (uint32_t)(COUNT(sticks) + COUNT(angles) + COUNT(apart));
    if (ls_particles_check_system_def_(w, &sd, "system.", true, err) != LS_OK) {
        return none;
    }
    uint32_t slot;
    ls_particle_system *s = ls_particles_new_system_(w, &sd, LS_PARTICLES_RAGDOLL, &slot);
    ls_quat q = ls_quat_normalize(def->orientation);
    for (uint32_t i = 0; i < PARTICLES; i++) {
        ls_vec3 local =
            ls_vec3_make(scaled(skeleton[i][0], def->height), scaled(skeleton[i][1], def->height),
                         scaled(skeleton[i][2], def->height));
        pd.position = ls_vec3_add(def->position, ls_quat_rotate(q, local));
        pd.mass = (ls_fx)(((int64_t)def->mass * skeleton[i][3] + 500) / 1000);
        ls_particles_push_(w, s, &pd);
    }
    bool ok = true;
    for (size_t k = 0; k < COUNT(sticks) && ok; k++) {
        ls_particle_constraint_def c = ls_default_particle_constraint_def();
        c.a = sticks[k][0];
        c.b = sticks[k][1];
        ok = ls_particles_push_constraint_(w, s, &c, err) != UINT32_MAX;
    }
    for (size_t k = 0; k < COUNT(angles) && ok; k++) {
        ls_particle_constraint_def c = ls_default_particle_constraint_def();
        c.type = LS_PARTICLE_ANGLE;
        c.a = (uint32_t)angles[k][0];
        c.b = (uint32_t)angles[k][1];
        c.c = (uint32_t)angles[k][2];
        c.min_angle = angles[k][3];
        c.max_angle = angles[k][4];
        ok = ls_particles_push_constraint_(w, s, &c, err) != UINT32_MAX;
    }
    for (size_t k = 0; k < COUNT(apart) && ok; k++) {
        ls_particle_constraint_def c = ls_default_particle_constraint_def();
        c.type = LS_PARTICLE_RANGE;
        c.a = (uint32_t)apart[k][0];
        c.b = (uint32_t)apart[k][1];
        c.min_length = scaled(apart[k][2], def->height);
        ok = ls_particles_push_constraint_(w, s, &c, err) != UINT32_MAX;
    }
    ls_particle_system_id id = ls_particle_system_id_of_(w, slot);
    if (!ok) {
        ls_particle_system_destroy(w, id);
        return none;
    }
    ls_error_clear(err);
    return id;
}
