// SPDX-License-Identifier: MIT
// build/bench_box3d_ours: Box3D's benchmark scenes in our engine, through the
// public API only (ls/world.h, ls/joint.h, ls/hull.h, ls/mesh.h). The world
// gets Box3D's defaults where ours has the knob (gravity -10, contact 30 Hz,
// damping ratio 10, push-out 3 m/s, joints 60 Hz / 2, speculative distance
// 0.02 m, slop 0.005 m, restitution threshold 1 m/s) and 4 sub-steps unless
// `--substeps default`. The ground box of Box3D's scenes is a plane with the
// same top surface (its 400 x 1 x 400 box exceeds our 64 m half extents).
// Rain: the humans and meshes come from Box3D's own code (box3d_human.c),
// spawned and destroyed while stepping as Box3D's StepRain does.
#include "box3d_bench.h"

#include "ls/hull.h"
#include "ls/joint.h"
#include "ls/mesh.h"
#include "ls/world.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HUMANS   (B3B_RAIN_GRID * B3B_RAIN_GRID * B3B_RAIN_GROUP_SIZE)
#define BENCH_PI 3.14159265358979323846

typedef struct ours {
    ls_world *w;
    const b3b_scene *s;
    uint32_t max_bodies;
    ls_body_id *ids; // description bodies
    // rain
    b3b_rain_data rain;
    ls_mesh *grid, *torus;
    b3b_rain_state rs;
    ls_body_id (*human_bodies)[B3B_BONES];
    ls_joint_id (*human_joints)[B3B_BONES];
    // warnings
    uint32_t capacity_steps;
    int debug; // BENCH_BOX3D_DEBUG set: print new contacts of the rain humans, overflows
    // rain's cone joints get Box3D's joint friction unless BENCH_BOX3D_CONE_FRICTION=0
    // (tools/bench/README.md section 9: what it costs)
    int cone_friction;
    uint32_t overflows_seen;
    char warn[640];
    // BENCH_BOX3D_PROFILE set: ls_world_profile summed over the timed steps
    uint32_t profiled;
    ls_profile profile;
} ours;

static ls_fx fx(double v)
{
    return (ls_fx)llround(v * 65536.0);
}

static ls_vec3 v3(double x, double y, double z)
{
    return ls_vec3_make(fx(x), fx(y), fx(z));
}

static ls_vec3 vd(const double v[3])
{
    return v3(v[0], v[1], v[2]);
}

static double dfx(ls_fx v)
{
    return (double)v / 65536.0;
}

// The profile clock of BENCH_BOX3D_PROFILE (ls_world_def.profile_clock).
static uint64_t profile_clock(void *context)
{
    (void)context;
    return (uint64_t)bench_now_ns();
}

// Box3D's world defaults where our world definition has the knob.
static ls_world_def world_def(const b3b_scene *s, const b3b_opts *o, uint32_t bodies,
                              uint32_t shapes, uint32_t joints)
{
    ls_world_def d = ls_default_world_def();
    d.gravity = v3(0, -10, 0);
    d.tick_rate = 60;
    if (o->substeps > 0) {
        d.substeps = (uint32_t)o->substeps;
    }
    d.velocity_iterations = 1; // Box3D: one solve and one relax pass per sub-step
    d.position_iterations = 1;
    d.contact_hertz = fx(30);
    d.contact_damping_ratio = fx(10);
    d.max_push_velocity = fx(3);
    d.joint_hertz = fx(60);
    d.joint_damping_ratio = fx(2);
    d.restitution_threshold = fx(1);
    d.linear_slop = fx(0.005);
    d.contact_margin = fx(0.02); // B3_SPECULATIVE_DISTANCE = 4 x slop
    d.rolling_resistance = fx(s->rolling);
    d.sleep_linear = fx(0.05);
    d.sleep_angular = fx(0.05 / s->sleep_extent); // Box3D: |v| + |w| x extent < 0.05 m/s
    d.sleep_time = fx(0.5);
    d.worker_count = o->threads;
    d.max_bodies = bodies;
    d.max_shapes = shapes;
    uint64_t contacts = 8 * (uint64_t)bodies + 1024;
    d.max_contacts = contacts > (1u << 22) ? (1u << 22) : (uint32_t)contacts;
    d.max_joints = joints ? joints : 1;
    d.profile_clock = getenv("BENCH_BOX3D_PROFILE") ? profile_clock : NULL;
    return d;
}

