// SPDX-License-Identifier: MIT
// build/bench_ode: ODE (Debian libode-dev 0.16, double precision) behind the
// bench interface: dWorldQuickStep, a hash space and dCollide contacts (at most
// 4 per pair), built from OUR scene file so bodies, sizes, masses, dt, gravity
// and iteration count are identical. Hulls are dCreateConvex over our faces and
// planes, meshes dCreateTriMesh (OPCODE), compound bodies several offset geoms
// on one body placed at the centre of mass (ODE requires it there). Joints:
// dJointCreateBall/Hinge/Fixed/Slider/DBall, cone-twist as a ball joint plus an
// Euler AMotor whose stops bound the two swing angles and the twist (a square
// "cone": ODE has no cone limit), hinge/slider/distance springs as explicit
// forces before each step (ODE has no joint springs; tools/bench/README.md).
// A tick = springs + collide + quick step + contact cleanup + joint breaking,
// all timed. Benchmark only.
#include "bench.h"

#include <math.h>
#include <ode/ode.h>
#include <stdlib.h>

/// Contacts per pair, as our manifolds (LS_MANIFOLD_MAX = 4).
#define ODE_MAX_CONTACTS 4
/// dJointGetHingeAngle (and so its stops and motor velocity) per our angle
/// (B relative to A, right-handed about the axis): -1, but +1 when A is static
/// (ODE then attaches B as its body 1 and reverses the joint);
/// dJointGetSliderPosition per our position along the axis: -1 either way.
/// Measured with small two-body scenes (limits and motors, both cases).
#define ODE_SIGN(o)     ((o)->a ? -1.0 : 1.0)
#define ODE_SLIDER_SIGN (-1.0)
/// The cone's AMotor third Euler angle per our twist.
#define ODE_TWIST_SIGN(o) ((o)->a ? -1.0 : 1.0)

typedef struct ode_joint {
    const bench_joint *src;
    dJointID j;        // the joint (cone: the ball joint)
    dJointID amotor;   // cone: its Euler AMotor
    dBodyID a, b;      // NULL for a static body
    dJointFeedback fb; // for breaking
    int broken;
} ode_joint;

typedef struct ode_world {
    dWorldID world;
    dSpaceID space;
    dJointGroupID contacts;
    dBodyID *dynamic;  // dynamic bodies in file order
    uint32_t ndynamic; // count
    dBodyID *body_of;  // every body in file order (NULL: static)
    const bench_scene *scene;
    ode_joint *joints; // scene joints in file order
    uint32_t broken;   // joints broken so far
    dReal dt;
    dReal bounce_vel;       // restitution threshold
    double max_pen;         // deepest contact (measure_callback)
    uint32_t touching;      // pairs in contact (measure_callback)
    const bench_body *src;  // scene bodies (geom data points at their bench_shape)
    dTriMeshDataID *meshes; // trimesh data, freed after the space (which frees the geoms)
    dReal **mesh_vertices; // their vertices (dVector3 layout, as dGeomTriMeshDataBuildSimple reads)
    uint32_t nmeshes;
} ode_world;

// Our pair rules: filters both ways, no contacts between bodies a joint keeps apart.
static int pair_allowed(const ode_world *w, dGeomID g1, dGeomID g2)
{
    const bench_shape *s1 = dGeomGetData(g1), *s2 = dGeomGetData(g2);
    return (s1->category & s2->mask) && (s2->category & s1->mask) &&
           !bench_no_collide(w->scene, s1->body, s2->body);
}

