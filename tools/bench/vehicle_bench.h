// SPDX-License-Identifier: MIT
// `make bench-vehicle` (issue 15): four identical ray-cast cars on one static
// triangle mesh, driven by one scripted control schedule, in our engine
// (ls_vehicle) and in Bullet (btRaycastVehicle). The scene is described once
// here in doubles whose values are exact in Q16.16 and in float, so both
// engines build the same triangles, bodies and wheels; one driver times both
// and measures the motion the same way.
// Benchmark tooling only: floating point is fine here, never in the library.
#ifndef LS_BENCH_VEHICLE_H
#define LS_BENCH_VEHICLE_H

#include "bench_clock.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Cars in the scene.
#define BENCH_VEHICLE_CARS 4
/// Wheels per car (front left, front right, rear left, rear right).
#define BENCH_VEHICLE_WHEELS 4

/// One wheel in the chassis frame (centre of mass at the origin, forward +z, up +y).
typedef struct bench_wheel {
    double mount[3]; ///< suspension top, m
    int front;       ///< steers (front wheels)
} bench_wheel;

/// The whole scene as both engines see it.
typedef struct bench_vehicle_scene {
    double dt;               ///< s: our exact tick at 60 Hz (1092/65536), both engines
    double gravity;          ///< m/s^2 along -y
    uint32_t ticks;          ///< ticks per run
    double *vertices;        ///< terrain: 3 per vertex, m
    uint32_t vertex_count;   ///< terrain vertices
    uint32_t *triangles;     ///< terrain: 3 indices each, counter-clockwise seen from above
    uint32_t triangle_count; ///< terrain triangles
    double ground_friction;  ///< terrain friction coefficient
    double half[3];          ///< chassis box half extents, m
    double mass;             ///< chassis mass, kg (density 100 x volume 8 m^3)
    double start[BENCH_VEHICLE_CARS][3];      ///< chassis centres at the start, m (heading +z)
    bench_wheel wheels[BENCH_VEHICLE_WHEELS]; ///< the same four wheels on every car
    double radius;                            ///< wheel radius, m
    double rest_length;                       ///< spring length at rest, m
    double max_travel;                        ///< most compression, m
    double stiffness;                         ///< spring k, N/m
    double damping;                           ///< damper c, N s/m
    double friction;                          ///< tyre mu (static = dynamic)
    double engine_force;    ///< drive force at full throttle, N (all wheels, 1/4 each)
    double max_steer;       ///< front wheels' angle at full steer, rad
    uint32_t solver_passes; ///< our sub-steps x (solve + relax) = Bullet's iterations
} bench_vehicle_scene;

/// Controls of one car at one tick (the same script for both engines).
typedef struct bench_vehicle_controls {
    double throttle; ///< -1..1
    double steer;    ///< -1 (left) .. 1 (right)
} bench_vehicle_controls;

/// Where a car is, read after a step (untimed).
typedef struct bench_car_state {
    double pos[3];       ///< centre of mass, m
    double vel[3];       ///< m/s
    double up_y;         ///< y component of the chassis up axis (1 = level)
    double forward[3];   ///< chassis +z axis in the world
    uint32_t in_contact; ///< wheels touching the ground
} bench_car_state;

/// One vehicle engine behind a common interface.
typedef struct bench_vehicle_engine {
    const char *name;      ///< "ours", "bullet"
    const char *version;   ///< version text for the output
    const char *precision; ///< "Q16.16", "float"
    /// Build the scene; NULL and a message on failure.
    void *(*create)(const bench_vehicle_scene *s, char *err, size_t err_size);
    /// Set car k's controls (timed with the step).
    void (*controls)(void *world, uint32_t car, const bench_vehicle_controls *c);
    /// One tick of s->dt.
    void (*step)(void *world);
    /// Car k's state after the last step.
    void (*car)(void *world, uint32_t car, bench_car_state *out);
    /// Free everything.
    void (*destroy)(void *world);
} bench_vehicle_engine;

/// Build the shared scene (terrain heightfield with two ramps, four cars).
int bench_vehicle_scene_init(bench_vehicle_scene *s);
/// Free the scene's arrays.
void bench_vehicle_scene_free(bench_vehicle_scene *s);
/// The scripted controls of car k at tick t (piecewise constant).
bench_vehicle_controls bench_vehicle_script(uint32_t car, uint32_t tick, double dt);
/// Driver: `NAME [--ticks N] [--repeats R] [--csv FILE] [--quiet]`, or
/// `--report FILE` (the table of every engine's rows in FILE, ratio ours / Bullet).
int bench_vehicle_main(const bench_vehicle_engine *e, int argc, char **argv);

#ifdef __cplusplus
}
#endif

#endif