static ls_shape_def shape_def(void)
{
    ls_shape_def d = ls_default_shape_def();
    d.friction = fx(0.6); // Box3D's default material
    d.restitution = 0;
    d.category = 1;
    d.mask = 0xFFFFFFFFu;
    return d;
}

static int add_plane(ours *o, double nx, double ny, double nz, double d, char *err, size_t n)
{
    ls_body_def b = ls_default_body_def();
    b.type = LS_BODY_STATIC;
    b.shape = shape_def();
    b.shape.type = LS_SHAPE_PLANE;
    b.shape.normal = v3(nx, ny, nz);
    b.shape.plane_d = fx(d);
    ls_error e;
    if (ls_body_create(o->w, &b, &e).index1 == 0) {
        snprintf(err, n, "plane: %s", e.message);
        return -1;
    }
    return 0;
}

static int fits(const double half[3])
{
    return half[0] <= 64 && half[1] <= 64 && half[2] <= 64;
}

static int add_box(ours *o, double x, double y, double z, const double half[3], char *err, size_t n)
{
    ls_body_def b = ls_default_body_def();
    b.type = LS_BODY_STATIC;
    b.position = v3(x, y, z);
    b.shape = shape_def();
    b.shape.type = LS_SHAPE_BOX;
    b.shape.half_extents = vd(half);
    ls_error e;
    if (ls_body_create(o->w, &b, &e).index1 == 0) {
        snprintf(err, n, "static box: %s", e.message);
        return -1;
    }
    return 0;
}

static void ours_destroy(void *h)
{
    ours *o = h;
    if (o->w && getenv("BENCH_BOX3D_CHECKSUM")) { // the end state's bits (same-bits checks)
        fprintf(stderr, "checksum %016llx\n", (unsigned long long)ls_world_checksum(o->w));
    }
    if (o->profiled) { // ms per timed step, stage by stage (ls_profile)
        const ls_profile *p = &o->profile;
        const struct {
            const char *name;
            uint64_t ns;
        } st[] = {
            {"proxies", p->proxies}, {"vehicles", p->vehicles},     {"pairs", p->pairs},
            {"narrow", p->narrow},   {"contacts", p->contacts},     {"wake", p->wake},
            {"prepare", p->prepare}, {"substeps", p->substeps},     {"restitution", p->restitution},
            {"finish", p->finish},   {"continuous", p->continuous}, {"particles", p->particles},
            {"sleep", p->sleep}};
        fprintf(stderr, "profile (ms/step over %u steps): step %.3f =", o->profiled,
                (double)p->step / 1e6 / o->profiled);
        for (size_t k = 0; k < sizeof st / sizeof st[0]; k++) {
            if (st[k].ns) {
                fprintf(stderr, " %s %.3f", st[k].name, (double)st[k].ns / 1e6 / o->profiled);
            }
        }
        fprintf(stderr, "\n");
    }
    if (o->w) {
        ls_world_destroy(o->w);
    }
    free(o->ids);
    free(o->human_bodies);
    free(o->human_joints);
    ls_mesh_destroy(o->grid);
    ls_mesh_destroy(o->torus);
    b3b_rain_template_free(&o->rain);
    free(o);
}

// ---- the described scenes ----------------------------------------------------------

