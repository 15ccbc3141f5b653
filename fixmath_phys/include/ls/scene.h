// SPDX-License-Identifier: MIT
/// @file
/// Text scene files (SPEC.md §14): a world line and one line per body, with
/// exact Q16.16 values (decimals or raw literals) and line:column errors.
#ifndef LS_SCENE_H
#define LS_SCENE_H

#include "ls/joint.h"
#include "ls/particles.h"
#include "ls/vehicle.h"
#include "ls/world.h"

LS_EXTERN_C_BEGIN

/// Most players a scene can name (`player K` with K < this).
#define LS_SCENE_MAX_PLAYERS 16

/// What a particle statement builds (SPEC.md §14): `cloth`, `rope`,
/// `ragdoll_particles`, `particle_body`.
typedef enum ls_scene_particle_kind {
    LS_SCENE_CLOTH = 0,         ///< `cloth`: ls_cloth_create.
    LS_SCENE_ROPE = 1,          ///< `rope`: ls_rope_create.
    LS_SCENE_RAGDOLL = 2,       ///< `ragdoll_particles`: ls_particle_ragdoll_create.
    LS_SCENE_PARTICLE_BODY = 3, ///< `particle_body`: ls_particle_body_create.
} ls_scene_particle_kind;

/// One particle statement: the builder's definition (the member `kind` names),
/// plus what the builders have no field for.
typedef struct ls_scene_particles {
    ls_scene_particle_kind kind; ///< Which builder, and which member of the union below.
    union {
        ls_cloth_def cloth;              ///< `cloth`.
        ls_rope_def rope;                ///< `rope`: attach_start/attach_end.index1 is the
                                         ///< body's 1-based file index until instantiated.
        ls_particle_ragdoll_def ragdoll; ///< `ragdoll_particles`.
        ls_particle_body_def body;       ///< `particle_body`.
    };
    uint32_t *pinned;      ///< `pinned N I...`: particles made immovable after building
                           ///< (mass 0), ascending, no repeats; NULL when none.
    uint32_t pinned_count; ///< Number of `pinned`.
    uint32_t line;         ///< 1-based text line (0 if not parsed from text).
} ls_scene_particles;

/// One `vehicle` statement (SPEC.md §14): its definition; def.chassis.index1 is
/// the chassis body's 1-based file index (generation 0) until instantiated.
typedef struct ls_scene_vehicle {
    ls_vehicle_def def;           ///< The definition, wheels included.
    ls_vehicle_controls controls; ///< Initial controls (`throttle`, `steer`, `braking`,
                                  ///< `handbrake`, `boosting`); all zero by default.
    uint32_t line;                ///< 1-based text line (0 if not parsed from text).
} ls_scene_vehicle;

/// Game rules a scene is played with (`game ...`; SPEC.md §15).
typedef enum ls_scene_game {
    LS_SCENE_GAME_PUSH = 0,   ///< The push game (default): input bits push the player bodies.
    LS_SCENE_GAME_SOCCER = 1, ///< Car soccer: players drive vehicles, a ball, two goals.
} ls_scene_game;

/// Parameters of `game soccer` (SPEC.md §15.2). Goals are at z = +-goal_z.
typedef struct ls_scene_soccer {
    uint32_t ball_body;     ///< File index of the ball body.
    ls_fx goal_z;           ///< The ball scores when its centre passes |z| > goal_z, m.
    ls_fx goal_half_width;  ///< ... with |x| < goal_half_width, m.
    ls_fx goal_height;      ///< ... and y < goal_height, m.
    uint32_t kickoff_ticks; ///< Ticks the cars wait after a kick-off reset.
} ls_scene_soccer;

