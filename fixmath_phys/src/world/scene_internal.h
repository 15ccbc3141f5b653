// SPDX-License-Identifier: MIT
// What the scene parser (scene.c), writer (scene_write.c) and instantiation
// (scene_instantiate.c) share.
#ifndef LS_WORLD_SCENE_INTERNAL_H
#define LS_WORLD_SCENE_INTERNAL_H

#include "ls/scene.h"

/// The statement keyword of a particle statement kind ("cloth", "rope",
/// "ragdoll_particles", "particle_body").
const char *ls_scene_particle_keyword_(ls_scene_particle_kind kind);

#endif