static void near_callback(void *data, dGeomID g1, dGeomID g2)
{
    ode_world *w = data;
    if (!pair_allowed(w, g1, g2)) {
        return;
    }
    dBodyID b1 = dGeomGetBody(g1), b2 = dGeomGetBody(g2);
    // Static-static and asleep-asleep/static pairs are skipped, as in our engine.
    int awake1 = b1 && dBodyIsEnabled(b1), awake2 = b2 && dBodyIsEnabled(b2);
    if (!awake1 && !awake2) {
        return;
    }
    dContact c[ODE_MAX_CONTACTS];
    int n = dCollide(g1, g2, ODE_MAX_CONTACTS, &c[0].geom, sizeof c[0]);
    if (n <= 0) {
        return;
    }
    const bench_shape *s1 = dGeomGetData(g1), *s2 = dGeomGetData(g2);
    double mu = sqrt(s1->friction * s2->friction);
    double e = s1->restitution > s2->restitution ? s1->restitution : s2->restitution;
    for (int i = 0; i < n; i++) {
        c[i].surface.mode = dContactApprox1 | (e > 0 ? dContactBounce : 0);
        c[i].surface.mu = mu;
        c[i].surface.bounce = e;
        c[i].surface.bounce_vel = w->bounce_vel;
        dJointID j = dJointCreateContact(w->world, w->contacts, &c[i]);
        dJointAttach(j, b1, b2);
    }
}

// Measurement only (not timed): deepest penetration over every pair, asleep or
// not, without creating joints, so a world that fell asleep still reports it.
static void measure_callback(void *data, dGeomID g1, dGeomID g2)
{
    ode_world *w = data;
    if ((!dGeomGetBody(g1) && !dGeomGetBody(g2)) || !pair_allowed(w, g1, g2)) {
        return;
    }
    dContactGeom c[ODE_MAX_CONTACTS];
    int n = dCollide(g1, g2, ODE_MAX_CONTACTS, c, sizeof c[0]);
    w->touching += n > 0;
    for (int i = 0; i < n; i++) {
        if (c[i].depth > w->max_pen) {
            w->max_pen = c[i].depth;
        }
    }
}

// A trimesh geom over the shape's triangles (ODE keeps pointers: the vertex
// copy lives in the world, the indices in the scene; dTriIndex is 32-bit).
static dGeomID make_trimesh(ode_world *w, const bench_shape *sh)
{
    dReal *v = malloc(4 * (size_t)sh->vertex_count * sizeof *v);
    for (uint32_t i = 0; i < sh->vertex_count; i++) {
        v[4 * i] = sh->vertices[3 * i], v[4 * i + 1] = sh->vertices[3 * i + 1];
        v[4 * i + 2] = sh->vertices[3 * i + 2], v[4 * i + 3] = 0;
    }
    dTriMeshDataID data = dGeomTriMeshDataCreate();
    dGeomTriMeshDataBuildSimple(data, v, (int)sh->vertex_count, (const dTriIndex *)sh->triangles,
                                3 * (int)sh->triangle_count);
    // Edge and face-angle data: convex-trimesh (libccd) requires the face angles.
    dGeomTriMeshDataPreprocess2(data,
                                (1U << dTRIDATAPREPROCESS_BUILD_CONCAVE_EDGES) |
                                    (1U << dTRIDATAPREPROCESS_BUILD_FACE_ANGLES),
                                NULL);
    w->meshes[w->nmeshes] = data;
    w->mesh_vertices[w->nmeshes++] = v;
    return dCreateTriMesh(w->space, data, NULL, NULL, NULL);
}

static dGeomID make_geom(ode_world *w, const bench_shape *sh)
{
    switch (sh->kind) {
    case BENCH_SPHERE:
        return dCreateSphere(w->space, sh->radius);
    case BENCH_BOX:
        return dCreateBox(w->space, 2 * sh->half[0], 2 * sh->half[1], 2 * sh->half[2]);
    case BENCH_CAPSULE: // ODE capsules lie along local Z; ours along Y (offset below)
        return dCreateCapsule(w->space, sh->radius, 2 * sh->half_height);
    case BENCH_HULL: // our faces and planes as they are (ODE keeps the scene's arrays)
        return dCreateConvex(w->space, sh->planes, sh->face_count, sh->vertices, sh->vertex_count,
                             sh->polygons);
    case BENCH_MESH:
        return make_trimesh(w, sh);
    default:
        return dCreatePlane(w->space, sh->normal[0], sh->normal[1], sh->normal[2], sh->plane_d);
    }
}