static void *create_described(ours *o, const b3b_scene *s, const b3b_opts *opt, char *err, size_t n)
{
    ls_error e;
    o->max_bodies = s->body_count + 8;
    ls_world_def wd = world_def(s, opt, o->max_bodies, o->max_bodies, s->joint_count);
    o->w = ls_world_create(&wd, &e);
    o->ids = calloc(s->body_count ? s->body_count : 1, sizeof *o->ids);
    if (!o->w || !o->ids) {
        snprintf(err, n, "world: %s", o->w ? "out of memory" : e.message);
        ours_destroy(o);
        return NULL;
    }
    // The ground and the bin's walls: Box3D's static boxes where they fit in our
    // half extents (<= 64 m), else half-spaces with the same inner faces.
    double g[3] = {s->ground_half[0], s->ground_half[1], s->ground_half[2]};
    if (s->ground &&
        (fits(g) ? add_box(o, 0, -1, 0, g, err, n) : add_plane(o, 0, 1, 0, 0, err, n))) {
        ours_destroy(o);
        return NULL;
    }
    if (s->bin_half > 0) {
        double h = s->bin_half, wx[3] = {0.5, 4, h + 1}, wz[3] = {h + 1, 4, 0.5};
        int rc = fits(wx)
                     ? add_box(o, h + 0.5, 4, 0, wx, err, n) ||
                           add_box(o, -h - 0.5, 4, 0, wx, err, n) ||
                           add_box(o, 0, 4, h + 0.5, wz, err, n) ||
                           add_box(o, 0, 4, -h - 0.5, wz, err, n)
                     : add_plane(o, 1, 0, 0, -h, err, n) || add_plane(o, -1, 0, 0, -h, err, n) ||
                           add_plane(o, 0, 0, 1, -h, err, n) || add_plane(o, 0, 0, -1, -h, err, n);
        if (rc) {
            ours_destroy(o);
            return NULL;
        }
    }
    ls_hull *hull = NULL;
    if (s->hull_count) {
        ls_vec3 p[64];
        for (uint32_t i = 0; i < s->hull_count; i++) {
            p[i] = vd(s->hull[i]);
        }
        hull = ls_hull_create(p, s->hull_count, &e);
        if (!hull) {
            snprintf(err, n, "hull: %s", e.message);
            ours_destroy(o);
            return NULL;
        }
    }
    for (uint32_t i = 0; i < s->body_count; i++) {
        const b3b_body *b = &s->bodies[i];
        ls_body_def bd = ls_default_body_def();
        bd.type = b->dynamic ? LS_BODY_DYNAMIC : LS_BODY_STATIC;
        bd.position = vd(b->pos);
        bd.orientation = ls_quat_make(0, fx(sin(b->yaw / 2)), 0, fx(cos(b->yaw / 2)));
        bd.linear_damping = 0, bd.angular_damping = 0; // Box3D's defaults
        bd.allow_sleep = s->sleep != 0;
        bd.awake = true;
        bd.shape = shape_def();
        bd.shape.density =
            fx(b->shape == B3B_HULL && s->ours_density > 0 ? s->ours_density : b->density);
        bd.shape.category = b->category, bd.shape.mask = b->mask;
        if (b->shape == B3B_BOX) {
            bd.shape.type = LS_SHAPE_BOX;
            bd.shape.half_extents = vd(b->half);
        } else if (b->shape == B3B_SPHERE) {
            bd.shape.type = LS_SHAPE_SPHERE;
            bd.shape.radius = fx(b->radius);
        } else {
            bd.shape.type = LS_SHAPE_HULL;
            bd.shape.hull = hull;
        }
        o->ids[i] = ls_body_create(o->w, &bd, &e);
        if (o->ids[i].index1 == 0) {
            snprintf(err, n, "body %u: %s (%s)", i, e.message, e.field);
            ls_hull_destroy(hull);
            ours_destroy(o);
            return NULL;
        }
    }
    ls_hull_destroy(hull); // the world keeps its own copy
    for (uint32_t i = 0; i < s->joint_count; i++) {
        const b3b_joint *j = &s->joints[i];
        if (!s->bodies[j->a].dynamic && !s->bodies[j->b].dynamic) {
            continue; // Box3D keeps joints between two static bodies (joint_grid's top row); ours
                      // refuses them: they never act
        }
        ls_joint_def jd = ls_default_joint_def();
        jd.type = LS_JOINT_BALL; // Box3D's spherical joint without limits, spring or motor
        jd.body_a = o->ids[j->a], jd.body_b = o->ids[j->b];
        jd.anchor = vd(j->anchor);
        if (ls_joint_create(o->w, &jd, &e).index1 == 0) {
            snprintf(err, n, "joint %u: %s (%s)", i, e.message, e.field);
            ours_destroy(o);
            return NULL;
        }
    }
    return o;
}