/// A parsed scene: the world definition, the suggested tick count and the bodies.
typedef struct ls_scene {
    ls_world_def world;    ///< World settings (defaults where the file is silent).
    uint32_t ticks;        ///< Ticks the scene is meant to run (default 600).
    ls_body_def *bodies;   ///< Bodies in file order (ids follow this order); a compound
                           ///< body's `shapes` point into `shapes` below.
    ls_shape_def *shapes;  ///< Shapes of the compound bodies (bodies with `shape` lines).
    uint32_t shape_total;  ///< Number of `shapes`.
    ls_hull **hulls;       ///< Hulls the scene built (freed by ls_scene_free).
    uint32_t hull_count;   ///< Number of `hulls`.
    ls_mesh **meshes;      ///< Meshes the scene built (freed by ls_scene_free).
    uint32_t mesh_count;   ///< Number of `meshes`.
    uint32_t *body_line;   ///< 1-based text line of each body (NULL if not parsed from text).
    uint32_t body_count;   ///< Number of bodies.
    uint32_t player_count; ///< Players named by `player K` (slots 0..count-1, all assigned).
    uint32_t player_body[LS_SCENE_MAX_PLAYERS]; ///< File index of each player's body.
    char **body_label;    ///< `label NAME` of each body (NULL entry: none); NULL when no
                          ///< body has a label.
    ls_joint_def *joints; ///< Joints in file order; body_a/body_b.index1 is the body's
                          ///< 1-based file index (generation 0) until instantiated.
    uint32_t *joint_line; ///< 1-based text line of each joint (NULL if not parsed from text).
    uint32_t joint_count; ///< Number of joints.
    ls_scene_particles *particles; ///< Particle statements in file order (system ids follow it).
    uint32_t particle_count;       ///< Number of `particles`.
    ls_scene_vehicle *vehicles;    ///< `vehicle` statements in file order (vehicle ids follow it).
    uint32_t vehicle_count;        ///< Number of `vehicles`.
    ls_scene_game game;            ///< Game rules (`game`), default LS_SCENE_GAME_PUSH.
    ls_scene_soccer soccer;        ///< `game soccer` parameters (valid when game is soccer).
} ls_scene;

/// Longest body label, bytes including the NUL.
#define LS_SCENE_LABEL_MAX 64

/// Parse scene text (need not be NUL-terminated). On error returns an error code
/// and fills *err (may be NULL) with line and column; *out is then empty. Free a
/// parsed scene with ls_scene_free. A `mesh obj FILE` is refused here (no
/// directory to resolve it in): use ls_scene_parse_in or ls_scene_load.
LS_API ls_result ls_scene_parse(const char *text, size_t len, ls_scene *out, ls_error *err);
/// As ls_scene_parse, resolving `obj FILE` paths relative to directory `dir`.
LS_API ls_result ls_scene_parse_in(const char *text, size_t len, const char *dir, ls_scene *out,
                                   ls_error *err);
/// Read and parse a file. On error *err also names the path (I/O errors have line 0);
/// a directory or an unreadable file is LS_ERR_IO.
LS_API ls_result ls_scene_load(const char *path, ls_scene *out, ls_error *err);
/// The installed data directory: the value of the environment variable
/// LOCKSTEP_DATA when it is set and not empty, else PREFIX/share/lockstep of
/// the install the library was built for (`make install PREFIX=/usr`, and the
/// Debian packages: "/usr/share/lockstep"; default "/usr/local/share/lockstep").
/// The scenes `make install` and the lockstep package install are in its
/// `scenes/` directory, e.g. "/usr/share/lockstep/scenes/arena.scene" for
/// ls_scene_load. Never NULL; the string is static or the environment's (valid
/// until LOCKSTEP_DATA changes). Nothing is checked on disk.
///
/// Why: a program that uses the installed scenes finds them where the
/// `lockstep` CLI does (the CLI resolves a scene name that is not a path to
/// ls_data_dir()/scenes/NAME), with the same override, instead of hard-coding
/// a prefix that differs between `make install` and the packages.
LS_API const char *ls_data_dir(void);
/// Free the bodies, shapes, hulls, meshes, labels, joints and particle statements of a
/// parsed scene.
LS_API void ls_scene_free(ls_scene *s);
/// Write the scene as text that parses back to exactly the same values.
/// Returns the length written (excluding NUL), or the length needed if size is too small.
LS_API size_t ls_scene_write(const ls_scene *s, char *buf, size_t size);
/// Broad-phase pairs (= contact capacity) a scene's world gets per body at most.
#define LS_SCENE_CONTACTS_PER_BODY 32
/// ... and at least.
#define LS_SCENE_CONTACTS_MIN 64

/// The world definition a scene is instantiated with: the file's, with max_bodies
/// raised to the body count, the particle capacities raised to what its particle
/// statements build, and max_contacts capped at
/// max(LS_SCENE_CONTACTS_MIN, LS_SCENE_CONTACTS_PER_BODY * bodies) (SPEC.md §14).
LS_API ls_world_def ls_scene_world_def(const ls_scene *s);
/// Create a world holding the scene's bodies, then its joints, then its particle
/// systems (ids in file order), with ls_scene_world_def. NULL on error, with *err
/// (may be NULL) naming the body, joint or particle statement ("body 3: ...",
/// "joint 2: ...", "cloth 1: ...", its line) and its field.
LS_API ls_world *ls_scene_instantiate(const ls_scene *s, ls_error *err);
/// As ls_scene_instantiate, but refuses (LS_ERR_CAPACITY, before allocating) a
/// scene whose world would take more than max_memory bytes (ls_world_memory_size):
/// for files from strangers.
LS_API ls_world *ls_scene_instantiate_within(const ls_scene *s, size_t max_memory, ls_error *err);

LS_EXTERN_C_END

#endif