// Shape rotation in ODE's convention (w first); a capsule turns ODE's Z axis onto our Y.
static void ode_quat(const bench_shape *sh, const double q_in[4], dQuaternion q)
{
    double r[4] = {q_in[0], q_in[1], q_in[2], q_in[3]};
    if (sh->kind == BENCH_CAPSULE) {
        const double z_to_y[4] = {-0.70710678118654752, 0, 0,
                                  0.70710678118654752}; // -90 deg about X
        bench_quat_mul(q_in, z_to_y, r);
    }
    q[0] = r[3], q[1] = r[0], q[2] = r[1], q[3] = r[2];
}

static void add_body(ode_world *w, const bench_scene *s, const bench_body *b, uint32_t index)
{
    if (b->type != BENCH_DYNAMIC) { // static: geoms at their world pose, no body
        for (uint32_t k = 0; k < b->shape_count; k++) {
            const bench_shape *sh = &b->shapes[k];
            dGeomID g = make_geom(w, sh);
            dGeomSetData(g, (void *)sh);
            if (sh->kind == BENCH_PLANE) {
                continue; // non-placeable
            }
            double p[3], q[4];
            dQuaternion oq;
            bench_shape_world_pose(b, sh, p, q);
            ode_quat(sh, q, oq);
            dGeomSetPosition(g, p[0], p[1], p[2]);
            dGeomSetQuaternion(g, oq);
        }
        return;
    }
    // The body sits at the centre of mass with principal axes (ODE requires the
    // centre of mass at the body origin); shapes are offset geoms.
    dBodyID body = dBodyCreate(w->world);
    dMass m;
    dMassSetZero(&m);
    dMassSetParameters(&m, b->mass, 0, 0, 0, b->inertia[0], b->inertia[1], b->inertia[2], 0, 0, 0);
    dBodySetMass(body, &m);
    dQuaternion q = {b->quat[3], b->quat[0], b->quat[1], b->quat[2]};
    dBodySetPosition(body, b->pos[0], b->pos[1], b->pos[2]);
    dBodySetQuaternion(body, q);
    dBodySetLinearVel(body, b->vel[0], b->vel[1], b->vel[2]);
    dBodySetAngularVel(body, b->angvel[0], b->angvel[1], b->angvel[2]);
    dBodySetAutoDisableFlag(body, b->allow_sleep);
    if (b->lin_damp > 0 || b->ang_damp > 0) { // ours: fraction per second; ODE: per step
        dBodySetLinearDamping(body, b->lin_damp * s->dt);
        dBodySetAngularDamping(body, b->ang_damp * s->dt);
    }
    for (uint32_t k = 0; k < b->shape_count; k++) {
        const bench_shape *sh = &b->shapes[k];
        dGeomID g = make_geom(w, sh);
        dGeomSetData(g, (void *)sh);
        dGeomSetBody(g, body);
        if (!sh->identity || sh->kind == BENCH_CAPSULE) {
            dQuaternion oq;
            ode_quat(sh, sh->quat, oq);
            dGeomSetOffsetPosition(g, sh->pos[0], sh->pos[1], sh->pos[2]);
            dGeomSetOffsetQuaternion(g, oq);
        }
    }
    w->dynamic[w->ndynamic++] = body;
    w->body_of[index] = body;
}

// ---- joints ----------------------------------------------------------------