// ---- rain ------------------------------------------------------------------------

static ls_mesh *make_mesh(const b3b_mesh *m, ls_error *e)
{
    ls_vec3 *v = calloc(m->vertex_count, sizeof *v);
    if (!v) {
        return NULL;
    }
    for (uint32_t i = 0; i < m->vertex_count; i++) {
        v[i] = vd(m->vertices + 3 * (size_t)i);
    }
    ls_mesh *mesh = ls_mesh_create(v, m->vertex_count, m->triangles, m->triangle_count, e);
    free(v);
    return mesh;
}

// Rotation taking +y (our capsule's axis) onto the unit vector u.
static ls_quat from_y(const double u[3])
{
    double c = u[1], x = u[2], z = -u[0]; // axis y x u = (u.z, 0, -u.x), |axis| = sin
    double s2 = sqrt(x * x + z * z);
    if (s2 < 1e-9) {
        return c > 0 ? ls_quat_identity() : ls_quat_make(LS_FX_ONE, 0, 0, 0);
    }
    double half = atan2(s2, c) / 2, k = sin(half) / s2;
    return ls_quat_make(fx(x * k), 0, fx(z * k), fx(cos(half)));
}

static void destroy_group(ours *o, int g)
{
    for (int h = g * B3B_RAIN_GROUP_SIZE; h < (g + 1) * B3B_RAIN_GROUP_SIZE; h++) {
        for (int i = 0; i < B3B_BONES; i++) {
            if (o->human_joints[h][i].index1) {
                ls_joint_destroy(o->w, o->human_joints[h][i]);
            }
            o->human_joints[h][i] = (ls_joint_id){0, 0};
        }
        for (int i = 0; i < B3B_BONES; i++) {
            if (o->human_bodies[h][i].index1) {
                ls_body_destroy(o->w, o->human_bodies[h][i]);
            }
            o->human_bodies[h][i] = (ls_body_id){0, 0};
        }
    }
}

static void warn_once(ours *o, const char *what, const ls_error *e)
{
    if (!o->warn[0]) {
        snprintf(o->warn, sizeof o->warn, "%s: %s (%s)", what, e->message, e->field);
    }
}

