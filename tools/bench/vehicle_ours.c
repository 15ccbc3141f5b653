// SPDX-License-Identifier: MIT
// build/bench_vehicle: our ray-cast vehicles (ls/vehicle.h) behind the vehicle
// interface: the terrain as a static ls_mesh body, four box chassis with a
// four-wheel ls_vehicle each, one worker, the default world (8 sub-steps x
// (solve + relax)). Also `--report FILE` (the section's table).
#include "vehicle_bench.h"

#include "ls/mesh.h"
#include "ls/vehicle.h"
#include "ls/world.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct ours {
    ls_world *w;
    ls_mesh *terrain;
    ls_body_id chassis[BENCH_VEHICLE_CARS];
    ls_vehicle_id car[BENCH_VEHICLE_CARS];
} ours;

// Every value of the shared scene is a multiple of 2^-16, so this is exact.
static ls_fx fx(double v)
{
    return (ls_fx)llround(v * 65536.0);
}

static ls_vec3 vec(const double v[3])
{
    ls_vec3 r = {fx(v[0]), fx(v[1]), fx(v[2])};
    return r;
}

static void ours_destroy(void *h)
{
    ours *o = h;
    if (o->w) {
        ls_world_destroy(o->w);
    }
    ls_mesh_destroy(o->terrain);
    free(o);
}

static void *ours_create(const bench_vehicle_scene *s, char *err, size_t err_size)
{
    ours *o = calloc(1, sizeof *o);
    ls_vec3 *v = calloc(s->vertex_count, sizeof *v);
    if (!o || !v) {
        free(o), free(v);
        snprintf(err, err_size, "out of memory");
        return NULL;
    }
    for (uint32_t i = 0; i < s->vertex_count; i++) {
        v[i] = vec(s->vertices + 3 * (size_t)i);
    }
    ls_error e;
    o->terrain = ls_mesh_create(v, s->vertex_count, s->triangles, s->triangle_count, &e);
    free(v);
    if (!o->terrain) {
        snprintf(err, err_size, "terrain: %s", e.message);
        ours_destroy(o);
        return NULL;
    }
    ls_world_def wd = ls_default_world_def();
    wd.tick_rate = 60;
    wd.worker_count = 1;
    wd.max_bodies = 16;
    wd.max_contacts = 256;
    wd.max_vehicles = BENCH_VEHICLE_CARS;
    o->w = ls_world_create(&wd, &e);
    if (!o->w) {
        snprintf(err, err_size, "world: %s", e.message);
        ours_destroy(o);
        return NULL;
    }
    ls_body_def ground = ls_default_body_def();
    ground.type = LS_BODY_STATIC;
    ground.shape = ls_default_shape_def();
    ground.shape.type = LS_SHAPE_MESH;
    ground.shape.mesh = o->terrain;
    ground.shape.friction = fx(s->ground_friction);
    if (ls_body_create(o->w, &ground, &e).index1 == 0) {
        snprintf(err, err_size, "terrain body: %s", e.message);
        ours_destroy(o);
        return NULL;
    }
    for (uint32_t k = 0; k < BENCH_VEHICLE_CARS; k++) {
        ls_body_def b = ls_default_body_def();
        b.type = LS_BODY_DYNAMIC;
        b.position = vec(s->start[k]);
        b.allow_sleep = false; // Bullet's chassis: DISABLE_DEACTIVATION
        b.shape = ls_default_shape_def();
        b.shape.type = LS_SHAPE_BOX;
        b.shape.half_extents = vec(s->half);
        // density x volume = mass: 800 / (8 hx hy hz) = 100 exactly for the scene's box
        b.shape.density = fx(s->mass / (8 * s->half[0] * s->half[1] * s->half[2]));
        o->chassis[k] = ls_body_create(o->w, &b, &e);
        if (o->chassis[k].index1 == 0) {
            snprintf(err, err_size, "chassis %u: %s", k, e.message);
            ours_destroy(o);
            return NULL;
        }
        ls_vehicle_def vd = ls_default_vehicle_def();
        vd.chassis = o->chassis[k];
        vd.wheel_count = BENCH_VEHICLE_WHEELS;
        vd.engine_force = fx(s->engine_force);
        vd.max_steer = fx(s->max_steer);
        for (uint32_t i = 0; i < BENCH_VEHICLE_WHEELS; i++) {
            ls_wheel_def wh = ls_default_wheel_def();
            wh.mount = vec(s->wheels[i].mount);
            wh.radius = fx(s->radius);
            wh.rest_length = fx(s->rest_length);
            wh.max_travel = fx(s->max_travel);
            wh.stiffness = fx(s->stiffness);
            wh.damping = fx(s->damping);
            wh.drive_share = LS_FX_ONE / BENCH_VEHICLE_WHEELS; // all-wheel drive, as Bullet's
            wh.steer_share = s->wheels[i].front ? LS_FX_ONE : 0;
            wh.static_friction = fx(s->friction); // Bullet has one frictionSlip
            wh.dynamic_friction = fx(s->friction);
            wh.rolling_resistance = 0; // Bullet has none without brakes
            vd.wheels[i] = wh;
        }
        o->car[k] = ls_vehicle_create(o->w, &vd, &e);
        if (o->car[k].index1 == 0) {
            snprintf(err, err_size, "vehicle %u: %s", k, e.message);
            ours_destroy(o);
            return NULL;
        }
    }
    return o;
}