static void add_joint(ode_world *w, const bench_joint *src, ode_joint *o)
{
    const double *p = src->anchor, *ax = src->axis;
    o->src = src;
    o->a = w->body_of[src->a];
    o->b = w->body_of[src->b];
    switch (src->kind) {
    case BENCH_JOINT_BALL:
    case BENCH_JOINT_CONE:
        o->j = dJointCreateBall(w->world, 0);
        dJointAttach(o->j, o->a, o->b);
        dJointSetBallAnchor(o->j, p[0], p[1], p[2]);
        if (src->kind == BENCH_JOINT_CONE) {
            // Euler AMotor: axis 0 on body 1 across the twist axis, axis 2 on
            // body 2 along it; stops: both swing angles within the cone (the
            // middle one below 85 degrees: ODE needs it below 90), the twist
            // within its range. Body 1 is A, or B when A is static (ODE's own
            // reversal of a joint attached to the world breaks the AMotor).
            double m[3][3];
            bench_basis(ax, 0, m);
            o->amotor = dJointCreateAMotor(w->world, 0);
            dJointAttach(o->amotor, o->a ? o->a : o->b, o->a ? o->b : 0);
            dJointSetAMotorMode(o->amotor, dAMotorEuler);
            dJointSetAMotorAxis(o->amotor, 0, 1, m[0][1], m[1][1], m[2][1]);
            dJointSetAMotorAxis(o->amotor, 2, 2, ax[0], ax[1], ax[2]);
            double middle = src->cone < 1.48 ? src->cone : 1.48;
            dJointSetAMotorParam(o->amotor, dParamLoStop, -src->cone);
            dJointSetAMotorParam(o->amotor, dParamHiStop, src->cone);
            dJointSetAMotorParam(o->amotor, dParamLoStop2, -middle);
            dJointSetAMotorParam(o->amotor, dParamHiStop2, middle);
            if (src->enable_twist) { // ODE's third Euler angle is -our twist either way
                dJointSetAMotorParam(o->amotor, dParamLoStop3,
                                     ODE_TWIST_SIGN(o) > 0 ? src->twist_lower : -src->twist_upper);
                dJointSetAMotorParam(o->amotor, dParamHiStop3,
                                     ODE_TWIST_SIGN(o) > 0 ? src->twist_upper : -src->twist_lower);
            }
            if (src->enable_motor) { // joint friction: speed 0, torque max_motor per axis
                dJointSetAMotorParam(o->amotor, dParamVel, 0);
                dJointSetAMotorParam(o->amotor, dParamVel2, 0);
                dJointSetAMotorParam(o->amotor, dParamVel3, 0);
                dJointSetAMotorParam(o->amotor, dParamFMax, src->max_motor);
                dJointSetAMotorParam(o->amotor, dParamFMax2, src->max_motor);
                dJointSetAMotorParam(o->amotor, dParamFMax3, src->max_motor);
            }
        }
        break;
    case BENCH_JOINT_HINGE:
        o->j = dJointCreateHinge(w->world, 0);
        dJointAttach(o->j, o->a, o->b);
        dJointSetHingeAnchor(o->j, p[0], p[1], p[2]);
        dJointSetHingeAxis(o->j, ax[0], ax[1], ax[2]);
        if (src->enable_limit) {
            double lo = ODE_SIGN(o) > 0 ? src->lower : -src->upper;
            double hi = ODE_SIGN(o) > 0 ? src->upper : -src->lower;
            dJointSetHingeParam(o->j, dParamLoStop, lo);
            dJointSetHingeParam(o->j, dParamHiStop, hi);
        }
        if (src->enable_motor) {
            dJointSetHingeParam(o->j, dParamVel, ODE_SIGN(o) * src->motor_speed);
            dJointSetHingeParam(o->j, dParamFMax, src->max_motor);
        }
        break;
    case BENCH_JOINT_FIXED:
        o->j = dJointCreateFixed(w->world, 0);
        dJointAttach(o->j, o->a, o->b);
        dJointSetFixed(o->j);
        break;
    case BENCH_JOINT_PRISMATIC:
        o->j = dJointCreateSlider(w->world, 0);
        dJointAttach(o->j, o->a, o->b);
        dJointSetSliderAxis(o->j, ax[0], ax[1], ax[2]);
        if (src->enable_limit) {
            double lo = ODE_SLIDER_SIGN > 0 ? src->lower : -src->upper;
            double hi = ODE_SLIDER_SIGN > 0 ? src->upper : -src->lower;
            dJointSetSliderParam(o->j, dParamLoStop, lo);
            dJointSetSliderParam(o->j, dParamHiStop, hi);
        }
        if (src->enable_motor) {
            dJointSetSliderParam(o->j, dParamVel, ODE_SLIDER_SIGN * src->motor_speed);
            dJointSetSliderParam(o->j, dParamFMax, src->max_motor);
        }
        break;
    default: // distance: a DBall (rigid, or switched on at a violated bound)
        if (src->enable_spring && src->min_length == src->rest_length &&
            src->max_length == src->rest_length) {
            return; // a pure spring: forces only
        }
        o->j = dJointCreateDBall(w->world, 0);
        dJointAttach(o->j, o->a, o->b);
        dJointSetDBallAnchor1(o->j, p[0], p[1], p[2]);
        dJointSetDBallAnchor2(o->j, src->anchor_b[0], src->anchor_b[1], src->anchor_b[2]);
        dJointSetDBallDistance(o->j, src->rest_length);
        if (src->min_length < src->max_length) {
            dJointDisable(o->j);
        }
        break;
    }
    if (src->break_force > 0 || src->break_torque > 0) {
        dJointSetFeedback(o->j, &o->fb);
    }
}

