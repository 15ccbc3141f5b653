// SPDX-License-Identifier: MIT
// Section 9: the rain scene's template read back from Box3D's own code, so
// that our engine builds the same humans and meshes without a copy of Box3D's
// numbers here. A throw-away Box3D world runs CreateRain (the two meshes of a
// cell) and CreateHuman (shared/human.c, with the arguments CreateGroup gives
// it: joint friction 5 N m, spring 1 Hz, damping ratio 0.7); every body,
// capsule, material, filter and joint is then read through Box3D's API.
// Linked only into the bench binaries (never into the library).
#include "box3d_bench.h"

#include "benchmarks.h"
#include "box3d/box3d.h"
#include "box3d/collision.h"
#include "box3d/math_functions.h"
#include "human.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void put(double out[3], b3Vec3 v)
{
    out[0] = v.x, out[1] = v.y, out[2] = v.z;
}

static int copy_mesh(b3b_mesh *m, const b3MeshData *d)
{
    const b3Vec3 *v = b3GetMeshVertices(d);
    const b3MeshTriangle *t = b3GetMeshTriangles(d);
    m->vertex_count = (uint32_t)d->vertexCount;
    m->triangle_count = (uint32_t)d->triangleCount;
    m->vertices = calloc((size_t)m->vertex_count * 3, sizeof *m->vertices);
    m->triangles = calloc((size_t)m->triangle_count * 3, sizeof *m->triangles);
    if (!v || !t || !m->vertices || !m->triangles) {
        return -1;
    }
    for (uint32_t i = 0; i < m->vertex_count; i++) {
        put(m->vertices + 3 * (size_t)i, v[i]);
    }
    for (uint32_t i = 0; i < m->triangle_count; i++) {
        m->triangles[3 * (size_t)i + 0] = (uint32_t)t[i].index1;
        m->triangles[3 * (size_t)i + 1] = (uint32_t)t[i].index2;
        m->triangles[3 * (size_t)i + 2] = (uint32_t)t[i].index3;
    }
    return 0;
}

typedef struct mesh_query {
    b3ShapeId shapes[8];
    int count;
} mesh_query;

static bool collect(b3ShapeId id, void *context)
{
    mesh_query *q = context;
    if (b3Shape_GetType(id) == b3_meshShape && q->count < 8) {
        q->shapes[q->count++] = id;
    }
    return true;
}

// The meshes of the first cell of Box3D's rain scene: the one with more
// triangles is the torus.
static int rain_meshes(b3b_rain_data *d)
{
    b3WorldDef wd = b3DefaultWorldDef();
    wd.workerCount = 1;
    b3WorldId w = b3CreateWorld(&wd);
    CreateRain(w);
    double o[3];
    b3b_rain_origin(0, 0, o);
    b3AABB box = {{(float)o[0] - 1, -1, (float)o[2] - 1}, {(float)o[0] + 1, 1, (float)o[2] + 1}};
    b3QueryFilter filter = b3DefaultQueryFilter();
    filter.categoryBits = B3_DEFAULT_MASK_BITS, filter.maskBits = B3_DEFAULT_MASK_BITS;
    mesh_query q = {{{0}}, 0};
    b3World_OverlapAABB(w, box, filter, collect, &q);
    int rc = -1;
    if (q.count == 2) {
        b3Mesh a = b3Shape_GetMesh(q.shapes[0]), b = b3Shape_GetMesh(q.shapes[1]);
        if (a.data->triangleCount > b.data->triangleCount) {
            b3Mesh t = a;
            a = b, b = t;
        }
        rc = copy_mesh(&d->grid, a.data) || copy_mesh(&d->torus, b.data) ? -1 : 0;
    }
    DestroyRain();
    b3DestroyWorld(w);
    return rc;
}

