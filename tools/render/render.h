// SPDX-License-Identifier: MIT
// `lockstep render`: a small deterministic software rasteriser for scenes and
// replays (display code: float is fine here, never under fixmath_phys/).
//   load.c    the only file that talks to scene loading, world creation and
//             replays (rn_source), shared with the browser viewer's wasm API
//   raster.c  camera, z-buffer, clipped triangles, Lambert shading, grid, PNG
//   shapes.c  one draw routine per shape kind, in a table keyed by shape type
#ifndef LS_TOOLS_RENDER_H
#define LS_TOOLS_RENDER_H

#include "ls/replay.h"
#include "ls/scene.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

// ---------------------------------------------------------------- sources

/// A scene or a replay, and the world re-simulated from it.
typedef struct rn_source {
    ls_scene scene;           ///< Parsed scene (the replay's embedded one for replays).
    ls_world *world;          ///< Current state.
    uint32_t tick;            ///< Ticks stepped so far.
    bool is_replay;           ///< Opened from a .lsr.
    ls_replay_reader *reader; ///< Replays only.
    ls_replay_cursor *cursor; ///< Replays only.
    uint32_t ticks;           ///< Recorded ticks (replays) or the scene's tick count.
    uint32_t players;         ///< Replays: players per tick.
    uint32_t input_size;      ///< Replays: bytes per player per tick.
    uint64_t last_recorded;   ///< Replays: recorded checksum of the last stepped tick.
    uint64_t last_computed;   ///< Checksum after the last step.
    uint8_t *keyframe_buf;    ///< Scratch for keyframe restore.
    size_t keyframe_buf_size; ///< Bytes of keyframe_buf.
    uint32_t memo_interval;   ///< Scenes: snapshot every this many ticks for seeking (0: none).
    struct rn_memo *memo;     ///< Scenes: the snapshots taken, in tick order.
    uint32_t memo_count;      ///< Snapshots in memo.
} rn_source;

/// Open scene text or replay bytes (told apart by the replay magic). The bytes are
/// not kept. Returns false with msg filled on error.
bool rn_source_open(rn_source *s, const uint8_t *data, size_t size, char *msg, size_t msg_size);
/// As rn_source_open, resolving a scene's `mesh obj FILE` paths in directory `dir`
/// (NULL: such a scene is refused).
bool rn_source_open_in(rn_source *s, const uint8_t *data, size_t size, const char *dir, char *msg,
                       size_t msg_size);
/// Read a file and rn_source_open it (`obj` files are found next to it).
bool rn_source_open_file(rn_source *s, const char *path, char *msg, size_t msg_size);
/// Free everything.
void rn_source_close(rn_source *s);
/// One tick forward (with the recorded inputs for a replay). Sets last_computed
/// and, for replays, last_recorded. False past the recording's end.
bool rn_source_step(rn_source *s);
/// Go to the state after `tick` ticks: forward by stepping, backward (or far
/// forward) from the nearest keyframe at or before it. False with msg on error.
bool rn_source_seek(rn_source *s, uint32_t tick, char *msg, size_t msg_size);
/// Checksum of the current state.
uint64_t rn_source_checksum(const rn_source *s);
/// Body i (file order) of the current state.
ls_body_id rn_source_body(const rn_source *s, uint32_t i);

// ---------------------------------------------------------------- drawing

typedef struct rn_vec {
    float x, y, z;
} rn_vec;

/// Surface: base colour, and a 1 m grid on planes.
typedef struct rn_material {
    float r, g, b; ///< Base colour 0..1.
    bool grid;     ///< Draw grid lines (uses origin, u, v).
    rn_vec origin; ///< Grid origin.
    rn_vec u, v;   ///< Grid axes (unit, in the surface).
} rn_material;

typedef struct rn_camera {
    rn_vec eye, target;
    float fov_deg; ///< Vertical field of view.
} rn_camera;

/// A frame being drawn (supersampled internally).
typedef struct rn_canvas {
    int width, height;     ///< Output size.
    int ss;                ///< Supersampling factor.
    int sw, sh;            ///< Internal size (width * ss, height * ss).
    float *color;          ///< sw * sh * 3.
    float *depth;          ///< sw * sh, 1/z (0 = far).
    uint8_t *rgb;          ///< Final width * height * 3 after rn_canvas_resolve.
    rn_camera cam;         ///< Current camera.
    rn_vec right, up, fwd; ///< Camera basis.
    float focal;           ///< Pixels (internal) per unit at z = 1.
    rn_vec light;          ///< Direction towards the light (unit).
    float extent;          ///< Scene size, m (plane quads, grid fade).
} rn_canvas;