// World point and velocity of a joint's local anchor on body b (NULL: static).
static void anchor_state(const ode_world *w, const ode_joint *o, int which, double p[3],
                         double v[3])
{
    dBodyID body = which ? o->b : o->a;
    const double *local = which ? o->src->local_b : o->src->local_a;
    if (!body) {
        const double *wp = which ? o->src->anchor_b : o->src->anchor;
        p[0] = wp[0], p[1] = wp[1], p[2] = wp[2], v[0] = v[1] = v[2] = 0;
        return;
    }
    dVector3 r, rv;
    dBodyGetRelPointPos(body, local[0], local[1], local[2], r);
    dBodyGetRelPointVel(body, local[0], local[1], local[2], rv);
    p[0] = r[0], p[1] = r[1], p[2] = r[2], v[0] = rv[0], v[1] = rv[1], v[2] = rv[2];
    (void)w;
}

static void add_pair_force(const ode_joint *o, const double f[3], const double pa[3],
                           const double pb[3])
{
    if (o->b) {
        dBodyAddForceAtPos(o->b, f[0], f[1], f[2], pb[0], pb[1], pb[2]);
    }
    if (o->a) {
        dBodyAddForceAtPos(o->a, -f[0], -f[1], -f[2], pa[0], pa[1], pa[2]);
    }
}

// Springs (explicit: -k x - c v with k, c from hertz and damping ratio and the
// pair's effective mass or inertia) and the distance joints' bounds.
static void joints_before_step(ode_world *w)
{
    for (uint32_t k = 0; k < w->scene->joint_count; k++) {
        ode_joint *o = &w->joints[k];
        const bench_joint *s = o->src;
        if (o->broken || (o->a && !dBodyIsEnabled(o->a) && (!o->b || !dBodyIsEnabled(o->b))) ||
            (!o->a && o->b && !dBodyIsEnabled(o->b))) {
            continue;
        }
        double om = 2 * 3.14159265358979323846 * s->spring_hertz;
        if (s->kind == BENCH_JOINT_HINGE && s->enable_spring) {
            double kk = s->eff_inertia * om * om, c = 2 * s->spring_damping * s->eff_inertia * om;
            double th = ODE_SIGN(o) * dJointGetHingeAngle(o->j);
            double rate = ODE_SIGN(o) * dJointGetHingeAngleRate(o->j);
            double t = -kk * th - c * rate;
            dVector3 ax;
            dJointGetHingeAxis(o->j, ax);
            if (o->b) {
                dBodyAddTorque(o->b, t * ax[0], t * ax[1], t * ax[2]);
            }
            if (o->a) {
                dBodyAddTorque(o->a, -t * ax[0], -t * ax[1], -t * ax[2]);
            }
        } else if (s->kind == BENCH_JOINT_PRISMATIC && s->enable_spring) {
            double kk = s->eff_mass * om * om, c = 2 * s->spring_damping * s->eff_mass * om;
            double x = ODE_SLIDER_SIGN * dJointGetSliderPosition(o->j);
            double v = ODE_SLIDER_SIGN * dJointGetSliderPositionRate(o->j);
            double f = -kk * x - c * v;
            dVector3 ax;
            dJointGetSliderAxis(o->j, ax);
            double fv[3] = {f * ax[0], f * ax[1], f * ax[2]}, pa[3], pb[3], va[3], vb[3];
            anchor_state(w, o, 0, pa, va);
            anchor_state(w, o, 1, pb, vb);
            add_pair_force(o, fv, pa, pb);
        } else if (s->kind == BENCH_JOINT_DISTANCE) {
            double pa[3], pb[3], va[3], vb[3];
            anchor_state(w, o, 0, pa, va);
            anchor_state(w, o, 1, pb, vb);
            double dv[3] = {pb[0] - pa[0], pb[1] - pa[1], pb[2] - pa[2]};
            double len = sqrt(dv[0] * dv[0] + dv[1] * dv[1] + dv[2] * dv[2]);
            double n[3] = {len > 0 ? dv[0] / len : 0, len > 0 ? dv[1] / len : 1,
                           len > 0 ? dv[2] / len : 0};
            if (s->enable_spring) {
                double kk = s->eff_mass * om * om, c = 2 * s->spring_damping * s->eff_mass * om;
                double rate =
                    n[0] * (vb[0] - va[0]) + n[1] * (vb[1] - va[1]) + n[2] * (vb[2] - va[2]);
                double f = -kk * (len - s->rest_length) - c * rate;
                double fv[3] = {f * n[0], f * n[1], f * n[2]};
                add_pair_force(o, fv, pa, pb);
            }
            if (o->j && s->min_length < s->max_length) { // a bound only while violated
                if (len > s->max_length || len < s->min_length) {
                    dJointSetDBallDistance(o->j,
                                           len > s->max_length ? s->max_length : s->min_length);
                    dJointEnable(o->j);
                } else {
                    dJointDisable(o->j);
                }
            }
        }
    }
}