// Box3D's CreateHuman at `at` in group g (the k-th human of the group).
static void spawn_human(ours *o, int g, int k, const double at[3])
{
    const b3b_rain_data *d = &o->rain;
    int h = g * B3B_RAIN_GROUP_SIZE + k;
    ls_error e;
    for (int i = 0; i < B3B_BONES; i++) {
        const b3b_bone *b = &d->bones[i];
        ls_body_def bd = ls_default_body_def();
        bd.type = LS_BODY_DYNAMIC;
        bd.position = v3(at[0] + b->pos[0], at[1] + b->pos[1], at[2] + b->pos[2]);
        bd.orientation =
            ls_quat_make(fx(b->quat[0]), fx(b->quat[1]), fx(b->quat[2]), fx(b->quat[3]));
        bd.linear_damping = 0, bd.angular_damping = 0;
        bd.allow_sleep = true, bd.awake = true;
        bd.user_data = (uint64_t)h * 16 + (uint64_t)i + 1; // human and bone (BENCH_BOX3D_DEBUG)
        bd.shape = shape_def();
        bd.shape.type = LS_SHAPE_CAPSULE;
        double axis[3] = {b->c2[0] - b->c1[0], b->c2[1] - b->c1[1], b->c2[2] - b->c1[2]};
        double len = sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
        for (int c = 0; c < 3; c++) {
            axis[c] /= len;
        }
        bd.shape.radius = fx(b->radius);
        bd.shape.half_height = fx(len / 2);
        bd.shape.local_position =
            v3((b->c1[0] + b->c2[0]) / 2, (b->c1[1] + b->c2[1]) / 2, (b->c1[2] + b->c2[2]) / 2);
        bd.shape.local_orientation = from_y(axis);
        bd.shape.density = fx(b->density);
        bd.shape.friction = fx(b->friction);
        if (b->filtered &&
            g > 0) { // Box3D's group -g: one bit per group (groups 30 apart never meet)
            bd.shape.category = 1u << (1 + g % 30);
            bd.shape.mask = ~bd.shape.category;
        } else if (b->filter_joint) { // group 0 has no group: its filter joint (thigh pair)
            bd.shape.category = 1u << 31;
            bd.shape.mask = ~bd.shape.category;
        }
        o->human_bodies[h][i] = ls_body_create(o->w, &bd, &e);
        if (o->human_bodies[h][i].index1 == 0) {
            warn_once(o, "human body", &e);
            return;
        }
    }
    for (int i = 0; i < B3B_BONES; i++) {
        const b3b_bone *b = &d->bones[i];
        if (b->parent < 0) {
            continue;
        }
        ls_joint_def jd = ls_default_joint_def();
        jd.body_a = o->human_bodies[h][b->parent];
        jd.body_b = o->human_bodies[h][i];
        jd.anchor = v3(at[0] + b->anchor[0], at[1] + b->anchor[1], at[2] + b->anchor[2]);
        jd.axis = vd(b->axis);
        // Ours measures angles from the creation pose, Box3D from aligned frames.
        double lo = fmax(b->lower - b->angle0, -BENCH_PI),
               hi = fmin(b->upper - b->angle0, BENCH_PI);
        if (b->revolute) {
            jd.type = LS_JOINT_HINGE;
            jd.enable_limit = true;
            jd.lower = fx(lo), jd.upper = fx(hi);
            jd.enable_spring = b->spring != 0;
            jd.spring_hertz = fx(b->hertz);
            jd.spring_damping_ratio = fx(b->damping);
            jd.enable_motor = b->motor != 0; // speed 0: joint friction
            jd.motor_speed = fx(b->motor_speed);
            jd.max_motor_torque = fx(b->max_motor_torque);
        } else { // spherical with cone and twist limits -> our cone joint (no spring)
            jd.type = LS_JOINT_CONE;
            jd.cone_angle = fx(b->cone);
            jd.twist_lower = fx(lo), jd.twist_upper = fx(hi);
            // Box3D's spherical motor at speed 0 is joint friction: ours the same.
            jd.enable_motor = o->cone_friction && b->motor != 0;
            jd.max_motor_torque = jd.enable_motor ? fx(b->max_motor_torque) : 0;
        }
        o->human_joints[h][i] = ls_joint_create(o->w, &jd, &e);
        if (o->human_joints[h][i].index1 == 0) {
            warn_once(o, "human joint", &e);
        }
    }
}

static void create_group(ours *o, int row, int column)
{
    int g = row * B3B_RAIN_GRID + column;
    double at[3];
    b3b_rain_origin(row, column, at);
    for (int k = 0; k < B3B_RAIN_GROUP_SIZE; k++) {
        spawn_human(o, g, k, at);
        at[0] = (float)at[0] + 0.75f; // as Box3D (float)
    }
}