/// Allocate a canvas; false if out of memory.
bool rn_canvas_init(rn_canvas *c, int width, int height, int ss);
void rn_canvas_free(rn_canvas *c);
/// Clear to the sky and set the camera.
void rn_canvas_begin(rn_canvas *c, const rn_camera *cam, float extent);
/// Draw one world-space triangle.
void rn_triangle(rn_canvas *c, rn_vec a, rn_vec b, rn_vec d, const rn_material *m);
/// Downsample into c->rgb.
void rn_canvas_resolve(rn_canvas *c);
/// Project a world point to output pixels; false if behind the camera.
bool rn_project(const rn_canvas *c, rn_vec p, float *x, float *y);
/// Write a decimal number into c->rgb at output pixel (x, y) (centred), 3x5 font.
void rn_label(rn_canvas *c, float x, float y, unsigned value);
/// A filled disc marker on c->rgb (after resolve).
void rn_marker(rn_canvas *c, float x, float y, float radius, uint8_t r, uint8_t g, uint8_t b);
/// FNV-1a 64 of c->rgb.
uint64_t rn_canvas_hash(const rn_canvas *c);
/// Write c->rgb as an 8-bit RGB PNG with libpng. False with msg on error.
bool rn_write_png(const rn_canvas *c, const char *path, char *msg, size_t msg_size);

/// Write c->rgb as a binary PPM (P6, no compression). False with msg on error.
bool rn_write_ppm(const rn_canvas *c, const char *path, char *msg, size_t msg_size);
/// rn_write_ppm for a path ending in .ppm, rn_write_png otherwise.
bool rn_write_image(const rn_canvas *c, const char *path, char *msg, size_t msg_size);

/// One shape at its world pose (ls_shape_get_transform): what a draw routine draws.
typedef struct rn_shape {
    ls_shape_def def; ///< Geometry (ls_body_shape_at: hull/mesh point at the world's copies).
    rn_vec pos;       ///< World position of the shape's frame.
    float q[4];       ///< World orientation of the shape's frame x, y, z, w.
    rn_vec lo, hi;    ///< Hulls and meshes: bounds of their vertices in the shape's frame.
} rn_shape;

/// One body to draw: its shapes, each at its own world pose.
typedef struct rn_body {
    const ls_body_def *def; ///< Type from the scene.
    rn_vec pos;             ///< Centre of mass (labels).
    bool asleep;            ///< Tinted when true.
    uint32_t id;            ///< 1-based id (file order).
    const rn_shape *shapes; ///< The body's shapes (ls_body_shape_count of them).
    uint32_t shape_count;   ///< Number of shapes.
} rn_body;

/// Draw routine of one shape kind.
typedef void (*rn_draw_fn)(rn_canvas *c, const rn_shape *s, const rn_material *m);
/// The draw routine for a shape type, or NULL if the kind has none.
rn_draw_fn rn_shape_drawer(ls_shape_type type);
/// Name of a shape type ("sphere", ...).
const char *rn_shape_name(ls_shape_type type);
/// Shape k of a body as the world has it now: definition and world pose.
rn_shape rn_shape_of(const ls_world *w, ls_body_id id, uint32_t k);
/// Rotate a point of the shape's frame by its orientation and add its position.
rn_vec rn_shape_point(const rn_shape *s, rn_vec local);

// ------------------------------------------- whole frames (cmd_render.c)

/// What rn_draw_source draws besides the bodies.
typedef struct rn_draw_opts {
    bool ids;              ///< Label every body (not ground) with its 1-based id.
    bool contacts;         ///< Mark contact points.
    const bool *highlight; ///< NULL, or per body (file order): drawn magenta and labelled,
                           ///< the other bodies faded towards grey.
} rn_draw_opts;

/// The camera for `--camera spec` (auto, front, side, top or EX,EY,EZ,TX,TY,TZ[,FOV])
/// framing the scene's initial bodies at the aspect ratio, and the scene's extent
/// (for rn_canvas_begin). False if spec is not one of those.
bool rn_camera_for(const char *spec, const ls_scene *sc, float aspect, rn_camera *cam,
                   float *extent);
/// Draw src's current state into c (cleared first) and resolve it into c->rgb.
/// False with msg on error (out of memory).
bool rn_draw_source(rn_source *src, rn_canvas *c, const rn_camera *cam, float extent,
                    const rn_draw_opts *o, char *msg, size_t msg_size);

#endif