// Joints whose force (N) or torque (N m) of the last step exceeds their
// threshold are switched off for good.
static void joints_after_step(ode_world *w)
{
    for (uint32_t k = 0; k < w->scene->joint_count; k++) {
        ode_joint *o = &w->joints[k];
        const bench_joint *s = o->src;
        if (o->broken || !o->j || (s->break_force <= 0 && s->break_torque <= 0)) {
            continue;
        }
        const dJointFeedback *f = &o->fb;
        double f1 = sqrt(f->f1[0] * f->f1[0] + f->f1[1] * f->f1[1] + f->f1[2] * f->f1[2]);
        double f2 = sqrt(f->f2[0] * f->f2[0] + f->f2[1] * f->f2[1] + f->f2[2] * f->f2[2]);
        double t1 = sqrt(f->t1[0] * f->t1[0] + f->t1[1] * f->t1[1] + f->t1[2] * f->t1[2]);
        double t2 = sqrt(f->t2[0] * f->t2[0] + f->t2[1] * f->t2[1] + f->t2[2] * f->t2[2]);
        double force = f1 > f2 ? f1 : f2, torque = t1 > t2 ? t1 : t2;
        if ((s->break_force > 0 && force > s->break_force) ||
            (s->break_torque > 0 && torque > s->break_torque)) {
            dJointDisable(o->j);
            if (o->amotor) {
                dJointDisable(o->amotor);
            }
            o->broken = 1;
            w->broken++;
        }
    }
}