static void *create_rain(ours *o, const b3b_scene *s, const b3b_opts *opt, char *err, size_t n)
{
    ls_error e;
    if (b3b_rain_template(&o->rain, err, n) != 0) {
        ours_destroy(o);
        return NULL;
    }
    o->grid = make_mesh(&o->rain.grid, &e);
    o->torus = o->grid ? make_mesh(&o->rain.torus, &e) : NULL;
    if (!o->grid || !o->torus) {
        snprintf(err, n, "mesh: %s", e.message);
        ours_destroy(o);
        return NULL;
    }
    uint32_t cells = B3B_RAIN_GRID * B3B_RAIN_GRID;
    o->max_bodies = cells + HUMANS * B3B_BONES + 64;
    ls_world_def wd =
        world_def(s, opt, o->max_bodies, o->max_bodies + cells, HUMANS * (B3B_BONES - 1) + 64);
    o->w = ls_world_create(&wd, &e);
    o->human_bodies = calloc(HUMANS, sizeof *o->human_bodies);
    o->human_joints = calloc(HUMANS, sizeof *o->human_joints);
    if (!o->w || !o->human_bodies || !o->human_joints) {
        snprintf(err, n, "world: %s", o->w ? "out of memory" : e.message);
        ours_destroy(o);
        return NULL;
    }
    // One static body per cell carrying the grid mesh and the torus mesh.
    float span = (float)(B3B_RAIN_GRID * B3B_RAIN_CELL),
          x = -0.5f * span + 0.5f * (float)B3B_RAIN_CELL;
    for (int i = 0; i < B3B_RAIN_GRID; i++, x += (float)B3B_RAIN_CELL) {
        float z = -0.5f * span + 0.5f * (float)B3B_RAIN_CELL;
        for (int j = 0; j < B3B_RAIN_GRID; j++, z += (float)B3B_RAIN_CELL) {
            ls_shape_def sh[2] = {shape_def(), shape_def()};
            sh[0].type = sh[1].type = LS_SHAPE_MESH;
            sh[0].mesh = o->grid, sh[1].mesh = o->torus;
            ls_body_def bd = ls_default_body_def();
            bd.type = LS_BODY_STATIC;
            bd.position = v3(x, 0, z);
            bd.shapes = sh, bd.shape_count = 2;
            if (ls_body_create(o->w, &bd, &e).index1 == 0) {
                snprintf(err, n, "cell body: %s", e.message);
                ours_destroy(o);
                return NULL;
            }
        }
    }
    return o;
}

static void rain_hook(ours *o, uint32_t index)
{
    int replace = 0, column = b3b_rain_tick(&o->rs, index, &replace);
    if (column < 0) {
        return;
    }
    for (int row = 0; row < B3B_RAIN_GRID; row++) {
        if (replace) {
            destroy_group(o, row * B3B_RAIN_GRID + column);
        }
        create_group(o, row, column);
    }
}

// ---- the engine interface -------------------------------------------------------------

static void *ours_create(const b3b_scene *s, const b3b_opts *opt, char *err, size_t n)
{
    ours *o = calloc(1, sizeof *o);
    if (!o) {
        snprintf(err, n, "out of memory");
        return NULL;
    }
    o->s = s;
    o->debug = getenv("BENCH_BOX3D_DEBUG") != NULL;
    const char *friction = getenv("BENCH_BOX3D_CONE_FRICTION");
    o->cone_friction = !(friction && strcmp(friction, "0") == 0);
    return s->rain ? create_rain(o, s, opt, err, n) : create_described(o, s, opt, err, n);
}

static void ours_step(void *h, uint32_t index)
{
    ours *o = h;
    if (o->s->rain) {
        rain_hook(o, index);
    }
    ls_world_step(o->w);
    if (index > 0 && getenv("BENCH_BOX3D_PROFILE")) { // the timed steps (1..N-1)
        ls_profile p = ls_world_profile(o->w), *t = &o->profile;
        uint64_t *sum[] = {&t->step,      &t->proxies,     &t->vehicles, &t->pairs,
                           &t->narrow,    &t->contacts,    &t->wake,     &t->prepare,
                           &t->substeps,  &t->restitution, &t->finish,   &t->continuous,
                           &t->particles, &t->sleep};
        const uint64_t add[] = {p.step,     p.proxies,    p.vehicles,  p.pairs,    p.narrow,
                                p.contacts, p.wake,       p.prepare,   p.substeps, p.restitution,
                                p.finish,   p.continuous, p.particles, p.sleep};
        for (size_t k = 0; k < sizeof add / sizeof add[0]; k++) {
            *sum[k] += add[k];
        }
        o->profiled++;
    }
    o->capacity_steps += ls_world_info(o->w).capacity_exceeded;
    if (o->debug && ls_world_info(o->w).overflow_count > o->overflows_seen) {
        ls_step_info info = ls_world_info(o->w);
        o->overflows_seen = info.overflow_count;
        uint64_t u = ls_body_is_valid(o->w, info.overflow_body)
                         ? ls_body_user_data(o->w, info.overflow_body)
                         : 0;
        printf("step %u: overflow %u (first: body %u, human %llu bone %llu, max_pen %.4f)\n", index,
               info.overflow_count, info.overflow_body.index1,
               (unsigned long long)(u ? (u - 1) / 16 : 0),
               (unsigned long long)(u ? (u - 1) % 16 : 99), dfx(info.max_penetration));
    }
    if (o->debug) { // new touching pairs: human.bone (0 = static)
        ls_contact_events ev = ls_world_contact_events(o->w);
        for (uint32_t i = 0; i < ev.begin_count; i++) {
            uint64_t a = ls_body_user_data(o->w, ev.begin[i].a);
            uint64_t b = ls_body_user_data(o->w, ev.begin[i].b);
            printf("step %u: contact %llu.%llu - %llu.%llu (max_pen %.4f)\n", index,
                   (unsigned long long)(a ? (a - 1) / 16 : 0),
                   (unsigned long long)(a ? (a - 1) % 16 : 99),
                   (unsigned long long)(b ? (b - 1) / 16 : 0),
                   (unsigned long long)(b ? (b - 1) % 16 : 99),
                   dfx(ls_world_info(o->w).max_penetration));
        }
    }
}