int b3b_rain_template(b3b_rain_data *d, char *err, size_t err_size)
{
    memset(d, 0, sizeof *d);
    if (rain_meshes(d) != 0) {
        snprintf(err, err_size, "could not read the rain meshes from Box3D");
        b3b_rain_template_free(d);
        return -1;
    }
    b3WorldDef wd = b3DefaultWorldDef();
    wd.workerCount = 1;
    b3WorldId w = b3CreateWorld(&wd);
    static Human human; // CreateHuman wants it zero-initialised
    memset(&human, 0, sizeof human);
    b3Pos origin = {0, 0, 0};
    CreateHuman(&human, w, origin, 5.0f, 1.0f, 0.7f, 1, NULL, false); // CreateGroup's arguments
    for (int i = 0; i < B3B_BONES && i < bone_count; i++) {
        b3b_bone *b = &d->bones[i];
        b3BodyId body = human.bones[i].bodyId;
        b3WorldTransform xf = b3Body_GetTransform(body);
        put(b->pos, xf.p);
        b->quat[0] = xf.q.v.x, b->quat[1] = xf.q.v.y, b->quat[2] = xf.q.v.z, b->quat[3] = xf.q.s;
        b3ShapeId shape;
        if (b3Body_GetShapes(body, &shape, 1) != 1 || b3Shape_GetType(shape) != b3_capsuleShape) {
            snprintf(err, err_size, "bone %d: expected one capsule", i);
            b3DestroyWorld(w);
            b3b_rain_template_free(d);
            return -1;
        }
        b3Capsule c = b3Shape_GetCapsule(shape);
        put(b->c1, c.center1), put(b->c2, c.center2);
        b->radius = c.radius;
        b->density = b3Shape_GetDensity(shape);
        b3SurfaceMaterial mat = b3Shape_GetSurfaceMaterial(shape);
        b->friction = mat.friction, b->rolling = mat.rollingResistance;
        b->filtered = b3Shape_GetFilter(shape).groupIndex < 0;
        b->parent = human.bones[i].parentIndex;
        b3JointId j = human.bones[i].jointId;
        if (b->parent < 0 || B3_IS_NULL(j)) {
            continue;
        }
        b3WorldTransform xa = b3Body_GetTransform(b3Joint_GetBodyA(j));
        b3Transform fa = b3Joint_GetLocalFrameA(j);
        b3Vec3 anchor = b3Add(xa.p, b3RotateVector(xa.q, fa.p));
        b3Vec3 axis = b3RotateVector(b3MulQuat(xa.q, fa.q), (b3Vec3){0, 0, 1});
        put(b->anchor, anchor), put(b->axis, axis);
        if (b3Joint_GetType(j) == b3_revoluteJoint) {
            b->revolute = 1;
            b->lower = b3RevoluteJoint_GetLowerLimit(j),
            b->upper = b3RevoluteJoint_GetUpperLimit(j);
            b->angle0 = b3RevoluteJoint_GetAngle(j);
            b->spring = b3RevoluteJoint_IsSpringEnabled(j);
            b->hertz = b3RevoluteJoint_GetSpringHertz(j);
            b->damping = b3RevoluteJoint_GetSpringDampingRatio(j);
            b->motor = b3RevoluteJoint_IsMotorEnabled(j);
            b->motor_speed = b3RevoluteJoint_GetMotorSpeed(j);
            b->max_motor_torque = b3RevoluteJoint_GetMaxMotorTorque(j);
        } else if (b3Joint_GetType(j) == b3_sphericalJoint) {
            b->revolute = 0;
            b->cone = b3SphericalJoint_GetConeLimit(j);
            b->lower = b3SphericalJoint_GetLowerTwistLimit(j);
            b->upper = b3SphericalJoint_GetUpperTwistLimit(j);
            b->angle0 = b3SphericalJoint_GetTwistAngle(j);
            b->swing0 = b3SphericalJoint_GetConeAngle(j);
            b->spring = b3SphericalJoint_IsSpringEnabled(j);
            b->hertz = b3SphericalJoint_GetSpringHertz(j);
            b->damping = b3SphericalJoint_GetSpringDampingRatio(j);
            b->motor = b3SphericalJoint_IsMotorEnabled(j);
            b->max_motor_torque = b3SphericalJoint_GetMaxMotorTorque(j);
        } else {
            snprintf(err, err_size, "bone %d: unexpected joint type", i);
            b3DestroyWorld(w);
            b3b_rain_template_free(d);
            return -1;
        }
    }
    for (int k = 0; k < human.filterJointCount; k++) { // pairs that never collide
        b3BodyId a = b3Joint_GetBodyA(human.filterJoints[k]);
        b3BodyId b = b3Joint_GetBodyB(human.filterJoints[k]);
        for (int i = 0; i < B3B_BONES && i < bone_count; i++) {
            b3BodyId id = human.bones[i].bodyId;
            d->bones[i].filter_joint |= B3_ID_EQUALS(id, a) || B3_ID_EQUALS(id, b);
        }
    }
    d->joints = (uint32_t)(bone_count - 1 + human.filterJointCount);
    b3DestroyWorld(w);
    return 0;
}

void b3b_rain_template_free(b3b_rain_data *d)
{
    free(d->grid.vertices), free(d->grid.triangles);
    free(d->torus.vertices), free(d->torus.triangles);
    memset(&d->grid, 0, sizeof d->grid);
    memset(&d->torus, 0, sizeof d->torus);
}