static void *ode_create(const bench_scene *s, char *err, size_t err_size)
{
    static int initialised;
    if (!initialised) {
        dInitODE2(0);
        initialised = 1;
    }
    (void)err, (void)err_size;
    ode_world *w = calloc(1, sizeof *w);
    w->dynamic = calloc(s->dynamic_count ? s->dynamic_count : 1, sizeof *w->dynamic);
    w->body_of = calloc(s->count ? s->count : 1, sizeof *w->body_of);
    w->joints = calloc(s->joint_count ? s->joint_count : 1, sizeof *w->joints);
    w->scene = s;
    uint32_t nmesh = 1;
    for (uint32_t i = 0; i < s->count; i++) {
        for (uint32_t k = 0; k < s->bodies[i].shape_count; k++) {
            nmesh += s->bodies[i].shapes[k].kind == BENCH_MESH;
        }
    }
    w->meshes = calloc(nmesh, sizeof *w->meshes);
    w->mesh_vertices = calloc(nmesh, sizeof *w->mesh_vertices);
    w->world = dWorldCreate();
    w->space = dHashSpaceCreate(0);
    dHashSpaceSetLevels(w->space, -2, 4); // cells 0.25 .. 16 m: our sizes
    w->contacts = dJointGroupCreate(0);
    w->dt = s->dt;
    w->bounce_vel = s->restitution_thresh;
    w->src = s->bodies;
    dWorldSetGravity(w->world, s->gravity[0], s->gravity[1], s->gravity[2]);
    dWorldSetQuickStepNumIterations(w->world, s->peer_iterations); // substeps x (solve + relax)
    dWorldSetERP(w->world, s->peer_erp);                           // 0.2
    dWorldSetCFM(w->world, 1e-5);                                  // ODE's default softness
    dWorldSetContactSurfaceLayer(w->world, s->linear_slop);        // 0.005 m allowed depth
    dWorldSetAutoDisableFlag(w->world, 1);
    dWorldSetAutoDisableLinearThreshold(w->world, s->sleep_linear);
    dWorldSetAutoDisableAngularThreshold(w->world, s->sleep_angular);
    dWorldSetAutoDisableTime(w->world, s->sleep_time);
    dWorldSetAutoDisableSteps(w->world, (int)lround(s->sleep_time / s->dt));
    for (uint32_t i = 0; i < s->count; i++) {
        add_body(w, s, &s->bodies[i], i);
    }
    for (uint32_t k = 0; k < s->joint_count; k++) {
        add_joint(w, &s->joints[k], &w->joints[k]);
    }
    return w;
}

static void ode_step(void *h)
{
    ode_world *w = h;
    if (w->scene->joint_count) {
        joints_before_step(w);
    }
    dSpaceCollide(w->space, w, near_callback);
    dWorldQuickStep(w->world, w->dt);
    dJointGroupEmpty(w->contacts);
    if (w->scene->joint_count) {
        joints_after_step(w);
    }
}

static void ode_poses(void *h, double *pose)
{
    ode_world *w = h;
    for (uint32_t i = 0; i < w->scene->count; i++, pose += 7) {
        dBodyID b = w->body_of[i];
        if (!b) { // static: where the scene put it
            const bench_body *sb = &w->scene->bodies[i];
            pose[0] = sb->pos[0], pose[1] = sb->pos[1], pose[2] = sb->pos[2];
            pose[3] = sb->quat[0], pose[4] = sb->quat[1], pose[5] = sb->quat[2];
            pose[6] = sb->quat[3];
            continue;
        }
        const dReal *p = dBodyGetPosition(b), *q = dBodyGetQuaternion(b); // q: w x y z
        pose[0] = p[0], pose[1] = p[1], pose[2] = p[2];
        pose[3] = q[1], pose[4] = q[2], pose[5] = q[3], pose[6] = q[0];
    }
}

static bench_stats ode_stats(void *h)
{
    ode_world *w = h;
    w->max_pen = 0;
    w->touching = 0;
    dSpaceCollide(w->space, w, measure_callback);
    bench_stats st = {w->max_pen, 0, w->touching, w->broken};
    for (uint32_t i = 0; i < w->ndynamic; i++) {
        st.asleep += !dBodyIsEnabled(w->dynamic[i]);
    }
    return st;
}

static void ode_destroy(void *h)
{
    ode_world *w = h;
    dJointGroupDestroy(w->contacts);
    dSpaceDestroy(w->space); // destroys its geoms (cleanup mode on by default)
    dWorldDestroy(w->world); // destroys its bodies
    for (uint32_t i = 0; i < w->nmeshes; i++) {
        dGeomTriMeshDataDestroy(w->meshes[i]);
        free(w->mesh_vertices[i]);
    }
    free(w->meshes);
    free(w->mesh_vertices);
    free(w->dynamic);
    free(w->body_of);
    free(w->joints);
    free(w);
}

int main(int argc, char **argv)
{
    static const bench_engine e = {"ode",    "0.16.2",  "double",  1,          ode_create,
                                   ode_step, ode_poses, ode_stats, ode_destroy};
    return bench_engine_main(&e, argc, argv);
}