static uint32_t ours_bodies(void *h, b3b_state *out, uint32_t max)
{
    ours *o = h;
    uint32_t total = ls_world_body_count(o->w), found = 0, n = 0;
    for (uint32_t i = 0; i < o->max_bodies && found < total; i++) {
        ls_body_id id = ls_world_body_at(o->w, i);
        if (id.index1 == 0) {
            continue;
        }
        found++;
        if (ls_body_type_of(o->w, id) != LS_BODY_DYNAMIC) {
            continue;
        }
        if (out && n < max) {
            ls_vec3 p = ls_body_position(o->w, id); // centre of mass
            out[n].key = (uint64_t)id.index1 << 32 | id.generation;
            out[n].p[0] = dfx(p.x), out[n].p[1] = dfx(p.y), out[n].p[2] = dfx(p.z);
        }
        n++;
    }
    return out && n > max ? max : n;
}

static void ours_tops(void *h, double *pos)
{
    ours *o = h;
    for (uint32_t i = 0; i < o->s->body_count; i++) {
        if (o->s->bodies[i].top) {
            ls_vec3 p = ls_body_position(o->w, o->ids[i]);
            *pos++ = dfx(p.x), *pos++ = dfx(p.y), *pos++ = dfx(p.z);
        }
    }
}

static double ours_max_penetration(void *h)
{
    return dfx(ls_world_info(((ours *)h)->w).max_penetration);
}

static uint32_t ours_body_count(void *h)
{
    return ls_world_body_count(((ours *)h)->w);
}

static uint32_t ours_joint_count(void *h)
{
    return ls_world_joint_count(((ours *)h)->w);
}

static const char *ours_warning(void *h)
{
    ours *o = h;
    ls_step_info info = ls_world_info(o->w);
    if (o->warn[0]) {
        return o->warn;
    }
    if (o->capacity_steps) {
        snprintf(o->warn, sizeof o->warn, "a pair or contact buffer was full in %u steps",
                 o->capacity_steps);
        return o->warn;
    }
    if (info.overflow_count) {
        uint64_t ud = ls_body_is_valid(o->w, info.overflow_body)
                          ? ls_body_user_data(o->w, info.overflow_body)
                          : 0; // destroyed since (rain removes groups)
        snprintf(o->warn, sizeof o->warn,
                 "%u overflows (saturation, range or contacts deeper than 0.1 m), first at tick %u "
                 "(body %u, user data %llu)",
                 info.overflow_count, info.overflow_tick, info.overflow_body.index1,
                 (unsigned long long)ud);
        return o->warn;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    static const b3b_engine e = {"ours",
                                 0, // --substeps default: no override (our world default)
                                 ours_create,
                                 ours_step,
                                 ours_bodies,
                                 ours_tops,
                                 ours_max_penetration,
                                 ours_body_count,
                                 ours_joint_count,
                                 ours_warning,
                                 ours_destroy};
    return b3b_main(&e, argc, argv);
}