static void ours_controls(void *h, uint32_t car, const bench_vehicle_controls *c)
{
    ours *o = h;
    ls_vehicle_controls vc = {0};
    vc.throttle = fx(c->throttle);
    vc.steer = fx(c->steer);
    ls_vehicle_set_controls(o->w, o->car[car], &vc);
}

static void ours_step(void *h)
{
    ls_world_step(((ours *)h)->w);
}

// Rotate v by the unit quaternion q (x y z w).
static void rotate(const double q[4], const double v[3], double out[3])
{
    double tx = 2 * (q[1] * v[2] - q[2] * v[1]), ty = 2 * (q[2] * v[0] - q[0] * v[2]),
           tz = 2 * (q[0] * v[1] - q[1] * v[0]);
    out[0] = v[0] + q[3] * tx + q[1] * tz - q[2] * ty;
    out[1] = v[1] + q[3] * ty + q[2] * tx - q[0] * tz;
    out[2] = v[2] + q[3] * tz + q[0] * ty - q[1] * tx;
}

static void ours_car(void *h, uint32_t car, bench_car_state *out)
{
    ours *o = h;
    ls_body_state st;
    ls_body_get_state(o->w, o->chassis[car], &st, NULL);
    const ls_vec3 *p = &st.position, *v = &st.linear_velocity;
    out->pos[0] = p->x / 65536.0, out->pos[1] = p->y / 65536.0, out->pos[2] = p->z / 65536.0;
    out->vel[0] = v->x / 65536.0, out->vel[1] = v->y / 65536.0, out->vel[2] = v->z / 65536.0;
    double q[4] = {st.orientation.x / 65536.0, st.orientation.y / 65536.0,
                   st.orientation.z / 65536.0, st.orientation.w / 65536.0};
    const double up[3] = {0, 1, 0}, fwd[3] = {0, 0, 1};
    double u[3];
    rotate(q, up, u);
    rotate(q, fwd, out->forward);
    out->up_y = u[1];
    out->in_contact = 0;
    for (uint32_t i = 0; i < BENCH_VEHICLE_WHEELS; i++) {
        ls_wheel_state ws;
        if (ls_vehicle_get_wheel(o->w, o->car[car], i, &ws) == LS_OK && ws.in_contact) {
            out->in_contact++;
        }
    }
}

int main(int argc, char **argv)
{
    static const bench_vehicle_engine e = {"ours",        "lockstep", "Q16.16", ours_create,
                                           ours_controls, ours_step,  ours_car, ours_destroy};
    return bench_vehicle_main(&e, argc, argv);
}
