// SPDX-License-Identifier: MIT
// build/bench_ode: ODE (Debian libode-dev 0.16, double precision) behind the
// bench interface: dWorldQuickStep, a hash space and dCollide contacts (at most
// 4 per pair), built from OUR scene file so bodies, sizes, masses, dt, gravity
// and iteration count are identical. Hulls are dCreateConvex over our faces and
// planes, meshes dCreateTriMesh (OPCODE), compound bodies several offset geoms
// on one body placed at the centre of mass (ODE requires it there). A tick =
// collide + quick step + contact cleanup, all timed. Benchmark only.
#include "bench.h"

#include <math.h>
#include <ode/ode.h>
#include <stdlib.h>

/// Contacts per pair, as our manifolds (LS_MANIFOLD_MAX = 4).
#define ODE_MAX_CONTACTS 4

typedef struct ode_world {
    dWorldID world;
    dSpaceID space;
    dJointGroupID contacts;
    dBodyID *dynamic;  // dynamic bodies in file order
    uint32_t ndynamic; // count
    dReal dt;
    dReal bounce_vel;       // restitution threshold
    double max_pen;         // deepest contact (measure_callback)
    uint32_t touching;      // pairs in contact (measure_callback)
    const bench_body *src;  // scene bodies (geom data points at their bench_shape)
    dTriMeshDataID *meshes; // trimesh data, freed after the space (which frees the geoms)
    dReal **mesh_vertices; // their vertices (dVector3 layout, as dGeomTriMeshDataBuildSimple reads)
    uint32_t nmeshes;
} ode_world;

static void near_callback(void *data, dGeomID g1, dGeomID g2)
{
    ode_world *w = data;
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
    if (!dGeomGetBody(g1) && !dGeomGetBody(g2)) {
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

static void add_body(ode_world *w, const bench_scene *s, const bench_body *b)
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
    dWorldSetQuickStepNumIterations(w->world, s->velocity_iterations); // 8
    dWorldSetERP(w->world, s->baumgarte);                              // 0.2 = our baumgarte
    dWorldSetCFM(w->world, 1e-5);                                      // ODE's default softness
    dWorldSetContactSurfaceLayer(w->world, s->linear_slop);            // 0.005 m allowed depth
    dWorldSetAutoDisableFlag(w->world, 1);
    dWorldSetAutoDisableLinearThreshold(w->world, s->sleep_linear);
    dWorldSetAutoDisableAngularThreshold(w->world, s->sleep_angular);
    dWorldSetAutoDisableTime(w->world, s->sleep_time);
    dWorldSetAutoDisableSteps(w->world, (int)lround(s->sleep_time / s->dt));
    for (uint32_t i = 0; i < s->count; i++) {
        add_body(w, s, &s->bodies[i]);
    }
    return w;
}

static void ode_step(void *h)
{
    ode_world *w = h;
    dSpaceCollide(w->space, w, near_callback);
    dWorldQuickStep(w->world, w->dt);
    dJointGroupEmpty(w->contacts);
}

static void ode_positions(void *h, double *xyz)
{
    ode_world *w = h;
    for (uint32_t i = 0; i < w->ndynamic; i++) {
        const dReal *p = dBodyGetPosition(w->dynamic[i]);
        *xyz++ = p[0], *xyz++ = p[1], *xyz++ = p[2];
    }
}

static bench_stats ode_stats(void *h)
{
    ode_world *w = h;
    w->max_pen = 0;
    w->touching = 0;
    dSpaceCollide(w->space, w, measure_callback);
    bench_stats st = {w->max_pen, 0, w->touching};
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
    free(w);
}

int main(int argc, char **argv)
{
    static const bench_engine e = {"ode",    "0.16.2",      "double",  ode_create,
                                   ode_step, ode_positions, ode_stats, ode_destroy};
    return bench_engine_main(&e, argc, argv);
}
